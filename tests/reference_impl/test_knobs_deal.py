"""The knobs of the deal before it is scored: the auction, talon, giving up, marriages and play
(the knobs of the deal's end are in test_knobs_deal_end.py).

One flip test per knob (the knob changes an outcome), the reason codes they create, the
profile checks that keep them consistent, and random play under random combinations of
their values (so values no bundled profile uses are exercised too).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.engine import refusal
from tests.support.engine import document, engine, play_all
from tests.support.play import initial_match, play_deals

import variants
from reference_impl import MatchState, Rules
from reference_impl.cards import cards, mask_of
from reference_impl.rules import GivingUpRules
from reference_impl.scoring import give_up_declarer_loss, give_up_defender_gain

# No hand holds a marriage: bids stop at 120 under marriage_needed_above 120.
PLAIN = ([cards("AS 10S AC 10C AD 10D 10H"), cards("KS KC JC KD JD KH JH"), cards("QS QC 9C QD 9D QH 9H")], cards("AH 9S JS"))
# Seat 0 holds the hearts marriage; seat 1 the spades and clubs marriages.
HEARTS = ([cards("AH 10H KH QH AS 10S AC"), cards("KS QS JS 9S 10C KC QC"), cards("JC 9C AD 10D KD QD JD")], cards("9D JH 9H"))
# Seat 0 holds the hearts marriage (ceiling 120 + 100 = 220); no other marriage in any hand.
HEARTS_ONLY = ([cards("AH 10H KH QH AS 10S AC"), cards("KS JS 9S 10C KC JC 9C"), cards("QC AD 10D KD JD QS 9D")], cards("QD JH 9H"))
ON_BARREL = {"scores": [0, 880, 0], "barrel": [{"on": False}, {"on": True}, {"on": False}]}


def auction(name: str, deal: tuple[list[Any], Any] = PLAIN, match: dict[str, Any] | None = None, **changes: dict[str, Any]) -> MatchState:
    """A fresh deal of ``deal`` (dealer 2, so seat 0 opens) under a profile with knobs changed."""
    state = engine(name, match, **changes)
    state.start_deal(2, *deal)
    return state


# ---------------------------------------------------------------------------- auction


def test_opener_may_pass() -> None:
    assert refusal(auction("classic"), "pass") == "opener_must_bid"
    state = auction("classic", auction={"opener_may_pass": True})
    assert "pass" in state.legal_actions()
    state.apply("pass")
    assert state.to_act == 1 and state.high_bid is None


@pytest.mark.parametrize(("all_pass", "phase", "declarer"), [("opener_declares", "exchange", 0), ("redeal", "deal_over", None)])
def test_all_pass(all_pass: str, phase: str, declarer: int | None) -> None:
    state = auction("classic", auction={"opener_may_pass": True, "all_pass": all_pass})
    events = play_all(state, ["pass", "pass", "pass"])
    assert state.phase == phase and state.declarer == declarer
    if all_pass == "redeal":
        assert events == [{"type": "redeal", "reason": "all_passed", "player": None}]
        assert state.deal_result is not None and state.deal_result["kind"] == "redeal" and state.next_dealer == 2
    else:
        assert state.high_bid == 100 and events[0] == {"type": "auction_won", "player": 0, "bid": 100}


def test_dealer_must_bid() -> None:
    forced = auction("classic", auction={"opener_may_pass": True, "dealer_must_bid": True})
    play_all(forced, ["pass", "pass"])
    assert forced.legal_actions() == ["bid 100", "bid 105", "bid 110", "bid 115", "bid 120"]
    assert refusal(forced, "pass") == "dealer_must_bid"
    free = auction("classic", auction={"opener_may_pass": True, "dealer_must_bid": False})
    play_all(free, ["pass", "pass"])
    assert "pass" in free.legal_actions()


def test_pre_talon_max_caps_bids_but_not_the_contract() -> None:
    free = auction("classic", HEARTS)
    free.apply("bid 125")
    capped = auction("classic", HEARTS, auction={"pre_talon_max": 120})
    assert refusal(capped, "bid 125") == "bid_above_pre_talon_max"
    assert capped.legal_actions()[-1] == "bid 120"
    play_all(capped, ["bid 120", "pass", "pass", "give 9D JH"])
    assert "contract 140" in capped.legal_actions()
    capped.apply("contract 140")
    assert capped.contract == 140


def test_barrel_min_bid() -> None:
    free = auction("classic", match=ON_BARREL)
    free.apply("bid 100")
    assert "bid 105" in free.legal_actions()
    bound = auction("classic", match=ON_BARREL, auction={"barrel_min_bid": 120})
    bound.apply("bid 100")
    assert bound.legal_actions() == ["bid 120", "pass"]
    assert refusal(bound, "bid 105") == "bid_below_barrel_minimum"


def test_barrel_min_bid_spares_a_forced_opening_bid() -> None:
    """The opener on the barrel whose first bid is fixed at 100 may still make it."""
    match = {"scores": [880, 0, 0], "barrel": [{"on": True}, {"on": False}, {"on": False}]}
    state = auction("gambler-club", HEARTS, match=match, auction={"barrel_min_bid": 120})
    assert state.legal_actions() == ["bid 100"]


def test_an_opener_whose_least_bid_is_forbidden_may_pass() -> None:
    """Ruling 14: the opener on the barrel must bid at least 130, and with no marriage may not
    bid above 120 (seat 0 of PLAIN holds no king): with no bid left, the opener passes, where
    classic's opener may not."""
    match = {"scores": [880, 0, 0], "barrel": [{"on": True}, {"on": False}, {"on": False}]}
    state = auction("classic", PLAIN, match=match, auction={"barrel_min_bid": 130})
    assert state.legal_actions() == ["pass"]
    state.apply("pass")
    assert state.to_act == 1 and "bid 100" in state.legal_actions()
    opener = auction("classic", PLAIN)
    assert "pass" not in opener.legal_actions() and refusal(opener, "pass") == "opener_must_bid"


