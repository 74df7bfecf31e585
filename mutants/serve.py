"""``python -m mutants.serve NAME``: the reference protocol server with one mistake applied.

The mutant reports itself in the ``start`` reply (``reference+mutant:NAME``), so a report
always says which wrong implementation it measured.
"""

from __future__ import annotations

import sys

from reference_impl import server

from .catalogue import CATALOGUE


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in CATALOGUE:
        known = ", ".join(CATALOGUE)
        given = " ".join(args) or "nothing"
        print(f"usage: python -m mutants.serve NAME (got {given}); known mutants: {known}", file=sys.stderr)
        return 2
    mutant = CATALOGUE[args[0]]
    server.IMPLEMENTATION["name"] = f"reference+mutant:{mutant.name}"
    with mutant.applied():
        return server.main([])


if __name__ == "__main__":
    sys.exit(main())
