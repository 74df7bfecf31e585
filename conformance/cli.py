"""The `thousand` command: one entry point, one module per group of subcommands.

Each module in SUBCOMMAND_MODULES defines ``register(subparsers)``, which adds its
subcommands and sets ``func`` (taking the parsed arguments, returning the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Callable

SUBCOMMAND_MODULES = (
    "variants.cli",  # profiles, show, validate
    "variants.new",  # new
    "conformance.verify_cli",  # verify
    "conformance.coverage",  # coverage
    "conformance.compare",  # compare
    "conformance.replay",  # replay
    "conformance.report_cli",  # report
    "conformance.fit",  # fit
    "conformance.fuzz",  # fuzz
)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand whose module is present."""
    parser = argparse.ArgumentParser(
        prog="thousand",
        description="Rule profiles, conformance runner and tools for the card game Thousand.",
        epilog="Also: python -m mutants (the kill matrix), python -m conformance.generate [--check] "
               "(generated transcripts), thousand-reference (the reference implementation's protocol server). "
               "'thousand COMMAND --help' describes each command.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # that group of subcommands is not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. A closed output (``thousand show polish | head -3``) and Ctrl-C
    end any subcommand quietly: no traceback, the usual exit codes (141 - a SIGPIPE death
    as a shell reports it - and 130)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args))
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130
    except BrokenPipeError:
        silence_stdout()
        return 141


def silence_stdout() -> None:
    """The reader went away: point stdout at /dev/null so the interpreter's final flush of
    what is still buffered does not raise a second BrokenPipeError at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def terminal_progress(tool: str) -> Callable[[str], None]:
    """One updating line on stderr when it is a terminal; nothing otherwise (see ``clear_progress``)."""
    if not sys.stderr.isatty():
        return lambda text: None

    def show(text: str) -> None:
        sys.stderr.write(f"\r\033[K{tool}: {text[:150]}")
        sys.stderr.flush()

    return show


def clear_progress() -> None:
    """Erase the progress line, if there is one, before the output proper."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
