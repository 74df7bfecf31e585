"""The reference, failing once: for the tests of ``thousand fuzz``'s Lookahead.

``python flaky_reference.py MARKER [MATCH] [DEAL]``: answers like the reference server, but
exits with code 7 at the DEAL-th ``playout`` (default 2) of its MATCH-th ``match`` (default
2), once: the failure leaves the file MARKER behind, and a process started while it exists
answers like the reference throughout (a shrink after the failure replays on a sound one).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from reference_impl.server import Server  # noqa: E402


def matches_in(request: dict[str, Any]) -> int:
    """The ``match`` requests a line carries: itself, or those of its batch."""
    inner = request.get("requests") if request.get("cmd") == "batch" else [request]
    return sum(1 for one in inner or [] if isinstance(one, dict) and one.get("cmd") == "match")


def main() -> None:
    marker = Path(sys.argv[1])
    match_at = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    deal_at = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    armed = not marker.exists()
    server, matches, deals = Server(), 0, 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if matches_in(request):
            matches, deals = matches + matches_in(request), 0
        if request.get("cmd") == "playout":
            deals += 1
        if armed and matches == match_at and deals == deal_at:
            marker.write_text("failed\n")
            sys.exit(7)
        sys.stdout.write(json.dumps(server.handle_line(line), separators=(",", ":")) + "\n")
        sys.stdout.flush()
        if server.stopped:
            break


if __name__ == "__main__":
    main()
