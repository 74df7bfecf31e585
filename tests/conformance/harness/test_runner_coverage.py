"""``thousand coverage``: the mechanism, on a tiny corpus in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.rulesets import coverage
from conformance.cli import main
from conformance.corpus.transcripts import discover, Transcript
from tests.fake_impls.toy_corpus import write_case

VALUES = {"play.must_beat": True, "play.must_trump": True, "bolts.enabled": False, "bolts.every": 3,
          "giving_up.local_name": "bomb"}


def cases(root: Path) -> list[Transcript]:
    return [item for item in discover([root]) if isinstance(item, Transcript)]


INERT = {"bolts.every": "it applies only when bolts.enabled is true", "giving_up.local_name": "display only"}


def test_a_used_knob_without_a_case_is_missing(tmp_path: Path) -> None:
    write_case(tmp_path, "toy/play/beat", [{"action": "play AS"}], knobs=["play.must_beat", "bolts.enabled"])
    report = coverage.coverage([coverage.ProfileSpec("toy", VALUES, inert=INERT)], cases(tmp_path))["toy"]
    assert report["play.must_beat"].cases == ["toy/play/beat"]
    assert [knob for knob, entry in report.items() if entry.missing] == ["play.must_trump"]
    assert not report["bolts.every"].required  # inert: bolts are off
    assert report["bolts.every"].inert == INERT["bolts.every"]
    assert not report["giving_up.local_name"].required


def test_a_child_profile_owes_cases_only_for_what_it_changes(tmp_path: Path) -> None:
    write_case(tmp_path, "toy/play/beat", [{"action": "play AS"}], knobs=["play.must_beat", "play.must_trump", "bolts.enabled"])
    child = {**VALUES, "play.must_beat": False}
    specs = [coverage.ProfileSpec("toy", VALUES, inert=INERT), coverage.ProfileSpec("toy+loose", child, "toy", VALUES, INERT)]
    report = coverage.coverage(specs, cases(tmp_path))
    assert not any(entry.missing for entry in report["toy"].values())
    assert [knob for knob, entry in report["toy+loose"].items() if entry.missing] == ["play.must_beat"]
    assert report["toy+loose"]["play.must_trump"].inherited_from == "toy"


def test_generated_transcripts_do_not_count(tmp_path: Path) -> None:
    write_case(tmp_path, "toy/gen", [{"action": "play AS"}], knobs=["play.must_trump"], generated=True)
    report = coverage.coverage([coverage.ProfileSpec("toy", VALUES)], cases(tmp_path))["toy"]
    assert report["play.must_trump"].missing


def test_the_command_on_a_bundled_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("variants").resolve("polish")
    write_case(tmp_path, "polish/auction/x", [{"action": "bid 100"}], profiles=["polish"], knobs=["auction.bid_step"])
    assert main(["coverage", "--profile", "polish", "--cases", str(tmp_path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["profiles"]["polish"]["auction.bid_step"] == {"value": 10, "cases": ["polish/auction/x"],
                                                              "required": True, "inherited_from": None, "inert": None}
    assert "polish: auction.opening" in data["missing"]
