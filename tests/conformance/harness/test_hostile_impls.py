"""Hostile and broken implementations, and mistyped command lines (issue 10's table).

Each test runs ``thousand verify`` as a user would (a subprocess) against a tiny fake in
tests/fake_impls/hostile.py and checks: the run ends (a generous guard, never a timing
assertion), the classification and exit code, both reports written and valid (the JSON
against spec/schema/report.schema.json, the JUnit as XML), and no process left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.cli import main
from tests.fake_impls.toy_corpus import FAKE, GOOD_STEPS, write_case
from spec import SCHEMA_DIR
from tests.support.paths import ROOT
from tests.support.processes import alive

pytestmark = pytest.mark.slow  # every test starts thousand verify and a hostile implementation as subprocesses

HOSTILE = FAKE.parent / "hostile.py"
HANG_GUARD = 60  # seconds: only turns a hang into a failure
REPORT_SCHEMA = json.loads((SCHEMA_DIR / "report.schema.json").read_text(encoding="utf-8"))


@dataclass
class Run:
    code: int
    out: str
    err: str
    report: dict[str, Any] | None = None
    junit: ET.Element | None = None
    pids: list[int] = field(default_factory=list)

    def outcomes(self) -> dict[str, str]:
        assert self.report is not None
        return {case["id"]: case["outcome"] for case in self.report["cases"]}


def toy_corpus(root: Path) -> Path:
    write_case(root, "t/good", GOOD_STEPS)
    write_case(root, "t/wrong", [{"action": "play AS", "expect": {"scores": [0, 0, 1]}}])
    return root


def verify(tmp_path: Path, mode: str | None, *options: str, cases: Path | None = None, at_marker: int | None = None,
           cwd: Path | None = None, impl: list[str] | None = None) -> Run:
    """``thousand verify`` in a subprocess; with ``at_marker``, that signal is sent once the
    hostile fake reaches its moment."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    report, junit, pids, marker = out / "r.json", out / "j.xml", tmp_path / "pids", tmp_path / "marker"
    corpus = cases if cases is not None else toy_corpus(tmp_path / "cases")
    command = [sys.executable, "-m", "conformance.cli", "verify", "--cases", str(corpus), "--timeout", "2",
               "--report", str(report), "--junit", str(junit), *options]
    if impl is not None or mode is not None:
        command += ["--", *(impl or [sys.executable, str(HOSTILE), str(mode)])]
    env = dict(os.environ, HOSTILE_PIDS=str(pids), HOSTILE_MARKER=str(marker))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               cwd=cwd or ROOT)
    if at_marker is not None:
        deadline = time.monotonic() + HANG_GUARD
        while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(at_marker)
    try:
        stdout, stderr = process.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"thousand verify did not end within {HANG_GUARD} s") from None
    run = Run(process.returncode, stdout, stderr)
    if report.exists():
        run.report = json.loads(report.read_text(encoding="utf-8"))
        jsonschema.validate(run.report, REPORT_SCHEMA)
    if junit.exists():
        run.junit = ET.fromstring(junit.read_bytes())
    run.pids = [int(line) for line in pids.read_text().split()] if pids.exists() else []
    return run




def catches_sigterm(pid: int) -> None:
    """Wait until the runner has installed its handler (before it, SIGTERM just kills)."""
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
        if int(caught, 16) & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.02)


def assert_clean(run: Run) -> None:
    """Both reports written and valid (checked on reading), and nothing left running."""
    assert run.report is not None and run.junit is not None, run.err
    time.sleep(0.2)
    assert not [pid for pid in run.pids if alive(pid)]
    assert "Traceback" not in run.err


# --- selections that match nothing: exit 2 before anything runs ------------------------

