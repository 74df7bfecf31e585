"""``thousand-reference``: the reference engine behind protocol v1 (DESIGN.md "Protocol v1").

One JSON object per line on stdin, one reply per line on stdout (flushed after each),
logs on stderr. The engine is built from the resolved ``document`` that ``match``
carries, so every profile is served (``profiles: "any"``). A request that cannot be
understood gets an ``errored`` reply, with its seq when that can be read, and the next line
is served: stdin is read as bytes and each line decoded on its own (invalid UTF-8 costs
one line), lines are bounded (MAX_LINE), integers too (MAX_DIGITS), deep nesting is caught,
and ``true`` is not 1 for ``seq`` or ``version``. The server never crashes on input.

It offers the ``batch`` extension (docs/protocol.md "Extensions"): one request carrying a
case's requests (``match``, ``deal``, ``legal``, ``apply``, ``state``) answered with all
their replies at once, the states after the first as their changed fields only, and a
``match`` may name its profile document by a key given with it once, so that an oracle
replaying thousands of cases pays neither a round trip per step nor a document per case.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import re
import sys
from typing import Any, BinaryIO, Callable, Iterator, Mapping, TextIO

from spec.vocabulary import ENDED  # a playout stops at these phases

from . import expected, playout, snapshot
from .errors import EngineError, RefusedActionError
from .rules import Rules
from .snapshot import Snapshot
from .state import MatchState

PROTOCOL_VERSION = 1
EXTENSIONS = ["batch", "playout", "expectations"]  # declared in the start reply (docs/protocol.md "Extensions")
BATCHED = ("match", "deal", "legal", "apply", "state")  # the commands a batch may carry
MAX_ACTIONS = 1000  # the most actions one playout may be asked to choose
MAX_DOCUMENTS = 256  # rules kept by document key, the least recently used dropped first
MAX_EXPECTATIONS = 1024  # expectations kept by key, likewise (a corpus holds about a thousand cases)
# What ``start`` declares: "any", or the list of profiles given with --declare (an engine that
# plays a few named rule sets declares them so; two of the public adapters do).
DECLARED: str | list[str] = "any"
NAME_SUFFIX = ""  # added to the name after --rules has set it (the mutants a test double applies)
PROFILE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*(?:\+[a-z0-9][a-z0-9-]*)*")
IMPLEMENTATION = {
    "name": "thousand-reference",
    "version": "0.1.0",
    "language": "Python",
    "homepage": "",  # no public home yet; the rules site is built from docs/ (mkdocs build)
}


# Allocations between collections of the youngest generation (gc's default: 700). A replay
# allocates a few hundred short-lived lists and tuples per case, and the process holds the
# kept documents and expectations (snapshots by the thousand, acyclic): at the default the
# collector walked them again and again, a twentieth of the server's time on fit's replays.
YOUNG_COLLECTION = 50_000

# bytes: a match request carries a resolved profile document, from profile files of at most
# 1 MiB each (variants.loader.MAX_BYTES), sent as UTF-8 (not \u-escaped) by the runner
MAX_LINE = 4 << 20
MAX_DIGITS = 20  # digits of a JSON integer; seq and every game number are far below
MAX_INT = 2**53 - 1  # the largest seq: every JSON reader keeps it exact
MAX_MESSAGE = 300  # characters of an errored message; a request is quoted in excerpts only
EXCERPT = 60
# ``thousand-reference --rules FILE``: the resolved house rules played whatever profile
# ``match`` names (a knob-shifted reference, the test double of ``thousand fit``).
HOUSE_DOCUMENT: dict[str, Any] | None = None


class ProtocolError(Exception):
    """A request the server cannot carry out (answered with ``errored``)."""


class _NumberTooLong(ValueError):
    pass


def _clip(text: str, limit: int = EXCERPT) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _excerpt(value: Any) -> str:
    """A short description of a value from a request: never the request in full."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    return _clip(repr(value))


