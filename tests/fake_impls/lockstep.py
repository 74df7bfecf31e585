"""An implementation that plays the real rules (the reference's, in process) and then fails,
for the lockstep tests of ``thousand fuzz``.

``python lockstep.py MODE [N]``: answers like the reference until the N-th ``apply`` (default
3), then misbehaves once per MODE, and goes on answering where it survives.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reference_impl.server import Server  # noqa: E402

MODES = {
    "ok": "the reference itself",
    "hang": "never answers the N-th apply",
    "garbage": "answers the N-th apply with a line that is not JSON",
    "crash": "exits with code 5 on the N-th apply",
    "errored": "answers the N-th apply with errored",
    "deep": "answers the state after the N-th apply with a line nested 100,000 deep",
    "huge": "answers the state after the N-th apply with a line of 9 MB",
    "skip": "answers the N-th apply with skipped",
    "reordered": "writes every state with its keys in reverse order (the same values)",
}


def main() -> None:
    mode = sys.argv[1]
    when = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if mode not in MODES:
        sys.exit(f"lockstep.py: unknown mode {mode!r}")
    server, applies = Server(), 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        seq, command = request.get("seq"), request.get("cmd")
        reply = server.handle_line(line)
        reply.pop("extensions", None)  # it misbehaves request by request: no batch of them
        if command == "apply":
            applies += 1
        moment = applies == when
        text = json.dumps(reply, separators=(",", ":"))
        if mode == "reordered" and command == "state":
            text = json.dumps({"seq": seq, "state": dict(reversed(list(reply["state"].items())))})
        elif moment and command == "apply":
            if mode == "hang":
                time.sleep(3600)
            if mode == "crash":
                sys.exit(5)
            text = {"garbage": "not json {", "errored": json.dumps({"seq": seq, "errored": {"message": "broken"}}),
                    "skip": json.dumps({"seq": seq, "skipped": {"reason": "no such rule here"}})}.get(mode, text)
        elif moment and command == "state":
            text = {"deep": '{"seq":%d,"state":' % seq + "[" * 100_000 + "]" * 100_000 + "}",
                    "huge": json.dumps({"seq": seq, "state": {"x": "y" * (9 * 1024 * 1024)}})}.get(mode, text)
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        if server.stopped:
            break


if __name__ == "__main__":
    main()