@pytest.mark.parametrize(("options", "words"), [
    (["--profile", "toi"], "did you mean 'toy'"),
    (["--profile", "Toy"], "did you mean 'toy'"),
    (["--profile", "./house.yaml"], "thousand verify --rules FILE -- CMD"),
    (["-k", "typo/*"], "matches no case"),
    (["--timeout", "inf"], "finite"),
    (["--timeout", "nan"], "finite"),
    (["--jobs", "0"], "--jobs"),
])
def test_a_command_line_that_would_check_nothing_is_a_usage_error(tmp_path: Path, options: list[str], words: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    corpus = toy_corpus(tmp_path / "cases")
    report = tmp_path / "r.json"
    code = main(["verify", "--cases", str(corpus), "--report", str(report), *options, "--", sys.executable,
                 str(HOSTILE), "skip_all"])
    assert code == 2 and words in capsys.readouterr().err
    assert not report.exists()  # refused before anything ran


def test_a_missing_report_folder_is_an_error_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = toy_corpus(tmp_path / "cases")
    code = main(["verify", "--cases", str(corpus), "--report", str(tmp_path / "nope" / "r.json"), "--", "/no/such"])
    assert code == 2 and "does not exist" in capsys.readouterr().err


# --- implementations that cannot start -------------------------------------------------

def test_an_implementation_that_does_not_exist_is_one_message_and_exit_4(tmp_path: Path) -> None:
    run = verify(tmp_path, None, impl=[str(tmp_path / "no-such-engine")])
    assert run.code == 4 and run.err.count("could not start") == 1 and "No such file" in run.err
    assert_clean(run)
    assert run.report is not None and run.report["start_failure"] and len(run.report["cases"]) == 2


def test_profiles_given_as_a_string_is_a_start_error(tmp_path: Path) -> None:
    run = verify(tmp_path, "profiles_string")
    assert run.code == 4 and "'profiles' must be \"any\", \"own\" or a list" in run.err
    assert_clean(run)


def test_every_case_skipped_is_not_a_pass(tmp_path: Path) -> None:
    run = verify(tmp_path, "skip_all")
    assert run.code == 5 and "nothing was checked" in run.err
    assert run.report is not None and run.report["skipped_by_reason"] == {"match: toy rules only": 2}
    assert_clean(run)


# --- replies that break the protocol ---------------------------------------------------

@pytest.mark.parametrize(("mode", "outcomes"), [
    ("seq_true", {"error"}),
    ("deep_reply", {"error", "fail", "pass"}),
    ("deep_state", {"error", "fail", "pass"}),
    ("control_chars", {"error"}),
])
def test_a_hostile_reply_is_classified_and_no_case_is_lost(tmp_path: Path, mode: str, outcomes: set[str]) -> None:
    run = verify(tmp_path, mode)
    assert run.code == 1
    assert_clean(run)
    assert sorted(run.outcomes()) == ["t/good", "t/wrong"]  # every pair, exactly once
    assert set(run.outcomes().values()) <= outcomes


def test_a_reply_nested_too_deeply_is_that_case_s_error(tmp_path: Path) -> None:
    run = verify(tmp_path, "deep_reply")
    assert run.outcomes()["t/good"] == "error"
    case = next(c for c in (run.report or {})["cases"] if c["id"] == "t/good")
    assert "nested too deeply" in case["message"]


@pytest.mark.slow
def test_an_implementation_that_never_reads_times_out(tmp_path: Path) -> None:
    run = verify(tmp_path, "no_read")
    assert run.code == 1 and set(run.outcomes().values()) == {"timeout"}
    assert_clean(run)


@pytest.mark.slow
def test_huge_values_are_clipped_in_both_reports(tmp_path: Path) -> None:
    run = verify(tmp_path, "big_state")
    assert run.code == 1
    assert_clean(run)
    out = tmp_path / "out"
    assert (out / "r.json").stat().st_size < 1_000_000 and (out / "j.xml").stat().st_size < 1_000_000
    assert "<clipped:" in (out / "r.json").read_text()


def test_a_helper_that_calls_setsid_does_not_survive_the_run(tmp_path: Path) -> None:
    run = verify(tmp_path, "setsid_helper")
    assert len(run.pids) >= 2  # the fake and its helper
    assert_clean(run)


# --- signals ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_mid_run_writes_both_reports_marked_interrupted(tmp_path: Path, signum: int, code: int) -> None:
    run = verify(tmp_path, "hang_after_match", "--timeout", "50", at_marker=signum)
    assert run.code == code
    assert_clean(run)
    assert run.report is not None and run.report["interrupted"] is True
    assert run.report["signal"] == signal.Signals(signum).name
    assert len(run.err.strip().splitlines()) <= 2  # the progress line at most, and one line


@pytest.mark.slow
def test_a_signal_while_loading_writes_reports_and_exits_143(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "conformance.cli", "verify", "--report", str(out / "r.json"),
                                "--junit", str(out / "j.xml")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT)
    catches_sigterm(process.pid)  # loading the whole corpus takes seconds: the signal lands in it
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=HANG_GUARD)
    assert process.returncode == 143 and "Traceback" not in err
    report = json.loads((out / "r.json").read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    assert report["interrupted"] is True
    ET.fromstring((out / "j.xml").read_bytes())


# --- the bundled reference cannot be replaced by files in the current directory ----------

@pytest.mark.slow
def test_a_reference_impl_folder_in_the_cwd_is_not_started(tmp_path: Path) -> None:
    fake_package = tmp_path / "cwd" / "reference_impl"
    fake_package.mkdir(parents=True)
    (fake_package / "__init__.py").write_text("")
    (fake_package / "server.py").write_text(f"open({str(tmp_path / 'impostor')!r}, 'w').close()\n")
    cases = tmp_path / "cases"
    source = ROOT / "conformance" / "cases" / "classic" / "auction" / "pass-is-final.yaml"
    (cases / "classic" / "auction").mkdir(parents=True)
    shutil.copy(source, cases / "classic" / "auction" / "pass-is-final.yaml")
    run = verify(tmp_path, None, cases=cases, cwd=tmp_path / "cwd")
    assert run.code == 0, run.out + run.err
    assert not (tmp_path / "impostor").exists()
    assert run.report is not None and run.report["counts"]["pass"] >= 1


# --- every thousand command is quiet when its reader goes away ---------------------------

def test_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    shell = f"{sys.executable} -m conformance.cli show polish | head -3"
    done = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=HANG_GUARD, cwd=ROOT)
    assert len(done.stdout.splitlines()) == 3
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_case_list_or_folder_naming_nothing_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = toy_corpus(tmp_path / "cases")
    listed = tmp_path / "list.txt"
    listed.write_text("t/good\nt/godo  # a typo\n")
    assert main(["verify", "--cases", str(corpus), "--case-list", str(listed), "--", "/no/such"]) == 2
    assert "did you mean 't/good'" in capsys.readouterr().err
    assert main(["verify", "--cases", str(tmp_path / "nowhere"), "--", "/no/such"]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["verify", "--cases", str(tmp_path / "empty"), "--", "/no/such"]) == 2
    assert "no transcripts found" in capsys.readouterr().err


