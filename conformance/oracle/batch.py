"""The ``batch`` extension from the oracle's side: a whole case's requests in one round trip.

An implementation that declares ``"extensions": ["batch"]`` in its start reply (the
reference does; docs/protocol.md "Extensions") takes one ``batch`` request carrying every
request of a case and answers all of them in one reply: no round trip per step, states
after the first as their changed fields only, and the profile document sent once per
process under a key instead of once per case. ``replies`` turns that one reply back into
the replies the requests would have had one by one, so that ``observe`` reads a case the
same way whichever way it was asked. Implementations that do not declare it are driven
step by step as before.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import re
import weakref
from typing import Any, Callable, Iterator, Sequence

from conformance.harness.process import Answer, Implementation, Preencoded, ProtocolFailure, check_lists
from conformance.oracle import expectation
from conformance.harness.runner import DEPTH_LIMIT, VALUE_LIMIT

EXTENSION = "batch"
# The documents an implementation keeps by key (docs/protocol.md: at least this many, the
# least recently used dropped first); past that the client sends the document again.
DOCUMENTS_KEPT = 256

Request = tuple[str, dict[str, Any]]  # as observe's: (command, fields)

_ENCODER = json.JSONEncoder(separators=(",", ":"))
# per process: the document keys it holds, in the order of their last use
_HELD: weakref.WeakKeyDictionary[Implementation, collections.OrderedDict[str, None]] = weakref.WeakKeyDictionary()
_KEYS: weakref.WeakKeyDictionary[Preencoded, str] = weakref.WeakKeyDictionary()  # a document's key, by its text
# per process: how many times what it holds was forgotten (``forget``)
_FORGOTTEN: weakref.WeakKeyDictionary[Implementation, int] = weakref.WeakKeyDictionary()


def offered(start_reply: dict[str, Any]) -> bool:
    """Does the start reply declare the batch extension?"""
    extensions = start_reply.get("extensions")
    return isinstance(extensions, list) and EXTENSION in extensions


class _Encoded(Preencoded):
    """A request field whose JSON text is already built (the list of batched requests)."""

    def __init__(self, text: str) -> None:
        self.value = None
        self.text = text


def replies(impl: Implementation, requests: Sequence[Request],
            clipped: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(command, reply) for each request, as the requests sent one by one would have had
    them (full states), up to the first ``errored`` reply, which the implementation answers
    last. The whole batch is one request: its own ``errored`` or ``skipped`` reply comes as
    the reply of a request ``batch``. ``clipped``: see ``read``."""
    yield from read(sent(impl, requests), [command for command, _ in requests], clipped)


def sent(impl: Implementation, requests: Sequence[Request], like: Answer | None = None,
         built: Request | None = None) -> Answer:
    """The requests sent in one ``batch``, and its reply as read (``read`` takes it apart).
    ``like``: an answer whose ``replies`` the batch is expected to repeat (the reference's
    ``playout``); a reply line that is exactly ``{"seq":N,`` and those replies' bytes is
    taken without being decoded. ``built``: the batch request already built (``case_request``)."""
    posted = impl.post([built or request(impl, requests)])
    expected = _expected(like, posted[0].seq) if like is not None else None
    answer = impl.collect(posted, [expected] if expected is not None else [])[0]
    if "errored" in answer.reply or "skipped" in answer.reply:
        forget(impl)
    return answer


def request(impl: Implementation, requests: Sequence[Request]) -> Request:
    """The ``batch`` request carrying ``requests``: a ``match`` names its document by key, and
    carries it only when ``impl`` may not hold it yet."""
    held = _HELD.setdefault(impl, collections.OrderedDict())
    documents: list[str] = []  # the document texts to splice in, one per placeholder
    text = "[" + ",".join(_step_text(command, fields) or _ENCODER.encode(_plain(command, fields, held, documents))
                          for command, fields in requests) + "]"
    if documents:  # each placeholder string is replaced by its document's text
        pieces = text.split(_PLACEHOLDER)
        text = pieces[0] + "".join(document + piece for document, piece in zip(documents, pieces[1:]))
    return ("batch", {"states": "changes", "requests": _Encoded(text)})


