"""Shared helpers of the engine tests: resolved profile documents and deal builders.

``document(name)`` is ``variants.resolve(name).to_document()`` (cached; copied on each
call). Not a test module by itself.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Iterable

import pytest

import variants
from reference_impl import IllegalActionError, MatchState, Rules
from reference_impl.cards import Card, cards


@functools.cache
def _document(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = variants.resolve(name).to_document()
    return doc


def document(name: str, **changes: dict[str, Any]) -> dict[str, Any]:
    """The resolved document of a profile, with knobs changed per section (a fresh copy)."""
    doc = copy.deepcopy(_document(name))
    for section, knobs in changes.items():
        doc["rules"][section].update(knobs)
    return doc


def profile_names() -> list[str]:
    """Every bundled profile, and each named option of each profile."""
    return variants.all_names()


def engine(name: str, match: dict[str, Any] | None = None, **changes: dict[str, Any]) -> MatchState:
    """A fresh match under a profile (knobs optionally changed)."""
    return MatchState(Rules.from_document(document(name, **changes)), match)


def fill_deal(hands: list[str], talon: str | None = None) -> tuple[list[list[Card]], list[Card]]:
    """Hands given in part ("AS 10S ..."), completed with the remaining cards in pack order."""
    given = [cards(h) for h in hands]
    fixed_talon = cards(talon) if talon else []
    used = {c for h in given for c in h} | set(fixed_talon)
    rest = [c for c in cards(_FILL_ORDER) if c not in used]
    full = []
    for hand in given:
        need = 7 - len(hand)
        full.append(hand + rest[:need])
        rest = rest[need:]
    if not fixed_talon:
        fixed_talon, rest = rest[:3], rest[3:]
    assert not rest and all(len(h) == 7 for h in full), "fill_deal: the given cards do not make a deal"
    return full, fixed_talon


# filler cards: dealt alone they give no hand a marriage, four nines or under 14 points
_FILL_ORDER = "JS 10C KS 9H JC KC AH 9S JD KD AS 9C KH 10S QS AD 10D QC 10H JH 9D AC QD QH"


def play_all(state: MatchState, actions: Iterable[str]) -> list[dict[str, Any]]:
    """Apply actions in order; the events of all of them."""
    events: list[dict[str, Any]] = []
    for action in actions:
        events.extend(state.apply(action))
    return events


def scored(
    name: str,
    declarer: int,
    contract: int,
    points: list[int],
    marriages: list[list[str]] | None = None,
    match: dict[str, Any] | None = None,
    tricks: list[int] | None = None,
    **changes: dict[str, Any],
) -> tuple[MatchState, list[dict[str, Any]]]:
    """Drive the end-of-deal scoring with given card points and declared marriages.

    The state is put where the eighth trick has just closed (dealer 0); the events are
    those of the scoring steps.
    """
    from reference_impl import deal_end

    assert sum(points) == 120, "the card points of a deal add up to 120"
    state = engine(name, match, **changes)
    state.dealer = 0
    state.declarer = declarer
    state.high_bid = contract
    state.contract = contract
    state.card_points = list(points)
    state.marriages = [list(m) for m in (marriages or [[], [], []])]
    state.tricks_won = list(tricks) if tricks else [1 if p else 0 for p in points]
    state.phase = "play"
    state.trick_number = 8
    events: list[dict[str, Any]] = []
    deal_end.score_played(state, events)
    return state, events


def to_play(state: MatchState, hands: list[list[Card]], talon: list[Card], give: str, contract: int = 100, dealer: int = 0) -> None:
    """Deal; the opener bids the opening bid, both others pass; give; fix the contract."""
    state.start_deal(dealer, hands, talon)
    while state.phase == "claim":
        state.apply("no_redeal")
    state.apply(f"bid {state.rules.auction.opening_bid}")
    state.apply("pass")
    state.apply("pass")
    while state.phase == "claim":
        state.apply("no_redeal")
    state.apply(give)
    state.apply(f"contract {contract}")
    while state.phase == "claim":
        state.apply("no_redeal")
    assert state.phase == "play"


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def barrel_match(scores: list[float], on: list[bool], attempts: list[int] | None = None, failed: list[int] | None = None) -> dict[str, Any]:
    """A match state with some players on the barrel."""
    attempts = attempts or [0, 0, 0]
    failed = failed or [0, 0, 0]
    return {
        "scores": list(scores),
        "barrel": [{"on": on[p], "attempts": attempts[p], "failed_visits": failed[p]} for p in range(3)],
    }


def refusal(state: MatchState, action: str) -> str:
    """The reason code of a refused action (and a check that nothing changed)."""
    before = state.to_json()
    with pytest.raises(IllegalActionError) as caught:
        state.apply(action)
    assert state.to_json() == before
    return caught.value.reason
