"""The state of a match and of the deal in progress, and the moves that change it.

``MatchState(rules, match=None)`` holds the match (scores, bolts, give-ups, barrel) and
the current deal. ``start_deal``, ``legal_actions``, ``apply``, ``observation``,
``to_json`` / ``from_json`` are the whole interface (in the spirit of OpenSpiel).
Every refusal is checked before anything changes, so a refused action leaves the state
exactly as it was.
"""

from __future__ import annotations

import copy
import functools
import marshal
import operator
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator, Mapping, Sequence, get_args

from spec.vocabulary import Phase, RedealWindow

from . import deal_end
from .actions import CANONICAL, Action, Bid, Contract, Give, GiveUp, Pass, Play, Redeal, parse_action
from .cards import ACES, DECK, JACKS, MARRIAGE, NINES, PARTNER, SUIT_MASK, Card, Mask, codes_of, declarable, give_actions, lead_actions, mask_of, play_actions, points_of
from .errors import DealError, EngineError, IllegalActionError, RefusedActionError
from .rules import AuctionRules, RedealRule, Rules
from .scoring import Number, whole
from .snapshot import Snapshot, observation

Event = dict[str, Any]
PLAYERS = (0, 1, 2)


@dataclass
class BarrelSeat:
    """One player's barrel record: on it or not, attempts used, failed visits."""

    on: bool = False
    attempts: int = 0
    failed_visits: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"on": self.on, "attempts": self.attempts, "failed_visits": self.failed_visits}


