"""The knobs of a resolved profile as typed, frozen values (DESIGN.md "Knobs").

``Rules.from_document(doc)`` reads the ``rules`` of a resolved profile document and
checks every knob the engine uses; a missing or mistyped knob is one ``RulesError``
naming the section, the knob and what was expected. The engine reads nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, get_args

from spec.vocabulary import (
    AfterExchangeWindow,
    AllPass,
    ArrivalCap,
    ArrivalsOverLimit,
    AttemptCounts,
    BoltCounting,
    BoltZero,
    Ceiling,
    ContractCeiling,
    ContractCeilingHand,
    Crowding,
    DealerAfterRedeal,
    Declaration,
    DeclarerLoses,
    DeclarerScores,
    DefenderGain,
    DefenderPoints,
    FailedBarrelContract,
    FailedContractPoints,
    FirstLead,
    GiveUpMoment,
    HalfBidRounding,
    LocalName,
    LockMode,
    NextDealer,
    Opening,
    OverTarget,
    OvertrumpAgainst,
    PenaltyRepeats,
    Raise,
    RedealBy,
    RedealCondition,
    RedealWindow,
    Rounding,
    TalonShown,
    TieBreak,
    TrumpFrom,
    WinBy,
)

from .errors import RulesError


class _Section:
    """Reads one section's knobs with one clear error per problem."""

    def __init__(self, rules: Mapping[str, Any], name: str) -> None:
        raw = rules.get(name)
        if not isinstance(raw, Mapping):
            raise RulesError(f"rules.{name}: expected a mapping of knobs, got {_show(raw)}")
        self.name = name
        self.raw = raw

    def _value(self, knob: str) -> Any:
        if knob not in self.raw:
            raise RulesError(f"rules.{self.name}.{knob}: missing knob")
        return self.raw[knob]

    def _fail(self, knob: str, expected: str, value: Any) -> RulesError:
        return RulesError(f"rules.{self.name}.{knob}: expected {expected}, got {_show(value)}")

    def integer(self, knob: str) -> int:
        value = self._value(knob)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(knob, "an integer", value)
        return value

    def opt_int(self, knob: str) -> int | None:
        value = self.raw.get(knob)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(knob, "an integer or null", value)
        return value

    def boolean(self, knob: str) -> bool:
        value = self._value(knob)
        if not isinstance(value, bool):
            raise self._fail(knob, "true or false", value)
        return value

    def choice(self, knob: str, values: Any) -> Any:
        """A choice knob's value, one of ``values``: its Literal type (spec/vocabulary.py)."""
        value = self._value(knob)
        choices: tuple[str, ...] = get_args(values)
        if value not in choices:
            raise self._fail(knob, "one of " + ", ".join(choices), value)
        return str(value)

    def opt_bool(self, knob: str, default: bool = False) -> bool:
        """A defaultable switch: absent means ``default``."""
        return default if knob not in self.raw else self.boolean(knob)

    def opt_choice(self, knob: str, default: str, values: Any) -> Any:
        """A display-only or defaultable knob: absent means ``default``."""
        if knob not in self.raw:
            return default
        return self.choice(knob, values)


def _show(value: Any) -> str:
    return "nothing" if value is None else repr(value)


@dataclass(frozen=True, slots=True)
class DealRules:
    next_dealer: NextDealer
    dealer_after_redeal: DealerAfterRedeal


@dataclass(frozen=True, slots=True)
class AuctionRules:
    opening_bid: int
    opening: Opening
    bid_step: int
    high_bid_step: int | None
    high_bid_from: int
    raise_: Raise
    marriage_needed_above: int | None
    ceiling: Ceiling
    max_bid: int
    stop_at: int | None
    # the knobs of the variant-axes work default to the behaviour before they existed
    opener_may_pass: bool = False
    dealer_must_bid: bool = False
    all_pass: AllPass = "opener_declares"
    pre_talon_max: int | None = None
    barrel_min_bid: int | None = None
    reentry: bool = False
    ends_at_max_bid: bool = False


@dataclass(frozen=True, slots=True)
class TalonRules:
    shown: TalonShown
    shown_from_bid: int
    contract_raise: bool
    contract_ceiling_hand: ContractCeilingHand
    contract_step: bool = True
    contract_ceiling: ContractCeiling = "auction"


@dataclass(frozen=True, slots=True)
class GivingUpRules:
    allowed: bool
    local_name: LocalName
    moment: GiveUpMoment
    declarer_loses: DeclarerLoses
    defender_gain: DefenderGain
    defender_gain_amount: int
    half_bid_rounding: HalfBidRounding
    defenders_paid_from: int
    penalty: int
    penalty_from: int | None
    limit: int | None
    on_barrel: bool
    penalty_repeats: PenaltyRepeats = "each_from"
    declarer_loses_from: int = 1


