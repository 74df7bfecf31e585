"""verify names no fit run when every unexpected result is a case bug: fit cannot explain a
transcript that is itself wrong (a saved house case run without --rules names an unknown profile)."""

from __future__ import annotations

from conformance.cli.verify import next_step
from conformance.harness import reports, runner


def _verdict(*outcomes: str) -> reports.Verdict:
    results = [runner.Result(f"a/b/c{i}", "t", "kitchen", outcome) for i, outcome in enumerate(outcomes)]
    return reports.judge(results, None, [r.case_id for r in results])


def test_case_bugs_alone_lead_to_no_fit() -> None:
    assert next_step(_verdict("case_bug"), ["./engine"]) is None


def test_an_engine_failure_still_leads_to_fit() -> None:
    step = next_step(_verdict("case_bug", "fail"), ["./engine"])
    assert step is not None and "thousand fit --profile kitchen" in step
