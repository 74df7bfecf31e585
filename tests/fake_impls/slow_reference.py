"""The reference, slow: for the test of ``thousand fuzz --timeout`` (issue 52 row 12).

``python slow_reference.py SECONDS``: answers like the reference server, but waits SECONDS
before each reply to ``deal`` or ``playout`` (alone or in a batch), as a trusted reference
does on a loaded machine: slower than a short ``--timeout``, never wrong.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reference_impl.server import Server  # noqa: E402

SLOW = {"deal", "playout"}


def main() -> None:
    seconds = float(sys.argv[1])
    server = Server()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        inner = request.get("requests") if request.get("cmd") == "batch" else [request]
        if any(isinstance(one, dict) and one.get("cmd") in SLOW for one in inner or []):
            time.sleep(seconds)
        sys.stdout.write(json.dumps(server.handle_line(line), separators=(",", ":")) + "\n")
        sys.stdout.flush()
        if server.stopped:
            break


if __name__ == "__main__":
    main()
