"""An engine that plays its own fixed rules, as a test double: the reference under house rules.

``python own_rules.py [--no-reasons] [--list P[,P...]] FILE.yaml [MISTAKE ...]``: the reference
playing FILE (whatever profile the runner names) with the mutants named applied. It declares
``"own"`` in ``start`` (``--list``: that list of profiles instead). With ``--no-reasons`` it
cannot tell why it refuses: ``start`` says ``refusal_reasons: false`` and every refusal carries
its class only, as an adapter over an engine whose moves are accepted or not, nothing more.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mutants.catalogue import CATALOGUE  # noqa: E402
from reference_impl import server  # noqa: E402

COMMAND = [sys.executable, str(Path(__file__).resolve())]
# A house table for such doubles: classic with a 300 maximum (``.format(name=...)``), one
# difference from classic that shows in the legal sets of every high auction.
TABLE_300 = """\
profile: {name}
title: classic with a 300 maximum bid
status: draft
summary: 'The classic rules with every bid and contract capped at 300.'
extends: classic
sources: {{}}
rules:
  auction:
    max_bid: {{value: 300, ruling: 'The test double caps every bid and contract at 300.'}}
"""


def without_reasons() -> None:
    start, apply = server.Server.start, server.Server.apply

    def told_start(self: server.Server, request: Any) -> dict[str, Any]:
        return {**start(self, request), "refusal_reasons": False}

    def told_apply(self: server.Server, request: Any) -> dict[str, Any]:
        reply = apply(self, request)
        if not reply["ok"]:
            reply["refusal"] = {"class": "illegal"}  # all it can say: not this move
        return reply

    server.Server.start, server.Server.apply = told_start, told_apply  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    declared = "own"
    if "--no-reasons" in argv:
        argv.remove("--no-reasons")
        without_reasons()
    if "--list" in argv:
        at = argv.index("--list")
        declared = argv[at + 1]
        del argv[at:at + 2]
    rules, *mistakes = argv
    with ExitStack() as stack:
        for name in mistakes:
            stack.enter_context(CATALOGUE[name].applied())
        return server.main(["--rules", rules, "--declare", declared])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
