"""Lockstep observation: everything an implementation shows while it plays a transcript's actions.

``thousand fit``, ``thousand fuzz`` and ``thousand verify --rules`` never compare an
implementation with a transcript's expected values: they compare it with the reference
playing the same actions under given rules. An observation record holds, for every step,
the legal set before the action, the reply (accepted with its events, or refused with
class and reason) and the state after it; ``compare`` turns two records into findings
(``conformance.harness.findings.Finding``) as it observes them, and ``findings`` names them
as the runner names a failed check (kind, phase, a normalised difference): one signature
that groups root causes.

A record continues after a difference as long as the implementation accepts (or refuses)
the transcript's actions as the transcript expects: the first action whose acceptance
differs is recorded, and ends the record, because the game has left the transcript's path.
"""

from __future__ import annotations

import bisect
import collections
import gc
import hashlib
import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Container, Iterable, Iterator, NamedTuple, Sequence, TypeVar

from conformance.harness import derive, diagnosis
from conformance.harness.findings import Finding, Observed
from conformance.oracle import batch, expectation
from conformance.harness.process import Answer, CannotStart, Implementation, Posted, Preencoded, ProtocolFailure, Timeout
from conformance.harness.runner import (DEFAULT_MATCH_STATE, REFERENCE_COMMAND, START_FAILURES_BEFORE_GIVING_UP,
                                        TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP, _too_deep, clip_value,
                                        equal, identical, match_name, same, unmatched_event)
from conformance.harness.session import DECLARATIONS, Declarations, Errored, Session, Skipped, judge
from conformance.corpus.transcripts import Transcript, written_reasons

# Every observable state field changes under some knob; none is left out of the comparison.

Request = tuple[str, dict[str, Any]]  # (command, fields) of one protocol request
# A bound on time, not memory (what is kept of a long line is bounded by KEPT_VALUE): decoding a
# GiB of JSON takes seconds, and an engine that sends more (6 MB at every state) is given up on.
LARGE_REPLIES_READ = 1024 * 1024 * 1024  # bytes of replies over LARGE_LINE a run reads (see ReplyBudget)
LARGE_LINE = 16 * 1024  # a reply line longer than this is charged to the budget (the reference's longest are a few KiB)
KEPT_VALUE = 4 * 1024  # characters of JSON kept of one value of a long line; more stands in as its size and digest


@dataclass(frozen=True)
class Reply:
    """The answer to one action (or to the ``deal`` request itself)."""

    accepted: bool
    events: tuple[Any, ...] = ()
    refusal: tuple[str, str] | None = None  # (class, reason); None when refused without a reason
    # the other reasons that apply (the reference's ``reasons``, DESIGN.md "Reason codes"):
    # a refusal for any one of them is the same answer
    also: tuple[str, ...] = ()

    def without_reason(self) -> Reply:
        """The reply as an implementation that cannot tell why it refuses gives it."""
        return self if self.accepted else Reply(False)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Every reason that applies: the one given first, then the others."""
        return () if self.refusal is None else (self.refusal[1], *self.also)

    def refused(self) -> str | list[str]:
        """The refusal as a transcript's ``refused`` writes it: the reason, or every reason that applies."""
        return written_reasons(self.reasons or ("",))

    def agrees(self, other: Reply) -> bool:
        """Does ``other`` (the implementation's) refuse as this reply (the reference's) does: the
        same class, and its reason one of those that apply here. Only the reference's list
        counts: an implementation that lists reasons of its own (the reference under house
        rules, checked against other rules) still names first the one it refuses for, and a
        reason that does not apply under the rules compared is a difference (a bid refused as
        above a maximum of 300 where rules with a maximum of 400 refuse it only as a jump)."""
        if self.refusal == other.refusal:
            return True
        if self.refusal is None or other.refusal is None or self.refusal[0] != other.refusal[0]:
            return False
        return other.refusal[1] in self.reasons


@dataclass(frozen=True)
class StepRecord:
    """One step: ``step`` 0 is the deal itself (no action, no legal set)."""

    deal: int
    step: int
    action: str | None
    legal: tuple[str, ...] | None
    reply: Reply
    state: dict[str, Any]
    # The state fields that may differ from the step before's in the same record (None: any):
    # ``compare`` looks only at those again, and carries the verdicts of the others over
    changed: frozenset[str] | None = field(default=None, compare=False)


KNOWN = "known"  # how a record ends that was not read again: the caller holds it (``Observer.observe``)


@dataclass(frozen=True)
class CaseRecord:
    """What one implementation showed on one case, and why the record ends where it does."""

    case_id: str
    steps: tuple[StepRecord, ...]
    ended: str = "complete"  # complete | left_transcript | error: ... | skipped: ... | known | enough (expectation.ENOUGH)
    # A digest of the one reply the whole record was read from (the reference's batch), or
    # empty: two records of one case with the same source are the same record, which fit,
    # replaying a case under rules that do not touch it, need not weigh again
    source: bytes = field(default=b"", compare=False)

    @property
    def broken(self) -> bool:
        """The record ended on a protocol failure or a skip, not on a game difference."""
        return self.ended.startswith(("error", "skipped"))


# id of a record replays are weighed against -> (the record, its expectation or None)
Expectations = dict[int, tuple[CaseRecord, expectation.Expectation | None]]


def observed(case_id: str, deal: int, step: int, action: str | None, kind: Observed, phase: str, detail: str,
             expected: Any = None, actual: Any = None, before: Any = None) -> Finding:
    """One observation where two records disagree, as ``compare`` reads it: an unnamed finding
    (``findings`` names it) of kind legal, refusal, event, state or record, the phase before the
    step, the raw ``detail``; ``expected`` is the oracle's value, ``before`` its state before the step."""
    return Finding(kind, phase, "", expected=expected, actual=actual,
                   where={"case_id": case_id, "deal": deal, "step": step, "action": action}, detail=detail, before=before)


# --- one implementation process, observed ------------------------------------------------

class Replay(NamedTuple):
    """What ``Observer.observe`` is asked for one case (see there)."""

    case: Transcript
    profile: str
    document: dict[str, Any]
    known: Container[bytes] = ()
    expected: CaseRecord | None = None


class _Flight(NamedTuple):
    """The batch of a whole case, written to the trusted reference, its reply still unread."""

    replay: Replay
    wanted: expectation.Expectation | None  # the expectation it names
    impl: Implementation  # the process it went to
    forgotten: int  # ``batch.forgotten`` of that process when it was built
    match: Request
    named: dict[str, Any] | None  # the fields naming the expectation (``expectation.named``)
    posted: Posted


@dataclass
class _Waiting:
    """A case ``Observer.replays`` has taken: its place in the caller's list, what is asked,
    and its batch once written (None: not written, or set aside to be written again)."""

    index: int
    replay: Replay
    flight: _Flight | None = None


# Cases whose batch is written to the reference before the oldest one's reply is read
# (``Observer.replays``): the reference plays the next case while its last reply is read
# into a record, which on two cores takes the greater of the two times instead of their sum.
IN_FLIGHT = 3


MAX_DOCUMENTS_BY_IDENTITY = 1024  # document objects remembered by identity (fit passes one per variant tried)


