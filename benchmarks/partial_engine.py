"""``python benchmarks/partial_engine.py WORD [thousand-reference options]``: the reference as a
partial implementation, a test double for ``thousand fit``: its ``start`` reply declares the
action word WORD unsupported (``give_up``, ``marriage``), its legal sets leave such actions
out, and it answers ``skipped`` when asked to play one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Mapping

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference_impl import server  # noqa: E402


def unsupported(word: str, action: Any) -> bool:
    words = str(action).split()
    return bool(words) and word in (words[0], words[-1])


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print("usage: python benchmarks/partial_engine.py WORD [thousand-reference options]", file=sys.stderr)
        return 2
    word, options = argv[0], argv[1:]
    start, legal, apply = server.Server.start, server.Server.legal, server.Server.apply

    def started(self: server.Server, request: Mapping[str, Any]) -> dict[str, Any]:
        return {**start(self, request), "unsupported": {"actions": [word]}}

    def offered(self: server.Server, request: Mapping[str, Any]) -> dict[str, Any]:
        reply = legal(self, request)
        return {**reply, "actions": [a for a in reply["actions"] if not unsupported(word, a)]}

    def played(self: server.Server, request: Mapping[str, Any]) -> dict[str, Any]:
        if unsupported(word, request.get("action")):
            return {"skipped": f"{word} is not supported"}
        return apply(self, request)

    server.Server.start, server.Server.legal, server.Server.apply = started, offered, played  # type: ignore[method-assign]
    return server.main(options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
