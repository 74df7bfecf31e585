"""Observation records built by hand for the tests of fit's evidence and candidates."""

from __future__ import annotations

from conformance.oracle import observe


def step_record(step: int, action: str | None, legal: tuple[str, ...] | None, accepted: bool = True,
                state: dict[str, object] | None = None) -> observe.StepRecord:
    """One step of a replay: the action sent, the legal set offered, the reply (a refusal says bid_too_low)."""
    reply = observe.Reply(True) if accepted else observe.Reply(False, (), ("rules", "bid_too_low"))
    return observe.StepRecord(1, step, action, legal, reply, state or {"phase": "auction"})
