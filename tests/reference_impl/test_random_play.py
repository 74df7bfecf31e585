"""Random legal play on every profile and every named option (Hypothesis).

Checks the engine's invariants rather than particular numbers: the pack, the legal set,
refusals leaving the state unchanged, the JSON round trip, the deltas, the barrel band
and the match end.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.engine import document, profile_names

from reference_impl import MatchState, RefusedActionError, Rules, deal_random
from tests.support.play import play_deal, play_match

NAMES = profile_names()
# The fast tier plays the six bundled profiles; their options (over fifty) run with the slow tests.
PROFILES_FIRST = [name if "+" not in name else pytest.param(name, marks=pytest.mark.slow) for name in NAMES]












@pytest.mark.parametrize("name", PROFILES_FIRST)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_play_keeps_the_invariants(name: str, seed: int) -> None:
    state = play_match(Rules.from_document(document(name)), random.Random(seed), deals=3)
    if state.phase == "match_over":
        with pytest.raises(RefusedActionError) as caught:
            state.apply("pass")
        assert caught.value.reason == "match_over"






@pytest.mark.parametrize("name", ["gambler-club", "classic+four-aces", "polish-tournament", "skill-games"])
def test_the_same_seed_plays_the_same_match(name: str) -> None:
    """Determinism: the engine has no hidden randomness."""

    def run() -> dict[str, Any]:
        rng = random.Random(7)
        state = MatchState(Rules.from_document(document(name)))
        for dealer in (0, 1, 2):
            play_deal(state, dealer, rng)
            if state.phase == "match_over":
                break
        return state.observation()

    assert run() == run()


def house_rules(rng: random.Random) -> dict[str, Any] | None:
    """A bundled profile with two to eight knobs moved to values drawn from each knob's domain
    (every enum value and boolean, numbers from the bundled ones and their neighbours), as an
    engine's own table moves them; None when the draw fails a cross-knob check."""
    from conformance.oracle.fit import knob_domain
    from variants.checks import CONSISTENCY_CHECKS
    from variants.schema import rule_sections

    doc = document(rng.choice(["classic", "polish", "gambler-club", "skill-games", "repino-2013"]))
    knobs = [(section, name) for section, names in rule_sections().items() for name in names]
    for section, name in rng.sample(knobs, rng.randrange(2, 9)):
        values = knob_domain(f"{section}.{name}", doc["rules"][section][name])
        if values:
            doc["rules"][section][name] = rng.choice(values)
    if any(check(doc["rules"]) is not None for check in CONSISTENCY_CHECKS):
        return None
    return doc


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_play_under_drawn_house_rules_keeps_the_invariants(seed: int) -> None:
    """The legal set and the refusals agree under knob values no bundled profile combines: a
    listed action is taken, an action left out is refused with the state unchanged. (Under
    one step at a time and an opening from 100 upwards, the opener was offered only 100 and
    then allowed to open at 110.)"""
    rng = random.Random(seed)
    doc = house_rules(rng)
    if doc is None:
        return
    play_match(Rules.from_document(doc), rng, deals=2)


def test_one_step_at_a_time_leaves_the_opening_free() -> None:
    """``auction.raise: one_step`` binds raises over a high bid; under ``opening: at_least``
    the opener's first bid is any amount from the opening bid, as the refusals have it."""
    state = MatchState(Rules.from_document(document("classic", auction={"raise": "one_step", "max_bid": 130})))
    hands, talon = deal_random(3)
    state.start_deal(0, hands, talon)
    assert state.phase == "auction"
    legal = state.legal_actions()
    assert [a for a in legal if a.startswith("bid")][:3] == ["bid 100", "bid 105", "bid 110"]
    state.apply("bid 110")
    assert [a for a in state.legal_actions() if a.startswith("bid")] == ["bid 115"]
