"""The reference behind an adapter that sends less (issue 49's double): ``python less_ref.py [PARTS]``.

The bundled reference runs as a subprocess; this adapter passes its requests on and trims
its replies as an engine that lacks the parts named would, declaring each in its ``start``
reply (docs/protocol.md, Declarations for less). PARTS is a comma-separated list, all four
by default:

- ``events``: no events in any reply (``"events": "derived"``);
- ``bolts``: no ``bolts`` field in any state (``"unsupported": {"state_fields": ["bolts"]}``);
- ``opening``: the opener's forced bid is placed at the deal, as an engine that bids it
  itself would (``"opening_bid": "placed"``);
- ``gives``: the exchange's legal set lists ``give X`` per card (``"give": "cards"``);
- ``declared-only``: with ``bolts``, the field is declared absent but still sent, as an adapter
  that fills every field in anyway does (the runner must compare it on neither side).

The game itself is the reference's: verify, fit and fuzz must give the reference's verdicts,
with what the adapter leaves out counted unchecked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

REFERENCE = [sys.executable, "-I", "-m", "reference_impl.server"]
PARTS = ("events", "bolts", "opening", "gives", "declared-only")


class Less:
    def __init__(self, parts: set[str]) -> None:
        self.parts = parts
        self.reference = subprocess.Popen(REFERENCE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.seq = 10**9  # the adapter's own requests to the reference

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.reference.stdin is not None and self.reference.stdout is not None
        self.reference.stdin.write(json.dumps(request) + "\n")
        self.reference.stdin.flush()
        reply: dict[str, Any] = json.loads(self.reference.stdout.readline())
        return reply

    def own(self, cmd: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        return self.ask({"cmd": cmd, "seq": self.seq, **fields})

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd = request.get("cmd")
        reply = self.ask(request)
        if "skipped" in reply or "errored" in reply:
            return reply
        if cmd == "start":
            reply.pop("extensions", None)  # an engine, not the reference: driven step by step
            if "events" in self.parts:
                reply["events"] = "derived"
            if "bolts" in self.parts:
                reply["unsupported"] = {"state_fields": ["bolts"]}
            if "opening" in self.parts:
                reply["opening_bid"] = "placed"
            if "gives" in self.parts:
                reply["give"] = "cards"
        if cmd == "deal" and reply.get("ok") and "opening" in self.parts:
            self.place_opening()
        if cmd in ("deal", "apply") and "events" in self.parts:
            reply.pop("events", None)
        if cmd == "state" and "bolts" in self.parts and "declared-only" not in self.parts and isinstance(reply.get("state"), dict):
            reply["state"].pop("bolts", None)
        if cmd == "legal" and "gives" in self.parts and isinstance(reply.get("actions"), list):
            reply["actions"] = singles(reply["actions"])
        return reply

    def place_opening(self) -> None:
        """Bid for the opener when the rules leave it one bid only, as the engine deals."""
        state = self.own("state")["state"]
        legal = self.own("legal")["actions"]
        if state.get("phase") == "auction" and not state.get("auction") and len(legal) == 1 and legal[0].startswith("bid "):
            assert self.own("apply", action=legal[0])["ok"]


def singles(actions: list[Any]) -> list[Any]:
    """Every ``give X Y`` of a legal set as ``give X`` once per card."""
    cards = sorted({a.split()[1] for a in actions if isinstance(a, str) and a.startswith("give ")})
    return [a for a in actions if not (isinstance(a, str) and a.startswith("give "))] + [f"give {c}" for c in cards]


def main() -> None:
    parts = set(sys.argv[1].split(",")) if len(sys.argv) > 1 else set(PARTS) - {"declared-only"}
    if parts - set(PARTS):
        sys.exit(f"less_ref.py: unknown parts {sorted(parts - set(PARTS))}; choose among {', '.join(PARTS)}")
    less = Less(parts)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(less.answer(request)), flush=True)
        if request.get("cmd") == "stop":
            break


if __name__ == "__main__":
    main()
