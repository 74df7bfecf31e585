"""The transcript pages show each trick's winner: they must agree with what the transcripts expect."""

from __future__ import annotations

from typing import Any

import pytest

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


@pytest.mark.slow
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


def test_values_are_written_as_a_profile_writes_them() -> None:
    """No Python repr: null, true, JSON for mappings and lists, even for frozen values."""
    import variants
    from variants.prose import format_value, ordinal, sentence

    rules = variants.resolve("gambler-club")
    assert format_value(rules.value("marriages.values")) == '{"S": 40, "C": 60, "D": 80, "H": 100}'
    assert format_value(rules.value("redeals.rules")).startswith('[{"condition": "four_nines"')
    assert [format_value(v) for v in (None, True, False, 120)] == ["null", "true", "false", "120"]
    assert sentence("marriages.values", rules.value("marriages.values"), rules.rules).startswith("Marriages are worth spades")
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st"]
    assert sentence("bolts.every", 3, rules.rules) == "Every 3rd bolt costs the penalty and resets the count."