def case_request(impl: Implementation, match: Request, tail: str, named: dict[str, str] | None = None) -> Request:
    """The ``batch`` request of a whole case: its ``match`` (its document by key, as
    ``request`` names it), then ``tail``, the JSON text of the case's other requests
    (``case_tail``), each after a comma. ``named``: the fields naming an expectation
    (``expectation.named``), whose requests then take the place of ``tail``."""
    held = _HELD.setdefault(impl, collections.OrderedDict())
    documents: list[str] = []
    text = _ENCODER.encode(_plain(*match, held, documents))
    if documents:
        before, after = text.split(_PLACEHOLDER)
        text = before + documents[0] + after
    if named is None:
        return ("batch", {"states": "changes", "requests": _Encoded("[" + text + tail + "]")})
    fields: dict[str, Any] = {"states": "changes", "requests": _Encoded("[" + text + "]"),
                              "expectation_key": named["expectation_key"]}
    if "expectation" in named:
        fields["expectation"] = _Encoded(named["expectation"])
    return ("batch", fields)


def case_tail(deals: Sequence[dict[str, Any]]) -> str:
    """The JSON text of a case's requests after its ``match``, as ``request`` writes them:
    per deal ``deal`` and ``state``, then ``legal``, ``apply`` and ``state`` per step."""
    return "".join("," + piece for piece in case_requests(deals))


def case_requests(deals: Sequence[dict[str, Any]]) -> list[str]:
    """The JSON text of each of a case's requests after its ``match`` (``case_tail``)."""
    pieces = []
    for deal in deals:
        pieces.append(_ENCODER.encode({"cmd": "deal", "dealer": deal["dealer"], "hands": deal["hands"], "talon": deal["talon"]}))
        pieces.append(_encoded("state", None))
        for step in deal["steps"]:
            pieces += (_encoded("legal", None), _step_text("apply", {"action": step["action"]}) or
                       _ENCODER.encode({"cmd": "apply", "action": step["action"]}), _encoded("state", None))
    return pieces


@functools.lru_cache(maxsize=4096)
def _encoded(command: str, action: str | None) -> str:
    return _ENCODER.encode({"cmd": command} if action is None else {"cmd": command, "action": action})


def _step_text(command: str, fields: dict[str, Any]) -> str | None:
    """A request of no field or one string ``action`` (every step's) as JSON text, as the
    encoder writes ``{"cmd": command, **fields}``, each built once; None for any other."""
    if not fields:
        return _encoded(command, None)
    action = fields.get("action")
    return _encoded(command, action) if type(action) is str and len(fields) == 1 else None


def forget(impl: Implementation) -> None:
    """After a failed batch: what the process holds is unknown, documents (and expectations) go
    with their keys again."""
    _HELD.pop(impl, None)
    expectation.forget(impl)
    _FORGOTTEN[impl] = _FORGOTTEN.get(impl, 0) + 1


def forgotten(impl: Implementation) -> int:
    """How many times what ``impl`` holds was forgotten: a request built before the count
    last changed may name a document or an expectation by a key the process never kept."""
    return _FORGOTTEN.get(impl, 0)


def read(answer: Answer, commands: Sequence[str], clipped: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
         name: str = "batch") -> Iterator[tuple[str, dict[str, Any]]]:
    """The replies to ``commands`` held by a ``batch`` (or ``playout``) answer, as
    ``unpacked``; ``clipped`` is applied to each unless the answer's line is too short and
    too shallow to hold a value it would clip."""
    if clipped is None or plain_values(answer.line):
        yield from unpacked(commands, answer.reply, name)
        return
    for command, reply in unpacked(commands, answer.reply, name):
        yield command, clipped(reply)


def same_replies(line: bytes, other: bytes) -> bool:
    """Two reply lines whose ``replies`` are the same JSON text (a ``batch``'s and a
    ``playout``'s, which ends in them): each line's first ``"replies":``, where a key starts,
    is followed by the same bytes to the line's end. In a line that decoded as JSON those
    bytes are then the last member of the outermost object, so the decoded values are equal
    (and ``true`` is never taken for 1, as ``==`` on decoded values would)."""
    at, other_at = line.find(_REPLIES), other.find(_REPLIES)
    return (at > 0 and other_at > 0 and line[at - 1:at] in (b",", b"{") and other[other_at - 1:other_at] in (b",", b"{")
            and line[at:] == other[other_at:])


