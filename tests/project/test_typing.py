"""`mypy --strict` passes on the project's packages (the rules core first of all)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.support.paths import ROOT

PACKAGES = [name for name in ("reference_impl", "variants", "conformance", "sitegen", "mutants") if (ROOT / name).is_dir()]


@pytest.mark.slow
def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", *PACKAGES],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
