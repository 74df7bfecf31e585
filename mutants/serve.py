"""``python -m mutants.serve [--rules FILE] [--declare P[,P...]] NAME [NAME ...]``: the reference
protocol server with one mistake applied, or several at once (an engine with two bugs, to test
that a report separates them). With ``--rules`` the server plays those house rules whatever the
runner names, so a test double can differ from a profile in many knobs and have a bug no knob
expresses, as real engines do; ``--declare`` makes it declare a list of profiles in ``start``.

The server reports its mistakes in the ``start`` reply (``reference+mutant:NAME``, names
joined by ``+``), so a report always says which wrong implementation it measured.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack

from reference_impl import server

from .catalogue import CATALOGUE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mutants.serve",
        description="The reference protocol server with deliberate mistakes applied (see python -m mutants).")
    parser.add_argument("--rules", metavar="FILE.yaml",
                        help="play these house rules whatever profile the runner names (as thousand-reference --rules)")
    server.add_declare_option(parser)
    parser.add_argument("names", nargs="*", metavar="NAME", help="mutants to apply")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    unknown = [name for name in args.names if name not in CATALOGUE]
    if not args.names or unknown or len(set(args.names)) < len(args.names):
        known = ", ".join(CATALOGUE)
        given = " ".join(args.names) or "nothing"
        print(f"usage: python -m mutants.serve [--rules FILE] [--declare P[,P...]] NAME [NAME ...] (got {given}); "
              f"known mutants: {known}", file=sys.stderr)
        return 2
    options = [*(["--rules", args.rules] if args.rules else []), *(["--declare", args.declare] if args.declare else [])]
    with ExitStack() as stack:
        for name in args.names:
            stack.enter_context(CATALOGUE[name].applied())
        # Without house rules the name stays the one reports and the kill matrix know.
        server.IMPLEMENTATION["name"] = "reference+mutant:" + "+".join(args.names)
        server.NAME_SUFFIX = "" if args.rules is None else "+mutant:" + "+".join(args.names)
        return server.main(options)


if __name__ == "__main__":
    sys.exit(main())