_REPLIES = b'"replies":'


def _expected(like: Answer, seq: int) -> Answer | None:
    """The batch reply line ``{"seq":N,"replies":...}`` with ``like``'s replies, and its value."""
    at = like.line.find(_REPLIES)
    if at <= 0 or like.line[at - 1:at] not in (b",", b"{") or not isinstance(like.reply.get("replies"), list):
        return None
    return Answer(b'{"seq":%d,' % seq + like.line[at:], {"seq": seq, "replies": like.reply["replies"]})


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def plain_values(line: bytes) -> bool:
    """No value of this JSON line can be one the runner clips: the line is under half of
    VALUE_LIMIT (a value's JSON text, spaced out again, is at most twice its bytes here) and
    nested at most DEPTH_LIMIT deep. The depth is read from the brackets outside strings,
    innermost pairs dropped a round at a time (each round drops one or two levels)."""
    if len(line) > VALUE_LIMIT // 2:
        return False
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKETS)
    for _ in range(DEPTH_LIMIT // 2):
        if not brackets:
            return True
        brackets = brackets.replace(b"{}", b"").replace(b"[]", b"")
    return not brackets


def unpacked(commands: Sequence[str], answer: dict[str, Any], name: str,
             checked: bool = True) -> Iterator[tuple[str, dict[str, Any]]]:
    """(command, reply) for each of ``commands`` from a reply holding their ``replies``
    (``batch``'s, or ``playout``'s), the states rebuilt from their changes; an ``errored``
    or ``skipped`` ``answer`` comes as the reply of a request ``name``. ``checked``: the
    lists bounded as replies read one by one (not for the reference's own replies)."""
    if "errored" in answer or "skipped" in answer:
        yield name, answer
        return
    answered = answer.get("replies")
    if not isinstance(answered, list) or not all(isinstance(reply, dict) for reply in answered):
        raise ProtocolFailure(f"{name} reply: expected 'replies', a list of reply objects")
    state: dict[str, Any] | None = None
    for command, reply in zip(commands, answered):
        if "changes" in reply and command == "state":
            if state is None or not isinstance(reply["changes"], dict):
                raise ProtocolFailure(f"{name} reply: 'changes' before any full state, or not an object")
            reply = {"state": {**state, **reply["changes"]}}
        if command == "state" and isinstance(reply.get("state"), dict):
            state = reply["state"]
        if checked:
            check_lists(command, reply)
        yield command, reply
        if "errored" in reply:
            return
    if len(answered) < len(commands):
        raise ProtocolFailure(f"{name} reply: {len(answered)} replies to {len(commands)} requests, and no errored one last")


_MARK = "\u0000document"  # stands for a document in the encoded list: no request field holds a NUL
_PLACEHOLDER = json.dumps(_MARK)  # the mark as it comes out of the encoder


def _plain(command: str, fields: dict[str, Any], held: collections.OrderedDict[str, None], documents: list[str]) -> dict[str, Any]:
    """One batched request as a JSON value; a ``match`` names its document by key, and carries
    it (as a placeholder for its encoded text) only when this process may not hold it."""
    if command != "match":  # only a match carries a pre-encoded value (its document)
        return {"cmd": command, **fields}
    request = {"cmd": command, **{name: value for name, value in fields.items() if not isinstance(value, Preencoded)}}
    for name, value in fields.items():
        if isinstance(value, Preencoded) and not (command == "match" and name == "document"):
            request[name] = value.value
    document = fields.get("document")
    if command != "match" or not isinstance(document, Preencoded):
        return request
    key = _KEYS.get(document)
    if key is None:
        key = _KEYS[document] = hashlib.sha1(document.text.encode("utf-8")).hexdigest()[:20]
    request["document_key"] = key
    if key in held:
        held.move_to_end(key)
        return request
    held[key] = None
    while len(held) > DOCUMENTS_KEPT:
        held.popitem(last=False)
    request["document"] = _MARK
    documents.append(document.text)
    return request
