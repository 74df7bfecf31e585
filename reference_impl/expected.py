"""Expectations, the server's side (docs/protocol.md "Extensions", ``expectations``).

An **expectation** is a case's requests after its ``match`` with the reply expected of each
(or none), sent once under a key with a ``batch`` and named by that key afterwards. The
server carries the requests out as usual and answers a reply that is exactly the expected
one with a count instead of the reply: the oracle replaying a case thousands of times then
reads a few bytes where it read kilobytes, and the server compares where it wrote JSON.

"Exactly" is the same JSON value to the last type and member order (a refusal's
``message`` left out on both sides): the two values written by ``marshal`` (format 0, which
shares nothing between equal objects and marks no string as interned) are the same bytes.
That format tells ``true`` from 1 and 1 from 1.0, keeps the members' order and writes a
float by its shortest exact digits; the client trusts a count only as that, so whatever it
compares afterwards comes out as if it had read the reply itself.
"""

from __future__ import annotations

import marshal
import sys
from dataclasses import dataclass
from typing import Any, Mapping

from . import snapshot
from .snapshot import Snapshot

# What a kept request is, read once when the expectation is kept: a step's requests go to
# the engine directly (``Server._carry_out_kept``), any other as a request read afresh.
LEGAL, APPLY, STATE, OTHER = "legal", "apply", "state", "other"


class ExpectationError(ValueError):
    """An ``expectation`` the server cannot keep (answered with ``errored``)."""


@dataclass(frozen=True)
class Expected:
    """A reply expected, as ``written`` writes it; a legal set also as its list of strings
    (two lists of strings that are ``==`` are the same JSON value: nothing to write; interned,
    as the engine's are, so that equal strings are the same objects), an
    acceptance ``{"ok": true, "events": [...]}`` also as its events written, a state also as
    its snapshot (``snapshot.read``; None for a value that is no snapshot's observation, then
    compared as written)."""

    written: bytes
    actions: list[str] | None = None
    events: bytes | None = None
    snapshot: Snapshot | None = None


@dataclass(frozen=True)
class Expectation:
    """The requests of a case after its match and the reply expected of each (or None);
    ``steps`` has them as the server carries them out: (what the request is, the request, the
    reply expected)."""

    requests: list[dict[str, Any]]
    expected: list[Expected | None]
    steps: list[tuple[str, dict[str, Any], Expected | None]]


def written(value: Any) -> bytes | None:
    """A JSON value as the bytes two values are compared by; None for a value that is no
    JSON value (those are never equal to anything expected)."""
    try:
        return marshal.dumps(value, 0)
    except ValueError:
        return None


def read(value: Any, changes: bool) -> Expectation:
    """An ``expectation`` as the batch request carries it: ``{"requests": [...], "replies":
    [...]}``, one reply (an object, or null for none) for each request. ``changes``: expected
    states after the first may be ``{"changes": {...}}`` against the expected state before,
    as the batch's own state replies are."""
    if not isinstance(value, Mapping):
        raise ExpectationError("batch: 'expectation' must be an object {requests, replies}")
    requests, replies = value.get("requests"), value.get("replies")
    if not isinstance(requests, list) or not all(isinstance(item, dict) for item in requests):
        raise ExpectationError("batch: expectation 'requests' must be a list of request objects")
    if not isinstance(replies, list) or len(replies) != len(requests):
        raise ExpectationError(f"batch: expectation 'replies' must be a list of {len(requests)} replies (or nulls), "
                               "one for each of its requests")
    kinds = [_kind(request) for request in requests]
    expected: list[Expected | None] = []
    last: dict[str, Any] | None = None  # the expected state before
    for kind, reply in zip(kinds, replies):
        if reply is None:
            expected.append(None)
        elif not isinstance(reply, dict):
            raise ExpectationError("batch: an expected reply must be an object or null")
        elif kind == STATE:
            last = _state(reply, last, changes)
            expected.append(Expected(marshal.dumps(last, 0), snapshot=snapshot.read(last)))
        else:
            expected.append(_reply(reply))
    return Expectation(requests, expected, list(zip(kinds, requests, expected)))


def _kind(request: dict[str, Any]) -> str:
    command = request.get("cmd")
    if command in (LEGAL, STATE) and len(request) == 1:
        return LEGAL if command == LEGAL else STATE
    if command == APPLY and len(request) == 2 and type(request.get("action")) is str:
        return APPLY
    return OTHER


def _state(reply: dict[str, Any], last: dict[str, Any] | None, changes: bool) -> dict[str, Any]:
    """The whole state an expected state reply stands for."""
    fields = reply.get("changes") if changes and last is not None and len(reply) == 1 else None
    if last is not None and isinstance(fields, dict) and fields.keys() <= last.keys():  # the field order stays
        return {**last, **fields}
    state = reply.get("state")
    if not isinstance(state, dict) or len(reply) != 1:
        raise ExpectationError("batch: an expected state reply must be {\"state\": {...}}"
                               + (", or after one {\"changes\": {...}} of its fields" if changes else ""))
    return state


def _reply(reply: dict[str, Any]) -> Expected:
    actions, events = reply.get("actions"), reply.get("events")
    if isinstance(actions, list) and len(reply) == 1 and all(type(action) is str for action in actions):
        return Expected(marshal.dumps(reply, 0), [sys.intern(action) for action in actions])
    if list(reply) == ["ok", "events"] and reply["ok"] is True and isinstance(events, list):
        return Expected(marshal.dumps(reply, 0), None, marshal.dumps(events, 0))
    return Expected(marshal.dumps(_without_message(reply), 0))


def met(reply: dict[str, Any], expected: Expected) -> bool:
    """Is ``reply`` exactly the expected one (a refusal's message left out)?"""
    if expected.actions is not None:  # a legal set
        actions = reply.get("actions")
        return type(actions) is list and len(reply) == 1 and actions == expected.actions
    return written(_without_message(reply)) == expected.written


_NO_EVENTS = marshal.dumps([], 0)  # the events of most actions, as ``Expected.events`` holds them


def same_events(events: list[Any], written: bytes) -> bool:
    """Are an acceptance's events exactly those ``written`` (``Expected.events``)? None, the
    events of most actions, are told without being written."""
    if type(events) is not list:
        return False
    return written == _NO_EVENTS if not events else marshal.dumps(events, 0) == written


def met_state(taken: Snapshot, expected: Expected) -> bool:
    """Is the state of snapshot ``taken`` exactly the one expected? Two equal snapshots are the
    same observation (``reference_impl.snapshot``): compared as snapshots, a fifth of the cost
    of writing the state and comparing the bytes, which is left for an expected value that is
    no snapshot's observation."""
    if expected.snapshot is not None:
        return taken == expected.snapshot
    return written(snapshot.observation(taken)) == expected.written


def _without_message(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply as it is compared: a refusal without its message (words for people, which
    differ between engines that refuse for the same reason)."""
    refusal = reply.get("refusal")
    if not isinstance(refusal, dict) or "message" not in refusal:
        return reply
    return {**reply, "refusal": {key: value for key, value in refusal.items() if key != "message"}}
