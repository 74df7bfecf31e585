"""House rules: the example on docs/house-rules.md validates, `thousand new` writes a file that
validates and never overwrites one, and `thousand coverage --profile ./house.yaml` reports it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import variants
from conformance import cli
from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "house-rules.md"


def page_example() -> str:
    found = re.search(r"<!-- house-example -->\n```yaml\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert found, "docs/house-rules.md lost its marked example"
    return found.group(1)


def test_the_example_on_the_page_validates(tmp_path: Path) -> None:
    path = tmp_path / "kitchen.yaml"
    path.write_text(page_example(), encoding="utf-8")
    resolved = variants.load_profile_file(path)
    assert resolved.name == "kitchen"
    assert variants.resolve(str(path)).rules["barrel"]["threshold"] == 900
    assert variants.resolve(str(path)).rules["marriages"]["four_aces"] == 200


def test_thousand_new_writes_a_file_that_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["new", "kitchen", "--extends", "polish", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "kitchen.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# House rules: kitchen.") and "# rules:" in text  # commented guidance
    resolved = variants.resolve(str(path))
    assert resolved.name == "kitchen" and resolved.rules == variants.resolve("polish").rules
    assert cli.main(["validate", str(path)]) == 0
    assert f"ok {path}" in capsys.readouterr().out


def test_thousand_new_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "kitchen.yaml"
    path.write_text("mine\n", encoding="utf-8")
    assert cli.main(["new", "kitchen", "--extends", "classic", "--dir", str(tmp_path)]) == 1
    assert path.read_text(encoding="utf-8") == "mine\n"
    assert "not overwritten" in capsys.readouterr().err


def test_thousand_new_refuses_a_bad_name_or_parent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["new", "Kitchen Table", "--extends", "classic", "--dir", str(tmp_path)]) == 2
    assert cli.main(["new", "kitchen", "--extends", "nowhere", "--dir", str(tmp_path)]) == 2
    assert not list(tmp_path.iterdir())
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
def test_coverage_of_a_house_file_names_the_changed_value(tmp_path: Path) -> None:
    path = tmp_path / "kitchen.yaml"
    path.write_text(page_example(), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "coverage", "--profile", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr  # its two changed values have no transcript
    lines = done.stdout.splitlines()
    assert lines[0].startswith("kitchen: 0/"), lines[0]
    assert any(line.strip().startswith("barrel.threshold = 900") and "MISSING" in line for line in lines)
    kept = next(line for line in lines if line.strip().startswith("auction.bid_step = 5"))
    assert "classic/" in kept  # a value kept from classic is covered by classic's transcripts