@dataclass(frozen=True, slots=True)
class PlayRules:
    first_lead: FirstLead
    must_trump: bool
    must_beat: bool
    must_overtrump: bool
    overtrump_against: OvertrumpAgainst = "anyone"
    beat_after_trump: bool = False
    must_undertrump: bool = True
    last_trick_bonus: int | None = None
    may_trump_instead: bool = False


@dataclass(frozen=True, slots=True)
class MarriageRules:
    values: Mapping[str, int]
    declaration: Declaration
    first_trick: bool
    trump_from: TrumpFrom
    four_aces: int | None
    last_trick: int | None = None
    one_trump: bool = False
    half_capture_bonus: int | None = None


@dataclass(frozen=True, slots=True)
class ScoringRules:
    declarer_rounding: Rounding
    defender_rounding: Rounding
    declarer_scores: DeclarerScores = "contract"
    failed_contract_points: FailedContractPoints = "lost"


@dataclass(frozen=True, slots=True)
class BoltRules:
    enabled: bool
    zero: BoltZero
    every: int
    penalty: int
    counting: BoltCounting
    on_barrel: bool
    in_give_up_deal: bool
    declarer: bool = False


@dataclass(frozen=True, slots=True)
class BarrelRules:
    enabled: bool
    threshold: int
    jump_over_wins: bool
    attempts: int | None  # None: no limit
    attempts_penalty: int
    attempt_counts: AttemptCounts
    give_up_deal_counts: bool
    min_contract: int
    defender_points: DefenderPoints
    max_occupants: int | None
    knock_off_penalty: int
    failed_visit_reset: int | None
    failed_contract: FailedBarrelContract = "leave"
    arrival_cap: ArrivalCap = "capped"
    win_by: WinBy = "made_contract"
    crowding: Crowding = "knock_off_occupants"
    arrivals_over_limit: ArrivalsOverLimit = "all_fall_back"


@dataclass(frozen=True, slots=True)
class DefenderLockRules:
    enabled: bool
    from_: int
    mode: LockMode
    defender_max: int | None


@dataclass(frozen=True, slots=True)
class DumpRules:
    enabled: bool
    score: int
    negative: bool


@dataclass(frozen=True, slots=True)
class RedealRule:
    condition: RedealCondition
    points: int | None
    when: RedealWindow
    by: RedealBy


@dataclass(frozen=True, slots=True)
class MatchEndRules:
    target: int
    defenders_can_win: bool
    tie_break: TieBreak
    over_target: OverTarget = "reach"


@dataclass(frozen=True, slots=True)
class RedealTiming:
    """The redeal knobs beside the list of rules."""

    four_nines_bonus: int | None = None
    after_exchange_window: AfterExchangeWindow = "after_contract"


@dataclass(frozen=True, slots=True)
class Rules:
    """Every knob the engine reads, section by section."""

    deal: DealRules
    auction: AuctionRules
    talon: TalonRules
    giving_up: GivingUpRules
    play: PlayRules
    marriages: MarriageRules
    scoring: ScoringRules
    bolts: BoltRules
    barrel: BarrelRules
    defender_lock: DefenderLockRules
    dump: DumpRules
    redeals: tuple[RedealRule, ...]
    match_end: MatchEndRules
    redeal_timing: RedealTiming = RedealTiming()

    @staticmethod
    def from_document(document: Mapping[str, Any]) -> Rules:
        """The rules of a resolved profile document (``{"profile", ..., "rules": {...}}``)."""
        if not isinstance(document, Mapping):
            raise RulesError(f"profile document: expected a mapping, got {_show(document)}")
        rules = document.get("rules")
        if not isinstance(rules, Mapping):
            raise RulesError(f"profile document: expected a 'rules' mapping, got {_show(rules)}")
        return Rules(
            deal=_deal(_Section(rules, "deal")),
            auction=_auction(_Section(rules, "auction")),
            talon=_talon(_Section(rules, "talon")),
            giving_up=_giving_up(_Section(rules, "giving_up")),
            play=_play(_Section(rules, "play")),
            marriages=_marriages(_Section(rules, "marriages")),
            scoring=_scoring(_Section(rules, "scoring")),
            bolts=_bolts(_Section(rules, "bolts")),
            barrel=_barrel(_Section(rules, "barrel")),
            defender_lock=_defender_lock(_Section(rules, "defender_lock")),
            dump=_dump(_Section(rules, "dump")),
            redeals=_redeals(_Section(rules, "redeals")),
            match_end=_match_end(_Section(rules, "match_end")),
            redeal_timing=_redeal_timing(_Section(rules, "redeals")),
        )


