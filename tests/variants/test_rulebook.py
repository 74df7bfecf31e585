"""The rulebook: the rules in play, in deal order, in words, with examples computed from the values;
`thousand rulebook` writes it for a house file as Markdown or one self-contained HTML page."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import variants
from variants import rulebook
from tests.support.paths import ROOT

HOUSE = """\
profile: kitchen
title: "Kitchen <script>alert(1)</script> & co"
status: draft
summary: Our table's rules, classic's with the barrel at 900 and no bolts.
extends: classic
sources:
  table: {title: "What our table agreed <b>", note: "Written on the fridge door."}
rules:
  bolts:
    enabled: {value: false, source: "table bolts"}
  scoring:
    defender_rounding: {value: nearest_10, ruling: "We round defenders to tens, fives going up, as at school."}
"""


def _house(tmp_path: Path) -> Path:
    path = tmp_path / "kitchen.yaml"
    path.write_text(HOUSE, encoding="utf-8")
    return path


def _thousand(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_the_chapters_follow_a_deal_and_leave_out_what_is_not_played() -> None:
    titles = [chapter.title for chapter in rulebook.chapters(variants.resolve("polish"))]
    assert titles == ["The cards", "The deal", "The auction", "The talon and the exchange", "The contract",
                      "Giving up", "The play", "Marriages", "Scoring", "The 800 rule", "End of the match"]
    text = rulebook.markdown(variants.resolve("polish"))
    assert "These rules have no bolts, the dump or the barrel." in text
    assert "barrel" not in text.split("## Not played here")[0].lower().replace("on the barrel", "")


def test_a_rule_not_in_play_gets_no_sentence() -> None:
    """polish shows the talon always, so the bid from which it is shown is not a rule there."""
    text = rulebook.markdown(variants.resolve("polish"))
    assert "When the talon's showing depends on the bid" not in text
    assert "it is shown from a winning bid" in rulebook.markdown(variants.resolve("polish-tournament"))


def test_the_examples_are_computed_from_the_values() -> None:
    # polish: defenders round to tens, a remainder of 5 up (the schema's nearest_10): 22 -> 20, 23 -> 20, 25 -> 30.
    assert "22 scores 20, 23 scores 20, 25 scores 30" in rulebook.markdown(variants.resolve("polish"))
    # gambler-club: nearest 5, remainder 1-2 down, 3-4 up: 22 -> 20, 23 -> 25, 25 -> 25; half of 115 kept exactly.
    gambler = rulebook.markdown(variants.resolve("gambler-club"))
    assert "22 scores 20, 23 scores 25, 25 scores 25" in gambler
    assert "the declarer loses 115; each defender gains half the bid: 57.5." in gambler
    # skill-games: half of 115 = 57.5, rounded up to a multiple of 5 = 60.
    assert "57.5, rounded to 60" in rulebook.markdown(variants.resolve("skill-games"))
    # polish: bids in tens from 100; a bomb costs the declarer nothing, 60 to each defender.
    polish = rulebook.markdown(variants.resolve("polish"))
    assert "100, 110, 120, 130, 140, 150" in polish
    assert "the declarer's score does not change; each defender gains 60" in polish
    # made contract 140 with 47 card points + hearts 100 = 147 >= 140: classic scores the contract, 140.
    assert "47 + 100 = 147, at least 140, so the contract is made and they score 140." in polish


def test_rulings_and_sources_are_in_words() -> None:
    text = rulebook.markdown(variants.resolve("polish"))
    assert "scoring.defender_rounding" not in text and "seed-004" not in text and "Seed 004" not in text
    assert "“Polish rules of an online game (house and tournament rules)”. The rules page" in text


def test_the_command_writes_a_house_files_rulebook(tmp_path: Path) -> None:
    house = _house(tmp_path)
    done = _thousand("rulebook", str(house), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "# Kitchen &lt;script&gt;alert(1)&lt;/script&gt; &amp; co: the rules" in done.stdout
    assert "## Bolts" not in done.stdout and "These rules have no bolts" in done.stdout
    assert "22 scores 20, 23 scores 20, 25 scores 30" in done.stdout  # the house's rounding, not classic's
    assert "We round defenders to tens" not in done.stdout  # a knob's ruling belongs to the spec page


def test_the_html_page_is_self_contained_and_escaped(tmp_path: Path) -> None:
    house = _house(tmp_path)
    done = _thousand("rulebook", str(house), "--html", "-o", "rules.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "rules.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and "What our table agreed &lt;b&gt;" in page
    assert not re.search(r"""(?:src|href)=["']?(?:https?:|//|/)""", page), "the page loads nothing from outside"
    assert "@media print" in page


def test_a_bad_file_is_a_clear_error(tmp_path: Path) -> None:
    done = _thousand("rulebook", str(tmp_path / "missing.yaml"), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "missing.yaml" in done.stderr


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("chromium"), reason="needs Chromium to print")
def test_a_printed_rulebook_fits_on_four_a4_pages(tmp_path: Path) -> None:
    for name in variants.all_names():
        if "+" in name:
            continue
        page = tmp_path / f"{name}.html"
        page.write_text(rulebook.html_page(variants.resolve(name)), encoding="utf-8")
        pdf = tmp_path / f"{name}.pdf"
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                        f"--user-data-dir={tmp_path / 'profile'}", f"--print-to-pdf={pdf}", page.as_uri()],
                       capture_output=True, timeout=120)
        pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf.read_bytes()))
        assert 2 <= pages <= 4, f"{name}: {pages} pages"
