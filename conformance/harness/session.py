"""One protocol session: an implementation process that has answered ``start``.

Every tool that drives an implementation (the runner, fit's and fuzz's observer, replay,
the recorder of generated transcripts) starts it here, so ``start`` is sent from one place
and its reply is read and checked once: the version, the declaration of what it plays
(``profiles``), whether it tells refusal reasons, what it does not support, the
extensions it offers. A ``skipped`` or ``errored`` reply becomes a typed outcome
(``Skipped``, ``Errored``) wherever it comes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from conformance.harness.process import Answer, Implementation, Posted, ProtocolFailure

VERSION = 1
START_GRACE = 5.0  # seconds the first reply (to start) may take at least: interpreters and JVMs load slowly
DECLARATIONS = ("any", "own")  # besides a list of profile names (docs/protocol.md, Declarations)


def _short(value: Any, limit: int = 300) -> str:
    """A value in a message, as JSON (the protocol's own notation), clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        text = "<not representable as JSON>"
    return text if len(text) <= limit else text[:limit] + "..."


# --- typed outcomes of one reply ------------------------------------------------------------

class Skipped(Exception):
    """The implementation answered ``skipped``: it declines a rule (not a failure)."""

    def __init__(self, command: str, detail: Any) -> None:
        super().__init__(str(detail))
        self.command = command
        self.detail = detail  # the ``skipped`` value as sent

    @property
    def reason(self) -> str:
        return str(self.detail.get("reason", "")) if isinstance(self.detail, dict) else str(self.detail)


class Errored(ProtocolFailure):
    """An ``errored`` reply, read whole: the stream is still in step."""

    def __init__(self, message: str, command: str, detail: Any = None) -> None:
        super().__init__(message)
        self.command = command  # the request answered so
        self.detail = detail  # the ``errored`` value as sent

    @property
    def text(self) -> str:
        return str(self.detail.get("message", "")) if isinstance(self.detail, dict) else str(self.detail)


def judge(command: str, reply: dict[str, Any]) -> None:
    """Skipped for a ``skipped`` reply, Errored for an ``errored`` one; nothing otherwise."""
    if "skipped" in reply:
        raise Skipped(command, reply["skipped"])
    if "errored" in reply:
        raise Errored(f"errored on {command!r}: {reply['errored']}", command, reply["errored"])


# --- what the start reply declares ----------------------------------------------------------

@dataclass(frozen=True)
class Unsupported:
    """What an implementation's ``start`` reply says it does not support (all optional)."""

    actions: frozenset[str] = frozenset()  # action words: first word (give_up) or suffix (marriage)
    state_fields: frozenset[str] = frozenset()
    events: frozenset[str] = frozenset()

    KEYS = ("actions", "state_fields", "events")

    @classmethod
    def read(cls, value: Any) -> Unsupported:
        """From the reply's ``unsupported`` field; a wrong shape is a start error."""
        if value is None:
            return cls()
        if not isinstance(value, dict) or set(value) - set(cls.KEYS) or not all(
                isinstance(v, list) and all(isinstance(i, str) for i in v) for v in value.values()):
            raise ProtocolFailure("start: 'unsupported' must be an object with lists of strings under "
                                  f"{', '.join(cls.KEYS)}; got {_short(value)}")
        return cls(*(frozenset(value.get(key, [])) for key in cls.KEYS))

    def action(self, action: str) -> str | None:
        """The unsupported word of an action, if any."""
        words = action.split()
        for word in (words[0], words[-1]) if words else ():
            if word in self.actions:
                return word
        return None


@dataclass(frozen=True)
class Declarations:
    """The ``start`` reply, read and checked once."""

    reply: dict[str, Any]
    profiles: Any  # "any", "own" or a list of profile names
    reasons: bool  # False: it cannot tell why it refuses (refusal_reasons: false)
    unsupported: Unsupported
    extensions: frozenset[str]
    name: str

    @classmethod
    def read(cls, reply: dict[str, Any]) -> Declarations:
        """The declarations of a ``start`` reply; ProtocolFailure for one that breaks the protocol."""
        version = reply.get("version")
        if version != VERSION or isinstance(version, bool):
            raise ProtocolFailure(f"start: the implementation speaks version {_short(version)}; expected {VERSION}")
        profiles = reply.get("profiles")
        if not (profiles in DECLARATIONS or (isinstance(profiles, list) and all(isinstance(p, str) for p in profiles))):
            raise ProtocolFailure(f"start: 'profiles' must be \"any\", \"own\" or a list of profile names; got {_short(profiles)}")
        if not isinstance(reply.get("refusal_reasons", True), bool):
            raise ProtocolFailure(f"start: 'refusal_reasons' must be true or false; got {_short(reply.get('refusal_reasons'))}")
        unsupported = Unsupported.read(reply.get("unsupported"))
        extensions = reply.get("extensions")
        offered = frozenset(e for e in extensions if isinstance(e, str)) if isinstance(extensions, list) else frozenset()
        about = reply.get("implementation")
        name = str(about.get("name", "")) if isinstance(about, dict) else ""
        return cls(reply, profiles, reply.get("refusal_reasons") is not False, unsupported, offered, name)


# --- the session ------------------------------------------------------------------------------

class Session(Implementation):
    """An implementation process spoken to in protocol v1: ``begin`` sends ``start`` (without
    waiting, so that several processes load at once), ``started`` reads and checks its reply
    into ``declarations``; ``start`` does both. Until then requests wait behind ``start``."""

    def __init__(self, command: Sequence[str], timeout: float,
                 on_message: Callable[[str, str, dict[str, Any]], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(command, max(timeout, START_GRACE), on_message, env)
        self.wanted_timeout = timeout
        self.declarations: Declarations | None = None
        self._start: list[Posted] | None = None

    def begin(self) -> None:
        """Send ``start`` (once); its reply is read by ``started``."""
        if self._start is None and self.declarations is None:
            self._start = self.post([("start", {"version": VERSION})])

    def started(self, kept: Callable[[Posted, Answer], Answer] | None = None) -> Declarations:
        """The declarations of the ``start`` reply (read once): Skipped, Errored or
        ProtocolFailure when it is not a proper one. ``kept``: a filter of the raw answer (the
        observer clips hostile values)."""
        if self.declarations is None:
            self.begin()
            assert self._start is not None
            posted, self._start = self._start, None
            answer = self.collect(posted)[0]
            reply = (kept(posted[0], answer) if kept else answer).reply
            judge("start", reply)
            self.declarations = Declarations.read(reply)
            self.timeout = self.wanted_timeout
        return self.declarations

    def start(self) -> Declarations:
        self.begin()
        return self.started()
