"""What ``thousand fuzz`` plays: match states a real match can reach (the reference accepts
every one under every bundled profile and option), and mutants the uniform random play of
earlier versions missed, found now with a fixed seed and a small budget."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterator

import pytest

import variants
from conformance.oracle import fuzz, observe
from conformance.harness.runner import REFERENCE_COMMAND
from tests.support.hunt import found_and_told_apart, problems

STATES_PER_PROFILE = 25




@pytest.fixture(scope="module")
def reference() -> Iterator[observe.Observer]:
    server = observe.Observer(REFERENCE_COMMAND)
    yield server
    server.close()


@pytest.mark.parametrize("name", variants.all_names())
def test_random_match_states_are_ones_a_match_can_reach_and_the_reference_accepts(
        name: str, reference: observe.Observer) -> None:
    document = variants.resolve(name).to_document()
    for number in range(STATES_PER_PROFILE):
        match = fuzz.random_match_state(random.Random(f"states/{number}"), document["rules"])
        assert not problems(match, document["rules"]), (name, match)
        reference.start_match(name, document, match)  # raises on an errored reply
        state = reference.ask("state")["state"]
        assert [state[key] for key in match] == list(match.values()), (name, match)


def test_random_match_states_are_reproducible_and_reach_the_lines() -> None:
    rules = variants.resolve("skill-games").to_document()["rules"]
    states = [fuzz.random_match_state(random.Random(f"s/{n}"), rules) for n in range(300)]
    again = [fuzz.random_match_state(random.Random(f"s/{n}"), rules) for n in range(300)]
    assert states == again
    scores = {score for state in states for score in state["scores"]}
    for line in (555, -555, 880):  # a step or three short of the dump (both signs) and the barrel
        assert scores & set(range(line - 15, line)), line
    assert 880 in scores  # on the barrel
    assert any(state["bolts"][seat] == 2 for state in states for seat in range(3))  # one bolt short of the penalty
    assert any(len(set(state["scores"])) < 3 and any(state["scores"]) for state in states)  # two seats level


def test_stacked_deals_are_whole_decks() -> None:
    rng = random.Random("deals")
    for _ in range(200):
        deal = fuzz.shuffled_deal(rng, 0)
        cards = [card for hand in deal.hands for card in hand] + list(deal.talon)
        assert sorted(cards) == sorted(fuzz.DECK) and all(len(hand) == 7 for hand in deal.hands)


@pytest.mark.slow
@pytest.mark.parametrize(("mutant", "profile", "seed"), [
    ("four-aces-where-off", "classic", "3"),  # four aces in one hand: a stacked deal (missed in 450 uniform deals)
    ("must-overtrump-added", "classic", "2"),  # two voids in a side suit and trumps to spare (missed in 450)
    ("dump-ignored", "classic+dump", "3"),  # a score a few points short of 555 (missed in 450)
    # an event only the mutant sends: the transcript plays on to the deal's score, which it changes
    ("half-capture-counts-own-cards", "classic+half-marriage-bonus", "1"),
])
def test_a_mutant_uniform_play_missed_is_found_and_its_transcript_tells_them_apart(
        mutant: str, profile: str, seed: str, tmp_path: Path) -> None:
    found_and_told_apart(mutant, profile, seed, 60, tmp_path)  # within 60 deals: four-aces-where-off takes 43 under seed 3 since the rules gained four knobs


