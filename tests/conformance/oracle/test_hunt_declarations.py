"""Engines that play their own rules (``"profiles": "own"``) and engines that cannot tell why
they refuse (``refusal_reasons: false``), through verify, verify --rules, fit and fuzz (issue 22).

The doubles are the reference in tests/fake_impls/own_rules.py: one plays a house table of
classic (a 300 maximum) and declares "own"; the other plays classic exactly, declares a list
and refuses with a class only. The expected counts follow from the selection: every selected
case is checked (none is "not declared"), and a pass is partially checked exactly when its case
has a refused step (the reason is all that goes unchecked).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from tests.fake_impls.own_rules import COMMAND as OWN_RULES, TABLE_300
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from conformance.harness import runner

REFUSALS = "classic/auction/*"  # the auction cases: many refused bids, and max_bid shows in their legal sets


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    path = tmp_path / "table.yaml"
    path.write_text(TABLE_300.format(name="table"), encoding="utf-8")
    return path


def report_of(tmp_path: Path, *options: str, command: list[str]) -> tuple[int, dict[str, object]]:
    path = tmp_path / "report.json"
    code = main(["verify", *options, "--report", str(path), "--", *command])
    return code, json.loads(path.read_text(encoding="utf-8"))


def selected(pattern: str) -> list[Transcript]:
    cases = [c for c in discover([CASES_DIR]) if isinstance(c, Transcript)]
    return [c for c in cases if runner.case_selected(c.id, [pattern], []) and "classic" in c.profiles]


def has_refusal(case: Transcript) -> bool:
    return any("refused" in step for deal in case.deals for step in deal["steps"])


@pytest.mark.slow
def test_own_rules_are_checked_against_whatever_the_runner_names(tmp_path: Path, table: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    own = [*OWN_RULES, str(table)]
    code, data = report_of(tmp_path, "--profile", "classic", "-k", REFUSALS, "--cases", str(CASES_DIR), command=own)
    counts = data["counts"]
    assert isinstance(counts, dict)
    assert data["implementation_profiles"] == "own" and counts["not_declared"] == 0
    assert counts["pass"] + counts["fail"] == len(data["cases"]) > 0  # type: ignore[arg-type]
    assert code == 1 and counts["fail"] > 0  # classic's 400 maximum is not the table's
    # against its own table: every step of every case against the reference under it, all pass
    code, data = report_of(tmp_path, "--rules", str(table), "-k", REFUSALS, "--cases", str(CASES_DIR), command=own)
    assert code == 0 and data["counts"] == {**data["counts"], "fail": 0, "not_declared": 0}  # type: ignore[dict-item]
    capsys.readouterr()
    assert main(["fit", "--profile", "classic", "-k", "classic/auction/*", "--cases", str(CASES_DIR), "--", *own]) in (0, 1)
    out = capsys.readouterr().out
    assert "max_bid" in out  # fit observed it (it did not skip it as undeclared) and found the knob
    assert main(["fuzz", "--rules", str(table), "--deals", "40", "--seed", "1", "--", *own]) == 0
    assert "no new divergence in" in capsys.readouterr().out


@pytest.mark.slow
def test_refusals_without_a_reason_are_checked_as_refusals(tmp_path: Path, table: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    plain = [*OWN_RULES, "--no-reasons", "--list", "classic", "classic"]
    code, data = report_of(tmp_path, "--profile", "classic", "-k", REFUSALS, "--cases", str(CASES_DIR),
                           "--validate-messages", command=plain)
    cases = [c for c in selected(REFUSALS) if c.profiles == ("classic",) or "classic" in c.profiles]
    counts = data["counts"]
    assert isinstance(counts, dict)
    assert code == 0 and counts["fail"] == 0 and counts["pass"] == len(cases)
    assert data["partially_checked"] == sum(has_refusal(c) for c in cases) > 0
    assert "of the passes partially checked" in capsys.readouterr().out
    # house rules the double does not declare by name: the runner names classic, what the file extends
    same = tmp_path / "same.yaml"
    same.write_text("profile: same\ntitle: classic unchanged\nstatus: draft\nsummary: 'The classic rules, nothing changed.'\n"
                    "extends: classic\nsources: {}\nrules: {}\n", encoding="utf-8")
    code, data = report_of(tmp_path, "--rules", str(same), "-k", REFUSALS, "--cases", str(CASES_DIR), command=plain)
    assert code == 0 and data["counts"]["not_declared"] == 0 and data["partially_checked"] > 0  # type: ignore[index]
    # --as another profile it does not declare: nothing is checked, and the verdict says so
    assert main(["verify", "--rules", str(same), "--as", "polish", "-k", REFUSALS, "--cases", str(CASES_DIR),
                 "--", *plain]) == 5
    capsys.readouterr()
    assert main(["fit", "--profile", "classic", "-k", REFUSALS, "--cases", str(CASES_DIR), "--", *plain]) == 0
    assert "residual: none" in capsys.readouterr().out
    # fuzz plays illegal actions now and then: refused both sides, the reason not compared
    assert main(["fuzz", "--profile", "classic", "--deals", "60", "--seed", "1", "--", *plain]) == 0
    assert main(["fuzz", "--rules", str(same), "--deals", "30", "--seed", "2", "--", *plain]) == 0


def test_a_wrong_reason_still_fails_when_reasons_are_told(tmp_path: Path) -> None:
    """The leniency is for an engine that says it cannot tell, not for a wrong reason."""
    from conformance.oracle import observe

    told = observe.Reply(False, (), ("illegal", "bid_too_low"))
    wrong = observe.Reply(False, (), ("illegal", "not_your_turn"))
    plain = observe.Reply(False)
    assert observe._reply_details(told, wrong)[1] and not observe._reply_details(told, plain)[1]
    assert observe._reply_details(observe.Reply(True), plain)[1]  # accepted against refused still differs
    assert runner.match_name("own", "table") == "table" and runner.match_name(["classic"], "table", ("classic",)) == "classic"
    assert runner.match_name(["polish"], "table", ("classic",)) is None
