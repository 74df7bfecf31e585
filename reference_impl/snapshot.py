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
from typing import Any, Callable, TypeVar

from .cards import Card, Mask, codes_of, mask_of
from .errors import MalformedActionError
from .scoring import number

Snapshot = tuple[Any, ...]  # one immutable value per field of FIELDS (see MatchState.snapshot)
T = TypeVar("T")


def observation(snapshot: Snapshot) -> dict[str, Any]:
    """The observable state a snapshot stands for, as JSON values (fresh lists and objects)."""
    return {name: item if write is None else write(item) for (name, write, _read), item in zip(_FIELDS, snapshot)}


def changes(snapshot: Snapshot, before: Snapshot) -> dict[str, Any]:
    """The fields of ``snapshot``'s observation whose items differ from ``before``'s, as JSON
    values: every other field is the same JSON value in both observations."""
    return {name: item if write is None else write(item)
            for (name, write, _read), item, old in zip(_FIELDS, snapshot, before) if item != old}


def _auction_json(auction: tuple[tuple[int, str], ...]) -> list[dict[str, Any]]:
    return [{"player": player, "action": action} for player, action in auction]


def _cards_json(cards: Mask | None) -> list[str] | None:
    return None if cards is None else codes_of(cards)


def _trick_json(trick: tuple[tuple[int, Card], ...]) -> list[dict[str, Any]]:
    return [{"player": player, "card": card.code} for player, card in trick]


def _marriages_json(marriages: tuple[tuple[tuple[str, ...], ...], tuple[bool, ...]]) -> list[list[str]]:
    """Suit letters in the order declared, then "aces" where four aces were declared."""
    suits, aces = marriages
    return [[*declared, "aces"] if with_aces else list(declared) for declared, with_aces in zip(suits, aces)]


def _deal_result_json(result: bytes | None) -> Any:
    return None if result is None else marshal.loads(result)


def _scores_json(scores: tuple[int | Fraction, ...]) -> list[int | float]:
    return [number(score) for score in scores]


def _barrel_json(barrel: tuple[tuple[bool, int, int], ...]) -> list[dict[str, Any]]:
    return [{"on": on, "attempts": attempts, "failed_visits": failed} for on, attempts, failed in barrel]


def _hands_json(hands: tuple[Mask, ...]) -> list[list[str]]:
    return [codes_of(hand) for hand in hands]


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
        snapshot = tuple(read_item(state[name]) for name, _write, read_item in _FIELDS)
    except (_NoSnapshot, KeyError, TypeError):  # KeyError, TypeError: an entry that is no object with those members
        return None
    return snapshot if marshal.dumps(observation(snapshot), 0) == marshal.dumps(state, 0) else None


def _exactly(kind: type[T]) -> Callable[[Any], T]:
    """A reader of a value of exactly that type: a bool is no int, nor an int a float."""
    def read(value: Any) -> T:
        if type(value) is not kind:
            raise _NoSnapshot(value)
        return value
    return read


def _or_none(read: Callable[[Any], T]) -> Callable[[Any], T | None]:
    """A reader that also takes null (a field that may be empty)."""
    return lambda value: None if value is None else read(value)


_integer, _string, _flag, _list = _exactly(int), _exactly(str), _exactly(bool), _exactly(list)
_integer_or_none, _string_or_none = _or_none(_integer), _or_none(_string)


def _integers(value: Any) -> tuple[int, ...]:
    return tuple(_integer(item) for item in _list(value))


def _card(value: Any) -> Card:
    try:
        return Card.parse(_string(value))
    except MalformedActionError:  # no card's code
        raise _NoSnapshot(value) from None


def _cards(value: Any) -> Mask:
    return mask_of(_card(code) for code in _list(value))


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


# Each field of the observation, in its order: its name, how its item is written as JSON (None:
# as it is) and how it is read back (``read``). A snapshot has one item for each.
_FIELDS: tuple[tuple[str, Callable[[Any], Any] | None, Callable[[Any], Any]], ...] = (
    ("phase", None, _string),
    ("to_act", None, _integer_or_none),
    ("dealer", None, _integer_or_none),
    ("next_dealer", None, _integer_or_none),
    ("auction", _auction_json, _auction),
    ("high_bid", None, _integer_or_none),
    ("declarer", None, _integer_or_none),
    ("contract", None, _integer_or_none),
    ("talon_shown", None, _flag),
    ("talon", _cards_json, _or_none(_cards)),
    ("trump", None, _string_or_none),
    ("trick", _trick_json, _trick),
    ("trick_number", None, _integer_or_none),
    ("tricks_won", list, _integers),
    ("card_points", list, _integers),
    ("marriages", _marriages_json, _marriages),
    ("deal_result", _deal_result_json, _deal_result),
    ("scores", _scores_json, _scores),
    ("bolts", list, _integers),
    ("give_ups", list, _integers),
    ("barrel", _barrel_json, _barrel),
    ("winner", None, _integer_or_none),
    ("hands", _hands_json, _hands),
)
FIELDS = tuple(name for name, _write, _read in _FIELDS)  # the observation's fields in its order, a snapshot's items
