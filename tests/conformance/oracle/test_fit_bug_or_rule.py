"""Bug or rule (issue 48, item 6): fit's residual calls "likely a bug" what no rules can play
(an engine that leaves nobody to act, or answers one situation two ways), and fit adopts no
value from those observations; a legal set answered ``skipped`` costs that observation only,
never the rest of its case.

The doubles are the reference with one hostile habit (``tests/fake_impls``)."""

from __future__ import annotations

import sys
from typing import Iterator

import pytest

from spec.vocabulary import ResidualVerdict
from conformance.oracle import evidence, fit, observe, residual
from tests.support.paths import FAKE_IMPLS

HOSTILE = [sys.executable, str(FAKE_IMPLS / "hostile_reference.py")]
TWO_FACED = [sys.executable, str(FAKE_IMPLS / "two_faced_reference.py")]
# Two polish cases that reach the contract phase (a contract step each) and play on after it.
WITH_CONTRACTS = ["polish/marriages/not-on-lead", "polish/marriages/declare-on-second-trick"]


def _fitted(mode: str) -> tuple[fit.Fitter, fit.FitResult]:
    cases = fit.cases_for({"polish"}, [], WITH_CONTRACTS)
    assert [c.id for c in cases] == sorted(WITH_CONTRACTS), "the cases these tests rely on are in the corpus"
    assert all(any(s["action"].startswith("contract ") for d in c.deals for s in d["steps"]) for c in cases)
    fitter = fit.Fitter("polish", cases, [*HOSTILE, mode])
    try:
        return fitter, fitter.run()
    finally:
        fitter.close()


@pytest.fixture(scope="module")
def nobody_to_act() -> Iterator[tuple[fit.Fitter, fit.FitResult]]:
    yield _fitted("nobody-to-act")


@pytest.fixture(scope="module")
def skipping_legal() -> Iterator[tuple[fit.Fitter, fit.FitResult]]:
    yield _fitted("skip-contract-legal")


def test_a_state_with_nobody_to_act_in_a_phase_of_play_is_a_self_contradiction() -> None:
    state = {"phase": "contract", "to_act": None}
    record = observe.CaseRecord("c", (observe.StepRecord(1, 5, "give 9S JC", ("give 9S JC",), observe.Reply(True), state),))
    found = evidence.self_contradictions(record)
    assert [what for _keys, what in found] == ["left nobody to act in phase contract"]
    assert found[0][0] == ((1, 5, "state.to_act"),)
    # at the end of a deal nobody is to act, rightly
    over = observe.CaseRecord("c", (observe.StepRecord(1, 5, "play 9S", ("play 9S",), observe.Reply(True),
                                                        {"phase": "deal_over", "to_act": None}),))
    assert evidence.self_contradictions(over) == []


def test_an_empty_legal_set_where_the_engine_then_takes_an_action_leaves_nobody_to_act() -> None:
    record = observe.CaseRecord("c", (observe.StepRecord(1, 6, "contract 100", (), observe.Reply(True), {}),))
    assert [what for _keys, what in evidence.self_contradictions(record)] == [
        "left nobody to act (no legal action) and then accepted one"]


def test_fit_calls_an_engine_that_leaves_nobody_to_act_likely_a_bug_and_adopts_nothing(
        nobody_to_act: tuple[fit.Fitter, fit.FitResult]) -> None:
    fitter, result = nobody_to_act
    assert result.accepted == [], "no knob value plays a contract phase with nobody to act"
    assert set(result.residual) == set(WITH_CONTRACTS)
    found = residual.causes(result.weighed, fitter.impl_records, result.exercised, "polish", fitter.tried, fitter.by_id)
    assert found and all(cause.verdict == ResidualVerdict.BUG for cause in found)
    assert any("left nobody to act" in cause.why for cause in found)
    assert all(e.set_aside and not e.missed for e in result.weighed.values()), "every difference is set aside"


def test_fit_goes_on_past_a_legal_set_answered_skipped(skipping_legal: tuple[fit.Fitter, fit.FitResult]) -> None:
    fitter, result = skipping_legal
    skipped = 0
    for case_id in WITH_CONTRACTS:
        record = fitter.impl_records[case_id]
        assert record.ended == "complete", record.ended
        contract = [s for s in record.steps if s.action is not None and s.action.startswith("contract ")]
        assert contract and all(s.legal is None for s in contract), "the skipped legal set is unchecked"
        assert record.steps[-1].legal is not None, "and the play after it observed"
        skipped += len(contract)
    assert result.unchecked == skipped, "each step whose legal set was skipped is counted unchecked, no more"
    assert result.residual == {} and result.accepted == []


def test_one_situation_answered_two_ways_is_set_aside_from_that_step_in_both_cases() -> None:
    """The two-faced engine offers a bid of 995 in the auctions of every second match: two
    classic cases that deal alike show the same situation answered two ways, and fit sets
    aside every observation from there on in both (no rules answer so)."""
    sharing = ["classic/marriages/clubs-marriage-is-60", "classic/marriages/defender-may-declare"]
    cases = fit.cases_for({"classic"}, [], sharing)
    fitter = fit.Fitter("classic", cases, TWO_FACED)
    try:
        fitter.observe_implementation()
    finally:
        fitter.close()
    apart = residual.inconsistent(fitter.impl_records, fitter.by_id)
    assert set(apart) == set(sharing)
    for case_id in sharing:
        first = min((key[0], key[1]) for key in apart[case_id])
        assert first == (1, 1), "the first legal set of the auction differs"
        assert apart[case_id] <= fitter.contradicted[case_id]