def _bounded_int(text: str) -> int:
    if len(text) <= MAX_DIGITS:  # every integer of a request the runner writes, told without a copy
        return int(text)
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _NumberTooLong(text)
    return int(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


# built once: json.loads with hooks builds a decoder for every line
_REQUEST_DECODER = json.JSONDecoder(parse_int=_bounded_int, parse_constant=_no_constant)


def _parse_request(line: str | bytes) -> dict[str, Any] | str:
    """The request object, or the message of an errored reply saying why there is none."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"request is not UTF-8 text: byte 0x{line[exc.start]:02x} at column {exc.start + 1}"
    try:
        if line.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", line, 0)
        request = _REQUEST_DECODER.decode(line)
    except _NumberTooLong as exc:
        return f"request has an integer of {len(str(exc).lstrip('-'))} digits: at most {MAX_DIGITS} are read"
    except json.JSONDecodeError as exc:
        return f"request is not JSON: {exc.msg} at column {exc.colno}"
    except RecursionError:
        return "request is nested too deeply to be read"
    except ValueError as exc:
        return _clip(f"request is not JSON: {exc}", MAX_MESSAGE)
    if not isinstance(request, dict):
        return "request must be a JSON object"
    return request


class Server:
    """The state of one protocol session: at most one match at a time."""

    def __init__(self) -> None:
        self.state: MatchState | None = None
        self.stopped = False
        # the last reply is a whole case's (batch, playout): written at once, not held while
        # more requests are at hand (``serve``)
        self.whole_case = False
        self.documents: collections.OrderedDict[str, Rules] = collections.OrderedDict()
        self.expectations: collections.OrderedDict[str, expected.Expectation] = collections.OrderedDict()
        self.handlers: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            "start": self.start,
            "match": self.match,
            "deal": self.deal,
            "legal": self.legal,
            "apply": self.apply,
            "state": self.observe,
            "batch": self.batch,
            "playout": self.playout,
            "stop": self.stop,
        }
        self.batched = {name: self.handlers[name] for name in BATCHED}  # what a batch may carry

    def handle_line(self, line: str | bytes) -> dict[str, Any]:
        """The reply to one request line (text, or bytes decoded here as UTF-8)."""
        request = _parse_request(line)
        if isinstance(request, str):
            return {"seq": self._seq_anyway(line), "errored": {"message": request}}
        seq = request.get("seq")
        if type(seq) is not int or abs(seq) > MAX_INT:  # bool is not an integer here
            return {"seq": None, "errored": {"message": f"seq: expected an integer, got {_excerpt(seq)}"}}
        return {"seq": seq, **self._answer(request, self.handlers)}

    def _answer(self, request: Mapping[str, Any], handlers: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any]]]) -> dict[str, Any]:
        """The reply to one request (without its seq): ``errored`` when it cannot be carried out."""
        command = request.get("cmd")
        handler = handlers.get(command) if isinstance(command, str) else None
        if handler is None:
            known = ", ".join(handlers)
            return {"errored": {"message": f"unknown cmd {_excerpt(command)}: expected one of {known}"}}
        try:
            return handler(request)
        except Exception as exc:  # noqa: BLE001 - the server must answer, never crash
            return _errored(exc)

    @staticmethod
    def _seq_anyway(line: str | bytes) -> int | None:
        """The seq of a line that is not UTF-8, read from a lenient decoding, if any."""
        if not isinstance(line, bytes):
            return None
        request = _parse_request(line.decode("utf-8", errors="replace"))
        seq = request.get("seq") if isinstance(request, dict) else None
        return seq if type(seq) is int and abs(seq) <= MAX_INT else None

    def _match(self) -> MatchState:
        if self.state is None:
            raise ProtocolError("no match: send 'match' first")
        return self.state

    def start(self, request: Mapping[str, Any]) -> dict[str, Any]:
        version = request.get("version")
        if type(version) is not int or version != PROTOCOL_VERSION:  # true is not 1
            raise ProtocolError(f"protocol version {_excerpt(version)} is not supported: expected {PROTOCOL_VERSION}")
        return {"version": PROTOCOL_VERSION, "implementation": dict(IMPLEMENTATION), "profiles": DECLARED,
                "extensions": list(EXTENSIONS)}

    def match(self, request: Mapping[str, Any]) -> dict[str, Any]:
        state = request.get("state")
        if state is not None and type(state) is not dict and not isinstance(state, Mapping):  # a dict told without typing's slow check
            raise ProtocolError("match: 'state' must be an object {scores, bolts, give_ups, barrel}")
        self.state = MatchState(self._rules(request), state)
        return {"ok": True}

    def _rules(self, request: Mapping[str, Any]) -> Rules:
        """The rules of a ``match``: from its document, or from the one sent earlier under its
        ``document_key`` (the batch extension); a document given with a key is kept under it."""
        key = request.get("document_key")
        if key is not None and not isinstance(key, str):
            raise ProtocolError(f"match: 'document_key' must be a string, got {_excerpt(key)}")
        if HOUSE_DOCUMENT is not None:  # read once: the same house rules for every match
            if "--rules" not in self.documents:
                self.documents["--rules"] = Rules.from_document(HOUSE_DOCUMENT)
            return self.documents["--rules"]
        document = request.get("document")
        if document is None and key is not None:
            rules = self.documents.get(key)
            if rules is None:
                raise ProtocolError(f"match: unknown document_key {_excerpt(key)}: send the document with it first")
            self.documents.move_to_end(key)
            return rules
        if not isinstance(document, Mapping):
            raise ProtocolError("match: expected 'document', the resolved profile (this implementation accepts any)")
        rules = Rules.from_document(document)
        if key is not None:
            self.documents[key] = rules
            while len(self.documents) > MAX_DOCUMENTS:
                self.documents.popitem(last=False)
        return rules

    def deal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        state = self._match()
        events = state.start_deal(request.get("dealer"), request.get("hands"), request.get("talon"))  # type: ignore[arg-type]
        return {"ok": True, "events": events}

    def legal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return {"actions": self._match().legal_actions()}

    def apply(self, request: Mapping[str, Any]) -> dict[str, Any]:
        state = self._match()
        if "action" not in request:
            raise ProtocolError("apply: expected 'action', an action string")
        return _applied(state, request["action"])

    def observe(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return {"state": self._match().observation()}

    def batch(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Every request of ``requests`` in order, then those of the expectation it names, their
        replies in one list; the first ``errored`` reply is the last (nothing after it is carried
        out). With ``states: "changes"`` a ``state`` reply after the first holds only the fields
        whose value differs from the previous state reply of the batch, as ``{"changes": {...}}``.
        A reply exactly as the expectation expects it is counted instead (``_Replies.met``)."""
        self.whole_case = True
        requests = request.get("requests")
        if not isinstance(requests, list):
            raise ProtocolError(f"batch: expected 'requests', a list of requests, got {_excerpt(requests)}")
        replies = _Replies(request, "batch")
        expectation = self._expectation(request, replies.changes)  # checked before anything is carried out
        if self._carry_out(requests, None, replies) and expectation is not None:
            self._carry_out_kept(expectation, replies)
        return {"replies": replies.finish()}

    def _carry_out_kept(self, kept: expected.Expectation, replies: _Replies) -> None:
        """The requests of an expectation, as ``_carry_out`` carries them out; those of a step
        (legal, apply, state) go to the engine directly, read once when it was kept (a step's
        request is otherwise looked up and dispatched again at every replay), and each reply
        is compared the cheapest way its expectation allows before any is built. A reply that
        comparison finds different is written without being compared again: one of another
        kind than the expected one (a legal set where a refusal was expected) is never it."""
        for kind, request, want in kept.steps:
            state = self.state
            if state is None or kind is expected.OTHER:
                if not self._carry_out([request], [want], replies):
                    return
            elif kind is expected.STATE:
                replies.add_state(state, want)
            elif kind is expected.LEGAL:
                actions = state.legal_actions()
                if want is not None and actions == want.actions:  # a list of strings equal to one is the same
                    replies.run += 1  # as ``met``, without the call (most legal lists are as expected)
                else:
                    replies.add({"actions": actions})
            elif not self._apply_expecting(state, request["action"], want, replies):
                return

    @staticmethod
    def _apply_expecting(state: MatchState, action: str, want: expected.Expected | None, replies: _Replies) -> bool:
        """Apply ``action``: its reply counted where it is exactly ``want``, else added; False
        when it is ``errored``. An acceptance is compared by its events alone (``Expected.events``:
        none where the expected reply is no acceptance), a refusal as written."""
        try:
            events = state.apply(action)
        except RefusedActionError as exc:
            refused = _refused(exc)
            if want is not None and expected.met(refused, want):
                replies.met()
                return True
            return replies.add(refused)
        except Exception as exc:  # noqa: BLE001 - as _answer: the server must answer, never crash
            return replies.add(_errored(exc))
        if want is not None and want.events is not None and expected.same_events(events, want.events):
            replies.run += 1  # likewise
        else:
            replies.add({"ok": True, "events": events})
        return True

    def _carry_out(self, requests: list[Any], wanted: list[expected.Expected | None] | None, replies: _Replies) -> bool:
        """Carry out batched requests, each reply added (or counted, where exactly the one
        ``wanted`` at its place); False once one is ``errored`` (the batch ends there)."""
        handlers = self.batched
        for index, item in enumerate(requests):
            if not isinstance(item, dict):
                replies.add({"errored": {"message": "batch: a request must be an object"}})
                return False
            want = wanted[index] if wanted is not None else None
            if item.get("cmd") == "state" and self.state is not None:
                replies.add_state(self.state, want)
                continue
            reply = self._answer(item, handlers)
            if want is not None and "errored" not in reply and expected.met(reply, want):
                replies.met()
            elif not replies.add(reply):
                return False
        return True

    def _expectation(self, request: Mapping[str, Any], changes: bool) -> expected.Expectation | None:
        """The expectation a batch names by ``expectation_key``: the one it carries (then kept
        under the key, the least recently used of MAX_EXPECTATIONS dropped), else the one kept."""
        key, given = request.get("expectation_key"), request.get("expectation")
        if key is None:
            if given is not None:
                raise ProtocolError("batch: an 'expectation' needs an 'expectation_key' to be kept under")
            return None
        if not isinstance(key, str):
            raise ProtocolError(f"batch: 'expectation_key' must be a string, got {_excerpt(key)}")
        if given is None:
            kept = self.expectations.get(key)
            if kept is None:
                raise ProtocolError(f"batch: unknown expectation_key {_excerpt(key)}: send the expectation with it first")
            self.expectations.move_to_end(key)
            return kept
        try:
            kept = expected.read(given, changes)
        except expected.ExpectationError as exc:
            raise ProtocolError(str(exc)) from None
        self.expectations[key] = kept
        self.expectations.move_to_end(key)
        while len(self.expectations) > MAX_EXPECTATIONS:
            self.expectations.popitem(last=False)
        return kept

    def playout(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The ``playout`` extension: ``deal`` dealt, then actions chosen by the rule of
        docs/protocol.md (``reference_impl.playout``) until the deal ends, no action is legal
        or ``max_actions`` were chosen; the replies of the requests that amounts to (``deal``,
        ``state``, ``legal``, then ``apply``, ``state``, ``legal`` per action) as ``batch``
        gives them, and the actions chosen."""
        self.whole_case = True
        state = self._match()
        deal, seed, styles = request.get("deal"), request.get("seed"), request.get("styles")
        favoured, most = request.get("favoured", []), request.get("max_actions")
        if not isinstance(deal, Mapping):
            raise ProtocolError(f"playout: expected 'deal', an object {{dealer, hands, talon}}, got {_excerpt(deal)}")
        if type(seed) is not int or not 0 <= seed <= MAX_INT:
            raise ProtocolError(f"playout: 'seed' must be an integer from 0 to {MAX_INT}, got {_excerpt(seed)}")
        if not (isinstance(styles, list) and len(styles) == 3 and all(style in playout.STYLES for style in styles)):
            raise ProtocolError(f"playout: 'styles' must list 3 of {', '.join(playout.STYLES)}, got {_excerpt(styles)}")
        if not (isinstance(favoured, list) and all(type(n) is int for n in favoured)):
            raise ProtocolError(f"playout: 'favoured' must be a list of integers, got {_excerpt(favoured)}")
        if type(most) is not int or not 0 <= most <= MAX_ACTIONS:
            raise ProtocolError(f"playout: 'max_actions' must be an integer from 0 to {MAX_ACTIONS}, got {_excerpt(most)}")
        free = playout.Chooser(seed, styles, favoured)
        chooser = free if request.get("position") is None else _plan(request["position"], free)
        replies = _Replies(request, "playout")
        actions: list[str] = []
        dealt = self._answer({**deal, "cmd": "deal"}, self.handlers)
        if replies.add(dealt):
            observed = dict(replies.add_state(state))  # the state the chooser reads, kept current
            legal = state.legal_actions()
            replies.add({"actions": legal})
            while len(actions) < most and observed["phase"] not in ENDED:
                action = chooser.choose(sorted(legal), observed)
                if action is None:
                    break
                actions.append(action)
                if not replies.add(self._answer({"cmd": "apply", "action": action}, self.handlers)):
                    break
                observed.update(replies.add_state(state))
                legal = state.legal_actions()
                replies.add({"actions": legal})
        return {"actions": actions, "replies": replies.finish()}

    def stop(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.stopped = True
        return {"ok": True}


def _applied(state: MatchState, action: Any) -> dict[str, Any]:
    """The reply to ``apply``: the events, or the refusal (the state unchanged)."""
    try:
        events = state.apply(action)
    except RefusedActionError as exc:
        return _refused(exc)
    return {"ok": True, "events": events}


def _refused(exc: RefusedActionError) -> dict[str, Any]:
    """The reply to an ``apply`` the rules refuse: the class, the reason code and the words."""
    refusal: dict[str, Any] = {"class": exc.refusal_class, "reason": exc.reason}
    if exc.also:  # several reasons apply: all of them, the first as ``reason`` (DESIGN.md "Reason codes")
        refusal["reasons"] = [exc.reason, *exc.also]
    refusal["message"] = str(exc)
    return {"ok": False, "refusal": refusal}


def _errored(exc: Exception) -> dict[str, Any]:
    """The ``errored`` reply to a request that raised ``exc``."""
    if isinstance(exc, (ProtocolError, EngineError)):
        return {"errored": {"message": _clip(str(exc), MAX_MESSAGE)}}
    return {"errored": {"message": _clip(f"internal error: {type(exc).__name__}: {exc}", MAX_MESSAGE)}}


def _plan(position: Any, free: playout.Chooser) -> playout.Plan:
    """A playout's ``position``: {declarer, plans (per seat, [trick or null, action] pairs),
    scripted, least_contract}."""
    if not isinstance(position, Mapping):
        raise ProtocolError(f"playout: 'position' must be an object {{declarer, plans, scripted, least_contract}}, got {_excerpt(position)}")
    declarer, plans = position.get("declarer"), position.get("plans")
    scripted, least = position.get("scripted", False), position.get("least_contract", 0)
    if type(declarer) is not int or not 0 <= declarer < 3:
        raise ProtocolError(f"playout: position 'declarer' must be a seat 0, 1 or 2, got {_excerpt(declarer)}")
    if not (isinstance(plans, list) and len(plans) == 3 and all(isinstance(seat, list) and all(_is_step(step) for step in seat)
                                                                 for seat in plans)):
        raise ProtocolError("playout: position 'plans' must list 3 seats' [trick or null, action] pairs")
    if type(scripted) is not bool or type(least) is not int:
        raise ProtocolError("playout: position 'scripted' must be true or false and 'least_contract' an integer")
    return playout.Plan(declarer, [[(step[0], step[1]) for step in seat] for seat in plans], scripted, least, free)


def _is_step(step: Any) -> bool:
    return (isinstance(step, list) and len(step) == 2 and (step[0] is None or type(step[0]) is int)
            and isinstance(step[1], str))


class _Replies:
    """The replies of a ``batch`` or ``playout``, state replies after the first as their
    changed fields only when the request asks for ``states: "changes"``; a run of replies
    exactly as expected is one count (the expectations extension)."""

    def __init__(self, request: Mapping[str, Any], command: str) -> None:
        mode = request.get("states", "full")
        if mode not in ("full", "changes"):
            raise ProtocolError(f"{command}: 'states' must be \"full\" or \"changes\", got {_excerpt(mode)}")
        self.changes = mode == "changes"
        self.replies: list[dict[str, Any] | int] = []
        self.previous: Snapshot | None = None  # the snapshot of the previous state reply's state
        self.run = 0  # replies exactly as expected since the last one written

    def add(self, reply: dict[str, Any]) -> bool:
        """Keep ``reply`` (not a state's: see ``add_state``); False when it is ``errored`` (the last one)."""
        if self.run:
            self.replies.append(self.run)
            self.run = 0
        self.replies.append(reply)
        return "errored" not in reply

    def met(self) -> None:
        """Count a reply exactly as expected instead of writing it."""
        self.run += 1

    def finish(self) -> list[dict[str, Any] | int]:
        """The replies, the last run of expected ones counted."""
        if self.run:
            self.replies.append(self.run)
            self.run = 0
        return self.replies

    def add_state(self, state: MatchState, wanted: expected.Expected | None = None) -> dict[str, Any]:
        """Keep the reply to a ``state`` request: counted when exactly ``wanted``, else the
        observation, or after the first with ``states: "changes"`` the fields whose snapshot
        items differ from the previous state reply's. Returns the fields the reply writes
        (none when it is counted)."""
        taken = state.snapshot()
        previous, self.previous = self.previous, taken
        if wanted is not None and (taken == wanted.snapshot or wanted.snapshot is None and expected.met_state(taken, wanted)):
            self.run += 1  # as ``met``, without the call: most states of a replay are as expected
            return {}
        if previous is None or not self.changes:
            fields = snapshot.observation(taken)
            self.add({"state": fields})
        else:
            fields = snapshot.changes(taken, previous)
            self.add({"changes": fields})
        return fields


def read_lines(stream: BinaryIO | TextIO, before_wait: Callable[[], None] = lambda: None) -> Iterator[str | bytes | None]:
    """The lines of ``stream``, each at most MAX_LINE long; None stands for a longer line,
    which is skipped without being held in memory. ``before_wait`` runs before every read
    that may wait for input: the replies to the lines already read are flushed then, and
    only then (a client that writes several requests at once gets their replies at once)."""
    if not hasattr(stream, "read1"):  # a text stream: line by line
        yield from _text_lines(stream, before_wait)  # type: ignore[arg-type]
        return
    buffer, start, skipping = bytearray(), 0, False
    while True:
        end = buffer.find(b"\n", start)
        if end < 0:
            del buffer[:start]
            start = 0
            if len(buffer) > MAX_LINE:  # the line so far is already too long: drop what came
                skipping = True
                buffer.clear()
            before_wait()
            chunk = stream.read1(1 << 16)
            if not chunk:
                break
            buffer += chunk
            continue
        line, too_long = bytes(buffer[start:end + 1]), skipping or end - start > MAX_LINE
        start, skipping = end + 1, False
        yield None if too_long else line
    if skipping or len(buffer) > MAX_LINE:
        yield None
    elif buffer:
        yield bytes(buffer)


def _text_lines(stream: TextIO, before_wait: Callable[[], None]) -> Iterator[str | None]:
    while True:
        before_wait()
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while (rest := stream.readline(1 << 16)) and not rest.endswith("\n"):
                pass
            yield None
        else:
            yield line


# A reply is a tree of plain values built afresh for its request: it cannot hold a cycle, so
# the encoder need not look for one (a tenth of the encoding time of a replayed case); a
# reply nested too deeply still ends in RecursionError, answered as an internal error.
_REPLY_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)


PENDING_LIMIT = 1 << 16  # characters of replies held back while more requests are at hand


def serve(stdin: BinaryIO | TextIO, stdout: TextIO, server: Server | None = None) -> None:
    """Answer requests until ``stop`` or the end of input; every line gets one reply.

    Replies are held while further request lines are already at hand and written together
    (one write, whatever buffering stdout has: PYTHONUNBUFFERED makes it write every call)
    before the server waits for input, or once they pass PENDING_LIMIT. A whole case's reply
    (``batch``, ``playout``) is written at once: a client that wrote the next cases ahead
    reads it while the server plays them, and a later case that hangs or kills the server
    cannot keep it back. ``server``: the one answering (a fresh ``Server`` by default; a
    test double may pass a subclass)."""
    server = server or Server()
    pending: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal size
        if pending:
            stdout.write("".join(pending))
            pending.clear()
            size = 0
        stdout.flush()

    for line in read_lines(stdin, flush):
        if line is None:
            reply: dict[str, Any] = {"seq": None, "errored": {"message": f"request line longer than {MAX_LINE} bytes"}}
        elif not line.strip():
            continue
        else:
            reply = server.handle_line(line)
        try:
            text = _REPLY_ENCODER.encode(reply)
        except (ValueError, TypeError, RecursionError) as exc:
            text = json.dumps({"seq": reply.get("seq"), "errored": {"message": f"internal error: reply not JSON: {type(exc).__name__}"}})
        pending.append(text + "\n")
        size += len(text) + 1
        if server.stopped:
            break
        if size >= PENDING_LIMIT or server.whole_case:
            server.whole_case = False
            flush()
    flush()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``thousand-reference`` and ``python -m reference_impl.server``."""
    parser = argparse.ArgumentParser(
        prog="thousand-reference",
        description=(
            "Serve the reference rules engine of Thousand over protocol v1: JSON lines on "
            "stdin/stdout (start, match, deal, legal, apply, state, stop). Any profile is "
            "accepted: the match request carries the resolved profile document."
        ),
    )
    parser.add_argument("--rules", metavar="FILE.yaml",
                        help="play these rules (a house profile file, or 'name+option') whatever profile "
                             "the runner names in 'match'")
    add_declare_option(parser)
    args = parser.parse_args(argv)
    if args.rules is not None and not _use_house_rules(args.rules):
        return 2
    if not _use_declaration(args.declare):
        return 2
    gc.set_threshold(YOUNG_COLLECTION, 20, 20)  # cycles are still collected (a match holds a few), only less often
    try:
        serve(sys.stdin.buffer, sys.stdout)  # bytes: each line is decoded on its own
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0


def add_declare_option(parser: argparse.ArgumentParser) -> None:
    """``--declare P[,P...]``: shared with ``python -m mutants.serve``."""
    parser.add_argument("--declare", metavar="P[,P...]",
                        help="answer 'start' with this list of profile names instead of \"any\", as an engine "
                             "that plays only those rule sets does (a test double for such engines)")


def _use_declaration(declare: str | None) -> bool:
    """Set what ``start`` declares; an empty or malformed list is one clear line, exit 2."""
    global DECLARED
    if declare is None or declare in ("any", "own"):  # "own": fixed rules, checked against any (--rules)
        DECLARED = declare or "any"
        return True
    names = [name.strip() for name in declare.split(",")]
    if not all(PROFILE_NAME.fullmatch(name) for name in names):
        print(f"thousand-reference: --declare: expected profile names separated by commas, got {declare!r}",
              file=sys.stderr)
        return False
    DECLARED = names
    return True


def _use_house_rules(name: str) -> bool:
    """Resolve ``--rules`` once, before serving; a bad file is one clear line, exit 2."""
    global HOUSE_DOCUMENT
    import variants

    try:
        HOUSE_DOCUMENT = variants.resolve(name).to_document()
    except variants.ProfileError as exc:
        print(f"thousand-reference: --rules: {exc}", file=sys.stderr)
        return False
    IMPLEMENTATION["name"] = f"thousand-reference --rules {HOUSE_DOCUMENT['profile']}{NAME_SUFFIX}"
    return True


if __name__ == "__main__":
    sys.exit(main())
