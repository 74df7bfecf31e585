"""Expectations, the oracle's side: the replies a replay of a case is expected to give, sent
once and named by a key afterwards (docs/protocol.md "Extensions", ``expectations``).

``thousand fit`` replays every case through the reference again and again, under one
candidate rule set after another, and weighs each replay against the same record of the
implementation. Most replies of most replays are the implementation's own. So the batch of a
case's replay names an **expectation**: the case's requests after its ``match`` with, for each,
the reply the implementation's record holds (none for a step it did not show). A server that
declares ``expectations`` answers a reply exactly equal to the expected one (the same JSON
value to the last type and member order; a refusal's message left out) with a count, and
only the others in full: the replay's reply is a few bytes where it was kilobytes.

Why no verdict can change: a count is trusted only as that exact equality, under which the
reference's value and the implementation's are interchangeable for every comparison and every
text the oracle writes; the record of the replay takes the implementation's values at those
places (its very step records where a whole step is as expected), and the reference's reply
everywhere else, read and compared as before.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from conformance.harness.process import Implementation, ProtocolFailure

if TYPE_CHECKING:  # observe imports this module
    from conformance.oracle.observe import CaseRecord, Reply, StepRecord

EXTENSION = "expectations"
# The expectations an implementation keeps by key (docs/protocol.md: at least this many, the
# least recently used dropped first); past that the client sends an expectation again.
EXPECTATIONS_KEPT = 1024
# An expectation's text at most (the server reads request lines of at most 4 MiB): a record
# holding values this large is replayed without one.
MAX_TEXT = 1 << 20

# strict: a NaN or an infinity is no JSON, and the server would refuse the whole line
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_HELD: weakref.WeakKeyDictionary[Implementation, OrderedDict[str, None]] = weakref.WeakKeyDictionary()


class _Met:
    """The place of a reply that was exactly as expected."""

    def __repr__(self) -> str:
        return "MET"


MET = _Met()


@dataclass(frozen=True)
class Expectation:
    """What a replay of one case is expected to answer: the text sent, its key, and the record
    it was written from (whose steps a replay takes where its replies are as expected)."""

    key: str
    text: str  # {"requests": [...], "replies": [...]}, the requests after the match
    steps: tuple[StepRecord, ...]  # the record's steps the replies were written from, in order
    expected: tuple[bool, ...]  # per request: is a reply expected there
    # The requests it holds: those of the record's steps. A replay asked no further weighs the
    # same: the steps of the reference past the end of the record weighed against it are
    # compared with nothing (``evidence.weigh``), so they are not asked for (``ENOUGH``).
    requests: int


ENOUGH = "enough"  # how a replay's record ends that was asked only as far as its expectation goes


def offered(start_reply: dict[str, Any]) -> bool:
    """Does the start reply declare the expectations extension?"""
    extensions = start_reply.get("extensions")
    return isinstance(extensions, list) and EXTENSION in extensions


def written(deals: Sequence[dict[str, Any]], requests: Sequence[str], record: CaseRecord) -> Expectation | None:
    """The expectation of a case whose requests after the match are ``requests`` (their JSON
    texts, ``batch.case_requests``), from ``record``'s steps: as far as they go, all the
    requests where the record is complete. None when it cannot be written as JSON or is too long."""
    replies: list[dict[str, Any] | None] = []
    taken: list[StepRecord] = []
    last: dict[str, Any] | None = None  # the state of the last step written
    places = [(number, index) for number, deal in enumerate(deals, start=1) for index in range(len(deal["steps"]) + 1)]
    for place, step in zip(places, record.steps):
        if (step.deal, step.step) != place:
            break
        if step.step:
            replies.append(None if step.legal is None else {"actions": list(step.legal)})
        replies += [_reply(step.reply), _state(step.state, last)]
        taken.append(step)
        last = step.state
    if record.ended == "complete" or len(taken) < len(record.steps):  # (the latter: a record out of order)
        replies += [None] * (len(requests) - len(replies))  # every request is asked
    try:
        text = ('{"requests":[' + ",".join(requests[:len(replies)]) + '],"replies":' + _ENCODER.encode(replies) + "}")
    except (ValueError, TypeError, RecursionError):
        return None
    if len(text) > MAX_TEXT:
        return None
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return Expectation(key, text, tuple(taken), tuple(reply is not None for reply in replies), len(replies))


def _reply(reply: Reply) -> dict[str, Any] | None:
    """The reply to ``deal`` or ``apply`` a record's reply stands for, or None where the record
    does not hold all of it (a refusal without its reason)."""
    if reply.accepted:
        return {"ok": True, "events": list(reply.events)}
    if reply.refusal is None:
        return None
    refusal: dict[str, Any] = {"class": reply.refusal[0], "reason": reply.refusal[1]}
    if reply.also:  # the reasons listed too, in the reference's order: the reply it then sends
        refusal["reasons"] = list(reply.reasons)
    return {"ok": False, "refusal": refusal}


def _state(state: dict[str, Any], last: dict[str, Any] | None) -> dict[str, Any]:
    """A state reply as a batch with ``states: "changes"`` writes it: the fields that are not
    the very values of the state before (same fields, same order), else the whole state."""
    if last is None or list(last) != list(state):
        return {"state": state}
    return {"changes": {name: value for name, value in state.items() if last[name] is not value}}


def named(impl: Implementation, expectation: Expectation) -> dict[str, Any]:
    """The batch fields naming ``expectation``: its key, and its text where ``impl`` may not
    hold it yet (then held from here on)."""
    held = _HELD.setdefault(impl, OrderedDict())
    if expectation.key in held:
        held.move_to_end(expectation.key)
        return {"expectation_key": expectation.key}
    held[expectation.key] = None
    while len(held) > EXPECTATIONS_KEPT:
        held.popitem(last=False)
    return {"expectation_key": expectation.key, "expectation": expectation.text}


def forget(impl: Implementation) -> None:
    """After a failed batch: what the process holds is unknown, expectations go in full again."""
    _HELD.pop(impl, None)


def expanded(replies: list[Any], expectation: Expectation, first: int) -> list[Any]:
    """A batch's replies one per request, each count of replies as expected spread into that
    many MET; ``first``: the requests before the expectation's. A count where no reply was
    expected, or past the requests, is a protocol failure: it is never taken for one."""
    places: list[Any] = []
    wanted = expectation.expected
    for item in replies:
        if type(item) is not int:  # noqa: E721 - true is not a count
            places.append(item)
            continue
        start = len(places) - first
        if item < 1 or start < 0 or start + item > len(wanted) or not all(wanted[start:start + item]):
            raise ProtocolFailure(f"batch reply: a count of {item} replies as expected at request {len(places) + 1}, "
                                  "where no such replies were expected")
        places += [MET] * item
    return places
