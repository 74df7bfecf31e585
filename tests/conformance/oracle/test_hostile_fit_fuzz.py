"""fit, fuzz, the cache, reports and pages under hostile implementations and files (issue 23's table).

Each row of the table is a tiny fake (tests/fake_impls/hostile_ref.py wraps the reference and
adds one bad behaviour; a line of sh where the protocol alone matters) or a tiny file. Each
test runs the command as a user would (a subprocess, under an address-space limit, so that
an unbounded memory use fails the run) and checks that it ended within a generous guard, its
exit code and its one line, that what it wrote is valid (or that nothing was written), and
that no process it started survives. The corpus is one or a few cases (-k), fuzz plays a few
deals, every timeout is short.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

import variants
from conformance import cli
from conformance.cli.report import markdown_code, markdown_text
from conformance.corpus import cache as corpus_cache
from tests.fake_impls.toy_corpus import FAKE, GOOD_STEPS, write_case
from tests.support.processes import alive
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # every test starts verify, fit or fuzz with a hostile implementation as subprocesses

HOSTILE = FAKE.parent / "hostile_ref.py"
GUARD = 90  # seconds: only turns a hang into a failure
MEMORY = 2 * 1024 ** 3  # bytes of address space the command may use: a 6 MB value per step would pass it
ONE = "classic/bolts/zeros-need-not-be-consecutive"
START_ONLY = '{"seq":1,"version":1,"implementation":{"name":"sh"},"profiles":"any"}'


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float
    pids: list[int] = field(default_factory=list)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def thousand(tmp_path: Path, *arguments: str, impl: list[str] | None = None, mode: str | None = None,
             at_marker: int | None = None) -> Run:
    """``thousand ARGUMENTS -- IMPL`` in a subprocess; with ``at_marker``, that signal is sent
    once the fake reaches its hostile moment."""
    pids, marker = tmp_path / "pids", tmp_path / "marker"
    command = [sys.executable, "-m", "conformance.cli", *arguments]
    if impl is not None or mode is not None:
        command += ["--", *(impl or [sys.executable, str(HOSTILE), str(mode)])]
    env = dict(os.environ, HOSTILE_PIDS=str(pids), HOSTILE_MARKER=str(marker))
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                               preexec_fn=_limit_memory)
    if at_marker is not None:
        while not marker.exists() and time.monotonic() < started + GUARD and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(at_marker)
    try:
        out, err = process.communicate(timeout=GUARD)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError(f"{' '.join(arguments[:1])} did not end within {GUARD} s") from None
    run = Run(process.returncode, out, err, time.monotonic() - started)
    run.pids = [int(line) for line in pids.read_text().split()] if pids.exists() else []
    return run


def assert_clean(run: Run) -> None:
    """Bounded, one clear story on stderr, nothing left running."""
    assert run.seconds < GUARD
    assert "Traceback" not in run.err and "MemoryError" not in run.err, run.err
    assert "\x1b" not in run.out + run.err and "\x07" not in run.out + run.err  # control characters escaped
    time.sleep(0.2)
    assert not [pid for pid in run.pids if alive(pid)]


def small_corpus(tmp_path: Path, pattern: str = ONE) -> str:
    """A corpus of the bundled cases matching ``pattern``, each under classic alone (reading
    the whole corpus, or running each case under every profile it lists, would cost more
    than the run)."""
    folder = tmp_path / "cases"
    for path in (ROOT / "conformance" / "cases").glob(pattern + ".yaml"):
        target = folder / path.relative_to(ROOT / "conformance" / "cases")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        target.write_text(json.dumps({**data, "profiles": ["classic"]}), encoding="utf-8")
    return str(folder)


def fit(tmp_path: Path, *options: str, mode: str | None = None, impl: list[str] | None = None,
        output: str = "fitted-here.yaml", case: str = ONE, at_marker: int | None = None) -> Run:
    return thousand(tmp_path, "fit", "--profile", "classic", "--cases", small_corpus(tmp_path, case), "--timeout", "2",
                    "--output", str(tmp_path / output), *options, mode=mode, impl=impl, at_marker=at_marker)


def fuzz(tmp_path: Path, *options: str, mode: str | None = None, impl: list[str] | None = None,
         at_marker: int | None = None, deals: str = "4") -> Run:
    return thousand(tmp_path, "fuzz", "--profile", "classic", "--deals", deals, "--timeout", "2", "--save",
                    str(tmp_path / "saved"), *options, mode=mode, impl=impl, at_marker=at_marker)


def saved(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "saved").rglob("*.yaml"))


def sh(script: str) -> list[str]:
    return ["sh", "-c", script]


# --- rows 1, 2, 5, 8: what an implementation sends is bounded; a broken one is exit 4 -------

@pytest.mark.slow
@pytest.mark.parametrize(("mode", "impl", "words"), [
    ("huge_legal", None, "600000 actions; at most 10000"),  # row 2
    ("garbage", None, "is not JSON"),  # row 5
    (None, sh(f"read l; echo '{START_ONLY}'; sleep 300"), "no reply to 'match'"),  # row 8: hangs after start
    (None, ["/no/such/engine"], "could not start"),  # row 8: no such engine
])
def test_fit_on_a_broken_implementation_is_exit_4_with_one_line_and_no_profile(
        tmp_path: Path, mode: str | None, impl: list[str] | None, words: str) -> None:
    run = fit(tmp_path, mode=mode, impl=impl)
    assert run.code == 4, run.err
    assert words in run.err and len(run.err.strip().splitlines()) == 1 and "no fitted profile written" in run.err
    assert not (tmp_path / "fitted-here.yaml").exists()
    assert_clean(run)


@pytest.mark.slow
def test_fit_under_6_mb_states_keeps_a_stand_in_and_names_the_field(tmp_path: Path) -> None:  # row 1 for fit
    # what is kept of each state is bounded (a stand-in of the 6 MB value), so the case is
    # observed to its end and the extra field is the one difference; a run that reads more
    # than its budget of long lines is given up (test_a_run_that_reads_too_much_...)
    run = fit(tmp_path, "--no-ask", mode="big_state")
    assert run.code == 1, run.err
    assert "state.junk" in run.out and "1 cases of classic" in run.out
    assert run.seconds < 60
    assert_clean(run)


@pytest.mark.slow
def test_fit_gives_up_on_an_implementation_that_times_out_on_every_case(tmp_path: Path) -> None:
    run = fit(tmp_path, "--timeout", "0.2", impl=sh(f"while read l; do echo '{START_ONLY}'; sleep 300; done"),
              case="classic/bolts/*")
    assert run.code == 4 and "no reply to 'match' within 0.2 s" in run.err
    assert run.seconds < 30  # nine cases: five timeouts, then given up (not nine times the timeout and a restart)
    assert_clean(run)


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "impl", "words"), [
    ("no_read_after_match", None, "no reply to 'deal'"),
    ("garbage", None, "not JSON: this is not JSON \\x1b[2J"),
    ("exit_mid_run", None, "exited with code 3"),
    ("deep", None, "nested too deeply"),
    ("huge_number", None, "reply to 'state' is not JSON"),
    ("huge_legal", None, "at most 10000"),
    (None, ["/no/such/engine"], "could not start: cannot start '/no/such/engine'"),
])
def test_fuzz_reports_a_protocol_failure_as_such_and_saves_nothing(
        tmp_path: Path, mode: str | None, impl: list[str] | None, words: str) -> None:  # row 5
    run = fuzz(tmp_path, mode=mode, impl=impl)
    assert run.code == 4, run.out + run.err
    assert words in run.out and "broke the protocol" in run.out or "could not start" in run.out
    assert "DIVERGENCE" not in run.out
    # a failure after some actions is saved as the transcript that replays them (it loads,
    # with its deals); one before any action leaves nothing
    for path in saved(tmp_path):
        assert yaml.safe_load(path.read_text(encoding="utf-8"))["deals"]
        assert cli.main(["verify", "--cases", str(tmp_path / "saved"), "--timeout", "10"]) == 0
    assert len(saved(tmp_path)) == (mode == "exit_mid_run")
    assert_clean(run)


@pytest.mark.slow
def test_fuzz_saves_a_divergence_as_a_valid_transcript_with_deals(tmp_path: Path) -> None:
    run = fuzz(tmp_path, mode="no_pass", deals="2")
    assert run.code == 1 and "1 finding in 2 deals" in run.out and "legal[auction]: missing pass" in run.out
    [path] = saved(tmp_path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["deals"] and data["generated"] is True
    assert_clean(run)
    # it passes against the reference and fails against the implementation
    assert cli.main(["verify", "--cases", str(tmp_path / "saved"), "--timeout", "10"]) == 0


@pytest.mark.slow
def test_fuzz_under_6_mb_states_is_bounded(tmp_path: Path) -> None:  # row 1 for fuzz
    run = fuzz(tmp_path, mode="big_state", deals="2")
    assert run.code == 1 and "state" in run.out
    assert all(path.stat().st_size < 1_000_000 for path in saved(tmp_path))
    assert_clean(run)


# --- row 4: helpers that leave the process group, and signals --------------------------

@pytest.mark.slow
def test_a_setsid_helper_survives_neither_fit_nor_fuzz(tmp_path: Path) -> None:
    run = fit(tmp_path, mode="setsid_helper")
    assert run.code == 0 and len(run.pids) >= 3  # the wrapper, its reference, the helper
    assert_clean(run)
    (tmp_path / "pids").unlink()
    run = fuzz(tmp_path, mode="setsid_helper", deals="2")
    assert run.code == 0 and len(run.pids) >= 3
    assert_clean(run)


@pytest.mark.slow
@pytest.mark.parametrize(("tool", "signum"), [("fit", signal.SIGTERM), ("fit", signal.SIGHUP), ("fuzz", signal.SIGTERM)])
def test_a_signal_while_the_implementation_stops_reading_is_one_line(tmp_path: Path, tool: str, signum: int) -> None:
    runner = fit if tool == "fit" else fuzz
    run = runner(tmp_path, "--timeout", "60", mode="no_read_after_match", at_marker=signum)
    assert run.code == 128 + signum
    assert run.err.strip().splitlines() == [line for line in run.err.strip().splitlines() if "stopped by" in line]
    assert f"stopped by {signal.Signals(signum).name}" in run.err
    assert not (tmp_path / "fitted-here.yaml").exists() and saved(tmp_path) == []
    assert_clean(run)


@pytest.mark.slow
def test_sigint_while_shrinking_names_the_seed_and_trial(tmp_path: Path) -> None:  # row 9
    run = fuzz(tmp_path, "--seed", "s7", "--timeout", "60", mode="no_pass_slow_shrink", at_marker=signal.SIGINT)
    assert run.code == 130
    assert "stopped by SIGINT" in run.err and "trial 0 (seed s7)" in run.err and "--seed s7" in run.err
    assert "unshrunk divergence of trial 0: legal" in run.out  # issue 52 row 17: the divergence itself is shown
    # and saved (the smallest so far): a valid transcript, said to be neither shrunk to the end nor proven
    files = saved(tmp_path)
    assert len(files) == 1 and f"saved {files[0]}" in run.out, run.out
    assert "not shrunk to the end and not proven" in run.out
    assert "not shrunk to the end and is not proven" in files[0].read_text(encoding="utf-8")
    assert cli.main(["verify", "--cases", str(tmp_path / "saved"), "--timeout", "10"]) == 0  # the reference's values
    assert_clean(run)


# --- rows 7 and 10: names from an implementation, escaped and clipped ---------------------

@pytest.mark.slow
def test_fit_cleans_and_clips_the_name_it_writes_and_the_file_validates(tmp_path: Path) -> None:
    run = fit(tmp_path, mode="control_name")
    assert run.code == 0, run.err
    written = tmp_path / "fitted-here.yaml"
    variants.load_profile_file(written)  # thousand validate accepts it
    title = yaml.safe_load(written.read_text(encoding="utf-8"))["title"]
    assert title.isprintable() and len(title) < 120 and "\n" not in title
    assert_clean(run)


def test_verify_escapes_control_characters_on_the_terminal(tmp_path: Path) -> None:  # row 6
    run = thousand(tmp_path, "verify", "--profile", "classic", "--cases", small_corpus(tmp_path), "--timeout", "5",
                   mode="garbage")
    assert run.code == 1 and "\\x1b[2J" in run.out
    assert_clean(run)


def test_report_markdown_escapes_a_hostile_implementation_name_and_messages(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    run = thousand(tmp_path, "verify", "--profile", "classic", "--cases", small_corpus(tmp_path), "--timeout", "5",
                   "--report", str(report),
                   mode="hostile_name")
    assert run.code == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    data["cases"][0].update(outcome="fail", id="a`b|c\n# d", message="<img src=x onerror=alert(1)> | `q`\n- row")
    report.write_text(json.dumps(data), encoding="utf-8")
    assert cli.main(["report", str(report), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "<script>" not in out and "<img" not in out and "&lt;script&gt;" in out
    assert out.startswith("## Thousand conformance: &lt;script&gt;alert(1)&lt;/script&gt; \\`x\\` \\| y")
    unexpected = [line for line in out.splitlines() if line.startswith("- ")]
    assert unexpected == ["- ``a`b|c # d [classic]`` fail: &lt;img src=x onerror=alert(1)&gt; \\| \\`q\\` - row"]
    assert not [line for line in out.splitlines() if line.startswith(("# ", "- row"))]


def test_markdown_helpers_leave_nothing_active() -> None:
    assert markdown_text("a|b`c*d_e[f]<g>\nh") == "a\\|b\\`c\\*d\\_e\\[f\\]&lt;g&gt; h"
    assert markdown_code("``x`") == "``` ``x` ```"


def test_the_site_escapes_a_hostile_profile_title_and_implementation_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen import build, results

    real = variants.resolve
    hostile = "<script>alert(1)</script> | <img src=x onerror=alert(2)>"

    def resolve(name: str) -> Any:
        found = real(name)
        from dataclasses import replace
        return replace(found, title=hostile, summary=hostile) if name == "classic" else found

    monkeypatch.setattr(variants, "resolve", resolve)
    pages = build.profile_page("classic", []) + build.profiles_index(["classic"])
    assert "<script>" not in pages and "<img" not in pages and "&lt;script&gt;" in pages
    assert "| [classic](classic.md) | &lt;script&gt;alert(1)&lt;/script&gt; \\|" in pages  # the table keeps its cells
    report = {"implementation": {"name": hostile, "version": "1"},
              "cases": [{"id": "x", "title": "x", "profile": "classic", "outcome": "pass", "seconds": 0, "knobs": []}]}
    monkeypatch.setattr(results, "load_report", lambda run: report)
    page = results.results_page("<!-- generated -->")
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page


# --- row 3: a cache that cannot lie ---------------------------------------------------

def _tamper(cache_dir: Path, change: str) -> None:
    """Drop the legal sets (or the deals) of every entry, and recompute the SHA-256 of the body."""
    file = cache_dir / corpus_cache.FILE_NAME
    header_text, _, body = file.read_text(encoding="utf-8").partition("\n")
    entries = json.loads(body)
    for data in entries.values():
        if change == "deals":
            data["deals"] = []
        for deal in data["deals"]:
            for step in deal.get("steps", []):
                step.pop("legal", None)
    body = json.dumps(entries, separators=(",", ":"), ensure_ascii=False)
    header = json.loads(header_text)
    header["digest"] = hashlib.sha256(body.encode()).hexdigest()
    file.write_text(json.dumps(header) + "\n" + body, encoding="utf-8")


@pytest.mark.parametrize("change", ["legal", "deals"])
def test_a_tampered_cache_does_not_change_the_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], change: str) -> None:
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(cache_dir))
    corpus = tmp_path / "cases"
    write_case(corpus, "t/legal", [{"action": "play AS", "legal": ["play AS"]}])  # the toy fake offers two
    command = ["verify", "--cases", str(corpus), "--", sys.executable, str(FAKE), "ok"]
    assert cli.main(command) == 1
    _tamper(cache_dir, change)
    assert cli.main(command) == 1  # the tampered entry is not trusted: the file is read and checked again
    assert "1 fail" in capsys.readouterr().out


@pytest.mark.parametrize("problem", ["writable", "owner"])
def test_a_cache_others_could_write_is_ignored_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str], problem: str) -> None:
    from conformance.corpus import transcripts

    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(corpus_cache, "_warned", set())
    corpus = tmp_path / "cases"
    write_case(corpus, "t/good", GOOD_STEPS)
    first = transcripts.discover([corpus])
    if problem == "writable":
        cache_dir.chmod(0o777)
    else:
        if os.getuid() != 0:
            pytest.skip("changing a folder's owner needs root")
        os.chown(cache_dir, 12345, 12345)
    before = (cache_dir / corpus_cache.FILE_NAME).read_bytes()
    assert transcripts.discover([corpus]) == first
    assert "the transcript cache is ignored" in capsys.readouterr().err
    assert (cache_dir / corpus_cache.FILE_NAME).read_bytes() == before  # nor written


# --- rows 11-15: options and files checked before the run, exit 2 with one line ----------

@pytest.mark.parametrize("arguments", [
    ["fit", "--profile", "classic", "--output", "/nonexistent/dir/x.yaml"],
    ["fit", "--profile", "classic", "--timeout", "1e10"],
    ["fuzz", "--profile", "classic", "--timeout", "3000000"],
    ["fuzz", "--profile", "classic", "--save", "/proc/nope"],
    ["fuzz", "--profile", "classic", "--deals", "0"],
    ["fuzz", "--profile", "classic", "--timeout", "1e-9"],  # issue 52 row 12: not "the reference failed"
    ["fit", "--profile", "classic", "--timeout", "0.001"],
    ["fit", "--profile", "classic", "--report", "/nonexistent/dir/r.json"],  # issue 52 row 8: said before the run
])
def test_a_bad_option_is_exit_2_before_the_run(tmp_path: Path, arguments: list[str]) -> None:
    run = thousand(tmp_path, *arguments, impl=["/no/such/engine"])
    assert run.code == 2 and len(run.err.strip().splitlines()) == 1 and run.seconds < 30
    assert_clean(run)


def test_fuzz_save_on_a_file_is_exit_2(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    run = thousand(tmp_path, "fuzz", "--profile", "classic", "--save", str(a_file), impl=["/no/such/engine"])
    assert run.code == 2 and "--save" in run.err
    assert_clean(run)


def _hostile_files(tmp_path: Path) -> dict[str, Path]:
    files = {"deep": "[" * 100_000 + "]" * 100_000, "cases-of-1": '{"cases": [1]}',
             "implementation-str": '{"cases": [], "implementation": "str"}',
             "nan": '{"cases": [{"id": "a", "profile": "p", "outcome": "fail", "message": NaN}]}',
             "knobs-str": '{"cases": [{"id": "a", "profile": "p", "outcome": "fail", "knobs": "abc"}]}'}
    paths = {}
    for name, text in files.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(text, encoding="utf-8")
    paths["dev-zero"] = tmp_path / "zero.json"
    paths["dev-zero"].symlink_to("/dev/zero")
    paths["fifo"] = tmp_path / "fifo"
    os.mkfifo(paths["fifo"])
    return paths


def test_report_refuses_every_hostile_file_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, path in _hostile_files(tmp_path).items():  # row 12
        assert cli.main(["report", str(path), "--markdown"]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("thousand report: ") and len(err.strip().splitlines()) == 1, (name, err)


@pytest.mark.parametrize("option", ["--case-list", "--expected-failures"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_verify_refuses_a_list_that_is_no_regular_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str,
                                                      kind: str) -> None:  # row 13
    path = _hostile_files(tmp_path)[kind]
    assert cli.main(["verify", option, str(path), "--", "/no/such/engine"]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("name", "extends", "words"), [
    ("kitchen\n", "classic", "is not a profile name"),
    ("kitchen", "classic+dump", "not an option"),
    ("kitchen", "/path/house.yaml", "not a file"),
])
def test_new_refuses_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, extends: str,
                                    words: str) -> None:  # row 14
    assert cli.main(["new", name, "--extends", extends, "--dir", str(tmp_path)]) == 2
    assert words in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_new_extends_a_house_file_beside_it(tmp_path: Path) -> None:
    assert cli.main(["new", "ours", "--extends", "classic", "--dir", str(tmp_path)]) == 0
    assert cli.main(["new", "ours-too", "--extends", "ours", "--dir", str(tmp_path)]) == 0
    assert variants.load_profile_file(tmp_path / "ours-too.yaml").lineage == ("ours", "classic")


# --- rows 16-18: house files ------------------------------------------------------------

def every_knob_house(folder: Path) -> Path:
    """A valid house profile setting every knob itself, each with a 2,000-character Cyrillic
    ruling: about 400 KB of YAML, over 1 MiB once \\u-escaped (row 16, and row 18)."""
    base = variants.resolve("classic")
    ruling = "Наше правило: " + "ж" * 1986  # what matters is its length once escaped
    rules = {section: {knob: {"value": variants.thaw(value), "ruling": ruling} for knob, value in knobs.items()}
             for section, knobs in base.rules.items()}
    document = {"profile": "every-knob", "title": "Every knob set here", "status": "draft",
                "summary": "A house profile that sets every knob itself, with long rulings.", "extends": "classic",
                "sources": {}, "rules": rules}
    path = folder / "a.yaml.d" / "every-knob.yaml"  # row 17: a folder whose name holds .yaml
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.slow
def test_verify_and_fuzz_play_a_large_house_file_that_sets_every_knob(tmp_path: Path) -> None:
    house = every_knob_house(tmp_path)
    assert len(json.dumps(variants.resolve(str(house)).to_document())) > 1024 * 1024  # as the runner once sent it
    run = thousand(tmp_path, "verify", "--rules", str(house), "--cases", small_corpus(tmp_path), "--timeout", "10")
    assert run.code == 0 and "1 pass" in run.out, run.out + run.err
    assert_clean(run)
    run = thousand(tmp_path, "fuzz", "--rules", f"{house}", "--deals", "2", "--timeout", "10",
                   impl=[sys.executable, "-I", "-m", "reference_impl.server", "--rules", str(house)])
    assert run.code == 0 and "no new divergence" in run.out, run.out + run.err
    assert_clean(run)


# --- issue 52: odd values, outputs, death by SIGKILL, skips -------------------------------

def test_fit_with_a_lone_surrogate_writes_both_outputs_and_replaces_a_link(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Rows 2 and 4: a lone surrogate in the name and the states; --output is a link to another file."""
    from conformance.harness import findings

    precious = tmp_path / "precious.yaml"
    precious.write_text("keep: me\n")
    (tmp_path / "fitted-here.yaml").symlink_to(precious)
    report = tmp_path / "fit.json"
    run = fit(tmp_path, "--report", str(report), mode="surrogate_name")
    assert run.code in (0, 1), run.err  # the extra state field is a residual or not: either is a verdict
    assert precious.read_text() == "keep: me\n" and not (tmp_path / "fitted-here.yaml").is_symlink()
    variants.load_profile_file(tmp_path / "fitted-here.yaml")
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["implementation"]["name"] == "engine \ufffd one"
    assert cli.main(["report", str(report)]) == 0 and "engine \ufffd one" in capsys.readouterr().out
    findings.Known.read(report)
    assert_clean(run)