class Observer:
    """Plays cases on one persistent process; a protocol failure restarts it for the next case."""

    def __init__(self, command: Sequence[str], timeout: float = 10.0, budget: ReplyBudget | None = None,
                 fallbacks: Sequence[str] = (), expectations: Expectations | None = None) -> None:
        self.command = list(command)
        self.timeout = timeout
        self.budget = budget or ReplyBudget()  # what the run may keep of large replies (shared by a Pool)
        # the expectations written for the records replays are weighed against (shared by a Pool)
        self.expectations: Expectations = expectations if expectations is not None else {}
        self.fallbacks = tuple(fallbacks)  # what a match names when a declared list lacks the profile
        self.timeouts_in_a_row = 0  # as the runner: an implementation that hangs on every case is given up
        self.start_failures = 0
        self.cannot_start: CannotStart | None = None
        self.ever_started = False
        self.impl: Session | None = None
        self.offered: Any = None
        self.reasons = True  # False: its refusals carry no reason (refusal_reasons: false in start)
        self.name = ""  # the implementation's name from its start reply
        self.batch = False  # it declares the batch extension: a case goes in one request
        self.expects = False  # it declares expectations: a batch may name the replies expected
        self.start_reply: dict[str, Any] = {}
        self.documents: dict[str, Preencoded] = {}
        self._by_identity: dict[int, tuple[dict[str, Any], Preencoded]] = {}
        self._launched: Session | None = None  # started, start reply unread
        self.declarations: Declarations | None = None
        # queries whose ``skipped`` reply ``collect`` and ``batched`` return unjudged, for the
        # caller to count unchecked (fuzz: ``legal`` and ``state``, which change nothing, so the
        # game goes on); fit reads its steps through ``_replies``, where a legal set alone is
        self.unshown_queries: frozenset[str] = frozenset()
        # the cases ``replays`` has taken and not given back yet, the one being read first
        self._ahead: collections.deque[_Waiting] = collections.deque()

    def launch(self) -> None:
        """Start the process and send ``start`` without waiting for its reply, so that several
        processes load at the same time (the reply is read by the first request)."""
        if self.impl is None and self._launched is None:
            if self.cannot_start is not None:
                raise CannotStart(str(self.cannot_start))
            if self.start_failures >= START_FAILURES_BEFORE_GIVING_UP:
                raise ProtocolFailure(f"the implementation failed to start {self.start_failures} times; not retried")
            if self.timeouts_in_a_row >= TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP:
                raise Timeout(f"not run: the implementation timed out on {TIMEOUTS_IN_A_ROW_BEFORE_GIVING_UP} cases in a row")
            try:
                impl = Session(self.command, self.timeout)  # as the runner: slow loaders get START_GRACE
            except CannotStart as exc:
                self.cannot_start = exc  # no such file: trying again cannot help
                raise
            impl.begin()
            self._launched = impl

    def _started(self) -> Session:
        if self.impl is None:
            self.launch()
            assert self._launched is not None
            impl, self._launched = self._launched, None
            try:
                declared = impl.started(self._kept)
            except (ProtocolFailure, Skipped) as exc:
                impl.kill()
                self.start_failures += 1
                raise CannotStart(f"start failed: {exc}") from None
            self.start_failures, self.ever_started = 0, True
            self.impl, self.offered = impl, declared.profiles
            self.declarations = declared
            self.reasons = declared.reasons
            self.start_reply = declared.reply
            self.name = declared.name
            # the session stands between the runner and an implementation that sends less: step by step
            self.batch = batch.offered(declared.reply) and not declared.viewing
            self.expects = self.batch and expectation.offered(declared.reply)
        return self.impl

    def kill(self) -> None:
        """Kill the process (a failed stream cannot be trusted); the next request starts another."""
        for impl in (self.impl, self._launched):
            if impl is not None:
                impl.kill()
        self.impl, self._launched = None, None

    def close(self) -> None:
        if self.impl is not None:
            self.impl.stop()
            self.impl = None
        self.kill()

    def _document(self, document: dict[str, Any]) -> Preencoded:
        """The document encoded once: by its rules' text, and for the very same object (the
        callers pass one document per profile for a whole run) without reading it again."""
        seen = self._by_identity.get(id(document))
        if seen is not None and seen[0] is document:
            return seen[1]
        key = repr(document.get("rules"))
        if key not in self.documents:
            self.documents[key] = Preencoded(document)
        if len(self._by_identity) < MAX_DOCUMENTS_BY_IDENTITY:
            self._by_identity[id(document)] = (document, self.documents[key])  # held: its id is not reused
        return self.documents[key]

    def post(self, requests: Sequence[Request]) -> list[Posted]:
        """Write requests at once (the process started if need be); ``collect`` reads the replies."""
        return self._started().post(requests)

    def collect(self, posted: Sequence[Posted], known: Sequence[Answer] = ()) -> list[Answer]:
        """The replies to ``post``-ed requests (``known``: see Implementation.collect). All are
        read before any is judged, so that the stream stays in step; then a ``skipped`` reply
        raises Skipped, an ``errored`` one ProtocolFailure."""
        if self.impl is None:
            raise ProtocolFailure("no process to read replies from")
        answers = [self._kept(item, answer) for item, answer in zip(posted, self.impl.collect(posted, known))]
        for item, answer in zip(posted, answers):
            if not (item.command in self.unshown_queries and "skipped" in answer.reply):
                _judge(item, answer)
        return answers

    def _kept(self, item: Posted, answer: Answer) -> Answer:
        """The answer with every value over KEPT_VALUE standing in as its size and digest (a
        60 KB or 6 MB string, a list nested 900 deep), and the run's budget for large replies
        charged; a line short and shallow enough to hold no such value is taken as it is (every
        reply of the reference)."""
        line = answer.line
        shallow = line.count(b"[") + line.count(b"{") < 100
        if len(line) <= LARGE_LINE and shallow:
            return answer
        if not self.budget.take(len(line)):
            raise ProtocolFailure(f"reply to {item.command!r}: the run already received {_mib(self.budget.total)} of "
                                  f"replies over {_mib(LARGE_LINE)}; no more are read")
        # a fit keeps what it observed of every case until its end: values kept whole up to the
        # runner's clip (64 KiB) at every step added up to gigabytes; a stand-in of a few hundred
        # bytes compares as the value does (equal digests for equal values) and no reference
        # value is that long, so nothing a comparison needs is lost
        return Answer(line, _clipped_reply(answer.reply, KEPT_VALUE))

    def trusted(self, command: str, **fields: Any) -> Answer:
        """One request's reply taken as it is, never clipped: for the reference only (a
        ``playout`` reply holds a whole deal); ``errored`` raises ProtocolFailure."""
        return self.collect_trusted(self.post([(command, fields)])[0])

    def collect_trusted(self, posted: Posted) -> Answer:
        """The reply to one posted request, taken as ``trusted`` takes it."""
        if self.impl is None:
            raise ProtocolFailure("no process to read replies from")
        answer = self.impl.collect([posted])[0]
        _check(posted.command, answer.reply)
        return answer

    def ask(self, command: str, **fields: Any) -> dict[str, Any]:
        return self.collect(self.post([(command, fields)]))[0].reply

    def match_request(self, profile: str, document: dict[str, Any], match: dict[str, Any] | None,
                      whole_state: bool = True) -> Request:
        """The ``match`` request (the process started, to learn what it plays); Skipped when
        the implementation does not play the profile. ``whole_state``: the match state in full,
        each field the case leaves out at its start value; else only the case's own fields, no
        ``state`` where it sets none (a match in a ``batch``: docs/protocol.md, Extensions)."""
        self._started()
        name = match_name(self.offered, profile, self.fallbacks)
        if name is None:
            raise Skipped("match", f"the implementation does not play profile {profile!r}")
        fields: dict[str, Any] = {"profile": name}
        if whole_state or match:
            fields["state"] = {**DEFAULT_MATCH_STATE, **(match or {})} if whole_state else match
        if self.offered in DECLARATIONS:
            fields["document"] = self._document(document)
        return ("match", fields)

    def told(self, reply: Reply) -> Reply:
        """The reply as far as this implementation can tell it (no reason when it cannot)."""
        return reply if self.reasons else reply.without_reason()

    def start_match(self, profile: str, document: dict[str, Any], match: dict[str, Any] | None) -> None:
        command, fields = self.match_request(profile, document, match)
        self.ask(command, **fields)

    whole_case = False  # post a case's requests step by step (the reference: all at once)
    trusted_replies = False  # the reference's batch replies are neither clipped nor bounded again

    def observe(self, case: Transcript, profile: str, document: dict[str, Any],
                known: Container[bytes] = (), expected: CaseRecord | None = None) -> CaseRecord:
        """The record of one case; never raises for what the implementation does. The
        requests of a step (legal, apply, state) are written at once. ``known``: the sources
        (``CaseRecord.source``) of records of this case the caller holds already; a reply
        with one of them is not read again, and its record comes back without steps, ended
        ``KNOWN``. ``expected``: the record this one will be weighed against (the trusted
        reference only, where it declares expectations): its replies are sent as the
        expectation of the case, and where the reference's are exactly those, the record
        takes them (the very step records where a whole step is as expected)."""
        return self._recorded(Replay(case, profile, document, known, expected))

    def _recorded(self, replay: Replay, flight: _Flight | None = None) -> CaseRecord:
        """The record of ``replay`` (``observe``); ``flight``: its batch, written already."""
        case, profile, document = replay.case, replay.profile, replay.document
        steps: list[StepRecord] = []
        ended = "complete"
        timed_out = False
        try:
            if flight is not None or (self.trusted_replies and self._started() is not None and self.batch):
                ended, source = self._whole_case(flight or self._flown(replay), steps)
                self.timeouts_in_a_row = 0
                return CaseRecord(case.id, tuple(steps), ended, source)
            # The requests in order, cut after each step: the next step is only sent once this
            # one's reply says the case goes on (or, whole_case, all at once).
            chunks: list[list[Request]] = [[self.match_request(profile, document, case.match)]]
            for deal in case.deals:
                chunks[-1] += [("deal", {"dealer": deal["dealer"], "hands": deal["hands"], "talon": deal["talon"]}),
                               ("state", {})]
                for step in deal["steps"]:
                    chunks[-1] += [("legal", {}), ("apply", {"action": step["action"]}), ("state", {})]
                    chunks.append([])
            if self.whole_case:
                chunks = [[request for chunk in chunks for request in chunk]]
            replies = self._replies(chunks)
            next(replies)  # match
            for number, deal in enumerate(case.deals, start=1):
                dealt, state = next(replies), next(replies)
                steps.append(StepRecord(number, 0, None, None, _reply(dealt), _state(state)))
                for index, scripted in enumerate(deal["steps"], start=1):
                    legal, applied, state = next(replies), next(replies), next(replies)
                    reply = self.told(_reply(applied))
                    shown = None if "skipped" in legal else _legal(legal)
                    steps.append(StepRecord(number, index, scripted["action"], shown, reply, _state(state)))
                    if reply.accepted == ("refused" in scripted):
                        self.timeouts_in_a_row = 0
                        return CaseRecord(case.id, tuple(steps), "left_transcript")
        except Skipped as exc:
            ended = f"skipped: {exc}"
        except ProtocolFailure as exc:
            ended = f"error: {exc}"
            timed_out = isinstance(exc, Timeout)
            if isinstance(exc, Errored) and self.trusted_replies and self.impl is not None:
                if exc.command == "match":  # the whole reply was read: only a document it was to keep is unsure
                    batch.forget(self.impl)
            else:
                self.kill()
            if isinstance(exc, CannotStart) and not self.ever_started:
                raise  # nothing could be observed at all: the caller stops (exit 4), as verify does
        self.timeouts_in_a_row = self.timeouts_in_a_row + 1 if timed_out else 0
        return CaseRecord(case.id, tuple(steps), ended)

    def replays(self, take: Callable[[], tuple[int, Replay] | None]) -> Iterator[tuple[int, CaseRecord]]:
        """(index, record) of each replay ``take`` hands out (until it hands out None), in its
        order, each record as ``observe`` makes it. The trusted reference with ``batch`` gets
        the batches of up to IN_FLIGHT cases before the oldest one's reply is read; when
        reading a reply makes the process go or forget what it holds, the batches written
        after it are read and set aside (``_ground``), and written again in their turn, so
        that each is asked exactly as ``observe`` would have asked it then."""
        ahead, taking = self._ahead, True
        try:
            while True:
                while taking and len(ahead) < IN_FLIGHT:
                    item = take()
                    if item is None:
                        taking = False
                    else:
                        ahead.append(_Waiting(*item))
                if not ahead:
                    return
                self._fly_ahead()
                first = ahead[0]
                record = self._recorded(first.replay, first.flight)
                if any(self._stale(waiting.flight) for waiting in list(ahead)[1:]):
                    self._ground()
                ahead.popleft()
                yield first.index, record
        finally:
            if any(waiting.flight is not None for waiting in ahead):  # unread (the caller stopped): out of step
                self.kill()
            ahead.clear()

    def _stale(self, flight: _Flight | None) -> bool:
        """Was this batch written to a process that is gone, or built on what its process held
        before it forgot it?"""
        return flight is not None and (flight.impl is not self.impl or batch.forgotten(flight.impl) != flight.forgotten)

    def _fly_ahead(self) -> None:
        """Write the batches of the cases taken and not written yet, in order, while the
        process runs (one started meanwhile takes the first of them by ``observe``)."""
        if self.impl is None or not (self.trusted_replies and self.batch):
            return
        for waiting in self._ahead:
            if waiting.flight is None:
                try:
                    waiting.flight = self._flown(waiting.replay)
                except Skipped:  # left to ``observe``, which records it in its turn
                    return

    def _ground(self) -> None:
        """The batches written after the one being read, read and set aside (the process
        answers every line it got, and the stream stays in step), to be written again in
        their turn: what they were built on is no longer known to hold. A failure to read
        them ends the process: the next case starts another."""
        alive = [waiting.flight.posted for waiting in list(self._ahead)[1:]
                 if waiting.flight is not None and waiting.flight.impl is self.impl]
        for waiting in list(self._ahead)[1:]:
            waiting.flight = None
        if alive and self.impl is not None:
            try:
                self.impl.collect(alive)
            except ProtocolFailure:
                self.kill()

    def _whole_case(self, flight: _Flight, steps: list[StepRecord]) -> tuple[str, bytes]:
        """The steps of a case from one ``batch`` of the trusted reference (``flight``, written),
        read from its replies list in one pass (``_CaseReading``), as ``observe`` reads them one
        by one from ``batched``. Returns how the record ends (complete, left_transcript, or
        enough: asked only as far as the expectation the batch named goes) and its source
        (``_source``); a source among the replay's ``known`` is not read into steps (``KNOWN``)."""
        case, wanted = flight.replay.case, flight.wanted
        answer = self._case_answer(flight)
        source = self._source(answer, wanted)
        if flight.replay.known and source in flight.replay.known:
            return KNOWN, source  # a source is only given to a record that ended so: this one ends the same
        reading = _CaseReading(case, answer.reply.get("replies"), wanted, None if self.reasons else self.told, steps)
        reading.taken(0, "match")
        plan = _plan(case)
        while len(steps) < len(plan.places):
            first = len(steps)
            if plan.places[first].start >= reading.asked:
                return expectation.ENOUGH, source
            steps += reading.met(plan) or (reading.step(plan.places[first]),)
            for at in range(first, len(steps)):  # a step whose action was taken otherwise than scripted ends the record
                if steps[at].reply.accepted == plan.places[at].refused:
                    del steps[at + 1:]
                    return "left_transcript", source
        return "complete", source

    def _expectation(self, case: Transcript, record: CaseRecord) -> expectation.Expectation | None:
        """The expectation of a case's replays from the record they are weighed against, written
        once per record (fit weighs every replay of a case against the same one) and kept as
        long as this observer (or its Pool)."""
        kept = self.expectations.get(id(record))
        if kept is not None and kept[0] is record:
            return kept[1]
        written = expectation.written(case.deals, batch.case_requests(case.deals), record)
        if len(self.expectations) < CASE_TEXTS_KEPT:
            self.expectations[id(record)] = (record, written)  # held: its id is not reused
        return written

    def _flown(self, replay: Replay) -> _Flight:
        """The batch of a whole case written to the process (its reply read by ``_case_answer``);
        Skipped when the implementation does not play the profile."""
        impl = self._started()
        wanted = (self._expectation(replay.case, replay.expected)
                  if replay.expected is not None and self.expects else None)
        # the state as the case sets it: the reference parses and loads no all-zero state per case
        match = self.match_request(replay.profile, replay.document, replay.case.match, whole_state=False)
        named = expectation.named(impl, wanted) if wanted is not None else None
        posted = impl.post([batch.case_request(impl, match, _plan(replay.case).tail, named)])[0]
        return _Flight(replay, wanted, impl, batch.forgotten(impl), match, named, posted)

    def _case_answer(self, flight: _Flight) -> Answer:
        """The reply to the batch of a whole case (its ``errored`` or ``skipped`` raised). A
        batch that named an expectation without sending it and failed whole (the process
        dropped it) is sent once more with the expectation, once the batches written after
        it are read (``_ground``): the retry's reply comes after theirs."""
        impl, named = flight.impl, flight.named
        answer = impl.collect([flight.posted])[0]
        if "errored" in answer.reply or "skipped" in answer.reply:
            batch.forget(impl)  # as batch.sent
        if named is not None and "expectation" not in named and "errored" in answer.reply:
            assert flight.wanted is not None
            self._ground()
            named = expectation.named(impl, flight.wanted)  # forgotten above
            answer = batch.sent(impl, (), built=batch.case_request(impl, flight.match, _plan(flight.replay.case).tail, named))
        if "errored" in answer.reply or "skipped" in answer.reply:
            _check("batch", answer.reply)
        return answer

    def _source(self, answer: Answer, wanted: expectation.Expectation | None = None) -> bytes:
        """A digest of the batch reply's line after its seq, of whether refusals are told
        with their reasons and of the expectation named: all a record read from it depends
        on besides its case. Empty for a line that does not start with its seq (then nothing
        is known to be the same)."""
        head = b'{"seq":%d,' % answer.reply["seq"]
        if not answer.line.startswith(head):
            return b""
        digest = hashlib.blake2b(answer.line[len(head):], digest_size=16)
        digest.update(b"reasons" if self.reasons else b"no reasons")
        if wanted is not None:
            digest.update(b" expecting " + wanted.key.encode())
        return digest.digest()

    def batched(self, requests: Sequence[Request], answer: Answer | None = None) -> Iterator[dict[str, Any]]:
        """The replies to ``requests`` sent in one ``batch`` (the implementation declares it),
        full states, clipped and judged as replies read one by one; ``answer``: the batch's
        reply when it was sent already (``send_batch``)."""
        answer = answer or self.send_batch(requests)
        commands = [command for command, _ in requests]
        for command, reply in (batch.unpacked(commands, answer.reply, "batch", False) if self.trusted_replies
                               else batch.read(answer, commands, _clipped_reply)):
            if not (_unshown(command, reply) or (command in self.unshown_queries and "skipped" in reply)):
                _check(command, reply)
            yield reply

    def batch_request(self, requests: Sequence[Request]) -> Request:
        """One ``batch`` request carrying ``requests`` (the implementation declares it)."""
        return batch.request(self._started(), requests)

    def unbatched(self, requests: Sequence[Request], answer: Answer) -> list[dict[str, Any]]:
        """The replies to ``requests`` from the answer to their ``batch_request``, judged as
        replies read one by one (Skipped, ProtocolFailure)."""
        try:
            return list(self.batched(requests, answer))
        except (ProtocolFailure, Skipped):
            if self.impl is not None:
                batch.forget(self.impl)
            raise

    def send_batch(self, requests: Sequence[Request], like: Answer | None = None) -> Answer:
        return batch.sent(self._started(), requests, like)

    def _replies(self, chunks: list[list[Request]]) -> Iterator[dict[str, Any]]:
        """The replies to the chunks' requests, one chunk written (and read) at a time; a
        chunk is only written when the replies to the previous one are wanted. A reply is
        judged (skipped, errored) only when it is taken: the replies after the point where
        a record ends (a later deal the reference refuses to start, say) do not count."""
        if self.batch:
            yield from self.batched([request for chunk in chunks for request in chunk])
            return
        for chunk in chunks:
            if chunk:
                posted = self.post(chunk)
                assert self.impl is not None
                for item, answer in zip(posted, self.impl.collect(posted)):  # all read: the stream stays in step
                    answer = self._kept(item, answer)
                    if not _unshown(item.command, answer.reply):
                        _judge(item, answer)
                    yield answer.reply


