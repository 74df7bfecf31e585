"""The bundled corpus as a whole: the reference passes it, every used knob value has a case."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover

PROFILES = ("gambler-club", "repino-2013", "classic", "skill-games", "polish", "polish-tournament")


def hand_written() -> list[Transcript]:
    return [item for item in discover([CASES_DIR]) if isinstance(item, Transcript)]


@pytest.mark.slow
def test_the_corpus_has_300_hand_written_cases_over_the_six_profiles() -> None:
    cases = hand_written()
    assert len(cases) >= 300
    per_profile = Counter(profile.split("+")[0] for case in cases for profile in set(case.profiles))
    assert all(per_profile[name] >= 15 for name in PROFILES), per_profile


@pytest.mark.slow
def test_no_hand_written_case_is_marked_generated() -> None:
    assert not [case.id for case in hand_written() if case.generated]


@pytest.mark.slow
def test_every_used_knob_value_has_a_case(capsys: object) -> None:
    assert main(["coverage"]) == 0


@pytest.mark.slow
def test_the_reference_passes_the_whole_corpus(tmp_path: Path) -> None:
    """The main job, run as a user runs it: the reference as a subprocess of the runner."""
    report = tmp_path / "report.json"
    run = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", "--jobs", "2", "--report", str(report)],
        capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    counts = data["counts"]
    assert counts["pass"] >= 1500 and sum(counts.values()) == counts["pass"], counts
    assert set(data["profiles"]) >= set(PROFILES)
