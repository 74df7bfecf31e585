"""Run conformance transcripts against an implementation through protocol v1.

Each (case, profile) pair gets one outcome, kept apart as toml-test does:

- ``pass``; ``fail``: a wrong answer (legal set, refusal, event, state field, player to act);
- ``error``: crash, bad JSON, a reply that breaks the protocol, wrong seq, closed output, an
  ``errored`` reply; ``timeout``: no reply in time;
- ``skipped``: the implementation does not play the profile, or replied ``skipped``;
- ``case_bug``: the transcript itself is wrong (or its profile cannot be resolved).

The runner never sends an expected value: it sends actions and asks for legal sets and state.
"""

from __future__ import annotations

import fnmatch
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from conformance import schemas
from conformance.process import Implementation, Preencoded, ProtocolFailure
from conformance.transcripts import CaseBug, Transcript, refusal_class

OUTCOMES = ("pass", "fail", "error", "timeout", "skipped", "case_bug")
REFERENCE_COMMAND = (sys.executable, "-m", "reference_impl.server")
TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP = 5  # per worker
START_FAILURES_BEFORE_GIVING_UP = 3
DEFAULT_MATCH_STATE: dict[str, Any] = {
    "scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
    "barrel": [{"on": False, "attempts": 0, "failed_visits": 0} for _ in range(3)],
}
# The field each ordinary reply must carry, checked even without --validate-messages.
_REPLY_FIELD: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "start": ("profiles", (str, list)), "match": ("ok", bool), "deal": ("ok", bool),
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
        return data


class Mismatch(Exception):
    """A wrong answer: what was checked, what was expected, what came."""

    def __init__(self, check: str, expected: Any, actual: Any, message: str) -> None:
        super().__init__(message)
        self.check, self.expected, self.actual = check, expected, actual
        self.details: dict[str, Any] = {}


class SkippedByImplementation(Exception):
    pass


class CaseBugError(Exception):
    pass


# --- comparison -----------------------------------------------------------------------

def same(expected: Any, actual: Any) -> bool:
    """Expected matches actual: numbers by value (60 == 60.0), never a bool for a number,
    lists item by item, mappings on the expected keys only."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            same(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and same(v, actual[k]) for k, v in expected.items())
    return type(expected) is type(actual) and expected == actual


def equal(one: Any, other: Any) -> bool:
    """Full equality under the same number rules (both directions for mappings)."""
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


class Worker:
    """Runs cases one after the other on one persistent implementation process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.impl: Implementation | None = None
        self.start_reply: dict[str, Any] | None = None
        self.start_failures = 0
        self.timeouts_in_a_row = 0
        self.documents: dict[str, Preencoded] = {}  # serialized once per profile
        self._lock = threading.Lock()

    # --- process ---

    def _ensure_started(self) -> Implementation:
        if self.impl is not None:
            return self.impl
        if self.start_failures >= START_FAILURES_BEFORE_GIVING_UP:
            raise ProtocolFailure(f"the implementation failed to start {self.start_failures} times; not retried")
        on_message = self._validate if self.settings.validate_messages else None
        impl = Implementation(self.settings.command, self.settings.timeout, on_message)
        with self._lock:
            self.impl = impl
        try:
            reply = self._ask("start", version=1)
            if reply.get("version") != 1:
                raise ProtocolFailure(f"start: the implementation speaks version {reply.get('version')!r}; expected 1")
        except (ProtocolFailure, SkippedByImplementation) as exc:
            self.start_failures += 1
            kind = type(exc) if isinstance(exc, ProtocolFailure) else ProtocolFailure
            raise kind(f"start failed: {exc}") from None
        self.start_failures = 0
        self.start_reply = reply
        return impl

    def discard(self) -> None:
        """Kill the process (after an error, a timeout or at the end)."""
        with self._lock:
            impl, self.impl = self.impl, None
        if impl is not None:
            impl.kill()

    def close(self) -> None:
        with self._lock:
            impl, self.impl = self.impl, None
        if impl is not None:
            impl.stop()

    def _validate(self, direction: str, command: str, message: dict[str, Any]) -> None:
        if direction == "command":
            problem = schemas.first_problem(schemas.command_validator(command), message)
            if problem:
                raise CaseBugError(f"the runner would send an invalid {command!r} command: {problem}")
            return
        problem = schemas.reply_problem(command, message)
        if problem:
            raise ProtocolFailure(f"reply to {command!r} does not match spec/schema/protocol/{command}.reply.json: {problem}")

    def _ask(self, command: str, **fields: Any) -> dict[str, Any]:
        impl = self.impl
        assert impl is not None
        reply = impl.request(command, **fields)
        if "skipped" in reply:
            reason = reply["skipped"].get("reason", "") if isinstance(reply["skipped"], dict) else reply["skipped"]
            raise SkippedByImplementation(f"{command}: {reason}")
        if "errored" in reply:
            message = reply["errored"].get("message", "") if isinstance(reply["errored"], dict) else reply["errored"]
            raise ProtocolFailure(f"the implementation reported an error on {command!r}: {message}")
        key, kind = _REPLY_FIELD[command]
        if not isinstance(reply.get(key), kind):
            raise ProtocolFailure(f"reply to {command!r} lacks {key!r} of the right type: {_short(reply)}")
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
        try:
            self._ensure_started()
            CaseRun(self, case, profile).play()
        except SkippedByImplementation as exc:
            result.outcome, result.message = "skipped", str(exc)
        except CaseBugError as exc:
            result.outcome, result.message = "case_bug", str(exc)
        except Mismatch as exc:
            result.outcome, result.message = "fail", str(exc)
            result.details = dict(exc.details)
            result.details.update({"check": exc.check, "expected": exc.expected, "actual": exc.actual})
            result.stderr_tail = self._stderr_tail()
        except ProtocolFailure as exc:
            result.outcome, result.message = exc.outcome, str(exc)
            result.details = dict(exc.details)
            result.stderr_tail = self._stderr_tail()
            self.discard()  # the stream cannot be trusted any more: restart for the next case
        self.timeouts_in_a_row = self.timeouts_in_a_row + 1 if result.outcome == "timeout" else 0
        result.seconds = time.monotonic() - started
        return result

    def _stderr_tail(self) -> str:
        impl = self.impl
        return impl.stderr_tail() if impl is not None else ""