class _CaseReading:
    """The replies of a case's batch read into its steps, in order: a reply is judged
    (skipped, errored) only when taken, states are rebuilt from their changes (an unchanged
    field's value the very object of the step before), and where a reply was counted as
    expected (MET) the expected record's value is taken, its very step where a whole step was."""

    def __init__(self, case: Transcript, replies: Any, wanted: expectation.Expectation | None,
                 told: Callable[[Reply], Reply] | None, steps: list[StepRecord]) -> None:
        if not isinstance(replies, list):
            raise ProtocolFailure("batch reply: expected 'replies', a list of reply objects")
        if wanted is not None:
            replies = expectation.expanded(replies, wanted, 1)
        elif not set(map(type, replies)) <= {dict}:
            raise ProtocolFailure("batch reply: expected 'replies', a list of reply objects")
        self.case, self.replies, self.steps = case, replies, steps
        self.told = told  # None: every reply is told whole (the reasons of refusals too)
        self.mine = wanted.steps if wanted is not None else ()  # the expected record's steps, in order
        # the requests sent, the match's included: all the case's, or as far as the expectation goes
        self.asked = 1 + (wanted.requests if wanted is not None else _requests(case))
        self.state: dict[str, Any] | None = None  # the last state reply's whole state
        self.shown: dict[str, Any] | None = None  # the state of the record's last step
        # the places of the replies written out (not counted as expected), in order, and how
        # many of them lie before the step being read: the replies of a step that ends at or
        # before the next one were all as expected
        self.written = [at for at, reply in enumerate(replies) if reply is not expectation.MET] if wanted is not None else []
        self.passed = 0

    def taken(self, at: int, command: str) -> Any:
        """The reply at ``at`` (MET where it was as expected)."""
        if at >= len(self.replies):
            raise ProtocolFailure(f"batch reply: {len(self.replies)} replies to {1 + _requests(self.case)} requests, "
                                  "and no errored one last")
        reply: Any = self.replies[at]
        if reply is expectation.MET:
            return reply
        if not isinstance(reply, dict):
            raise ProtocolFailure("batch reply: expected 'replies', a list of reply objects and counts")
        if "errored" in reply or "skipped" in reply:
            _check(command, reply)
        return reply

    def met(self, plan: _Plan) -> Sequence[StepRecord]:
        """The expected record's steps from the next one on whose replies were all as expected,
        as many as end before the next reply written out, when the first of them follows the
        step before as in the expected record: those steps themselves, which ``step`` would
        read from such replies (none: the next step is read reply by reply)."""
        first = len(self.steps)
        if first >= len(self.mine) or not self._follows(self.mine[first]):
            return ()
        last = bisect.bisect_right(plan.ends, self._next_written(plan.places[first].start), first, len(self.mine))
        run = self.mine[first:last]
        if self.told is not None:
            run = self._told(run, self.told)
        if run:
            self.state = self.shown = run[-1].state
        return run

    @staticmethod
    def _told(run: tuple[StepRecord, ...], told: Callable[[Reply], Reply]) -> tuple[StepRecord, ...]:
        """The steps of ``run`` up to the first with a reason this implementation does not tell."""
        for at, step in enumerate(run):
            if told(step.reply) is not step.reply:
                return run[:at]
        return run

    def step(self, place: _Place) -> StepRecord:
        """The record's next step from its replies (legal, apply, state; the deal's: deal,
        state): the expected step itself where those that were as expected make it up."""
        mine = self.mine[len(self.steps)] if len(self.steps) < len(self.mine) else None
        at, legal = place.start, None
        if place.step:
            said = self.taken(at, "legal")
            legal = _expected(mine).legal if said is expectation.MET else _legal(said)
            at += 1
        said = self.taken(at, "apply" if place.step else "deal")
        reply = _expected(mine).reply if said is expectation.MET else _reply(said)
        if self.told is not None:
            reply = self.told(reply)
        shows, changed = self.observed(at + 1, mine)
        if (mine is not None and legal is mine.legal and reply is mine.reply and shows is mine.state
                and changed == mine.changed):
            return mine
        return StepRecord(place.deal, place.step, place.action, legal, reply, shows, changed)

    def _next_written(self, at: int) -> int:
        """The place of the first reply at or after ``at`` written out (past the last: their count)."""
        while self.passed < len(self.written) and self.written[self.passed] < at:
            self.passed += 1
        return self.written[self.passed] if self.passed < len(self.written) else len(self.replies)

    def _follows(self, mine: StepRecord) -> bool:
        """Does the expected step ``mine``, its replies as expected, follow the record's last
        step as ``observed`` reads it: it tells the fields changed since the expected step
        before, which the record's last step shows, or it tells none?"""
        before = self.mine[len(self.steps) - 1].state if self.steps else None
        return (before is not None and self.shown is before) or mine.changed is None

    def observed(self, at: int, mine: StepRecord | None) -> tuple[dict[str, Any], frozenset[str] | None]:
        """The state a reply shows, and the fields that changed since the last step's (None: any)."""
        reply = self.taken(at, "state")
        changed: frozenset[str] | None = None
        if reply is expectation.MET:
            before = self.mine[len(self.steps) - 1].state if self.steps else None  # the expected step before's
            changed = _expected(mine).changed if self.shown is before and before is not None else None
            self.state = self.shown = _expected(mine).state
        elif "changes" in reply:
            changes = reply["changes"]
            if self.state is None or not isinstance(changes, dict):
                raise ProtocolFailure("batch reply: 'changes' before any full state, or not an object")
            changed = frozenset(changes) if self.shown is self.state else None
            self.state = self.shown = {**self.state, **changes}
        else:
            full = reply.get("state")
            if isinstance(full, dict):
                self.state = full
            self.shown = full if isinstance(full, dict) else {}
        return self.shown, changed


