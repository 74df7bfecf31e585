"""The validate, show and profiles subcommands: exit codes and output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from spec import PROFILES_DIR
from tests.support.paths import FIXTURES

INVALID = FIXTURES / "profiles" / "invalid"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_validate_passes_on_the_bundled_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(path) for path in sorted(PROFILES_DIR.glob("*.yaml"))]
    code, out, _ = run(capsys, "validate", *paths)
    assert code == 0
    assert out.splitlines() == [f"ok {path}" for path in paths]


def test_validate_reports_each_bad_file_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    good = str(PROFILES_DIR / "classic.yaml")
    bad = str(INVALID / "unknown-knob.yaml")
    code, out, _ = run(capsys, "validate", good, bad)
    assert code == 1
    assert out.splitlines() == [
        f"ok {good}",
        f"{bad}:10:5: rules.auction.bid_stpe: unknown knob 'bid_stpe'; did you mean 'bid_step'?",
    ]


def test_validate_of_a_missing_file_is_an_error_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "validate", str(tmp_path / "absent.yaml"))
    assert code == 1
    assert out.startswith(f"{tmp_path / 'absent.yaml'}: cannot read the file")


def test_validate_every_invalid_fixture_fails_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(path) for path in sorted(INVALID.glob("*.yaml"))]
    code, out, err = run(capsys, "validate", *paths)
    assert code == 1
    lines = out.splitlines()
    assert {line.split(":", 1)[0] for line in lines} == set(paths)  # every file has its errors, one or more
    assert not any(line.startswith("ok ") for line in lines)
    assert "Traceback" not in out + err


def test_show_groups_values_by_section_with_their_provenance(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "classic+four-aces")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "classic+four-aces: Full rules with variants + Four aces"
    assert "[auction]" in lines and "[match_end]" in lines
    index = lines.index("  four_aces = 200")
    assert lines[index + 1] == "      source: seed-001 Variants [from classic+four-aces]"
    assert "  ceiling = \"none\"" in lines
    assert lines[lines.index("  ceiling = \"none\"") + 1].startswith("      ruling: The source states only")


def test_show_flags_a_draft_and_unverified_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "repino-2013")
    assert code == 0
    assert "DRAFT" in out.splitlines()[1]
    lines = out.splitlines()
    assert lines[lines.index('  first_lead = "declarer"') + 1].endswith("[UNVERIFIED]")


def test_show_json_is_the_resolved_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "polish-tournament", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["profile"] == "polish-tournament"
    assert document["rules"]["talon"]["shown"] == "from_bid"
    assert document["provenance"]["defender_lock.mode"]["from"] == "polish-tournament"


@pytest.mark.parametrize(
    ("name", "message"),
    [("nope", "nope: unknown profile 'nope'"), ("classic+nope", "unknown option 'nope' for profile 'classic'")],
)
def test_show_of_a_bad_name_is_one_error_line(capsys: pytest.CaptureFixture[str], name: str, message: str) -> None:
    code, out, err = run(capsys, "show", name)
    assert code == 1 and out == ""
    assert message in err and len(err.splitlines()) == 1


def test_profiles_lists_names_titles_status_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "profiles")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["classic", "stable"]
    assert any(line.split()[:2] == ["repino-2013", "draft"] and "extends gambler-club" in line for line in lines)
    assert any(line.strip() == "+weak-talon: Redeal for a weak talon" for line in lines)
    assert sum(1 for line in lines if not line.startswith(" ")) == 6


def test_the_installed_command_runs() -> None:
    """The real entry point, once, as a subprocess: the exit code reaches the shell."""
    bad = str(INVALID / "tab-indentation.yaml")
    result = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", bad], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stdout.strip() == f"{bad}:10:1: tab character in indentation: YAML indentation must use spaces"
    assert result.stderr == ""


def test_show_of_a_bare_name_suggests_the_house_file_here(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "new", "oak-club", "--extends", "gambler-club")[0] == 0
    code, _, err = run(capsys, "show", "oak-club")
    assert code == 1 and "did you mean the file ./oak-club.yaml?" in err and "'gambler-club'" not in err.split("(profiles")[0]


def test_an_int_or_null_knob_written_off_is_told_to_write_null(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run(capsys, "new", "oak-club", "--extends", "gambler-club")
    text = (tmp_path / "oak-club.yaml").read_text(encoding="utf-8")
    assert "Knob reference" in text and "Write null (not `off`)" in text  # the template names the reference
    (tmp_path / "oak-club.yaml").write_text(text.replace("rules: {}\n", 'rules:\n  auction:\n    stop_at: {value: "off", '
                                                         'ruling: "We never stop the auction at any amount."}\n', 1))
    code, out, _ = run(capsys, "validate", "oak-club.yaml")
    assert code == 1 and "expected an integer >= 50 and <= 1000 or null (write null for no limit), got 'off'" in out


THREE_MISTAKES = """\
profile: three
title: Three mistakes
status: draft
summary: A file with three mistakes in it, to see them all at once.
extends: classic
sources:
  table: {title: "What our table agreed"}
rules:
  auction:
    bid_step: {value: "five", source: "table auction"}
    max_bid: {value: 300, source: "nowhere auction"}
  barrel:
    threshold: {value: 880}
"""


def test_validate_reports_every_error_of_a_file_in_one_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two schema errors (a word for a number, a value with neither source nor ruling) and a
    citation of no listed source: one run names all three, in file order."""
    path = tmp_path / "three.yaml"
    path.write_text(THREE_MISTAKES, encoding="utf-8")
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert out.splitlines() == [
        f"{path}:10:23: rules.auction.bid_step: expected an integer >= 1 and <= 100, got 'five'",
        f"{path}:11:35: rules.auction.max_bid.source: cites 'nowhere', which is not a key of 'sources' (sources: table)",
        f"{path}:13:5: rules.barrel.threshold: a value needs a 'source' (a cited section) or a 'ruling' (the reason)",
        f"{path}: 3 errors",
    ]
