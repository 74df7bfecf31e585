"""``thousand fit``'s residual verdicts: "likely a bug" only where the implementation
contradicts itself. Here the contradiction no rule can make: the same situation (the same
match setup, deals and actions before it) answered two ways in two cases."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.corpus.transcripts import Transcript
from conformance.oracle import fit, observe, residual

ROOT = Path(__file__).resolve().parent.parent
TWO_FACED = [sys.executable, str(ROOT / "tests" / "fake_impls" / "two_faced_reference.py")]
# Two hand-written cases of classic that deal the same cards and open the auction alike
# (the same first bids), then part.
SHARING = ("classic/marriages/clubs-marriage-is-60", "classic/marriages/defender-may-declare")


def _cases(*ids: str) -> dict[str, Transcript]:
    cases = fit.cases_for({"classic"}, [], list(ids))
    assert [case.id for case in cases] == sorted(ids), "the cases these tests rely on are in the corpus"
    return {case.id: case for case in cases}


def _record(case: Transcript, field: int = 0, at: tuple[int, int] | None = None) -> observe.CaseRecord:
    """A record of every step of ``case``, each with the same answer, but for state field
    ``n`` set to ``field`` at the step ``at`` (deal, step)."""
    steps = []
    for number, deal in enumerate(case.deals, start=1):
        for index in range(len(deal["steps"]) + 1):
            action = deal["steps"][index - 1]["action"] if index else None
            legal = (action,) if action else None
            n = field if (number, index) == at else 0
            steps.append(observe.StepRecord(number, index, action, legal, observe.Reply(True), {"n": n}))
    return observe.CaseRecord(case.id, tuple(steps))


def test_the_same_situation_answered_two_ways_is_found_in_both_cases() -> None:
    cases = _cases(*SHARING)
    first, second = (cases[i] for i in SHARING)
    assert first.deals[0]["hands"] == second.deals[0]["hands"]
    assert first.deals[0]["steps"][0] == second.deals[0]["steps"][0], "both cases open the auction alike"
    records = {first.id: _record(first), second.id: _record(second, field=1, at=(1, 1))}
    found = residual.inconsistencies(records, cases)
    assert set(found) == set(SHARING)
    assert "the same situation as classic/marriages/clubs-marriage-is-60 deal 1 step 1" in found[second.id][0]
    assert "state field n" in found[second.id][0]


def test_the_same_answers_or_situations_not_shared_are_no_contradiction() -> None:
    cases = _cases(*SHARING)
    first, second = (cases[i] for i in SHARING)
    assert residual.inconsistencies({c.id: _record(c) for c in (first, second)}, cases) == {}
    # after the cases part, their answers owe each other nothing
    parted = next(i for i, (a, b) in enumerate(zip(first.deals[0]["steps"], second.deals[0]["steps"])) if a != b) + 1
    records = {first.id: _record(first), second.id: _record(second, field=1, at=(1, parted))}
    assert residual.inconsistencies(records, cases) == {}


def test_an_engine_answering_a_situation_two_ways_is_likely_a_bug() -> None:
    cases = fit.cases_for({"classic"}, [], ["classic/marriages/*"])
    fitter = fit.Fitter("classic", cases, TWO_FACED)
    try:
        result = fitter.run()
    finally:
        fitter.close()
    assert result.residual, "the extra bid of every second match is no rule of any profile"
    found = residual.causes(result.weighed, fitter.impl_records, result.exercised, "classic", fitter.tried, fitter.by_id)
    assert found and all(cause.verdict == residual.BUG for cause in found)
    assert any("answered otherwise" in cause.why for cause in found)
    # without the transcripts no situation is known, and the same residual is a missing rule
    blind = residual.causes(result.weighed, fitter.impl_records, result.exercised, "classic", fitter.tried)
    assert [cause.verdict for cause in blind] == [residual.NO_KNOB] * len(blind)