def _expected(mine: StepRecord | None) -> StepRecord:
    """The expected step a reply counted as expected stands for (``expectation.expanded``
    lets a count stand only where a reply was expected)."""
    if mine is None:
        raise ProtocolFailure("batch reply: a reply counted as expected where none was")
    return mine


def _requests(case: Transcript) -> int:
    """The requests of a case after its match: per deal deal and state, per step legal, apply,
    state (the places ``_plan`` lays out; the match is at 0)."""
    ends = _plan(case).ends
    return ends[-1] - 1 if ends else 0


class _Place(NamedTuple):  # a named tuple: read a few times per step, made once per case
    """A step of a case as its batch asks it."""

    deal: int  # the deal's number, from 1
    step: int  # 0: the deal itself
    action: str | None
    refused: bool | None  # the transcript expects the action refused (None: the deal, no action)
    start: int  # the place of its first request in the batch (the match is at 0)
    end: int  # the place after its last


@dataclass(frozen=True)
class _Plan:
    """What a case's batch asks: the JSON text of its requests after the match
    (``batch.case_tail``), and the place of each step's requests."""

    tail: str
    places: tuple[_Place, ...]
    ends: tuple[int, ...]  # each place's end, in order


CASE_TEXTS_KEPT = 8192  # cases whose plan is kept (a corpus holds about a thousand)
_plans: dict[int, tuple[Transcript, _Plan]] = {}


