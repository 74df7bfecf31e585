"""How a replayed deal's numbers come about, step by step, from its events and the profile.

The explanation is built from what the implementation said (protocol events: the card
points of each trick, each marriage, each bonus, each bolt penalty and barrel step) and
from the profile's scoring knobs (rounding, the declarer's scoring rule, the defender
lock), in the order of DESIGN.md "Order of scoring at the end of a deal". It is arithmetic
the reader can follow, and it is checked: the explained total must equal the deal's
``points`` and the explained change its ``deltas`` (``SeatSum.agrees``), so an explanation
that leaves a bonus out shows as unexplained instead of printing a wrong sum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

import variants

if TYPE_CHECKING:
    from conformance.rulesets.replay import DealRecord

BONUS_WORDS = {"half_marriage": "half-marriage bonus", "last_trick": "last-trick bonus"}
BONUS_KNOBS = {"half_marriage": "marriages.half_capture_bonus", "last_trick": "play.last_trick_bonus"}
# End-of-deal events that change a score after the deal's own arithmetic (steps 1 to 6).
END_EVENTS = frozenset({"bonus", "bolt_penalty", "barrel_left", "barrel_entered", "score_reset", "dump", "deal_scored"})


@dataclass(frozen=True)
class Term:
    """One part of a seat's raw total: card points, a marriage, four aces, a bonus."""

    words: str
    points: Fraction


@dataclass
class SeatSum:
    """One seat's arithmetic for one deal."""

    seat: int
    role: str
    terms: list[Term] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)  # from the total to the deal's own result, in words
    result: Fraction = Fraction(0)  # the deal's own result, before the end-of-deal steps
    after: list[str] = field(default_factory=list)  # end-of-deal steps (bonuses, bolts, barrel, dump)
    delta: Fraction = Fraction(0)  # the whole explained change
    actual_points: Fraction | None = None
    actual_delta: Fraction | None = None

    @property
    def total(self) -> Fraction:
        return sum((term.points for term in self.terms), Fraction(0))

    def agrees(self) -> bool:
        """Does the explained arithmetic give the implementation's numbers?"""
        return self.total == self.actual_points and self.delta == self.actual_delta

    def text(self) -> str:
        text = f"seat {self.seat} ({self.role}):"
        if self.terms:
            text += " " + " + ".join(term.words for term in self.terms)
            text += f" = {number(self.total)}" if len(self.terms) > 1 else ""
        text += "".join(self.steps)
        text += f": {signed(self.result)}"
        if self.after:
            text += f"; then {', '.join(self.after)}: {signed(self.delta)} in all"
        if not self.agrees():
            text += (f" [unexplained: the implementation has total {number(self.actual_points)}, "
                     f"change {number(self.actual_delta)}]")
        return text


def number(value: Any) -> str:
    """57.5, 160, -115: halves as decimals, whole numbers without a point."""
    if value is None:
        return "-"
    fraction = Fraction(str(value))
    if fraction.denominator == 1:
        return str(fraction.numerator)
    return str(float(fraction))


def signed(value: Any) -> str:
    fraction = Fraction(str(value))
    return ("+" if fraction >= 0 else "") + number(fraction)


def round_total(total: Any, rule: str) -> Fraction:
    """A total rounded as the scoring knobs say: nearest_5 takes remainders 1-2 down and 3-4
    up, nearest_10 takes 0-4 down and 5-9 up (DESIGN.md, scoring)."""
    value = Fraction(str(total))
    if rule == "exact":
        return value
    unit = 5 if rule == "nearest_5" else 10
    rest = value % unit
    return value - rest + (unit if rest * 2 >= unit else 0)


def _terms(events: Sequence[dict[str, Any]], seat: int) -> list[Term]:
    """The parts of a seat's raw total, from the events of the deal."""
    cards = sum((Fraction(str(e.get("points", 0))) for e in events
                 if e.get("type") == "trick_won" and e.get("player") == seat), Fraction(0))
    terms = [Term(f"{number(cards)} card points", cards)]
    bonuses: dict[str, list[Fraction]] = {}
    for event in events:
        if event.get("player") != seat:
            continue
        kind = event.get("type")
        if kind == "marriage_declared":
            terms.append(Term(f"marriage {event.get('suit')} {number(event.get('points'))}", Fraction(str(event.get("points")))))
        elif kind == "aces_declared":
            terms.append(Term(f"four aces {number(event.get('points'))}", Fraction(str(event.get("points")))))
        elif kind == "bonus" and event.get("kind") in BONUS_WORDS:
            bonuses.setdefault(str(event.get("kind")), []).append(Fraction(str(event.get("points"))))
    for kind, amounts in bonuses.items():
        count = f"{len(amounts)} x " if len(amounts) > 1 else ""
        terms.append(Term(f"{count}{BONUS_WORDS[kind]} {number(amounts[0])}", sum(amounts, Fraction(0))))
    return terms


