"""Root causes that stay apart, known root causes, and the next step (issue 22): unit tests of
conformance.harness.diagnosis, conformance.harness.steps and verify's next step."""

from __future__ import annotations

from typing import Any

from conformance.cli import verify
from conformance.harness import diagnosis, reports, runner, steps
from conformance.harness.diagnosis import Failure, Known


def _finding(signature: str, *knobs: str, upstream: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"signature": signature, "knobs": list(knobs), "upstream": list(upstream), "message": signature}


def test_a_knob_that_only_decides_what_a_check_reads_gathers_nothing() -> None:
    # oak-club: a bolts difference was merged into "event[play] missing dump", whose upstream
    # knobs (the deal's score) hold every bolts knob; the dump and the bolts stay apart
    dump = _finding("event[play] missing dump", "dump.enabled", "dump.score", upstream=("bolts.penalty", "bolts.every"))
    bolts = _finding("state.bolts", "bolts.every", "bolts.penalty")
    dumps = [Failure(f"d{i}@p", [dump]) for i in range(5)]
    bolted = [Failure(f"b{i}@p", [bolts]) for i in range(2)]
    causes = diagnosis.groups(dumps + bolted)
    assert [(c["signature"], c["count"]) for c in causes] == [("event[play] missing dump", 5), ("state.bolts", 2)]
    assert causes[1]["knobs"][:2] == ["bolts.every", "bolts.penalty"]


def test_a_knob_upstream_of_a_check_does_not_gather_it() -> None:
    # the TypeScript engine's "to_act[play]" cause gathered a four-nines claim: to_act after a
    # redeal reads the phase, which the redeal rules decide; the claim check is decided by them
    turn = _finding("to_act[play]", "play.first_lead", upstream=("redeals.rules",))
    claim = _finding("legal[claim]: missing redeal", "redeals.rules")
    causes = diagnosis.groups([Failure("t@p", [turn]), Failure("c@p", [claim]), Failure("c2@p", [claim])])
    assert sorted((c["signature"], c["count"]) for c in causes) == [("legal[claim]: missing redeal", 2), ("to_act[play]", 1)]


def test_the_knobs_shown_all_decide_the_example() -> None:
    # three runs share scoring.declarer_rounding; two of them also name giving_up.penalty, but
    # the headline example (the narrowest check) does not: that knob is not shown
    narrow = _finding("state.scores", "scoring.declarer_rounding")
    wide = _finding("state.deal_result", "scoring.declarer_rounding", "giving_up.penalty")
    [cause] = diagnosis.groups([Failure("n@p", [narrow]), Failure("w1@p", [wide]), Failure("w2@p", [wide])])
    assert (cause["signature"], cause["count"]) == ("state.scores", 3)  # one deciding knob
    assert cause["knobs"] == ["scoring.declarer_rounding"]  # two of three name the penalty; the example does not


def test_a_known_cause_explains_its_checks_and_the_same_rule_in_another_deal() -> None:
    known = Known(({"signature": "legal[play]: unexpected cards that trump", "knobs": ["play.must_trump"],
                    "checks": [{"signature": "legal[play]: unexpected cards that trump", "count": 3}]},))
    assert known.cause_of("legal[play]: unexpected cards that trump", ()) is not None
    # other cards, the same deciding knob, the same kind of observation
    assert known.cause_of("legal[play]: unexpected cards that discard while void", ("play.must_trump",)) is not None
    # the same knob through another kind of observation is not known
    assert known.cause_of("refusal[play]: expected must_trump, accepted", ("play.must_trump",)) is None
    assert known.cause_of("legal[play]: unexpected cards that overtrump", ("play.must_overtrump",)) is None


def test_the_next_step_names_the_base_profile_never_an_option() -> None:
    failing = [runner.Result(f"c{i}", "t", "classic+four-aces", "fail") for i in range(3)]
    failing.append(runner.Result("d", "t", "polish", "fail"))
    verdict = reports.Verdict(failing, [], [])
    line = verify.next_step(verdict, ["./engine"])
    assert line is not None and "--profile classic " in line and "four-aces" not in line
    after_fit = steps.hunt_step("my-engine.yaml", "fit.json", ["./engine", "--fast"])
    assert "thousand fuzz --rules my-engine.yaml --known fit.json" in after_fit and after_fit.endswith("-- ./engine --fast")
    assert "--known" in (verify.next_step(verdict, ["./engine"], "house.yaml", "r.json") or "")