def _plan(case: Transcript) -> _Plan:
    """The plan of a case's batch, made once per case: fit replays each case against the
    reference once per variant it tries."""
    kept = _plans.get(id(case))
    if kept is not None and kept[0] is case:
        return kept[1]
    places: list[_Place] = []
    at = 1  # after the match
    for number, deal in enumerate(case.deals, start=1):
        places.append(_Place(number, 0, None, None, at, at + 2))  # deal, state
        at += 2
        for index, scripted in enumerate(deal["steps"], start=1):
            places.append(_Place(number, index, scripted["action"], "refused" in scripted, at, at + 3))  # legal, apply, state
            at += 3
    plan = _Plan(batch.case_tail(case.deals), tuple(places), tuple(place.end for place in places))
    if len(_plans) < CASE_TEXTS_KEPT:
        _plans[id(case)] = (case, plan)  # held: its id is not reused
    return plan


def _clipped(value: Any, limit: int = KEPT_VALUE) -> Any:
    if isinstance(value, (str, list, dict)) and (len(value) > 64 or _too_deep(value)):
        return clip_value(value, limit)[0]
    return value


def _clipped_reply(reply: dict[str, Any], limit: int = KEPT_VALUE) -> dict[str, Any]:
    """A reply with each value (and each state field) over ``limit`` characters of JSON, or
    nested too deep, replaced by its stand-in: what ``Observer._kept`` keeps of a long line,
    and of every reply a batch carries."""
    clipped = {key: _clipped(value, limit) for key, value in reply.items()}
    if isinstance(clipped.get("state"), dict):
        clipped["state"] = {key: _clipped(value, limit) for key, value in clipped["state"].items()}
    return clipped


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size // 1024} KiB"


