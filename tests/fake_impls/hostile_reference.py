"""The reference with one hostile habit, for the bug hunt's tests (issue 48's doubles).

``python hostile_reference.py MODE``: answers like the reference server (no extensions, so
every request comes on its own), except:

- ``second-reason``: a refusal for which several reasons apply names the second of them
  alone (the reference names them all, the first as ``reason``): right, since any applies.
- ``skip-contract-legal``: answers ``skipped`` to every ``legal`` of the contract phase (a
  valid protocol answer for a query it does not support) and plays on.
- ``nobody-to-act``: in the contract phase its state names nobody to act and its legal set is
  empty, though it still takes the declarer's contract: a game no rule can leave there.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reference_impl.server import Server, serve  # noqa: E402

MODES = ("second-reason", "skip-contract-legal", "nobody-to-act")


class Hostile(Server):
    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def _phase(self) -> str | None:
        return None if self.state is None else self.state.phase

    def start(self, request: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().start(request)
        reply.pop("extensions", None)
        return reply

    def legal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self._phase() == "contract" and self.mode == "skip-contract-legal":
            return {"skipped": {"reason": "no legal sets in the contract phase"}}
        if self._phase() == "contract" and self.mode == "nobody-to-act":
            return {"actions": []}
        return super().legal(request)

    def apply(self, request: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().apply(request)
        refusal = reply.get("refusal")
        if self.mode == "second-reason" and isinstance(refusal, dict) and len(refusal.get("reasons", ())) > 1:
            reply = {**reply, "refusal": {"class": refusal["class"], "reason": refusal["reasons"][1],
                                          "message": refusal.get("message", "")}}
        return reply

    def observe(self, request: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().observe(request)
        if self._phase() == "contract" and self.mode == "nobody-to-act":
            reply = {"state": {**reply["state"], "to_act": None}}
        return reply


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        print(f"usage: hostile_reference.py {'|'.join(MODES)}", file=sys.stderr)
        return 2
    serve(sys.stdin.buffer, sys.stdout, Hostile(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
