"""One test per row of the research digest's table "Where the profiles differ".

Each test checks the resolved values of every profile against the seed section that states
them (seed 000: gambler-club, 001: classic, 003: skill-games, 004 with Kurnik: polish and
polish-tournament). repino-2013 inherits gambler-club and is checked with it.
"""

from __future__ import annotations

from typing import Any

from variants import resolve

Expected = dict[str, dict[str, Any]]


def assert_values(expected: Expected) -> None:
    """Every profile named has exactly the expected value for every knob listed."""
    problems = []
    for name, knobs in expected.items():
        profile = resolve(name)
        for knob, value in knobs.items():
            actual = profile.value(knob)
            if isinstance(actual, tuple):
                actual = [dict(item) for item in actual]
            elif not isinstance(actual, (str, int, bool, type(None))):
                actual = dict(actual)
            if actual != value:
                problems.append(f"{name} {knob}: expected {value!r}, got {actual!r}")
    assert not problems, "\n".join(problems)


def with_repino(expected: Expected) -> Expected:
    """repino-2013 inherits every gambler-club value."""
    return {**expected, "repino-2013": expected["gambler-club"]}


def test_opening_row() -> None:
    """Opening: seed 000 §03, seed 001 Bidding ("at least 100"), seed 003 Bidding, seed 004 Bidding."""
    assert_values(with_repino({
        "gambler-club": {"auction.opening_bid": 100, "auction.opening": "forced"},
        "classic": {"auction.opening_bid": 100, "auction.opening": "at_least"},
        "skill-games": {"auction.opening_bid": 100, "auction.opening": "forced"},
        "polish": {"auction.opening_bid": 100, "auction.opening": "forced"},
        "polish-tournament": {"auction.opening_bid": 100, "auction.opening": "forced"},
    }))


def test_bid_step_row() -> None:
    """Bid step: seed 000 §03 (multiples of 5), seed 001 Bidding, seed 003 Bidding, seed 004 Bidding (10; Kurnik: jumps allowed)."""
    five = {"auction.bid_step": 5, "auction.high_bid_step": None, "auction.raise": "any"}
    ten = {"auction.bid_step": 10, "auction.high_bid_step": None, "auction.raise": "any"}
    assert_values(with_repino({
        "gambler-club": five, "classic": five, "skill-games": five, "polish": ten, "polish-tournament": ten,
    }))


def test_above_120_row() -> None:
    """Above 120 a marriage is needed: seed 000 §03, seed 001 Bidding, seed 003 Bidding, seed 004 Bidding."""
    rule = {"auction.marriage_needed_above": 120}
    assert_values(with_repino({name: rule for name in ("gambler-club", "classic", "skill-games", "polish", "polish-tournament")}))


def test_ceiling_row() -> None:
    """Ceiling: 120 + marriages held in seed 000 §03, seed 003 Bidding, seed 004 Bidding; none stated in seed 001 (ruling)."""
    held = {"auction.ceiling": "marriages_held", "auction.max_bid": 400}
    assert_values(with_repino({
        "gambler-club": held,
        "classic": {"auction.ceiling": "none", "auction.max_bid": 400},
        "skill-games": held, "polish": held, "polish-tournament": held,
    }))
    assert "ruling" in resolve("classic").provenance["auction.ceiling"]


def test_passing_120_row() -> None:
    """Passing 120: only seed 000 §03 makes the auction stand at 120 before going past it."""
    assert_values(with_repino({
        "gambler-club": {"auction.stop_at": 120},
        "classic": {"auction.stop_at": None},
        "skill-games": {"auction.stop_at": None},
        "polish": {"auction.stop_at": None},
        "polish-tournament": {"auction.stop_at": None},
    }))


def test_talon_shown_row() -> None:
    """Talon shown: always in seed 000 §03, seed 001 The widow, seed 003 The prikup, seed 004 house rules; from 130 in the 004 tournament rules."""
    always = {"talon.shown": "always"}
    assert_values(with_repino({
        "gambler-club": always, "classic": always, "skill-games": always, "polish": always,
        "polish-tournament": {"talon.shown": "from_bid", "talon.shown_from_bid": 130},
    }))


def test_final_contract_row() -> None:
    """Final contract: a raise limited on the hand then held (seed 000 §03, 001 The widow, 003 The prikup, 004 The kitty)."""
    raise_kept = {"talon.contract_raise": True, "talon.contract_ceiling_hand": "kept_hand"}
    assert_values(with_repino({
        name: raise_kept for name in ("gambler-club", "classic", "skill-games", "polish", "polish-tournament")
    }))


