"""``thousand verify`` end to end: reports, expected failures, exit codes, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli import main
from tests.fake_impls.toy_corpus import fake, write_case

HANG_GUARD = 120  # seconds: only to turn a hang into a failure, never a timing check


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "cases"
    write_case(root, "t/good", [{"action": "play AS", "player": 1}], knobs=["play.must_beat"])
    write_case(root, "t/wrong", [{"action": "play AS", "player": 0}], knobs=["scoring.defender_rounding", "bolts.every"])
    return root


def verify(corpus: Path, *options: str, mode: str = "ok") -> int:
    return main(["verify", "--cases", str(corpus), "--timeout", "5", *options, "--", *fake(mode)])


def test_the_json_report_has_every_case_and_the_implementation(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    assert verify(corpus, "--report", str(report)) == 1
    data = json.loads(report.read_text())
    assert data["counts"]["pass"] == 1 and data["counts"]["fail"] == 1
    assert data["implementation"]["name"] == "fake-ok"
    assert data["suite_version"] == 1 and data["interrupted"] is False
    wrong = next(c for c in data["cases"] if c["id"] == "t/wrong")
    assert wrong["details"]["check"] == "player" and wrong["details"]["deal"] == 1
    # by the knobs that decide the failed check (who is to act in the play), not the case's labels
    assert data["failing_by_section"] == {"marriages": 1, "play": 1}
    assert data["groups"][0]["signature"] == "to_act[play]" and data["groups"][0]["cases"] == ["t/wrong@toy"]
    out = capsys.readouterr().out
    assert "FAIL t/wrong [toy]" in out and "knobs: scoring.defender_rounding, bolts.every" in out
    assert "state before:" in out


def test_the_junit_report(corpus: Path, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    verify(corpus, "--junit", str(junit))
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failing = [case.get("name") for case in suite if case.find("failure") is not None]
    assert failing == ["t/wrong"]


def test_expected_failures_excuse_listed_failures(corpus: Path, tmp_path: Path) -> None:
    listed = tmp_path / "xfail.txt"
    assert verify(corpus, "--write-expected-failures", str(listed)) == 1
    assert [line for line in listed.read_text().splitlines() if not line.startswith("#")] == ["t/wrong"]
    assert verify(corpus, "--expected-failures", str(listed)) == 0


def test_a_listed_case_that_passes_fails_the_run(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("t/wrong\nt/good@toy  # fixed since\n")
    assert verify(corpus, "--expected-failures", str(listed)) == 1
    out = capsys.readouterr().out
    assert "UNEXPECTED PASS t/good [toy]" in out
    # the summary of a failed run does not count the surprise as a pass
    assert "1 unexpected pass (listed as expected to fail)" in out
    assert not any(line.startswith("1 pass") for line in out.splitlines()), out


def test_a_listed_case_that_does_not_exist_fails_the_run(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("t/wrong\nt/gone\n")
    assert verify(corpus, "--expected-failures", str(listed)) == 1
    assert "xfail.txt:2: 't/gone' names no case" in capsys.readouterr().out


def test_a_bad_expected_failures_file_is_one_clear_error(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = tmp_path / "xfail.txt"
    listed.write_text("t/wrong because it is\n")
    assert verify(corpus, "--expected-failures", str(listed)) == 2
    assert "xfail.txt:1:" in capsys.readouterr().err


def test_globs_select_and_skip_cases(corpus: Path) -> None:
    assert verify(corpus, "-k", "t/go*") == 0
    assert verify(corpus, "--skip", "*/wrong") == 0
    assert verify(corpus, "-k", "t/*") == 1


def test_a_timeout_is_unexpected_and_reported(corpus: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code = main(["verify", "--cases", str(corpus), "--timeout", "0.5", "--report", str(report), "--", *fake("hang_on_apply")])
    assert code == 1
    counts = json.loads(report.read_text())["counts"]
    assert (counts["timeout"], counts["fail"]) == (1, 1)  # t/wrong fails its player check before any apply


def test_ctrl_c_still_writes_the_report_for_the_cases_done(tmp_path: Path) -> None:
    root = tmp_path / "cases"
    for name in ("a1", "a2"):
        write_case(root, f"t/{name}", [{"action": "play AS"}])
    write_case(root, "t/z-hangs", [{"action": "play QS"}])  # the fake hangs on this action
    marker, report = tmp_path / "hanging", tmp_path / "report.json"
    command = [sys.executable, "-m", "conformance.cli", "verify", "--cases", str(root), "--timeout", "600",
               "--report", str(report), "--", *fake("hang_on_qs")]
    process = subprocess.Popen(command, env={**os.environ, "FAKE_MARKER": str(marker)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while not marker.exists():  # the two first cases are done once the fake hangs on the third
            assert process.poll() is None, process.communicate()
            try:
                process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=HANG_GUARD)
    finally:
        process.kill()
    assert process.returncode == 130
    data = json.loads(report.read_text())
    assert data["interrupted"] is True
    assert [(c["id"], c["outcome"]) for c in data["cases"]] == [("t/a1", "pass"), ("t/a2", "pass")]