@pytest.mark.parametrize(("reentry", "next_to_act"), [(False, 2), (True, 1)])
def test_reentry(reentry: bool, next_to_act: int) -> None:
    state = auction("classic", auction={"reentry": reentry})
    play_all(state, ["bid 100", "pass", "bid 105", "bid 110"])
    assert state.to_act == next_to_act


# ------------------------------------------------------------------- talon, giving up


@pytest.mark.parametrize(("step", "phase"), [(True, "contract"), (False, "play")])
def test_contract_step(step: bool, phase: str) -> None:
    state = auction("classic", talon={"contract_step": step})
    events = play_all(state, ["bid 100", "pass", "pass", "give 9S JS"])
    assert state.phase == phase
    assert (state.contract == 100) is not step
    assert ({"type": "contract_fixed", "player": 0, "contract": 100} in events) is not step


def test_talon_shown_never() -> None:
    always = auction("classic")
    hidden = auction("classic", talon={"shown": "never"})
    for state in (always, hidden):
        play_all(state, ["bid 100", "pass", "pass"])
    assert always.observation()["talon"] == ["JS", "9S", "AH"]
    assert hidden.observation()["talon"] is None and not hidden.talon_shown


def giving_up(**changes: Any) -> GivingUpRules:
    return Rules.from_document(document("classic", giving_up=changes)).giving_up


def test_penalty_repeats() -> None:
    each = giving_up(penalty_repeats="each_from")
    nth = giving_up(penalty_repeats="every_nth")
    assert [give_up_declarer_loss(each, 100, n) for n in (2, 3, 4, 6)] == [0, 120, 120, 120]
    assert [give_up_declarer_loss(nth, 100, n) for n in (2, 3, 4, 6)] == [0, 120, 0, 120]


@pytest.mark.parametrize(("rounding", "gain"), [("exact", Fraction(115, 2)), ("up_to_5", 60), ("down", 57)])
def test_half_bid_rounding(rounding: str, gain: Fraction) -> None:
    rules = giving_up(defender_gain="half_bid", half_bid_rounding=rounding)
    assert give_up_defender_gain(rules, 115) == gain


# ------------------------------------------------------------------ marriages, play

# Seat 0 (declarer, dealer 2) keeps AS 9S AH 10H KH QH KD QD: hearts then diamonds.
TWO_MARRIAGES = ([cards("AS AH 10H KH QH KD QD"), cards("10S KS QS AC 10C KC JH"), cards("JS QC JC AD 10D 9D 9H")], cards("9S 9C JD"))
TO_TRICK_3 = ["bid 100", "pass", "pass", "give JD 9C", "contract 100", "play AS", "play QS", "play JS",
              "play KH marriage", "play JH", "play 9H"]  # fmt: skip


@pytest.mark.parametrize(("last", "reason"), [(None, None), (3, None), (2, "marriage_too_late")])
def test_last_trick(last: int | None, reason: str | None) -> None:
    state = auction("classic", TWO_MARRIAGES, marriages={"last_trick": last})
    play_all(state, TO_TRICK_3)
    assert state.trick_number == 3
    if reason is None:
        state.apply("play KD marriage")
    else:
        assert "play KD marriage" not in state.legal_actions()
        assert refusal(state, "play KD marriage") == reason