class ReplyBudget:
    """The bytes of large replies (over LARGE_LINE) a run still reads, shared by the
    observers of a Pool: what is kept of each is bounded (KEPT_VALUE), but an implementation
    sending a 6 MB state at every step would still cost minutes of decoding."""

    def __init__(self, total: int = LARGE_REPLIES_READ) -> None:
        self.total = total
        self.left = total
        self._lock = threading.Lock()

    def take(self, size: int) -> bool:
        with self._lock:
            self.left -= size
            return self.left >= 0


def _judge(item: Posted, answer: Answer) -> None:
    _check(item.command, answer.reply)


def _check(command: str, reply: dict[str, Any]) -> None:
    """Skipped for a ``skipped`` reply, Errored for an ``errored`` one."""
    judge(command, reply)


class BatchObserver(Observer):
    """The reference (a trusted process) observed with every request of a case written at
    once: one round trip per case instead of one per step, which is most of the cost on a
    busy machine. The implementation under test is never driven this way: it only sees a
    step's requests once the previous step's replies said the case goes on."""

    whole_case = True
    trusted_replies = True


# --- one action at a time, replies read ahead (the lockstep of thousand fuzz) -------------

@dataclass(frozen=True)
class Turn:
    """One side's answer to an action (or to the deal): the reply, the state after it and the
    legal set after it (the next action's), with the three reply lines as read: two sides
    whose lines are the same bytes showed the same things."""

    reply: Reply
    state: dict[str, Any]
    legal: tuple[str, ...]
    lines: tuple[bytes, ...]
    unshown: tuple[str, ...] = ()  # the queries (``state``, ``legal``) answered ``skipped``: unchecked


def turn_requests(action: str | None, deal: dict[str, Any] | None = None) -> list[Request]:
    """An action (or, with ``deal``, the deal), the state after it and the next legal set."""
    first: Request = (("deal", {"dealer": deal["dealer"], "hands": deal["hands"], "talon": deal["talon"]})
                      if deal is not None else ("apply", {"action": action}))
    return [first, ("state", {}), ("legal", {})]


def read_turn(answers: Sequence[Answer]) -> Turn:
    reply, state, legal = answers
    return Turn(_reply(reply.reply), _state(state.reply), _legal(legal.reply), tuple(a.line for a in answers),
                _skipped_queries(state.reply, legal.reply))


_LINE = json.JSONEncoder(separators=(",", ":"))


UNREAD = (b"", b"", b"")  # the lines of a turn whose lines are never compared


def turn_of(replies: Sequence[dict[str, Any]], encoded: bool = True) -> Turn:
    """A turn from three replies read in one piece (a batch's or a playout's): each line is
    the reply's JSON text, so that equal replies of two sides still compare as equal bytes
    (``encoded`` False: no lines, for a turn compared otherwise)."""
    reply, state, legal = replies
    lines = tuple(_LINE.encode(r).encode() for r in replies) if encoded else UNREAD
    return Turn(_reply(reply), _state(state), _legal(legal), lines, _skipped_queries(state, legal))


def _skipped_queries(state: dict[str, Any], legal: dict[str, Any]) -> tuple[str, ...]:
    """Which of a turn's two queries were answered ``skipped`` (only an observer told to
    return them unjudged hands such replies on: ``Observer.unshown_queries``)."""
    return tuple(name for name, reply in (("state", state), ("legal", legal)) if "skipped" in reply)


def _state(reply: dict[str, Any]) -> dict[str, Any]:
    state = reply.get("state")
    return state if isinstance(state, dict) else {}


def _unshown(command: str, reply: dict[str, Any]) -> bool:
    """A legal set the implementation answered ``skipped``: that one observation is unchecked
    (``StepRecord.legal`` None), and the case goes on, as the game does; a skipped action,
    deal or state ends the record."""
    return command == "legal" and "skipped" in reply


def _legal(reply: dict[str, Any]) -> tuple[str, ...]:
    actions = reply.get("actions")
    if not isinstance(actions, list):
        return ()
    if set(map(type, actions)) <= {str}:  # the usual case, checked without a Python loop
        return tuple(sorted(actions))
    return tuple(sorted(a for a in actions if isinstance(a, str)))


def _reply(reply: dict[str, Any]) -> Reply:
    if reply.get("ok") is False:
        refusal = reply.get("refusal")
        if isinstance(refusal, dict) and "reason" not in refusal:
            return Reply(False)  # refused, and it cannot tell why
        if isinstance(refusal, dict):
            reason = str(refusal.get("reason"))
            listed = refusal.get("reasons")
            also = tuple(dict.fromkeys(r for r in listed if isinstance(r, str) and r != reason)) if isinstance(listed, list) else ()
            return Reply(False, (), (str(refusal.get("class")), reason), also)
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


StateRows = list[tuple[str, Any, Any]]  # (state.FIELD or state.FIELD.KEY, expected, actual) of differing fields


class Verdicts:
    """The state rows of one step, by field, carried to the next (see ``_state_details``)."""

    def __init__(self) -> None:
        self.fields: dict[str, tuple[Any, Any, StateRows]] = {}  # field -> (expected value, actual value, its rows)
        self.differing: set[str] = set()  # the fields with rows

    @classmethod
    def agreeing(cls, state: dict[str, Any]) -> Verdicts:
        """The verdicts of a state compared with itself: no field differs. Only for a state
        that the reference showed exactly as the implementation (``equal`` on a value and the
        value itself fails only for a NaN, which no reply the reference matched holds)."""
        verdicts = cls()
        verdicts.fields = {key: (value, value, []) for key, value in state.items()}
        return verdicts

    def judge(self, key: str, want: Any, got: Any) -> None:
        """The rows of one field: those of the step before when its values on both sides are
        the very objects compared then (a record built from state changes keeps an unchanged
        field's object), else compared."""
        last = self.fields.get(key)
        if last is not None and last[0] is want and last[1] is got:
            return
        if equal(want, got):
            rows: StateRows = []
            self.differing.discard(key)
        else:
            rows = [(f"state.{key}.{name}" if name else f"state.{key}", want, got) for name in _inner_keys(want, got) or [""]]
            self.differing.add(key)
        self.fields[key] = (want, got, rows)

    def drop(self, key: str) -> None:
        """A field neither side shows any more."""
        self.fields.pop(key, None)
        self.differing.discard(key)

    def rows(self) -> StateRows:
        return [row for key in sorted(self.differing) for row in self.fields[key][2]]


