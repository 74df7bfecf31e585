"""Run conformance transcripts against an implementation through protocol v1.

Each (case, profile) pair gets one outcome, kept apart as toml-test does:

- ``pass``; ``fail``: a wrong answer (legal set, refusal, event, state field, player to act);
- ``error``: crash, bad JSON, a reply that breaks the protocol, wrong seq, closed output, an
  ``errored`` reply; ``timeout``: no reply in time;
- ``skipped``: the implementation replied ``skipped`` (it declines a rule);
- ``not_declared``: the implementation's ``start`` reply does not list the profile;
- ``case_bug``: the transcript itself is wrong (or its profile cannot be resolved).

After a wrong answer the case goes on as long as the implementation accepts the
transcript's actions, so one case reports every mismatch it meets (``--first-mismatch``
stops at the first); each mismatch carries a signature and knobs (conformance.harness.diagnosis).
The runner never sends an expected value: it sends actions and asks for legal sets and state.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Sequence

from conformance.corpus import schemas
from conformance.harness import derive, diagnosis
from conformance.harness.findings import Finding, Observed, broken
from conformance.harness.process import Preencoded, ProtocolFailure
from conformance.harness.session import DECLARATIONS, NOTE, Declarations, Errored, Session, Skipped, Unsupported, judge
from conformance.harness.session import short as _short  # one way to show a value in a message
from conformance.corpus.transcripts import CaseBug, Transcript, refusal_class, refused_reasons
from spec.vocabulary import Phase

# -I: isolated mode, so that a reference_impl/ folder in the current directory (or
# PYTHONPATH) cannot stand in for the installed reference.
REFERENCE_COMMAND = (sys.executable, "-I", "-m", "reference_impl.server")
VALUE_LIMIT = 64 * 1024  # bytes of JSON kept of any one value that came from the implementation
STORED_LIMIT = 32 * 1024 * 1024  # bytes of such values kept over a whole run; later ones are dropped
MESSAGE_LIMIT = 2000  # characters of a result's one-line message
DEPTH_LIMIT = 100  # nesting kept of a value that came from the implementation
FINDINGS_KEPT = 50  # mismatches of one case kept in the report (the rest are counted)
TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP = 5  # per worker
START_FAILURES_BEFORE_GIVING_UP = 3
# seconds: the shortest --timeout accepted; below it no process, the reference included, can
# answer (a pipe round trip and a Python call), and every reply would be a timeout
MIN_TIMEOUT = 0.01
DEFAULT_MATCH_STATE: dict[str, Any] = {
    "scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
    "barrel": [{"on": False, "attempts": 0, "failed_visits": 0} for _ in range(3)],
}
# The field each ordinary reply must carry, checked even without --validate-messages.
_REPLY_FIELD: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "start": ("version", int), "match": ("ok", bool), "deal": ("ok", bool),
    "legal": ("actions", list), "apply": ("ok", bool), "state": ("state", dict), "stop": ("ok", bool),
}


@dataclass
class Result:
    """The outcome of one case under one profile, with what a reader needs to act on it."""

    case_id: str
    title: str
    profile: str
    outcome: str
    message: str = ""
    knobs: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    stderr_tail: str = ""
    seconds: float = 0.0
    expected_failure: bool = False  # set by the expected-failures list
    findings: list[Finding] = field(default_factory=list)  # every mismatch met, in order
    more_findings: int = 0  # mismatches met beyond FINDINGS_KEPT
    unchecked: tuple[str, ...] = ()  # what the implementation declared unsupported and met here

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.case_id, "title": self.title, "profile": self.profile, "outcome": self.outcome,
            "seconds": round(self.seconds, 4), "knobs": list(self.knobs),
        }
        if self.message:
            data["message"] = self.message
        if self.details:
            data["details"] = self.details
        if self.stderr_tail:
            data["stderr_tail"] = self.stderr_tail
        if self.expected_failure:
            data["expected_failure"] = True
        if self.findings:
            data["mismatches"] = [f.to_json() for f in self.findings]
            if self.more_findings:
                data["more_mismatches"] = self.more_findings
        if self.unchecked:
            data["unchecked"] = list(self.unchecked)
        return data

    @property
    def partial(self) -> bool:
        return bool(self.unchecked)

    def summary_line(self) -> str:
        """The terminal's view: the first mismatch and how many more."""
        extra = len(self.findings) - 1 + self.more_findings
        return self.message + (f" (and {extra} more mismatch{'es' if extra > 1 else ''})" if extra > 0 else "")


