"""``thousand fit``'s residual verdicts: "likely a bug" only where the implementation
contradicts itself. Here the contradiction no rule can make: the same situation (the same
match setup, deals and actions before it) answered two ways in two cases."""

from __future__ import annotations

import sys

import pytest

from conformance.corpus.transcripts import Transcript
from conformance.harness.findings import Observed, RootCause
from conformance.oracle import evidence, fit, observe, residual
from spec.vocabulary import ResidualVerdict
from tests.support.paths import FAKE_IMPLS

TWO_FACED = [sys.executable, str(FAKE_IMPLS / "two_faced_reference.py")]
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


@pytest.mark.slow
def test_an_engine_answering_a_situation_two_ways_is_likely_a_bug() -> None:
    cases = fit.cases_for({"classic"}, [], ["classic/marriages/*"])
    fitter = fit.Fitter("classic", cases, TWO_FACED)
    try:
        result = fitter.run()
    finally:
        fitter.close()
    assert result.residual, "the extra bid of every second match is no rule of any profile"
    found = residual.causes(result.weighed, fitter.impl_records, result.exercised, "classic", fitter.tried, fitter.by_id)
    assert found and all(cause.verdict == ResidualVerdict.BUG for cause in found)
    assert any("answered otherwise" in cause.why for cause in found)
    # without the transcripts no situation is known, and the same residual is a missing rule
    blind = residual.causes(result.weighed, fitter.impl_records, result.exercised, "classic", fitter.tried)
    assert [cause.verdict for cause in blind] == [ResidualVerdict.NO_KNOB] * len(blind)


def test_an_impossible_state_at_the_step_a_case_first_differs_leads_its_case() -> None:
    """An engine counts the last trick's bonus among the card points: at the last trick its
    state shows 130 card points where the deck holds 120 (set aside as impossible), and the
    reply before that state drops a barrel player with another penalty. The impossible state
    is the root, so the case is grouped by it; grouped by the penalty it would stand as a
    barrel cause beside the bonus's."""
    left = {"type": "barrel_left", "player": 1, "reason": "fell_back"}
    penalty = observe.observed("c", 1, 29, "play QH", Observed.EVENT, "play", "events differ",
                               {"events": [{**left, "penalty": 120}]}, {"events": [{**left, "penalty": 130}]},
                               {"phase": "play"})
    points = observe.observed("c", 1, 29, "play QH", Observed.STATE, "play", "state.card_points", [20, 30, 70],
                              [23, 32, 75], {"phase": "play"})
    later = observe.observed("c", 1, 30, None, Observed.STATE, "play", "state.scores", [0, 0, 0], [0, 0, 10], {})
    keys = {evidence.key_of(d) for d in (penalty, points, later)}
    impossible = frozenset({evidence.key_of(points), evidence.key_of(later)})
    found = evidence.Evidence("c", 60, 0, (penalty, points, later), frozenset(keys - impossible), impossible)
    [failure] = residual.failures({"c": found}, {}, "skill-games")
    first, second = (f.signature for f in failure.findings[:2])
    assert first == "state.card_points" and second == "event[play] barrel_left(fell_back) differs in penalty"
    plain = evidence.Evidence("c", 60, 0, (penalty, points), frozenset(keys - {evidence.key_of(later)}))
    [failure] = residual.failures({"c": plain}, {}, "skill-games")  # nothing impossible: in the order shown
    assert failure.findings[0].signature.startswith("event[play] barrel_left")


def _ended(case: str, events: list[dict[str, object]]) -> observe.CaseRecord:
    """A record whose one action ends the deal with ``events``."""
    return observe.CaseRecord(case, (
        observe.StepRecord(1, 0, None, None, observe.Reply(True), {"phase": "play"}),
        observe.StepRecord(1, 1, "play AH", ("play AH",), observe.Reply(True, tuple(events)), {"phase": "deal_over"})))