class _Deal:
    """The knobs and facts one deal's arithmetic needs."""

    def __init__(self, record: DealRecord, rules: variants.ResolvedProfile) -> None:
        self.record, self.rules = record, rules
        self.events = record.raw_events
        self.before = [Fraction(str(s)) for s in record.scores_before] or [Fraction(0)] * 3
        self.occupants = [seat for seat, on in enumerate(record.barrel_before) if on] if self.value("barrel.enabled") else []

    def value(self, knob: str) -> Any:
        return variants.thaw(self.rules.value(knob))

    def defending(self, seat: int, gain: Fraction, steps: list[str]) -> Fraction:
        """A defender's gain after the barrel's suspension and the defender lock."""
        if seat in self.occupants and self.value("barrel.defender_points") == "suspended":
            steps.append("; on the barrel, defending scores nothing (barrel.defender_points: suspended)")
            return Fraction(0)
        if not self.value("defender_lock.enabled") or gain <= 0:
            return gain
        start, score = Fraction(self.value("defender_lock.from")), self.before[seat]
        locked = gain
        if score >= start:
            locked = Fraction(0)
        elif self.value("defender_lock.mode") == "cap":
            locked = min(gain, start - score)
        ceiling = self.value("defender_lock.defender_max")
        if ceiling is not None:
            locked = max(Fraction(0), min(locked, Fraction(ceiling) - score))
        if locked != gain:
            steps.append(f"; the defender lock (from {start}, mode {self.value('defender_lock.mode')}, "
                         f"score before {number(score)}) keeps {signed(locked)}")
        return locked

    def played(self, seat: int) -> SeatSum:
        contract = Fraction(str(self.record.contract))
        if seat == self.record.declarer:
            return self._declarer(seat, contract)
        entry = SeatSum(seat, "defender", _terms(self.events, seat))
        rounding = self.value("scoring.defender_rounding")
        gain = round_total(entry.total, rounding)
        if rounding != "exact":
            entry.steps.append(f", rounded {rounding} to {number(gain)}")
        if not self.record.made:
            share = {"split_among_defenders": contract / 2, "each_defender": contract}.get(
                self.value("scoring.failed_contract_points"), Fraction(0))
            if share:
                gain += share
                entry.steps.append(f", + {number(share)} of the failed contract "
                                   f"(scoring.failed_contract_points: {self.value('scoring.failed_contract_points')})")
        entry.result = self.defending(seat, gain, entry.steps)
        return entry

    def _declarer(self, seat: int, contract: Fraction) -> SeatSum:
        entry = SeatSum(seat, "declarer", _terms(self.events, seat))
        rounding = self.value("scoring.declarer_rounding")
        total = round_total(entry.total, rounding)
        if total != entry.total:
            entry.steps.append(f", rounded {rounding} to {number(total)}")
        if total >= contract:
            rule = self.value("scoring.declarer_scores")
            entry.result = total if rule == "total" else contract
            what = f"scores its total {number(total)}" if rule == "total" else "scores the contract"
            entry.steps.append(f" >= contract {number(contract)}, made; {what} (scoring.declarer_scores: {rule})")
        elif seat in self.occupants and self.value("barrel.failed_contract") == "stay":
            entry.result = Fraction(0)
            entry.steps.append(f" < contract {number(contract)}, failed; on the barrel it costs nothing (barrel.failed_contract: stay)")
        else:
            entry.result = -contract
            entry.steps.append(f" < contract {number(contract)}, failed; loses the contract")
        return entry

    def given_up(self, seat: int) -> SeatSum:
        bid = Fraction(str(self.record.high_bid or 0))
        declarer = self.record.declarer
        count = next((int(e.get("count", 1)) for e in self.events if e.get("type") == "give_up"), 1)
        if seat == declarer:
            entry = SeatSum(seat, "declarer gives up")
            loses = self.value("giving_up.declarer_loses")
            loss = bid if loses == "winning_bid" else Fraction(0)
            free = loses == "winning_bid" and count < self.value("giving_up.declarer_loses_from")
            loss = Fraction(0) if free else loss
            why = (f"giving_up.declarer_loses_from: {self.value('giving_up.declarer_loses_from')}" if free
                   else f"giving_up.declarer_loses: {loses}")
            entry.steps.append(f" give-up #{count}, loses {'the winning bid ' + number(bid) if loss else 'nothing'} ({why})")
            start = self.value("giving_up.penalty_from")
            if start is not None and count >= start and (
                    self.value("giving_up.penalty_repeats") == "each_from" or count % start == 0):
                loss += Fraction(self.value("giving_up.penalty"))
                entry.steps.append(f" and the late give-up penalty {self.value('giving_up.penalty')}")
            entry.result = -loss
            return entry
        entry = SeatSum(seat, "defender")
        if count < self.value("giving_up.defenders_paid_from"):
            entry.steps.append(f" not paid for give-up #{count} (giving_up.defenders_paid_from: "
                               f"{self.value('giving_up.defenders_paid_from')})")
            return entry
        if self.value("giving_up.defender_gain") == "fixed":
            gain = Fraction(self.value("giving_up.defender_gain_amount"))
            entry.steps.append(f" the fixed give-up gain {number(gain)}")
        else:
            rounding = self.value("giving_up.half_bid_rounding")
            half = bid / 2
            gain = {"up_to_5": Fraction(-((-half) // 5) * 5), "down": Fraction(half.numerator // half.denominator)}.get(rounding, half)
            entry.steps.append(f" half the winning bid {number(bid)} = {number(half)}"
                               + (f", rounded {rounding} to {number(gain)}" if gain != half else ""))
        entry.result = self.defending(seat, gain, entry.steps)
        return entry

    def end_of_deal(self, entries: list[SeatSum]) -> None:
        """Steps 1 to 6 of the end of a deal, from its events: what each score became."""
        running = [self.before[e.seat] + e.result for e in entries]
        threshold = Fraction(self.value("barrel.threshold")) if self.value("barrel.enabled") else None
        won = {e.get("player") for e in self.events if e.get("type") == "barrel_left" and e.get("reason") == "won"}
        occupants_capped = False
        for event in self.events:
            kind, seat = event.get("type"), event.get("player")
            if kind not in END_EVENTS:
                continue
            if threshold is not None and not occupants_capped and kind not in ("bonus", "bolt_penalty"):
                occupants_capped = True  # occupants are capped after the bolts (step 3)
                for occupant in self.occupants:
                    if occupant not in won:
                        self._cap(entries[occupant], running, occupant, threshold, "stays on the barrel")
            if not isinstance(seat, int) or not 0 <= seat < 3:
                continue
            entry = entries[seat]
            if kind == "bonus" and event.get("kind") == "four_nines":
                running[seat] += Fraction(str(event.get("points")))
                entry.after.append(f"four-nines bonus {signed(event.get('points'))}")
            elif kind == "bolt_penalty":
                running[seat] -= Fraction(str(event.get("penalty")))
                entry.after.append(f"bolt penalty -{number(event.get('penalty'))}")
            elif kind == "barrel_left":
                penalty = Fraction(str(event.get("penalty") or 0))
                running[seat] -= penalty
                entry.after.append(f"leaves the barrel ({event.get('reason')})" + (f" -{number(penalty)}" if penalty else ""))
            elif kind == "barrel_entered" and threshold is not None:
                self._cap(entry, running, seat, threshold, "enters the barrel")
            elif kind in ("score_reset", "dump"):
                running[seat] = Fraction(0)
                entry.after.append("score reset to 0 (barrel.failed_visit_reset)" if kind == "score_reset"
                                   else f"dump: {number(self.value('dump.score'))} goes back to 0")
        for entry in entries:
            entry.delta = running[entry.seat] - self.before[entry.seat]

    def _cap(self, entry: SeatSum, running: list[Fraction], seat: int, threshold: Fraction, words: str) -> None:
        score = running[seat]
        if self.value("barrel.arrival_cap") == "uncapped" and score < Fraction(self.value("match_end.target")):
            capped = score
        else:
            capped = min(score, threshold)
        if capped != score:
            entry.after.append(f"{words}, score {number(score)} capped at {number(threshold)}")
        elif words == "enters the barrel":
            entry.after.append(f"enters the barrel at {number(score)}")
        running[seat] = capped


def seat_sums(record: DealRecord, rules: variants.ResolvedProfile) -> list[SeatSum]:
    """Each seat's arithmetic for a scored deal (played or given up); [] for any other."""
    if record.kind not in ("played", "given_up") or record.points is None or record.deltas is None:
        return []
    deal = _Deal(record, rules)
    entries = [deal.played(seat) if record.kind == "played" else deal.given_up(seat) for seat in range(3)]
    deal.end_of_deal(entries)
    for entry in entries:
        entry.actual_points = Fraction(str(record.points[entry.seat]))
        entry.actual_delta = Fraction(str(record.deltas[entry.seat]))
    if record.kind == "given_up":  # nothing is counted in a given-up deal; its points are all 0
        for entry in entries:
            entry.terms = []
    return entries
