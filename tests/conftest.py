"""Shared test set-up: the transcript cache lives in a temporary folder, never in the home."""

from __future__ import annotations

import os
from typing import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_transcript_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("THOUSAND_CACHE_DIR")
    os.environ["THOUSAND_CACHE_DIR"] = str(tmp_path_factory.mktemp("thousand-cache"))
    yield
    if before is None:
        os.environ.pop("THOUSAND_CACHE_DIR", None)
    else:
        os.environ["THOUSAND_CACHE_DIR"] = before
