"""The Results page shows every whole-corpus run by profile with passes, failures and skips,
not only the starter subset (where the toy adapters look perfect)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from sitegen import build, results
from tests.support.paths import ROOT


def _counts(name: str) -> Counter[str]:
    report = json.loads((ROOT / "docs" / "results" / f"{name}.json").read_text(encoding="utf-8"))
    return Counter(r["outcome"] for r in report.get("results", report.get("cases", [])))


def test_the_results_page_shows_the_whole_corpus_by_profile() -> None:
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert "## The whole corpus, by profile" in page
    whole = page.split("## The whole corpus, by profile")[1].split("## The starter subset")[0]
    for name in build.profile_names():
        assert f">{name}</a></th>" in whole, name
    # the Python toy over every case: its report's own counts, skips included
    toy = _counts("python-toy-all")
    failed = sum(toy.values()) - toy["pass"] - toy["skipped"]
    assert f"{toy['pass']:,} pass, {failed:,} failed, {toy['skipped']:,} skipped" in whole
    assert toy["skipped"] > toy["pass"]  # why the starter matrix alone misleads


def test_a_whole_corpus_run_added_to_runs_gets_a_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another implementation joins the table by one entry in RUNS (its report under docs/results/)."""
    extra = results.Run("python-toy-all", "another engine, every case", ("another",), starter=False, matrix=False)
    monkeypatch.setattr(results, "RUNS", (*results.RUNS, extra))
    section = "\n".join(results.whole_corpus_section())
    assert "<th>another engine, every case</th>" in section
    assert len(re.findall(r'<tr class="total">', section)) == 1