def test_giving_up_row() -> None:
    """Giving up: seed 000 §03 rospis, seed 001 The widow, seed 003 Conceding, Kurnik's bomb for seed 004."""
    bomb = {
        "giving_up.local_name": "bomb", "giving_up.moment": "with_contract", "giving_up.declarer_loses": "nothing",
        "giving_up.defender_gain": "fixed", "giving_up.defender_gain_amount": 60, "giving_up.defenders_paid_from": 2,
        "giving_up.penalty_from": None,
    }
    assert_values(with_repino({
        "gambler-club": {
            "giving_up.allowed": True, "giving_up.local_name": "rospis", "giving_up.moment": "before_exchange",
            "giving_up.declarer_loses": "winning_bid", "giving_up.defender_gain": "half_bid",
            "giving_up.half_bid_rounding": "exact", "giving_up.penalty_from": None, "giving_up.on_barrel": False,
            "bolts.in_give_up_deal": False,
        },
        "classic": {
            "giving_up.allowed": True, "giving_up.moment": "with_contract", "giving_up.declarer_loses": "nothing",
            "giving_up.defender_gain": "fixed", "giving_up.defender_gain_amount": 60, "giving_up.penalty": 120,
            "giving_up.penalty_from": 3, "giving_up.on_barrel": False,
        },
        "skill-games": {
            "giving_up.local_name": "concede", "giving_up.moment": "with_contract",
            "giving_up.declarer_loses": "winning_bid", "giving_up.defender_gain": "half_bid",
            "giving_up.half_bid_rounding": "up_to_5",
        },
        "polish": bomb,
        "polish-tournament": bomb,
    }))
    half = resolve("classic+half-bid-give-up")
    assert (half.value("giving_up.defender_gain"), half.value("giving_up.half_bid_rounding")) == ("half_bid", "exact")


def test_duty_to_beat_row() -> None:
    """Duty to beat: none in seed 000 §04, 001 Playing the tricks, 003 The play; required in seed 004 Play."""
    assert_values(with_repino({
        "gambler-club": {"play.must_beat": False}, "classic": {"play.must_beat": False},
        "skill-games": {"play.must_beat": False}, "polish": {"play.must_beat": True},
        "polish-tournament": {"play.must_beat": True},
    }))


def test_duty_to_overtrump_row() -> None:
    """Duty to overtrump: none in seed 000 §04, 001, 003; required in seed 004 Play. Trumping is a duty everywhere."""
    assert_values(with_repino({
        "gambler-club": {"play.must_overtrump": False, "play.must_trump": True},
        "classic": {"play.must_overtrump": False, "play.must_trump": True},
        "skill-games": {"play.must_overtrump": False, "play.must_trump": True},
        "polish": {"play.must_overtrump": True, "play.must_trump": True},
        "polish-tournament": {"play.must_overtrump": True, "play.must_trump": True},
    }))


def test_marriage_declaration_row() -> None:
    """Marriage declaration: optional (seed 000 §05, 001 Marriages and trump, Kurnik); automatic in seed 003 Marriages; never on trick 1."""
    optional = {"marriages.declaration": "optional", "marriages.first_trick": False, "marriages.trump_from": "this_trick",
                "marriages.values": {"S": 40, "C": 60, "D": 80, "H": 100}}
    assert_values(with_repino({
        "gambler-club": optional, "classic": optional,
        "skill-games": {**optional, "marriages.declaration": "automatic"},
        "polish": optional, "polish-tournament": optional,
    }))


def test_defenders_score_row() -> None:
    """Defenders' rounding: to 5 in seed 000 §06, 001 Scoring a hand, 003 Scoring; to 10 in seed 004 Scoring after the deal."""
    five = {"scoring.defender_rounding": "nearest_5", "scoring.declarer_rounding": "exact"}
    ten = {"scoring.defender_rounding": "nearest_10", "scoring.declarer_rounding": "exact"}
    assert_values(with_repino({"gambler-club": five, "classic": five, "skill-games": five, "polish": ten, "polish-tournament": ten}))


def test_zero_penalty_row() -> None:
    """Bolts: seed 000 §06, seed 001 Zero penalty, seed 003 Bolts; none in seed 004."""
    bolts = {"bolts.enabled": True, "bolts.zero": "zero_points", "bolts.every": 3, "bolts.penalty": 120,
             "bolts.counting": "cumulative", "bolts.on_barrel": False}
    assert_values(with_repino({
        "gambler-club": {**bolts, "bolts.in_give_up_deal": False}, "classic": bolts, "skill-games": bolts,
        "polish": {"bolts.enabled": False}, "polish-tournament": {"bolts.enabled": False},
    }))
    assert resolve("classic+no-zero-penalty").value("bolts.enabled") is False


