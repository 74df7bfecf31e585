"""The transcript pages show each trick's winner: they must agree with what the transcripts expect."""

from __future__ import annotations

from typing import Any

import variants
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from sitegen.narrate import stories


def expected_winners(deal: dict[str, Any]) -> dict[int, int]:
    """trick number -> winner, from the `trick_won` events a transcript expects."""
    found = {}
    for step in deal.get("steps") or []:
        for event in step.get("events") or []:
            if event.get("type") == "trick_won" and "trick" in event and "player" in event:
                found[int(event["trick"])] = int(event["player"])
    return found


def test_the_narrated_trick_winners_match_every_expected_trick_won_event() -> None:
    checked, wrong = 0, []
    for case in discover([CASES_DIR]):
        assert isinstance(case, Transcript)
        rules = variants.resolve(case.profiles[0]).rules
        for number, (story, deal) in enumerate(stories({"deals": list(case.deals)}, rules), start=1):
            for trick, winner in expected_winners(deal).items():
                checked += 1
                shown = story.winners[trick - 1] if trick <= len(story.winners) else None
                if shown != winner:
                    wrong.append(f"{case.id} deal {number} trick {trick}: page shows {shown}, transcript expects {winner}")
    assert checked > 500
    assert not wrong, "\n".join(wrong[:20])
