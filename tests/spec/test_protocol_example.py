"""The example session printed in the protocol reference is what the reference really says.

sitegen/templates/protocol-session.jsonl holds one ``{"request", "reply"}`` per line; the
match request's document is a placeholder, replaced here by the resolved gambler-club
profile. The requests are replayed against ``python -m reference_impl.server`` as a
subprocess and every reply must equal the recorded one, so docs/protocol.md cannot drift
from the implementation it documents.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import variants
from conformance.corpus import schemas
from tests.support.paths import ROOT

SESSION = ROOT / "sitegen" / "templates" / "protocol-session.jsonl"
PLACEHOLDER = "<the resolved gambler-club document>"
HANG_GUARD = 120  # seconds: only turns a hang into a failure, never a timing check


def recorded() -> list[dict[str, Any]]:
    """The session's exchanges, with the placeholder document replaced by the real one."""
    exchanges = []
    for number, line in enumerate(SESSION.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            exchange = json.loads(line)
        except json.JSONDecodeError as exc:
            pytest.fail(f"{SESSION.name} line {number}: not JSON ({exc.msg} at column {exc.colno})")
        assert set(exchange) == {"request", "reply"}, f"{SESSION.name} line {number}: expected keys request and reply"
        if exchange["request"].get("document") == PLACEHOLDER:
            exchange["request"]["document"] = variants.resolve("gambler-club").to_document()
        exchanges.append(exchange)
    return exchanges


def test_the_session_covers_every_command() -> None:
    commands = {exchange["request"]["cmd"] for exchange in recorded()}
    assert commands == {"start", "match", "deal", "legal", "apply", "state", "stop"}
    match = next(exchange["request"] for exchange in recorded() if exchange["request"]["cmd"] == "match")
    assert isinstance(match.get("document"), dict) and "rules" in match["document"], \
        f"the match request must carry the resolved document (placeholder {PLACEHOLDER!r})"


def test_every_recorded_message_matches_its_schema() -> None:
    for exchange in recorded():
        request, reply = exchange["request"], exchange["reply"]
        command = request["cmd"]
        problem = schemas.first_problem(schemas.command_validator(command), request)
        assert not problem, f"request seq {request['seq']} ({command}): {problem}"
        problem = schemas.reply_problem(command, reply)
        assert not problem, f"reply seq {reply.get('seq')} ({command}): {problem}"


def test_the_reference_gives_exactly_the_recorded_replies() -> None:
    exchanges = recorded()
    text = "".join(json.dumps(exchange["request"]) + "\n" for exchange in exchanges)
    done = subprocess.run([sys.executable, "-m", "reference_impl.server"], input=text,
                          capture_output=True, text=True, cwd=ROOT, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == len(exchanges), f"{len(exchanges)} requests, {len(replies)} replies:\n{done.stdout}"
    for exchange, reply in zip(exchanges, replies):
        cmd, seq = exchange["request"]["cmd"], exchange["request"]["seq"]
        assert reply == exchange["reply"], f"{cmd} (seq {seq}): the reference replied {reply}"
