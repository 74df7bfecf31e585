"""Lockstep observation: everything an implementation shows while it plays a transcript's actions.

``thousand fit``, ``thousand fuzz`` and ``thousand verify --rules`` never compare an
implementation with a transcript's expected values: they compare it with the reference
playing the same actions under given rules. An observation record holds, for every step,
the legal set before the action, the reply (accepted with its events, or refused with
class and reason) and the state after it; ``compare`` turns two records into differences,
each with a small signature (kind, phase, a normalised difference) that groups root causes.

A record continues after a difference as long as the implementation accepts (or refuses)
the transcript's actions as the transcript expects: the first action whose acceptance
differs is recorded, and ends the record, because the game has left the transcript's path.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, TypeVar

from conformance.process import Implementation, Preencoded, ProtocolFailure
from conformance import diagnosis
from conformance.runner import DEFAULT_MATCH_STATE, REFERENCE_COMMAND, equal, same, unmatched_event
from conformance.transcripts import Transcript

# Every observable state field changes under some knob; none is left out of the comparison.


@dataclass(frozen=True)
class Reply:
    """The answer to one action (or to the ``deal`` request itself)."""

    accepted: bool
    events: tuple[Any, ...] = ()
    refusal: tuple[str, str] | None = None  # (class, reason)


@dataclass(frozen=True)
class StepRecord:
    """One step: ``step`` 0 is the deal itself (no action, no legal set)."""

    deal: int
    step: int
    action: str | None
    legal: tuple[str, ...] | None
    reply: Reply
    state: dict[str, Any]


@dataclass(frozen=True)
class CaseRecord:
    """What one implementation showed on one case, and why the record ends where it does."""

    case_id: str
    steps: tuple[StepRecord, ...]
    ended: str = "complete"  # complete | left_transcript | error: ... | skipped: ...

    @property
    def broken(self) -> bool:
        """The record ended on a protocol failure or a skip, not on a game difference."""
        return self.ended.startswith(("error", "skipped"))


@dataclass(frozen=True)
class Difference:
    """One observation where two records disagree; ``expected`` is the oracle's value."""

    case_id: str
    deal: int
    step: int
    action: str | None
    kind: str  # legal | refusal | event | state | record
    phase: str
    detail: str
    expected: Any = None
    actual: Any = None
    before: Any = None  # the oracle's state before the step (what a legal-set difference is read against)

    @property
    def signature(self) -> str:
        return f"{self.kind} {self.phase}: {self.detail}"

    @property
    def at(self) -> str:
        """Where in the case: ``deal 1 step 7 (play 9S)`` or ``deal 1 the deal``."""
        return f"deal {self.deal} " + ("the deal" if self.step == 0 else f"step {self.step} ({self.action})")

    def where(self) -> str:
        return f"{self.case_id} {self.at}"


# --- one implementation process, observed ------------------------------------------------