@pytest.mark.parametrize("tool", ["fit", "fuzz"])
def test_sigkill_of_fit_or_fuzz_leaves_no_implementation(tmp_path: Path, tool: str) -> None:  # row 7
    runner = fit if tool == "fit" else fuzz
    run = runner(tmp_path, "--timeout", "60", mode="no_read_after_match", at_marker=signal.SIGKILL)
    assert run.code == -signal.SIGKILL
    assert len(run.pids) >= 2  # the wrapper and the reference it started (in its process group)
    deadline = time.monotonic() + 10
    while [pid for pid in run.pids if alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in run.pids if alive(pid)]


def _small_files() -> None:
    """Files of at most 300 bytes (a disk that fills up): a longer write fails with EFBIG
    instead of killing the process; and the address-space limit of every run here."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))
    _limit_memory()


def test_fuzz_save_on_a_full_disk_names_the_file_and_leaves_nothing(tmp_path: Path) -> None:  # rows 9 and 14
    command = [sys.executable, "-m", "conformance.cli", "fuzz", "--profile", "classic", "--deals", "2", "--timeout", "5",
               "--save", str(tmp_path / "saved"), "--", sys.executable, str(HOSTILE), "no_pass"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=GUARD, cwd=ROOT, preexec_fn=_small_files)
    assert done.returncode == 3, done.stdout + done.stderr
    target = tmp_path / "saved" / "classic" / "fuzz-0-0.yaml"
    assert f"cannot write {target}: File too large" in done.stdout
    assert "no --save" not in done.stdout and "(not saved: cannot write" in done.stdout
    assert "Traceback" not in done.stderr
    assert [p for p in (tmp_path / "saved").rglob("*") if p.is_file()] == []  # no 0-byte or temporary file


def test_replay_save_case_onto_a_dangling_link_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:  # row 15
    monkeypatch.chdir(tmp_path)
    assert cli.main(["new", "oak-club", "--extends", "gambler-club"]) == 0
    folder = tmp_path / "house" / "oak-club"
    folder.mkdir(parents=True)
    link = folder / "worked-example-contract-160-made.yaml"
    link.symlink_to(tmp_path / "elsewhere.yaml")  # dangling
    capsys.readouterr()
    code = cli.main(["replay", "gambler-club/scoring/worked-example-contract-160-made", "--profile", "./oak-club.yaml",
                     "--save-case", "house", "--json"])
    err = capsys.readouterr().err
    assert code == 1 and f"{link.relative_to(tmp_path)} exists; not overwritten" in err and "Errno" not in err
    assert not (tmp_path / "elsewhere.yaml").exists() and link.is_symlink()


def test_fuzz_on_an_adapter_that_skips_is_nothing_checked_in_words(tmp_path: Path) -> None:  # row 18 (exit code, message)
    run = fuzz(tmp_path, mode="skip_match", deals="2")
    assert run.code == 5, run.out + run.err
    assert "skipped: plays only its own rules" in run.out and "{'reason'" not in run.out + run.err
    assert saved(tmp_path) == []
    assert_clean(run)


def test_a_long_line_keeps_a_bounded_stand_in_of_each_long_value() -> None:  # row 16: the sum is bounded, not each value
    from conformance.harness.process import Answer, Posted
    from conformance.oracle import observe

    observer = observe.Observer(["unused"])
    item = Posted("state", 1, 0)

    def kept(state: dict[str, object]) -> dict[str, object]:
        line = json.dumps({"seq": 1, "state": state}).encode() + b"\n"
        return observer._kept(item, Answer(line, json.loads(line))).reply["state"]

    # 2,000 states with a 60 KB value each (under the runner's 64 KiB clip): every one is read
    # (none lost to a budget) and each keeps under 1 KB of it, 120 MB read for about 2 MB kept
    states = [kept({"phase": "play", "junk": "y" * 60_000}) for _ in range(2000)]
    assert all(state["phase"] == "play" and len(json.dumps(state)) < 1_000 for state in states)
    # a stand-in compares as its value does: equal for equal values, apart for values that
    # share their length and their head
    assert states[0] == states[1]
    assert kept({"junk": "y" * 59_999 + "z"}) != states[0]
    small = kept({"phase": "play", "hands": [["AS"] * 7] * 3, "pad": "p" * 20_000})  # a long line, short values
    assert small["hands"] == [["AS"] * 7] * 3 and small["pad"] != "p" * 20_000


def test_a_run_that_reads_too_much_of_long_lines_is_given_up() -> None:  # row 1: the time bound stays
    from conformance.harness.process import Answer, Posted, ProtocolFailure
    from conformance.oracle import observe

    observer = observe.Observer(["unused"], budget=observe.ReplyBudget(200_000))
    line = json.dumps({"seq": 1, "state": {"junk": "y" * 60_000}}).encode() + b"\n"
    for _ in range(3):
        observer._kept(Posted("state", 1, 0), Answer(line, json.loads(line)))
    with pytest.raises(ProtocolFailure, match="no more are read"):
        observer._kept(Posted("state", 1, 0), Answer(line, json.loads(line)))


@pytest.mark.parametrize("tool", ["fit", "fuzz"])
def test_a_start_failure_in_fit_or_fuzz_shows_what_the_implementation_said(tmp_path: Path, tool: str) -> None:  # row 10
    runner = fit if tool == "fit" else fuzz
    run = runner(tmp_path, impl=sh("echo 'engine: cannot open rules.dat' >&2; exit 2"))
    assert run.code == 4
    assert "exited with code 2; its stderr ends: engine: cannot open rules.dat" in run.out + run.err
    assert not (tmp_path / "fitted-here.yaml").exists() and saved(tmp_path) == []
    assert_clean(run)
