"""The variant axes of scoring, bolts, barrel, match end and redeals (issue 12, part B).

One flip test per new knob value (the outcome changes with the knob), the bolts-on-barrel
fix replayed from a house file, the validator's refusal of a four-nines bonus beside a
four-nines redeal, and random play under random knob combinations drawn from the schema.
"""

from __future__ import annotations

import copy
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.support.engine import barrel_match, document, engine, fill_deal, play_all, scored, types
from tests.support.play import play_match

import variants
from conformance.corpus.transcripts import CASES_DIR, load
from reference_impl import MatchState, Rules, deal_end
from variants.checks import CONSISTENCY_CHECKS
from variants.schema import knob_entry, rule_sections

OFF = {"barrel": {"enabled": False}}

# ------------------------------------------------------------------ scoring


@pytest.mark.parametrize(("kind", "delta"), [("contract", 100), ("total", 110)])
def test_declarer_scores_the_contract_or_the_total(kind: str, delta: int) -> None:
    state, _ = scored("classic", 0, 100, [110, 10, 0], scoring={"declarer_scores": kind})
    assert state.scores[0] == delta


def test_the_total_scored_is_the_rounded_one() -> None:
    state, _ = scored("classic", 0, 100, [107, 13, 0], scoring={"declarer_scores": "total", "declarer_rounding": "nearest_5"})
    assert state.scores[0] == 105


@pytest.mark.parametrize(("kind", "share"), [("lost", 0), ("split_among_defenders", 60), ("each_defender", 120)])
def test_a_failed_contract_goes_to_the_defenders(kind: str, share: int) -> None:
    state, _ = scored("classic", 0, 120, [60, 40, 20], scoring={"failed_contract_points": kind})
    assert state.scores == [-120, 40 + share, 20 + share]


def test_a_split_keeps_halves_and_the_barrel_suspends_it() -> None:
    state, _ = scored("classic", 0, 105, [60, 40, 20], match=barrel_match([0, 880, 0], [False, True, False]),
                      scoring={"failed_contract_points": "split_among_defenders"})
    assert state.scores == [-105, 880, Fraction(20) + Fraction(105, 2)]


# -------------------------------------------------------------------- bolts


@pytest.mark.parametrize(("declarer", "bolts"), [(False, [0, 0, 0]), (True, [1, 0, 0])])
def test_a_declarer_with_nothing_gets_a_bolt_only_where_the_knob_says(declarer: bool, bolts: list[int]) -> None:
    state, events = scored("classic", 0, 100, [0, 100, 20], tricks=[0, 6, 2], bolts={"declarer": declarer})
    assert state.bolts == bolts
    assert ("bolt" in types(events)) is declarer


def test_bolts_on_the_barrel_a_third_bolt_ends_the_visit() -> None:
    state, events = scored("classic", 0, 120, [120, 0, 0], match={**barrel_match([0, 880, 0], [False, True, False]), "bolts": [0, 2, 0]},
                           bolts={"on_barrel": True})
    assert state.scores[1] == 760 and not state.barrel[1].on and state.barrel[1].failed_visits == 1
    left = [e for e in events if e["type"] == "barrel_left"]
    assert left == [{"type": "barrel_left", "player": 1, "reason": "dropped_below", "penalty": 0}]


HOUSE = """\
profile: bolts-house
title: Classic with bolts on the barrel
status: stable
summary: Classic rules, except that zeros on the barrel count as bolts too.
extends: classic
sources:
  table: {title: "What the table agreed"}
rules:
  bolts:
    on_barrel: {value: true, source: "table bolts"}
"""


def test_the_bolts_on_barrel_bug_replayed_from_a_house_file(tmp_path: Path) -> None:
    """Before the fix: 760, still on the barrel, attempts 1, no barrel_left."""
    path = tmp_path / "bolts-house.yaml"
    path.write_text(HOUSE, encoding="utf-8")
    rules = Rules.from_document(variants.resolve(str(path)).to_document())
    case = load(CASES_DIR / "classic/bolts/no-bolt-on-the-barrel.yaml", CASES_DIR)
    state = MatchState(rules, case.match)
    deal = case.deals[0]
    state.start_deal(deal["dealer"], deal["hands"], deal["talon"])
    events = play_all(state, [step["action"] for step in deal["steps"]])
    assert state.observation()["scores"] == [120, 760, 180]
    assert state.barrel[1].on is False and state.barrel[1].attempts == 0 and state.barrel[1].failed_visits == 1
    assert {"type": "barrel_left", "player": 1, "reason": "dropped_below", "penalty": 0} in events


