"""Where the tests find the project and their own files."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
FAKE_IMPLS = TESTS / "fake_impls"
FIXTURES = TESTS / "fixtures"
