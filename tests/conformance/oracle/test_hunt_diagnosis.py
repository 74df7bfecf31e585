"""Root causes that stay apart, known root causes, and the next step (issue 22): unit tests of
conformance.harness.diagnosis, conformance.harness.steps and verify's next step."""

from __future__ import annotations

from typing import Any

from conformance.cli import verify
from conformance.harness import reports, runner, steps
from conformance.harness.findings import Known


def _finding(signature: str, *knobs: str, upstream: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"signature": signature, "knobs": list(knobs), "upstream": list(upstream), "message": signature}


def test_a_known_cause_explains_exactly_its_signatures_never_a_check_that_shares_its_knobs() -> None:
    """A known cause is the set of signatures it gathers. A check of the same kind decided by
    the same first knob is another mistake, not the same one met in another deal: counting it
    known (by knob overlap) hid a real bug behind a fitted report (issue 48)."""
    known = Known.of({"groups": [{"signature": "legal[play]: unexpected cards that trump", "knobs": ["play.must_trump"],
                                  "checks": [{"signature": "legal[play]: unexpected cards that trump", "count": 3},
                                             {"signature": "state.scores", "count": 1}]}]})
    assert known.cause_of("legal[play]: unexpected cards that trump") == "legal[play]: unexpected cards that trump"
    assert known.cause_of("state.scores") == "legal[play]: unexpected cards that trump"
    # other cards, the same deciding knob, the same kind of observation: not this cause
    assert known.cause_of("legal[play]: unexpected cards that discard while void") is None
    assert known.cause_of("refusal[play]: expected must_trump, accepted") is None
    assert known.cause_of("event[play] missing match_won") is None


def test_the_next_step_names_the_base_profile_never_an_option() -> None:
    failing = [runner.Result(f"c{i}", "t", "classic+four-aces", "fail") for i in range(3)]
    failing.append(runner.Result("d", "t", "polish", "fail"))
    verdict = reports.Verdict(failing, [], [])
    line = verify.next_step(verdict, ["./engine"])
    assert line is not None and "--profile classic " in line and "four-aces" not in line
    after_fit = steps.hunt_step("my-engine.yaml", "fit.json", ["./engine", "--fast"])
    assert "thousand fuzz --rules my-engine.yaml --known fit.json" in after_fit and after_fit.endswith("-- ./engine --fast")
    assert "--known" in (verify.next_step(verdict, ["./engine"], "house.yaml", "r.json") or "")