def to_fraction(value: Any, where: str) -> Number:
    """A JSON number (or a "p/q" string) as an exact number: an int, or a Fraction for a half."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise EngineError(f"{where}: expected a number, got {value!r}")
    try:
        return whole(Fraction(str(value)) if isinstance(value, float) else Fraction(value))
    except (ValueError, ZeroDivisionError) as exc:
        raise EngineError(f"{where}: expected a number, got {value!r}") from exc


def illegal(reason: str, message: str) -> IllegalActionError:
    return IllegalActionError(reason, message)


# the reasons ``_declare_refusals`` gives (a declaration's own, before the card's in the trick)
DECLARATION_REASONS = frozenset({"marriage_declaration_automatic", "marriage_not_held", "aces_not_held",
                                 "marriage_not_on_lead", "marriage_too_late", "marriage_on_first_trick"})


def _some(refusal: IllegalActionError | None) -> tuple[IllegalActionError, ...]:
    return () if refusal is None else (refusal,)


def _wrong_phase(action: object, wanted: Phase, phase: Phase) -> IllegalActionError:
    return illegal("wrong_phase", f"'{action}' is an action of the {wanted} phase, not of the {phase} phase")


class MatchState:
    """A match under one profile's rules, with the deal in progress."""

    # Fixed fields: with more than 30 attributes a plain instance keeps them in a full dict,
    # and CPython 3.11 then cannot specialise ``self.method()`` calls (each one looked up in
    # the instance dict and the class); slots keep every attribute and method access direct.
    __slots__ = (
        # what the rules say once (see __init__)
        "rules", "_window_rules", "_automatic_marriages", "_declaring", "_declaring_tricks", "_trick_bonuses_scored",
        "_give_up_phases", "_window_before_contract", "_worths", "_bids", "_contracts",
        # the match
        "scores", "bolts", "give_ups", "barrel", "winner", "phase",
        # the deal in progress (see _clear_deal)
        "dealer", "next_dealer", "hands", "talon", "talon_shown", "auction", "passed", "high_bid", "high_bidder", "to_act",
        "declarer", "contract", "auction_hand", "talon_hand", "claim_window", "claim_queue", "trump", "pending_trump", "trick",
        "trick_number", "tricks_won", "card_points", "marriages", "aces", "bonus_points", "nines_holder", "deal_result",
        "start_scores", "_legal",
    )  # fmt: skip

    def __init__(self, rules: Rules, match: Mapping[str, Any] | None = None) -> None:
        self.rules = rules
        # each window's automatic redeal rules and claims, in the profile's order: asked at every deal
        self._window_rules = {
            window: (tuple(r for r in rules.redeals if r.when == window and r.by == "automatic"),
                     [r for r in rules.redeals if r.when == window and r.by == "claim"])
            for window in get_args(RedealWindow)
        }  # fmt: skip
        m = rules.marriages
        self._automatic_marriages = m.declaration == "automatic"  # asked at every lead
        self._declaring = (m.declaration == "optional", m.four_aces is not None)  # lead_actions' declarations
        # the tricks on whose lead a marriage may be declared (marriages.first_trick, last_trick)
        self._declaring_tricks = frozenset(
            n for n in range(1, 9) if (n != 1 or m.first_trick) and (m.last_trick is None or n <= m.last_trick)
        )
        # marriages.half_capture_bonus or play.last_trick_bonus: points beside the cards, asked at every trick
        self._trick_bonuses_scored = m.half_capture_bonus is not None or rules.play.last_trick_bonus is not None
        self._give_up_phases = _GIVE_UP_PHASES.get(rules.giving_up.moment, (Phase.EXCHANGE, Phase.CONTRACT))
        # redeals.after_exchange_window: does the after_exchange window open before the contract?
        # Without a contract step (talon.contract_step false) the contract is fixed as the cards
        # are given, so the window always follows it. Asked at the exchange, contract and window.
        self._window_before_contract = rules.redeal_timing.after_exchange_window == "before_contract" and rules.talon.contract_step
        self._worths: dict[Mask, tuple[bool, int]] = {}  # _marriage_worth by the marriages and aces held
        self._bids: dict[tuple[int | None, bool, int, tuple[bool, int]], tuple[str, ...]] = {}  # see _legal_auction
        self._contracts: dict[tuple[int, int], tuple[str, ...]] = {}  # see _legal_contract
        self.scores: list[Number] = [0, 0, 0]
        self.bolts = [0, 0, 0]
        self.give_ups = [0, 0, 0]
        self.barrel = [BarrelSeat(), BarrelSeat(), BarrelSeat()]
        self.winner: int | None = None
        if match:
            self._load_match(match)
        self.phase = Phase.DEAL_OVER if self.winner is None else Phase.MATCH_OVER
        self._clear_deal(dealer=None)

    # ------------------------------------------------------------------ set-up

    def _load_match(self, match: Mapping[str, Any]) -> None:
        """Initial match state from the protocol/transcript form (defaults: all zero)."""
        if type(match) is not dict and not isinstance(match, Mapping):  # a dict told without typing's slow check
            raise EngineError(f"match state: expected a mapping, got {match!r}")
        # What a runner sends (all zero, or a case's match) passes without a Fraction built or a
        # message written before it is needed: half of the reference's set-up of a match else.
        if "scores" in match:
            self.scores = [v if type(v) is int else to_fraction(v, f"match.scores[{i}]")  # to_fraction(n) is n
                           for i, v in enumerate(_three(match["scores"], "match.scores"))]
        if "bolts" in match:
            self.bolts = _counts(match["bolts"], "match.bolts")
        if "give_ups" in match:
            self.give_ups = _counts(match["give_ups"], "match.give_ups")
        if "barrel" in match:
            self.barrel = [_barrel_seat(v, i) for i, v in enumerate(_three(match["barrel"], "match.barrel"))]
        if match.get("winner") is not None:
            self.winner = int(match["winner"])

    def _clear_deal(self, dealer: int | None) -> None:
        self.dealer = dealer
        self.next_dealer: int | None = None
        self.hands: list[Mask] = [0, 0, 0]
        self.talon: Mask = 0
        self.talon_shown = False
        self.auction: list[tuple[int, str]] = []
        self.passed = [False, False, False]
        self.high_bid: int | None = None
        self.high_bidder: int | None = None
        self.to_act: int | None = None
        self.declarer: int | None = None
        self.contract: int | None = None
        self.auction_hand: Mask = 0  # the declarer's hand as the auction ended
        self.talon_hand: Mask = 0  # the same with the talon joined
        self.claim_window: str | None = None
        self.claim_queue: list[int] = []
        self.trump: str | None = None
        self.pending_trump: str | None = None
        self.trick: list[tuple[int, Card]] = []
        self.trick_number: int | None = None
        self.tricks_won = [0, 0, 0]
        self.card_points = [0, 0, 0]
        self.marriages: list[list[str]] = [[], [], []]
        self.aces = [0, 0, 0]
        self.bonus_points = [0, 0, 0]  # half-marriage captures and the last trick
        self.nines_holder: int | None = None  # dealt all four nines (redeals.four_nines_bonus)
        self.deal_result: dict[str, Any] | None = None
        self.start_scores = list(self.scores)
        self._legal: tuple[str, ...] | None = None  # the position's legal actions, once generated

    def start_deal(self, dealer: int, hands: Sequence[Sequence[Card | str]], talon: Sequence[Card | str]) -> list[Event]:
        """Deal the given cards; returns the events of any window that opens at once."""
        if self.winner is not None or self.phase == Phase.MATCH_OVER:
            raise EngineError("the match is over: no further deal")
        if self.phase != Phase.DEAL_OVER:
            raise EngineError(f"a deal is in progress (phase {self.phase}): finish it before dealing again")
        if isinstance(dealer, bool) or dealer not in PLAYERS:
            raise DealError(f"dealer: expected a seat 0, 1 or 2, got {dealer!r}")
        dealt_hands, dealt_talon = _parse_deal(hands, talon)
        self._clear_deal(dealer)
        self.hands = dealt_hands
        self.talon = dealt_talon
        for player in PLAYERS:  # who was dealt all four nines (redeals.four_nines_bonus), if anyone
            if dealt_hands[player] & NINES == NINES:
                self.nines_holder = player
        self.phase = Phase.AUCTION
        events: list[Event] = []
        self._open_window("before_bidding", events)
        return events

    # ----------------------------------------------------------- the interface

    @property
    def opener(self) -> int:
        assert self.dealer is not None
        return (self.dealer + 1) % 3

    def legal_actions(self) -> list[str]:
        """Every legal action string for the player to act, sorted. A position's actions are
        generated once and kept until the next action changes it (``apply`` checks an action
        against them). The plays, three positions in four, are worked out here without a call
        more: a follower's from the allowed cards, a lead's with its declarations."""
        legal = self._legal
        if legal is None:
            if self.phase != Phase.PLAY:
                legal = self._generate()
            else:
                player = self.to_act
                assert player is not None
                hand = self.hands[player]
                if self.trick:
                    legal = play_actions(self._allowed_cards(hand))
                elif self.trick_number not in self._declaring_tricks or not declarable(hand):  # _can_declare
                    legal = play_actions(hand)  # nothing to declare, as at most leads
                else:
                    marriages, aces = self._declaring
                    legal = lead_actions(hand, marriages, aces)
            self._legal = legal
        return [*legal]  # a fresh list for the caller (a list display: a call of list() costs more)

    def _generate(self) -> tuple[str, ...]:
        """The legal actions of a position outside the play phase (``legal_actions`` lists the
        plays itself), sorted, so that ``apply`` needs no other check for an action listed here."""
        phase = self.phase
        if phase == Phase.AUCTION:
            return self._legal_auction()
        if phase == Phase.CLAIM:
            return _CLAIM_ACTIONS
        if phase == Phase.EXCHANGE:
            return tuple(self._legal_exchange())
        if phase == Phase.CONTRACT:
            return self._legal_contract()
        return ()

    def apply(self, action: str) -> list[Event]:
        """Apply the action of the player to act; refuse it (state unchanged) if it is not legal."""
        legal = self._legal
        if legal is None or action not in legal:
            parsed = self._checked(action)
        else:  # a listed action is legal, nothing to check, and canonical: parsed once, then looked up
            # (by index: CPython 3.11 compiles CANONICAL.get(...) on an imported name as an attribute
            # load, a bound method built at every call)
            try:
                parsed = CANONICAL[action]
            except KeyError:  # listed, but not parsed before
                parsed = parse_action(action)
        self._legal = None
        events: list[Event] = []
        if isinstance(parsed, Play):
            self._play(parsed, events)
        elif isinstance(parsed, (Bid, Pass)):
            self._bid(parsed, events)
        elif isinstance(parsed, Give):
            self._give(parsed, events)
        elif isinstance(parsed, Contract):
            self._fix_contract(parsed.amount, events)
        elif isinstance(parsed, GiveUp):
            self._give_up(events)
        else:
            self._claim(isinstance(parsed, Redeal), events)
        return events

    def _checked(self, action: str) -> Action:
        """The parsed action, or the refusal that names why it is not legal now."""
        phase = self.phase
        try:
            parsed = parse_action(action)
            refusal = self._refusal(parsed, phase)
            if refusal is not None:
                # every other reason that applies too (DESIGN.md "Reason codes"): any one is right
                refusal.also = tuple(dict.fromkeys(r.reason for r in self._refusals(parsed, phase)
                                                   if r.reason != refusal.reason))
                raise refusal
        except RefusedActionError as exc:
            raise exc.locate(action if isinstance(action, str) else repr(action), self._position(phase)) from None
        return parsed

    def _refusal(self, parsed: Action, phase: Phase) -> IllegalActionError | None:
        """Why the rules forbid this action now (None: they do not): the first reason of
        ``_refusals``, through the one-reason checks of each phase (what the mutants wrap)."""
        if phase == Phase.MATCH_OVER or isinstance(parsed, Redeal) or (
                phase != {Play: Phase.PLAY, Give: Phase.EXCHANGE, Contract: Phase.CONTRACT}.get(type(parsed), phase)):
            return next(self._refusals(parsed, phase), None)
        player = self.to_act
        if isinstance(parsed, Play):
            assert player is not None
            return self._play_refusal(player, parsed)
        if isinstance(parsed, (Bid, Pass)):
            if phase != Phase.AUCTION:
                return next(self._refusals(parsed, phase), None)
            assert player is not None
            return self._pass_refusal(player) if isinstance(parsed, Pass) else self._bid_refusal(player, parsed.amount)
        if isinstance(parsed, Give):
            return self._give_refusal(parsed)
        if isinstance(parsed, Contract):
            return self._contract_refusal(parsed.amount)
        if isinstance(parsed, GiveUp) and phase in (Phase.EXCHANGE, Phase.CONTRACT):
            return self._give_up_refusal()
        return next(self._refusals(parsed, phase), None)

    def _refusals(self, parsed: Action, phase: Phase) -> Iterator[IllegalActionError]:
        """Why the rules forbid this action now (nothing: they do not), checked before anything
        changes: every reason that applies, the first in the order the engine checks them. A
        reason whose precedence the rules fix (DESIGN.md "Reason codes") comes alone."""
        if phase == Phase.MATCH_OVER:
            yield illegal("match_over", "the match is over")
            return
        player = self.to_act
        if isinstance(parsed, Play):
            if phase != Phase.PLAY:
                yield _wrong_phase(parsed, Phase.PLAY, phase)
                return
            assert player is not None
            yield from self._play_refusals(player, parsed)
        elif isinstance(parsed, (Bid, Pass)):
            if phase != Phase.AUCTION:
                yield _wrong_phase(parsed, Phase.AUCTION, phase)
                return
            assert player is not None
            if isinstance(parsed, Pass):
                yield from _some(self._pass_refusal(player))
            else:
                yield from self._bid_refusals(player, parsed.amount)
        elif isinstance(parsed, Give):
            yield from (_wrong_phase(parsed, Phase.EXCHANGE, phase),) if phase != Phase.EXCHANGE else self._give_refusals(parsed)
        elif isinstance(parsed, Contract):
            yield from (_wrong_phase(parsed, Phase.CONTRACT, phase),) if phase != Phase.CONTRACT else self._contract_refusals(parsed.amount)
        elif isinstance(parsed, GiveUp):
            if phase not in (Phase.EXCHANGE, Phase.CONTRACT):
                yield illegal("wrong_phase", f"'give_up' is an action of the exchange or contract phase, not of the {phase} phase")
                return
            yield from self._give_up_refusals()
        elif phase != Phase.CLAIM:
            yield illegal("redeal_not_allowed", "no redeal claim window is open")

    def _position(self, phase: Phase) -> str:
        if phase == Phase.PLAY and self.trick_number is not None:
            return f"play, trick {self.trick_number}, seat {self.to_act} to act"
        if self.to_act is not None:
            return f"{phase}, seat {self.to_act} to act"
        return str(phase)


    def observation(self) -> dict[str, Any]:
        """The observable state of DESIGN.md, as JSON values: its snapshot written out."""
        return observation(self.snapshot())

    def snapshot(self) -> Snapshot:
        """The observable state as the engine holds it, one immutable item per field
        (``reference_impl.snapshot``): equal snapshots are the same observation. The three
        seats' marriages, aces and barrel records are taken one by one: a map or a list built
        over them cost two thirds of a snapshot, which the reference takes at every step. The
        phase is its plain string, the type JSON and ``marshal`` hold."""
        marriages, aces, barrel = self.marriages, self.aces, self.barrel
        one, two, three = barrel
        return (
            str(self.phase), self.to_act, self.dealer, self.next_dealer, tuple(self.auction), self.high_bid, self.declarer,
            self.contract, self.talon_shown, self.talon if self.talon_shown else None, self.trump, tuple(self.trick),
            self.trick_number, tuple(self.tricks_won), tuple(self.card_points),
            ((tuple(marriages[0]), tuple(marriages[1]), tuple(marriages[2])),  # suits declared,
             (bool(aces[0]), bool(aces[1]), bool(aces[2]))),  # four aces declared
            None if self.deal_result is None else marshal.dumps(self.deal_result, 0),
            tuple(self.scores), tuple(self.bolts), tuple(self.give_ups),
            ((one.on, one.attempts, one.failed_visits), (two.on, two.attempts, two.failed_visits),
             (three.on, three.attempts, three.failed_visits)), self.winner, tuple(self.hands),
        )  # fmt: skip

    # ------------------------------------------------------------ redeal windows

    def _window_order(self, window: str) -> tuple[int, ...]:
        if window == "before_bidding":
            return _SEATS_FROM[self.opener]
        assert self.declarer is not None
        if window == "before_exchange":
            return (self.declarer,)
        return _SEATS_FROM[self.declarer]

    def _qualifies(self, player: int | None, rule: RedealRule) -> bool:
        """Does the rule's condition hold (for ``player``'s hand, or the talon for the declarer)?"""
        condition = rule.condition
        if condition in ("talon_under_points", "two_nines_in_talon"):
            if player is not None and player != self.declarer:
                return False
            if condition == "talon_under_points":
                return points_of(self.talon) < (rule.points or 0)
            return (self.talon & NINES).bit_count() >= 2
        if player is None:
            return False
        hand = self.hands[player]
        if condition == "four_nines":
            return hand & NINES == NINES
        if condition == "three_nines":
            return (hand & NINES).bit_count() >= 3
        if condition == "four_jacks":
            return hand & JACKS == JACKS
        return points_of(hand) < (rule.points or 0)  # hand_under_points

    def _open_window(self, window: str, events: list[Event]) -> None:
        """Open a redeal window (ruling 1): automatic rules end the deal, claims pause it."""
        automatic, claims = self._window_rules[window]
        if not automatic and not claims:
            self._after_window(window, events)
            return
        order = self._window_order(window)
        for rule in automatic:
            if rule.condition in ("talon_under_points", "two_nines_in_talon") and window == "before_bidding":
                if self._qualifies(None, rule):
                    self._end_with_redeal(rule.condition, None, events)
                    return
            for player in order:
                if self._qualifies(player, rule):
                    self._end_with_redeal(rule.condition, player, events)
                    return
        queue = []  # the seats that may claim, in turn
        for player in order:
            for rule in claims:
                if self._qualifies(player, rule):
                    queue.append(player)
                    break
        if queue:
            self.phase = Phase.CLAIM
            self.claim_window = window
            self.claim_queue = queue
            self.to_act = queue[0]
            return
        self._after_window(window, events)

    def _after_window(self, window: str, events: list[Event]) -> None:
        self.claim_window = None
        self.claim_queue = []
        if window == "before_bidding":
            self.phase = Phase.AUCTION
            self.to_act = self.opener
        elif window == "before_exchange":
            self.phase = Phase.EXCHANGE
            self.to_act = self.declarer
        elif self._window_before_contract:
            self._to_contract()
        else:
            self._start_play()

    def _to_contract(self) -> None:
        self.phase = Phase.CONTRACT
        self.to_act = self.declarer

    def _start_play(self) -> None:
        self.phase = Phase.PLAY
        self.trick_number = 1
        self.to_act = self.declarer  # play.first_lead: declarer

    def _claim(self, redeal: bool, events: list[Event]) -> None:
        player = self.to_act
        window = self.claim_window
        assert player is not None and window is not None
        if redeal:
            rule = next(r for r in self.rules.redeals if r.when == window and r.by == "claim" and self._qualifies(player, r))
            self._end_with_redeal(rule.condition, player, events)
            return
        self.claim_queue = self.claim_queue[1:]
        if self.claim_queue:
            self.to_act = self.claim_queue[0]
        else:
            self._after_window(window, events)

    def _end_with_redeal(self, reason: str, player: int | None, events: list[Event]) -> None:
        """Ruling 1: nothing is scored, no attempt is used; the dealer per ``dealer_after_redeal``."""
        events.append({"type": "redeal", "reason": reason, "player": player})
        self.deal_result = {"kind": "redeal", "made": None, "points": [0, 0, 0], "deltas": [0, 0, 0]}
        assert self.dealer is not None
        same = self.rules.deal.dealer_after_redeal == "same"
        self.next_dealer = self.dealer if same else (self.dealer + 1) % 3
        self.phase = Phase.DEAL_OVER
        self.to_act = None
        self.claim_window = None
        self.claim_queue = []

    # ------------------------------------------------------------------ auction

    def _on_grid(self, amount: int) -> bool:
        return on_grid(self.rules.auction, amount)

    def _next_on_grid(self, amount: int) -> int:
        """The least legal amount above ``amount``."""
        return next_on_grid(self.rules.auction, amount)

    def _marriage_worth(self, hand: Mask) -> tuple[bool, int]:
        """Whether the hand holds a marriage (or four aces, where scored) and their total value.
        Only the marriages and four aces held count, so each of their few patterns is worked out once."""
        held = declarable(hand)
        worth = self._worths.get(held)
        if worth is None:
            worth = self._worths[held] = self._count_worth(held)
        return worth

    def _count_worth(self, hand: Mask) -> tuple[bool, int]:
        values = self.rules.marriages.values
        found = False
        total = 0
        for suit, value in values.items():
            if hand & MARRIAGE[suit] == MARRIAGE[suit]:
                found = True
                total += value
        aces = self.rules.marriages.four_aces
        if aces is not None and hand & ACES == ACES:
            found = True
            total += aces
        return found, total

    def _limit_refusals(self, amount: int, hand: Mask, needs: str, above: str) -> Iterator[IllegalActionError]:
        """The marriage rule, the ceiling and ``max_bid`` on a hand (for bids and raises)."""
        a = self.rules.auction
        if amount > a.max_bid:
            yield illegal(above, f"{amount} is above the maximum {a.max_bid}")
        if a.marriage_needed_above is None or amount <= a.marriage_needed_above:
            return
        held, worth = self._marriage_worth(hand)
        if not held:
            yield illegal(needs, f"{amount} is above {a.marriage_needed_above} and needs a marriage in the hand")
        elif a.ceiling == "marriages_held" and amount > a.marriage_needed_above + worth:
            yield illegal(above, f"{amount} is above the ceiling {a.marriage_needed_above + worth} (marriages held)")

    def _bid_refusal(self, player: int, amount: int) -> IllegalActionError | None:
        return next(self._bid_refusals(player, amount), None)

    def _bid_refusals(self, player: int, amount: int) -> Iterator[IllegalActionError]:
        a = self.rules.auction
        first = self.high_bid is None
        if first and a.opening == "forced" and amount != a.opening_bid:
            yield illegal("opening_bid_fixed", f"the opener's first bid is exactly {a.opening_bid}")
        if amount < a.opening_bid or (self.high_bid is not None and amount <= self.high_bid):
            floor = a.opening_bid if self.high_bid is None else self.high_bid
            yield illegal("bid_too_low", f"{amount} does not exceed the high bid {floor}" if not first else f"{amount} is below the opening bid {floor}")
        if not self._on_grid(amount):
            yield illegal("bid_off_step", f"{amount} is not a legal amount (steps of {a.bid_step})")
        if a.max_bid < amount:
            yield illegal("bid_above_ceiling", f"{amount} is above the maximum {a.max_bid}")
        if a.raise_ == "one_step" and self.high_bid is not None and amount > self._next_on_grid(self.high_bid):
            yield illegal("bid_jump_not_allowed", f"the only raise is to {self._next_on_grid(self.high_bid)}")
        if a.stop_at is not None and amount > a.stop_at and (self.high_bid is None or self.high_bid < a.stop_at):
            yield illegal("bid_past_stop", f"the auction must stand at {a.stop_at} before anyone bids above it")
        if a.pre_talon_max is not None and amount > a.pre_talon_max:
            yield illegal("bid_above_pre_talon_max", f"no bid above {a.pre_talon_max} before the talon is seen (the contract may go higher)")
        minimum = self._barrel_minimum(player)
        if minimum is not None and amount < minimum:
            yield illegal("bid_below_barrel_minimum", f"a player on the barrel bids at least {minimum}")
        yield from self._limit_refusals(amount, self.hands[player], "bid_needs_marriage", "bid_above_ceiling")

    def _barrel_minimum(self, player: int) -> int | None:
        """``auction.barrel_min_bid`` for a player on the barrel; a forced opening bid stays exempt
        (the opener's first bid is then fixed, so a minimum above it would leave no action)."""
        a = self.rules.auction
        if a.barrel_min_bid is None or not self.rules.barrel.enabled or not self.barrel[player].on:
            return None
        if self.high_bid is None and a.opening == "forced":
            return None
        return a.barrel_min_bid

    def _may_pass(self, player: int) -> bool:
        """A pass is always legal once someone has bid; before that only where the opener may pass,
        and never for the last player left when ``dealer_must_bid`` forces the dealer's bid; but
        always for a player whose least bid the rules forbid (ruling 14: a player with no action
        would halt the deal). Every limit is monotone: with the least bid forbidden, all are."""
        a = self.rules.auction
        if self.high_bid is not None:
            return True
        if a.opener_may_pass and not (a.dealer_must_bid and sum(self.passed) == 2):
            return True
        return self._bid_refusal(player, self._least_bid(player)) is not None

    def _least_bid(self, player: int) -> int:
        """The least amount the player may bid now: above the high bid, at least the barrel minimum."""
        a = self.rules.auction
        first = a.opening_bid if self.high_bid is None else self._next_on_grid(self.high_bid)
        minimum = self._barrel_minimum(player)
        while minimum is not None and first < minimum:
            first = self._next_on_grid(first)
        return first

    def _limit_top(self, hand: Mask) -> int:
        """The highest amount the marriage rule, the ceiling and ``max_bid`` allow on a hand."""
        a = self.rules.auction
        top = a.max_bid
        if a.marriage_needed_above is not None:
            held, worth = self._marriage_worth(hand)
            if not held:
                top = min(top, a.marriage_needed_above)
            elif a.ceiling == "marriages_held":
                top = min(top, a.marriage_needed_above + worth)
        return top

    def _legal_auction(self) -> tuple[str, ...]:
        """The bids then ``pass``, sorted as strings. Under one profile they follow from the high
        bid, whether the player is on the barrel (its minimum bid), how many have passed (whether
        a pass is allowed) and the marriages held, and the same few of those come back auction
        after auction: each is worked out once."""
        player = self.to_act
        assert player is not None
        key = (self.high_bid, self.barrel[player].on, sum(self.passed), self._marriage_worth(self.hands[player]))
        legal = self._bids.get(key)
        if legal is None:
            legal = self._bids[key] = self._legal_bids(player)
        return legal

    def _legal_bids(self, player: int) -> tuple[str, ...]:
        a = self.rules.auction
        first = self._least_bid(player)
        passing = _PASS if self._may_pass(player) else ()
        if self._bid_refusal(player, first) is not None:
            return passing  # every limit is monotone: nothing higher is legal either
        # one step at a time raises a high bid; the first bid follows the opening (ruling 15)
        if self.high_bid is None and a.opening == "forced" or self.high_bid is not None and a.raise_ == "one_step":
            return amount_actions(a, "bid", first, first) + passing
        top = self._limit_top(self.hands[player])
        if a.stop_at is not None and (self.high_bid is None or self.high_bid < a.stop_at):
            top = min(top, a.stop_at)
        if a.pre_talon_max is not None:
            top = min(top, a.pre_talon_max)
        return amount_actions(a, "bid", first, top) + passing

    def _pass_refusal(self, player: int) -> IllegalActionError | None:
        if self._may_pass(player):
            return None
        if self.rules.auction.opener_may_pass:
            return illegal("dealer_must_bid", "both other players passed: the dealer must bid")
        return illegal("opener_must_bid", "the opener may not pass first")

    def _bid(self, action: Bid | Pass, events: list[Event]) -> None:
        player = self.to_act
        assert player is not None
        if isinstance(action, Pass):
            self.passed[player] = True
            self.auction.append((player, "pass"))
        else:
            self.high_bid = action.amount
            self.high_bidder = player
            self.auction.append((player, f"bid {action.amount}"))  # str(action), without a call of Bid.__str__
            if self.rules.auction.reentry:
                # a new bid reopens the auction to everyone who passed before it
                self.passed = [False, False, False]
        if isinstance(action, Bid) and action.amount == self.rules.auction.max_bid and self.rules.auction.ends_at_max_bid:
            self._win_auction(events)  # nobody can outbid the maximum: the others are not asked to pass
            return
        passes = sum(self.passed)
        if passes == 3:
            self._all_passed(events)
            return
        if passes == 2 and self.high_bid is not None:
            self._win_auction(events)
            return
        nxt = (player + 1) % 3
        while self.passed[nxt]:
            nxt = (nxt + 1) % 3
        self.to_act = nxt

    def _all_passed(self, events: list[Event]) -> None:
        """Nobody bid (possible only where the opener may pass): ``auction.all_pass`` decides."""
        if self.rules.auction.all_pass == "redeal":
            self._end_with_redeal("all_passed", None, events)
            return
        self.high_bid = self.rules.auction.opening_bid
        self.high_bidder = self.opener
        self._win_auction(events)

    def _win_auction(self, events: list[Event]) -> None:
        """Ruling 2: the last bidder is declarer; the talon joins the declarer's hand."""
        declarer = self.high_bidder
        bid = self.high_bid
        assert declarer is not None and bid is not None
        self.declarer = declarer
        events.append({"type": "auction_won", "player": declarer, "bid": bid})
        t = self.rules.talon
        if t.shown == "always" or (t.shown == "from_bid" and bid >= t.shown_from_bid):
            self.talon_shown = True
            events.append({"type": "talon_revealed", "cards": codes_of(self.talon)})
        self.auction_hand = self.hands[declarer]
        self.hands[declarer] |= self.talon
        self.talon_hand = self.hands[declarer]
        self._open_window("before_exchange", events)

    # ------------------------------------------------------- exchange, contract

    def _give_up_refusal(self) -> IllegalActionError | None:
        return next(self._give_up_refusals(), None)

    def _give_up_refusals(self) -> Iterator[IllegalActionError]:
        """A give-up the rules or the moment do not allow comes alone: the barrel and the limit
        are asked only of a give-up that could be made now."""
        g = self.rules.giving_up
        declarer = self.declarer
        assert declarer is not None
        if not g.allowed:
            yield illegal("give_up_not_allowed", "giving up is not allowed under these rules")
            return
        wanted = self._give_up_phases
        if self.phase not in wanted:
            yield illegal("give_up_not_allowed", f"giving up is allowed only in the {' or '.join(wanted)} phase")
            return
        if self.rules.barrel.enabled and self.barrel[declarer].on and not g.on_barrel:
            yield illegal("give_up_on_barrel", "a player on the barrel may not give up")
        if g.limit is not None and self.give_ups[declarer] >= g.limit:
            yield illegal("give_up_limit_reached", f"at most {g.limit} give-ups per player per match")

    def _offers_give_up(self) -> bool:
        """Is ``give_up`` a legal action now? The phase is asked first: outside the phases of
        ``giving_up.moment`` no refusal needs building to learn that it is not."""
        return self.phase in self._give_up_phases and self._give_up_refusal() is None

    def _legal_exchange(self) -> list[str]:
        assert self.declarer is not None
        actions = give_actions(self.hands[self.declarer])
        if self._offers_give_up():
            actions.append("give_up")
        return actions

    def _give_refusal(self, action: Give) -> IllegalActionError | None:
        return next(self._give_refusals(action), None)

    def _give_refusals(self, action: Give) -> Iterator[IllegalActionError]:
        assert self.declarer is not None
        hand = self.hands[self.declarer]
        for c in (action.left, action.right):
            if not hand & c.bit:
                yield illegal("card_not_held", f"the declarer does not hold {c}")
        if action.left is action.right:
            yield illegal("same_card_twice", f"{action.left} cannot be given twice")

    def _give(self, action: Give, events: list[Event]) -> None:
        declarer = self.declarer
        assert declarer is not None
        hand = self.hands[declarer]
        left, right = (declarer + 1) % 3, (declarer + 2) % 3
        self.hands[declarer] = hand & ~(action.left.bit | action.right.bit)
        self.hands[left] |= action.left.bit
        self.hands[right] |= action.right.bit
        if not self.rules.talon.contract_step:
            # no contract step: the winning bid is the contract, fixed as the cards are given
            assert self.high_bid is not None
            self.phase = Phase.CONTRACT
            self._fix_contract(self.high_bid, events)
        elif self._window_before_contract:
            self._open_window("after_exchange", events)
        else:
            self._to_contract()

    def _ceiling_hand(self) -> Mask:
        which = self.rules.talon.contract_ceiling_hand
        if which == "kept_hand":
            assert self.declarer is not None
            return self.hands[self.declarer]
        return self.talon_hand if which == "hand_with_talon" else self.auction_hand

    def _contract_refusal(self, amount: int) -> IllegalActionError | None:
        return next(self._contract_refusals(amount), None)

    def _contract_refusals(self, amount: int) -> Iterator[IllegalActionError]:
        """A raise where the rules allow none is refused as that alone: no ceiling applies to it."""
        bid = self.high_bid
        assert bid is not None
        if amount < bid:
            yield illegal("contract_below_bid", f"the contract may not be below the winning bid {bid}")
        if not self._on_grid(amount):
            yield illegal("contract_off_step", f"{amount} is not a legal amount (steps of {self.rules.auction.bid_step})")
        if amount <= bid:
            return  # ruling 3: the winning bid itself is always legal
        if not self.rules.talon.contract_raise:
            yield illegal("contract_raise_not_allowed", f"the contract must equal the winning bid {bid}")
        elif self.rules.talon.contract_ceiling == "none":
            top = self.rules.auction.max_bid  # the auction's marriage rule and ceiling bind bids only
            if amount > top:
                yield illegal("contract_above_ceiling", f"{amount} is above the maximum {top}")
        else:
            yield from self._limit_refusals(amount, self._ceiling_hand(), "contract_above_ceiling", "contract_above_ceiling")

    def _contract_top(self) -> int:
        """The highest raise: the auction's limits on the ceiling hand, or only ``max_bid``
        (``talon.contract_ceiling``)."""
        if self.rules.talon.contract_ceiling == "none":
            return self.rules.auction.max_bid
        return self._limit_top(self._ceiling_hand())

    def _legal_contract(self) -> tuple[str, ...]:
        """The winning bid and the raises allowed, sorted as strings, then ``give_up``."""
        bid = self.high_bid
        assert bid is not None
        top = max(bid, self._contract_top()) if self.rules.talon.contract_raise else bid
        # kept here, not only in amount_actions' cache: its key hashes the AuctionRules, a Python-level
        # hash of all their fields at every call
        actions = self._contracts.get((bid, top))
        if actions is None:
            actions = self._contracts[bid, top] = amount_actions(self.rules.auction, "contract", bid, top)
        return actions + _GIVE_UP if self._offers_give_up() else actions

    def _fix_contract(self, amount: int, events: list[Event]) -> None:
        self.contract = amount
        events.append({"type": "contract_fixed", "player": self.declarer, "contract": amount})
        if self._window_before_contract:
            self._start_play()  # the after_exchange window was open before the contract
        else:
            self._open_window("after_exchange", events)

    def _give_up(self, events: list[Event]) -> None:
        declarer = self.declarer
        assert declarer is not None
        self.give_ups[declarer] += 1
        events.append({"type": "give_up", "player": declarer, "count": self.give_ups[declarer]})
        deal_end.score_given_up(self, events)

    # --------------------------------------------------------------------- play

    def _winning(self) -> tuple[int, Card]:
        """The (player, card) now winning the trick: highest trump, else highest of the suit led."""
        trick = self.trick
        best_player, best = trick[0]
        trump = self.trump
        for player, c in trick[1:]:
            if c.suit == best.suit:
                if c.bit & best.stronger:
                    best_player, best = player, c
            elif c.suit == trump:
                best_player, best = player, c
        return best_player, best

    def _allowed_cards(self, hand: Mask) -> Mask:
        """The cards a follower may play (follow, beat, trump, overtrump)."""
        p = self.rules.play
        led = self.trick[0][1].suit
        same = hand & SUIT_MASK[led]
        if same:
            following = (p.must_beat and self._beating(same, led, p.beat_after_trump)) or same
            trump = self.trump
            if p.may_trump_instead and trump is not None and trump != led:
                # a trump instead of following: the trumps a player void in the suit led may play
                return following | (self._void_allowed(hand) & SUIT_MASK[trump])
            return following
        return self._void_allowed(hand)

    def _void_allowed(self, hand: Mask) -> Mask:
        """The cards a follower void in the suit led may play (trump, overtrump, undertrump)."""
        p = self.rules.play
        trump = self.trump
        if trump is not None and p.must_trump:
            trumps = hand & SUIT_MASK[trump]
            if trumps:
                higher = self._beating(trumps, trump)
                if p.must_overtrump and (p.overtrump_against == "anyone" or self._winning()[0] == self.declarer):
                    trumps = higher or trumps
                if not higher and not p.must_undertrump and self._winning()[1].suit == trump:
                    return hand  # no trump held can win: a lower trump is not owed
                return trumps
        return hand

    def _beating(self, cards: Mask, suit: str, past_trump: bool = False) -> Mask:
        """The cards that beat the trick's winning card when that card is of ``suit`` (else none);
        with ``past_trump`` (``play.beat_after_trump``) the highest card of the suit led is to be
        beaten even when a trump wins the trick."""
        best = self._winning()[1]
        if best.suit != suit:
            if not past_trump:
                return 0
            best = self.trick[0][1]
            for _, c in self.trick[1:]:
                if c.suit == best.suit and c.bit & best.stronger:
                    best = c
        return cards & best.stronger

    def _can_declare(self) -> bool:
        return self.trick_number in self._declaring_tricks

    def _play_refusal(self, player: int, action: Play) -> IllegalActionError | None:
        """The first reason of ``_play_refusals``, the declaration's through ``_declare_refusal``."""
        hand = self.hands[player]
        if not hand & action.card.bit or action.declare is None:
            return next(self._play_refusals(player, action), None)
        declared = self._declare_refusal(hand, action)
        if declared is not None:
            return declared
        return next((r for r in self._play_refusals(player, action) if r.reason not in DECLARATION_REASONS), None)

    def _declare_refusal(self, hand: Mask, action: Play) -> IllegalActionError | None:
        return next(self._declare_refusals(hand, action), None)

    def _play_refusals(self, player: int, action: Play) -> Iterator[IllegalActionError]:
        """A card not held comes alone (nothing else about playing it can be judged); else the
        declaration's reasons, then the card's own in the trick."""
        hand = self.hands[player]
        c = action.card
        if not hand & c.bit:
            yield illegal("card_not_held", f"seat {player} does not hold {c}")
            return
        if action.declare is not None:
            yield from self._declare_refusals(hand, action)
        if not self.trick or self._allowed_cards(hand) & c.bit:
            return
        led = self.trick[0][1].suit
        if c.suit != led and hand & SUIT_MASK[led] and not (self.rules.play.may_trump_instead and c.suit == self.trump):
            yield illegal("must_follow_suit", f"{c} does not follow the suit led ({led})")
        elif c.suit == led:
            yield illegal("must_beat", f"{c} does not beat the winning card when a higher card of {led} is held")
        elif c.suit != self.trump:
            yield illegal("must_trump", f"void in {led}, a trump ({self.trump}) must be played")
        else:
            yield illegal("must_overtrump", "a higher trump than the winning one must be played")

    def _declare_refusals(self, hand: Mask, action: Play) -> Iterator[IllegalActionError]:
        """Under automatic declarations the suffix comes alone: it is no action of those rules,
        so whether the marriage is held or the player on lead is never asked."""
        m = self.rules.marriages
        c = action.card
        if action.declare == "marriage":
            if m.declaration == "automatic":
                yield illegal("marriage_declaration_automatic", "leading the king or queen declares the marriage: play it without the suffix")
                return
            if c.rank not in ("K", "Q") or not hand & PARTNER[c].bit:
                yield illegal("marriage_not_held", f"{c} is not one half of a marriage held")
        elif m.four_aces is None or c.rank != "A" or hand & ACES != ACES:
            yield illegal("aces_not_held", "four aces are not held (or not scored under these rules)")
        if self.trick:
            yield illegal("marriage_not_on_lead", "only the player on lead declares")
        if not self._can_declare():
            if self.trick_number != 1:
                yield illegal("marriage_too_late", f"no declaration after trick {m.last_trick}")
            else:
                yield illegal("marriage_on_first_trick", "no declaration on the first trick")

    def _play(self, action: Play, events: list[Event]) -> None:
        player = self.to_act
        assert player is not None
        c = action.card
        hand = self.hands[player]
        if not self.trick and (action.declare is not None or self._automatic_marriages):
            self._declare(player, hand, action, events)  # a suffix, or a king or queen that may declare
        self.hands[player] = hand & ~c.bit
        self.trick.append((player, c))
        if len(self.trick) < 3:
            self.to_act = (player + 1) % 3
            return
        self._close_trick(events)

    def _declare(self, player: int, hand: Mask, action: Play, events: list[Event]) -> None:
        """A declaration on lead: explicit suffix, or automatic for a K/Q with its partner."""
        m = self.rules.marriages
        c = action.card
        if action.declare == "aces":
            assert m.four_aces is not None
            self.aces[player] += m.four_aces
            events.append({"type": "aces_declared", "player": player, "points": m.four_aces})
            return
        automatic = (
            action.declare is None and m.declaration == "automatic" and c.rank in ("K", "Q") and hand & PARTNER[c].bit and self._can_declare()
        )
        if action.declare != "marriage" and not automatic:
            return
        suit = c.suit
        first = not any(self.marriages)
        self.marriages[player].append(suit)
        events.append({"type": "marriage_declared", "player": player, "suit": suit, "points": m.values[suit]})
        if m.one_trump and not first:
            return  # marriages.one_trump: only the deal's first marriage names the trump
        if m.trump_from == "this_trick":
            self.trump = suit
            events.append({"type": "trump_changed", "suit": suit})
        else:
            self.pending_trump = suit

    def _close_trick(self, events: list[Event]) -> None:
        winner = self._winning()[0]
        (_, first), (_, second), (_, third) = self.trick
        points = first.points + second.points + third.points
        self.card_points[winner] += points
        self.tricks_won[winner] += 1
        events.append(
            {"type": "trick_won", "player": winner, "trick": self.trick_number, "cards": [first.code, second.code, third.code], "points": points}
        )
        if self._trick_bonuses_scored:
            self._trick_bonuses(winner, events)
        self.trick = []
        if self.pending_trump is not None:
            self.trump = self.pending_trump
            self.pending_trump = None
            events.append({"type": "trump_changed", "suit": self.trump})
        assert self.trick_number is not None
        if self.trick_number == 8:
            self.to_act = None
            deal_end.score_played(self, events)
            return
        self.trick_number += 1
        self.to_act = winner

    def _trick_bonuses(self, winner: int, events: list[Event]) -> None:
        """marriages.half_capture_bonus and play.last_trick_bonus: points beside the cards."""
        half = self.rules.marriages.half_capture_bonus
        if half is not None:
            declared = {suit for suits in self.marriages for suit in suits}
            for player, c in self.trick:
                if player != winner and c.rank in ("K", "Q") and c.suit not in declared:
                    self._bonus(winner, "half_marriage", half, events)
        last = self.rules.play.last_trick_bonus
        if last is not None and self.trick_number == 8:
            self._bonus(winner, "last_trick", last, events)

    def _bonus(self, player: int, kind: str, points: int, events: list[Event]) -> None:
        self.bonus_points[player] += points
        events.append({"type": "bonus", "player": player, "kind": kind, "points": points})

    # -------------------------------------------------------------- persistence

    def to_json(self) -> dict[str, Any]:
        """Everything needed to go on playing, as JSON values (rules included as a document)."""
        data: dict[str, Any] = {
            "rules": _rules_json(self.rules),
            "scores": [[s.numerator, s.denominator] for s in self.scores],
            "start_scores": [[s.numerator, s.denominator] for s in self.start_scores],
        }
        for name in _PLAIN_FIELDS:
            data[name] = copy.deepcopy(getattr(self, name))
        data["phase"] = str(self.phase)  # a plain string, as every value here
        data["barrel"] = [seat.as_json() for seat in self.barrel]
        data["auction"] = [list(entry) for entry in self.auction]
        data["hands"] = [codes_of(h) for h in self.hands]
        for name in ("talon", "auction_hand", "talon_hand"):
            data[name] = codes_of(getattr(self, name))
        data["trick"] = [[p, c.code] for p, c in self.trick]
        return data

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> MatchState:
        """The state that ``to_json`` described."""
        state = MatchState(_rules_from_json(data["rules"]))
        state.scores = [whole(Fraction(n, d)) for n, d in data["scores"]]
        state.start_scores = [whole(Fraction(n, d)) for n, d in data["start_scores"]]
        for name in _PLAIN_FIELDS:
            setattr(state, name, copy.deepcopy(data[name]))
        state.phase = Phase(data["phase"])
        state.barrel = [BarrelSeat(**seat) for seat in data["barrel"]]
        state.auction = [(p, a) for p, a in data["auction"]]
        state.hands = [mask_of(map(Card.parse, h)) for h in data["hands"]]
        for name in ("talon", "auction_hand", "talon_hand"):
            setattr(state, name, mask_of(map(Card.parse, data[name])))
        state.trick = [(p, Card.parse(c)) for p, c in data["trick"]]
        return state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MatchState) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


