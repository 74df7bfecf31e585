"""The reference with a bug no rule can explain: it answers the same situation two ways.

``python two_faced_reference.py``: answers like the reference server, except that in every
second match it started, each legal set of the auction offers a bid of 995 besides (as an
engine that keeps a flag from one match into the next might). The same deal and the
same actions get one legal set in one case and another in the next, which no rule of the
game can do: the tests of ``thousand fit``'s residual hold it to calling that likely a bug.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reference_impl.server import Server, serve  # noqa: E402


class TwoFaced(Server):
    def __init__(self) -> None:
        super().__init__()
        self.matches = 0

    def match(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.matches += 1
        return super().match(request)

    def legal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().legal(request)
        actions = reply["actions"]
        if self.matches % 2 == 0 and any(action.startswith("bid ") for action in actions):
            return {"actions": [*actions, "bid 995"]}
        return reply


def main() -> None:
    serve(sys.stdin.buffer, sys.stdout, TwoFaced())


if __name__ == "__main__":
    main()