def _deal(s: _Section) -> DealRules:
    return DealRules(s.choice("next_dealer", NextDealer), s.choice("dealer_after_redeal", DealerAfterRedeal))


def _auction(s: _Section) -> AuctionRules:
    rules = AuctionRules(
        opening_bid=s.integer("opening_bid"),
        opening=s.choice("opening", Opening),
        bid_step=s.integer("bid_step"),
        high_bid_step=s.opt_int("high_bid_step"),
        high_bid_from=s.opt_int("high_bid_from") or 200,
        raise_=s.choice("raise", Raise),
        marriage_needed_above=s.opt_int("marriage_needed_above"),
        ceiling=s.choice("ceiling", Ceiling),
        max_bid=s.integer("max_bid"),
        stop_at=s.opt_int("stop_at"),
        opener_may_pass=s.boolean("opener_may_pass"),
        dealer_must_bid=s.boolean("dealer_must_bid"),
        all_pass=s.choice("all_pass", AllPass),
        pre_talon_max=s.opt_int("pre_talon_max"),
        barrel_min_bid=s.opt_int("barrel_min_bid"),
        reentry=s.boolean("reentry"),
        ends_at_max_bid=s.boolean("ends_at_max_bid"),
    )
    if rules.bid_step <= 0 or (rules.high_bid_step is not None and rules.high_bid_step <= 0):
        raise RulesError(f"rules.auction.bid_step: expected a positive step, got {rules.bid_step}")
    return rules


def _talon(s: _Section) -> TalonRules:
    return TalonRules(
        shown=s.choice("shown", TalonShown),
        shown_from_bid=s.opt_int("shown_from_bid") or 0,
        contract_raise=s.boolean("contract_raise"),
        contract_ceiling_hand=s.choice("contract_ceiling_hand", ContractCeilingHand),
        contract_step=s.boolean("contract_step"),
        contract_ceiling=s.opt_choice("contract_ceiling", "auction", ContractCeiling),
    )


def _giving_up(s: _Section) -> GivingUpRules:
    allowed = s.boolean("allowed")
    if not allowed:
        # the other knobs of a section that is off are inert; read what is there
        return GivingUpRules(False, "give_up", "with_contract", "nothing", "fixed", 0, "exact", 1, 0, None, None, False)
    return GivingUpRules(
        allowed=True,
        local_name=s.opt_choice("local_name", "give_up", LocalName),
        moment=s.choice("moment", GiveUpMoment),
        declarer_loses=s.choice("declarer_loses", DeclarerLoses),
        defender_gain=s.choice("defender_gain", DefenderGain),
        defender_gain_amount=s.opt_int("defender_gain_amount") or 0,
        half_bid_rounding=s.opt_choice("half_bid_rounding", "exact", HalfBidRounding),
        defenders_paid_from=s.opt_int("defenders_paid_from") or 1,
        declarer_loses_from=s.opt_int("declarer_loses_from") or 1,
        penalty=s.opt_int("penalty") or 0,
        penalty_from=s.opt_int("penalty_from"),
        limit=s.opt_int("limit"),
        on_barrel=s.boolean("on_barrel"),
        penalty_repeats=s.choice("penalty_repeats", PenaltyRepeats),
    )


def _play(s: _Section) -> PlayRules:
    return PlayRules(
        first_lead=s.choice("first_lead", FirstLead),
        must_trump=s.boolean("must_trump"),
        must_beat=s.boolean("must_beat"),
        must_overtrump=s.boolean("must_overtrump"),
        overtrump_against=s.choice("overtrump_against", OvertrumpAgainst),
        beat_after_trump=s.boolean("beat_after_trump"),
        must_undertrump=s.boolean("must_undertrump"),
        last_trick_bonus=s.opt_int("last_trick_bonus"),
        may_trump_instead=s.opt_bool("may_trump_instead"),
    )


def _marriages(s: _Section) -> MarriageRules:
    values = s._value("values")
    if not isinstance(values, Mapping) or set(values) != {"S", "C", "D", "H"}:
        raise s._fail("values", "a mapping with the suits S, C, D and H", values)
    for suit, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesError(f"rules.marriages.values.{suit}: expected an integer, got {_show(value)}")
    return MarriageRules(
        values=dict(values),
        declaration=s.choice("declaration", Declaration),
        first_trick=s.boolean("first_trick"),
        trump_from=s.choice("trump_from", TrumpFrom),
        four_aces=s.opt_int("four_aces"),
        last_trick=s.opt_int("last_trick"),
        one_trump=s.boolean("one_trump"),
        half_capture_bonus=s.opt_int("half_capture_bonus"),
    )