class CaseRun:
    """The requests of one case under one profile, and the checks on their replies."""

    def __init__(self, worker: Worker, case: Transcript, profile: str) -> None:
        self.worker, self.case, self.profile = worker, case, profile
        self.position: dict[str, Any] = {}
        self.known_state: dict[str, Any] | None = None  # the state now, when already asked

    def play(self) -> None:
        self._start_match()
        for number, deal in enumerate(self.case.deals, start=1):
            self.position = {"deal": number}
            try:
                self._play_deal(deal, number)
            except (Mismatch, ProtocolFailure) as exc:
                exc.details = {**self.position, **exc.details}
                if isinstance(exc, Mismatch) and "state_before" not in exc.details:
                    exc.details["state_before"] = self._state_before_failure()
                raise

    def _start_match(self) -> None:
        worker = self.worker
        assert worker.start_reply is not None
        offered = worker.start_reply["profiles"]
        fields: dict[str, Any] = {"profile": self.profile, "state": self._match_state()}
        if offered == "any":
            fields["document"] = self._document()
        elif self.profile not in offered:
            raise SkippedByImplementation(f"the implementation does not play profile {self.profile!r}")
        worker._ask("match", **fields)
        self.known_state = None

    def _document(self) -> Preencoded:
        documents = self.worker.documents
        if self.profile not in documents:
            if self.worker.settings.document is None:
                raise CaseBugError("no profile resolver is available to send the profile document")
            try:
                documents[self.profile] = Preencoded(self.worker.settings.document(self.profile))
            except Exception as exc:  # any resolver error means the case names a bad profile
                raise CaseBugError(f"profile {self.profile!r} cannot be resolved: {exc}") from None
        return documents[self.profile]

    def _match_state(self) -> dict[str, Any]:
        state = {key: value for key, value in DEFAULT_MATCH_STATE.items()}
        state.update(self.case.match or {})
        return state

    def _play_deal(self, deal: dict[str, Any], number: int) -> None:
        reply = self.worker._ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
        self.known_state = None
        if not reply["ok"]:
            raise ProtocolFailure(f"deal {number}: the implementation refused the deal: {_short(reply)}")
        self._check_events(deal.get("events"), reply.get("events"), "deal")
        for index, step in enumerate(deal["steps"], start=1):
            self.position = {"deal": number, "step": index, "action": step["action"]}
            self._play_step(step)
        if deal.get("expect"):
            self.position = {"deal": number, "step": "end of deal"}
            self._check_state(deal["expect"])

    def _state(self) -> dict[str, Any]:
        if self.known_state is None:
            self.known_state = self.worker._ask("state")["state"]
        return self.known_state

    def _play_step(self, step: dict[str, Any]) -> None:
        before: dict[str, Any] | None = None
        if "player" in step or "refused" in step:
            before = self._state()
            if "player" in step and not same(step["player"], before.get("to_act")):
                raise self._mismatch("player", step["player"], before.get("to_act"),
                                     f"expected player {step['player']} to act; the implementation has {before.get('to_act')!r}", before)
        if "legal" in step:
            actions = self.worker._ask("legal")["actions"]
            if not all(isinstance(a, str) for a in actions) or set(actions) != set(step["legal"]):
                raise self._legal_mismatch(step["legal"], actions, before)
        reply = self.worker._ask("apply", action=step["action"])
        if "refused" in step:
            self._check_refusal(step, reply, before)
            return
        self.known_state = None
        if not reply["ok"]:
            raise self._mismatch("accepted", "accepted", reply.get("refusal"),
                                 f"{step['action']!r} was refused: {_refusal_text(reply.get('refusal'))}", before)
        self._check_events(step.get("events"), reply.get("events"), "action", before)
        if step.get("expect"):
            self._check_state(step["expect"], before)

    def _check_refusal(self, step: dict[str, Any], reply: dict[str, Any], before: dict[str, Any] | None) -> None:
        reason = step["refused"]
        wanted = {"class": refusal_class(reason), "reason": reason}
        if reply["ok"]:
            self.known_state = None
            raise self._mismatch("refusal", wanted, {"accepted": True, "events": reply.get("events")},
                                 f"{step['action']!r} must be refused ({reason}); it was accepted", before)
        refusal = reply.get("refusal")
        if not isinstance(refusal, dict) or not same(wanted, refusal):
            raise self._mismatch("refusal", wanted, refusal,
                                 f"{step['action']!r} must be refused as {wanted['class']}/{reason}; got {_refusal_text(refusal)}", before)
        self.known_state = None
        after = self._state()
        if before is not None and not equal(before, after):
            changed = sorted(k for k in set(before) | set(after) if not equal(before.get(k), after.get(k)))
            raise self._mismatch("unchanged", {k: before.get(k) for k in changed}, {k: after.get(k) for k in changed},
                                 f"the refused {step['action']!r} changed the state: {', '.join(changed)}", before)

    def _check_events(self, expected: list[dict[str, Any]] | None, actual: Any, where: str,
                      before: dict[str, Any] | None = None) -> None:
        if not expected:
            return
        actual = actual if isinstance(actual, list) else []
        missing = unmatched_event(expected, actual)
        if missing is not None:
            raise self._mismatch("events", expected, actual,
                                 f"expected event {_short(expected[missing])} (in order) not among the {where}'s events", before)

    def _check_state(self, expected: dict[str, Any], before: dict[str, Any] | None = None) -> None:
        actual = self._state()
        differences = state_differences(expected, actual)
        if differences:
            names = ", ".join(differences)
            raise self._mismatch("state", {k: v["expected"] for k, v in differences.items()},
                                 {k: v["actual"] for k, v in differences.items()}, f"state differs in {names}", before)

    def _legal_mismatch(self, expected: list[str], actual: list[Any], before: dict[str, Any] | None) -> Mismatch:
        wanted, got = set(expected), {a for a in actual if isinstance(a, str)}
        detail = {"missing": sorted(wanted - got), "unexpected": sorted(got - wanted)}
        error = self._mismatch("legal", sorted(wanted), sorted(got),
                               f"legal actions differ: missing {detail['missing']}, unexpected {detail['unexpected']}", before)
        error.details.update(detail)
        return error

    def _mismatch(self, check: str, expected: Any, actual: Any, message: str, before: dict[str, Any] | None = None) -> Mismatch:
        error = Mismatch(check, expected, actual, message)
        if before is not None:
            error.details["state_before"] = before
        return error

    def _state_before_failure(self) -> dict[str, Any] | None:
        """The state before the failing step, found by replaying the case up to it.

        Asking for the state before every step would double the requests of every passing
        case; a failure is rare, so it pays for a replay instead.
        """
        deal_number, step_number = self.position.get("deal"), self.position.get("step")
        if not isinstance(step_number, int) or not isinstance(deal_number, int):
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
        except (SkippedByImplementation, CaseBugError):
            return None


