"""An engine whose mistake depends on what it played before: the reference's rules, but from
its second ``match`` on, every state it shows adds 5 to the first seat's score. A fuzz run,
which plays many trials on one process, sees it diverge; one transcript replayed by a fresh
process (``thousand verify``) does not: a finding no user could reproduce (issue 48).

``python second_match.py``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reference_impl.server import Server  # noqa: E402


def main() -> None:
    server, matches = Server(), 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        command = request.get("cmd")
        reply = server.handle_line(line)
        reply.pop("extensions", None)  # request by request: no batch, no playout
        if command == "match":
            matches += 1
        if command == "state" and matches >= 2 and isinstance(reply.get("state"), dict):
            scores = reply["state"].get("scores")
            if isinstance(scores, list) and scores and isinstance(scores[0], int):
                scores[0] += 5
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