def _state_details(expected: dict[str, Any], actual: dict[str, Any], before: Verdicts | None = None,
                   changed: frozenset[str] | None = None) -> tuple[StateRows, Verdicts]:
    """Differing state fields; a mapping or a list of mappings is named down to its keys. With
    ``before``, the verdicts of the previous step (which this step's replace): a field whose
    values are the objects compared then is not compared again; with ``changed`` too, the
    fields that may differ from the previous step's on either side, only those are looked
    at. Returns the rows, in field order, and this step's verdicts."""
    if before is None or changed is None:
        verdicts = Verdicts()
        for key in expected.keys() | actual.keys():
            if before is not None and key in before.fields:
                verdicts.fields[key] = before.fields[key]
                if key in before.differing:
                    verdicts.differing.add(key)
            verdicts.judge(key, expected.get(key, "<missing>"), actual.get(key, "<missing>"))
        return verdicts.rows(), verdicts
    for key in changed:
        if key in expected or key in actual:
            before.judge(key, expected.get(key, "<missing>"), actual.get(key, "<missing>"))
        else:
            before.drop(key)
    return before.rows(), before


def _inner_keys(want: Any, got: Any) -> list[str]:
    rows = (want, got) if isinstance(want, list) and isinstance(got, list) else ([want], [got])
    if not all(isinstance(item, dict) for row in rows for item in row) or len(rows[0]) != len(rows[1]):
        return []
    return sorted({k for a, b in zip(*rows) for k in set(a) | set(b) if not equal(a.get(k), b.get(k))})


def _legal_details(expected: tuple[str, ...], actual: tuple[str, ...]) -> list[str]:
    missing = {action_shape(a) for a in set(expected) - set(actual)}
    unexpected = {action_shape(a) for a in set(actual) - set(expected)}
    return [f"missing {shape}" for shape in sorted(missing)] + [f"unexpected {shape}" for shape in sorted(unexpected)]


def _reply_details(expected: Reply, actual: Reply) -> tuple[Observed, list[str]]:
    """(REFUSAL, details) when acceptance or the reason differ, else (EVENT, details)."""
    def said(reply: Reply) -> str:
        return "accepted" if reply.accepted else "/".join(reply.refusal or ("?", "?"))

    # a refusal without a reason is checked as a refusal only
    if expected.accepted != actual.accepted or (actual.refusal is not None and not expected.agrees(actual)):
        return Observed.REFUSAL, [f"{said(expected)} vs {said(actual)}"]
    want = collections.Counter(_event_key(e) for e in expected.events)
    got = collections.Counter(_event_key(e) for e in actual.events)
    details = [f"missing {k}" for k in sorted(want - got)] + [f"unexpected {k}" for k in sorted(got - want)]
    if not details:
        for a, b in zip(expected.events, actual.events):
            if isinstance(a, dict) and isinstance(b, dict) and not equal(a, b):
                fields = sorted(k for k in set(a) | set(b) if not equal(a.get(k), b.get(k)))
                details.append(f"{_event_key(a)} differs in {diagnosis.first_field(str(a.get('type')), fields)}")
    return Observed.EVENT, sorted(set(details))


def _same_reply(expected: Reply, actual: Reply) -> bool:
    """The replies are the same to the last type (``_reply_details`` finds nothing in them),
    told without building its counts; False proves nothing."""
    return (expected.accepted == actual.accepted and (expected.refusal == actual.refusal or actual.refusal is not None and expected.agrees(actual))
            and (expected.events == actual.events == () or identical(expected.events, actual.events)))


def compare(expected: CaseRecord, actual: CaseRecord) -> list[Finding]:
    """Every difference between the oracle's record and the implementation's, in order, as
    unnamed findings (``observed``)."""
    found: list[Finding] = []
    phase = "deal"
    before: dict[str, Any] | None = None
    verdicts: Verdicts | None = None
    agreed: dict[str, Any] | None = None  # the state of the last step the two records share
    for want, got in zip(expected.steps, actual.steps):
        phase = "deal" if want.step == 0 else phase
        if want is got:  # the very same step on both sides (an expectation met): nothing in it differs
            agreed, verdicts, before = want.state, None, want.state
            phase = str(want.state.get("phase", phase))
            continue
        if agreed is not None:  # the next step is judged against the shared one's verdicts: all agree
            verdicts, agreed = Verdicts.agreeing(agreed), None

        def add(kind: Observed, detail: str, wanted: Any, seen: Any) -> None:
            found.append(observed(expected.case_id, want.deal, want.step, want.action, kind, phase, detail, wanted, seen,
                                  before))

        if want.legal is not None and got.legal is not None and want.legal != got.legal:
            for detail in _legal_details(want.legal, got.legal):
                add(Observed.LEGAL, detail, list(want.legal), list(got.legal))
        if not _same_reply(want.reply, got.reply):
            kind, details = _reply_details(want.reply, got.reply)
            for detail in details:
                add(kind, detail, _said(want.reply), _said(got.reply))
        both = want.changed | got.changed if want.changed is not None and got.changed is not None else None
        rows, verdicts = _state_details(want.state, got.state, verdicts, both)
        for name, wanted, seen in rows:
            add(Observed.STATE, name, wanted, seen)
        phase = str(want.state.get("phase", phase))
        before = want.state
    if len(expected.steps) != len(actual.steps) or expected.broken or actual.broken:
        if expected.ended != actual.ended or len(expected.steps) != len(actual.steps):
            last = (expected.steps or actual.steps or (None,))[-1]
            found.append(observed(expected.case_id, last.deal if last else 0, last.step if last else 0,
                                  last.action if last else None, Observed.RECORD, phase,
                                  f"ends {_ending(expected)} vs {_ending(actual)}", expected.ended, actual.ended))
    return found


_ABSENT = object()  # a field a state does not have


def as_shown(step: StepRecord, before: dict[str, Any] | None, declared: Declarations | None) -> StepRecord:
    """The reference's step as an implementation that sends less shows it (docs/protocol.md,
    Declarations for less): without the state fields it declares absent, its events read off
    the states as the session reads the implementation's. ``before``: the reference's state
    before the step (None for the deal)."""
    if declared is None or not (declared.events_derived or declared.unsupported.state_fields):
        return step
    absent = declared.unsupported.state_fields
    state = {k: v for k, v in step.state.items() if k not in absent} if absent else step.state
    reply = step.reply
    if declared.events_derived and reply.accepted:
        prior = None if before is None else {k: v for k, v in before.items() if k not in absent}
        reply = Reply(True, derive.derive(prior, step.action, state).events)
    return replace(step, reply=reply, state=state)


def shown_record(record: CaseRecord, declared: Declarations | None) -> CaseRecord:
    """A whole record of the reference as ``as_shown`` shows each step."""
    if declared is None or not (declared.events_derived or declared.unsupported.state_fields):
        return record
    steps, before = [], None
    for step in record.steps:
        steps.append(as_shown(step, before if step.step > 0 else None, declared))
        before = step.state
    return replace(record, steps=tuple(steps))


