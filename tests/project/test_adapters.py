"""The two toy adapters of examples/adapters/ pass every case of the starter subset; the adapter
of the npm engine 1k gives its recorded results on the whole polish corpus.

Each adapter is run by ``thousand verify`` as a real subprocess, exactly as the tutorial
(docs/verify.md) tells an implementer to run their own, and the JSON report is read back.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # every test runs an adapter (Python or Node) over a case list as a subprocess

STARTER = ROOT / "conformance" / "starter.txt"
ADAPTERS = {
    "python": [sys.executable, str(ROOT / "examples" / "adapters" / "python" / "adapter.py")],
    "node": ["node", str(ROOT / "examples" / "adapters" / "node" / "adapter.js")],
}
HANG_GUARD = 300  # seconds: only turns a hang into a failure, never a timing check


def starter_ids() -> list[str]:
    """The case ids of conformance/starter.txt ('#' comments and blank lines left out)."""
    lines = (line.split("#", 1)[0].strip() for line in STARTER.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def starter_pairs() -> set[str]:
    """Every ``id@profile`` the starter subset runs: one per profile each case names."""
    wanted = set(starter_ids())
    cases = [c for c in discover([CASES_DIR]) if c.id in wanted and isinstance(c, Transcript)]
    return {f"{case.id}@{profile}" for case in cases for profile in case.profiles}


def need(program: str) -> None:
    """Skip when a program is missing on a developer machine; fail on CI, which has it."""
    if shutil.which(program) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{program} is not installed, and CI is set: the CI image must provide it")
        pytest.skip(f"{program} is not installed")


def test_the_starter_subset_is_well_formed() -> None:
    ids = starter_ids()
    assert len(ids) >= 6 and len(set(ids)) == len(ids), "at least 6 distinct case ids"
    known = {case.id: case for case in discover([CASES_DIR])}
    missing = [case_id for case_id in ids if case_id not in known]
    assert not missing, f"conformance/starter.txt names cases that do not exist: {missing}"
    bugs = [case_id for case_id in ids if not isinstance(known[case_id], Transcript)]
    assert not bugs, f"conformance/starter.txt names transcripts that do not load: {bugs}"
    profiles = {p.split("+")[0] for case_id in ids for p in known[case_id].profiles}
    assert len(profiles) >= 3, f"the starter subset covers only {sorted(profiles)}"


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(ADAPTERS))
def test_the_adapter_passes_every_starter_case(language: str, tmp_path: Path) -> None:
    command = ADAPTERS[language]
    need(command[0])
    report = tmp_path / "report.json"
    selection = ["--case-list", str(STARTER)]
    finished = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", "--validate-messages", *selection,
         "--report", str(report), "--", *command],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert finished.returncode == 0, f"thousand verify exited {finished.returncode}:\n{finished.stdout}\n{finished.stderr}"
    data = json.loads(report.read_text(encoding="utf-8"))
    outcomes = {f"{case['id']}@{case['profile']}": case["outcome"] for case in data["cases"]}
    not_passed = {pair: outcome for pair, outcome in outcomes.items() if outcome != "pass"}
    assert not not_passed, f"starter cases not passed by the {language} adapter: {not_passed}"
    assert set(outcomes) == starter_pairs(), "every starter case must run under every profile it names"
    assert data["implementation"]["name"] == f"toy-auction-{language}"


ONE_K = ROOT / "examples" / "adapters" / "1k"
ONE_K_RESULTS = ROOT / "docs" / "results" / "1k.json"


def test_the_1k_adapter_gives_its_recorded_results_on_the_whole_polish_corpus(tmp_path: Path) -> None:
    """The adapter of the published npm engine `1k` (examples/adapters/1k, on the JavaScript kit)
    plays every phase; on every polish case each outcome is the one docs/results/1k.json records
    (`python -m sitegen.engine_results` records them), and every message is valid."""
    need("node")
    if not (ONE_K / "node_modules" / "1k").is_dir():
        if os.environ.get("CI"):
            pytest.fail("examples/adapters/1k/node_modules is missing, and CI is set: .ci/run must run `npm ci` there")
        pytest.skip("the npm package 1k is not installed: run `npm ci` in examples/adapters/1k")
    report = tmp_path / "report.json"
    finished = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", "--validate-messages", "--profile", "polish", "--jobs", "2",
         "--report", str(report), "--", "node", str(ONE_K / "adapter.js")],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert finished.returncode == 1, f"1k fails some polish cases; thousand verify exited {finished.returncode}:\n{finished.stderr}"
    data = json.loads(report.read_text(encoding="utf-8"))
    outcomes = {f"{case['id']}@{case['profile']}": case["outcome"] for case in data["cases"]}
    recorded = json.loads(ONE_K_RESULTS.read_text(encoding="utf-8"))["verify"]["outcomes"]
    changed = {pair: (recorded.get(pair), outcome) for pair, outcome in outcomes.items() if recorded.get(pair) != outcome}
    assert not changed and set(outcomes) == set(recorded), f"(recorded, now) outcomes differ: {changed}"
    assert {"pass", "fail"} <= set(outcomes.values()), "it passes some cases and fails others"
    assert data["implementation"]["name"] == "1k"
    assert data["unsupported"]["state_fields"] == ["bolts", "barrel"], "bolts and barrel are declared absent"
    assert data["partially_checked"] > 0, "the cases that check bolts or barrel count as partially checked"


def test_the_quick_start_template_fails_as_the_quick_start_shows(tmp_path: Path) -> None:
    """docs/quickstart.md, steps 2, 4 and 5, followed literally: the template copied as it is
    fails every starter case at its first unwritten method, as the page's output says."""
    shutil.copy(ROOT / "examples" / "adapters" / "python" / "template.py", tmp_path / "my_adapter.py")
    finished = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", "--case-list", str(STARTER), "--", sys.executable, "my_adapter.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD)
    shown = (ROOT / "docs" / "snippets" / "quickstart-template.txt").read_text(encoding="utf-8").splitlines()
    assert finished.returncode == 1
    got = finished.stdout.replace(sys.executable, "python").splitlines()
    assert got[:4] == shown[1:5]  # the first failure: case, message, where, knobs
    assert shown[-6] == "38 error" and got[-6:] == shown[-6:]  # the summary and the root cause
    assert "quickstart.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("Implementers:")[1].splitlines()[1]