class Mismatches(Exception):
    """The wrong answers of one case (at least one), in the order they were met."""

    def __init__(self, findings: list[Finding], state_before: Any = None) -> None:
        super().__init__(findings[0].message)
        self.findings = findings
        self.state_before = state_before


class EndOfCase(Exception):
    """The transcript cannot go on: the implementation refused one of its actions, accepted
    what it must refuse, or the case needs an action the implementation does not support."""


class SkippedByImplementation(Exception):
    pass


class NotDeclared(Exception):
    pass


class CaseBugError(Exception):
    pass


# --- values that came from the implementation are clipped -------------------------------

def _too_deep(value: Any, limit: int = DEPTH_LIMIT) -> bool:
    stack = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if depth > limit or seen > 1_000_000:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return False


def clip_value(value: Any, limit: int = VALUE_LIMIT) -> tuple[Any, int]:
    """The value, or a short string standing for it when it is too big or too deep; and its
    size in bytes of JSON (what it costs the report)."""
    if isinstance(value, (bool, int, float)) or value is None:
        return value, 8
    if _too_deep(value):
        return f"<clipped: nested more than {DEPTH_LIMIT} deep>", 48
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError, OverflowError):
        return "<clipped: not representable as JSON>", 40
    if len(text) <= limit:
        return value, len(text)
    # the digest keeps two long values apart that share their length and head (a comparison of
    # stand-ins must say what a comparison of the values would)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"<clipped: {len(text)} characters, digest {digest}> {text[:512]}...", 640