def _refusal_text(refusal: Any) -> str:
    if isinstance(refusal, dict):
        return f"{refusal.get('class')}/{refusal.get('reason')}" + (f" ({refusal['message']})" if refusal.get("message") else "")
    return repr(refusal)


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


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


def run_jobs(jobs: Sequence[Job], settings: Settings, jobs_count: int = 1, state: RunState | None = None,
             progress: Callable[[Result], None] | None = None) -> RunState:
    """Run every job on ``jobs_count`` implementation processes; returns the results.

    A KeyboardInterrupt stops the workers, kills the implementations and propagates, with
    ``state`` holding the results of the finished cases.
    """
    state = state or RunState()
    pending = list(jobs)
    lock = threading.Lock()
    stop = threading.Event()
    workers = [Worker(settings) for _ in range(max(1, jobs_count))]

    def take() -> Job | None:
        with lock:
            return pending.pop(0) if pending and not stop.is_set() else None

    def work(worker: Worker) -> None:
        try:
            while (job := take()) is not None:
                result = _run_job(worker, job)
                if stop.is_set():
                    return  # killed mid-case by an interruption: not a real outcome
                with lock:
                    state.results[job.index] = result
                    if state.start_reply is None and worker.start_reply is not None:
                        state.start_reply = worker.start_reply
                if progress:
                    progress(result)
        finally:
            if not stop.is_set():
                worker.close()

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
    return state


def _run_job(worker: Worker, job: Job) -> Result:
    case = job.case
    if isinstance(case, CaseBug):
        return Result(case.id, case.title, job.profile, "case_bug", message=case.message, knobs=case.knobs)
    return worker.run(case, job.profile)
