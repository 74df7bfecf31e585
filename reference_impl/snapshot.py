"""The observable state (DESIGN.md "Observable state") in the engine's own values, and as JSON.

A **snapshot** (``MatchState.snapshot``) is a tuple with one item per field of the observation,
in the observation's order, each the engine's own value of that field made immutable: cards as
masks, the auction and the trick as tuples of their pairs, counts and scores as tuples. It costs
a fifth of the JSON value it stands for, which ``observation`` writes (``MatchState.observation``
is that, so the two cannot drift apart).

Two equal snapshots (``==``) are written as the same JSON value to the last type and member
order: every item holds values of one type each (a field that is an int or null never holds a
bool, nor a float; a flag is a bool), save the scores, ints or Fractions, which ``number``
writes alike when they are equal, and the deal result, kept as the bytes marshal writes of it
(which tell 1 from 1.0 and from true, and keep the order of its members).

``read`` goes the other way: the snapshot a JSON state is the observation of, if any. The server
reads each state an expectation holds once, then compares the engine's snapshot with it at every
replay, where it wrote the whole state and compared the bytes (``expected.py``).
"""

from __future__ import annotations

import marshal
from fractions import Fraction
from typing import Any, Callable

from .cards import Card, Mask, codes_of, mask_of
from .errors import MalformedActionError
from .scoring import number

Snapshot = tuple[Any, ...]  # one immutable value per field of FIELDS (see MatchState.snapshot)


def observation(snapshot: Snapshot) -> dict[str, Any]:
    """The observable state a snapshot stands for, as JSON values (fresh lists and objects)."""
    (phase, to_act, dealer, next_dealer, auction, high_bid, declarer, contract, talon_shown, talon, trump, trick,
     trick_number, tricks_won, card_points, (marriages, aces), deal_result, scores, bolts, give_ups, barrel, winner,
     hands) = snapshot  # fmt: skip
    return {
        "phase": phase,
        "to_act": to_act,
        "dealer": dealer,
        "next_dealer": next_dealer,
        "auction": [{"player": p, "action": a} for p, a in auction],
        "high_bid": high_bid,
        "declarer": declarer,
        "contract": contract,
        "talon_shown": talon_shown,
        "talon": None if talon is None else codes_of(talon),
        "trump": trump,
        "trick": [{"player": p, "card": c.code} for p, c in trick],
        "trick_number": trick_number,
        "tricks_won": list(tricks_won),
        "card_points": list(card_points),
        # suit letters in the order declared, then "aces" where four aces were declared
        "marriages": [[*suits, "aces"] if declared else list(suits) for suits, declared in zip(marriages, aces)],
        "deal_result": None if deal_result is None else marshal.loads(deal_result),
        "scores": [number(s) for s in scores],
        "bolts": list(bolts),
        "give_ups": list(give_ups),
        "barrel": [{"on": on, "attempts": attempts, "failed_visits": failed} for on, attempts, failed in barrel],
        "winner": winner,
        "hands": [codes_of(hand) for hand in hands],
    }


class _NoSnapshot(ValueError):
    """A JSON value that is the observation of no snapshot."""


def read(state: Any) -> Snapshot | None:
    """The snapshot whose observation is exactly ``state`` (a JSON value: the same to the last
    type and member order), or None when there is none. Each field is read as the type its
    item holds; ``observation`` of what was read must then give ``state`` back, which settles
    the rest (card order, duplicates, members' names and order)."""
    if not isinstance(state, dict) or tuple(state) != FIELDS:
        return None
    try:
        snapshot = tuple(reader(state[name]) for name, reader in _READERS)
    except (_NoSnapshot, KeyError, TypeError):  # KeyError, TypeError: an entry that is no object with those members
        return None
    return snapshot if marshal.dumps(observation(snapshot), 0) == marshal.dumps(state, 0) else None


def _integer(value: Any) -> int:
    if type(value) is not int:  # noqa: E721 - true is not 1
        raise _NoSnapshot(value)
    return value


def _integer_or_none(value: Any) -> int | None:
    return None if value is None else _integer(value)


def _string(value: Any) -> str:
    if type(value) is not str:  # noqa: E721
        raise _NoSnapshot(value)
    return value


def _string_or_none(value: Any) -> str | None:
    return None if value is None else _string(value)


def _flag(value: Any) -> bool:
    if type(value) is not bool:  # noqa: E721
        raise _NoSnapshot(value)
    return value


def _list(value: Any) -> list[Any]:
    if type(value) is not list:  # noqa: E721
        raise _NoSnapshot(value)
    return value


def _integers(value: Any) -> tuple[int, ...]:
    return tuple(_integer(item) for item in _list(value))


def _card(value: Any) -> Card:
    try:
        return Card.parse(_string(value))
    except MalformedActionError:  # no card's code
        raise _NoSnapshot(value) from None


def _cards(value: Any) -> Mask:
    return mask_of(_card(code) for code in _list(value))


def _cards_or_none(value: Any) -> Mask | None:
    return None if value is None else _cards(value)


def _auction(value: Any) -> tuple[tuple[int, str], ...]:
    return tuple((_integer(entry["player"]), _string(entry["action"])) for entry in _list(value))


def _trick(value: Any) -> tuple[tuple[int, Card], ...]:
    return tuple((_integer(entry["player"]), _card(entry["card"])) for entry in _list(value))


def _marriages(value: Any) -> tuple[tuple[tuple[str, ...], ...], tuple[bool, ...]]:
    seats = [[_string(word) for word in _list(seat)] for seat in _list(value)]
    declared = tuple(bool(seat) and seat[-1] == "aces" for seat in seats)
    return tuple(tuple(seat[:-1] if aces else seat) for seat, aces in zip(seats, declared)), declared


def _deal_result(value: Any) -> bytes | None:
    if value is not None and type(value) is not dict:  # noqa: E721
        raise _NoSnapshot(value)
    return None if value is None else marshal.dumps(value, 0)


def _score(value: Any) -> int | Fraction:
    if type(value) is float:  # a half, which the engine holds as a Fraction (a whole float is no score it writes)
        if value != value or value in (float("inf"), float("-inf")):
            raise _NoSnapshot(value)
        return Fraction(value)
    return _integer(value)


def _scores(value: Any) -> tuple[int | Fraction, ...]:
    return tuple(_score(item) for item in _list(value))


def _barrel(value: Any) -> tuple[tuple[bool, int, int], ...]:
    return tuple((_flag(seat["on"]), _integer(seat["attempts"]), _integer(seat["failed_visits"])) for seat in _list(value))


def _hands(value: Any) -> tuple[Mask, ...]:
    return tuple(_cards(hand) for hand in _list(value))


_READERS: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    ("phase", _string), ("to_act", _integer_or_none), ("dealer", _integer_or_none), ("next_dealer", _integer_or_none),
    ("auction", _auction), ("high_bid", _integer_or_none), ("declarer", _integer_or_none), ("contract", _integer_or_none),
    ("talon_shown", _flag), ("talon", _cards_or_none), ("trump", _string_or_none), ("trick", _trick),
    ("trick_number", _integer_or_none), ("tricks_won", _integers), ("card_points", _integers), ("marriages", _marriages),
    ("deal_result", _deal_result), ("scores", _scores), ("bolts", _integers), ("give_ups", _integers), ("barrel", _barrel),
    ("winner", _integer_or_none), ("hands", _hands),
)  # fmt: skip
FIELDS = tuple(name for name, _ in _READERS)  # the observation's fields in its order, a snapshot's items
