"""The reference server's line loop, for doubles that wrap it (``slow_reference``,
``flaky_reference``): each request is shown to the double before the reference answers it."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from reference_impl.server import Server


def commands(request: dict[str, Any]) -> list[str]:
    """The commands a line carries: its own, or those of its batch."""
    inner = request.get("requests") if request.get("cmd") == "batch" else [request]
    return [str(one.get("cmd")) for one in inner or [] if isinstance(one, dict)]


def serve(before: Callable[[dict[str, Any]], None]) -> None:
    """Answer stdin as the reference does, calling ``before`` with each request first."""
    server = Server()
    for line in sys.stdin.buffer:
        before(json.loads(line))
        sys.stdout.write(json.dumps(server.handle_line(line), separators=(",", ":")) + "\n")
        sys.stdout.flush()
        if server.stopped:
            break
