"""The reference in process, declaring ``batch``, hostile only in its batch replies (fuzz's tests).

``python batch_hostile.py MODE``: requests one by one are answered as the reference answers
them; a ``batch`` request gets, by MODE, ``errored`` (its eighth reply errored, the last),
``huge`` (its ninth reply, the legal set after the second action, 20,000 actions), ``short`` (a third of its replies and
no errored one) or ``hang`` (no reply at all).
"""

from __future__ import annotations

import json
import sys
import time

from reference_impl.server import Server


def main() -> None:
    mode = sys.argv[1]
    server = Server()
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = server.handle_line(line)
        request = json.loads(line)
        if request.get("cmd") == "batch" and "replies" in reply:
            replies = reply["replies"]
            if mode == "hang":
                time.sleep(3600)
            elif mode == "errored":
                reply["replies"] = replies[:7] + [{"errored": {"message": "out of memory, says the fake"}}]
            elif mode == "huge":
                if len(replies) > 8:
                    replies[8] = {"actions": [f"bid {n}" for n in range(20_000)]}
            elif mode == "short":
                reply["replies"] = replies[:len(replies) // 3]
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if server.stopped:
            break


if __name__ == "__main__":
    main()
