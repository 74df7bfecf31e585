"""``thousand fuzz``'s Lookahead (the reference plays each pair's trials ahead in a thread of
its own): a reference failure in a trial played ahead, past the deal where the implementation
diverged, is never reported, and a shrink has the reference to itself."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import variants
from conformance.oracle import fuzz, observe
from tests.support.paths import FAKE_IMPLS

FLAKY = FAKE_IMPLS / "flaky_reference.py"
CLASSIC = variants.resolve("classic").to_document()
# under seed 4 this mutant plays trial 0 (one deal) as the reference does and diverges at the
# first deal of trial 1, which the reference plays out to three deals
MUTANT = [sys.executable, "-m", "mutants.serve", "ten-below-king"]
SEED = "4"


def run(reference: list[str] | None = None) -> fuzz.Outcome:
    more: dict[str, Any] = {} if reference is None else {"reference": reference}
    return fuzz.fuzz(MUTANT, "classic", CLASSIC, deals=40, seed=SEED, timeout=10.0, **more)


@pytest.fixture(scope="module")
def plain() -> fuzz.Outcome:
    outcome = run()
    assert outcome.error == "" and outcome.findings and outcome.findings[0].trial == 1
    assert outcome.findings[0].deal == 2  # the first deal of trial 1
    return outcome


@pytest.mark.slow
def test_a_reference_failure_ahead_of_a_divergence_is_not_reported(plain: fuzz.Outcome, tmp_path: Path) -> None:
    # the reference exits at the second deal of its second match: trial 1, played ahead while
    # the implementation follows its first deal, where it diverges
    marker = tmp_path / "failed"
    outcome = run([sys.executable, str(FLAKY), str(marker)])
    assert marker.exists()  # the reference did fail, in the trial that diverged
    assert outcome.error == ""
    found, wanted = outcome.findings[0], plain.findings[0]
    assert (found.trial, found.deal, found.signature) == (wanted.trial, wanted.deal, wanted.signature)
    assert outcome.divergence == plain.divergence and found.shrink_steps == wanted.shrink_steps


@pytest.mark.slow
def test_a_shrink_has_the_reference_to_itself(plain: fuzz.Outcome, monkeypatch: pytest.MonkeyPatch) -> None:
    # every request posted to a process is noted with the thread that posted it and whether
    # a shrink was under way: none from the Lookahead's thread may come during a shrink
    shrinking = threading.Event()
    during: list[str] = []
    post, shrink = observe.Observer.post, fuzz._shrunk_proven_and_saved

    def noted_post(self: observe.Observer, requests: Any) -> Any:
        if shrinking.is_set() and threading.current_thread() is not threading.main_thread():
            during.append(str(requests[0][0]))
        return post(self, requests)

    def noted_shrink(*args: Any, **kwargs: Any) -> Any:
        shrinking.set()
        try:
            return shrink(*args, **kwargs)
        finally:
            shrinking.clear()

    monkeypatch.setattr(observe.Observer, "post", noted_post)
    monkeypatch.setattr(fuzz, "_shrunk_proven_and_saved", noted_shrink)
    outcome = run()
    assert outcome.error == "" and outcome.findings[0].shrunk and outcome.findings[0].shrink_steps > 0
    assert during == []
    assert outcome.divergence == plain.divergence  # the shrink found what it finds alone
