"""``python -m mutants.serve NAME [NAME ...]``: the reference protocol server with one mistake
applied, or several at once (an engine with two bugs, to test that a report separates them).

The server reports its mistakes in the ``start`` reply (``reference+mutant:NAME``, names
joined by ``+``), so a report always says which wrong implementation it measured.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack

from reference_impl import server

from .catalogue import CATALOGUE


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    unknown = [name for name in args if name not in CATALOGUE]
    if not args or unknown or len(set(args)) < len(args):
        known = ", ".join(CATALOGUE)
        given = " ".join(args) or "nothing"
        print(f"usage: python -m mutants.serve NAME [NAME ...] (got {given}); known mutants: {known}", file=sys.stderr)
        return 2
    server.IMPLEMENTATION["name"] = "reference+mutant:" + "+".join(args)
    with ExitStack() as stack:
        for name in args:
            stack.enter_context(CATALOGUE[name].applied())
        return server.main([])


if __name__ == "__main__":
    sys.exit(main())