# ------------------------------------------------------------------- barrel


@pytest.mark.parametrize(("kind", "score", "on"), [("leave", 760, False), ("stay", 880, True)])
def test_a_failed_barrel_contract_leaves_or_stays(kind: str, score: int, on: bool) -> None:
    state, _ = scored("classic", 0, 120, [50, 40, 30], match=barrel_match([880, 0, 0], [True, False, False]), barrel={"failed_contract": kind})
    assert state.scores[0] == score and state.barrel[0].on is on
    assert state.barrel[0].attempts == (1 if on else 0)


@pytest.mark.parametrize(("kind", "score"), [("capped", 880), ("uncapped", 890)])
def test_arrival_capped_or_not(kind: str, score: int) -> None:
    state, _ = scored("classic", 0, 100, [60, 60, 0], match={"scores": [0, 830, 0]}, barrel={"arrival_cap": kind})
    assert state.scores[1] == score and state.barrel[1].on


def test_uncapped_still_caps_a_score_past_the_target_that_does_not_win() -> None:
    state, _ = scored("gambler-club", 0, 100, [60, 60, 0], match={"scores": [0, 950, 0]}, barrel={"arrival_cap": "uncapped"})
    assert state.scores[1] == 880 and state.barrel[1].on and state.winner is None


def test_a_fall_that_leaves_an_uncapped_score_in_the_band_arrives_again_a_deal_later() -> None:
    """Threshold 850, scores uncapped, three attempts, a 120 penalty. An occupant at 990 on its
    third attempt defends with its points suspended: 990 stays, the attempts are spent and it
    falls to 990 - 120 = 870, still past the threshold, off the barrel (the schema's text of
    barrel.arrival_cap). In the next deal it defends with 0 points: 870 + 0 >= 850 arrives
    again, uncapped at 870, its attempts counted from 0."""
    barrel = {"threshold": 850, "arrival_cap": "uncapped", "attempts": 3, "attempts_penalty": 120, "attempt_counts": "every_deal"}
    state, events = scored("classic", 0, 100, [60, 0, 60], match=barrel_match([0, 990, 0], [False, True, False], attempts=[0, 2, 0]),
                           barrel=barrel)
    assert state.scores[1] == 870 and not state.barrel[1].on
    assert {"type": "barrel_left", "player": 1, "reason": "attempts_exhausted", "penalty": 120} in events
    state, _ = scored("classic", 0, 100, [60, 0, 60], match=barrel_match([0, 870, 0], [False, False, False], failed=[0, 1, 0]), barrel=barrel)
    assert state.scores[1] == 870 and state.barrel[1].on and state.barrel[1].attempts == 0


@pytest.mark.parametrize(("kind", "winner"), [("made_contract", None), ("any_gain", 1)])
def test_winning_from_the_barrel_by_a_contract_or_any_gain(kind: str, winner: int | None) -> None:
    state, _ = scored("gambler-club", 0, 100, [0, 120, 0], match=barrel_match([0, 880, 0], [False, True, False]),
                      barrel={"win_by": kind, "defender_points": "counted"})
    assert state.winner == winner
    assert state.scores[1] == (1000 if winner == 1 else 880)


@pytest.mark.parametrize(("kind", "on", "scores"), [
    ("knock_off_occupants", [False, True, False], [760, 880]),
    ("arrivals_fall_back", [True, False, False], [880, 760]),
    ("all_fall", [False, False, False], [760, 760]),
])  # fmt: skip
def test_barrel_crowding(kind: str, on: list[bool], scores: list[int]) -> None:
    state, _ = scored("skill-games", 2, 100, [0, 20, 100], match=barrel_match([880, 860, 0], [True, False, False]), barrel={"crowding": kind})
    assert [s.on for s in state.barrel] == on
    assert state.scores[:2] == scores


