"""Cards of the 24-card pack: codes, ranks, points, sorting, and a seeded deal.

A card code is rank then suit (``AS``, ``10H``, ``QD``, ``9C``), as DESIGN.md fixes it.
Every card is interned: ``Card.parse`` returns one shared instance per code, so cards
compare and hash cheaply in the engine's hot path.
"""

from __future__ import annotations

import random
from typing import Iterable

from .errors import MalformedActionError

SUITS: tuple[str, ...] = ("S", "C", "D", "H")
RANKS: tuple[str, ...] = ("A", "10", "K", "Q", "J", "9")
RANK_POINTS: dict[str, int] = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}


class Card:
    """One card: rank, suit, card points and a strength inside its suit."""

    __slots__ = ("rank", "suit", "points", "strength", "code", "sort_key")

    rank: str
    suit: str
    points: int
    strength: int  # higher wins inside a suit: A=5 ... 9=0
    code: str
    sort_key: int  # suit S, C, D, H, then rank A..9

    def __init__(self, rank: str, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        self.points = RANK_POINTS[rank]
        self.strength = len(RANKS) - 1 - RANKS.index(rank)
        self.code = rank + suit
        self.sort_key = SUITS.index(suit) * len(RANKS) + RANKS.index(rank)

    @staticmethod
    def parse(code: str) -> Card:
        """The card of a code; ``unknown_card`` for anything that is not one of the 24."""
        card = _BY_CODE.get(code)
        if card is None:
            raise MalformedActionError("unknown_card", f"unknown card {code!r}: expected rank A, 10, K, Q, J or 9 then suit S, C, D or H")
        return card

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"

    def __lt__(self, other: Card) -> bool:
        return self.sort_key < other.sort_key

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Card.parse, (self.code,))


DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUITS for rank in RANKS)
_BY_CODE: dict[str, Card] = {card.code: card for card in DECK}
PARTNER: dict[Card, Card] = {}
for _suit in SUITS:
    PARTNER[_BY_CODE["K" + _suit]] = _BY_CODE["Q" + _suit]
    PARTNER[_BY_CODE["Q" + _suit]] = _BY_CODE["K" + _suit]


def card(code: str) -> Card:
    """Shorthand for ``Card.parse``."""
    return Card.parse(code)


def cards(codes: Iterable[str] | str) -> list[Card]:
    """Cards from codes, given as a list or a space-separated string."""
    if isinstance(codes, str):
        codes = codes.split()
    return [Card.parse(code) for code in codes]


def sorted_cards(hand: Iterable[Card]) -> list[Card]:
    """Cards in the state's order: suit S, C, D, H, then rank A..9."""
    return sorted(hand, key=_sort_key)


def _sort_key(c: Card) -> int:
    return c.sort_key


def codes(hand: Iterable[Card]) -> list[str]:
    """The codes of cards, in the order given."""
    return [c.code for c in hand]


def card_points(hand: Iterable[Card]) -> int:
    """The sum of the card points."""
    return sum(c.points for c in hand)


def deal_random(seed: int) -> tuple[list[list[Card]], list[Card]]:
    """A seeded shuffle and deal: three hands of 7 and a talon of 3 (not a rule, a helper)."""
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    hands = [sorted_cards(deck[0:7]), sorted_cards(deck[7:14]), sorted_cards(deck[14:21])]
    return hands, sorted_cards(deck[21:24])
