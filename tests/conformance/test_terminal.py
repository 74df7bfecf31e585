"""The progress a long command shows when stderr is a log or a pipe, not a terminal (issue 48:
fit was silent for minutes)."""

from __future__ import annotations

import pytest

from conformance.terminal import terminal_progress


def test_without_a_terminal_a_long_run_writes_a_plain_line_now_and_then(capsys: pytest.CaptureFixture[str]) -> None:
    note = terminal_progress("fit", every=0.0)  # every call is "that long" after the last
    note("observing the implementation: 3/188 cases")
    note("searching auction.max_bid \x1b[2J")
    err = capsys.readouterr().err.splitlines()
    assert err == ["fit: observing the implementation: 3/188 cases", "fit: searching auction.max_bid \\x1b[2J"]


def test_without_a_terminal_a_short_run_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    for note in (terminal_progress("fit", every=3600.0), terminal_progress("verify")):
        note("observing the implementation: 3/188 cases")
    assert capsys.readouterr().err == ""