@pytest.mark.parametrize(("kind", "start", "on"), [
    ("all_fall_back", [780, 860, 870], [False, False, False]),
    ("highest_stay", [780, 860, 870], [False, True, True]),  # 880, 885, 890: the two highest stay
    ("highest_stay", [785, 855, 860], [True, False, False]),  # 885, 880, 880: a tie across the last place falls
])  # fmt: skip
def test_more_arrivals_than_places(kind: str, start: list[int], on: list[bool]) -> None:
    state, _ = scored("gambler-club", 0, 100, [75, 25, 20], match={"scores": start}, marriages=[["D"], [], []],
                      barrel={"arrivals_over_limit": kind})
    assert [s.on for s in state.barrel] == on
    assert [state.scores[p] == (880 if on[p] else 760) for p in range(3)] == [True] * 3


# ---------------------------------------------------------------- match end


@pytest.mark.parametrize(("kind", "winner", "phase"), [("reach", 0, "match_over"), ("exact_only", None, "deal_over")])
def test_going_over_the_target(kind: str, winner: int | None, phase: str) -> None:
    state, _ = scored("polish", 0, 120, [120, 0, 0], match={"scores": [900, 0, 0]}, match_end={"over_target": kind})
    assert state.winner == winner and state.phase == phase and state.scores[0] == 1020


def test_exactly_the_target_wins_under_exact_only() -> None:
    state, _ = scored("polish", 0, 100, [120, 0, 0], match={"scores": [900, 0, 0]}, match_end={"over_target": "exact_only"})
    assert state.winner == 0


TIES = [  # (tie_break, Ben's start, winner, drawn players, phase)
    ("declarer_then_highest", 980, 0, None, "match_over"),
    ("highest", 980, None, [0, 1], "match_over"),
    ("highest_then_play_on", 980, None, None, "deal_over"),
    ("draw", 980, None, [0, 1], "match_over"),
    ("declarer_then_highest", 990, 0, None, "match_over"),
    ("highest", 990, 1, None, "match_over"),
    ("highest_then_play_on", 990, 1, None, "match_over"),
    ("draw", 990, None, [0, 1], "match_over"),
]


@pytest.mark.parametrize(("rule", "ben", "winner", "drawn", "phase"), TIES)
def test_tie_breaks(rule: str, ben: int, winner: int | None, drawn: list[int] | None, phase: str) -> None:
    state, events = scored("classic", 0, 100, [100, 20, 0], match={"scores": [900, ben, 0]}, barrel={"enabled": False},
                           match_end={"tie_break": rule})
    assert state.winner == winner and state.phase == phase
    assert [e["players"] for e in events if e["type"] == "match_drawn"] == ([drawn] if drawn else [])


# ------------------------------------------------------------------ redeals


def test_four_nines_dealt_score_the_bonus() -> None:
    changes: dict[str, Any] = {"redeals": {"rules": [], "four_nines_bonus": 100}}
    state = engine("classic", **changes)
    hands, talon = fill_deal(["", "9S 9C 9D 9H", ""])
    state.start_deal(0, hands, talon)
    assert state.nines_holder == 1 and state.phase == "auction"
    events: list[dict[str, Any]] = []
    state.declarer, state.high_bid, state.contract, state.dealer = 0, 100, 100, 0
    state.card_points = [100, 20, 0]
    deal_end.score_played(state, events)
    assert {"type": "bonus", "player": 1, "kind": "four_nines", "points": 100} in events
    assert state.scores == [100, 120, 0]
    without = engine("classic", redeals={"rules": []})
    without.start_deal(0, hands, talon)
    assert without.nines_holder == 1 and without.rules.redeal_timing.four_nines_bonus is None


@pytest.mark.parametrize(("window", "phase"), [("after_contract", "contract"), ("before_contract", "claim")])
def test_the_after_exchange_claim_before_or_after_the_contract(window: str, phase: str) -> None:
    state = engine("classic", redeals={"after_exchange_window": window})
    hands, talon = fill_deal(["9S 9C 9D 9H AS 10S AC", "", ""])
    state.start_deal(2, hands, talon)
    play_all(state, ["bid 100", "pass", "pass", "give " + " ".join(c.code for c in talon[:2])])
    assert state.phase == phase and state.contract is None
    if window == "before_contract":
        play_all(state, ["no_redeal", "contract 100"])
        assert state.phase == "play"  # the window is not opened a second time