class Observer:
    """Plays cases on one persistent process; a protocol failure restarts it for the next case."""

    def __init__(self, command: Sequence[str], timeout: float = 10.0) -> None:
        self.command = list(command)
        self.timeout = timeout
        self.impl: Implementation | None = None
        self.offered: Any = None
        self.name = ""  # the implementation's name from its start reply
        self.documents: dict[str, Preencoded] = {}

    def _started(self) -> Implementation:
        if self.impl is None:
            impl = Implementation(self.command, self.timeout)
            try:
                reply = impl.request("start", version=1)
            except ProtocolFailure:
                impl.kill()
                raise
            self.impl, self.offered = impl, reply.get("profiles", "any")
            about = reply.get("implementation")
            self.name = str(about.get("name", "")) if isinstance(about, dict) else ""
        return self.impl

    def ask(self, command: str, **fields: Any) -> dict[str, Any]:
        reply = self._started().request(command, **fields)
        if "skipped" in reply:
            raise Skipped(str(reply["skipped"]))
        if "errored" in reply:
            raise ProtocolFailure(f"errored on {command!r}: {reply['errored']}")
        return reply

    def close(self) -> None:
        if self.impl is not None:
            self.impl.stop()
            self.impl = None

    def _document(self, document: dict[str, Any]) -> Preencoded:
        key = repr(document.get("rules"))
        if key not in self.documents:
            self.documents[key] = Preencoded(document)
        return self.documents[key]

    def start_match(self, profile: str, document: dict[str, Any], match: dict[str, Any] | None) -> None:
        self._started()
        fields: dict[str, Any] = {"profile": profile, "state": {**DEFAULT_MATCH_STATE, **(match or {})}}
        if self.offered == "any":
            fields["document"] = self._document(document)
        elif profile not in (self.offered or ()):
            raise Skipped(f"the implementation does not play profile {profile!r}")
        self.ask("match", **fields)

    def legal_set(self) -> tuple[str, ...]:
        actions = self.ask("legal").get("actions")
        return tuple(sorted(a for a in actions if isinstance(a, str))) if isinstance(actions, list) else ()

    def act(self, action: str | None, deal: dict[str, Any] | None = None) -> tuple[Reply, dict[str, Any]]:
        """The reply to an action (or, with ``deal``, to the deal) and the state after it."""
        if deal is not None:
            reply = self.ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
        else:
            reply = self.ask("apply", action=action)
        state = self.ask("state").get("state")
        return _reply(reply), state if isinstance(state, dict) else {}

    def step(self, action: str | None, deal: dict[str, Any] | None = None) -> tuple[tuple[str, ...] | None, Reply, dict[str, Any]]:
        """Legal set before, reply, state after: one action (or, with ``deal``, the deal)."""
        legal = None if deal is not None else self.legal_set()
        reply, state = self.act(action, deal)
        return legal, reply, state

    def observe(self, case: Transcript, profile: str, document: dict[str, Any]) -> CaseRecord:
        """The record of one case; never raises for what the implementation does."""
        steps: list[StepRecord] = []
        ended = "complete"
        try:
            self.start_match(profile, document, case.match)
            for number, deal in enumerate(case.deals, start=1):
                legal, reply, state = self.step(None, deal)
                steps.append(StepRecord(number, 0, None, None, reply, state))
                for index, scripted in enumerate(deal["steps"], start=1):
                    legal, reply, state = self.step(scripted["action"])
                    steps.append(StepRecord(number, index, scripted["action"], legal, reply, state))
                    if reply.accepted == ("refused" in scripted):
                        ended = "left_transcript"
                        return CaseRecord(case.id, tuple(steps), ended)
        except Skipped as exc:
            ended = f"skipped: {exc}"
        except ProtocolFailure as exc:
            ended = f"error: {exc}"
            if self.impl is not None:
                self.impl.kill()
            self.impl = None
        return CaseRecord(case.id, tuple(steps), ended)


class Skipped(Exception):
    """The implementation answered ``skipped`` (or does not play the profile)."""


class BatchObserver(Observer):
    """The reference (a trusted process) observed with every request of a case written at
    once: one round trip per case instead of three per step, which is most of the cost on a
    busy machine. The implementation under test is never driven this way."""

    def __init__(self, command: Sequence[str], timeout: float = 10.0) -> None:
        super().__init__(command, timeout)
        self.process: subprocess.Popen[bytes] | None = None
        self.encoded: dict[str, str] = {}

    def _exchange(self, lines: list[str]) -> list[dict[str, Any]]:
        """Write the requests (from a thread, so that full pipes cannot deadlock) and read as
        many replies; a process that does not answer in time is killed."""
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, start_new_session=True)
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        stdin = process.stdin

        def write() -> None:
            try:
                stdin.write("".join(lines).encode("utf-8"))
                stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        watchdog = threading.Timer(self.timeout + 0.01 * len(lines), self._kill)
        watchdog.start()
        try:
            replies = []
            for _ in lines:
                line = process.stdout.readline()
                if not line:
                    raise ProtocolFailure("the reference closed its output (killed after the timeout, or crashed)")
                replies.append(json.loads(line))
            return replies
        finally:
            watchdog.cancel()
            writer.join()

    def _kill(self) -> None:
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        if self.process is not None:
            self._kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None

    def observe(self, case: Transcript, profile: str, document: dict[str, Any]) -> CaseRecord:
        key = repr(document.get("rules"))
        if key not in self.encoded:
            self.encoded[key] = json.dumps(document, separators=(",", ":"))
        state = json.dumps({**DEFAULT_MATCH_STATE, **(case.match or {})}, separators=(",", ":"))
        lines = ['{"cmd":"start","seq":0,"version":1}\n',
                 f'{{"cmd":"match","seq":0,"profile":{json.dumps(profile)},"state":{state},"document":{self.encoded[key]}}}\n']
        for deal in case.deals:
            lines.append(json.dumps({"cmd": "deal", "seq": 0, "dealer": deal["dealer"], "hands": deal["hands"],
                                     "talon": deal["talon"]}, separators=(",", ":")) + "\n")
            lines.append('{"cmd":"state","seq":0}\n')
            for step in deal["steps"]:
                lines += ['{"cmd":"legal","seq":0}\n', json.dumps({"cmd": "apply", "seq": 0, "action": step["action"]}) + "\n",
                          '{"cmd":"state","seq":0}\n']
        try:
            replies = self._exchange(lines)
        except (ProtocolFailure, ValueError) as exc:
            self._kill()
            return CaseRecord(case.id, (), f"error: {exc}")
        return _record_from_replies(case, replies[2:], "errored" in replies[1] and str(replies[1]["errored"]))


