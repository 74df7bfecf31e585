"""Hostile wrappers around the reference for the fit and fuzz tests (issue 23's table, one mode a row).

``python hostile_ref.py MODE``: the bundled reference (a subprocess), its requests and replies
passed through line by line, except for one hostile behaviour. fit and fuzz compare an
implementation with the reference playing the same actions, so a wrapper plays real games
and differs only where its mode says. As in hostile.py, every process appends its pid to
$HOSTILE_PIDS and $HOSTILE_MARKER is touched at the hostile moment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from hostile import note_pid, start_helper, touch_marker

MODES = {
    "big_state": "every state carries a 6 MB string",
    "huge_legal": "every legal reply lists 600,000 actions",
    "setsid_helper": "starts a helper that calls setsid() and sleeps, then plays as the reference",
    "hang_after_start": "answers start, then never answers again",
    "no_read_after_match": "answers up to match, then stops reading (after touching $HOSTILE_MARKER)",
    "garbage": "answers the first deal with a line that is not JSON",
    "exit_mid_run": "exits on its first apply",
    "deep": "answers the first legal with a line nested 100,000 deep",
    "huge_number": "answers the first state with a 5,000-digit number",
    "control_name": "names itself with 200 characters, an ESC and a newline; plays as the reference",
    "hostile_name": "names itself <script>alert(1)</script> `x` | y; plays as the reference",
    "no_pass": "leaves 'pass' out of every legal set (a divergence)",
    "no_pass_slow_shrink": "no_pass; from its second match on, touches $HOSTILE_MARKER and hangs",
    "surrogate_name": "names itself with a lone surrogate and adds one to every state; plays as the reference",
    "skip_match": "answers every match with skipped (a reason given), as an adapter for other rules would",
    "state_60kb": "every state carries a 60 KB string (under the per-value clip)",
}
HUGE_LEGAL = json.dumps([f"bid {n}" for n in range(600_000)])  # built once: 6 MB
REFERENCE = [sys.executable, "-I", "-m", "reference_impl.server"]


def changed(mode: str, cmd: Any, reply: dict[str, Any], counters: dict[str, int]) -> str | None:
    """The raw line to send instead of the reference's reply, or None to pass it on."""
    seq = reply.get("seq")
    first = counters.get(f"{mode}:{cmd}", 0) == 0
    counters[f"{mode}:{cmd}"] = counters.get(f"{mode}:{cmd}", 0) + 1
    if cmd == "start":  # an engine, not the reference: it offers no extension, so it is driven step by step
        reply.pop("extensions", None)
    if mode == "big_state" and cmd == "state" and isinstance(reply.get("state"), dict):
        reply["state"]["junk"] = "x" * (6 * 1024 * 1024)
    elif mode == "huge_legal" and cmd == "legal":
        return f'{{"seq": {seq}, "actions": {HUGE_LEGAL}}}'
    elif mode in ("no_pass", "no_pass_slow_shrink") and cmd == "legal" and isinstance(reply.get("actions"), list):
        reply["actions"] = [a for a in reply["actions"] if a != "pass"]
    elif mode == "garbage" and cmd == "deal" and first:
        return "this is not JSON \x1b[2J"
    elif mode == "deep" and cmd == "legal" and first:
        return f'{{"seq": {seq}, "actions": {"[" * 100_000}{"]" * 100_000}}}'
    elif mode == "huge_number" and cmd == "state" and first:
        return f'{{"seq": {seq}, "state": {{"scores": [{"9" * 5000}, 0, 0]}}}}'
    elif mode == "surrogate_name" and cmd == "start":
        reply["implementation"] = {"name": "engine \ud800 one", "version": "1"}
    elif mode == "surrogate_name" and cmd == "state" and isinstance(reply.get("state"), dict):
        reply["state"]["note"] = "\udfff"
    elif mode == "state_60kb" and cmd == "state" and isinstance(reply.get("state"), dict):
        reply["state"]["junk"] = "y" * (60 * 1024)
    elif mode == "skip_match" and cmd == "match":
        return json.dumps({"seq": seq, "skipped": {"reason": "plays only its own rules"}})
    elif mode in ("control_name", "hostile_name") and cmd == "start":
        name = ("\x1b]0;owned\x07" + "n" * 200 + "\nline two") if mode == "control_name" else "<script>alert(1)</script> `x` | y"
        reply["implementation"] = {"name": name, "version": "1"}
    return None


def main() -> None:
    mode = sys.argv[1]
    if mode not in MODES:
        sys.exit(f"hostile_ref.py: unknown mode {mode!r}")
    note_pid()
    if mode == "setsid_helper":
        start_helper()
    reference = subprocess.Popen(REFERENCE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert reference.stdin is not None and reference.stdout is not None
    if os.environ.get("HOSTILE_PIDS"):
        with open(os.environ["HOSTILE_PIDS"], "a", encoding="ascii") as stream:
            stream.write(f"{reference.pid}\n")
    counters: dict[str, int] = {}
    for line in sys.stdin:
        request = json.loads(line)
        cmd = request.get("cmd")
        if mode == "hang_after_start" and cmd != "start":
            time.sleep(300)
        if mode == "exit_mid_run" and cmd == "apply":
            os._exit(3)
        if mode == "no_pass_slow_shrink" and cmd == "match":
            counters["matches"] = counters.get("matches", 0) + 1
            if counters["matches"] >= 2:
                touch_marker()
                time.sleep(300)
        reference.stdin.write(line)
        reference.stdin.flush()
        reply = json.loads(reference.stdout.readline())
        raw = changed(mode, cmd, reply, counters)
        sys.stdout.write((raw if raw is not None else json.dumps(reply)) + "\n")
        sys.stdout.flush()
        if mode == "no_read_after_match" and cmd == "match":
            touch_marker()
            time.sleep(300)


if __name__ == "__main__":
    main()
