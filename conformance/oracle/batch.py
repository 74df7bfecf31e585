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
import hashlib
import json
import weakref
from typing import Any, Iterator, Sequence

from conformance.harness.process import Implementation, Preencoded, ProtocolFailure, check_lists

EXTENSION = "batch"
# The documents an implementation keeps by key (docs/protocol.md: at least this many, the
# least recently used dropped first); past that the client sends the document again.
DOCUMENTS_KEPT = 256

Request = tuple[str, dict[str, Any]]  # as observe's: (command, fields)

_ENCODER = json.JSONEncoder(separators=(",", ":"))
# per process: the document keys it holds, in the order of their last use
_HELD: weakref.WeakKeyDictionary[Implementation, collections.OrderedDict[str, None]] = weakref.WeakKeyDictionary()
_KEYS: weakref.WeakKeyDictionary[Preencoded, str] = weakref.WeakKeyDictionary()  # a document's key, by its text


def offered(start_reply: dict[str, Any]) -> bool:
    """Does the start reply declare the batch extension?"""
    extensions = start_reply.get("extensions")
    return isinstance(extensions, list) and EXTENSION in extensions


class _Encoded(Preencoded):
    """A request field whose JSON text is already built (the list of batched requests)."""

    def __init__(self, text: str) -> None:
        self.value = None
        self.text = text


def replies(impl: Implementation, requests: Sequence[Request]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(command, reply) for each request, as the requests sent one by one would have had
    them (full states), up to the first ``errored`` reply, which the implementation answers
    last. The whole batch is one request: its own ``errored`` or ``skipped`` reply comes as
    the reply of a request ``batch``."""
    held = _HELD.setdefault(impl, collections.OrderedDict())
    plain: list[dict[str, Any]] = []
    documents: list[str] = []  # the document texts to splice in, one per placeholder
    for command, fields in requests:
        plain.append(_plain(command, fields, held, documents))
    text = _ENCODER.encode(plain)
    if documents:  # each placeholder string is replaced by its document's text
        pieces = text.split(_PLACEHOLDER)
        text = pieces[0] + "".join(document + piece for document, piece in zip(documents, pieces[1:]))
    answer = impl.collect(impl.post([("batch", {"states": "changes", "requests": _Encoded(text)})]))[0].reply
    if "errored" in answer or "skipped" in answer:
        held.clear()  # what it holds is unknown now: documents go with their keys again
        yield "batch", answer
        return
    answered = answer.get("replies")
    if not isinstance(answered, list) or not all(isinstance(reply, dict) for reply in answered):
        raise ProtocolFailure("batch reply: expected 'replies', a list of reply objects")
    state: dict[str, Any] | None = None
    for (command, _fields), reply in zip(requests, answered):
        if "changes" in reply and command == "state":
            if state is None or not isinstance(reply["changes"], dict):
                raise ProtocolFailure("batch reply: 'changes' before any full state, or not an object")
            reply = {"state": {**state, **reply["changes"]}}
        if command == "state" and isinstance(reply.get("state"), dict):
            state = reply["state"]
        check_lists(command, reply)  # the same bounds as replies read one by one
        yield command, reply
        if "errored" in reply:
            return
    if len(answered) < len(requests):
        raise ProtocolFailure(f"batch reply: {len(answered)} replies to {len(requests)} requests, and no errored one last")


_MARK = "\u0000document"  # stands for a document in the encoded list: no request field holds a NUL
_PLACEHOLDER = json.dumps(_MARK)  # the mark as it comes out of the encoder


def _plain(command: str, fields: dict[str, Any], held: collections.OrderedDict[str, None], documents: list[str]) -> dict[str, Any]:
    """One batched request as a JSON value; a ``match`` names its document by key, and carries
    it (as a placeholder for its encoded text) only when this process may not hold it."""
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