def _record_from_replies(case: Transcript, replies: list[dict[str, Any]], match_error: str | bool) -> CaseRecord:
    """A case's record from the replies to [deal, state] + [legal, apply, state] per step."""
    if match_error:
        return CaseRecord(case.id, (), f"error: match: {match_error}")
    steps: list[StepRecord] = []
    position = 0
    for number, deal in enumerate(case.deals, start=1):
        chunk = replies[position:position + 2]
        position += 2
        if any("errored" in reply for reply in chunk):
            return CaseRecord(case.id, tuple(steps), f"error: {chunk}")
        steps.append(StepRecord(number, 0, None, None, _reply(chunk[0]), chunk[1].get("state") or {}))
        for index, scripted in enumerate(deal["steps"], start=1):
            legal_reply, apply_reply, state_reply = replies[position:position + 3]
            position += 3
            if any("errored" in reply for reply in (legal_reply, apply_reply, state_reply)):
                return CaseRecord(case.id, tuple(steps), f"error: {apply_reply}")
            actions = legal_reply.get("actions") or []
            reply = _reply(apply_reply)
            steps.append(StepRecord(number, index, scripted["action"], tuple(sorted(actions)), reply,
                                    state_reply.get("state") or {}))
            if reply.accepted == ("refused" in scripted):
                return CaseRecord(case.id, tuple(steps), "left_transcript")
    return CaseRecord(case.id, tuple(steps))


def _reply(reply: dict[str, Any]) -> Reply:
    if reply.get("ok") is False:
        refusal = reply.get("refusal")
        if isinstance(refusal, dict):
            return Reply(False, (), (str(refusal.get("class")), str(refusal.get("reason"))))
        return Reply(False, (), ("?", "?"))
    events = reply.get("events")
    return Reply(True, tuple(events) if isinstance(events, list) else ())


# --- comparing two records ---------------------------------------------------------------

def action_shape(action: str) -> str:
    """An action without its cards and amounts: ``bid``, ``play marriage``, ``give_up``."""
    words = action.split()
    if not words:
        return "''"
    return " ".join([words[0], *words[2:]]) if words[0] == "play" else words[0]


def _event_key(event: Any) -> str:
    if not isinstance(event, dict):
        return repr(event)
    reason = event.get("reason")
    return f"{event.get('type')}({reason})" if reason else str(event.get("type"))