def with_changes(record: CaseRecord) -> CaseRecord:
    """The record with each step's ``changed`` fields told against the step before, and an
    unchanged field's value the very object of the step before, as a record read from a
    batch has them: ``compare`` then looks again only at the fields that changed on either
    side. For a record compared again and again (the implementation's, in fit); a value the
    same to the last type and member order (``identical``) is unchanged."""
    steps: list[StepRecord] = []
    last: dict[str, Any] | None = None
    for step in record.steps:
        if last is None:
            steps.append(step)
            last = step.state
            continue
        state: dict[str, Any] = {}
        changed = {key for key in last if key not in step.state}
        for key, value in step.state.items():
            old = last.get(key, _ABSENT)
            if old is value or (old is not _ABSENT and identical(old, value)):
                state[key] = old
            else:
                state[key] = value
                changed.add(key)
        steps.append(replace(step, state=state, changed=frozenset(changed)))
        last = state
    return replace(record, steps=tuple(steps))


def _ending(record: CaseRecord) -> str:
    return record.ended.split(":")[0]


def _said(reply: Reply) -> Any:
    return {"events": list(reply.events)} if reply.accepted else {"refused": list(reply.refusal or ("?", "reason unknown"))}


def findings(differences: Iterable[Finding]) -> list[Finding]:
    """``compare``'s findings named (``named``): the runner's signatures and knobs, so that what
    fit leaves unexplained groups into root causes exactly as ``thousand verify`` groups its
    failures, and fuzz signs a divergence as verify signs the transcript that shows it. One
    finding per check of a step, in the order the step is read."""
    found: dict[tuple[int, int, str], Finding] = {}
    for d in differences:
        one = named(d)
        key = (d.deal, d.step, one.signature)
        if key not in found:
            message = f"{d.at}: reference {_brief(d.expected)}, implementation {_brief(d.actual)}"
            found[key] = replace(one, message=message, expected=d.expected, actual=d.actual, where=d.where)
    return list(found.values())


def named(d: Finding) -> Finding:
    """One finding of ``compare`` as the runner names it: kind, phase, normalised name and knobs.
    A reply's phase is its action's, as the runner reads it (a ``redeal`` refused after the
    deal is over is a claim's refusal in both)."""
    phase = diagnosis.action_phase(d.action) if d.action and d.step and d.kind in (Observed.REFUSAL, Observed.EVENT) else d.phase
    if d.kind is Observed.LEGAL:
        return diagnosis.legal_finding(d.phase, d.expected, d.actual, d.before)
    if d.kind is Observed.REFUSAL:
        want, got = _refused(d.expected), _refused(d.actual)
        if want is None and got is not None:
            return diagnosis.refused_finding(phase, d.action or "", got)
        return diagnosis.refusal_finding(phase, want or "?", got)
    if d.kind is Observed.EVENT:
        wanted = list((d.expected or {}).get("events") or [])
        sent = list((d.actual or {}).get("events") or [])
        missing = unmatched_event(wanted, sent)
        if missing is not None:
            return diagnosis.event_finding(phase, wanted[missing], sent, same)
        extra = _extra_event(wanted, sent)
        kind = str(extra.get("type")) if isinstance(extra, dict) else "?"
        return Finding(Observed.EVENT, phase, f"unexpected {diagnosis.event_label(extra)}", *diagnosis.decided("event", kind))
    if d.kind is Observed.STATE:
        name = d.detail.split(".")[1] if d.detail.count(".") else d.detail
        return Finding(Observed.STATE, d.phase, name, *diagnosis.decided("state", name))
    return Finding(Observed.BROKEN, d.phase, f"record: {d.detail}")  # the record ended otherwise: no knob decides it


def _extra_event(wanted: Sequence[Any], sent: Sequence[Any]) -> Any:
    """The first event the implementation sent beyond the reference's, each wanted event
    taken in order by the first equal one left: a second bonus event equal to the first is
    the extra one, though an equal event was wanted (and one with a field more is extra)."""
    position, used = 0, set()
    for event in wanted:
        while position < len(sent) and not equal(event, sent[position]):
            position += 1
        used.add(position)
        position += 1
    return next((e for index, e in enumerate(sent) if index not in used), {})


def _brief(value: Any, limit: int = 100) -> str:
    text = json.dumps(value, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def _refused(said: Any) -> str | None:
    """The reason of a refusal as ``_said`` writes it, or None when the action was accepted."""
    refused = said.get("refused") if isinstance(said, dict) else None
    return str(refused[1]) if isinstance(refused, list) and len(refused) > 1 else None


# Collections of the youngest generation a run lets pass (gc's default: 700 allocations).
YOUNG_COLLECTION = 50_000


def collect_rarely() -> None:
    """Let the cyclic garbage collector run far less often for the rest of the process. A
    fit or fuzz run holds records by the thousand, acyclic JSON values the collector walks
    in full again and again: about a fifth of a fit's CPU time at the default thresholds
    (fit on the twelve-changes stand-in: 31.8 s of runner CPU, 24.8 s so)."""
    gc.set_threshold(YOUNG_COLLECTION, 20, 20)


# --- running many cases on several processes ---------------------------------------------

Item = TypeVar("Item")
Out = TypeVar("Out")


class Pool:
    """``jobs`` observers of one command, reused across calls (no restart per candidate)."""

    def __init__(self, command: Sequence[str] = REFERENCE_COMMAND, jobs: int = 1, timeout: float = 10.0,
                 batch: bool = False, fallbacks: Sequence[str] = ()) -> None:
        kind = BatchObserver if batch else Observer  # batch: only for the trusted reference
        budget, expectations = ReplyBudget(), Expectations()
        self.observers = [kind(command, timeout, budget=budget, fallbacks=fallbacks, expectations=expectations)
                          for _ in range(max(1, jobs))]

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

        self._on_each(run, len(items))
        if failure:
            raise failure[0]
        return [results[i] for i in range(len(items))]

    def replay(self, items: Sequence[Item], ask: Callable[[Item], Replay],
               progress: Callable[[], None] | None = None) -> list[CaseRecord]:
        """The record of ``ask(item)`` for every item, as ``map`` would make each by
        ``Observer.observe``, in parallel; each observer keeps a few cases written ahead
        (``Observer.replays``). Records in item order."""
        results: dict[int, CaseRecord] = {}
        pending = collections.deque(enumerate(items))
        lock = threading.Lock()
        failure: list[BaseException] = []

        def take() -> tuple[int, Replay] | None:
            with lock:
                if not pending or failure:
                    return None
                index, item = pending.popleft()
            return index, ask(item)

        def run(observer: Observer) -> None:
            try:
                for index, record in observer.replays(take):
                    with lock:
                        results[index] = record
                    if progress:
                        progress()
            except BaseException as exc:  # re-raised in the caller's thread
                with lock:
                    failure.append(exc)

        self._on_each(run, len(items))
        if failure:
            raise failure[0]
        return [results[i] for i in range(len(items))]

    def _on_each(self, run: Callable[[Observer], None], items: int) -> None:
        """``run`` on the one observer, or on each in a thread of its own where there are
        several and more than one item to share out."""
        if len(self.observers) == 1 or items < 2:
            run(self.observers[0])
            return
        threads = [threading.Thread(target=run, args=(o,), daemon=True) for o in self.observers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def close(self) -> None:
        for observer in self.observers:
            observer.close()
