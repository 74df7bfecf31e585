"""Cards of the 24-card pack: codes, ranks, points, hands as bit masks, and a seeded deal.

A card code is rank then suit (``AS``, ``10H``, ``QD``, ``9C``), as DESIGN.md fixes it.
Every card is interned: ``Card.parse`` returns one shared instance per code, so cards
compare and hash cheaply in the engine's hot path. So is every action string of a legal
list (``sys.intern``): a legal set the server was told to expect, its strings interned too,
is compared with the engine's string by string by identity.

A set of cards (a hand, the talon) is a 24-bit mask, one bit per card in the state's
order (suit S, C, D, H, then rank A..9): card ``n`` of that order is bit ``n``, and each
suit is a block of six bits, strongest card lowest. Tables built once here turn a mask
back into cards, codes or action strings, so the engine never builds throw-away lists to
ask "does this hand hold a marriage" or "which cards may follow".
"""

from __future__ import annotations

import functools
import operator
import random
import sys
from typing import Iterable

from spec.vocabulary import CARD_POINTS as CARD_POINTS  # re-exported: the engine and the mutants read them here
from spec.vocabulary import RANKS as RANKS
from spec.vocabulary import SUITS as SUITS

from .errors import MalformedActionError
Mask = int  # a set of cards: bit n is card n of DECK


class Card:
    """One card: rank, suit, card points, its place in the pack and which cards beat it."""

    __slots__ = ("rank", "suit", "points", "strength", "code", "sort_key", "bit", "stronger")

    rank: str
    suit: str
    points: int
    strength: int  # higher wins inside a suit: A=5 ... 9=0
    code: str
    sort_key: int  # suit S, C, D, H, then rank A..9: the card's place in DECK
    bit: Mask  # 1 << sort_key: the card as a one-card mask
    stronger: Mask  # the cards of its suit that beat it (the engine's only ranking)

    def __init__(self, rank: str, suit: str) -> None:
        self.rank = rank
        self.suit = suit
        self.points = CARD_POINTS[rank]
        self.strength = len(RANKS) - 1 - RANKS.index(rank)
        self.code = rank + suit
        self.sort_key = SUITS.index(suit) * len(RANKS) + RANKS.index(rank)
        self.bit = 1 << self.sort_key
        self.stronger = (self.bit - 1) & SUIT_MASK[suit]  # the lower bits of its suit's block

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


SUIT_MASK: dict[str, Mask] = {suit: 0b111111 << (6 * n) for n, suit in enumerate(SUITS)}
DECK: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUITS for rank in RANKS)
_BY_CODE: dict[str, Card] = {card.code: card for card in DECK}
PARTNER: dict[Card, Card] = {}
for _suit in SUITS:
    PARTNER[_BY_CODE["K" + _suit]] = _BY_CODE["Q" + _suit]
    PARTNER[_BY_CODE["Q" + _suit]] = _BY_CODE["K" + _suit]


def _rank_mask(rank: str) -> Mask:
    return sum(c.bit for c in DECK if c.rank == rank)


NINES, JACKS, ACES = _rank_mask("9"), _rank_mask("J"), _rank_mask("A")
MARRIAGE: dict[str, Mask] = {suit: _BY_CODE["K" + suit].bit | _BY_CODE["Q" + suit].bit for suit in SUITS}
KINGS = _rank_mask("K")

# Per suit, for each of the 64 six-bit patterns of its block: the cards in the state's order,
# and the "play C" strings sorted as strings (the order of a legal list).
_BLOCKS: tuple[tuple[tuple[Card, ...], ...], ...] = tuple(
    tuple(tuple(DECK[6 * s + r] for r in range(6) if pattern >> r & 1) for pattern in range(64)) for s in range(4)
)
_CODES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(tuple(tuple(c.code for c in block) for block in suit) for suit in _BLOCKS)
_PLAYS: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(sorted("play " + c.code for c in block)) for block in suit) for suit in _BLOCKS
)


def block_points() -> tuple[tuple[int, ...], ...]:
    """Per half of the pack (suits S and C, suits D and H), the card points of each of the 4,096
    patterns of its twelve bits, from the cards' ``points`` (a mutant that changes those rebuilds
    this table with them)."""
    s, c, d, h = (tuple(sum(card.points for card in block) for block in suit) for suit in _BLOCKS)
    # a half's pattern is its second suit's block above its first's: index high * 64 + low
    return tuple([high + low for high in c for low in s]), tuple([high + low for high in h for low in d])


_POINTS = block_points()


def mask_of(hand: Iterable[Card]) -> Mask:
    """The mask of some cards."""
    mask = 0
    for c in hand:
        mask |= c.bit
    return mask


def cards_of(mask: Mask) -> list[Card]:
    """The cards of a mask, in the state's order."""
    return [*_BLOCKS[0][mask & 63], *_BLOCKS[1][mask >> 6 & 63], *_BLOCKS[2][mask >> 12 & 63], *_BLOCKS[3][mask >> 18 & 63]]


def codes_of(mask: Mask) -> list[str]:
    """The codes of a mask's cards, in the state's order."""
    return [*_CODES[0][mask & 63], *_CODES[1][mask >> 6 & 63], *_CODES[2][mask >> 12 & 63], *_CODES[3][mask >> 18 & 63]]


