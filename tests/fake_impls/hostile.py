"""Hostile implementations for the runner's tests (issue 10's table, one mode a row).

``python hostile.py MODE``: plays fake.py's toy game, except for one hostile behaviour.
Every process it starts appends its pid to the file named by $HOSTILE_PIDS, so that a test
can check that none survives the run; $HOSTILE_MARKER, when set, is touched once the
hostile moment is reached (a test then sends its signal).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from fake import Toy, answer, reply

MODES = {
    "no_read": "replies to start, then never reads its input nor replies",
    "deep_reply": "answers the first legal with a line nested 100,000 deep",
    "deep_state": "carries a list nested 900 deep in every state",
    "big_state": "carries 2 MB in the scores of every state",
    "setsid_helper": "starts a helper that calls setsid() and sleeps, then plays correctly",
    "profiles_string": "declares profiles as a string instead of a list",
    "seq_true": "answers match with seq true",
    "hang_after_match": "hangs on its first apply (after touching $HOSTILE_MARKER)",
    "child_hang": "starts a child in its own process group (sleeping), then hangs as hang_after_match",
    "surrogate": "writes a lone surrogate (an escaped \\ud800) in its name and a field of every state, plays correctly",
    "nan_state": "carries NaN in every state's scores",
    "odd_name": "names itself with 5 MB, an object as version and a line {: onclick=... } (row 6)",
    "fail_start": "writes why it cannot start on stderr and exits 2 before reading anything",
    "skip_all": "skips every match",
    "control_chars": "writes control characters in an errored message and on stderr",
}
DEPTH = 100_000


def note_pid() -> None:
    path = os.environ.get("HOSTILE_PIDS")
    if path:
        with open(path, "a", encoding="ascii") as stream:
            stream.write(f"{os.getpid()}\n")


def touch_marker() -> None:
    if os.environ.get("HOSTILE_MARKER"):
        open(os.environ["HOSTILE_MARKER"], "w").close()


def start_helper() -> None:
    """A grandchild that leaves the process group (setsid) and would outlive us."""
    if os.fork() == 0:
        os.setsid()
        note_pid()
        time.sleep(300)
        os._exit(0)


def start_child() -> None:
    """A child that stays in our process group and would outlive us."""
    if os.fork() == 0:
        note_pid()
        time.sleep(300)
        os._exit(0)


def hostile(request: dict[str, Any], toy: Toy, mode: str, counters: dict[str, int]) -> str | None:
    """The raw reply line of a hostile moment, or None to play normally."""
    cmd, seq = request.get("cmd"), request.get("seq")
    if mode == "surrogate" and cmd == "start":
        start = answer(request, toy, "ok", counters)
        assert start is not None
        start["implementation"]["name"] = "fake \ud800 engine"
        return json.dumps(start)
    if mode == "surrogate" and cmd == "state":
        state = toy.state()
        state["comment"] = "lone \ud800 surrogate"  # json.dumps writes it as the escape \ud800
        return json.dumps({"seq": seq, "state": state})
    if mode == "nan_state" and cmd == "state":
        state = toy.state()
        state["scores"] = [float("nan"), float("inf"), 0]
        return json.dumps({"seq": seq, "state": state})
    if mode == "odd_name" and cmd == "start":
        name = "Engine { onclick=\"alert(1)\" }\n{: onclick=\"alert(7)\" }" + "x" * (5 * 1024 * 1024)
        return json.dumps({"seq": seq, "version": 1, "profiles": ["toy"],
                           "implementation": {"name": name, "version": {"major": 1}, "extra": [1, 2]}})
    if mode == "profiles_string" and cmd == "start":
        return json.dumps({"seq": seq, "version": 1, "profiles": "toy+extra", "implementation": {"name": "hostile"}})
    if mode == "seq_true" and cmd == "match":
        return json.dumps({"seq": True, "ok": True})
    if mode == "skip_all" and cmd == "match":
        return json.dumps({"seq": seq, "skipped": {"reason": "toy rules only"}})
    if mode == "deep_reply" and cmd == "legal" and not counters.get("deep"):
        counters["deep"] = 1
        return f"{{\"seq\": {seq}, \"actions\": {'[' * DEPTH}{']' * DEPTH}}}"
    if mode in ("deep_state", "big_state") and cmd == "state":
        state = toy.state()
        if mode == "big_state":
            state["scores"] = "x" * (2 * 1024 * 1024)
        else:
            nested: list[Any] = []
            for _ in range(900):
                nested = [nested]
            state["hands"] = nested
        return json.dumps({"seq": seq, "state": state})
    if mode == "control_chars" and cmd == "apply":
        sys.stderr.write("bell \x07 nul \x00 escape \x1b[31m\n")
        sys.stderr.flush()
        return json.dumps({"seq": seq, "errored": {"message": "broken \x00\x01\x1b here"}})
    return None


def main() -> None:
    mode = sys.argv[1]
    if mode not in MODES:
        sys.exit(f"hostile.py: unknown mode {mode!r}")
    note_pid()
    if mode == "setsid_helper":
        start_helper()
    if mode == "child_hang":
        start_child()
    if mode == "fail_start":
        sys.stderr.write("engine: cannot open rules.dat: No such file or directory\nusage: engine [--rules FILE]\n")
        sys.exit(2)
    toy, counters = Toy(), dict[str, int]()
    for line in sys.stdin:
        request = json.loads(line)
        if mode in ("hang_after_match", "child_hang") and request.get("cmd") == "apply":
            touch_marker()
            time.sleep(300)
        raw = hostile(request, toy, mode, counters)
        if raw is not None:
            sys.stdout.write(raw + "\n")
            sys.stdout.flush()
            continue
        message = answer(request, toy, "ok", counters)
        if message is not None:
            reply(message, "ok")
        if mode == "no_read":  # answered start; never reads another byte
            touch_marker()
            time.sleep(300)


if __name__ == "__main__":
    main()