def clip_text(text: str, limit: int = MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class Budget:
    """What a run may still store of the implementation's values (thread-safe)."""

    def __init__(self, total: int = STORED_LIMIT) -> None:
        self.left = total
        self._lock = threading.Lock()

    def keep(self, value: Any) -> Any:
        clipped, size = clip_value(value)
        with self._lock:
            if size > self.left:
                return f"<dropped: the run stored {STORED_LIMIT} bytes of implementation values already>"
            self.left -= size
        return clipped


# --- comparison -----------------------------------------------------------------------

# The types whose values ``same`` and ``equal`` compare with ``==`` when both sides have one.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def same(expected: Any, actual: Any) -> bool:
    """Expected matches actual: numbers by value (60 == 60.0), never a bool for a number,
    lists item by item, mappings on the expected keys only."""
    kind = type(expected)
    if kind is type(actual) and kind in _SCALARS:
        return bool(expected == actual)  # what the rules below decide for two values of one type
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return bool(expected == actual)
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            same(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and same(v, actual[k]) for k, v in expected.items())
    return type(expected) is type(actual) and bool(expected == actual)


def equal(one: Any, other: Any) -> bool:
    """Full equality under the same number rules (both directions for mappings).

    Two JSON values that ``equal`` takes as equal are ``==`` (the converse fails: True == 1,
    and a list compares the same NaN object as equal to itself), so ``==`` rules most pairs
    out at C speed; and two ``==`` values of the same ``repr`` are equal (no bool stands for
    a number there, no int for a float) unless a NaN is in them, which settles most of the
    others. Only what is left (60 against 60.0, true against 1, members in another
    order) is walked."""
    kind = type(one)
    if kind is type(other) and kind in _SCALARS:
        return bool(one == other)
    if not one == other:
        return False
    return _same_text(one, other) or _equal_walked(one, other)


def identical(one: Any, other: Any) -> bool:
    """The same JSON value to the last type and member order: ``==``, and the same ``repr``
    (which tells True from 1, 1 from 1.0, a list from a tuple, and keeps the member order).
    False also when it cannot be told cheaply (a NaN, which is not equal to itself, shows as
    ``nan``; an int too long to print), so that False proves nothing."""
    try:
        if not one == other:
            return False
    except (ValueError, TypeError, RecursionError):
        return False
    return _same_text(one, other)


def _same_text(one: Any, other: Any) -> bool:
    """``identical`` for two values already known to be ``==`` (``equal`` has just compared them)."""
    try:
        text = repr(one)
        return text == repr(other) and "nan" not in text
    except (ValueError, TypeError, RecursionError):
        return False


def _equal_walked(one: Any, other: Any) -> bool:
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(equal(one[k], other[k]) for k in one)
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(equal(a, b) for a, b in zip(one, other))
    return same(one, other)


def unmatched_event(expected: Sequence[dict[str, Any]], actual: Sequence[Any]) -> int | None:
    """Index of the first expected event not found, in order, among the actual events."""
    position = 0
    for index, wanted in enumerate(expected):
        while position < len(actual) and not same(wanted, actual[position]):
            position += 1
        if position == len(actual):
            return index
        position += 1
    return None


def state_differences(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The expected state fields that differ: field -> {expected, actual}."""
    return {key: {"expected": value, "actual": actual.get(key, "<missing>")}
            for key, value in expected.items() if key not in actual or not same(value, actual[key])}


def profile_selected(profile: str, filters: Sequence[str]) -> bool:
    """``--profile name`` selects the profile and its options; ``name+option`` exactly that."""
    if not filters:
        return True
    return any(profile == wanted or ("+" not in wanted and profile.split("+")[0] == wanted) for wanted in filters)


def case_selected(case_id: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    if include and not any(fnmatch.fnmatchcase(case_id, pattern) for pattern in include):
        return False
    return not any(fnmatch.fnmatchcase(case_id, pattern) for pattern in exclude)


# --- one worker: one implementation process -------------------------------------------

@dataclass
class Settings:
    command: Sequence[str]
    timeout: float = 10.0
    validate_messages: bool = False
    document: Callable[[str], dict[str, Any]] | None = None  # profile -> resolved document
    first_mismatch: bool = False  # end a case at its first mismatch (faster kill matrix)
    budget: Budget = field(default_factory=Budget)
    # profile -> names to send instead to an implementation that declares a list without it
    # (a house file's base profile, or --as): see match_name
    fallbacks: dict[str, tuple[str, ...]] = field(default_factory=dict)


def match_name(offered: Any, profile: str, fallbacks: Sequence[str] = ()) -> str | None:
    """The profile name a ``match`` sends to an implementation that declared ``offered``, or
    None when it plays none that fits. ``"any"`` and ``"own"`` play whatever the runner names;
    a list plays its names: the profile itself, else the first of ``fallbacks`` it lists (the
    profile a house file extends, or the one ``--as`` chose)."""
    if offered in DECLARATIONS:
        return profile
    listed = offered if isinstance(offered, list) else []
    return next((name for name in (profile, *fallbacks) if name in listed), None)


class Worker:
    """Runs cases one after the other on one persistent implementation process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.impl: Session | None = None
        self.declarations: Declarations | None = None
        self.start_reply: dict[str, Any] | None = None
        self.unsupported = Unsupported()
        self.reasons = True  # False: it cannot tell why it refuses (refusal_reasons: false)
        self.start_failures = 0
        self.ever_started = False
        self.timeouts_in_a_row = 0
        self.documents: dict[str, Preencoded | None] = {}  # serialized once per profile
        self.repaired_strings = 0  # strings of its replies that held a lone surrogate (replaced), processes ended
        self._lock = threading.Lock()

    # --- process ---

    def _ensure_started(self) -> Session:
        if self.impl is not None:
            return self.impl
        if self.start_failures >= START_FAILURES_BEFORE_GIVING_UP:
            raise ProtocolFailure(f"the implementation failed to start {self.start_failures} times; not retried")
        on_message = self._validate if self.settings.validate_messages else None
        impl = Session(self.settings.command, self.settings.timeout, on_message)
        with self._lock:
            self.impl = impl
        try:
            declared = impl.start()
        except Skipped as exc:
            self.start_failures += 1
            raise ProtocolFailure(f"start failed: start: {clip_text(exc.reason, 200)}") from None
        except Errored as exc:
            self.start_failures += 1
            raise ProtocolFailure(f"start failed: the implementation reported an error on \"start\": "
                                  f"{clip_text(exc.text, 500)}") from None
        except ProtocolFailure as exc:
            self.start_failures += 1
            raise type(exc)(f"start failed: {exc}") from None
        self.start_failures = 0
        self.ever_started = True
        self.declarations = declared
        self.start_reply = declared.reply
        self.unsupported = declared.unsupported
        self.reasons = declared.reasons
        return impl

    def discard(self) -> None:
        """Kill the process (after an error, a timeout or at the end)."""
        with self._lock:
            impl, self.impl = self.impl, None
        if impl is not None:
            impl.kill()
            self.repaired_strings += impl.repaired_strings

    def close(self) -> None:
        with self._lock:
            impl, self.impl = self.impl, None
        if impl is not None:
            impl.stop()
            self.repaired_strings += impl.repaired_strings

    def _validate(self, direction: str, command: str, message: dict[str, Any]) -> None:
        if direction == "command":
            problem = schemas.first_problem(schemas.command_validator(command), message)
            if problem:
                raise CaseBugError(f"the runner would send an invalid {_short(command)} command: {problem}")
            return
        declared = self.declarations
        problem = schemas.reply_problem(command, message, declared.unsupported.state_fields if declared else frozenset(),
                                        declared is not None and declared.events_derived,
                                        declared is not None and declared.give_cards)
        if problem:
            raise ProtocolFailure(f"reply to {_short(command)} does not match spec/schema/protocol/{command}.reply.json: {problem}")

    def _ask(self, command: str, **fields: Any) -> dict[str, Any]:
        impl = self.impl
        if impl is None:  # killed by an interruption from another thread
            raise ProtocolFailure(f"the implementation was stopped before {_short(command)}")
        reply = impl.request(command, **fields)
        try:
            judge(command, reply)
        except Skipped as exc:
            raise SkippedByImplementation(f"{command}: {clip_text(exc.reason, 200)}") from None
        except Errored as exc:
            raise ProtocolFailure(f"the implementation reported an error on {_short(command)}: {clip_text(exc.text, 500)}") from None
        key, kind = _REPLY_FIELD[command]
        if not isinstance(reply.get(key), kind) or (kind is int and isinstance(reply.get(key), bool)):
            raise ProtocolFailure(f"reply to {_short(command)} lacks {_short(key)} of the right type: {_short(reply)}")
        return reply

    # --- one case ---

    def run(self, case: Transcript, profile: str) -> Result:
        """Run one case under one profile; every failure mode becomes an outcome."""
        started = time.monotonic()
        result = Result(case.id, case.title, profile, "pass", knobs=case.knobs)
        if self.timeouts_in_a_row >= TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP:
            # An implementation that hangs on every case would otherwise cost --timeout per
            # case for the whole corpus: the rest is reported at once, never silently dropped.
            result.outcome = "timeout"
            result.message = (f"not run: the implementation timed out on {self.timeouts_in_a_row} cases in a row")
            return result
        mark = self.impl.stderr_mark() if self.impl is not None else 0
        try:
            self._ensure_started()
            run = CaseRun(self, case, profile)
            try:
                run.play()
            finally:
                result.unchecked = tuple(sorted(run.unchecked))
        except SkippedByImplementation as exc:
            result.outcome, result.message = "skipped", str(exc)
        except NotDeclared as exc:
            result.outcome, result.message = "not_declared", str(exc)
        except CaseBugError as exc:
            result.outcome, result.message = "case_bug", str(exc)
        except Mismatches as exc:
            self._failed(result, exc, mark)
        except ProtocolFailure as exc:
            found: list[Finding] = list(getattr(exc, "findings", []))
            if found:  # the first problem met decides the outcome; the breakdown is one more finding
                found.append(broken(exc.outcome, str(exc), {k: v for k, v in exc.details.items() if k in ("deal", "step", "action")}))
                self._failed(result, Mismatches(found), mark)
            else:
                result.outcome, result.message = exc.outcome, str(exc)
                result.details = dict(exc.details)
                result.stderr_tail = self._stderr_tail(mark)
            self.discard()  # the stream cannot be trusted any more: restart for the next case
        except Exception as exc:  # a hostile value (deep nesting, a huge number) or a runner bug: this case only
            result.outcome = "error"
            result.message = f"the runner could not check this case: {type(exc).__name__}: {_short(str(exc), 200)}"
            result.stderr_tail = self._stderr_tail(mark)
            self.discard()
        self.timeouts_in_a_row = self.timeouts_in_a_row + 1 if result.outcome == "timeout" else 0
        result.seconds = time.monotonic() - started
        return self._clipped(result)

    def _failed(self, result: Result, exc: Mismatches, mark: int) -> None:
        first = exc.findings[0]
        result.outcome, result.message = "fail", first.message
        result.findings = exc.findings[:FINDINGS_KEPT]
        result.more_findings = max(0, len(exc.findings) - FINDINGS_KEPT)
        result.details = {**dict(first.where), "check": first.check, "expected": first.expected, "actual": first.actual,
                          "signature": first.signature, "decided_by": list(first.knobs)}
        if first.kind is Observed.LEGAL and isinstance(first.expected, list) and isinstance(first.actual, list):
            result.details["missing"] = sorted(set(first.expected) - set(first.actual))
            result.details["unexpected"] = sorted(set(first.actual) - set(first.expected))
        result.details["state_before"] = exc.state_before
        result.stderr_tail = self._stderr_tail(mark)

    def _clipped(self, result: Result) -> Result:
        """Everything in the result that came from the implementation, within the limits."""
        keep = self.settings.budget.keep
        result.message = clip_text(result.message)
        result.details = {key: keep(value) for key, value in result.details.items()}
        result.findings = [replace(f, message=clip_text(f.message), expected=keep(f.expected), actual=keep(f.actual),
                                   where=dict(f.where)) for f in result.findings]
        return result

    def _stderr_tail(self, since: int) -> str:
        impl = self.impl
        return impl.stderr_tail(since=since) if impl is not None else ""


class CaseRun:
    """The requests of one case under one profile, and the checks on their replies.

    A wrong answer is recorded as a Finding and the case goes on; only a refused transcript
    action (or an accepted one the transcript refuses, or a changed state after a refusal)
    ends it, since the implementation's game no longer follows the transcript.
    """

    def __init__(self, worker: Worker, case: Transcript, profile: str) -> None:
        self.worker, self.case, self.profile = worker, case, profile
        self.unsupported = worker.unsupported
        self.position: dict[str, Any] = {}
        self.known_state: dict[str, Any] | None = None  # the state now, when already asked
        self.findings: list[Finding] = []
        self.first_state: dict[str, Any] | None = None  # the state before the first mismatch, when known
        self.unchecked: set[str] = set()

    def play(self) -> None:
        self._start_match()
        try:
            for number, deal in enumerate(self.case.deals, start=1):
                self.position = {"deal": number}
                self._play_deal(deal, number)
        except EndOfCase:
            pass
        except ProtocolFailure as exc:
            exc.details = {**self.position, **exc.details}
            exc.findings = self.findings  # type: ignore[attr-defined]
            raise
        if self.findings:
            before = self.first_state if self.first_state is not None else self._state_before_failure()
            raise Mismatches(self.findings, before)

    # --- recording ---

    def _record(self, found: Finding, message: str, expected: Any, actual: Any, before: dict[str, Any] | None = None,
                ends: bool = False) -> None:
        """One failed check: its finding (what and knobs) with the message, values and place."""
        if not self.findings:
            self.first_state = before
        self.findings.append(replace(found, message=message, expected=expected, actual=actual, where=dict(self.position)))
        if ends or self.worker.settings.first_mismatch:
            raise EndOfCase

    # --- requests ---

    def _start_match(self) -> None:
        worker = self.worker
        assert worker.start_reply is not None
        offered = worker.start_reply["profiles"]
        fallbacks = worker.settings.fallbacks.get(self.profile, ())
        name = match_name(offered, self.profile, fallbacks)
        if name is None:
            also = f" (nor {' or '.join(_short(f) for f in fallbacks)})" if fallbacks else ""
            raise NotDeclared(f"the implementation does not declare profile {_short(self.profile)}{also}")
        fields: dict[str, Any] = {"profile": name, "state": self._match_state()}
        document = self._document(required=offered in DECLARATIONS)
        if document is not None:
            fields["document"] = document
        worker._ask("match", **fields)
        self.known_state = None

    def _document(self, required: bool) -> Preencoded | None:
        """The resolved profile, sent to every implementation; only one that plays "any" needs it."""
        documents = self.worker.documents
        if self.profile not in documents:
            resolver = self.worker.settings.document
            try:
                documents[self.profile] = Preencoded(resolver(self.profile)) if resolver else None
            except Exception as exc:  # any resolver error means the case names a bad profile
                if required:
                    raise CaseBugError(f"profile {_short(self.profile)} cannot be resolved: {exc}") from None
                documents[self.profile] = None
        document = documents[self.profile]
        if document is None and required:
            raise CaseBugError("no profile resolver is available to send the profile document")
        return document

    def _match_state(self) -> dict[str, Any]:
        state = {key: value for key, value in DEFAULT_MATCH_STATE.items()}
        state.update(self.case.match or {})
        return state

    def _play_deal(self, deal: dict[str, Any], number: int) -> None:
        reply = self.worker._ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
        self.known_state = None
        if not reply["ok"]:
            raise ProtocolFailure(f"deal {number}: the implementation refused the deal: {_short(reply)}")
        self._check_events(deal.get("events"), reply, "deal")
        for index, step in enumerate(deal["steps"], start=1):
            self.position = {"deal": number, "step": index, "action": step["action"]}
            self._play_step(step)
        if deal.get("expect"):
            self.position = {"deal": number, "step": "end of deal"}
            self._check_state(deal["expect"], Phase.DEAL_OVER)

    def _state(self) -> dict[str, Any]:
        if self.known_state is None:
            self.known_state = self.worker._ask("state")["state"]
        return self.known_state

    def _play_step(self, step: dict[str, Any]) -> None:
        action = step["action"]
        word = self.unsupported.action(action)
        if word is not None:
            self.unchecked.add(f"action {word}")
            if "refused" in step:
                return  # a refusal changes nothing: the case goes on without it
            raise EndOfCase  # the rest of the case needs that action
        before: dict[str, Any] | None = None
        if "player" in step or "refused" in step:
            before = self._state()
            if "player" in step and not same(step["player"], before.get("to_act")):
                phase = str(before.get("phase"))
                self._record(Finding(Observed.TO_ACT, phase, "", *diagnosis.decided("to_act", phase)),
                             f"expected player {step['player']} to act; the implementation has {_short(before.get('to_act'))}",
                             step["player"], before.get("to_act"), before)
        if "legal" in step:
            before = self._check_legal(step, before)
        phase = diagnosis.action_phase(action)
        reply = self.worker._ask("apply", action=action)
        if isinstance(reply.get(NOTE), dict) and reply[NOTE].get("answered_by_runner"):
            self.unchecked.add("opening bid placed by the engine")  # the runner's answer, not the engine's
        if "refused" in step:
            self._check_refusal(step, reply, before, phase)
            return
        self.known_state = None
        if not reply["ok"]:
            self._record(diagnosis.refused_finding(phase, action, diagnosis.refusal_label(reply.get("refusal"))),
                         f"{_short(action)} was refused: {_refusal_text(reply.get('refusal'))}",
                         "accepted", reply.get("refusal"), before, ends=True)
        self._check_events(step.get("events"), reply, phase, before)
        if step.get("expect"):
            self._check_state(step["expect"], phase, before)

    def _check_legal(self, step: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any] | None:
        try:
            actions = self.worker._ask("legal")["actions"]
        except SkippedByImplementation:
            # a query changes nothing in the game: its answer is unchecked and the case goes on,
            # as fit and fuzz take it (the same transcript says the same whoever replays it)
            self.unchecked.add("legal actions (skipped)")
            return before
        wanted = {a for a in step["legal"] if self.unsupported.action(a) is None}
        got = {a for a in actions if isinstance(a, str) and self.unsupported.action(a) is None}
        if len(wanted) < len(step["legal"]):
            self.unchecked.add("legal actions " + ", ".join(sorted(
                {w for a in step["legal"] if (w := self.unsupported.action(a))})))
        strange = [a for a in actions if not isinstance(a, str)]
        if wanted == got and not strange:
            return before
        before = before if before is not None else self._state()  # the phase, trick and hand explain it
        phase = str(before.get("phase")) if isinstance(before, dict) else diagnosis.action_phase(step["action"])
        found = diagnosis.legal_finding(phase, sorted(wanted), sorted(got), before)
        if strange:
            found = replace(found, name=found.name + "; actions that are not strings")
        missing, unexpected = sorted(wanted - got), sorted(got - wanted)
        self._record(found,
                     f"legal actions differ: missing {_short(missing)}, unexpected {_short(unexpected)}",
                     sorted(wanted), sorted(got) + [_short(a) for a in strange], before)
        return before

    def _check_refusal(self, step: dict[str, Any], reply: dict[str, Any], before: dict[str, Any] | None,
                       phase: str) -> None:
        reasons = refused_reasons(step["refused"])
        reason = reasons[0]  # the signature's: the first, as the reference gives it first
        told = " or ".join(reasons)
        wanted = {"class": refusal_class(reasons[0]), "reason": reasons[0] if len(reasons) == 1 else list(reasons)}
        if reply["ok"]:
            self.known_state = None
            self._record(diagnosis.refusal_finding(phase, reason, None),
                         f"{_short(step['action'])} must be refused ({told}); it was accepted",
                         wanted, {"accepted": True, "events": reply.get("events")}, before, ends=True)
        refusal = reply.get("refusal")
        if not self.worker.reasons or (isinstance(refusal, dict) and "reason" not in refusal):
            self.unchecked.add("refusal reasons")  # refused it is, which is all it can tell
        elif not isinstance(refusal, dict) or not any(same({"class": wanted["class"], "reason": r}, refusal) for r in reasons):
            self._record(diagnosis.refusal_finding(phase, reason, diagnosis.refusal_label(refusal)),
                         f"{_short(step['action'])} must be refused as {wanted['class']}/{told}; got {_refusal_text(refusal)}",
                         wanted, refusal, before)
        self.known_state = None
        after = self._state()
        if before is not None and not equal(self._visible(before), self._visible(after)):
            changed = sorted(k for k in set(before) | set(after)
                             if k not in self.unsupported.state_fields and not equal(before.get(k), after.get(k)))
            self._record(Finding(Observed.UNCHANGED, phase, "a refusal changed " + ", ".join(changed[:5]),
                                 *diagnosis.decided("unchanged")), f"the refused {_short(step['action'])} changed the state: {', '.join(changed)}",
                         {k: before.get(k) for k in changed}, {k: after.get(k) for k in changed}, before, ends=True)

    def _visible(self, state: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in state.items() if k not in self.unsupported.state_fields}

    def _check_events(self, expected: list[dict[str, Any]] | None, reply: dict[str, Any], phase: str,
                      before: dict[str, Any] | None = None) -> None:
        if not expected:
            return
        wanted = [e for e in expected if e.get("type") not in self.unsupported.events]
        if len(wanted) < len(expected):
            self.unchecked.update(f"event {e.get('type')}" for e in expected if e.get("type") in self.unsupported.events)
        note = reply.get(NOTE)
        if isinstance(note, dict) and "unsure" in note:  # derived from its states: only what they tell is checked
            wanted, unchecked = derive.expected_told(wanted, note["unsure"])
            self.unchecked.update(unchecked)
        actual = reply.get("events")
        actual = actual if isinstance(actual, list) else []
        missing = unmatched_event(wanted, actual)
        if missing is not None:
            self._record(diagnosis.event_finding(phase, wanted[missing], actual, same),
                         f"expected event {_short(wanted[missing])} (in order) not among the {phase} events",
                         wanted, actual, before)

    def _check_state(self, expected: dict[str, Any], phase: str, before: dict[str, Any] | None = None) -> None:
        skipped = [key for key in expected if key in self.unsupported.state_fields]
        self.unchecked.update(f"state {key}" for key in skipped)
        actual = self._state()
        differences = state_differences({k: v for k, v in expected.items() if k not in skipped}, actual)
        for name, difference in differences.items():
            self._record(Finding(Observed.STATE, phase, name, *diagnosis.decided("state", name)),
                         f"state differs in {name}", {name: difference["expected"]}, {name: difference["actual"]}, before)

    def _state_before_failure(self) -> dict[str, Any] | None:
        """The state before the first failing step, found by replaying the case up to it.

        Asking for the state before every step would double the requests of every passing
        case; a failure is rare, so it pays for a replay instead.
        """
        where = self.findings[0].where
        deal_number, step_number = where.get("deal"), where.get("step")
        if not isinstance(step_number, int) or not isinstance(deal_number, int) or self.worker.impl is None:
            return None
        try:
            self._start_match()
            for number, deal in enumerate(self.case.deals[:deal_number], start=1):
                self.worker._ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
                steps = deal["steps"] if number < deal_number else deal["steps"][: step_number - 1]
                for step in steps:
                    self.worker._ask("apply", action=step["action"])
            state: dict[str, Any] = self.worker._ask("state")["state"]
            return state
        except ProtocolFailure:
            self.worker.discard()  # the diagnosis broke the stream; the next case restarts
            return None
        except (SkippedByImplementation, CaseBugError, NotDeclared):
            return None


def _refusal_text(refusal: Any) -> str:
    if isinstance(refusal, dict):
        return f"{refusal.get('class')}/{refusal.get('reason')}" + (f" ({refusal['message']})" if refusal.get("message") else "")
    return repr(refusal)




# --- the whole run --------------------------------------------------------------------

@dataclass
class Job:
    index: int
    case: Transcript | CaseBug
    profile: str


def plan(cases: Iterable[Transcript | CaseBug], profiles: Sequence[str] = (),
         include: Sequence[str] = (), exclude: Sequence[str] = ()) -> list[Job]:
    """The (case, profile) pairs to run, in corpus order."""
    jobs: list[Job] = []
    for case in cases:
        if not case_selected(case.id, include, exclude):
            continue
        names = case.profiles or ("",)
        for profile in names:
            if profile and not profile_selected(profile, profiles):
                continue
            if not profile and profiles:
                continue
            jobs.append(Job(len(jobs), case, profile))
    return jobs


@dataclass
class RunState:
    """What a run has produced so far; reports are written from it even when interrupted."""

    results: dict[int, Result] = field(default_factory=dict)
    start_reply: dict[str, Any] | None = None
    interrupted: bool = False
    message_problems: list[str] = field(default_factory=list)
    start_failure: str | None = None  # the implementation never started: the run stopped at once
    repaired_strings: int = 0  # strings the implementation sent with a lone surrogate (each replaced by U+FFFD)


def run_jobs(jobs: Sequence[Job], settings: Settings, jobs_count: int = 1, state: RunState | None = None,
             progress: Callable[[Result], None] | None = None) -> RunState:
    """Run every job on ``jobs_count`` implementation processes; returns the results.

    Every job gets exactly one result. When the implementation cannot start at all (its first
    start fails), the run stops at once: ``state.start_failure`` says why and the jobs left
    are reported as not run. A KeyboardInterrupt (or a subclass, for other signals) stops the
    workers, kills the implementations and propagates, with ``state`` holding the results of
    the finished cases.
    """
    state = state or RunState()
    pending = list(jobs)
    lock = threading.Lock()
    stop = threading.Event()
    workers = [Worker(settings) for _ in range(max(1, jobs_count))]
    started = [False]

    def take() -> Job | None:
        with lock:
            return pending.pop(0) if pending and not stop.is_set() else None

    def work(worker: Worker) -> None:
        try:
            while (job := take()) is not None:
                try:
                    result = _run_job(worker, job)
                except Exception as exc:  # never lose a case, whatever broke
                    result = Result(job.case.id, job.case.title, job.profile, "error",
                                    f"the runner could not run this case: {type(exc).__name__}: {_short(str(exc), 200)}")
                if stop.is_set() and not state.start_failure:
                    return  # killed mid-case by an interruption: not a real outcome
                with lock:
                    state.results[job.index] = result
                    started[0] = started[0] or worker.ever_started
                    if state.start_reply is None and worker.start_reply is not None:
                        state.start_reply = worker.start_reply
                    if not started[0] and result.outcome in ("error", "timeout") and result.message.startswith(
                            ("start failed", "cannot start")):
                        state.start_failure = state.start_failure or result.message
                        stop.set()
                if progress:
                    progress(result)
        finally:
            if not stop.is_set() or state.start_failure:
                worker.close()
            with lock:
                state.repaired_strings += worker.repaired_strings

    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.1)
    except KeyboardInterrupt:
        stop.set()
        state.interrupted = True
        for worker in workers:
            worker.discard()
        for thread in threads:
            thread.join(2.0)
        raise
    _fill_not_run(jobs, state)
    return state


def _fill_not_run(jobs: Sequence[Job], state: RunState) -> None:
    """A result for every job that has none (the run stopped because nothing could start)."""
    first = next((r for r in state.results.values() if r.message == state.start_failure), None)
    for job in jobs:
        if job.index not in state.results:
            outcome = first.outcome if first is not None else "error"
            reason = state.start_failure or "the runner stopped before this case"
            state.results[job.index] = Result(job.case.id, job.case.title, job.profile, outcome,
                                              f"not run: the implementation could not start ({reason})")


def _run_job(worker: Worker, job: Job) -> Result:
    case = job.case
    if isinstance(case, CaseBug):
        return Result(case.id, case.title, job.profile, "case_bug", message=case.message, knobs=case.knobs)
    return worker.run(case, job.profile)