def _state_details(expected: dict[str, Any], actual: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Differing state fields; a mapping or a list of mappings is named down to its keys."""
    found = []
    for key in sorted(set(expected) | set(actual)):
        want, got = expected.get(key, "<missing>"), actual.get(key, "<missing>")
        if equal(want, got):
            continue
        inner = _inner_keys(want, got)
        found += [(f"state.{key}.{name}" if name else f"state.{key}", want, got) for name in inner or [""]]
    return found


def _inner_keys(want: Any, got: Any) -> list[str]:
    rows = (want, got) if isinstance(want, list) and isinstance(got, list) else ([want], [got])
    if not all(isinstance(item, dict) for row in rows for item in row) or len(rows[0]) != len(rows[1]):
        return []
    return sorted({k for a, b in zip(*rows) for k in set(a) | set(b) if not equal(a.get(k), b.get(k))})


def _legal_details(expected: tuple[str, ...], actual: tuple[str, ...]) -> list[str]:
    missing = collections.Counter(action_shape(a) for a in set(expected) - set(actual))
    unexpected = collections.Counter(action_shape(a) for a in set(actual) - set(expected))
    return [f"missing {shape}" for shape in sorted(missing)] + [f"unexpected {shape}" for shape in sorted(unexpected)]


def _reply_details(expected: Reply, actual: Reply) -> tuple[str, list[str]]:
    """('refusal', details) when acceptance or the reason differ, else ('event', details)."""
    def said(reply: Reply) -> str:
        return "accepted" if reply.accepted else "/".join(reply.refusal or ("?", "?"))

    if expected.accepted != actual.accepted or expected.refusal != actual.refusal:
        return "refusal", [f"{said(expected)} vs {said(actual)}"]
    want = collections.Counter(_event_key(e) for e in expected.events)
    got = collections.Counter(_event_key(e) for e in actual.events)
    details = [f"missing {k}" for k in sorted(want - got)] + [f"unexpected {k}" for k in sorted(got - want)]
    if not details:
        for a, b in zip(expected.events, actual.events):
            if isinstance(a, dict) and isinstance(b, dict) and not equal(a, b):
                fields = sorted(k for k in set(a) | set(b) if not equal(a.get(k), b.get(k)))
                details.append(f"{_event_key(a)} differs in {', '.join(fields)}")
    return "event", sorted(set(details))


def compare(expected: CaseRecord, actual: CaseRecord) -> list[Difference]:
    """Every difference between the oracle's record and the implementation's, in order."""
    found: list[Difference] = []
    phase = "deal"
    before: dict[str, Any] | None = None
    for want, got in zip(expected.steps, actual.steps):
        phase = "deal" if want.step == 0 else phase

        def add(kind: str, detail: str, wanted: Any, seen: Any) -> None:
            found.append(Difference(expected.case_id, want.deal, want.step, want.action, kind, phase, detail, wanted, seen,
                                    before))

        if want.legal is not None and got.legal is not None and want.legal != got.legal:
            for detail in _legal_details(want.legal, got.legal):
                add("legal", detail, list(want.legal), list(got.legal))
        kind, details = _reply_details(want.reply, got.reply)
        for detail in details:
            add(kind, detail, _said(want.reply), _said(got.reply))
        for name, wanted, seen in _state_details(want.state, got.state):
            add("state", name, wanted, seen)
        phase = str(want.state.get("phase", phase))
        before = want.state
    if len(expected.steps) != len(actual.steps) or expected.broken or actual.broken:
        if expected.ended != actual.ended or len(expected.steps) != len(actual.steps):
            last = (expected.steps or actual.steps or (None,))[-1]
            found.append(Difference(expected.case_id, last.deal if last else 0, last.step if last else 0,
                                    last.action if last else None, "record", phase,
                                    f"ends {_ending(expected)} vs {_ending(actual)}", expected.ended, actual.ended))
    return found


def _ending(record: CaseRecord) -> str:
    return record.ended.split(":")[0]


def _said(reply: Reply) -> Any:
    return {"events": list(reply.events)} if reply.accepted else {"refused": list(reply.refusal or ())}


def findings(differences: Iterable[Difference]) -> list[dict[str, Any]]:
    """The differences as the runner's findings: the same signatures and knobs
    (``conformance.diagnosis``), so that what fit leaves unexplained groups into root causes
    exactly as ``thousand verify`` groups its failures. One finding per check of a step."""
    found: dict[tuple[int, int, str], dict[str, Any]] = {}
    for d in differences:
        signature, direct, upstream = _diagnosed(d)
        key = (d.deal, d.step, signature)
        if key not in found:
            message = f"{d.at}: reference {_brief(d.expected)}, implementation {_brief(d.actual)}"
            found[key] = {"signature": signature, "knobs": list(direct), "upstream": list(upstream),
                          "message": message, "deal": d.deal, "step": d.step, "action": d.action}
    return list(found.values())


def _diagnosed(d: Difference) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(signature, direct knobs, upstream knobs) of one difference, as the runner names them."""
    if d.kind == "legal":
        signature, knobs = diagnosis.legal_finding(d.phase, d.expected, d.actual, d.before)
        return signature, knobs, ()
    if d.kind == "refusal":
        want, got = _refused(d.expected), _refused(d.actual)
        word = (d.action or "").split(" ", 1)[0]
        if want is None and got is not None:
            return (f"refused[{d.phase}]: the transcript's {word} ({got})",
                    *(diagnosis.decided("refused", got) if diagnosis.knobs_for("refused", got) else diagnosis.decided("refusal", got)))
        expected = want or "?"
        return (f"refusal[{d.phase}]: expected {expected}, {'accepted' if got is None else 'got ' + got}",
                *diagnosis.decided("refusal", expected))
    if d.kind == "event":
        wanted = list((d.expected or {}).get("events") or [])
        sent = list((d.actual or {}).get("events") or [])
        missing = unmatched_event(wanted, sent)
        if missing is not None:
            return diagnosis.event_finding(d.phase, wanted[missing], sent, same)
        extra: Any = next((e for e in sent if not any(equal(e, w) for w in wanted)), {})
        kind = str(extra.get("type")) if isinstance(extra, dict) else "?"
        return f"event[{d.phase}] unexpected {diagnosis.event_label(extra)}", *diagnosis.decided("event", kind)
    if d.kind == "state":
        name = d.detail.split(".")[1] if d.detail.count(".") else d.detail
        return f"state.{name}", *diagnosis.decided("state", name)
    return d.signature, (), ()  # the record ended otherwise: no knob decides a broken reply


def _brief(value: Any, limit: int = 100) -> str:
    text = json.dumps(value, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def _refused(said: Any) -> str | None:
    """The reason of a refusal as ``_said`` writes it, or None when the action was accepted."""
    refused = said.get("refused") if isinstance(said, dict) else None
    return str(refused[1]) if isinstance(refused, list) and len(refused) > 1 else None


def signatures(differences: Iterable[Difference]) -> tuple[str, ...]:
    """The distinct signatures, in order of first appearance (one root cause shows at many steps)."""
    return tuple(dict.fromkeys(d.signature for d in differences))


# --- running many cases on several processes ---------------------------------------------

Item = TypeVar("Item")
Out = TypeVar("Out")


class Pool:
    """``jobs`` observers of one command, reused across calls (no restart per candidate)."""

    def __init__(self, command: Sequence[str] = REFERENCE_COMMAND, jobs: int = 1, timeout: float = 10.0,
                 batch: bool = False) -> None:
        kind = BatchObserver if batch else Observer  # batch: only for the trusted reference
        self.observers = [kind(command, timeout) for _ in range(max(1, jobs))]

    def map(self, items: Sequence[Item], work: Callable[[Observer, Item], Out],
            progress: Callable[[], None] | None = None) -> list[Out]:
        """``work(observer, item)`` for every item, in parallel; results in item order."""
        results: dict[int, Out] = {}
        pending = list(enumerate(items))
        lock = threading.Lock()
        failure: list[BaseException] = []

        def run(observer: Observer) -> None:
            while True:
                with lock:
                    if not pending or failure:
                        return
                    index, item = pending.pop(0)
                try:
                    value = work(observer, item)
                except BaseException as exc:  # re-raised in the caller's thread
                    with lock:
                        failure.append(exc)
                    return
                with lock:
                    results[index] = value
                if progress:
                    progress()

        if len(self.observers) == 1 or len(items) < 2:
            run(self.observers[0])
        else:
            threads = [threading.Thread(target=run, args=(o,), daemon=True) for o in self.observers]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        if failure:
            raise failure[0]
        return [results[i] for i in range(len(items))]

    def close(self) -> None:
        for observer in self.observers:
            observer.close()