def _half_plays(half: int) -> tuple[tuple[str, ...], ...]:
    """For one half of the pack (suits S and C, bits 0-11; suits D and H, bits 12-23), the
    "play C" strings of each of the 4,096 patterns of its twelve bits, sorted."""
    held = DECK[12 * half:12 * half + 12]
    in_order = sorted(held, key=lambda c: c.code)  # "play " + code sorts as the codes do
    # by the patterns of the twelve cards taken in that order: each card is added, in turn, to
    # every pattern of the cards before it, so every tuple comes out sorted
    by_order: list[tuple[str, ...]] = [()]
    for c in in_order:
        play = (sys.intern("play " + c.code),)
        by_order += [plays + play for plays in by_order]
    # a pattern of the half's bits re-indexed into that order, one look-up per suit
    first, second = (tuple(sum(1 << in_order.index(c) for c in held[6 * s:6 * s + 6] if pattern >> c.sort_key % 6 & 1)
                           for pattern in range(64)) for s in range(2))
    return tuple([by_order[high | low] for high in second for low in first])  # index high * 64 + low


# Two look-ups instead of four, and two sorted runs to merge instead of up to four.
_HALF_PLAYS = (_half_plays(0), _half_plays(1))


@functools.lru_cache(maxsize=1 << 16)
def play_actions(mask: Mask) -> tuple[str, ...]:
    """``play C`` for every card of the mask, sorted as strings. The same hands and the same
    allowed cards come back deal after deal, hence the cache; but a lead's hand is most often
    new, so a miss is kept cheap (about 40% of the calls in random play)."""
    low, high = _HALF_PLAYS
    plays = [*low[mask & 4095], *high[mask >> 12]]
    plays.sort()  # each half is sorted already: a merge of two runs
    return tuple(plays)


def lead_actions(hand: Mask, marriages: bool, aces: bool) -> tuple[str, ...]:
    """The plays of a hand on lead, sorted: every card, and where a declaration is open then,
    ``play C marriage`` for each half of a marriage held (``marriages``) and ``play C aces``
    for each ace of four held (``aces``)."""
    plays = play_actions(hand)
    declared = declarations(declarable(hand), marriages, aces)
    return tuple(sorted(plays + declared)) if declared else plays


def declarable(hand: Mask) -> Mask:
    """The cards of the marriages and of four aces a hand holds (0: none), the only cards a
    declaration or the auction's marriage rule looks at; at most 32 different masks."""
    couples = hand & (hand >> 1) & KINGS  # the kings whose queen (the next bit of the suit) is held
    aces = hand & ACES
    return couples | couples << 1 | (aces if aces == ACES else 0)


@functools.lru_cache(maxsize=None)
def declarations(held: Mask, marriages: bool, aces: bool) -> tuple[str, ...]:
    """The declaring plays of ``lead_actions`` for the marriages and four aces among the cards
    ``held`` (given as ``declarable`` gives them: at most 32 patterns), each pattern worked out once."""
    declared = []
    if marriages:
        declared = [sys.intern(f"play {c.code} marriage") for pair in MARRIAGE.values() if held & pair == pair for c in cards_of(pair)]
    if aces and held & ACES == ACES:
        declared += [sys.intern(f"play {c.code} aces") for c in cards_of(ACES)]
    return tuple(declared)


# The exchange's gives in the legal list's order without sorting them: a hand re-indexed into
# the order of the codes (one look-up per suit), then for each card held in that order a row of
# its gives to the cards held. No code is the start of another, so "give A B" strings sort as
# the pairs (A, B) of codes do.
_IN_CODE_ORDER: tuple[Card, ...] = tuple(sorted(DECK, key=lambda c: c.code))
_TO_CODE_ORDER: tuple[tuple[Mask, ...], ...] = tuple(
    tuple(sum(1 << _IN_CODE_ORDER.index(c) for c in DECK[6 * s:6 * s + 6] if pattern >> (c.sort_key - 6 * s) & 1) for pattern in range(64))
    for s in range(4)
)
# per block of six cards of the code order and each pattern of it, the places of its cards in that order
_PLACES: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(6 * k + r for r in range(6) if pattern >> r & 1) for pattern in range(64)) for k in range(4)
)
# _GIVES[a][b]: "give A B" for the cards at places a and b of the code order
_GIVES: tuple[tuple[str, ...], ...] = tuple(tuple(sys.intern(f"give {a.code} {b.code}") for b in _IN_CODE_ORDER) for a in _IN_CODE_ORDER)


def give_actions(hand: Mask) -> list[str]:
    """``give A B`` for every ordered pair of two cards of the hand, sorted as strings."""
    order, places = _TO_CODE_ORDER, _PLACES
    coded = order[0][hand & 63] | order[1][hand >> 6 & 63] | order[2][hand >> 12 & 63] | order[3][hand >> 18 & 63]
    held = places[0][coded & 63] + places[1][coded >> 6 & 63] + places[2][coded >> 12 & 63] + places[3][coded >> 18]
    if len(held) < 2:
        return []
    row_of_held = operator.itemgetter(*held)  # a row's gives to the cards held, in code order
    gives: list[str] = []
    for a in held:
        gives += row_of_held(_GIVES[a])
    del gives[::len(held) + 1]  # each card's give to itself: the diagonal of the square of rows
    return gives


def points_of(mask: Mask) -> int:
    """The card points of a mask's cards: one table look-up per half of the pack."""
    low, high = _POINTS
    return low[mask & 4095] + high[mask >> 12]


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
