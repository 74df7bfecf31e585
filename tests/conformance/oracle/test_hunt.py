"""``thousand fuzz`` keeps hunting (issue 22): one shrunk transcript per new root cause, the
known ones (``--known`` REPORT) passed over; and the path after fit, on a test double with a
knob difference, a bug no knob expresses and a list declaration.

Every claim about a saved transcript is checked by replaying it with ``thousand verify``
against the implementations that should fail and pass it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from tests.fake_impls.own_rules import TABLE_300
from conformance.harness import findings

MUST_BEAT, MARRIAGES = "must-beat-missing", "marriage-values-hearts-diamonds-swapped"
SERVE = [sys.executable, "-m", "mutants.serve"]


def replay(folder: Path, command: list[str], *rules: str) -> int:
    """``thousand verify`` of the transcripts below ``folder`` (under house rules with ``rules``)."""
    return main(["verify", *rules, "--cases", str(folder), "--", *command])


def fuzz(*options: str, command: list[str]) -> int:
    return main(["fuzz", "--deals", "300", "--seed", "1", *options, "--", *command])


def saved_below(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.yaml"))


@pytest.mark.slow
def test_fuzz_finds_each_of_two_mistakes_and_saves_one_transcript_per_cause(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    found = tmp_path / "found"
    assert fuzz("--profile", "polish", "--save", str(found), command=[*SERVE, MUST_BEAT, MARRIAGES]) == 1
    out = capsys.readouterr().out
    assert "findings in 300 deals" in out and "first in deal" in out
    saved = saved_below(found)
    assert len(saved) >= 2 and out.count("saved ") == len(saved)
    # one per mistake: a transcript that fails against one mutant alone and passes against the other
    shows: dict[str, list[Path]] = {MUST_BEAT: [], MARRIAGES: []}
    for path in saved:
        one = tmp_path / path.stem
        (one / "polish").mkdir(parents=True)
        (one / "polish" / path.name).write_bytes(path.read_bytes())
        fails = {name: replay(one, [*SERVE, name]) == 1 for name in shows}
        for name, other in ((MUST_BEAT, MARRIAGES), (MARRIAGES, MUST_BEAT)):
            if fails[name] and not fails[other]:
                shows[name].append(path)
        assert replay(one, []) == 0  # the reference plays every saved transcript as recorded
    capsys.readouterr()
    assert shows[MUST_BEAT] and shows[MARRIAGES], shows


@pytest.mark.slow
def test_a_known_mistake_is_passed_over_and_only_the_other_is_found(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "must-beat.json"
    assert main(["verify", "--profile", "polish", "--jobs", "2", "--report", str(report), "--", *SERVE, MUST_BEAT]) == 1
    known = findings.Known.read(report)
    capsys.readouterr()
    found = tmp_path / "found"
    assert fuzz("--profile", "polish", "--known", str(report), "--save", str(found),
                command=[*SERVE, MUST_BEAT, MARRIAGES]) == 1
    out = capsys.readouterr().out
    assert "known root causes" in out
    saved = saved_below(found)
    assert saved
    for path in saved:  # every finding is the marriage mistake's, none the known one's
        one = tmp_path / path.stem / "polish"
        one.mkdir(parents=True)
        (one / path.name).write_bytes(path.read_bytes())
        assert replay(one.parent, [*SERVE, MARRIAGES]) == 1
    headlines = [line for line in out.splitlines() if line.startswith("  ") and ". " in line[:6]]
    assert headlines and all(known.cause_of(line.split(". ", 1)[1].split(": ")[0]) is None for line in headlines)


@pytest.mark.slow
def test_the_path_after_fit_rules_a_list_declaration_and_a_bug_no_knob_expresses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """D differs from classic in one knob (a 300 maximum) and has a bug no knob expresses; it
    declares only classic. The fitted rules (written by hand here, as fit finds them) name a
    house profile D does not declare: verify and fuzz name the profile it extends."""
    table, fitted = tmp_path / "table.yaml", tmp_path / "fitted.yaml"
    table.write_text(TABLE_300.format(name="table"), encoding="utf-8")
    fitted.write_text(TABLE_300.format(name="fitted"), encoding="utf-8")
    double = [*SERVE, "--rules", str(table), "--declare", "classic", "undeclared-marriage-counted"]
    report = tmp_path / "known.json"
    # the known differences: a report of the same schema (bolt cases only, to keep it short)
    assert main(["verify", "--rules", str(fitted), "-k", "classic/bolts/*", "--report", str(report), "--", *double]) == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    checked = data["counts"]["pass"] + data["counts"]["fail"]
    assert data["counts"]["not_declared"] == 0 and checked == len(data["cases"]) > 0  # every selected case checked
    assert "checked against the reference under" in capsys.readouterr().out
    found = tmp_path / "found"
    assert fuzz("--rules", str(fitted), "--known", str(report), "--save", str(found), command=double) == 1
    out = capsys.readouterr().out
    assert f"--rules {fitted} --cases {found}" in out  # the next step replays the findings
    assert saved_below(found)
    assert replay(found, double, "--rules", str(fitted)) == 1
    assert replay(found, [sys.executable, "-m", "reference_impl.server", "--rules", str(fitted)], "--rules", str(fitted)) == 0


@pytest.mark.slow
def test_a_known_report_that_is_not_one_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad, wrong = tmp_path / "bad.json", tmp_path / "wrong.json"
    bad.write_text("{not json", encoding="utf-8")
    wrong.write_text(json.dumps({"groups": []}), encoding="utf-8")
    for path in (bad, wrong, tmp_path / "missing.json"):
        assert main(["fuzz", "--profile", "polish", "--known", str(path), "--deals", "1", "--", *SERVE, MUST_BEAT]) == 2
        assert main(["verify", "--profile", "polish", "--known", str(path), "--", *SERVE, MUST_BEAT]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 2 and all(str(path) in line and "--known" in line for line in err), err
        assert "Traceback" not in "".join(err)


@pytest.mark.slow
def test_verify_sets_known_root_causes_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, again = tmp_path / "first.json", tmp_path / "again.json"
    command = [*SERVE, MUST_BEAT]
    assert main(["verify", "--profile", "polish", "-k", "polish/play/*", "--report", str(report), "--", *command]) == 1
    first = json.loads(report.read_text(encoding="utf-8"))
    capsys.readouterr()
    code = main(["verify", "--profile", "polish", "-k", "polish/play/*", "--known", str(report), "--report", str(again),
                 "--", *command])
    out = capsys.readouterr().out
    second = json.loads(again.read_text(encoding="utf-8"))
    assert code == 0 and second["unexpected"] == 0 and not second["groups"]
    assert second["expected_failures"] == first["unexpected"] > 0
    assert f"known root causes ({report}): {first['unexpected']} failures set apart" in out
