"""Snapshots (``reference_impl.snapshot``): the observable state in the engine's own values.

The server counts an expected state as met when the engine's snapshot equals the one read
from it, so equal snapshots must be the same JSON value to the last type and member order,
and a JSON value that differs from a state's observation in the least type or order must not
read as that state's snapshot."""

from __future__ import annotations

import itertools
import marshal
import random
from fractions import Fraction
from typing import Any, Callable, Iterator

import pytest
from tests.support.engine import document, profile_names
from tests.support.play import initial_match

from reference_impl import MatchState, Rules, deal_random
from reference_impl import snapshot

# the types each field's item holds (the deal result is kept as bytes; the others are checked below)
_SCALARS: dict[str, tuple[type, ...]] = {
    "phase": (str,), "to_act": (int, type(None)), "dealer": (int, type(None)), "next_dealer": (int, type(None)),
    "high_bid": (int, type(None)), "declarer": (int, type(None)), "contract": (int, type(None)), "talon_shown": (bool,),
    "talon": (int, type(None)), "trump": (str, type(None)), "trick_number": (int, type(None)), "winner": (int, type(None)),
    "deal_result": (bytes, type(None)),
}  # fmt: skip
_COUNTS = ("tricks_won", "card_points", "bolts", "give_ups", "hands")


def _states(name: str, seed: int) -> Iterator[MatchState]:
    """The states of a few deals of random legal play under a profile, one at a time: the live
    state, as the server takes its snapshot, changed by the next action once the caller is done
    with it (a copy of each, through ``to_json``, was most of the file's time)."""
    rules = Rules.from_document(document(name))
    rng = random.Random(seed)
    state = MatchState(rules, initial_match(rules, rng))
    for dealer in (0, 1, 2):
        if state.phase == "match_over":
            break
        state.start_deal(dealer, *deal_random(rng.randrange(2**32)))
        yield state
        while state.phase not in ("deal_over", "match_over"):
            state.apply(rng.choice(state.legal_actions()))
            yield state


def _check_types(taken: snapshot.Snapshot) -> None:
    """Each item holds values of one type each (an int is never a bool), as equality needs."""
    items = dict(zip(snapshot.FIELDS, taken))
    for name, types in _SCALARS.items():
        assert type(items[name]) in types, (name, items[name])
    for name in _COUNTS:
        assert all(type(value) is int for value in items[name]), (name, items[name])
    assert all(type(score) in (int, Fraction) for score in items["scores"])
    assert all(type(player) is int and type(action) is str for player, action in items["auction"])
    assert all(type(player) is int for player, _card in items["trick"])
    suits, aces = items["marriages"]
    assert all(type(suit) is str for seat in suits for suit in seat) and all(type(flag) is bool for flag in aces)
    assert all(type(on) is bool and type(attempts) is int and type(failed) is int for on, attempts, failed in items["barrel"])


@pytest.mark.parametrize("name", profile_names())
def test_a_state_reads_back_as_its_own_snapshot(name: str) -> None:
    for seed in range(2):  # two matches of three deals per profile: every phase, in the fast tier's minute
        for state in _states(name, seed):
            taken = state.snapshot()
            _check_types(taken)
            observed = state.observation()
            assert snapshot.read(observed) == taken
            assert marshal.dumps(snapshot.observation(snapshot.read(observed) or ()), 0) == marshal.dumps(observed, 0)


def _tampered() -> dict[str, Callable[[dict[str, Any]], None]]:
    return {
        "true for 1": lambda s: s.update(dealer=True if s["dealer"] == 1 else s["dealer"], to_act=True),
        "0.0 for 0": lambda s: s.update(scores=[float(score) for score in s["scores"]]),
        "1 for true": lambda s: s.update(talon_shown=int(s["talon_shown"])),
        "members in another order": lambda s: s.update(barrel=[dict(reversed(seat.items())) for seat in s["barrel"]]),
        "a hand out of order": lambda s: s.update(hands=[list(reversed(hand)) for hand in s["hands"]]),
        "a card twice": lambda s: s.update(hands=[hand[:1] * 2 for hand in s["hands"]]),
        "no card": lambda s: s.update(hands=[["1S"], [], []]),
        "a field missing": lambda s: s.pop("winner"),
        "a field more": lambda s: s.update(extra=1),
        "fields in another order": lambda s: s.update(phase=s.pop("phase")),
        "aces not last": lambda s: s.update(marriages=[["aces", "S"], [], []]),
        "a deal result of another type": lambda s: s.update(deal_result=[]),
        "an auction entry that is no object": lambda s: s.update(auction=[[0, "pass"]]),
    }


@pytest.mark.parametrize("change", list(_tampered()))
def test_a_value_other_than_the_observation_is_not_read_as_the_snapshot(change: str) -> None:
    state = next(itertools.islice(_states("classic+four-aces", 1), 5, None))
    observed = state.observation()
    _tampered()[change](observed)
    read = snapshot.read(observed)
    assert read != state.snapshot()
    assert read is None or marshal.dumps(snapshot.observation(read), 0) == marshal.dumps(observed, 0)