@pytest.mark.parametrize(("one", "trump"), [(False, "D"), (True, "H")])
def test_one_trump(one: bool, trump: str) -> None:
    state = auction("classic", TWO_MARRIAGES, marriages={"one_trump": one})
    play_all(state, TO_TRICK_3 + ["play KD marriage"])
    assert state.trump == trump and state.marriages[0] == ["H", "D"]


# Seat 0 trumps a club with QH (trick 4), seat 1 holds AH 10H JH.
DECLARER_TRUMPS = ([cards("AS 9S KH QH AD 10D 9D"), cards("AH 10H JH 9H QS JS KD"), cards("AC 10C KC QC JC 10S KS")], cards("QD JD 9C"))
TO_DECLARER_TRUMP = ["bid 100", "pass", "pass", "give JD 9C", "contract 100", "play AS", "play QS", "play KS", "play KH marriage",
                     "play 9H", "play 9C", "play 9S", "play JS", "play 10S", "play AC", "play QH"]  # fmt: skip
# Seat 1 trumps the led AC with QD; seat 2 holds 10D and 9D (trick 3).
DEFENDER_TRUMPS = ([cards("9S AD AC 10C KC QC JC"), cards("AS KD QD AH 10H KH QH"), cards("10D JD 9D JS 10S KS QS")], cards("9C JH 9H"))
TO_DEFENDER_TRUMP = ["bid 100", "pass", "pass", "give JH 9H", "contract 100", "play 9S", "play AS", "play JS", "play KD marriage",
                     "play JD", "play AD", "play AC", "play QD"]  # fmt: skip
ALL_DUTIES = {"must_trump": True, "must_overtrump": True}


@pytest.mark.parametrize(("against", "defender_trump_legal", "declarer_trump_legal"), [
    ("anyone", ["play 10D"], ["play 10H", "play AH"]),
    ("declarer", ["play 10D", "play 9D"], ["play 10H", "play AH"]),
])  # fmt: skip
def test_overtrump_against(against: str, defender_trump_legal: list[str], declarer_trump_legal: list[str]) -> None:
    play = {**ALL_DUTIES, "overtrump_against": against}
    defender = auction("classic", DEFENDER_TRUMPS, play=play)
    play_all(defender, TO_DEFENDER_TRUMP)
    assert defender.legal_actions() == defender_trump_legal
    declarer = auction("classic", DECLARER_TRUMPS, play=play)
    play_all(declarer, TO_DECLARER_TRUMP)
    assert declarer.legal_actions() == declarer_trump_legal


# Seat 1 trumps the led 10C with QD; seat 2 holds AC and JC (trick 3).
TRUMPED_LEAD = ([cards("9S KS AD 10C KC QC 9C"), cards("AS KD QD AH 10H KH QH"), cards("10D JD 9D JS 10S AC JC")], cards("QS JH 9H"))
TO_TRUMPED_LEAD = ["bid 100", "pass", "pass", "give JH 9H", "contract 100", "play 9S", "play AS", "play JS", "play KD marriage",
                   "play 10D", "play AD", "play 10C", "play QD"]  # fmt: skip


@pytest.mark.parametrize(("strict", "legal"), [(False, ["play AC", "play JC"]), (True, ["play AC"])])
def test_beat_after_trump(strict: bool, legal: list[str]) -> None:
    state = auction("classic", TRUMPED_LEAD, play={"must_beat": True, "beat_after_trump": strict})
    play_all(state, TO_TRUMPED_LEAD)
    assert state.legal_actions() == legal
    if strict:
        assert refusal(state, "play JC") == "must_beat"


# Seat 2 trumps the led AC with 10H; seat 0's only trump QH is lower (trick 3).
LOW_TRUMP = ([cards("AS 10S KH QH AD 10D KD"), cards("AH AC 10C KC QC JC 9C"), cards("10H 9H JH KS QS JD 9D")], cards("JS 9S QD"))
TO_LOW_TRUMP = ["bid 100", "pass", "pass", "give JS 9S", "contract 100", "play AS", "play JS", "play 9S", "play KH marriage",
                "play AH", "play 9H", "play AC", "play 10H"]  # fmt: skip


@pytest.mark.parametrize(("owed", "count"), [(True, 1), (False, 6)])
def test_must_undertrump(owed: bool, count: int) -> None:
    state = auction("classic", LOW_TRUMP, play={"must_undertrump": owed})
    play_all(state, TO_LOW_TRUMP)
    assert len(state.legal_actions()) == count
    if owed:
        assert refusal(state, "play 10S") == "must_trump"


