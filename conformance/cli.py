"""The `thousand` command: one entry point, one module per group of subcommands.

Each module in SUBCOMMAND_MODULES defines ``register(subparsers)``, which adds its
subcommands and sets ``func`` (taking the parsed arguments, returning the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMAND_MODULES = (
    "variants.cli",  # profiles, show, validate
    "conformance.verify_cli",  # verify
    "conformance.coverage",  # coverage
    "conformance.compare",  # compare
    "conformance.replay",  # replay
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
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