def test_barrel_row() -> None:
    """The barrel: seed 000 §07, seed 001 The barrel (880) and Winning the game, seed 003 The barrel; none in seed 004."""
    common = {"barrel.enabled": True, "barrel.threshold": 880, "barrel.attempts": 3, "barrel.attempts_penalty": 120,
              "barrel.min_contract": 120, "barrel.defender_points": "suspended"}
    assert_values(with_repino({
        "gambler-club": {**common, "barrel.jump_over_wins": False, "barrel.max_occupants": 2,
                         "barrel.knock_off_penalty": 120, "barrel.failed_visit_reset": 3,
                         "barrel.attempt_counts": "every_deal"},
        "classic": {**common, "barrel.jump_over_wins": True, "barrel.max_occupants": None, "barrel.failed_visit_reset": None},
        "skill-games": {**common, "barrel.jump_over_wins": False, "barrel.max_occupants": 1, "barrel.knock_off_penalty": 120},
        "polish": {"barrel.enabled": False}, "polish-tournament": {"barrel.enabled": False},
    }))
    thresholds = [resolve(f"classic+barrel-{n}").value("barrel.threshold") for n in (850, 870, 900)]
    assert thresholds == [850, 870, 900]
    assert resolve("skill-games+no-barrel").value("barrel.enabled") is False


def test_800_rule_row() -> None:
    """The 800 rule: seed 004 End of the game (house: stop counting, 780 + 40 = 820, defender stops at 990; tournament: cap at 800)."""
    off = {"defender_lock.enabled": False}
    assert_values(with_repino({
        "gambler-club": off, "classic": off, "skill-games": off,
        "polish": {"defender_lock.enabled": True, "defender_lock.from": 800, "defender_lock.mode": "stop_counting",
                   "defender_lock.defender_max": 990},
        "polish-tournament": {"defender_lock.enabled": True, "defender_lock.from": 800, "defender_lock.mode": "cap"},
    }))


def test_555_row() -> None:
    """The dump: none in seed 000 §01; seed 001 Variants (positive only, an option); seed 003 The dump truck (both signs, on by default)."""
    assert_values(with_repino({
        "gambler-club": {"dump.enabled": False}, "classic": {"dump.enabled": False},
        "skill-games": {"dump.enabled": True, "dump.score": 555, "dump.negative": True},
        "polish": {"dump.enabled": False}, "polish-tournament": {"dump.enabled": False},
    }))
    dump = resolve("classic+dump")
    assert (dump.value("dump.enabled"), dump.value("dump.negative")) == (True, False)
    assert resolve("skill-games+no-dump-truck").value("dump.enabled") is False


def test_redeals_row() -> None:
    """Redeals: seed 000 §07, seed 001 The widow (+ weak talon variant), seed 003 The deal, Kurnik for seed 004."""
    kurnik = {"redeals.rules": [{"condition": "four_nines", "when": "before_bidding", "by": "claim"}],
              "deal.dealer_after_redeal": "same"}
    assert_values(with_repino({
        "gambler-club": {"redeals.rules": [
            {"condition": "four_nines", "when": "before_bidding", "by": "claim"},
            {"condition": "hand_under_points", "points": 14, "when": "before_bidding", "by": "claim"},
            {"condition": "talon_under_points", "points": 5, "when": "before_exchange", "by": "claim"},
            {"condition": "four_nines", "when": "after_exchange", "by": "claim"},
        ], "deal.dealer_after_redeal": "same"},
        "classic": {"redeals.rules": [{"condition": "four_nines", "when": "after_exchange", "by": "claim"}]},
        "skill-games": {"redeals.rules": [{"condition": "four_nines", "when": "before_bidding", "by": "automatic"}],
                        "deal.dealer_after_redeal": "same"},
        "polish": kurnik, "polish-tournament": kurnik,
    }))
    weak = [dict(rule) for rule in resolve("classic+weak-talon").value("redeals.rules")]
    assert {"condition": "talon_under_points", "points": 5, "when": "before_exchange", "by": "automatic"} in weak


def test_win_row() -> None:
    """Winning: seed 000 §07 (only from the barrel), seed 001 Winning the game (anyone, jump allowed), seed 003 Winning, seed 004 End of the game."""
    declarer_only = {"match_end.target": 1000, "match_end.defenders_can_win": False}
    assert_values(with_repino({
        "gambler-club": {**declarer_only, "barrel.jump_over_wins": False},
        "classic": {"match_end.target": 1000, "match_end.defenders_can_win": True, "barrel.jump_over_wins": True},
        "skill-games": {**declarer_only, "barrel.jump_over_wins": False},
        "polish": declarer_only, "polish-tournament": declarer_only,
    }))
    assert resolve("skill-games+no-barrel").value("match_end.defenders_can_win") is True