_PLAIN_FIELDS = (
    "bolts", "give_ups", "winner", "phase", "dealer", "next_dealer", "talon_shown", "passed", "high_bid",
    "high_bidder", "to_act", "declarer", "contract", "claim_window", "claim_queue", "trump", "pending_trump",
    "trick_number", "tricks_won", "card_points", "marriages", "aces", "deal_result", "bonus_points", "nines_holder",
)  # fmt: skip


_SEATS_FROM = ((0, 1, 2), (1, 2, 0), (2, 0, 1))  # the seats in turn, from each seat
_CLAIM_ACTIONS = ("no_redeal", "redeal")
_PASS = ("pass",)
_GIVE_UP_PHASES = {"before_exchange": (Phase.EXCHANGE,), "with_contract": (Phase.CONTRACT,)}  # giving_up.moment; else either
_GIVE_UP = ("give_up",)


def on_grid(a: AuctionRules, amount: int) -> bool:
    """Is ``amount`` a legal amount: the opening bid, or above it on the step (``high_bid_step``
    above ``high_bid_from``)?"""
    if amount == a.opening_bid:
        return True
    if amount < a.opening_bid:
        return False
    if a.high_bid_step is not None and amount > a.high_bid_from:
        return amount % a.high_bid_step == 0
    return amount % a.bid_step == 0