def test_a_difference_only_ever_shown_beside_another_causes_is_tangled_not_a_missing_rule() -> None:
    """Two cases give a bolt to the wrong defender (one cause). A third knocks a player off
    the barrel with a penalty of 255 where the reference charges 120, in the very reply that
    gives the wrong bolt: the penalty set right would leave that reply differing, so no
    value of the barrel's knobs can make it match and the evidence cannot say whether one
    explains it. It is tangled with the bolt's cause, not a rule the schema has no knob for
    (the benchmark's seed 35, v7, whose barrel penalty of 255 is a knob's value), and it is
    written beside that cause: each line of the residual is a missing rule or a likely bug
    (seed 41, v10, the same with a penalty of 325)."""
    def bolt(player: int) -> dict[str, object]:
        return {"type": "bolt", "player": player, "count": 1}

    def knocked_off(penalty: int) -> dict[str, object]:
        return {"type": "barrel_left", "player": 1, "reason": "knocked_off", "penalty": penalty}

    pairs = {"a": ([bolt(0)], [bolt(1)]), "b": ([bolt(2)], [bolt(1)]),
             "c": ([knocked_off(120), bolt(0)], [knocked_off(255), bolt(1)])}
    weighed = {c: evidence.weigh(_ended(c, ref), _ended(c, imp)) for c, (ref, imp) in pairs.items()}
    found = residual.causes(weighed, {c: _ended(c, imp) for c, (_ref, imp) in pairs.items()}, {}, "classic")
    assert [(cause.cases, cause.verdict) for cause in found] == [(("a", "b"), ResidualVerdict.NO_KNOB)]
    [tangled] = found[0].hidden
    assert (tangled.cases, tangled.verdict) == (("c",), ResidualVerdict.TANGLED)
    assert "barrel_left(knocked_off) differs in penalty" in tangled.signature
    assert "barrel.knock_off_penalty" in tangled.knobs
    assert "also differs as event[play] bolt differs in player" in tangled.why
    assert (found[0].observations, tangled.observations) == (2, 1)  # the replies of "a" and "b"; that of "c"
    lines = residual.describe(found)
    assert len([line for line in lines if line[0].isdigit()]) == 1
    assert any(line.startswith(f"   beside it, {ResidualVerdict.TANGLED}: event[play] barrel_left") for line in lines)


def test_a_tangle_that_comes_back_round_stays_two_causes() -> None:
    """Each of two causes tangled with the other has no host to go beside: both are kept, and
    so is a third tangled with one of them (its chain never reaches a cause that is not)."""
    def cause(signature: str) -> RootCause:
        return RootCause(signature, cases=(signature,), verdict=ResidualVerdict.TANGLED, observations=1)

    found = residual._folded([cause("x"), cause("y"), cause("z")], {0: 1, 1: 0, 2: 0})
    assert [c.signature for c in found] == ["x", "y", "z"] and not any(c.hidden for c in found)
    found = residual._folded([cause("x"), cause("y"), cause("z")], {1: 2, 2: 0})
    assert [c.signature for c in found] == ["x"] and [h.signature for h in found[0].hidden] == ["y", "z"]


def test_fits_changed_lines_name_only_the_knobs_the_fitted_rules_change() -> None:
    """A change record whose knob the fitted rules hold at the profile's value (put back, or
    an equal value kept instead) is no change: "# changed" listed it all the same (issue 48)."""
    import variants
    from conformance.oracle import fit

    rules = variants.thaw(variants.resolve("classic").rules)
    rules["auction"]["max_bid"] = 300
    kept = fit.Accepted((fit.Change("auction.max_bid", 300),), 4, 0, "c deal 1 step 3 (legal)", 12)
    back = fit.Accepted((fit.Change("play.must_beat", not rules["play"]["must_beat"]),), 1, 0, "d deal 1 step 9 (legal)", 2)
    text = fit.report(fit.FitResult("classic", rules, [kept, back], {}, 5), "profile: x")
    changed = [line for line in text.splitlines() if line.startswith("# changed")]
    assert changed == ["# changed auction.max_bid: 300: reproduces 12 more observation(s) (4 whole case(s)), "
                       "e.g. c deal 1 step 3 (legal)"]