def test_a_nines_bonus_beside_a_four_nines_redeal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text(HOUSE.replace("profile: bolts-house", "profile: both").replace(
        "  bolts:\n    on_barrel: {value: true, source: \"table bolts\"}",
        "  redeals:\n    four_nines_bonus: {value: 100, source: \"table nines\"}"), encoding="utf-8")
    with pytest.raises(variants.ProfileError, match="four_nines_bonus replaces the four-nines redeal"):
        variants.resolve(str(path))


# ---------------------------------------------- half-marriage and last-trick bonuses

R_HANDS = ["9S JS QS 9C JC QC 9D", "AS 10S KS AC 10C KC AD", "KD QD AH 10H KH QH JH"]
R_PLAY = ["bid 100", "pass", "pass", "give 10D 9H", "contract 100"] + [
    "play " + card for card in "QS AS 9H 10S JH JS KS QH 9S AC KH QC 10C 10H JC KC AH 9C AD QD 9D 10D KD JD".split()
]


def played_r(**changes: dict[str, Any]) -> tuple[MatchState, list[dict[str, Any]]]:
    """Deal R of the option cases: Ben wins every trick; nobody declares."""
    state = engine("classic", **changes)
    hands, talon = fill_deal(R_HANDS, "JD 10D 9H")
    state.start_deal(2, hands, talon)
    return state, play_all(state, R_PLAY)


@pytest.mark.parametrize(("bonus", "ben"), [(None, 120), (20, 240)])
def test_half_marriage_captures(bonus: int | None, ben: int) -> None:
    state, events = played_r(marriages={"half_capture_bonus": bonus})
    assert state.scores[1] == ben
    assert len([e for e in events if e["type"] == "bonus"]) == (6 if bonus else 0)


@pytest.mark.parametrize(("bonus", "ben"), [(None, 120), (10, 130)])
def test_last_trick_bonus(bonus: int | None, ben: int) -> None:
    state, _ = played_r(play={"last_trick_bonus": bonus})
    assert state.scores[1] == ben and state.deal_result is not None and state.deal_result["points"][1] == ben


# ------------------------------------- random play under random knob combinations

ROOTS = ["gambler-club", "classic", "skill-games", "polish"]


def _choices() -> dict[str, list[Any]]:
    """Every knob's candidate values: the schema's enum or booleans; else its default and the bundled values."""
    used: dict[str, list[Any]] = {}
    for name in variants.all_names():
        for section, knobs in document(name)["rules"].items():
            for knob, value in knobs.items():
                found = used.setdefault(f"{section}.{knob}", [])
                if value not in found:
                    found.append(copy.deepcopy(value))
    choices = {}
    for section, knobs in rule_sections().items():
        for knob in knobs:
            schema = knob_entry(section, knob)["properties"]["value"]
            key = f"{section}.{knob}"
            if "enum" in schema:
                choices[key] = list(schema["enum"])
            elif schema.get("type") == "boolean":
                choices[key] = [False, True]
            else:
                extra = [schema["default"]] if "default" in schema and schema["default"] not in used.get(key, []) else []
                nullable = isinstance(schema.get("type"), list) and "null" in schema["type"] and None not in used.get(key, [])
                choices[key] = used.get(key, []) + extra + ([None] if nullable else [])
    return choices


CHOICES = _choices()


@st.composite
def knob_combination(draw: st.DrawFn) -> dict[str, Any]:
    """A root profile's rules with a random subset of knobs set to random allowed values."""
    rules = copy.deepcopy(document(draw(st.sampled_from(ROOTS)))["rules"])
    for key in draw(st.lists(st.sampled_from(sorted(CHOICES)), max_size=25, unique=True)):
        section, knob = key.split(".")
        rules[section][knob] = copy.deepcopy(draw(st.sampled_from(CHOICES[key])))
    return rules


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=knob_combination(), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_play_under_random_knobs(rules: dict[str, Any], seed: int) -> None:
    assume(all(check(rules) is None for check in CONSISTENCY_CHECKS))  # what the validator refuses
    parsed = Rules.from_document({"profile": "random", "rules": rules})
    play_match(parsed, random.Random(seed), deals=2)  # test_random_play's invariants, checked after every deal
