"""The shared words of DESIGN.md as types, defined once for every package.

Every package may import this module (it imports nothing of the project and only the standard
library, so the engine's start-up does not pay for the profile loader). The string enums are
``StrEnum``: a member equals the protocol's string (``Phase.AUCTION == "auction"``), so JSON
read from an implementation compares with them as it is. The schemas stay the source of truth
for what a file may hold; tests/spec/test_vocabulary.py checks these types against them.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import Any, Literal, Mapping

# --- cards (DESIGN.md "Players, cards, suits") ---------------------------------------------

SUITS: tuple[str, ...] = ("S", "C", "D", "H")  # the state's suit order
RANKS: tuple[str, ...] = ("A", "10", "K", "Q", "J", "9")  # strongest first
CARD_POINTS: Mapping[str, int] = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
DECK: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)  # the 24 codes, the state's order


# --- the game ----------------------------------------------------------------------------------


class Phase(StrEnum):
    """The phase of a deal (DESIGN.md "Phases"), as the state's ``phase`` field names it."""

    CLAIM = "claim"
    AUCTION = "auction"
    EXCHANGE = "exchange"
    CONTRACT = "contract"
    PLAY = "play"
    DEAL_OVER = "deal_over"
    MATCH_OVER = "match_over"


ENDED: tuple[Phase, ...] = (Phase.DEAL_OVER, Phase.MATCH_OVER)  # the phases in which a deal has ended


# The rules of a profile as plain values: section -> knob -> value (a resolved profile's ``rules``,
# or ``variants.thaw`` of them, which fit edits). The engine's typed, checked reading of them is
# ``reference_impl.Rules``.
RuleValues = Mapping[str, Mapping[str, Any]]
EditableRuleValues = dict[str, dict[str, Any]]


# --- the values of the choice knobs (DESIGN.md "Knobs"; spec/schema/profile.schema.json) ------

NextDealer = Literal["left"]
DealerAfterRedeal = Literal["same", "next"]
Opening = Literal["forced", "at_least"]
Raise = Literal["any", "one_step"]
Ceiling = Literal["marriages_held", "none"]
AllPass = Literal["opener_declares", "redeal"]
TalonShown = Literal["always", "from_bid", "never"]
ContractCeiling = Literal["auction", "none"]
ContractCeilingHand = Literal["kept_hand", "hand_with_talon", "auction_hand"]
LocalName = Literal["rospis", "concede", "bomb", "give_up"]
GiveUpMoment = Literal["before_exchange", "with_contract", "either"]
DeclarerLoses = Literal["winning_bid", "nothing"]
DefenderGain = Literal["half_bid", "fixed"]
HalfBidRounding = Literal["exact", "up_to_5", "down"]
PenaltyRepeats = Literal["each_from", "every_nth"]
FirstLead = Literal["declarer"]
OvertrumpAgainst = Literal["anyone", "declarer"]
Declaration = Literal["optional", "automatic"]
TrumpFrom = Literal["this_trick", "next_trick"]
Rounding = Literal["exact", "nearest_5", "nearest_10"]
DeclarerScores = Literal["contract", "total"]
FailedContractPoints = Literal["lost", "split_among_defenders", "each_defender"]
BoltZero = Literal["zero_points", "no_tricks"]
BoltCounting = Literal["cumulative", "consecutive"]
AttemptCounts = Literal["every_deal", "as_declarer"]
DefenderPoints = Literal["suspended", "counted"]
FailedBarrelContract = Literal["leave", "stay"]
ArrivalCap = Literal["capped", "uncapped"]
WinBy = Literal["made_contract", "any_gain"]
Crowding = Literal["knock_off_occupants", "arrivals_fall_back", "all_fall"]
ArrivalsOverLimit = Literal["all_fall_back", "highest_stay"]
LockMode = Literal["stop_counting", "cap"]
AfterExchangeWindow = Literal["after_contract", "before_contract"]
TieBreak = Literal["declarer_then_highest", "highest", "highest_then_play_on", "declarer_then_highest_then_play_on", "draw"]
OverTarget = Literal["reach", "exact_only"]
RedealCondition = Literal["four_nines", "three_nines", "four_jacks", "hand_under_points", "talon_under_points",
                          "two_nines_in_talon"]
RedealWindow = Literal["before_bidding", "before_exchange", "after_exchange"]
RedealBy = Literal["automatic", "claim"]