# --------------------------------------------------------------------- profile checks


@pytest.mark.parametrize(("rules", "message"), [
    ({"talon": {"contract_step": {"value": False, "ruling": "No contract step at this table, for the test."}}},
     "without a contract step there is no moment 'with_contract'"),
    ({"auction": {"pre_talon_max": {"value": 123, "ruling": "An amount off the grid, for the test."}}},
     "pre_talon_max 123 is not a legal bid amount"),
    ({"auction": {"barrel_min_bid": {"value": 130, "ruling": "Above the cap, for the test."},
                  "pre_talon_max": {"value": 120, "ruling": "The cap, for the test."}}},
     "barrel_min_bid 130 is above pre_talon_max 120"),
])  # fmt: skip
def test_inconsistent_new_knobs_are_one_clear_error(tmp_path: Any, rules: dict[str, Any], message: str) -> None:
    import yaml

    house = {"profile": "house", "title": "A house table", "status": "draft", "summary": "Classic with one change, for a test.",
             "extends": "classic", "sources": {}, "rules": rules}  # fmt: skip
    path = tmp_path / "house.yaml"
    path.write_text(yaml.safe_dump(house), encoding="utf-8")
    with pytest.raises(variants.ProfileError, match=message):
        variants.load_profile_file(path)


def dealt(deal: tuple[list[list[object]], list[object]], **changes: dict[str, object]) -> MatchState:
    """Classic with knobs changed, dealer 2 (seat 0 opens)."""
    state = engine("classic", **changes)
    state.start_deal(2, *deal)  # type: ignore[arg-type]
    return state


# ------------------------------------------------------------------- giving_up.moment


@pytest.mark.parametrize(("moment", "in_exchange", "in_contract"), [
    ("before_exchange", True, False), ("with_contract", False, True), ("either", True, True),
])  # fmt: skip
def test_give_up_moment(moment: str, in_exchange: bool, in_contract: bool) -> None:
    state = dealt(PLAIN, giving_up={"moment": moment})
    play_all(state, ["bid 100", "pass", "pass"])
    assert state.phase == "exchange" and ("give_up" in state.legal_actions()) == in_exchange
    play_all(state, ["give 9S JS"])
    assert state.phase == "contract" and ("give_up" in state.legal_actions()) == in_contract
    if not in_contract:
        assert refusal(state, "give_up") == "give_up_not_allowed"


def test_give_up_either_moment_costs_the_same_at_both() -> None:
    """Classic: the declarer loses nothing and each defender gains 60, whenever it happens."""
    early = dealt(PLAIN, giving_up={"moment": "either"})
    play_all(early, ["bid 100", "pass", "pass", "give_up"])
    late = dealt(PLAIN, giving_up={"moment": "either"})
    play_all(late, ["bid 100", "pass", "pass", "give 9S JS", "give_up"])
    assert early.scores == late.scores == [0, 60, 60]


# ------------------------------------------------------------------ play.may_trump_instead

# Seat 0 declares hearts on trick 2 (KH, seat 0 wins it) and leads 9S on trick 3; seat 1 then
# holds JS and the trumps AH 10H JH.
TRUMP_HELD = ([cards("AS 9S KH QH AD 10D 9D"), cards("AH 10H JH 9H QS JS KD"), cards("AC 10C KC QC JC 10S KS")], cards("QD JD 9C"))
TO_TRUMP_HELD_LEAD = ["bid 100", "pass", "pass", "give JD 9C", "contract 100", "play AS", "play QS", "play KS", "play KH marriage",
              "play 9H", "play 9C", "play 9S"]  # fmt: skip


@pytest.mark.parametrize(("instead", "legal"), [
    (False, ["play JS"]), (True, ["play 10H", "play AH", "play JH", "play JS"]),
])  # fmt: skip
def test_may_trump_instead(instead: bool, legal: list[str]) -> None:
    state = dealt(TRUMP_HELD, play={"may_trump_instead": instead})
    play_all(state, TO_TRUMP_HELD_LEAD)
    assert sorted(state.legal_actions()) == legal
    if not instead:
        assert refusal(state, "play AH") == "must_follow_suit"
    else:
        play_all(state, ["play AH"])
        assert state.trick == [(0, cards("9S")[0]), (1, cards("AH")[0])]


