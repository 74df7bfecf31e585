"""Misbehaving implementations: each is classified, and the run ends within its timeouts."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conformance.harness import reports, runner
from conformance.harness.process import Implementation, Preencoded, Timeout
from conformance.corpus.transcripts import discover
from tests.fake_impls.toy_corpus import fake, write_case

pytestmark = pytest.mark.slow  # every test starts thousand verify and a misbehaving implementation as subprocesses

TIMEOUT = 1.0  # seconds per reply; short, so that the hangs end quickly


def run_two_cases(tmp_path: Path, mode: str, validate: bool = False) -> list[runner.Result]:
    write_case(tmp_path, "t/first", [{"action": "play AS", "legal": ["play AS", "play KS"]}, {"action": "play AS"}])
    write_case(tmp_path, "t/second", [{"action": "play AS", "legal": ["play AS", "play KS"]}])
    planned = runner.plan(discover([tmp_path]))
    state = runner.run_jobs(planned, runner.Settings(fake(mode), TIMEOUT, validate))
    return [state.results[i] for i in sorted(state.results)]


@pytest.mark.parametrize(("mode", "outcome", "words"), [
    ("crash_at_start", "error", "closed its output"),
    ("crash_mid_case", "error", "exited with code 1"),
    ("hang", "timeout", "no reply to 'start'"),
    ("hang_on_apply", "timeout", "no reply to 'apply'"),
    ("garbage", "error", "not JSON"),
    ("half_line", "timeout", "no reply to 'start'"),
    ("wrong_seq", "error", "seq"),
    ("close_stdout", "error", "closed its output before replying to 'match'"),
    ("exit_silently", "error", "exited with code 0"),
    ("schema_invalid", "error", '"actions"'),
])
def test_a_misbehaving_implementation_is_classified(tmp_path: Path, mode: str, outcome: str, words: str) -> None:
    results = run_two_cases(tmp_path, mode)
    assert [r.outcome for r in results] == [outcome, outcome]
    assert words in results[0].message


def test_the_stderr_tail_is_reported(tmp_path: Path) -> None:
    results = run_two_cases(tmp_path, "crash_mid_case")
    assert "fake: crashing on apply" in results[0].stderr_tail


def test_the_process_is_restarted_after_a_crash(tmp_path: Path) -> None:
    results = run_two_cases(tmp_path, "crash_mid_case")
    # the second case got a fresh process that started, took the match and crashed on apply
    assert "apply" in results[1].message and "start" not in results[1].message


def test_an_implementation_that_never_starts_stops_the_run_at_once(tmp_path: Path) -> None:
    for number in range(6):
        write_case(tmp_path, f"t/c{number}", [{"action": "play AS"}])
    planned = runner.plan(discover([tmp_path]))
    state = runner.run_jobs(planned, runner.Settings(fake("hang"), 0.3))
    messages = [state.results[i].message for i in sorted(state.results)]
    assert len(messages) == 6  # every case is still reported, once
    assert state.start_failure is not None and "no reply to 'start'" in state.start_failure
    assert all(m.startswith("not run: the implementation could not start") for m in messages[1:])


def test_an_implementation_that_hangs_on_every_case_does_not_cost_a_timeout_per_case(tmp_path: Path) -> None:
    for number in range(9):
        write_case(tmp_path, f"t/c{number}", [{"action": "play AS"}])
    planned = runner.plan(discover([tmp_path]))
    state = runner.run_jobs(planned, runner.Settings(fake("hang_on_apply"), 0.3))
    results = [state.results[i] for i in sorted(state.results)]
    assert [r.outcome for r in results] == ["timeout"] * 9  # every case is reported
    limit = runner.TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP
    assert all("no reply to 'apply'" in r.message for r in results[:limit])
    assert all("not run: the implementation timed out on 5 cases in a row" in r.message for r in results[limit:])


def test_a_flood_on_stderr_does_not_block_and_is_kept_bounded(tmp_path: Path) -> None:
    results = run_two_cases(tmp_path, "flood_stderr")
    assert [r.outcome for r in results] == ["pass", "pass"]


def test_a_schema_invalid_event_is_an_error_only_with_validate_messages(tmp_path: Path) -> None:
    assert [r.outcome for r in run_two_cases(tmp_path, "invalid_event")] == ["pass", "pass"]
    results = run_two_cases(tmp_path, "invalid_event", validate=True)
    assert [r.outcome for r in results] == ["error", "error"]
    assert "apply.reply.json" in results[0].message and "player" in results[0].message


def test_valid_messages_pass_validation(tmp_path: Path) -> None:
    assert [r.outcome for r in run_two_cases(tmp_path, "ok", validate=True)] == ["pass", "pass"]


def test_a_request_the_implementation_never_reads_times_out(tmp_path: Path) -> None:
    # hostile.py no_read answers start, then neither reads nor replies: a 4 MB request fills
    # the pipe, and the write must end at the deadline instead of blocking for ever.
    hostile = [sys.executable, str(Path(fake("ok")[1]).parent / "hostile.py"), "no_read"]
    impl = Implementation(hostile, 1.0)
    try:
        assert impl.request("start", version=1)["version"] == 1
        with pytest.raises(Timeout, match="did not read the 'match' request"):
            impl.request("match", profile="toy", document=Preencoded({"padding": "x" * (4 * 1024 * 1024)}))
    finally:
        impl.kill()


def test_an_interrupted_write_keeps_the_previous_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text("<testsuite/>")

    def killed(_fd: int) -> None:
        raise KeyboardInterrupt  # as if the runner died between writing and renaming

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        reports.write_junit(junit, [runner.Result("t/a", "a", "toy", "pass")])
    assert junit.read_text() == "<testsuite/>" and list(tmp_path.iterdir()) == [junit]


def test_a_legal_set_answered_skipped_is_unchecked_and_the_case_goes_on(tmp_path: Path) -> None:
    """A skipped query changes nothing in the game: verify, like fit and fuzz, counts that
    legal set unchecked and checks the rest of the case (it used to skip the whole case, so a
    transcript fuzz saved from such an engine never failed under its printed command)."""
    import json

    from conformance.cli import main

    report = tmp_path / "report.json"
    code = main(["verify", "--profile", "polish", "-k", "polish/talon/*", "--report", str(report), "--",
                 sys.executable, "-m", "mutants.serve", "--mode", "skip-legal", "marriage-values-hearts-diamonds-swapped"])
    data = json.loads(report.read_text(encoding="utf-8"))
    assert code == 1 and data["counts"]["skipped"] == 0
    assert data["counts"]["fail"] >= 1  # the marriage values, seen past the legal sets it skipped
    assert data["partially_checked"] >= 1
