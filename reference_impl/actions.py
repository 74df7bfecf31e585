"""Canonical action strings (DESIGN.md "Action strings") as small frozen values.

``parse_action(text)`` accepts exactly the canonical spelling (single spaces, no player);
anything else is ``malformed_action``, a card code that is not a card is ``unknown_card``.
``str(action)`` gives the canonical string back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Union

from .cards import DECK, Card
from .errors import MalformedActionError


@dataclass(frozen=True, slots=True)
class Bid:
    amount: int

    def __str__(self) -> str:
        return f"bid {self.amount}"


@dataclass(frozen=True, slots=True)
class Pass:
    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Give:
    """The declarer's two cards: the first to the left neighbour, the second to the right."""

    left: Card
    right: Card

    def __str__(self) -> str:
        return f"give {self.left} {self.right}"


@dataclass(frozen=True, slots=True)
class Contract:
    amount: int

    def __str__(self) -> str:
        return f"contract {self.amount}"


@dataclass(frozen=True, slots=True)
class GiveUp:
    def __str__(self) -> str:
        return "give_up"


@dataclass(frozen=True, slots=True)
class Play:
    """A card played; ``declare`` is ``marriage`` or ``aces`` when the lead declares."""

    card: Card
    declare: str | None = None

    def __str__(self) -> str:
        return f"play {self.card}" if self.declare is None else f"play {self.card} {self.declare}"


@dataclass(frozen=True, slots=True)
class Redeal:
    def __str__(self) -> str:
        return "redeal"


@dataclass(frozen=True, slots=True)
class NoRedeal:
    def __str__(self) -> str:
        return "no_redeal"


Action = Union[Bid, Pass, Give, Contract, GiveUp, Play, Redeal, NoRedeal]

_BARE: dict[str, Action] = {"pass": Pass(), "give_up": GiveUp(), "redeal": Redeal(), "no_redeal": NoRedeal()}


def _malformed(text: str, expected: str) -> MalformedActionError:
    return MalformedActionError("malformed_action", f"{text!r} is not a canonical action: {expected}")


def _amount(text: str, word: str) -> int:
    if not word.isdigit() or (len(word) > 1 and word[0] == "0") or not word.isascii():
        raise _malformed(text, "expected a whole number without sign or leading zeros")
    return int(word)


_PARSED: dict[str, Action] = {}
# The actions of the canonical strings parsed so far: every string of a legal list is canonical,
# so an action taken from one is a look-up here once it has been parsed.
CANONICAL: Mapping[str, Action] = _PARSED
# The 552 gives, built with the cards rather than parsed: a deal's give is most often one not seen
# before, and parsing it (two cards, a frozen dataclass) costs about as much as listing all 90.
_PARSED.update([(f"give {left.code} {right.code}", Give(left, right)) for left in DECK for right in DECK if left is not right])


def parse_action(text: object) -> Action:
    """The action of a canonical string, or ``MalformedActionError``."""
    if isinstance(text, str):
        cached = _PARSED.get(text)
        if cached is not None:
            return cached
    action = _parse(text)
    if len(_PARSED) < 20000:  # the canonical strings are few; malformed ones are never cached
        _PARSED[str(text)] = action
    return action


def _parse(text: object) -> Action:
    if not isinstance(text, str):
        raise MalformedActionError("malformed_action", f"an action must be a string, got {type(text).__name__}")
    bare = _BARE.get(text)
    if bare is not None:
        return bare
    words = text.split(" ")
    head = words[0]
    if head == "bid" and len(words) == 2:
        return Bid(_amount(text, words[1]))
    if head == "contract" and len(words) == 2:
        return Contract(_amount(text, words[1]))
    if head == "give" and len(words) == 3:
        return Give(Card.parse(words[1]), Card.parse(words[2]))
    if head == "play" and len(words) in (2, 3):
        declare = words[2] if len(words) == 3 else None
        if declare not in (None, "marriage", "aces"):
            raise _malformed(text, "a play may end only with 'marriage' or 'aces'")
        return Play(Card.parse(words[1]), declare)
    raise _malformed(
        text, "expected 'bid N', 'pass', 'give C C', 'contract N', 'give_up', 'play C', 'play C marriage', 'play C aces', 'redeal' or 'no_redeal'"
    )
