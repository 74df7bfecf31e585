"""A house variant is a new YAML file: it resolves by path, with options, like a bundled profile."""

from __future__ import annotations

from pathlib import Path

import pytest

import variants

HOUSE = """\
profile: house
title: Our kitchen table
status: stable
summary: Classic rules with the barrel at 900 and a dump at 555, as we play at home.
extends: classic
sources:
  table: {title: "What our table agreed in 2024"}
rules:
  barrel:
    threshold: {value: 900, source: "table barrel"}
"""


@pytest.fixture
def house(tmp_path: Path) -> Path:
    path = tmp_path / "house.yaml"
    path.write_text(HOUSE, encoding="utf-8")
    return path


def test_a_house_file_resolves_by_path(house: Path) -> None:
    resolved = variants.resolve(str(house))
    assert resolved.name == "house"
    assert resolved.rules["barrel"]["threshold"] == 900
    assert resolved.rules["auction"]["bid_step"] == 5  # inherited from classic
    assert resolved.provenance["barrel.threshold"]["from"] == "house"


def test_a_house_file_takes_its_parents_options(house: Path) -> None:
    resolved = variants.resolve(f"{house}+dump")
    assert resolved.name == "house+dump"
    assert resolved.rules["dump"]["enabled"] is True
    assert resolved.rules["barrel"]["threshold"] == 900


def test_a_missing_house_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(variants.ProfileError, match="cannot read the file"):
        variants.resolve(str(tmp_path / "nowhere.yaml"))


def test_text_after_the_file_name_must_be_options(house: Path) -> None:
    with pytest.raises(variants.ProfileError, match="house.yaml\\+option"):
        variants.resolve(f"{house}x")
