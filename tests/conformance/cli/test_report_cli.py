"""`thousand report FILE.json [--markdown]` summarises a verify report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance import cli

REPORT = {
    "implementation": {"name": "my-engine", "version": "2.1"},
    "results": [
        {"id": "polish/auction/a", "title": "A", "profile": "polish", "outcome": "pass", "seconds": 0.1,
         "knobs": ["auction.bid_step"], "message": "", "details": {}},
        {"id": "polish/play/b", "title": "B", "profile": "polish", "outcome": "fail", "seconds": 0.1,
         "knobs": ["play.must_beat", "auction.bid_step"], "message": "legal actions differ", "details": {}},
        {"id": "polish/play/c", "title": "C", "profile": "polish", "outcome": "skipped", "seconds": 0.0,
         "knobs": [], "message": "", "details": {}},
    ],
}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_markdown_counts_sections_and_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", str(write(tmp_path, REPORT)), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Thousand conformance: my-engine 2.1")
    assert "3 (case, profile) pairs: 1 pass, 1 fail, 1 skipped." in out
    # columns: pass, fail, error, timeout, skipped, not_declared, case_bug (spec.vocabulary.OUTCOMES)
    assert "| auction | 1 | 1 | 0 | 0 | 0 | 0 | 0 |" in out  # both auction pairs, one failing
    assert "| play | 0 | 1 | 0 | 0 | 0 | 0 | 0 |" in out
    assert "- `polish/play/b [polish]` fail: legal actions differ" in out


def test_pairs_whose_profile_is_not_declared_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every pair the report holds is counted in the summary and the table: 4 pairs, 1 + 1 + 1 + 1."""
    undeclared = {"id": "classic/play/d", "title": "D", "profile": "classic", "outcome": "not_declared", "seconds": 0.0,
                  "knobs": ["play.must_beat"], "message": "", "details": {}}
    assert cli.main(["report", str(write(tmp_path, {**REPORT, "results": [*REPORT["results"], undeclared]})),
                     "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "4 (case, profile) pairs: 1 pass, 1 fail, 1 skipped, 1 not_declared." in out
    assert "| play | 0 | 1 | 0 | 0 | 0 | 1 | 0 |" in out


def test_text_is_the_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", str(write(tmp_path, REPORT))]) == 0
    out = capsys.readouterr().out
    assert "|" not in out and "fail: polish/play/b [polish]: legal actions differ" in out


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"results": 3}'])
def test_a_file_that_is_no_report_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    path = tmp_path / "report.json"
    path.write_text(content, encoding="utf-8")
    assert cli.main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("thousand report: ") and "Traceback" not in err
