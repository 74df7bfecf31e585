"""Positions ``thousand fuzz`` builds for one rule (``conformance.oracle.positions``): whole decks and
reachable match states under every bundled profile, each position reaching the point it is
built for when the reference plays it, and the mutants random play missed for want of such
a point now found within the default budget."""

from __future__ import annotations

import dataclasses
import functools
import random
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import variants
from conformance.oracle import fuzz, observe, positions
from conformance.harness.runner import REFERENCE_COMMAND
from tests.support.hunt import found_and_told_apart, problems

Builder = Callable[[random.Random, dict[str, dict[str, Any]], dict[str, Any]], positions.Position | None]


@pytest.fixture(scope="module")
def pair() -> Iterator[fuzz.Pair]:
    both = fuzz.Pair(REFERENCE_COMMAND, REFERENCE_COMMAND, 20.0)
    yield both
    both.close()


@functools.cache  # a resolved profile is frozen; the tests below build about 1,800 positions from 60 names
def resolved(profile: str) -> variants.ResolvedProfile:
    return variants.resolve(profile)


def built(builder: Builder, profile: str, number: int) -> positions.Position | None:
    rules = resolved(profile).to_document()["rules"]  # a fresh copy: a builder cannot change another's rules
    rng = random.Random(f"positions/{number}")
    return builder(rng, rules, fuzz.random_match_state(rng, rules))


def played(pair: fuzz.Pair, profile: str, position: positions.Position) -> list[observe.StepRecord]:
    """The reference's steps through the position (it plays both sides, so nothing diverges)."""
    document = variants.resolve(profile).to_document()
    rng = random.Random(0)
    styles = position.styles or ("any", "any", "any")

    def free(legal: tuple[str, ...], state: dict[str, Any]) -> str | None:
        return fuzz.choose_action(rng, document["rules"], styles, legal, state)

    recorded: list[tuple[fuzz.Deal, list[observe.StepRecord]]] = []
    scenario = fuzz.Scenario(position.match, (fuzz.Deal(position.dealer, position.hands, position.talon),), position.name)
    _, divergence = fuzz.play(pair, profile, document, scenario, positions.chooser(position, free),
                              lambda number, state: None, record=recorded)
    assert divergence is None, divergence
    return recorded[0][1]


def events(steps: list[observe.StepRecord]) -> list[dict[str, Any]]:
    return [event for step in steps for event in step.reply.events]


@pytest.mark.parametrize("name", variants.all_names())
def test_positions_deal_whole_decks_from_match_states_a_match_can_reach(name: str) -> None:
    rules = variants.resolve(name).to_document()["rules"]
    for builder in positions.BUILDERS:
        for number in range(6):
            position = built(builder, name, number)
            if position is None:
                continue
            cards = [card for hand in position.hands for card in hand] + list(position.talon)
            assert sorted(cards) == sorted(positions.DECK), (name, builder.__name__)
            assert [len(hand) for hand in position.hands] == [7, 7, 7] and len(position.talon) == 3
            assert not problems(position.match, rules), (name, builder.__name__, position.match)
            planned = {word for plan in position.plans for _, action in plan for word in action.split()[1:]}
            held = set(cards)
            assert {word for word in planned if word[-1] in "SCDH" and word[:-1] in positions.RANKS} <= held


def test_the_nines_trick_leaves_a_defender_one_trick_of_at_most_2_points(pair: fuzz.Pair) -> None:
    zero = two = 0
    for number in range(8):
        position = built(positions.nines_trick, "classic", number)
        assert position is not None
        steps = played(pair, "classic", position)
        won = [e for e in events(steps) if e["type"] == "trick_won"]
        defenders = [seat for seat in range(3) if seat != position.declarer]
        only = [seat for seat in defenders if len([e for e in won if e["player"] == seat]) == 1]
        assert only, [(e["player"], e["cards"]) for e in won]
        trick = next(e for e in won if e["player"] == only[0])
        assert sorted(card[:-1] for card in trick["cards"]) in (["9", "9", "9"], ["9", "9", "J"]), trick
        if trick["points"] == 0:  # classic: a bolt is a deal of no points, and this defender has none
            zero += 1
            assert any(e["type"] == "bolt" and e["player"] == only[0] for e in events(steps))
        else:
            two += 1
    assert zero and two  # both layouts come up


