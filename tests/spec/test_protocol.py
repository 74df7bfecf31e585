"""The protocol v1 schemas: valid JSON Schemas that accept DESIGN.md's messages and refuse bad ones."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conformance.corpus import schemas
from spec import PROTOCOL_SCHEMA_DIR, SCHEMA_DIR

STATE: dict[str, Any] = {
    "phase": "play", "to_act": 1, "dealer": 0, "next_dealer": 1, "auction": [{"player": 1, "action": "bid 100"}],
    "high_bid": 100, "declarer": 1, "contract": 120, "talon_shown": True, "talon": ["QH", "JH", "9H"],
    "trump": "D", "trick": [{"player": 1, "card": "AS"}], "trick_number": 2, "tricks_won": [0, 1, 0],
    "card_points": [0, 21, 0], "marriages": [[], ["D"], []],
    "deal_result": {"kind": "played", "made": True, "points": [25, 160, 15], "deltas": [25, 160, 15]},
    "scores": [57.5, 160, 15], "bolts": [0, 0, 1], "give_ups": [0, 0, 0],
    "barrel": [{"on": False, "attempts": 0, "failed_visits": 0}] * 3, "winner": None, "hands": [[], ["KD"], []],
}
GOOD: list[tuple[str, str, dict[str, Any]]] = [
    ("command", "start", {"cmd": "start", "seq": 1, "version": 1}),
    ("reply", "start", {"seq": 1, "version": 1, "profiles": "any",
                        "implementation": {"name": "x", "version": "1", "language": "rust", "homepage": "https://x"}}),
    ("reply", "start", {"seq": 1, "version": 1, "profiles": ["polish"], "implementation": {"name": "x"}}),
    ("command", "match", {"cmd": "match", "seq": 2, "profile": "polish", "document": {"rules": {}},
                          "state": {"scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
                                    "barrel": [{"on": False, "attempts": 0, "failed_visits": 0}] * 3}}),
    ("reply", "match", {"seq": 2, "ok": True}),
    ("command", "deal", {"cmd": "deal", "seq": 3, "dealer": 0, "hands": [["AS"] * 7] * 3, "talon": ["QH", "JH", "9H"]}),
    ("reply", "deal", {"seq": 3, "ok": True, "events": [{"type": "redeal", "reason": "four_nines", "player": None}]}),
    ("command", "legal", {"cmd": "legal", "seq": 4}),
    ("reply", "legal", {"seq": 4, "actions": ["bid 110", "pass", "give 9S JC", "play QD marriage", "play AS aces", "no_redeal"]}),
    ("command", "apply", {"cmd": "apply", "seq": 5, "action": "anything at all"}),
    ("reply", "apply", {"seq": 5, "ok": True, "events": [
        {"type": "trick_won", "player": 1, "trick": 1, "cards": ["AS", "9S", "JS"], "points": 13},
        {"type": "deal_scored", "points": [25, 160, 15], "deltas": [25, 160, 15], "scores": [57.5, 160, 15]},
        {"type": "barrel_left", "player": 0, "reason": "knocked_off", "penalty": 120}]}),
    ("reply", "apply", {"seq": 5, "ok": False, "refusal": {"class": "illegal", "reason": "must_follow_suit", "message": "…"}}),
    ("command", "state", {"cmd": "state", "seq": 6}),
    ("reply", "state", {"seq": 6, "state": STATE}),
    ("command", "stop", {"cmd": "stop", "seq": 7}),
    ("reply", "stop", {"seq": 7, "ok": True}),
    ("reply", "legal", {"seq": 8, "skipped": {"reason": "four aces not supported"}}),
    ("reply", "state", {"seq": 9, "errored": {"message": "index out of range"}}),
]
BAD: list[tuple[str, str, dict[str, Any], str]] = [
    ("command", "start", {"cmd": "start", "seq": 1, "version": 2}, "version"),
    ("reply", "start", {"seq": 1, "version": 1, "profiles": "all", "implementation": {"name": "x"}}, "profiles"),
    ("command", "deal", {"cmd": "deal", "seq": 3, "dealer": 0, "hands": [["AS"] * 6] * 3, "talon": ["QH"] * 3}, "hands"),
    ("command", "deal", {"cmd": "deal", "seq": 3, "dealer": 0, "hands": [["1S"] * 7] * 3, "talon": ["QH"] * 3}, "does not match"),
    ("reply", "legal", {"seq": 4, "actions": ["play Q D"]}, "actions/0"),
    ("reply", "legal", {"seq": 4, "actions": ["pass", "pass"]}, "actions"),
    ("reply", "apply", {"seq": 5, "ok": False}, "refusal"),
    ("reply", "apply", {"seq": 5, "ok": False, "refusal": {"class": "malformed", "reason": "must_beat"}}, "refusal/reason"),
    ("reply", "apply", {"seq": 5, "ok": True, "events": [{"type": "bolt", "player": 3, "count": 1}]}, "events/0/player"),
    ("reply", "apply", {"seq": 5, "ok": True, "events": [{"type": "no_such_event"}]}, "events/0/type"),
    ("reply", "state", {"seq": 6, "state": {**STATE, "scores": [0, 0]}}, "state/scores"),
    ("reply", "state", {"seq": 6, "state": {k: v for k, v in STATE.items() if k != "hands"}}, "hands"),
    ("reply", "state", {"seq": 6, "state": {**STATE, "phase": "bidding"}}, "state/phase"),
    ("reply", "stop", {"ok": True}, "seq"),
]


def test_every_schema_is_a_valid_2020_12_schema() -> None:
    paths = sorted(PROTOCOL_SCHEMA_DIR.glob("*.json")) + [SCHEMA_DIR / "transcript.schema.json"]
    assert len(paths) == 2 * len(schemas.COMMANDS + schemas.EXTENSION_COMMANDS) + 2
    for path in paths:
        Draft202012Validator.check_schema(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize(("direction", "command", "message"), GOOD)
def test_design_messages_are_valid(direction: str, command: str, message: dict[str, Any]) -> None:
    if direction == "command":
        assert schemas.first_problem(schemas.command_validator(command), message) is None
    else:
        assert schemas.reply_problem(command, message) is None


@pytest.mark.parametrize(("direction", "command", "message", "where"), BAD)
def test_bad_messages_are_refused_with_the_field(direction: str, command: str, message: dict[str, Any], where: str) -> None:
    if direction == "command":
        found = schemas.first_problem(schemas.command_validator(command), message)
    else:
        found = schemas.reply_problem(command, message)
    assert found is not None and where in found


def test_reason_codes_and_events_match_the_design() -> None:
    design = (SCHEMA_DIR.parent.parent / "DESIGN.md").read_text(encoding="utf-8")
    common = json.loads((PROTOCOL_SCHEMA_DIR / "common.json").read_text(encoding="utf-8"))["$defs"]
    for reason in common["reason"]["enum"]:
        assert f"`{reason}`" in design
    for event in common["event_type"]["enum"]:
        assert f"`{event} {{" in design
