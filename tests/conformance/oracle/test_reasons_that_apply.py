"""Reasons that apply (issue 48, item 4): where several refusal reasons apply to one action,
the reference names them all and verify, fit and fuzz accept any one of them.

The case polish/marriages/not-held-and-not-on-lead (tests/fixtures/reasons) declares a marriage with a ten, not on
lead: both ``marriage_not_held`` and ``marriage_not_on_lead`` apply and no rule orders them.
``hostile_reference.py second-reason`` answers the second reason the reference lists."""

from __future__ import annotations

import json
import subprocess
import sys

from pathlib import Path

from conformance.cli import main
from variants import resolve
from conformance.harness.findings import Observed
from conformance.oracle import expectation, fit, observe
from conformance.corpus.transcripts import CASES_DIR
from tests.support.paths import FAKE_IMPLS, FIXTURES, ROOT

SECOND_REASON = [sys.executable, str(FAKE_IMPLS / "hostile_reference.py"), "second-reason"]
CASE = "polish/marriages/not-held-and-not-on-lead"
REASONS = FIXTURES / "reasons"  # the case's folder of transcripts (a corpus of one)


def _reference_reply(requests: list[dict[str, object]]) -> dict[str, object]:
    """The reference's reply to the last of ``requests``."""
    lines = "".join(json.dumps({"seq": n, **r}) + "\n" for n, r in enumerate(requests, start=1))
    done = subprocess.run([sys.executable, "-m", "reference_impl.server"], input=lines, capture_output=True,
                          text=True, timeout=60, cwd=ROOT, check=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_the_reference_names_every_reason_that_applies_the_first_as_reason() -> None:
    case = fit.cases_for({"polish"}, [REASONS], [CASE])[0]
    deal = case.deals[0]
    steps = deal["steps"]
    at = next(i for i, s in enumerate(steps) if "refused" in s)
    requests: list[dict[str, object]] = [
        {"cmd": "start", "version": 1},
        {"cmd": "match", "profile": "polish", "document": resolve("polish").to_document()},
        {"cmd": "deal", "dealer": deal["dealer"], "hands": deal["hands"], "talon": deal["talon"]},
        *({"cmd": "apply", "action": s["action"]} for s in steps[:at + 1])]
    refusal = _reference_reply(requests)["refusal"]
    assert isinstance(refusal, dict)
    assert refusal["reason"] == "marriage_not_held"  # the first the engine checks, as before
    assert refusal["reasons"] == ["marriage_not_held", "marriage_not_on_lead"]
    # one reason alone: no list (an older client sees the reply it always saw)
    one = _reference_reply([*requests[:-1], {"cmd": "apply", "action": "play KS marriage"}])["refusal"]
    assert isinstance(one, dict) and one["reason"] == "card_not_held" and "reasons" not in one


def test_verify_accepts_the_second_reason_and_not_another(tmp_path: Path) -> None:
    assert main(["verify", "--cases", str(REASONS), "--profile", "polish", "--", *SECOND_REASON]) == 0
    # the transcript listing one reason only still holds an engine to it
    case = (REASONS / f"{CASE}.yaml").read_text(encoding="utf-8")
    single = case.replace("refused: [marriage_not_held, marriage_not_on_lead]", "refused: marriage_not_held")
    assert single != case
    folder = tmp_path / "polish" / "marriages"
    folder.mkdir(parents=True)
    (folder / "not-held-and-not-on-lead.yaml").write_text(single, encoding="utf-8")
    assert main(["verify", "--cases", str(tmp_path), "--profile", "polish", "--", *SECOND_REASON]) == 1


def test_a_refusal_agrees_when_its_reason_is_one_that_applies() -> None:
    """fit and fuzz compare replies with ``observe.compare``: the second reason is no difference,
    another reason is."""
    reference = observe.Reply(False, (), ("illegal", "marriage_not_held"), ("marriage_not_on_lead",))
    second = observe.Reply(False, (), ("illegal", "marriage_not_on_lead"))
    other = observe.Reply(False, (), ("illegal", "must_follow_suit"))

    def record(reply: observe.Reply) -> observe.CaseRecord:
        return observe.CaseRecord("c", (observe.StepRecord(1, 1, "play 10C marriage", ("play 10C",), reply, {}),))

    assert observe.compare(record(reference), record(second)) == []
    # the implementation's own list counts for nothing: its first reason must apply here
    assert [d.kind for d in observe.compare(record(second), record(reference))] == [Observed.REFUSAL]
    assert [d.kind for d in observe.compare(record(reference), record(other))] == [Observed.REFUSAL]
    assert reference.refused() == ["marriage_not_held", "marriage_not_on_lead"]
    assert second.refused() == "marriage_not_on_lead"


def test_fit_finds_nothing_to_explain_in_the_second_reason() -> None:
    cases = fit.cases_for({"polish"}, [REASONS, CASES_DIR], [CASE, "polish/marriages/not-on-lead"])
    assert len(cases) == 2, "the case of two reasons is a valid transcript"
    fitter = fit.Fitter("polish", cases, SECOND_REASON)
    try:
        result = fitter.run()
    finally:
        fitter.close()
    assert result.accepted == [] and result.residual == {}


def test_an_expectation_holds_the_reasons_listed_so_a_reference_like_reply_is_met() -> None:
    """fit sends the implementation's replies to the reference as the expected ones: a refusal
    that lists its reasons is expected with them, the reply the reference then sends."""
    listed = observe.Reply(False, (), ("illegal", "marriage_not_held"), ("marriage_not_on_lead",))
    assert expectation._reply(listed) == {"ok": False, "refusal": {
        "class": "illegal", "reason": "marriage_not_held", "reasons": ["marriage_not_held", "marriage_not_on_lead"]}}
    alone = observe.Reply(False, (), ("illegal", "card_not_held"))
    assert expectation._reply(alone) == {"ok": False, "refusal": {"class": "illegal", "reason": "card_not_held"}}
