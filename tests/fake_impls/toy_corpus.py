"""Shared helpers of the runner tests: toy transcripts in a temporary corpus, the fake."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FAKE = Path(__file__).resolve().parent / "fake.py"
HANDS = [["AS", "10S", "KS", "QS", "JS", "9S", "AC"],
         ["10C", "KC", "QC", "JC", "9C", "AD", "10D"],
         ["KD", "QD", "JD", "9D", "AH", "10H", "KH"]]
TALON = ["QH", "JH", "9H"]


def fake(mode: str = "ok") -> list[str]:
    return [sys.executable, str(FAKE), mode]


def write_case(root: Path, name: str, steps: list[dict[str, Any]], *, deal_expect: dict[str, Any] | None = None,
               profiles: list[str] | None = None, knobs: list[str] | None = None, **extra: Any) -> Path:
    """A one-deal transcript (dealer 0, so seat 1 acts first) at ``root/name.yaml``.

    JSON is YAML, so the file is written as JSON.
    """
    deal: dict[str, Any] = {"dealer": 0, "hands": HANDS, "talon": TALON, "steps": steps}
    if deal_expect:
        deal["expect"] = deal_expect
    case = {"id": name, "title": f"toy case {name}", "profiles": profiles or ["toy"],
            "knobs": knobs or ["play.must_beat"], "deals": [deal], **extra}
    path = root / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(case, indent=1), encoding="utf-8")
    return path


GOOD_STEPS: list[dict[str, Any]] = [
    {"action": "play AS", "player": 1, "legal": ["play KS", "play AS"],
     "events": [{"type": "trick_won", "player": 1}], "expect": {"scores": [0, 1, 0], "phase": "play"}},
    {"action": "play KS", "refused": "must_follow_suit"},
    {"action": "play AS", "player": 2},
]
