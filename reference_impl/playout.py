"""The choice rule of the ``playout`` extension (docs/protocol.md "Extensions").

``thousand fuzz`` plays random deals: each action is picked from the legal set and the state
after the previous one. Asked one action at a time over the protocol, the round trips cost
far more than the game; with ``playout`` the reference plays a whole deal by this rule and
answers every reply at once, and fuzz sends the actions it chose to the implementation under
test. The rule is written out in docs/protocol.md so that any engine could answer the same
request; this module is that text in code, step for step (the draws in the same order).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence, TypeVar

from spec.vocabulary import DECK, RANKS, SUITS, Phase

STRENGTH = {rank: len(RANKS) - 1 - index for index, rank in enumerate(RANKS)}  # a nine 0 up to an ace 5
STYLES = ("any", "low", "high", "long")
DECLARING = {"any": 60, "low": 25, "high": 90, "long": 90}  # percent: how often a style declares what it may
MASK = (1 << 64) - 1

Item = TypeVar("Item")


class Stream:
    """splitmix64: a 64-bit state, one output per draw (a few lines in any language)."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def draw(self, count: int) -> int:
        """A number from 0 to ``count - 1``: the next output modulo ``count``."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return (z ^ (z >> 31)) % count

    def chance(self, percent: int) -> bool:
        return self.draw(100) < percent

    def pick(self, items: Sequence[Item]) -> Item:
        return items[self.draw(len(items))]


def _amount_of(action: str) -> int | None:
    """N of ``bid N`` or ``contract N``; None for any other action."""
    words = action.split()
    if len(words) == 2 and words[0] in ("bid", "contract") and words[1].isdigit():
        return int(words[1])
    return None


def _suit_lengths(hand: Sequence[str]) -> dict[str, int]:
    return {suit: sum(1 for card in hand if card.endswith(suit)) for suit in SUITS}


class Chooser:
    """The actions of one deal: ``styles`` per seat, ``favoured`` the bid and contract amounts
    a rule names (with a step either side), drawn from ``Stream(seed)``."""

    def __init__(self, seed: int, styles: Sequence[str], favoured: Sequence[int]) -> None:
        self.stream = Stream(seed)
        self.styles = tuple(styles)
        self.favoured = frozenset(favoured)

    def choose(self, legal: Sequence[str], state: dict[str, Any]) -> str | None:
        """The next action: now and then one outside the legal set, else a legal one biased to
        what shows a rule (passing, the amounts the rules name, giving up, declaring, cards by
        the seat's style). ``legal`` is sorted by code point; None: no action (the deal stops)."""
        draw = self.stream
        if not legal:
            return None
        if draw.chance(8):
            return self._illegal(legal, state)
        if "give_up" in legal and draw.chance(15):
            return "give_up"
        others = [a for a in legal if a != "give_up"] or list(legal)
        # sorted, a bid or contract comes first when there is one: no other action needs the scan
        amounts = (sorted((n, a) for a in others if (n := _amount_of(a)) is not None)
                   if others[0].startswith(("bid ", "contract ")) else [])
        if amounts:
            if "pass" in others and draw.chance(40):
                return "pass"
            return self._amount([a for _, a in amounts], [n for n, _ in amounts])
        seat, hands = state.get("to_act"), state.get("hands")
        if not (type(seat) is int and 0 <= seat < 3 and isinstance(hands, list) and seat < len(hands)):
            return draw.pick(others)
        hand = [card for card in hands[seat] if isinstance(card, str)]
        style = self.styles[seat]
        gives = [a for a in others if a.startswith("give ")]
        if gives and draw.chance(50):
            length = _suit_lengths(hand)
            return min(gives, key=lambda a: (sorted(length.get(c[-1:], 0) for c in a.split()[1:]), a))
        declarations = [a for a in others if a.endswith((" marriage", " aces"))]
        if declarations and draw.chance(DECLARING.get(style, 60)):
            return draw.pick(declarations)
        plays = [a for a in others if a.startswith("play ") and len(a.split()) == 2]
        if not plays:
            return draw.pick(others)
        trump, trick = state.get("trump"), state.get("trick")
        side = [a for a in plays if not (isinstance(trump, str) and a.endswith(trump))]
        if not trick and trump and side and draw.chance(80):
            plays = side  # a side suit led: voids are trumped, and trumps overtrumped
        elif trump and not side and _led_suit(trick) not in (None, trump):
            return draw.pick(plays)  # trumping a side suit: any trump
        return self._card(style, plays, hand)

    def _amount(self, actions: list[str], amounts: list[int]) -> str:
        """Mostly the least amount or a step or three above it, else one a rule names, the highest, or any."""
        draw, roll = self.stream, self.stream.draw(100)
        if roll < 45:
            return actions[0]
        if roll < 60:
            return draw.pick(actions[1:4] or actions)
        if roll < 80:
            return draw.pick([a for a, n in zip(actions, amounts) if n in self.favoured] or actions[-1:])
        return draw.pick(actions)

    def _card(self, style: str, plays: list[str], hand: list[str]) -> str:
        """``low`` plays its weakest card, ``high`` its strongest, ``long`` its longest suit
        (weakest first); ``any``, and every style a quarter of the time, any card."""
        if style not in ("low", "high", "long") or self.stream.chance(25):
            return self.stream.pick(plays)

        def strength(action: str) -> int:
            return STRENGTH.get(action.split()[1][:-1], 0)

        if style == "long":
            length = _suit_lengths(hand)
            return max(plays, key=lambda a: (length.get(a[-1], 0), -strength(a)))
        return min(plays, key=strength) if style == "low" else max(plays, key=strength)

    def _illegal(self, legal: Sequence[str], state: dict[str, Any]) -> str:
        """An action outside the legal set, most often a near miss of the phase."""
        draw = self.stream
        seat, hands, phase, high_bid = state.get("to_act"), state.get("hands"), state.get("phase"), state.get("high_bid")
        held = ([card for card in hands[seat] if isinstance(card, str)]
                if type(seat) is int and isinstance(hands, list) and 0 <= seat < len(hands) and isinstance(hands[seat], list)
                else [])
        amounts = [n for a in legal if (n := _amount_of(a)) is not None]
        high = high_bid if type(high_bid) is int else 100
        near = [high + d for d in (-5, 0, 5, 10)] + [n + d for n in amounts[-2:] for d in (5, 10, 15)]

        def anything() -> list[str]:
            return ["pass", "give_up", "redeal", f"play {draw.pick(DECK)}", f"bid {draw.pick(near)}", "bid", "play XX", "dance"]

        if draw.chance(80):
            if phase == Phase.AUCTION:
                options = [f"bid {n}" for n in near] + ["pass"]
            elif phase == Phase.CONTRACT:
                options = [f"contract {n}" for n in near] + ["give_up"]
            elif phase == Phase.EXCHANGE:
                options = [f"give {draw.pick(held or list(DECK))} {draw.pick(DECK)}", "give_up"]
            elif phase == Phase.PLAY:
                options = ([f"play {card}" for card in held] + [f"play {card} marriage" for card in held if card[0] in "KQ"]
                           + [f"play {card} aces" for card in held if card.startswith("A")])
            elif phase == Phase.CLAIM:
                options = ["redeal", "no_redeal"]
            else:
                options = []
        else:
            options = anything()
        outside = [option for option in options if option not in legal]
        return draw.pick(outside or [option for option in anything() if option not in legal])  # "dance" is never legal


def _led_suit(trick: Any) -> str | None:
    if isinstance(trick, list) and trick and isinstance(trick[0], dict):
        return str(trick[0].get("card", ""))[-1:] or None
    return None


Step = tuple[int | None, str]  # (the trick a planned action belongs to, or None for any time; the action)


class Plan:
    """A ``playout``'s ``position``: a deal laid out so that one rule bites, with each seat's
    planned actions. Each action is chosen as docs/protocol.md writes it out: the seat's next
    planned action legal now (at its trick); in the auction the planned declarer's least bid
    and least contract (at or above ``least_contract`` when it can), the others' pass, no
    redeal; then a scripted position's lowest card no plan still needs, and a free one's
    action by ``free`` (the choice rule above) among those that keep the plan."""

    def __init__(self, declarer: int, seats: Sequence[Sequence[Step]], scripted: bool, least_contract: int,
                 free: Chooser) -> None:
        self.declarer = declarer
        self.seats = [list(steps) for steps in seats]
        self.scripted = scripted
        self.least_contract = least_contract
        self.free = free

    def choose(self, legal: Sequence[str], state: dict[str, Any]) -> str | None:
        seat = state.get("to_act")
        if not legal or type(seat) is not int or not 0 <= seat < 3:
            return self.free.choose(legal, state)
        planned = self.seats[seat]
        trick = state.get("trick_number")
        for index, (when, action) in enumerate(planned):
            if (when is None or when == trick) and action in legal:
                del planned[index]
                return action
        bid = _auction_action(legal, seat == self.declarer, self.least_contract)
        if bid is not None:
            return bid
        if self.scripted:
            return _lowest_kept_back(legal, [action for _, action in planned])
        # giving up would end the position, and a planned card played early spoils the plan
        kept = _held_for(action for _, action in planned)
        others = [a for a in legal if a != "give_up"]
        return self.free.choose([a for a in others if not kept.intersection(a.split()[1:])] or others or legal, state)


def _auction_action(legal: Sequence[str], declarer: bool, least_contract: int) -> str | None:
    if "no_redeal" in legal:
        return "no_redeal"
    amounts = sorted((n, a) for a in legal if (n := _amount_of(a)) is not None)
    if declarer and amounts:
        if amounts[0][1].startswith("contract"):
            return next((a for n, a in amounts if n >= least_contract), amounts[-1][1])
        return amounts[0][1]
    if "pass" in legal:
        return "pass"
    return amounts[0][1] if amounts else None


def _lowest_kept_back(legal: Sequence[str], planned: Sequence[str]) -> str:
    """The weakest ``play C`` no planned action still needs (else the weakest), the first in
    deck order among equals; ``legal``'s first action when it holds no plain play."""
    plays = [a for a in legal if a.startswith("play ") and len(a.split()) == 2]
    if not plays:
        return legal[0]
    needed = _held_for(planned)
    free = [a for a in plays if a.split()[1] not in needed] or plays
    return min(free, key=lambda a: (STRENGTH[a.split()[1][:-1]], DECK.index(a.split()[1])))


def _held_for(planned: Iterable[str]) -> set[str]:
    """The cards planned plays need kept: each card, and for a marriage its partner too."""
    held: set[str] = set()
    for action in planned:
        if action.startswith("play "):
            words = action.split()
            card = words[1]
            held.add(card)
            if words[-1] == "marriage":
                held.add(("Q" if card[:-1] == "K" else "K") + card[-1])
    return held
