"""docs/verify.md shows only outputs a script writes from real runs (sitegen.outputs,
sitegen.results), which a --check compares with a fresh run; every file an example needs ships."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sitegen import outputs, results
from tests.support.paths import ROOT

VERIFY = ROOT / "docs" / "verify.md"


def _blocks(text: str) -> list[str]:
    return re.findall(r"```(?:text|console)\n(.*?)```", text, flags=re.S)


def test_every_run_output_on_the_verify_page_is_included_from_a_written_snippet() -> None:
    """A block that shows a command with its output is an include of docs/snippets/ (two bare
    commands in a row are instructions, not an output)."""
    pasted = [block[:120] for block in _blocks(VERIFY.read_text(encoding="utf-8"))
              if block.startswith("$ ") and any(not line.startswith(("$ ", "--8<-- ")) for line in block.strip().splitlines())]
    assert not pasted, pasted


def test_every_included_snippet_is_written_by_a_script() -> None:
    included = set(re.findall(r'--8<-- "docs/snippets/([^"]+)\.txt"', VERIFY.read_text(encoding="utf-8")))
    written = {o.name for o in outputs.OUTPUTS} | set(results.OUTPUT_SNIPPETS) | {
        "verify-reference-count", "verify-starter-count"}
    assert included <= written, included - written
    for name in included:
        assert (ROOT / "docs" / "snippets" / f"{name}.txt").is_file(), name


def test_every_file_an_output_needs_ships_in_the_repository() -> None:
    for output in outputs.OUTPUTS:
        for file in output.files:
            assert (ROOT / file).is_file(), file
            assert Path(file).name in output.command
    assert "examples/house/twelve-changes.yaml" in VERIFY.read_text(encoding="utf-8")


def test_the_check_sees_a_drift_and_ignores_times() -> None:
    name = "fit-twelve-changes"
    committed = (ROOT / "docs" / "snippets" / f"{name}.txt").read_text(encoding="utf-8")
    assert outputs.drift(name, committed) is None
    assert outputs.drift(name, re.sub(r"\d+(?:\.\d+)? s\b", "99.9 s", committed)) is None
    count = int(re.search(r"\((\d+) whole case\(s\)\)", committed).group(1))  # type: ignore[union-attr]
    changed = committed.replace(f"({count} whole case(s))", f"({count + 1} whole case(s))", 1)
    assert changed != committed
    found = outputs.drift(name, changed)
    assert found and f"{count + 1} whole case(s)" in found


def test_a_shown_engine_runs_as_this_checkouts_code() -> None:
    output = outputs.Output("x", "thousand fit --profile classic -- thousand-reference --rules twelve-changes.yaml")
    assert output.argv() == [sys.executable, "-m", "conformance.cli", "fit", "--profile", "classic", "--",
                             sys.executable, "-m", "reference_impl.server", "--rules", "twelve-changes.yaml"]


def test_ci_runs_the_output_check() -> None:
    assert "python -m sitegen.outputs --check" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