@pytest.mark.parametrize(("profile", "over_declarer", "over_defender"), [
    # the ace must overtrump the declarer's queen; after a defender's trump both the declarer's
    # trumps beat it, since the duty to beat took that defender's ten on the marriage trick
    ("polish", 1, 2),
    ("classic", 2, 2),  # no duty to overtrump: either trump
    ("classic+overtrump-declarer-only", 1, 2),  # owed against the declarer's trump only
])
def test_the_trump_over_a_trump_offers_what_the_duty_to_overtrump_allows(
        pair: fuzz.Pair, profile: str, over_declarer: int, over_defender: int) -> None:
    seen = set()
    for number in range(8):
        position = built(positions.trump_over_trump, profile, number)
        assert position is not None
        steps = played(pair, profile, position)
        at = [i for i, step in enumerate(steps[:-1])
              if step.state.get("trick_number") == 4 and len(step.state.get("trick") or ()) == 2]
        assert at, "nobody played third to a trumped trick 4"
        trick = steps[at[0]].state["trick"]
        offered = steps[at[0] + 1].legal or ()
        by_declarer = trick[1]["player"] == position.declarer
        seen.add(by_declarer)
        assert len(offered) == (over_declarer if by_declarer else over_defender), (trick, offered)
    assert seen == {True, False}  # both layouts come up


def test_the_rich_defender_is_held_to_the_polish_maximum(pair: fuzz.Pair) -> None:
    for number in range(4):
        position = built(positions.rich_defender, "polish", number)
        assert position is not None
        steps = played(pair, "polish", position)
        marriages = [e for e in events(steps) if e["type"] == "marriage_declared" and e["player"] != position.declarer]
        assert len(marriages) == 2
        seat = marriages[0]["player"]
        assert position.match["scores"][seat] < 800 and steps[-1].state["scores"][seat] == 990


def test_the_rich_defender_and_the_declarer_share_a_finish_that_the_tie_break_settles(pair: fuzz.Pair) -> None:
    finishes = [p for p in (built(positions.rich_defender, "classic", n) for n in range(12))
                if p is not None and p.least_contract]
    assert finishes
    for position in finishes[:2]:
        winners = {}
        for profile in ("classic", "classic+tie-highest"):
            won = [e for e in events(played(pair, profile, position)) if e["type"] == "match_won"]
            assert len(won) == 1
            winners[profile] = won[0]["player"]
        assert winners["classic"] == position.declarer  # declarer_then_highest
        assert winners["classic+tie-highest"] != position.declarer  # the defender's score is higher


@pytest.mark.slow
def test_three_seats_near_the_barrel_arrive_at_once_now_and_then(pair: fuzz.Pair) -> None:
    profile = "gambler-club+highest-arrivals-stay"
    crowded = 0
    for number in range(40):
        position = built(positions.near_a_line, profile, number)
        assert position is not None
        entered = [e for e in events(played(pair, profile, position)) if e["type"] == "barrel_entered"]
        crowded += len(entered) == 3
    assert crowded >= 2


@pytest.mark.slow
@pytest.mark.parametrize(("mutant", "profile", "seed"), [
    # each was not found in 1,500 deals of random play: the position it needs came up once in thousands
    ("bolt-counts-tricks", "classic", "1"),
    ("bolt-for-two-points", "classic", "1"),
    ("defender-max-ignored", "polish", "1"),
    ("tie-break-ignores-declarer", "classic", "1"),
    ("tie-break-always-declarer", "classic+tie-highest", "1"),
    ("barrel-arrivals-all-fall-back", "gambler-club+highest-arrivals-stay", "2"),
    ("must-overtrump-missing", "classic+overtrump-declarer-only", "1"),
])
def test_a_mutant_that_needs_a_position_is_found_by_the_default_run(mutant: str, profile: str, seed: str,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = found_and_told_apart(mutant, profile, seed, 200, tmp_path / "default")
    assert outcome.divergence is not None
    if not outcome.divergence.scenario.position:
        # random play (its deals chosen by the reference's playout rule) met it first: the
        # positions alone must still find it within the same budget
        monkeypatch.setattr(fuzz, "CHANCES", dataclasses.replace(fuzz.CHANCES, position_trial=1.0))
        outcome = found_and_told_apart(mutant, profile, seed, 200, tmp_path / "positions")
    assert outcome.divergence is not None and outcome.divergence.scenario.position  # found in a position built for it
