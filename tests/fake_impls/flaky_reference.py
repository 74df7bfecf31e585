"""The reference, failing once: for the tests of ``thousand fuzz``'s Lookahead.

``python flaky_reference.py MARKER [MATCH] [DEAL]``: answers like the reference server, but
exits with code 7 at the DEAL-th ``playout`` (default 2) of its MATCH-th ``match`` (default
2), once: the failure leaves the file MARKER behind, and a process started while it exists
answers like the reference throughout (a shrink after the failure replays on a sound one).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fake_impls.reference_loop import commands, serve  # noqa: E402


def main() -> None:
    marker = Path(sys.argv[1])
    match_at = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    deal_at = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    armed = not marker.exists()
    matches, deals = 0, 0

    def before(request: dict[str, Any]) -> None:
        nonlocal matches, deals
        started = commands(request).count("match")
        if started:
            matches, deals = matches + started, 0
        if request.get("cmd") == "playout":
            deals += 1
        if armed and matches == match_at and deals == deal_at:
            marker.write_text("failed\n")
            sys.exit(7)

    serve(before)


if __name__ == "__main__":
    main()
