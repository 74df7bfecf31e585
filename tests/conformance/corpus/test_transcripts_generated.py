"""Generated transcripts: deterministic, valid, and passing against the reference."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.harness import runner
from conformance.oracle import generate
from conformance.corpus.transcripts import Transcript, discover

pytest.importorskip("variants")


@pytest.fixture(scope="module")
def files() -> dict[Path, str]:
    names = generate.profile_names([])[:2]
    return generate.generate(names, 2, runner.REFERENCE_COMMAND, 30.0)


@pytest.mark.slow
def test_generation_is_deterministic(files: dict[Path, str]) -> None:
    names = sorted({path.parts[0] for path in files})
    again = generate.generate(names, 2, runner.REFERENCE_COMMAND, 30.0)
    assert again == files


@pytest.mark.slow
def test_generated_files_are_valid_transcripts_and_check_finds_changes(files: dict[Path, str], tmp_path: Path) -> None:
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    loaded = discover([tmp_path])
    assert all(isinstance(item, Transcript) and item.generated for item in loaded)
    assert generate.check(files, tmp_path) == 0
    first = sorted(files)[0]
    (tmp_path / first).write_text(files[first].replace("scores: [", "scores: [1, "), encoding="utf-8")
    (tmp_path / sorted(files)[1]).unlink()
    assert generate.check(files, tmp_path) == 1


def test_the_deck_is_dealt_seven_seven_seven_three() -> None:
    import random

    hands, talon = generate.deal_cards(random.Random("x"))
    assert [len(hand) for hand in hands] == [7, 7, 7] and len(talon) == 3
    assert len({card for hand in hands for card in hand} | set(talon)) == 24


@pytest.mark.slow
def test_nothing_is_generated_from_an_implementation_that_fails_hand_written_cases(tmp_path: Path) -> None:
    """Generated transcripts are checked against the hand-written ones, not the other way round."""
    import sys

    from conformance.oracle.generate import main

    broken = [sys.executable, "-m", "mutants.serve", "ten-below-king"]
    code = main(["--per-profile", "1", "--profile", "classic", "--out", str(tmp_path), "--", *broken])
    assert code == 1
    assert not list(tmp_path.rglob("*.yaml"))


@pytest.mark.slow
def test_the_targeted_transcripts_are_up_to_date() -> None:
    """Every targeted deal of conformance/oracle/targeted.yaml, played again through the
    reference as a subprocess, is its file (knobs aside), and no other targeted file is left
    (``python -m conformance.oracle.generate --check`` checks the seeded ones as well)."""
    from conformance.corpus.transcripts import GENERATED_DIR

    targeted = generate.load_targeted()
    names = sorted({entry["profile"] for entry in targeted} | {path.parent.name for path in GENERATED_DIR.rglob("targeted-*.yaml")})
    files = generate.generate(names, 0, runner.REFERENCE_COMMAND, 30.0, targeted)
    assert len(files) == len(targeted)
    assert generate.check(files, GENERATED_DIR, names) == 0
