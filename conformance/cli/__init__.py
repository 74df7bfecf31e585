"""The `thousand` command: one entry point, one module per group of subcommands.

The top room of ``conformance``: it may import every other room. ``verify`` and ``report``
live here because ``verify`` reaches both the harness and the oracle mode (``--rules``); the
commands of the other rooms (fit, fuzz, compare, replay, coverage) are defined where their
work is done and registered here.

Each module in SUBCOMMAND_MODULES defines ``register(subparsers)``, which adds its
subcommands and sets ``func`` (taking the parsed arguments, returning the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from conformance.terminal import Escaped, silence_stdout
from spec.vocabulary import ExitCode

# commands whose output repeats what they were given (file names, profile text) and that
# print no progress line: every control character they would write is shown as an escape, as
# verify, fit and fuzz do for what they print (JSON output aside: json.dumps escapes controls)
ESCAPED_COMMANDS = ("validate", "show", "profiles", "report", "new", "coverage", "compare", "replay")
SUBCOMMAND_MODULES = (
    "variants.cli",  # profiles, show, validate
    "variants.new",  # new
    "variants.rulebook",  # rulebook
    "conformance.cli.verify",  # verify
    "conformance.rulesets.coverage",  # coverage
    "conformance.rulesets.compare",  # compare
    "conformance.rulesets.replay",  # replay
    "conformance.cli.report",  # report
    "conformance.oracle.fit",  # fit
    "conformance.oracle.fuzz",  # fuzz
)


def build_parser() -> argparse.ArgumentParser:
    """The parser with every subcommand whose module is present."""
    parser = argparse.ArgumentParser(
        prog="thousand",
        description="Rule profiles, conformance runner and tools for the card game Thousand.",
        epilog="Also: python -m mutants (the kill matrix), python -m conformance.oracle.generate [--check] "
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
            return ExitCode.USAGE
        if args.command in ESCAPED_COMMANDS:
            return _escaped(args)
        return int(args.func(args))
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130
    except BrokenPipeError:
        silence_stdout()
        return 141


def _escaped(args: argparse.Namespace) -> int:
    """Run the command with stderr (and stdout, but for JSON) escaping control characters."""
    saved = sys.stdout, sys.stderr
    sys.stderr = Escaped(sys.stderr)
    if not getattr(args, "json", False):
        sys.stdout = Escaped(sys.stdout)
    try:
        return int(args.func(args))
    finally:
        sys.stdout, sys.stderr = saved
