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
import re
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

from conformance.harness import derive
from conformance.harness.process import Answer, Implementation, Posted, ProtocolFailure

VERSION = 1
START_GRACE = 5.0  # seconds the first reply (to start) may take at least: interpreters and JVMs load slowly
DECLARATIONS = ("any", "own")  # besides a list of profile names (docs/protocol.md, Declarations)


def short(value: Any, limit: int = 300) -> str:
    """A value in a message, as JSON (the protocol's own notation), clipped."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        text = "<not representable as JSON>"
    return text if len(text) <= limit else text[:limit] + "..."


# --- typed outcomes of one reply ------------------------------------------------------------

def said(value: Any, field: str) -> str:
    """The text an implementation gave (``{"reason": ...}``, ``{"message": ...}``) as a reader
    reads it: the field's text, else the value as JSON, never a Python repr; clipped."""
    text = value.get(field) if isinstance(value, dict) else None
    return text[:500] + ("..." if len(text) > 500 else "") if isinstance(text, str) else short(value, 500)


class Skipped(Exception):
    """The implementation answered ``skipped``: it declines a rule (not a failure)."""

    def __init__(self, command: str, detail: Any) -> None:
        super().__init__(said(detail, "reason"))
        self.command = command
        self.detail = detail  # the ``skipped`` value as sent

    @property
    def reason(self) -> str:
        return said(self.detail, "reason")


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
        raise Errored(f"errored on {command!r}: {said(reply['errored'], 'message')}", command, reply["errored"])


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
                                  f"{', '.join(cls.KEYS)}; got {short(value)}")
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
    # what the runner does for it (docs/protocol.md, "Declarations for less")
    events_derived: bool = False  # "events": "derived": it sends none; they are read off its states
    opening_placed: bool = False  # "opening_bid": "placed": its engine places the opener's forced bid itself
    give_cards: bool = False  # "give": "cards": its exchange lists ``give X`` per card, the runner makes the pairs

    @property
    def viewing(self) -> bool:
        """Whether the session stands between the runner and the implementation's replies."""
        return self.events_derived or self.opening_placed or self.give_cards

    @classmethod
    def read(cls, reply: dict[str, Any]) -> Declarations:
        """The declarations of a ``start`` reply; ProtocolFailure for one that breaks the protocol."""
        version = reply.get("version")
        if version != VERSION or isinstance(version, bool):
            raise ProtocolFailure(f"start: the implementation speaks version {short(version)}; expected {VERSION}")
        profiles = reply.get("profiles")
        if not (profiles in DECLARATIONS or (isinstance(profiles, list) and all(isinstance(p, str) for p in profiles))):
            raise ProtocolFailure(f"start: 'profiles' must be \"any\", \"own\" or a list of profile names; got {short(profiles)}")
        if not isinstance(reply.get("refusal_reasons", True), bool):
            raise ProtocolFailure(f"start: 'refusal_reasons' must be true or false; got {short(reply.get('refusal_reasons'))}")
        unsupported = Unsupported.read(reply.get("unsupported"))
        extensions = reply.get("extensions")
        offered = frozenset(e for e in extensions if isinstance(e, str)) if isinstance(extensions, list) else frozenset()
        about = reply.get("implementation")
        name = str(about.get("name", "")) if isinstance(about, dict) else ""
        needed = unsupported.state_fields & NEEDED_FIELDS
        if needed:
            raise ProtocolFailure(f"start: the state fields {', '.join(sorted(needed))} cannot be declared unsupported: "
                                  "the runner needs them to play")
        chosen = [_choice(reply, key, values) for key, values in CHOICES.items()]
        return cls(reply, profiles, reply.get("refusal_reasons") is not False, unsupported, offered, name,
                   *(value == values[1] for value, values in zip(chosen, CHOICES.values())))


# the declarations for less: field -> (the default, what it switches to)
CHOICES = {"events": ("sent", "derived"), "opening_bid": ("asked", "placed"), "give": ("pairs", "cards")}
NEEDED_FIELDS = frozenset({"phase", "to_act"})  # state fields no implementation may leave out


