"""Random legal play on every profile and every named option (Hypothesis).

Checks the engine's invariants rather than particular numbers: the pack, the legal set,
refusals leaving the state unchanged, the JSON round trip, the deltas, the barrel band
and the match end.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_support import document, profile_names

from reference_impl import MatchState, RefusedActionError, Rules, deal_random
from reference_impl.cards import DECK

NAMES = profile_names()
SCORE_CHOICES = [0, 100, 455, 530, 700, 760, 800, 850, 870, 880, 900, 950, 990]


def initial_match(rules: Rules, rng: random.Random) -> dict[str, Any]:
    """A plausible match state: no score in the barrel band unless on the barrel."""
    scores, barrel = [], []
    for _ in range(3):
        score = rng.choice(SCORE_CHOICES)
        on = False
        if rules.barrel.enabled:
            if score >= rules.barrel.threshold:
                score, on = rules.barrel.threshold, True
        barrel.append({"on": on, "attempts": rng.randrange(rules.barrel.attempts) if on else 0, "failed_visits": rng.randrange(2)})
        scores.append(score)
    return {"scores": scores, "bolts": [rng.randrange(2) for _ in range(3)], "give_ups": [rng.randrange(3) for _ in range(3)], "barrel": barrel}


def other_actions(state: MatchState, rng: random.Random) -> list[str]:
    """A sample of well-formed actions, some legal, most not."""
    card = lambda: rng.choice(DECK).code  # noqa: E731
    pool = [
        "pass", "give_up", "redeal", "no_redeal", f"bid {rng.randrange(80, 420, 5)}", f"bid {rng.randrange(80, 420)}",
        f"contract {rng.randrange(80, 420, 5)}", f"give {card()} {card()}", f"play {card()}", f"play {card()} marriage",
        f"play {card()} aces",
    ]  # fmt: skip
    return rng.sample(pool, 4)


def check_refusals(state: MatchState, rng: random.Random) -> None:
    legal = set(state.legal_actions())
    before = state.to_json()
    for action in other_actions(state, rng):
        if action in legal:
            continue
        with pytest.raises(RefusedActionError):
            state.apply(action)
        assert state.to_json() == before, f"refused {action!r} changed the state"


def play_deal(state: MatchState, dealer: int, rng: random.Random) -> list[str]:
    """One deal of random legal play with the invariants checked on the way; the actions taken."""
    hands, talon = deal_random(rng.randrange(2**32))
    assert len({c for h in hands for c in h} | set(talon)) == 24
    state.start_deal(dealer, hands, talon)
    taken: list[str] = []
    round_trip_at = rng.randrange(30)
    copy: MatchState | None = None
    while state.phase not in ("deal_over", "match_over"):
        legal = state.legal_actions()
        assert legal, f"no legal action in phase {state.phase}"
        assert legal == sorted(legal) and len(set(legal)) == len(legal)
        if len(taken) == round_trip_at:
            copy = MatchState.from_json(state.to_json())
            assert copy == state and copy.legal_actions() == legal
        if rng.random() < 0.3:
            check_refusals(state, rng)
        action = rng.choice(legal)
        events = state.apply(action)
        if copy is not None:
            assert copy.apply(action) == events
        taken.append(action)
    if copy is not None:
        assert copy.observation() == state.observation()
    assert state.legal_actions() == []
    return taken


def check_deal(state: MatchState, start: list[Fraction]) -> None:
    obs = state.observation()
    result = state.deal_result
    assert result is not None
    assert [Fraction(str(x)) for x in result["deltas"]] == [state.scores[p] - start[p] for p in range(3)]
    if result["kind"] == "played":
        assert sum(obs["card_points"]) == 120 and sum(obs["tricks_won"]) == 8
        assert all(not hand for hand in obs["hands"])
        rules = state.rules
        declarer = state.declarer
        assert declarer is not None and state.contract is not None
        quiet = not rules.barrel.enabled and not rules.dump.enabled and rules.scoring.declarer_scores == "contract"
        quiet = quiet and rules.redeal_timing.four_nines_bonus is None and not rules.bolts.declarer
        if quiet:
            assert state.scores[declarer] - start[declarer] == (state.contract if result["made"] else -state.contract)
        for p in range(3):
            if p != declarer and quiet and not rules.bolts.enabled:
                assert state.scores[p] >= start[p], "defending never costs points"
    elif result["kind"] == "redeal":
        assert state.scores == start
    barrel = state.rules.barrel
    if barrel.enabled:
        for p in range(3):
            if state.barrel[p].on and barrel.arrival_cap == "capped":
                assert state.scores[p] == barrel.threshold
            elif state.barrel[p].on:  # barrel.arrival_cap: uncapped
                assert barrel.threshold <= state.scores[p] < state.rules.match_end.target
            elif barrel.threshold < state.scores[p] < state.rules.match_end.target:
                raise AssertionError(f"seat {p} at {state.scores[p]} inside the barrel band")
    assert state.winner is None or state.phase == "match_over"


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_play_keeps_the_invariants(name: str, seed: int) -> None:
    state = play_match(Rules.from_document(document(name)), random.Random(seed), deals=3)
    if state.phase == "match_over":
        with pytest.raises(RefusedActionError) as caught:
            state.apply("pass")
        assert caught.value.reason == "match_over"


def play_match(rules: Rules, rng: random.Random, deals: int) -> MatchState:
    """Up to ``deals`` deals of random play from a plausible match state, each deal checked."""
    state = MatchState(rules, initial_match(rules, rng))
    play_deals(state, rng, deals)
    return state


def play_deals(state: MatchState, rng: random.Random, count: int) -> None:
    """Up to ``count`` deals of random play from a random dealer, each checked; stops when the match ends."""
    dealer = rng.randrange(3)
    for _ in range(count):
        start = list(state.scores)
        play_deal(state, dealer, rng)
        check_deal(state, start)
        if state.phase == "match_over":
            return
        assert state.next_dealer is not None
        dealer = state.next_dealer


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
