"""The protocol session: start read once, the declarations for less, the events derived from states."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from conformance.cli.verify import resolve_document
from conformance.corpus import schemas
from conformance.corpus.transcripts import CASES_DIR, discover
from conformance.harness import derive, runner
from conformance.harness.process import ProtocolFailure
from conformance.harness.session import Declarations, paired, placed_bid, before_opening
from tests.support.paths import FAKE_IMPLS

START = {"seq": 1, "version": 1, "implementation": {"name": "x"}, "profiles": "own"}
BARREL_OFF = {"on": False, "attempts": 0, "failed_visits": 0}


def state(**fields: Any) -> dict[str, Any]:
    """A play-phase state with nothing happened yet, changed by ``fields``."""
    base: dict[str, Any] = {
        "phase": "play", "to_act": 0, "dealer": 2, "declarer": 0, "high_bid": 100, "contract": 100,
        "talon_shown": True, "talon": ["AS", "KS", "QS"], "trump": None, "trick": [], "trick_number": 1,
        "tricks_won": [0, 0, 0], "card_points": [0, 0, 0], "marriages": [[], [], []], "deal_result": None,
        "scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0], "barrel": [BARREL_OFF] * 3, "winner": None}
    return {**base, **fields}


# --- start, read once -----------------------------------------------------------------------

def test_the_declarations_for_less_are_read_from_start() -> None:
    told = Declarations.read({**START, "events": "derived", "opening_bid": "placed", "give": "cards",
                              "unsupported": {"state_fields": ["bolts"]}})
    assert (told.events_derived, told.opening_placed, told.give_cards, told.viewing) == (True, True, True, True)
    assert told.unsupported.state_fields == {"bolts"}
    plain = Declarations.read(START)
    assert (plain.events_derived, plain.opening_placed, plain.give_cards, plain.viewing) == (False, False, False, False)


@pytest.mark.parametrize(("extra", "words"), [
    ({"version": 2}, "speaks version 2"),
    ({"version": True}, "speaks version true"),
    ({"events": "none"}, "'events' must be 'sent' or 'derived'"),
    ({"give": True}, "'give' must be 'pairs' or 'cards'"),
    ({"unsupported": {"state_fields": ["phase", "bolts"]}}, "phase cannot be declared unsupported"),
])
def test_a_start_reply_that_breaks_the_protocol_is_a_start_error(extra: dict[str, Any], words: str) -> None:
    with pytest.raises(ProtocolFailure, match=words):
        Declarations.read({**START, **extra})


# --- events from states ---------------------------------------------------------------------

def test_a_trick_won_is_read_off_the_trick_and_the_counts() -> None:
    before = state(trick=[{"player": 0, "card": "AS"}, {"player": 1, "card": "10S"}], to_act=2)
    # seat 0's ace wins: A 11 + 10 10 + K 4 = 25 card points, the first trick
    after = state(trick=[], to_act=0, trick_number=2, tricks_won=[1, 0, 0], card_points=[25, 0, 0])
    found = derive.derive(before, "play KS", after)
    assert list(found.events) == [{"type": "trick_won", "player": 0, "trick": 1, "cards": ["AS", "10S", "KS"], "points": 25}]


def test_a_marriage_and_its_trump_come_in_the_order_things_happen() -> None:
    after = state(trick=[{"player": 0, "card": "KH"}], to_act=1, marriages=[["H"], [], []], trump="H")
    found = derive.derive(state(), "play KH marriage", after)
    assert list(found.events) == [{"type": "marriage_declared", "player": 0, "suit": "H"}, {"type": "trump_changed", "suit": "H"}]
    assert "marriage_declared.points" in found.unsure  # its value is not in the state


def test_a_trump_taking_effect_when_the_trick_closes_follows_its_trick_won() -> None:
    before = state(trick=[{"player": 0, "card": "KH"}, {"player": 1, "card": "9H"}], to_act=2, marriages=[["H"], [], []])
    # KH 4 + 9H 0 + JH 2 = 6 card points to seat 0
    after = state(trick_number=2, tricks_won=[1, 0, 0], card_points=[6, 0, 0], marriages=[["H"], [], []], trump="H")
    types = [event["type"] for event in derive.derive(before, "play JH", after).events]
    assert types == ["trick_won", "trump_changed"]


def test_the_end_of_a_deal_gives_bolts_and_the_score_and_leaves_what_the_state_cannot_tell() -> None:
    result = {"kind": "played", "made": True, "points": [120, 0, 0], "deltas": [100, 0, 0]}
    before = state(trick=[{"player": 0, "card": "AS"}, {"player": 1, "card": "9S"}], to_act=2, trick_number=8,
                   tricks_won=[7, 0, 0], card_points=[109, 0, 0], bolts=[0, 1, 2])
    after = state(phase="deal_over", to_act=None, trick_number=8, tricks_won=[8, 0, 0], card_points=[120, 0, 0],
                  deal_result=result, scores=[100, 0, -120], bolts=[0, 2, 0])
    found = derive.derive(before, "play JS", after)
    assert [e["type"] for e in found.events] == ["trick_won", "bolt", "deal_scored"]
    assert found.events[1] == {"type": "bolt", "player": 1, "count": 2}
    assert found.events[2] == {"type": "deal_scored", "points": [120, 0, 0], "deltas": [100, 0, 0], "scores": [100, 0, -120]}
    # seat 2's counter went back to 0 (a penalty, or no bolt at all): its bolt is unchecked, never failed
    assert {"bolt@2", "bolt@0"} <= found.unsure
    kept, unchecked = derive.expected_told([{"type": "bolt", "player": 2, "count": 3}, {"type": "bolt_penalty", "player": 2},
                                            {"type": "bolt", "player": 1, "count": 2}], found.unsure)
    assert kept == [{"type": "bolt", "player": 1, "count": 2}]
    assert unchecked == {"event bolt", "event bolt_penalty"}


def test_an_event_whose_fields_are_absent_is_not_derived() -> None:
    before = state(bolts=None)
    del before["bolts"]
    after = dict(before, phase="deal_over", deal_result={"kind": "given_up", "made": False, "points": [0, 0, 0], "deltas": [-100, 0, 0]})
    found = derive.derive(before, "give_up", after)
    assert "bolt" in found.unsure and "bolt" not in [e["type"] for e in found.events]


def test_a_redeal_at_the_deal_names_no_player() -> None:
    after = state(phase="deal_over", deal_result={"kind": "redeal", "made": None, "points": [0, 0, 0], "deltas": [0, 0, 0]})
    found = derive.derive(None, None, after)
    assert list(found.events) == [{"type": "redeal", "player": None}]
    kept, unchecked = derive.expected_told([{"type": "redeal", "reason": "four_nines", "player": 1}], found.unsure)
    assert kept == [{"type": "redeal"}] and unchecked == {"event redeal.player", "event redeal.reason"}


# --- the opening bid and the gives --------------------------------------------------------------

def test_a_placed_opening_bid_is_hidden_one_step_behind() -> None:
    placed = state(phase="auction", to_act=1, dealer=2, auction=[{"player": 0, "action": "bid 100"}], high_bid=100, declarer=None)
    assert placed_bid(placed) == "bid 100"
    shown = before_opening(placed)
    assert (shown["auction"], shown["high_bid"], shown["to_act"]) == ([], None, 0)
    assert placed_bid(dict(placed, auction=[{"player": 1, "action": "bid 100"}])) is None  # not the opener's


def test_gives_of_one_card_become_every_pair() -> None:
    assert sorted(paired(["give AS", "give KH", "give QH", "give_up"])) == sorted([
        "give_up", "give AS KH", "give AS QH", "give KH AS", "give KH QH", "give QH AS", "give QH KH"])


# --- --validate-messages ----------------------------------------------------------------------------

def test_a_state_without_a_field_declared_absent_is_valid() -> None:
    reply = {"seq": 3, "state": {**state(phase="auction", auction=[], hands=[[], [], []], next_dealer=None)}}
    del reply["state"]["bolts"]
    assert schemas.reply_problem("state", reply) is not None  # bolts is required of everyone else
    assert schemas.reply_problem("state", reply, frozenset({"bolts"})) is None
    assert schemas.reply_problem("apply", {"seq": 4, "ok": True}) is not None
    assert schemas.reply_problem("apply", {"seq": 4, "ok": True}, events_derived=True) is None
    one_card = {"seq": 5, "actions": ["give QS", "give_up"]}
    assert schemas.reply_problem("legal", one_card) is not None
    assert schemas.reply_problem("legal", one_card, give_cards=True) is None
    assert schemas.reply_problem("legal", {"seq": 5, "actions": ["give QX"]}, give_cards=True) is not None


# --- the double: the reference behind an adapter that sends less ---------------------------------

SELECTION = ("gambler-club/bolts/*", "gambler-club/barrel/three-simultaneous-*", "polish/auction/*",
             "classic/talon/option-no-contract-step-*", "classic/marriages/*")


def verified(command: tuple[str, ...], validate: bool) -> list[runner.Result]:
    jobs = runner.plan(discover([CASES_DIR]), (), SELECTION)
    settings = runner.Settings(command, 20.0, validate, resolve_document)
    state = runner.run_jobs(jobs, settings)
    return [state.results[i] for i in sorted(state.results)]


@pytest.mark.slow
def test_an_adapter_that_sends_less_gets_the_verdicts_of_the_full_one() -> None:
    full = verified(runner.REFERENCE_COMMAND, False)
    less = verified((sys.executable, str(FAKE_IMPLS / "less_ref.py")), True)  # --validate-messages on
    assert [(r.case_id, r.profile, r.outcome) for r in less] == [(r.case_id, r.profile, r.outcome) for r in full]
    assert all(r.outcome == "pass" for r in less), [r.message for r in less if r.outcome != "pass"][:3]
    unchecked = {item for r in less for item in r.unchecked}
    assert "state bolts" in unchecked  # the absent field, counted
    assert "event marriage_declared.points" in unchecked  # what the states cannot tell, counted
    assert "opening bid placed by the engine" in unchecked  # the runner's own answers, counted