# --- issue 52: odd values, hostile names, start failures, death by SIGKILL, outputs -------

def _report_reads(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``thousand report`` (and --known, through the same reader) read what verify wrote."""
    from conformance.harness import findings

    assert main(["report", str(path), "--markdown"]) == 0, capsys.readouterr().err
    findings.Known.read(path)  # raises on a report it refuses
    return capsys.readouterr().out


def test_a_lone_surrogate_is_replaced_and_the_reports_are_written(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:  # row 2
    run = verify(tmp_path, "surrogate")
    assert run.code == 1, run.err  # t/wrong fails, t/good passes: the run itself is whole
    assert_clean(run)
    assert run.outcomes() == {"t/good": "pass", "t/wrong": "fail"}
    assert run.report is not None and run.report["implementation"]["name"] == "fake \ufffd engine"
    assert run.report["repaired_strings"] >= 3  # flagged: the name and the state of each case
    _report_reads(tmp_path / "out" / "r.json", capsys)


def test_nan_in_a_state_is_a_protocol_error_and_every_reader_reads_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # row 5
    run = verify(tmp_path, "nan_state")
    assert run.code == 1
    assert_clean(run)
    assert set(run.outcomes().values()) == {"error"}
    assert all("NaN, which is not a JSON number" in case["message"] for case in (run.report or {})["cases"])
    text = (tmp_path / "out" / "r.json").read_text(encoding="utf-8")
    assert "NaN" not in text.replace("NaN, which", "") and "Infinity" not in text
    _report_reads(tmp_path / "out" / "r.json", capsys)


def test_a_huge_object_named_implementation_is_coerced_clipped_and_flagged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # rows 3 and 6
    run = verify(tmp_path, "odd_name")
    assert_clean(run)
    assert run.report is not None
    info = run.report["implementation"]
    assert info["coerced"] is True and set(info) == {"name", "version", "coerced"}
    assert len(info["name"]) <= 200 and "\n" not in info["name"] and info["version"] == '{"major": 1}'
    assert (tmp_path / "out" / "r.json").stat().st_size < 100_000
    markdown = _report_reads(tmp_path / "out" / "r.json", capsys)
    title = markdown.splitlines()[0]
    assert "\\{ onclick" in title and "\\{: onclick" in title  # no attribute list can attach to the heading
    assert not [c for i, c in enumerate(title) if c in "{}" and title[i - 1] != "\\"]


def test_a_start_failure_shows_what_the_implementation_said(tmp_path: Path) -> None:  # row 10
    run = verify(tmp_path, "fail_start")
    assert run.code == 4
    assert_clean(run)
    assert "cannot open rules.dat" in run.err and "usage: engine" in run.err and "exited with code 2" in run.err
    assert run.report is not None and "cannot open rules.dat" in run.report["start_failure"]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGUSR1])
def test_the_implementation_and_its_child_die_with_a_killed_runner(tmp_path: Path, signum: int) -> None:  # row 7
    run = verify(tmp_path, "child_hang", "--timeout", "50", at_marker=signum)
    assert run.code == -signum
    assert len(run.pids) >= 2  # the fake and its child, in the fake's process group
    deadline = time.monotonic() + 10
    while [pid for pid in run.pids if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in run.pids if alive(pid)]


def test_a_timeout_below_the_minimum_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # row 12
    corpus = toy_corpus(tmp_path / "cases")
    assert main(["verify", "--cases", str(corpus), "--timeout", "1e-9", "--", "/no/such"]) == 2
    assert "--timeout must be from 0.01" in capsys.readouterr().err


def test_reports_replace_a_link_keep_the_mode_and_leave_nothing_partial(tmp_path: Path) -> None:  # rows 4 and 13
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (out / "r.json").symlink_to(target)  # a link planted where the report goes
    (out / "j.xml").write_text("old\n")
    (out / "j.xml").chmod(0o644)
    run = verify(tmp_path, "skip_all")
    assert run.code == 5
    assert target.read_text() == "keep me\n" and not (out / "r.json").is_symlink()
    assert (out / "j.xml").stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in out.iterdir()) == ["j.xml", "r.json"]  # no temporary file left


def _small_files(limit: int) -> None:
    """The runner may write files of at most ``limit`` bytes (a disk that fills up), and a
    write past it fails (EFBIG) instead of killing the process."""
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_report_that_cannot_be_written_is_named_and_nothing_partial_is_left(tmp_path: Path) -> None:  # row 14
    out = tmp_path / "out"
    out.mkdir()
    (out / "r.json").write_text("{}\n")
    corpus = toy_corpus(tmp_path / "cases")
    command = [sys.executable, "-m", "conformance.cli", "verify", "--cases", str(corpus), "--timeout", "5",
               "--report", str(out / "r.json"), "--", sys.executable, str(HOSTILE), "skip_all"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=HANG_GUARD, cwd=ROOT,
                          env=dict(os.environ, THOUSAND_NO_CACHE="1"), preexec_fn=lambda: _small_files(200))
    assert done.returncode == 2, done.stderr
    assert f"cannot write {out / 'r.json'}: File too large" in done.stderr and "Traceback" not in done.stderr
    assert (out / "r.json").read_text() == "{}\n"  # the previous report stays whole
    assert sorted(p.name for p in out.iterdir()) == ["r.json"]


@pytest.mark.parametrize(("line", "words"), [
    (b'{"seq": 1, "state": {"scores": [NaN, 0, 0]}}', "holds NaN, which is not a JSON number"),
    (b'{"seq": 1, "state": {"scores": [-Infinity, 0, 0]}}', "holds -Infinity"),
    (b'{"seq": 1, "a": ' + b"[" * 985 + b'"\\ud800"' + b"]" * 985 + b"}", "nested too deeply"),
])
def test_a_reply_the_session_cannot_take_is_a_protocol_failure(line: bytes, words: str) -> None:  # rows 2 and 5
    from conformance.harness.process import ProtocolFailure, decode_reply

    with pytest.raises(ProtocolFailure, match=words):
        decode_reply("state", line)


def test_lone_surrogates_are_replaced_once_and_counted() -> None:  # row 2
    from conformance.harness.process import decode_reply

    raw = '{"seq": 1, "name": "a\ud800b", "\udfff": ["\\udc00", "\\ud83d\\ude00"]}'.encode("utf-8", "surrogatepass")
    reply, repaired = decode_reply("start", raw)
    assert reply == {"seq": 1, "name": "a\ufffdb", "\ufffd": ["\ufffd", "\U0001f600"]} and repaired == 3
    json.dumps(reply, ensure_ascii=False).encode("utf-8")  # encodes: no surrogate is left
    assert decode_reply("start", b'{"seq": 1, "name": "plain"}') == ({"seq": 1, "name": "plain"}, 0)