def _scoring(s: _Section) -> ScoringRules:
    return ScoringRules(
        s.choice("declarer_rounding", Rounding),
        s.choice("defender_rounding", Rounding),
        s.opt_choice("declarer_scores", "contract", DeclarerScores),
        s.opt_choice("failed_contract_points", "lost", FailedContractPoints),
    )


def _bolts(s: _Section) -> BoltRules:
    if not s.boolean("enabled"):
        return BoltRules(False, "zero_points", 3, 0, "cumulative", False, False)
    rules = BoltRules(
        enabled=True,
        zero=s.choice("zero", BoltZero),
        every=s.integer("every"),
        penalty=s.integer("penalty"),
        counting=s.choice("counting", BoltCounting),
        on_barrel=s.boolean("on_barrel"),
        in_give_up_deal=s.boolean("in_give_up_deal"),
        declarer=s.opt_bool("declarer"),
    )
    if rules.every <= 0:
        raise RulesError(f"rules.bolts.every: expected a positive integer, got {rules.every}")
    return rules


def _barrel(s: _Section) -> BarrelRules:
    if not s.boolean("enabled"):
        return BarrelRules(False, 0, False, 0, 0, "every_deal", False, 0, "counted", None, 0, None)
    return BarrelRules(
        enabled=True,
        threshold=s.integer("threshold"),
        jump_over_wins=s.boolean("jump_over_wins"),
        attempts=s.opt_int("attempts"),
        attempts_penalty=s.integer("attempts_penalty"),
        attempt_counts=s.choice("attempt_counts", AttemptCounts),
        give_up_deal_counts=s.boolean("give_up_deal_counts"),
        min_contract=s.integer("min_contract"),
        defender_points=s.choice("defender_points", DefenderPoints),
        max_occupants=s.opt_int("max_occupants"),
        knock_off_penalty=s.opt_int("knock_off_penalty") or 0,
        failed_visit_reset=s.opt_int("failed_visit_reset"),
        failed_contract=s.opt_choice("failed_contract", "leave", FailedBarrelContract),
        arrival_cap=s.opt_choice("arrival_cap", "capped", ArrivalCap),
        win_by=s.opt_choice("win_by", "made_contract", WinBy),
        crowding=s.opt_choice("crowding", "knock_off_occupants", Crowding),
        arrivals_over_limit=s.opt_choice("arrivals_over_limit", "all_fall_back", ArrivalsOverLimit),
    )


def _defender_lock(s: _Section) -> DefenderLockRules:
    if not s.boolean("enabled"):
        return DefenderLockRules(False, 0, "stop_counting", None)
    return DefenderLockRules(True, s.integer("from"), s.choice("mode", LockMode), s.opt_int("defender_max"))


def _dump(s: _Section) -> DumpRules:
    if not s.boolean("enabled"):
        return DumpRules(False, 0, False)
    return DumpRules(True, s.integer("score"), s.boolean("negative"))


def _redeals(s: _Section) -> tuple[RedealRule, ...]:
    listed = s._value("rules")
    if not isinstance(listed, list):
        raise s._fail("rules", "a list of redeal rules", listed)
    found = []
    for index, raw in enumerate(listed):
        if not isinstance(raw, Mapping):
            raise RulesError(f"rules.redeals.rules[{index}]: expected a mapping, got {_show(raw)}")
        item = _Section({"rule": raw}, "rule")
        item.name = f"redeals.rules[{index}]"
        condition = item.choice("condition", RedealCondition)
        points = item.integer("points") if condition.endswith("_under_points") else item.opt_int("points")
        found.append(RedealRule(condition, points, item.choice("when", RedealWindow), item.choice("by", RedealBy)))
    return tuple(found)


def _match_end(s: _Section) -> MatchEndRules:
    return MatchEndRules(
        s.integer("target"),
        s.boolean("defenders_can_win"),
        s.choice("tie_break", TieBreak),
        s.opt_choice("over_target", "reach", OverTarget),
    )


def _redeal_timing(s: _Section) -> RedealTiming:
    return RedealTiming(
        four_nines_bonus=s.opt_int("four_nines_bonus"),
        after_exchange_window=s.opt_choice("after_exchange_window", "after_contract", AfterExchangeWindow),
    )
