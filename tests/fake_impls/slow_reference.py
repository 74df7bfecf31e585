"""The reference, slow: for the test of ``thousand fuzz --timeout`` (issue 52 row 12).

``python slow_reference.py SECONDS``: answers like the reference server, but waits SECONDS
before each reply to ``deal`` or ``playout`` (alone or in a batch), as a trusted reference
does on a loaded machine: slower than a short ``--timeout``, never wrong.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fake_impls.reference_loop import commands, serve  # noqa: E402

SLOW = {"deal", "playout"}


def main() -> None:
    seconds = float(sys.argv[1])

    def before(request: dict[str, Any]) -> None:
        if SLOW.intersection(commands(request)):
            time.sleep(seconds)

    serve(before)


if __name__ == "__main__":
    main()
