"""A fake implementation of protocol v1 for the runner's tests.

``python fake.py MODE``. In mode ``ok`` it plays a toy game, enough to exercise every check
of the runner: each seat in turn may play ``play AS`` (accepted: a ``trick_won`` event, one
point to the player) or ``play KS`` (refused: illegal, must_follow_suit); anything else is
refused as malformed. The other modes misbehave in one way each (see MODES).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODES = {
    "ok": "plays the toy game correctly",
    "crash_at_start": "exits with code 3 before replying to start",
    "crash_mid_case": "exits with code 1 on the first apply",
    "hang": "never replies to anything",
    "hang_on_apply": "replies until the first apply, then never again",
    "garbage": "replies to start with a line that is not JSON",
    "half_line": "writes half a reply line, then hangs",
    "wrong_seq": "echoes a wrong seq in the reply to match",
    "close_stdout": "closes its output after replying to start, and keeps running",
    "flood_stderr": "writes megabytes to stderr before every reply (and plays correctly)",
    "exit_silently": "exits 0 without a word on the first match",
    "schema_invalid": "answers legal with a string instead of a list",
    "invalid_event": "gives trick_won events without their player (a schema violation)",
    "mutate_on_refusal": "changes the state when refusing an action",
    "skip_match": "replies skipped to every match",
    "errored_apply": "replies errored to every apply",
    "any": "accepts any profile and errors unless match carries the document",
    "hang_on_qs": "plays correctly but hangs on 'play QS' (after touching the file $FAKE_MARKER)",
    "partial": "declares scores, trick_won events and marriage actions unsupported (and plays correctly)",
    "list_needs_document": "declares a list of profiles and errors unless match carries the document",
    "stderr_per_match": "writes 'match N' on stderr at each match (and plays correctly)",
}


class Toy:
    def __init__(self) -> None:
        self.scores = [0, 0, 0]
        self.to_act = 0
        self.trick = 0
        self.dealer = 0

    def state(self) -> dict[str, Any]:
        return {
            "phase": "play", "to_act": self.to_act, "dealer": self.dealer, "next_dealer": (self.dealer + 1) % 3,
            "auction": [], "high_bid": None, "declarer": None, "contract": None, "talon_shown": True,
            "talon": ["QH", "JH", "9H"], "trump": None, "trick": [], "trick_number": min(self.trick + 1, 8),
            "tricks_won": [0, 0, 0], "card_points": [0, 0, 0], "marriages": [[], [], []],
            "deal_result": None, "scores": list(self.scores), "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
            "barrel": [{"on": False, "attempts": 0, "failed_visits": 0} for _ in range(3)],
            "winner": None, "hands": [[], [], []],
        }

    def partial_state(self) -> dict[str, Any]:
        state = self.state()
        del state["scores"]
        return state


def reply(message: dict[str, Any], mode: str) -> None:
    if mode == "flood_stderr":
        block = "x" * 1023 + "\n"
        sys.stderr.write(block * 3 * 1024)  # 3 MB
        sys.stderr.flush()
    try:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()
    except (ValueError, OSError):
        pass  # close_stdout: the output is gone, keep running


def answer(request: dict[str, Any], toy: Toy, mode: str, counters: dict[str, int]) -> dict[str, Any] | None:
    cmd, seq = str(request.get("cmd")), int(request.get("seq", 0))
    counters[cmd] = counters.get(cmd, 0) + 1
    if cmd == "start":
        profiles: Any = "any" if mode == "any" else ["toy", "toy+extra"]
        start = {"seq": seq, "version": 1, "profiles": profiles,
                 "implementation": {"name": f"fake-{mode}", "version": "0", "language": "python", "homepage": ""}}
        if mode == "partial":
            start["unsupported"] = {"actions": ["marriage"], "state_fields": ["scores"], "events": ["trick_won"]}
        return start
    if cmd == "match":
        if mode == "exit_silently":
            sys.exit(0)
        if mode == "skip_match":
            return {"seq": seq, "skipped": {"reason": "toy rules only"}}
        if mode == "wrong_seq":
            return {"seq": seq + 1, "ok": True}
        if mode == "stderr_per_match":
            sys.stderr.write(f"match {counters[cmd]}\n")
            sys.stderr.flush()
        if mode in ("any", "list_needs_document") and not isinstance(request.get("document"), dict):
            return {"seq": seq, "errored": {"message": "no document"}}
        toy.scores = list(request.get("state", {}).get("scores", [0, 0, 0]))
        return {"seq": seq, "ok": True}
    if cmd == "deal":
        toy.dealer = request["dealer"]
        toy.to_act = (toy.dealer + 1) % 3
        toy.trick = 0
        return {"seq": seq, "ok": True, "events": []}
    if cmd == "legal":
        if mode == "schema_invalid":
            return {"seq": seq, "actions": "all of them"}
        return {"seq": seq, "actions": ["play AS", "play KS"]}
    if cmd == "apply":
        return apply(request, toy, mode)
    if cmd == "state":
        return {"seq": seq, "state": toy.partial_state() if mode == "partial" else toy.state()}
    if cmd == "stop":
        reply({"seq": seq, "ok": True}, mode)
        sys.exit(0)
    return {"seq": seq, "errored": {"message": f"unknown command {cmd!r}"}}


def apply(request: dict[str, Any], toy: Toy, mode: str) -> dict[str, Any] | None:
    seq, action = request["seq"], request.get("action")
    if mode == "crash_mid_case":
        sys.stderr.write("fake: crashing on apply\n")
        sys.exit(1)
    if mode == "errored_apply":
        return {"seq": seq, "errored": {"message": "the toy engine broke"}}
    if mode == "hang_on_apply" or (mode == "hang_on_qs" and action == "play QS"):
        if os.environ.get("FAKE_MARKER"):
            open(os.environ["FAKE_MARKER"], "w").close()
        time.sleep(3600)
    if action == "play AS":
        player = toy.to_act
        toy.scores[player] += 1
        toy.trick += 1
        toy.to_act = (player + 1) % 3
        event: dict[str, Any] = {"type": "trick_won", "player": player, "trick": min(toy.trick, 8), "cards": ["AS"], "points": 11}
        if mode == "invalid_event":
            del event["player"]
        events = [{"type": "trump_changed", "suit": None}] + ([] if mode == "partial" else [event])
        return {"seq": seq, "ok": True, "events": events}
    if mode == "mutate_on_refusal":
        toy.scores[0] += 100
    if action == "play KS":
        return {"seq": seq, "ok": False, "refusal": {"class": "illegal", "reason": "must_follow_suit", "message": "follow"}}
    return {"seq": seq, "ok": False, "refusal": {"class": "malformed", "reason": "malformed_action", "message": "?"}}


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
    if mode not in MODES:
        sys.exit(f"fake.py: unknown mode {mode!r}")
    if mode == "crash_at_start":
        sys.stderr.write("fake: cannot start\n")
        sys.exit(3)
    toy, counters = Toy(), dict[str, int]()
    for line in sys.stdin:
        request = json.loads(line)
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            sys.stdout.write("this is not JSON\n")
            sys.stdout.flush()
            continue
        if mode == "half_line":
            sys.stdout.write('{"seq": 1, "vers')
            sys.stdout.flush()
            time.sleep(3600)
        message = answer(request, toy, mode, counters)
        if message is not None:
            reply(message, mode)
        if mode == "close_stdout" and request.get("cmd") == "start":
            os.close(1)  # the runner sees the end of our output; we keep reading


if __name__ == "__main__":
    main()
