"""The runner's comparison logic, against the correct toy fake and transcripts in tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.harness import runner
from conformance.corpus.transcripts import discover
from tests.fake_impls.toy_corpus import GOOD_STEPS, fake, write_case


def run(root: Path, mode: str = "ok", *, timeout: float = 5.0, validate: bool = False,
        document: Any = None, jobs: int = 1, profiles: tuple[str, ...] = ()) -> list[runner.Result]:
    cases = discover([root])
    planned = runner.plan(cases, profiles)
    settings = runner.Settings(fake(mode), timeout, validate, document)
    state = runner.run_jobs(planned, settings, jobs)
    return [state.results[i] for i in sorted(state.results)]


def one(root: Path, steps: list[dict[str, Any]], mode: str = "ok", **kwargs: Any) -> runner.Result:
    deal_expect = kwargs.pop("deal_expect", None)
    write_case(root, "t/case", steps, deal_expect=deal_expect)
    (result,) = run(root, mode, **kwargs)
    return result


def test_a_correct_implementation_passes(tmp_path: Path) -> None:
    result = one(tmp_path, GOOD_STEPS, deal_expect={"scores": [0, 1, 1], "to_act": 0})
    assert (result.outcome, result.message) == ("pass", "")


def test_numbers_compare_by_value() -> None:
    assert runner.same([57.5, 60, 0], [57.5, 60.0, 0])
    assert not runner.same([1], [True])
    assert not runner.same(True, 1)
    assert not runner.same(57.5, 57)
    assert runner.same({"kind": "played"}, {"kind": "played", "made": True})
    assert not runner.equal({"a": 1}, {"a": 1, "b": 2})


def test_events_match_in_order_as_a_subsequence() -> None:
    actual = [{"type": "a", "x": 1}, {"type": "b"}, {"type": "a", "x": 2}]
    assert runner.unmatched_event([{"type": "a", "x": 2}], actual) is None
    assert runner.unmatched_event([{"type": "b"}, {"type": "a", "x": 1}], actual) == 1
    assert runner.unmatched_event([{"type": "a"}, {"type": "a"}, {"type": "a"}], actual) == 2


@pytest.mark.parametrize(("step", "check"), [
    ({"action": "play AS", "legal": ["play AS"]}, "legal"),
    ({"action": "play AS", "player": 0}, "player"),
    ({"action": "play AS", "expect": {"scores": [0, 2, 0]}}, "state"),
    ({"action": "play AS", "events": [{"type": "trick_won", "player": 1}]}, "events"),
    ({"action": "play AS", "events": [{"type": "trick_won"}, {"type": "trump_changed"}]}, "events"),
    ({"action": "play AS", "refused": "must_follow_suit"}, "refusal"),
    ({"action": "play KS", "refused": "must_beat"}, "refusal"),
    ({"action": "play KS"}, "accepted"),
    ({"action": "play 9Z", "refused": "unknown_card"}, "refusal"),
])
def test_each_kind_of_wrong_answer_is_a_fail(tmp_path: Path, step: dict[str, Any], check: str) -> None:
    result = one(tmp_path, [{"action": "play AS"}, step])
    assert result.outcome == "fail"
    assert result.details["check"] == check
    assert (result.details["deal"], result.details["step"], result.details["action"]) == (1, 2, step["action"])
    assert result.details["state_before"]["scores"] == [0, 1, 0]  # after step 1, before step 2
    assert result.knobs == ("play.must_beat",)


def test_a_legal_set_is_compared_as_a_set(tmp_path: Path) -> None:
    result = one(tmp_path, [{"action": "play AS", "legal": ["play AS", "play KS", "play QS"]}])
    assert result.outcome == "fail"
    assert result.details["missing"] == ["play QS"] and result.details["unexpected"] == []


def test_a_refusal_that_changes_the_state_fails(tmp_path: Path) -> None:
    result = one(tmp_path, [{"action": "play KS", "refused": "must_follow_suit"}], mode="mutate_on_refusal")
    assert result.outcome == "fail"
    assert result.details["check"] == "unchanged"
    assert result.details["expected"] == {"scores": [0, 0, 0]}


def test_the_deal_expectation_is_checked_after_the_last_step(tmp_path: Path) -> None:
    result = one(tmp_path, [{"action": "play AS"}], deal_expect={"scores": [0, 0, 1]})
    assert result.outcome == "fail"
    assert result.details["step"] == "end of deal"
    assert result.details["expected"] == {"scores": [0, 0, 1]}
    assert result.details["actual"] == {"scores": [0, 1, 0]}


def test_the_match_state_is_sent(tmp_path: Path) -> None:
    write_case(tmp_path, "t/m", [{"action": "play AS"}], deal_expect={"scores": [500, 251, 0]},
               match={"scores": [500, 250, 0]})
    (result,) = run(tmp_path)
    assert result.outcome == "pass", result.message


def test_a_profile_the_implementation_does_not_declare_is_not_declared_not_skipped(tmp_path: Path) -> None:
    write_case(tmp_path, "t/other", [{"action": "play AS"}], profiles=["toy", "other"])
    outcomes = {r.profile: r.outcome for r in run(tmp_path)}
    assert outcomes == {"toy": "pass", "other": "not_declared"}


def test_profile_filter_takes_a_name_or_a_name_with_options(tmp_path: Path) -> None:
    write_case(tmp_path, "t/opts", [{"action": "play AS"}], profiles=["toy", "toy+extra", "other"])
    assert [r.profile for r in run(tmp_path, profiles=("toy",))] == ["toy", "toy+extra"]
    assert [r.profile for r in run(tmp_path, profiles=("toy+extra",))] == ["toy+extra"]


def test_skipped_and_errored_replies(tmp_path: Path) -> None:
    write_case(tmp_path, "t/a", [{"action": "play AS"}])
    (skipped,) = run(tmp_path, "skip_match")
    assert skipped.outcome == "skipped" and "toy rules only" in skipped.message
    (errored,) = run(tmp_path, "errored_apply")
    assert errored.outcome == "error" and "the toy engine broke" in errored.message


def test_the_document_is_sent_to_an_implementation_that_plays_any_profile(tmp_path: Path) -> None:
    write_case(tmp_path, "t/any", [{"action": "play AS"}])
    (result,) = run(tmp_path, "any", document=lambda name: {"name": name})
    assert result.outcome == "pass", result.message


def test_a_profile_that_cannot_be_resolved_is_a_case_bug(tmp_path: Path) -> None:
    def resolve(name: str) -> dict[str, Any]:
        raise ValueError(f"no profile {name}")

    write_case(tmp_path, "t/any", [{"action": "play AS"}])
    (result,) = run(tmp_path, "any", document=resolve)
    assert result.outcome == "case_bug" and "no profile toy" in result.message


def test_a_malformed_transcript_is_a_case_bug_and_the_run_goes_on(tmp_path: Path) -> None:
    write_case(tmp_path, "t/good", [{"action": "play AS"}])
    (tmp_path / "t" / "bad.yaml").write_text("id: t/bad\ntitle: x\nprofiles: [toy]\nknobs: []\ndeals: nope\n")
    outcomes = {r.case_id: r.outcome for r in run(tmp_path)}
    assert outcomes == {"t/bad": "case_bug", "t/good": "pass"}


def test_parallel_jobs_give_the_same_outcomes(tmp_path: Path) -> None:
    for number in range(6):
        steps = [{"action": "play AS", "player": 1 if number % 2 else 2}]
        write_case(tmp_path, f"t/p{number}", steps)
    results = run(tmp_path, jobs=3)
    assert [r.case_id for r in results] == [f"t/p{n}" for n in range(6)]
    assert [r.outcome for r in results] == ["fail", "pass"] * 3


def test_values_in_runner_messages_are_json() -> None:
    """One notation in messages (the protocol's): ["bid 105"], not Python's ['bid 105']."""
    assert runner._short(["bid 105"]) == '["bid 105"]'
    assert runner._short({"type": "bonus", "points": None}) == '{"type": "bonus", "points": null}'
    assert runner._short("bid 105") == '"bid 105"'
