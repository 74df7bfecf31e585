"""Errors of the engine, split by cause as DESIGN.md's reason codes are.

``MalformedActionError``: the action string is not a well-formed action (class ``malformed``).
``IllegalActionError``: well formed, but the rules forbid it here (class ``illegal``).
``RulesError``: a profile document the engine cannot run (a missing or mistyped knob).
``DealError``: a deal that is not 24 distinct cards dealt 7, 7, 7 and 3.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class RefusedActionError(EngineError):
    """An action the engine refuses; the state is unchanged."""

    refusal_class = "refused"

    def __init__(self, reason: str, message: str, action: str | None = None, phase: str | None = None) -> None:
        self.reason = reason
        self.also: tuple[str, ...] = ()  # the other reasons that apply to the action (any one is right)
        self.action = action
        self.phase = phase
        self.detail = message
        super().__init__(self._text())

    def _text(self) -> str:
        where = f" in phase {self.phase}" if self.phase else ""
        what = f"{self.action!r}" if self.action is not None else "action"
        return f"{what} refused{where} ({self.reason}): {self.detail}"

    def locate(self, action: str, phase: str) -> RefusedActionError:
        """Attach the action and the phase once they are known; returns self."""
        self.action = action
        self.phase = phase
        self.args = (self._text(),)
        return self


class MalformedActionError(RefusedActionError):
    """Not a canonical action string (``malformed_action``) or not a card (``unknown_card``)."""

    refusal_class = "malformed"


class IllegalActionError(RefusedActionError):
    """A well-formed action that the rules forbid now."""

    refusal_class = "illegal"


class RulesError(EngineError):
    """A profile document the engine cannot run."""


class DealError(EngineError):
    """A deal that is not a valid deal of the 24 cards."""