def _choice(reply: dict[str, Any], key: str, values: tuple[str, str]) -> str:
    value = reply.get(key, values[0])
    if value not in values:
        raise ProtocolFailure(f"start: {key!r} must be {values[0]!r} or {values[1]!r}; got {short(value)}")
    return str(value)


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
        self._view = _View()

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

    # --- the runner's part of the game, for an implementation that declared it --------------

    def post(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> list[Posted]:
        """As Implementation.post; for an implementation that declared a part of the game the
        runner's (``Declarations.viewing``), a ``state`` request follows each ``deal`` and
        ``apply``. Under ``opening_bid: placed`` whether the runner answers a request itself
        depends on the replies before it: the requests are then written one at a time as
        ``collect`` reaches them."""
        declared = self.declarations
        if declared is None or not declared.viewing:
            return super().post(requests)
        posted: list[Posted] = []
        for command, fields in requests:
            if declared.opening_placed:
                self._seq += 1
                item = Posted(command, self._seq, 0)
                self._view.items[item.seq] = _Item([], (command, fields))
            else:
                sent = super().post([(command, fields), *self._follow(declared, command)])
                item = sent[0]
                self._view.items[item.seq] = _Item(sent, (command, fields))
            posted.append(item)
        return posted

    def _follow(self, declared: Declarations, command: str) -> list[tuple[str, dict[str, Any]]]:
        """The state the session asks for after a request, to read events or a placed bid off it."""
        follows = command in ("deal", "apply") and (declared.events_derived or declared.opening_placed)
        return [("state", {})] if follows else []

    def collect(self, posted: Sequence[Posted], known: Sequence[Answer] = ()) -> list[Answer]:
        declared = self.declarations
        if declared is None or not declared.viewing or any(item.seq not in self._view.items for item in posted):
            return super().collect(posted, known)
        answers = []
        for item in posted:
            step = self._view.items.pop(item.seq)
            command, fields = step.request
            sent = step.sent
            if not sent:  # written only now, that the replies before it are known
                local = self._local(command, fields)
                if local is not None:
                    if command == "apply" and local.get("ok"):
                        self._view.hidden = None  # sent now: the engine's state is the protocol's again
                        self._view.seen(self._view.raw)
                    answers.append(_answer({"seq": item.seq, **local, NOTE: {"answered_by_runner": True}}))
                    continue
                sent = super().post([(command, fields), *self._follow(declared, command)])
            read = super().collect(sent)
            answer = self._viewed(declared, command, fields.get("action"), read)
            if answer.reply.get("seq") != item.seq:
                answer = _answer({**answer.reply, "seq": item.seq})
            answers.append(answer)
        return answers

    def _local(self, command: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        """The reply the runner gives itself while an engine's placed opening bid is hidden."""
        hidden = self._view.hidden
        if hidden is None:
            return None
        if command == "legal":
            return {"actions": [hidden]}
        if command != "apply":
            return None
        action = str(fields.get("action"))
        if action == hidden:
            return {"ok": True, "events": []}
        return {"ok": False, "refusal": _refusal_before_opening(action, hidden)}

    def _viewed(self, declared: Declarations, command: str, action: str | None, read: list[Answer]) -> Answer:
        """One reply as the protocol has it, from the implementation's reply (and the state read after it)."""
        reply = dict(read[0].reply)
        if "skipped" in reply or "errored" in reply:
            return read[0]
        view = self._view
        if command == "state" and isinstance(reply.get("state"), dict):
            reply["state"] = view.seen(reply["state"])
        elif command == "legal" and declared.give_cards and isinstance(reply.get("actions"), list):
            reply["actions"] = paired(reply["actions"])
        elif command in ("deal", "apply") and len(read) > 1:
            judge("state", read[1].reply)
            after = read[1].reply.get("state")
            if not isinstance(after, dict):
                raise ProtocolFailure(f"reply to the state asked after {command!r} lacks \"state\": {short(read[1].reply)}")
            before = None if command == "deal" else view.state
            after = view.seen(after, dealt=command == "deal" and declared.opening_placed)
            if declared.events_derived and reply.get("ok") is True:
                if reply.get("events"):
                    raise ProtocolFailure(f"reply to {command!r} lists events, but the start reply says they are derived")
                derived = derive.derive(before, action, after)
                reply["events"] = list(derived.events)
                reply[NOTE] = {"unsure": sorted(derived.unsure)}
        else:
            return read[0]
        return _answer(reply)


NOTE = "session"  # what the session adds to a reply it made or changed (never part of the protocol)
ACTION = re.compile(r"bid [0-9]+|pass|give (A|10|K|Q|J|9)[SCDH] (A|10|K|Q|J|9)[SCDH]|contract [0-9]+|give_up|"
                    r"play (A|10|K|Q|J|9)[SCDH]( marriage| aces)?|redeal|no_redeal")


class _Item(NamedTuple):
    sent: list[Posted]  # the requests written for it (none yet: written when collect reaches it)
    request: tuple[str, dict[str, Any]]  # as the caller asked it


@dataclass
class _View:
    """What the session knows of the game between requests."""

    items: dict[int, _Item] = field(default_factory=dict)
    state: dict[str, Any] | None = None  # the last state as the protocol shows it
    raw: dict[str, Any] = field(default_factory=dict)  # the last state as the implementation sent it
    hidden: str | None = None  # the opening bid the engine placed and the runner has not sent yet

    def seen(self, raw: dict[str, Any], dealt: bool = False) -> dict[str, Any]:
        """A state read from the implementation, as the protocol shows it; ``dealt``: the state
        right after a ``deal``, where an engine that places the opening bid has placed it."""
        self.raw = raw
        if dealt:
            self.hidden = placed_bid(raw)
        self.state = raw if self.hidden is None else before_opening(raw)
        return self.state


def _refusal_before_opening(action: str, hidden: str) -> dict[str, str]:
    """Why the rules refuse an action before the opener's forced bid (the reference's order:
    malformed first, then by the action's kind)."""
    words = action.split()
    if not ACTION.fullmatch(action):
        kind, reason = "malformed", "unknown_card" if words[:1] in (["play"], ["give"]) and len(words) > 1 else "malformed_action"
    elif action.startswith("bid "):
        kind, reason = "illegal", "opening_bid_fixed"
    elif action == "pass":
        kind, reason = "illegal", "opener_must_bid"
    elif action in ("redeal", "no_redeal"):
        kind, reason = "illegal", "redeal_not_allowed"
    else:
        kind, reason = "illegal", "wrong_phase"
    return {"class": kind, "reason": reason, "message": f"{action!r} refused by the runner: the engine placed the opening {hidden!r}"}


def placed_bid(state: dict[str, Any]) -> str | None:
    """The opener's bid when it is the only call of the auction (the one an engine places)."""
    auction, dealer = state.get("auction"), state.get("dealer")
    if not isinstance(auction, list) or len(auction) != 1 or not isinstance(dealer, int) or not isinstance(auction[0], dict):
        return None
    call = auction[0]
    action = call.get("action")
    if call.get("player") == (dealer + 1) % 3 and isinstance(action, str) and action.startswith("bid "):
        return action
    return None


def before_opening(state: dict[str, Any]) -> dict[str, Any]:
    """The state one step behind an engine that placed the opening bid: nobody has bid yet."""
    return {**state, "auction": [], "high_bid": None, "to_act": (state["dealer"] + 1) % 3}


def paired(actions: list[Any]) -> list[Any]:
    """A legal set whose ``give X`` actions (one card each) become every ``give X Y`` of two of them."""
    cards = [a.split()[1] for a in actions if isinstance(a, str) and len(a.split()) == 2 and a.startswith("give ")]
    rest = [a for a in actions if not (isinstance(a, str) and len(a.split()) == 2 and a.startswith("give "))]
    return rest + [f"give {x} {y}" for x in cards for y in cards if x != y]


def _answer(reply: dict[str, Any]) -> Answer:
    return Answer(json.dumps(reply, separators=(",", ":")).encode() + b"\n", reply)