# "section.knob" -> the type of its values, for every knob whose schema is an enum (a redeal rule's
# fields under "redeals.rules[].FIELD"); tests/spec/test_vocabulary.py checks it against the schema.
CHOICE_KNOBS: Mapping[str, Any] = {
    "deal.next_dealer": NextDealer, "deal.dealer_after_redeal": DealerAfterRedeal,
    "auction.opening": Opening, "auction.raise": Raise, "auction.ceiling": Ceiling, "auction.all_pass": AllPass,
    "talon.shown": TalonShown, "talon.contract_ceiling": ContractCeiling,
    "talon.contract_ceiling_hand": ContractCeilingHand,
    "giving_up.local_name": LocalName, "giving_up.moment": GiveUpMoment, "giving_up.declarer_loses": DeclarerLoses,
    "giving_up.defender_gain": DefenderGain, "giving_up.half_bid_rounding": HalfBidRounding,
    "giving_up.penalty_repeats": PenaltyRepeats,
    "play.first_lead": FirstLead, "play.overtrump_against": OvertrumpAgainst,
    "marriages.declaration": Declaration, "marriages.trump_from": TrumpFrom,
    "scoring.declarer_rounding": Rounding, "scoring.defender_rounding": Rounding,
    "scoring.declarer_scores": DeclarerScores, "scoring.failed_contract_points": FailedContractPoints,
    "bolts.zero": BoltZero, "bolts.counting": BoltCounting,
    "barrel.attempt_counts": AttemptCounts, "barrel.defender_points": DefenderPoints,
    "barrel.failed_contract": FailedBarrelContract, "barrel.arrival_cap": ArrivalCap, "barrel.win_by": WinBy,
    "barrel.crowding": Crowding, "barrel.arrivals_over_limit": ArrivalsOverLimit,
    "defender_lock.mode": LockMode,
    "redeals.after_exchange_window": AfterExchangeWindow,
    "redeals.rules[].condition": RedealCondition, "redeals.rules[].when": RedealWindow, "redeals.rules[].by": RedealBy,
    "match_end.tie_break": TieBreak, "match_end.over_target": OverTarget,
}  # fmt: skip


# --- the runner's words (DESIGN.md "Outcomes, exit codes and verdicts") ------------------------


class Outcome(StrEnum):
    """What running one case against one profile came to (a verify report's ``outcome``)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"
    NOT_DECLARED = "not_declared"
    CASE_BUG = "case_bug"


OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)  # in the order reports count them


class ExitCode(IntEnum):
    """The exit status of every ``thousand`` command (verify, fit, fuzz, validate, compare, ...),
    ``python -m mutants`` and the generators' ``--check``; a signal ends a run with 128 + its number."""

    PASSED = 0  # everything asked for ran and passed (or: the files are valid, current, ...)
    FAILED = 1  # something ran and did not pass: a failure, a finding, an invalid or stale file
    USAGE = 2  # a command line that cannot give an honest run; nothing ran
    INTERNAL = 3  # a bug of the tool itself; the reports hold what was done
    CANNOT_START = 4  # the implementation could not start or broke the protocol; nothing was judged by it
    NOTHING_CHECKED = 5  # every selected case was skipped or its profile not declared


class Observation(StrEnum):
    """The kinds of observation at one step: the legal set before the action, the reply to it, and a
    field of the state after it (``state.FIELD``: the field's name follows the prefix)."""

    LEGAL = "legal"
    REPLY = "reply"
    STATE = "state"


class ResidualVerdict(StrEnum):
    """What fit's residual judges a root cause no knob value it tried explains."""

    NO_KNOB = "a rule the schema has no knob for"
    BUG = "likely a bug"
    # a cause one or two switches changed reproduce on its cases (``fit.Fitter.paired``): knobs
    # do explain it, though fit's search did not adopt them
    PAIRED = "knob values fit did not adopt reproduce it"
    # a cause no value fit tried reproduces, among whose knobs is a number or a table: fit tries
    # the few values the observations show, not a domain of thousands (a marriage table of four
    # worths), so a value it never tried may be the implementation's rule
    UNTRIED = "values fit did not try may explain it"
    # every observation that shows it also differs by another cause's difference: no value of its
    # knobs can make such an observation match while that stays, so the evidence cannot say
    TANGLED = "tangled with another cause"
