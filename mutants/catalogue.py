"""The catalogue of mutants: deliberately wrong versions of the reference engine.

Each mutant is one realistic mistake an implementer makes, named and described in one
line, and written as patches to ``reference_impl`` (see ``patching.py``). A mistake about
a knob is expressed through knobs ("ignores auction.stop_at"), never through a profile's
name, so a mutant changes a general rule and shows wherever that rule is exercised.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator

from reference_impl import cards, deal_end
from reference_impl.actions import Give, Pass
from reference_impl.cards import NINES, PARTNER, SUIT_MASK, SUITS, Card, Mask, card
from reference_impl.rules import Rules
from reference_impl.scoring import round_score
from reference_impl.state import MatchState
from spec.vocabulary import Phase

from .patching import Patch, applied, knob, rules_tweak, setting, wrap

Events = list[dict[str, Any]]


@dataclass(frozen=True)
class Mutant:
    """One named mistake: what it is, the knobs it concerns, how to make it."""

    name: str
    description: str
    knobs: tuple[str, ...]
    build: Callable[[], list[Patch]]

    @contextmanager
    def applied(self) -> Iterator[None]:
        """The engine with this mistake, inside the block only."""
        with applied(self.build()):
            yield


CATALOGUE: dict[str, Mutant] = {}


def mutant(name: str, description: str, *knobs: str) -> Callable[[Callable[[], list[Patch]]], Callable[[], list[Patch]]]:
    """Register the decorated patch builder as a mutant."""
    def register(build: Callable[[], list[Patch]]) -> Callable[[], list[Patch]]:
        if name in CATALOGUE:
            raise ValueError(f"mutant {name!r} is registered twice")
        CATALOGUE[name] = Mutant(name, description, tuple(knobs), build)
        return build

    return register


def knob_mutant(name: str, description: str, section: str, **changes: Any) -> None:
    """Register a mutant that only misreads knobs of one section."""
    knobs = tuple(f"{section}.{k.rstrip('_')}" for k in changes)
    CATALOGUE[name] = Mutant(name, description, knobs, lambda: [knob(section, **changes)])


def select(patterns: list[str]) -> list[Mutant]:
    """The mutants whose names match any of the globs (all of them without patterns)."""
    if not patterns:
        return list(CATALOGUE.values())
    chosen = [m for m in CATALOGUE.values() if any(fnmatch.fnmatchcase(m.name, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatchcase(m.name, p) for m in CATALOGUE.values())]
    if unknown:
        raise KeyError(f"no mutant matches {', '.join(unknown)}; known: {', '.join(CATALOGUE)}")
    return chosen


def _swap(one: str, other: str) -> Callable[[str], str]:
    """A knob value read the other way round (``one`` <-> ``other``)."""
    return lambda value: other if value == one else one if value == other else value


# ===================================================================== cards


def _ranked(order: tuple[str, ...]) -> list[Patch]:
    """Every card ranked by ``order`` (strongest first): its strength and the mask of the cards
    of its suit that beat it, which is what the engine compares."""
    patches = []
    for suit in SUITS:
        above = 0
        for n, rank in enumerate(order):
            c = card(rank + suit)
            patches += [setting(c, "strength", len(order) - 1 - n), setting(c, "stronger", above)]
            above |= c.bit
    return patches


@mutant("ten-below-king", "ranks the ten below the king (A K 10 Q J 9)", "play")
def _ten_below_king() -> list[Patch]:
    return _ranked(("A", "K", "10", "Q", "J", "9"))


# the hand points the redeal rules read (hand_under_points) come from the same table: a hand of
# 14 points is 13 or 15 to this engine, and its redeal claim shows the mistake there
@mutant("king-queen-points-swapped", "counts the king 3 and the queen 4 card points", "scoring", "redeals")
def _king_queen_points() -> list[Patch]:
    swapped = [setting(card("K" + s), "points", 3) for s in SUITS] + [setting(card("Q" + s), "points", 4) for s in SUITS]
    return swapped + [wrap(cards, "_POINTS", lambda _table: cards.block_points())]  # the hands' points table, from the swapped points


# ====================================================================== play


def _highest(trick: list[tuple[int, Card]], keep: Callable[[Card, Card], bool]) -> tuple[int, Card]:
    best_player, best = trick[0]
    for player, c in trick[1:]:
        if keep(c, best):
            best_player, best = player, c
    return best_player, best


@mutant("highest-card-wins", "gives the trick to the highest card whatever its suit", "play")
def _highest_card_wins() -> list[Patch]:
    return [setting(MatchState, "_winning", lambda self: _highest(self.trick, lambda c, b: c.strength > b.strength))]


@mutant("trump-does-not-win", "gives the trick to the highest card of the suit led even when trumped", "play", "marriages")
def _trump_does_not_win() -> list[Patch]:
    def winning(self: MatchState) -> tuple[int, Card]:
        return _highest(self.trick, lambda c, b: c.suit == b.suit and c.strength > b.strength)

    return [setting(MatchState, "_winning", winning)]


knob_mutant("no-duty-to-trump", "lets a player void in the suit led discard instead of trumping (ignores play.must_trump)",
            "play", must_trump=False)
knob_mutant("must-beat-missing", "lets a follower play any card of the suit led (ignores play.must_beat)", "play", must_beat=False)
knob_mutant("must-overtrump-missing", "lets a trumping player play any trump (ignores play.must_overtrump)",
            "play", must_overtrump=False)
knob_mutant("must-beat-added", "makes a follower beat the winning card of the suit led where play.must_beat is off",
            "play", must_beat=True)
knob_mutant("must-overtrump-added", "makes a trumping player overtrump where play.must_overtrump is off",
            "play", must_overtrump=True)


@mutant("must-beat-not-on-trump-lead", "drops the duty to beat when trumps are led (ruling 4)", "play.must_beat")
def _must_beat_not_on_trump_lead() -> list[Patch]:
    def make(original: Callable[[MatchState, Mask], Mask]) -> Any:
        def allowed(self: MatchState, hand: Mask) -> Mask:
            led = self.trick[0][1].suit
            if self.rules.play.must_beat and led == self.trump and hand & SUIT_MASK[led]:
                return hand & SUIT_MASK[led]
            return original(self, hand)

        return allowed

    return [wrap(MatchState, "_allowed_cards", make)]


# the mistake is the rule play.beat_after_trump writes down, given where the rules say otherwise
@mutant("must-beat-a-trumped-trick", "still makes a follower beat the suit led after the trick is trumped", "play.must_beat",
        "play.beat_after_trump")
def _must_beat_trumped() -> list[Patch]:
    def make(original: Callable[[MatchState, Mask], Mask]) -> Any:
        def allowed(self: MatchState, hand: Mask) -> Mask:
            led = self.trick[0][1].suit
            same = hand & SUIT_MASK[led]
            if self.rules.play.must_beat and same:
                top = max((c for _, c in self.trick if c.suit == led), key=lambda c: c.strength)
                return same & top.stronger or same
            return original(self, hand)

        return allowed

    return [wrap(MatchState, "_allowed_cards", make)]


# The third public engine plays this on purpose (play.may_trump_instead); where the knob is
# off, an engine that lets the trump through is wrong, and where it is on, one that refuses it.
knob_mutant("trump-instead-of-following", "lets a player who holds the suit led play a trump instead "
            "(ignores play.may_trump_instead: false)", "play", may_trump_instead=True)
knob_mutant("trump-instead-refused", "makes a player holding the suit led follow it where play.may_trump_instead "
            "allows a trump instead", "play", may_trump_instead=False)


# the mistake is the bonus play.last_trick_bonus writes down, given where the rules have none
@mutant("last-trick-bonus", "adds 10 card points for the last trick, as in other games of the family", "scoring",
        "play.last_trick_bonus")
def _last_trick_bonus() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def close(self: MatchState, events: Events) -> None:
            if self.trick_number == 8:
                winner = self._winning()[0]
                self.card_points[winner] += 10
            original(self, events)

        return close

    return [wrap(MatchState, "_close_trick", make)]


# ================================================================= marriages


knob_mutant("marriage-on-first-trick", "allows a marriage on the first trick (ignores marriages.first_trick)",
            "marriages", first_trick=True)
knob_mutant("trump-from-next-trick", "makes a marriage's trump count from the next trick only", "marriages", trump_from="next_trick")
knob_mutant("declaration-needs-suffix", "requires the 'marriage' suffix where leading the king or queen declares it",
            "marriages", declaration=_swap("automatic", "optional"))
knob_mutant("marriage-values-hearts-diamonds-swapped", "values diamonds 100 and hearts 80", "marriages",
            values=lambda v: {**v, "D": v["H"], "H": v["D"]})


knob_mutant("four-aces-where-off", "scores four aces (200) where marriages.four_aces is off", "marriages",
            four_aces=lambda v: 200 if v is None else v)


@mutant("marriage-without-partner", "accepts a marriage declared with only the king or the queen in hand", "marriages")
def _marriage_without_partner() -> list[Patch]:
    def make(original: Callable[..., Any]) -> Any:
        def refusal(self: MatchState, hand: Mask, action: Any) -> Any:
            c = action.card
            if action.declare == "marriage" and c.rank in ("K", "Q") and not hand & PARTNER[c].bit:
                hand |= PARTNER[c].bit
            return original(self, hand, action)

        return refusal

    return [wrap(MatchState, "_declare_refusal", make)]


@mutant("undeclared-marriage-counted", "scores a marriage for a king and queen played by one player without declaring", "marriages")
def _undeclared_marriage() -> list[Patch]:
    # who played each card of the deal, per state (MatchState has fixed slots, so the record
    # lives here, keyed by the state's id and started afresh with each deal)
    played_by: dict[int, dict[Card, int]] = {}

    def make_clear(original: Callable[..., None]) -> Any:
        def clear_deal(self: MatchState, dealer: int | None) -> None:
            played_by[id(self)] = {}
            original(self, dealer)

        return clear_deal

    def make_play(original: Callable[..., None]) -> Any:
        def play(self: MatchState, action: Any, events: Events) -> None:
            player = self.to_act
            assert player is not None
            original(self, action, events)
            played_by.setdefault(id(self), {})[action.card] = player

        return play

    def make_score(original: Callable[..., None]) -> Any:
        def score_played(state: MatchState, events: Events) -> None:
            played = played_by.pop(id(state), {})
            for suit in SUITS:
                king, queen = played.get(card("K" + suit)), played.get(card("Q" + suit))
                if king is not None and king == queen and suit not in state.marriages[king]:
                    state.aces[king] += state.rules.marriages.values[suit]
            original(state, events)

        return score_played

    return [wrap(MatchState, "_clear_deal", make_clear), wrap(MatchState, "_play", make_play),
            wrap(deal_end, "score_played", make_score)]


@mutant("second-marriage-keeps-trump", "lets only the first marriage of a deal set trumps", "marriages")
def _second_marriage_keeps_trump() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def declare(self: MatchState, player: int, hand: Mask, action: Any, events: Events) -> None:
            before, start = self.trump, len(events)
            original(self, player, hand, action, events)
            if before is not None:
                self.trump, self.pending_trump = before, None
                events[start:] = [e for e in events[start:] if e["type"] != "trump_changed"]

        return declare

    return [wrap(MatchState, "_declare", make)]


# =================================================================== auction


@mutant("opener-may-pass", "lets the opener pass first (the next player then opens)", "auction")
def _opener_may_pass() -> list[Patch]:
    def make_bid(original: Callable[..., None]) -> Any:
        def bid(self: MatchState, action: Any, events: Events) -> None:
            if not (isinstance(action, Pass) and self.high_bid is None):
                return original(self, action, events)
            player = self.to_act
            assert player is not None
            self.passed[player] = True
            self.auction.append((player, "pass"))
            if sum(self.passed) == 2:
                self.high_bid = self.rules.auction.opening_bid
                self.high_bidder = self.passed.index(False)
                self._win_auction(events)
                return None
            self.to_act = next(p for p in ((player + 1) % 3, (player + 2) % 3) if not self.passed[p])
            return None

        return bid

    def make_legal(original: Callable[[MatchState], tuple[str, ...]]) -> Any:
        return lambda self: tuple(sorted([*original(self), *(["pass"] if self.high_bid is None else [])]))

    def make_refusal(original: Callable[[MatchState, int], Any]) -> Any:
        return lambda self, player: None if self.high_bid is None else original(self, player)

    return [wrap(MatchState, "_bid", make_bid), wrap(MatchState, "_legal_auction", make_legal),
            wrap(MatchState, "_pass_refusal", make_refusal)]


@mutant("pass-not-final", "gives a player who passed another turn to bid", "auction")
def _pass_not_final() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def bid(self: MatchState, action: Any, events: Events) -> None:
            player = self.to_act
            assert player is not None
            original(self, action, events)
            if self.phase == Phase.AUCTION and self.to_act is not None:
                self.to_act = (player + 1) % 3

        return bid

    return [wrap(MatchState, "_bid", make)]


@mutant("equal-bid-accepted", "accepts a bid equal to the high bid", "auction")
def _equal_bid() -> list[Patch]:
    def make(original: Callable[..., Any]) -> Any:
        def refusal(self: MatchState, player: int, amount: int) -> Any:
            high = self.high_bid
            if high is None or amount != high:
                return original(self, player, amount)
            self.high_bid = high - 1  # compare as if the high bid were just below
            try:
                return original(self, player, amount)
            finally:
                self.high_bid = high

        return refusal

    return [wrap(MatchState, "_bid_refusal", make)]


knob_mutant("ceiling-ignores-marriages", "limits bids only by max_bid, not by the marriages held (ignores auction.ceiling)",
            "auction", ceiling="none")
knob_mutant("no-marriage-needed", "allows bids above 120 without a marriage (ignores auction.marriage_needed_above)",
            "auction", marriage_needed_above=None)
knob_mutant("stop-at-ignored", "lets a bid pass the stop before the auction stands there (ignores auction.stop_at)",
            "auction", stop_at=None)
knob_mutant("bid-step-5-everywhere", "accepts bids in steps of 5 where auction.bid_step is 10", "auction",
            bid_step=lambda v: min(v, 5))
knob_mutant("opening-not-forced", "lets the opener open above the opening bid where auction.opening is forced",
            "auction", opening="at_least")
knob_mutant("max-bid-ignored", "accepts bids and contracts above auction.max_bid", "auction", max_bid=10_000)


# the marriages a hand is worth decide the marriage condition as well as the ceiling: with no
# ceiling the mistake shows only as bids above auction.marriage_needed_above offered to a
# hand whose marriage is in the talon
@mutant("ceiling-counts-talon-marriage", "counts a marriage hoped for from the talon in the auction's limits", "auction.ceiling",
        "auction.marriage_needed_above")
def _ceiling_counts_talon() -> list[Patch]:
    def make(original: Callable[..., tuple[bool, int]]) -> Any:
        def worth(self: MatchState, hand: Mask) -> tuple[bool, int]:
            return original(self, hand | (self.talon if self.phase == Phase.AUCTION else 0))

        return worth

    return [wrap(MatchState, "_marriage_worth", make)]


# ============================================================ talon, contract


@mutant("give-directions-swapped", "gives the first card to the right and the second to the left", "talon")
def _give_swapped() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        return lambda self, action, events: original(self, Give(action.right, action.left), events)

    return [wrap(MatchState, "_give", make)]


knob_mutant("talon-always-shown", "shows the talon at every bid (ignores talon.shown: from_bid)", "talon", shown="always")
knob_mutant("talon-shown-only-above-threshold", "shows the talon only above talon.shown_from_bid, not at it",
            "talon", shown_from_bid=lambda v: v + 1)
knob_mutant("contract-raise-refused", "makes the contract equal the winning bid (ignores talon.contract_raise)",
            "talon", contract_raise=False)
knob_mutant("contract-ceiling-on-ten-cards", "checks a raised contract on the ten cards with the talon, not the eight kept",
            "talon", contract_ceiling_hand=_swap("kept_hand", "hand_with_talon"))


knob_mutant("contract-raise-capped-by-the-auction", "caps a raised contract by the auction's marriage rule and ceiling "
            "where talon.contract_ceiling says only max_bid", "talon", contract_ceiling="auction")


@mutant("contract-raise-unchecked", "lets a raised contract go above the ceiling and the marriage rule", "talon.contract_raise",
        "talon.contract_ceiling")
def _contract_raise_unchecked() -> list[Patch]:
    def make(original: Callable[..., Any]) -> Any:
        def refusal(self: MatchState, amount: int) -> Any:
            found = original(self, amount)
            return None if found is not None and found.reason == "contract_above_ceiling" else found

        return refusal

    return [wrap(MatchState, "_contract_refusal", make)]


# =================================================================== scoring


def _round_with(unit: int, down_below: Fraction) -> Callable[[Any], Fraction]:
    """Round to ``unit``: a remainder below ``down_below`` goes down, the rest up."""
    def rounding(value: Any) -> Fraction:
        exact = Fraction(value)
        remainder = exact % unit
        return exact - remainder if remainder < down_below else exact - remainder + unit

    return rounding


def _rounding_patch(kind: str, replacement: Callable[[Any], Fraction]) -> Patch:
    def make(original: Callable[[Any, str], Fraction]) -> Any:
        return lambda value, rounding: replacement(value) if rounding == kind else original(value, rounding)

    return wrap(deal_end, "round_score", make)


@mutant("rounding-remainder-2-up", "rounds a remainder of 2 up in nearest_5 (62 to 65)", "scoring.defender_rounding")
def _rounding_two_up() -> list[Patch]:
    return [_rounding_patch("nearest_5", _round_with(5, Fraction(2)))]


@mutant("rounding-remainder-5-down", "rounds a remainder of 5 down in nearest_10 (65 to 60)", "scoring.defender_rounding")
def _rounding_five_down() -> list[Patch]:
    return [_rounding_patch("nearest_10", _round_with(10, Fraction(6)))]


knob_mutant("defender-rounding-to-5", "rounds defenders to 5 where scoring.defender_rounding says 10", "scoring",
            defender_rounding=lambda v: "nearest_5" if v == "nearest_10" else v)
knob_mutant("defenders-not-rounded", "scores defenders' exact totals (ignores scoring.defender_rounding)", "scoring",
            defender_rounding="exact")
knob_mutant("declarer-rounded-before-check", "rounds the declarer's total to 5 before the contract check", "scoring",
            declarer_rounding="nearest_5")


@mutant("declarer-scores-total", "gives a declarer who makes the contract the total instead of the contract", "scoring")
def _declarer_scores_total() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def finish(state: MatchState, outcome: Any, deltas: list[Fraction], events: Events) -> None:
            if outcome.kind == "played" and outcome.made:
                deltas = list(deltas)
                deltas[outcome.declarer] = outcome.points[outcome.declarer]
            original(state, outcome, deltas, events)

        return finish

    return [wrap(deal_end, "_finish", make)]


@mutant("contract-needs-more-than-contract", "fails a declarer whose total exactly equals the contract", "scoring")
def _strict_contract() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def finish(state: MatchState, outcome: Any, deltas: list[Fraction], events: Events) -> None:
            total = round_score(outcome.points[outcome.declarer], state.rules.scoring.declarer_rounding)
            if outcome.kind == "played" and outcome.made and total == outcome.contract:
                outcome = dataclasses.replace(outcome, made=False)
                deltas = list(deltas)
                deltas[outcome.declarer] = Fraction(-outcome.contract)
            original(state, outcome, deltas, events)

        return finish

    return [wrap(deal_end, "_finish", make)]


# ================================================================ giving up


knob_mutant("give-up-half-rounded-up", "rounds the half-bid give-up gain up to 5 where halves are kept",
            "giving_up", half_bid_rounding="up_to_5")
knob_mutant("give-up-half-not-rounded", "keeps the half-bid give-up gain exact where it rounds up to 5",
            "giving_up", half_bid_rounding="exact")
knob_mutant("give-up-first-one-charged", "charges the declarer the bid for every give-up (ignores giving_up.declarer_loses_from)",
            "giving_up", declarer_loses_from=1)
knob_mutant("give-up-defenders-always-paid", "pays defenders from the first give-up (ignores giving_up.defenders_paid_from)",
            "giving_up", defenders_paid_from=1)
knob_mutant("give-up-penalty-ignored", "never charges the penalty for repeated give-ups (ignores giving_up.penalty_from)",
            "giving_up", penalty_from=None)
knob_mutant("give-up-costs-the-bid", "takes the winning bid from a declarer who gives up where it costs nothing",
            "giving_up", declarer_loses="winning_bid")
knob_mutant("give-up-free-for-declarer", "takes nothing from a declarer who gives up where it costs the bid",
            "giving_up", declarer_loses="nothing")
knob_mutant("give-up-allowed-on-barrel", "lets a player on the barrel give up (ignores giving_up.on_barrel)",
            "giving_up", on_barrel=True)
knob_mutant("give-up-refused-on-barrel", "refuses a give-up on the barrel where giving_up.on_barrel allows it",
            "giving_up", on_barrel=False)
knob_mutant("give-up-at-one-moment-only", "offers the give-up only with the contract where giving_up.moment says either",
            "giving_up", moment=lambda v: "with_contract" if v == "either" else v)
knob_mutant("give-up-moment-swapped", "offers the give-up at the other moment (before the exchange vs with the contract)",
            "giving_up", moment=_swap("before_exchange", "with_contract"))


@mutant("give-up-half-truncated", "drops the half point of a half-bid give-up gain (57.5 to 57)", "giving_up.half_bid_rounding")
def _give_up_truncated() -> list[Patch]:
    def make(original: Callable[..., Fraction]) -> Any:
        return lambda rules, bid: Fraction(int(original(rules, bid)))

    return [wrap(deal_end, "give_up_defender_gain", make)]


@mutant("give-up-counter-shared", "counts give-ups for the whole table instead of per player", "giving_up")
def _give_up_counter_shared() -> list[Patch]:
    def shared(original: Callable[..., Any]) -> Any:
        def call(state: MatchState, *args: Any) -> Any:
            own = list(state.give_ups)
            declarer = state.declarer
            assert declarer is not None
            state.give_ups[declarer] = sum(own)
            try:
                return original(state, *args)
            finally:
                state.give_ups = own

        return call

    return [wrap(deal_end, "score_given_up", shared), wrap(MatchState, "_give_up_refusal", shared)]


# ===================================================================== bolts


def _bolts_with(is_zero: Callable[[MatchState, Any, int], bool], who: Callable[[MatchState, Any], list[int]],
                reset: bool = True) -> Callable[[MatchState, Any, Events], None]:
    """deal_end._bolts with another idea of a zero, of who gets bolts, or of the reset."""
    def bolts(state: MatchState, outcome: Any, events: Events) -> None:
        rules = state.rules.bolts
        if not rules.enabled or (outcome.kind == "given_up" and not rules.in_give_up_deal):
            return
        for p in who(state, outcome):
            if p in outcome.occupants and not rules.on_barrel:
                continue
            if not is_zero(state, outcome, p):
                if rules.counting == "consecutive":
                    state.bolts[p] = 0
                continue
            state.bolts[p] += 1
            events.append({"type": "bolt", "player": p, "count": state.bolts[p]})
            if state.bolts[p] % rules.every == 0:
                state.bolts[p] = 0 if reset else state.bolts[p]
                state.scores[p] -= rules.penalty
                events.append({"type": "bolt_penalty", "player": p, "penalty": rules.penalty})

    return bolts


def _normal_zero(state: MatchState, outcome: Any, p: int) -> bool:
    if state.rules.bolts.zero == "zero_points":
        return bool(outcome.points[p] == 0)
    return state.tricks_won[p] == 0


def _judged(state: MatchState, outcome: Any) -> list[int]:
    """The players deal_end judges for a bolt, in its order: a declarer who played the deal
    first when bolts.declarer says so, then the defenders. A mutant of the zero or of the
    count keeps this, so that its mistake is the one its description names and no other: the
    defenders alone would also drop every declarer's bolt under rules that give the declarer
    bolts (classic's declarer-bolts option)."""
    defenders = [(outcome.declarer + 1) % 3, (outcome.declarer + 2) % 3]
    declarer = [outcome.declarer] if state.rules.bolts.declarer and outcome.kind == "played" else []
    return declarer + defenders


@mutant("bolt-for-two-points", "counts a deal of 2 points or less (a jack and two nines) as a bolt", "bolts.zero")
def _bolt_two_points() -> list[Patch]:
    return [setting(deal_end, "_bolts", _bolts_with(lambda s, o, p: bool(o.points[p] <= 2), _judged))]


@mutant("bolt-counts-tricks", "makes a bolt 'no trick won' where bolts.zero says 'no points'", "bolts.zero")
def _bolt_counts_tricks() -> list[Patch]:
    return [setting(deal_end, "_bolts", _bolts_with(lambda s, o, p: s.tricks_won[p] == 0, _judged))]


@mutant("bolt-for-failed-declarer", "gives a bolt to a declarer who fails the contract", "bolts")
def _bolt_failed_declarer() -> list[Patch]:
    def zero(state: MatchState, outcome: Any, p: int) -> bool:
        return (not outcome.made) if p == outcome.declarer else _normal_zero(state, outcome, p)

    return [setting(deal_end, "_bolts", _bolts_with(zero, lambda s, o: [0, 1, 2]))]


@mutant("bolt-counter-not-reset", "keeps counting bolts after a penalty instead of starting again", "bolts.every")
def _bolt_not_reset() -> list[Patch]:
    return [setting(deal_end, "_bolts", _bolts_with(_normal_zero, _judged, reset=False))]


knob_mutant("bolt-on-barrel", "counts bolts for a player on the barrel (ignores bolts.on_barrel)", "bolts", on_barrel=True)
knob_mutant("bolt-in-give-up-deal", "gives bolts in a given-up deal (ignores bolts.in_give_up_deal)", "bolts", in_give_up_deal=True)
knob_mutant("bolts-consecutive", "resets the bolt count after a scoring deal where bolts are cumulative",
            "bolts", counting="consecutive")


# ==================================================================== barrel


@mutant("barrel-not-capping", "lets a score that passes the barrel threshold stand instead of capping it", "barrel.threshold",
        "barrel.arrival_cap")
def _barrel_not_capping() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def arrivals(state: MatchState, outcome: Any, events: Events) -> None:
            before, start = list(state.scores), len(events)
            original(state, outcome, events)
            for event in events[start:]:
                if event["type"] == "barrel_entered" and state.barrel[event["player"]].on:
                    state.scores[event["player"]] = before[event["player"]]

        return arrivals

    return [wrap(deal_end, "_barrel_arrivals", make)]


@mutant("knock-off-penalises-newcomer", "makes the arriving player fall back instead of knocking off the occupant",
        "barrel.max_occupants", "barrel.crowding", "barrel.knock_off_penalty")
def _knock_off_newcomer() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def arrivals(state: MatchState, outcome: Any, events: Events) -> None:
            limit = state.rules.barrel.max_occupants
            staying = [p for p in range(3) if state.barrel[p].on]
            start = len(events)
            original(state, outcome, events)
            if limit is None or not staying:
                return
            knocked = [e for e in events[start:] if e["type"] == "barrel_left" and e["reason"] == "knocked_off"]
            if not knocked:
                return
            # undo the knock-off and send the newcomers back instead
            penalty = state.rules.barrel.knock_off_penalty
            entered = [e["player"] for e in events[start:] if e["type"] == "barrel_entered"]
            for e in knocked:
                seat = state.barrel[e["player"]]
                seat.on, seat.failed_visits = True, seat.failed_visits - 1
                state.scores[e["player"]] += e["penalty"]
            events[start:] = [e for e in events[start:] if e not in knocked]
            for p in entered:
                if state.barrel[p].on:
                    deal_end._leave(state, p, "fell_back", penalty, events)

        return arrivals

    return [wrap(deal_end, "_barrel_arrivals", make)]


@mutant("barrel-failed-contract-stays", "keeps a declarer on the barrel after a failed contract (only an attempt used)",
        "barrel")
def _barrel_failed_stays() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def leave(state: MatchState, p: int, reason: str, penalty: int, events: Events) -> None:
            if reason != "failed_contract":
                original(state, p, reason, penalty, events)

        return leave

    return [wrap(deal_end, "_leave", make)]


knob_mutant("barrel-attempts-as-declarer", "counts barrel attempts only in deals the occupant declares",
            "barrel", attempt_counts="as_declarer")
knob_mutant("barrel-attempts-never-expire", "never ends a barrel visit for running out of attempts", "barrel", attempts=10_000)
knob_mutant("barrel-attempts-penalty-ignored", "ends a visit without the attempts penalty", "barrel", attempts_penalty=0)
knob_mutant("defenders-score-on-barrel", "counts defending points for a player on the barrel", "barrel", defender_points="counted")
knob_mutant("barrel-min-contract-ignored", "lets any made contract win from the barrel (ignores barrel.min_contract)",
            "barrel", min_contract=0)
knob_mutant("jump-over-rule-inverted", "reads barrel.jump_over_wins the wrong way round", "barrel",
            jump_over_wins=lambda v: not v)
knob_mutant("failed-visit-reset-ignored", "never resets a score after repeated failed visits", "barrel", failed_visit_reset=None)
knob_mutant("give-up-deal-not-an-attempt", "does not count a given-up deal as a barrel attempt", "barrel",
            give_up_deal_counts=False)
knob_mutant("barrel-occupants-unlimited", "lets any number sit on the barrel (ignores barrel.max_occupants)", "barrel",
            max_occupants=None)


# ============================================================ the 800 rule


knob_mutant("lock-from-820", "applies the 800 rule from 820", "defender_lock", from_=lambda v: v + 20)
knob_mutant("lock-ignored", "never limits defending points (ignores defender_lock)", "defender_lock", enabled=False)
knob_mutant("lock-mode-swapped", "reads defender_lock.mode the wrong way (cap vs stop_counting)", "defender_lock",
            mode=_swap("cap", "stop_counting"))
knob_mutant("defender-max-ignored", "lets defending lift a score above defender_lock.defender_max", "defender_lock",
            defender_max=None)


# ====================================================================== dump


knob_mutant("dump-positive-only", "dumps only +555, not -555 (ignores dump.negative)", "dump", negative=False)
knob_mutant("dump-ignored", "never dumps a score of 555 (ignores dump)", "dump", enabled=False)


@mutant("dump-when-passing-555", "dumps a score that passed through 555 in the deal, not only one that lands on it", "dump")
def _dump_passing() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def dump(state: MatchState, events: Events) -> None:
            rules = state.rules.dump
            if rules.enabled:
                for p in range(3):
                    low, high = sorted((state.start_scores[p], state.scores[p]))
                    if low < rules.score < high:
                        state.scores[p] = Fraction(rules.score)
            original(state, events)

        return dump

    return [wrap(deal_end, "_dump", make)]


@mutant("dump-before-bolt-penalty", "checks 555 before the bolt penalty instead of at the very end", "dump", "bolts")
def _dump_before_bolts() -> list[Patch]:
    dump = deal_end._dump

    def make(original: Callable[..., None]) -> Any:
        def bolts(state: MatchState, outcome: Any, events: Events) -> None:
            dump(state, events)
            original(state, outcome, events)

        return bolts

    return [wrap(deal_end, "_bolts", make), setting(deal_end, "_dump", lambda state, events: None)]


# =================================================================== redeals


@mutant("four-nines-redeal-ignored", "ignores the four-nines redeal rule", "redeals")
def _four_nines_ignored() -> list[Patch]:
    return [rules_tweak(lambda r: dataclasses.replace(r, redeals=tuple(x for x in r.redeals if x.condition != "four_nines")))]


@mutant("three-nines-count-as-four", "grants the four-nines redeal for three nines", "redeals")
def _three_nines() -> list[Patch]:
    def make(original: Callable[..., bool]) -> Any:
        def qualifies(self: MatchState, player: int | None, rule: Any) -> bool:
            if rule.condition == "four_nines" and player is not None:
                return (self.hands[player] & NINES).bit_count() >= 3
            return original(self, player, rule)

        return qualifies

    return [wrap(MatchState, "_qualifies", make)]


@mutant("redeal-claims-automatic", "redeals at once where the qualifying player should be asked", "redeals")
def _claims_automatic() -> list[Patch]:
    def change(r: Rules) -> Rules:
        return dataclasses.replace(r, redeals=tuple(dataclasses.replace(x, by="automatic") for x in r.redeals))

    return [rules_tweak(change)]


knob_mutant("redeal-moves-the-deal", "passes the deal on after a redeal (ignores deal.dealer_after_redeal)", "deal",
            dealer_after_redeal=_swap("same", "next"))


# ============================================================== deal, match end


@mutant("next-dealer-on-the-right", "passes the deal to the right instead of the left", "deal.next_dealer")
def _next_dealer_right() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def finish(state: MatchState, *args: Any) -> None:
            original(state, *args)
            if state.next_dealer is not None and state.dealer is not None:
                state.next_dealer = (state.dealer + 2) % 3

        return finish

    return [wrap(deal_end, "_finish", make)]


knob_mutant("defenders-can-win-inverted", "reads match_end.defenders_can_win the wrong way round", "match_end",
            defenders_can_win=lambda v: not v)


@mutant("tie-break-ignores-declarer", "gives a shared finish to the highest score even when the declarer is among them",
        "match_end.tie_break")
def _tie_break() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def match_end(state: MatchState, outcome: Any, events: Events) -> None:
            target = state.rules.match_end.target
            reached = [p for p in range(3) if state.scores[p] >= target and deal_end._eligible(state, outcome, p)]
            if outcome.declarer in reached and len(reached) > 1:
                top = max(state.scores[p] for p in reached)
                others = [p for p in reached if state.scores[p] == top]
                outcome = dataclasses.replace(outcome, declarer=others[0])
            original(state, outcome, events)

        return match_end

    return [wrap(deal_end, "_match_end", make)]



@mutant("tie-break-first-seat", "gives a shared finish to the first seat in seat order at the target, as a public engine "
        "does (not a tie-break any table plays: DESIGN ruling 13)", "match_end.tie_break")
def _tie_break_first_seat() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def match_end(state: MatchState, outcome: Any, events: Events) -> None:
            reached = [p for p in range(3) if deal_end._reaches(state, state.scores[p]) and deal_end._eligible(state, outcome, p)]
            if len(reached) < 2:
                original(state, outcome, events)
                return
            state.phase = Phase.MATCH_OVER
            state.next_dealer = None
            state.winner = reached[0]
            events.append({"type": "match_won", "player": reached[0]})

        return match_end

    return [wrap(deal_end, "_match_end", make)]


# ================================================ variant axes: auction, talon, giving up, marriages, play
# Mistakes about the knobs of the variant-axes work (opener_may_pass ... must_undertrump).

knob_mutant("max-bid-waits-for-passes", "asks the others to pass after a bid of the maximum where auction.ends_at_max_bid ends "
            "the auction at once", "auction", ends_at_max_bid=False)
knob_mutant("max-bid-always-ends", "ends the auction at a bid of the maximum where the others still pass after it",
            "auction", ends_at_max_bid=True)
knob_mutant("opener-pass-refused", "refuses the opener's first pass where auction.opener_may_pass allows it", "auction",
            opener_may_pass=False)
knob_mutant("all-pass-always-redeals", "redeals when all three pass even where the opener should play the opening bid "
            "(ignores auction.all_pass)", "auction", all_pass="redeal")
knob_mutant("dealer-may-always-pass", "lets the dealer pass after two passes (ignores auction.dealer_must_bid)", "auction",
            dealer_must_bid=False)
knob_mutant("barrel-min-bid-ignored", "lets a player on the barrel bid below auction.barrel_min_bid", "auction", barrel_min_bid=None)
knob_mutant("reentry-ignored", "keeps a player who passed out of the auction after a new bid (ignores auction.reentry)", "auction",
            reentry=False)
knob_mutant("contract-step-invented", "asks for a contract where the winning bid is the contract (ignores talon.contract_step)",
            "talon", contract_step=True)
knob_mutant("talon-shown-to-all", "shows the talon to the table where only the declarer sees it (talon.shown: never)", "talon",
            shown=lambda v: "always" if v == "never" else v)
knob_mutant("give-up-penalty-on-every-later-one", "charges the give-up penalty on every give-up from the Nth on instead of every "
            "Nth (ignores giving_up.penalty_repeats)", "giving_up", penalty_repeats="each_from")
knob_mutant("marriage-one-trick-too-late", "accepts a marriage on the trick after marriages.last_trick (an off-by-one)",
            "marriages", last_trick=lambda v: None if v is None else v + 1)
knob_mutant("every-marriage-changes-trump", "lets a second marriage change the trump (ignores marriages.one_trump)", "marriages",
            one_trump=False)
knob_mutant("overtrump-owed-to-defenders", "makes a player overtrump a defender's trump too (ignores play.overtrump_against)",
            "play", overtrump_against="anyone")
knob_mutant("beat-ends-when-trumped", "drops the duty to beat once a trump wins the trick (ignores play.beat_after_trump)",
            "play", beat_after_trump=False)
knob_mutant("trump-always-owed", "owes a trump even when none held can win the trick (ignores play.must_undertrump: false)",
            "play", must_undertrump=True)


@mutant("pre-talon-cap-binds-the-contract", "applies auction.pre_talon_max to the contract too, as if it were max_bid",
        "auction.pre_talon_max", "auction.max_bid")
def _pre_talon_cap_binds_contract() -> list[Patch]:
    def change(r: Rules) -> Rules:
        cap = r.auction.pre_talon_max
        if cap is None:
            return r
        return dataclasses.replace(r, auction=dataclasses.replace(r.auction, max_bid=min(r.auction.max_bid, cap)))

    return [rules_tweak(change)]


@mutant("half-bid-rounded-half-to-even", "rounds half the bid with round() (57.5 to 58) where half_bid_rounding is down",
        "giving_up.half_bid_rounding")
def _half_bid_half_to_even() -> list[Patch]:
    def make(original: Callable[..., Fraction]) -> Any:
        def gain(rules: Any, bid: int) -> Fraction:
            if rules.defender_gain == "half_bid" and rules.half_bid_rounding == "down":
                return Fraction(round(Fraction(bid, 2)))
            return original(rules, bid)

        return gain

    return [wrap(deal_end, "give_up_defender_gain", make)]
# ================================================ variant axes of issue 12, part B
# Scoring, bolts, barrel, match end and redeals knobs added with the variant axes; each
# mutant is a realistic way to get one of them wrong (most often: not reading it at all).

knob_mutant("declarer-scores-ignored", "scores the contract where scoring.declarer_scores says the total", "scoring",
            declarer_scores="contract")
knob_mutant("failed-contract-split-paid-in-full", "pays each defender the whole failed contract where it is to be split",
            "scoring", failed_contract_points=lambda v: "each_defender" if v == "split_among_defenders" else v)
knob_mutant("failed-contract-points-ignored", "pays the defenders nothing from a failed contract (ignores scoring.failed_contract_points)",
            "scoring", failed_contract_points="lost")
knob_mutant("declarer-bolt-ignored", "gives bolts to defenders only where bolts.declarer says the declarer too", "bolts",
            declarer=False)
knob_mutant("barrel-attempts-always-limited", "ends a barrel visit after three deals where barrel.attempts sets no limit",
            "barrel", attempts=lambda v: 3 if v is None else v)
knob_mutant("barrel-failure-always-leaves", "ends the barrel visit on a failed contract where barrel.failed_contract says stay",
            "barrel", failed_contract="leave")
knob_mutant("barrel-always-capped", "caps every score on the barrel where barrel.arrival_cap says uncapped", "barrel",
            arrival_cap="capped")
knob_mutant("barrel-win-by-contract-only", "wins from the barrel only by a made contract (ignores barrel.win_by)", "barrel",
            win_by="made_contract")
knob_mutant("barrel-crowding-always-knocks-off", "always knocks the occupants off a full barrel (ignores barrel.crowding)",
            "barrel", crowding="knock_off_occupants")
knob_mutant("barrel-arrivals-all-fall-back", "sends every arrival back when there are too many (ignores barrel.arrivals_over_limit)",
            "barrel", arrivals_over_limit="all_fall_back")
knob_mutant("past-the-target-always-wins", "lets a score past the target win where match_end.over_target says exact only",
            "match_end", over_target="reach")
knob_mutant("tie-break-play-on-forgets-declarer", "gives a shared finish to the highest score where the declarer comes first "
            "before equal highest scores play on", "match_end",
            tie_break=lambda v: "highest_then_play_on" if v == "declarer_then_highest_then_play_on" else v)
knob_mutant("tie-break-always-declarer", "settles every shared finish for the declarer, else the highest (ignores the other tie_break values)",
            "match_end", tie_break="declarer_then_highest")


@mutant("four-nines-bonus-ignored", "never scores the four-nines bonus", "redeals.four_nines_bonus")
def _nines_bonus_ignored() -> list[Patch]:
    return [knob("redeal_timing", four_nines_bonus=None)]


@mutant("claim-always-after-contract", "opens the after-exchange claim window after the contract whatever the knob says",
        "redeals.after_exchange_window")
def _claim_after_contract() -> list[Patch]:
    return [knob("redeal_timing", after_exchange_window="after_contract")]


@mutant("half-capture-counts-own-cards", "pays the half-marriage bonus also for the trick winner's own kings and queens",
        "marriages.half_capture_bonus")
def _half_capture_own() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def bonuses(self: MatchState, winner: int, events: Events) -> None:
            original(self, winner, events)
            half = self.rules.marriages.half_capture_bonus
            declared = {suit for suits in self.marriages for suit in suits}
            if half is not None:
                for player, c in self.trick:
                    if player == winner and c.rank in ("K", "Q") and c.suit not in declared:
                        self._bonus(winner, "half_marriage", half, events)

        return bonuses

    return [wrap(MatchState, "_trick_bonuses", make)]


knob_mutant("last-trick-bonus-ignored", "never adds play.last_trick_bonus for the eighth trick", "play", last_trick_bonus=None)


@mutant("bolt-penalty-keeps-the-barrel", "keeps a player on the barrel whose bolt penalty drops the score below it",
        "bolts.on_barrel")
def _bolt_keeps_barrel() -> list[Patch]:
    def make(original: Callable[..., None]) -> Any:
        def leave(state: MatchState, p: int, reason: str, penalty: int, events: Events) -> None:
            if reason != "dropped_below":
                original(state, p, reason, penalty, events)

        return leave

    return [wrap(deal_end, "_leave", make)]
