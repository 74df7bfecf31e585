"""fit and fuzz on an adapter that sends less (issue 49's double): the reference's verdicts.

tests/fake_impls/less_ref.py is the reference behind an adapter that sends no events,
no ``bolts``, places the forced opening bid itself and lists its gives one card at a time,
each declared in its ``start`` reply. The game is the reference's: fuzz finds nothing and
fit changes no knob, while what it leaves out is counted as unchecked, never compared.
"""

from __future__ import annotations

import pytest

import subprocess
import sys

from conformance.harness.session import Declarations
import variants
from conformance.oracle import fuzz, observe
from tests.support.paths import FAKE_IMPLS, ROOT

pytestmark = pytest.mark.slow  # every test runs the runner against a double that sends less, over many cases

LESS = [sys.executable, str(FAKE_IMPLS / "less_ref.py")]
START = {"seq": 1, "version": 1, "implementation": {"name": "x"}, "profiles": "own", "events": "derived",
         "unsupported": {"state_fields": ["bolts"]}}


def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance.cli", *arguments, "--", *LESS],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_the_reference_is_compared_as_the_implementation_shows_it() -> None:
    declared = Declarations.read(START)
    dealt = {"phase": "auction", "declarer": None, "bolts": [0, 0, 0], "talon_shown": False}
    won = {"phase": "exchange", "declarer": 1, "high_bid": 110, "bolts": [0, 0, 0], "talon_shown": False}
    record = observe.CaseRecord("c", (
        observe.StepRecord(1, 0, None, None, observe.Reply(True, ()), dealt),
        observe.StepRecord(1, 1, "pass", ("pass",), observe.Reply(True, ({"type": "auction_won", "player": 1, "bid": 110},
                                                                          {"type": "bonus"})), won)))
    shown = observe.shown_record(record, declared)
    assert [step.state.get("bolts") for step in shown.steps] == [None, None]  # the absent field left out
    assert shown.steps[1].reply.events == ({"type": "auction_won", "player": 1, "bid": 110},)  # no bonus: not derivable
    assert observe.shown_record(record, Declarations.read({**START, "events": "sent", "unsupported": {}})) is record


def test_fuzz_finds_nothing_on_the_reference_sending_less() -> None:
    for profile in ("gambler-club", "polish"):  # forced openings, gives, bolts
        done = cli("fuzz", "--profile", profile, "--deals", "30")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "no new divergence in" in done.stdout
        assert "unchecked: the state fields bolts, which the implementation declares absent (never compared)" in done.stdout


def test_fit_changes_no_knob_and_counts_the_absent_field_unchecked() -> None:
    done = cli("fit", "--profile", "gambler-club", "-k", "gambler-club/bolts/*", "-k", "gambler-club/auction/*")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# no knob change reproduces more observations" in done.stdout
    assert "# unchecked: the state fields bolts, which the implementation declares absent (never compared)" in done.stdout
    assert "# residual: none" in done.stdout


def test_fuzz_compares_a_field_declared_absent_on_neither_side_even_when_it_is_sent() -> None:
    """An adapter may declare ``bolts`` absent and still fill the field in (the JavaScript kit
    completes every state): fuzz compares it on neither side, so the reference played through
    such an adapter diverges nowhere (every trial ended on ``state.bolts`` before)."""
    double = [sys.executable, str(FAKE_IMPLS / "less_ref.py"), "bolts,declared-only"]
    outcome = fuzz.fuzz(double, "polish", variants.resolve("polish").to_document(), deals=20, seed="1", max_findings=None)
    assert outcome.deals_played == 20 and not outcome.findings and not outcome.unreproducible, outcome