@pytest.mark.parametrize(("overtrump", "legal"), [
    (False, ["play 10H", "play 10S", "play 9H"]), (True, ["play 10H", "play 10S"]),
])  # fmt: skip
def test_a_trump_instead_keeps_the_duty_to_overtrump(overtrump: bool, legal: list[str]) -> None:
    """Seat 1 trumps the led 9S with JH instead of following; seat 2, given spades and two
    trumps (a hand no deal of this position reaches: the duty is read off the hand alone), may
    follow with 10S or trump instead, with a trump above JH only where must_overtrump."""
    state = dealt(TRUMP_HELD, play={"may_trump_instead": True, "must_overtrump": overtrump})
    play_all(state, TO_TRUMP_HELD_LEAD + ["play JH"])
    state.hands[2] = mask_of(cards("10S 10H 9H AC 10C KC"))
    assert sorted(state.legal_actions()) == legal
    if overtrump:
        assert refusal(state, "play 9H") == "must_overtrump"


def test_a_trump_lead_is_followed_as_before() -> None:
    """When trumps are led, holding a trump is holding the suit led: nothing changes."""
    for instead in (False, True):
        state = dealt(TRUMP_HELD, play={"may_trump_instead": instead})
        play_all(state, ["bid 100", "pass", "pass", "give JD 9C", "contract 100", "play AS", "play QS", "play KS",
                         "play KH marriage"])
        assert sorted(state.legal_actions()) == ["play 10H", "play 9H", "play AH", "play JH"]


# ------------------------------------------------------------------ talon.contract_ceiling


@pytest.mark.parametrize(("ceiling", "top", "refused"), [("auction", 220, "contract_above_ceiling"), ("none", 400, None)])
def test_contract_ceiling_with_a_marriage(ceiling: str, top: int, refused: str | None) -> None:
    state = dealt(HEARTS_ONLY, talon={"contract_ceiling": ceiling}, auction={"ceiling": "marriages_held"})
    play_all(state, ["bid 100", "pass", "pass", "give QD 9H"])
    assert state.legal_actions()[-2:] == [f"contract {top}", "give_up"]
    if refused:
        assert refusal(state, "contract 225") == refused
    else:
        play_all(state, ["contract 225"])
        assert state.contract == 225


@pytest.mark.parametrize(("ceiling", "top"), [("auction", 120), ("none", 400)])
def test_contract_ceiling_without_a_marriage(ceiling: str, top: int) -> None:
    """No marriage held: the auction's rule stops a raise at 120; under none only max_bid does."""
    state = dealt(PLAIN, talon={"contract_ceiling": ceiling})
    play_all(state, ["bid 100", "pass", "pass", "give 9S JS"])
    assert state.legal_actions()[-2:] == [f"contract {top}", "give_up"]
    assert refusal(state, "contract 405") == "contract_above_ceiling"


# ----------------------------------------------------------- random knob combinations

NEW_VALUES = st.fixed_dictionaries({
    "auction": st.fixed_dictionaries({
        "opener_may_pass": st.booleans(), "dealer_must_bid": st.booleans(), "all_pass": st.sampled_from(["opener_declares", "redeal"]),
        "pre_talon_max": st.sampled_from([None, 120, 150]), "barrel_min_bid": st.sampled_from([None, 110, 120]), "reentry": st.booleans(),
    }),
    "talon": st.fixed_dictionaries({"contract_step": st.booleans(), "shown": st.sampled_from(["always", "never"])}),
    "giving_up": st.fixed_dictionaries({"penalty_repeats": st.sampled_from(["each_from", "every_nth"]),
                                        "half_bid_rounding": st.sampled_from(["exact", "up_to_5", "down"])}),
    "play": st.fixed_dictionaries({"overtrump_against": st.sampled_from(["anyone", "declarer"]), "beat_after_trump": st.booleans(),
                                   "must_undertrump": st.booleans(), "must_overtrump": st.booleans(), "must_beat": st.booleans()}),
    "marriages": st.fixed_dictionaries({"last_trick": st.sampled_from([None, 4, 6]), "one_trump": st.booleans()}),
})  # fmt: skip


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["gambler-club", "classic", "skill-games", "polish"]), values=NEW_VALUES, seed=st.integers(0, 2**32 - 1))
def test_random_play_under_random_new_knob_values(name: str, values: dict[str, dict[str, Any]], seed: int) -> None:
    if not values["talon"]["contract_step"]:
        values["giving_up"]["moment"] = "before_exchange"  # the profile check requires it
    rng = random.Random(seed)
    rules = Rules.from_document(document(name, **values))
    play_deals(MatchState(rules, initial_match(rules, rng)), rng, 2)
