"""Arithmetic of the end of a deal: rounding, give-up gains, the 800 rule.

The order of scoring (DESIGN.md "Order of scoring at the end of a deal") lives in
``deal_end.py``; this module holds the pure functions it uses, each testable alone.

Points are whole numbers except where a rule halves an odd amount, so a score is an int,
and a ``Fraction`` only while it holds a half: int arithmetic costs a tenth of Fraction's.
``whole`` turns a Fraction that has come back to a whole number into an int again.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from .rules import DefenderLockRules, GivingUpRules

Number = Fraction | int


def whole(value: Number) -> Number:
    """The value as an int when it is a whole number, else the Fraction."""
    if isinstance(value, int) or value.denominator != 1:
        return value
    return value.numerator


def number(value: Fraction | int) -> int | float:
    """A score as JSON wants it: an integer, or a float for halves (exact in binary)."""
    if isinstance(value, int):
        return value
    return int(value) if value.denominator == 1 else float(value)


def numbers(values: Iterable[Number]) -> list[int | float]:
    """``number`` of each score, in one call: most are ints, kept as they are."""
    json: list[int | float] = []
    for value in values:
        json.append(value if isinstance(value, int) else number(value))
    return json


def round_score(value: Number, rounding: str) -> Number:
    """A total rounded per ``exact`` | ``nearest_5`` | ``nearest_10``.

    ``nearest_5``: remainder 1-2 down, 3-4 up (below 2.5 down). ``nearest_10``:
    remainder 0-4 down, 5-9 up (below 5 down). Negative values never occur (totals are
    card points and marriages) but round the same way by their remainder.
    """
    if rounding == "exact":
        return value
    unit = 5 if rounding == "nearest_5" else 10
    if isinstance(value, int):  # totals of card points are whole: integer arithmetic is enough
        remainder = value % unit
        return value - remainder + (unit if remainder * 2 >= unit else 0)
    exact = Fraction(value)
    rest = exact % unit
    base = exact - rest
    return whole(base if rest * 2 < unit else base + unit)


def give_up_defender_gain(rules: GivingUpRules, bid: int) -> Number:
    """What each defender gains when the declarer gives up (before barrel and 800 limits)."""
    if rules.defender_gain == "fixed":
        return rules.defender_gain_amount
    if rules.half_bid_rounding == "up_to_5":
        return -(-bid // 10) * 5  # half the bid, up to the next multiple of 5
    if rules.half_bid_rounding == "down":
        return bid // 2  # a half point is dropped: 115 pays 57
    return whole(Fraction(bid, 2))


def give_up_declarer_loss(rules: GivingUpRules, bid: int, count: int) -> int:
    """What the declarer loses for the ``count``-th give-up of the match (a positive number)."""
    loss = bid if rules.declarer_loses == "winning_bid" and count >= rules.declarer_loses_from else 0
    if rules.penalty_from is not None and count >= rules.penalty_from:
        # each_from: every give-up from the penalty_from-th on; every_nth: the penalty_from-th, twice that...
        if rules.penalty_repeats == "each_from" or count % rules.penalty_from == 0:
            loss += rules.penalty
    return loss


def locked_defender_gain(lock: DefenderLockRules, score: Number, gain: Number) -> Number:
    """A defender's gain after the 800 rule: ``stop_counting`` or ``cap``, then ``defender_max``."""
    if not lock.enabled or gain <= 0:
        return gain
    if score >= lock.from_:
        gain = 0
    elif lock.mode == "cap":
        gain = min(gain, lock.from_ - score)
    if lock.defender_max is not None:
        gain = max(0, min(gain, lock.defender_max - score))
    return gain