def next_on_grid(a: AuctionRules, amount: int) -> int:
    """The least legal amount above ``amount``."""
    if amount < a.opening_bid:
        return a.opening_bid
    high = a.high_bid_step
    if high is not None and amount >= a.high_bid_from:
        return (amount // high + 1) * high
    nxt = (amount // a.bid_step + 1) * a.bid_step
    if high is not None and nxt > a.high_bid_from:
        return (a.high_bid_from // high + 1) * high
    return nxt


@functools.lru_cache(maxsize=4096)
def amount_actions(a: AuctionRules, word: str, low: int, top: int) -> tuple[str, ...]:
    """``bid N`` (or ``contract N``) for ``low`` and the legal amounts above it up to ``top``,
    sorted as strings. The same few ranges come back at every auction, hence the cache."""
    actions = []
    while low <= top:
        actions.append(sys.intern(f"{word} {low}"))
        low = next_on_grid(a, low)
    return tuple(sorted(actions))


def _rules_json(rules: Rules) -> dict[str, Any]:
    import dataclasses

    return dataclasses.asdict(rules)


def _rules_from_json(data: Mapping[str, Any]) -> Rules:
    from . import rules as r

    sections = {
        "deal": r.DealRules, "auction": r.AuctionRules, "talon": r.TalonRules, "giving_up": r.GivingUpRules,
        "play": r.PlayRules, "marriages": r.MarriageRules, "scoring": r.ScoringRules, "bolts": r.BoltRules,
        "barrel": r.BarrelRules, "defender_lock": r.DefenderLockRules, "dump": r.DumpRules, "match_end": r.MatchEndRules,
        "redeal_timing": r.RedealTiming,
    }  # fmt: skip
    built: dict[str, Any] = {name: cls(**data[name]) for name, cls in sections.items()}
    built["redeals"] = tuple(r.RedealRule(**item) for item in data["redeals"])
    return Rules(**built)


def _three(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != 3:
        raise EngineError(f"{where}: expected a list of three values, got {value!r}")
    return value


def _counts(value: Any, where: str) -> list[int]:
    """Three non-negative integers (a bool is none), as a list of the engine's own."""
    values = _three(value, where)
    first, second, third = values
    if type(first) is int and type(second) is int and type(third) is int and first >= 0 and second >= 0 and third >= 0:
        return [first, second, third]  # what a runner sends, told by type alone, without a generator run per value
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
        raise EngineError(f"{where}: expected three non-negative integers, got {values!r}")
    return list(values)


def _barrel_seat(value: Any, seat: int) -> BarrelSeat:
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict told without typing's slow check
        raise EngineError(f"match.barrel[{seat}]: expected {{on, attempts, failed_visits}}, got {value!r}")
    on = value.get("on", False)
    attempts = value.get("attempts", 0)
    failed = value.get("failed_visits", 0)
    if type(on) is bool and type(attempts) is int and type(failed) is int and attempts >= 0 and failed >= 0:
        return BarrelSeat(on, attempts, failed)  # as _counts: what a runner sends, told by type alone
    if not isinstance(on, bool) or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (attempts, failed)):
        raise EngineError(f"match.barrel[{seat}]: expected on true/false and non-negative integer attempts and "
                          f"failed_visits, got {value!r}")
    return BarrelSeat(on, attempts, failed)


def _parse_deal(hands: Sequence[Sequence[Card | str]], talon: Sequence[Card | str]) -> tuple[list[Mask], Mask]:
    """Three hands of 7 and a talon of 3, together the 24 distinct cards (as masks).
    Each card goes straight into its hand's mask: no list of cards is built for a good deal."""
    if not isinstance(hands, (list, tuple)) or len(hands) != 3:
        raise DealError(f"hands: expected three hands, got {hands!r}")
    masks = [_dealt_mask(hands[0], "hands[0]", 7), _dealt_mask(hands[1], "hands[1]", 7), _dealt_mask(hands[2], "hands[2]", 7)]
    talon_mask = _dealt_mask(talon, "talon", 3)
    if (masks[0] | masks[1] | masks[2] | talon_mask).bit_count() != 24:  # 24 cards dealt, 24 distinct
        everything = [c if isinstance(c, Card) else Card.parse(c) for h in (*hands, talon) for c in h]
        seen: set[Card] = set()
        twice = sorted({c.code for c in everything if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
        raise DealError(f"deal: every card must appear once; dealt twice: {', '.join(twice)}")
    return masks, talon_mask


def _dealt_mask(items: Any, where: str, size: int) -> Mask:
    """The mask of one dealt hand (or the talon) of ``size`` cards or card codes."""
    if not isinstance(items, (list, tuple)) or len(items) != size:
        raise DealError(f"{where}: expected {size} cards, got {items!r}")
    try:
        return functools.reduce(operator.or_, map(_DEALT_BIT.__getitem__, items))  # cards or codes held
    except (KeyError, TypeError):  # not a card: name the first such item
        return mask_of(c if isinstance(c, Card) else _dealt_card(c, where) for c in items)


_DEALT_BIT: dict[Card | str, Mask] = {key: c.bit for c in DECK for key in (c, c.code)}  # a dealt card or code, as a mask


def _dealt_card(item: object, where: str) -> Card:
    if not isinstance(item, str):
        raise DealError(f"{where}: expected card codes, got {item!r}")
    try:
        return Card.parse(item)
    except RefusedActionError as exc:
        raise DealError(f"{where}: {exc.detail}") from None
