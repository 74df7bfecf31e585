"""The batch extension: the reference answers a case in one request exactly as step by step,
and observe reads the same record either way."""

from __future__ import annotations

import json
from typing import Any

import pytest

import variants
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import observe
from reference_impl.server import Server
from tests.support.server import random_requests




def _one_by_one(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    server = Server()
    return [json.loads(json.dumps(server._answer(request, server.handlers))) for request in requests]


def _batched(requests: list[dict[str, Any]], states: str) -> list[dict[str, Any]]:
    reply = Server().handle_line(json.dumps({"cmd": "batch", "seq": 1, "states": states, "requests": requests}))
    assert reply["seq"] == 1
    replies: list[dict[str, Any]] = json.loads(json.dumps(reply["replies"]))
    return replies


def test_a_batch_answers_as_the_requests_one_by_one() -> None:
    for seed in range(12):
        requests = random_requests(seed, 30)
        assert _batched(requests, "full") == _one_by_one(requests)


def test_states_as_changes_rebuild_the_full_states() -> None:
    for seed in range(12):
        requests = random_requests(seed, 30)
        full, changes = _one_by_one(requests), _batched(requests, "changes")
        state: dict[str, Any] = {}
        shrunk = 0
        for request, want, got in zip(requests, full, changes):
            if request["cmd"] == "state" and "changes" in got:
                shrunk += len(got["changes"]) < len(want["state"])
                state = {**state, **got["changes"]}
                got = {"state": state}
            elif request["cmd"] == "state":
                state = got["state"]
            assert got == want
        assert shrunk > 0


def test_the_first_errored_reply_ends_the_batch() -> None:
    requests = [{"cmd": "state"}, {"cmd": "legal"}, {"cmd": "stop"}]
    replies = _batched(requests, "full")
    assert len(replies) == 1 and "no match" in replies[0]["errored"]["message"]
    nested = _batched([{"cmd": "batch", "requests": []}], "full")
    assert "unknown cmd 'batch'" in nested[0]["errored"]["message"]


def test_a_document_key_plays_the_rules_sent_with_it() -> None:
    server = Server()
    document = variants.resolve("polish").to_document()
    assert server._answer({"cmd": "match", "profile": "polish", "document": document, "document_key": "p"}, server.handlers) == {"ok": True}
    assert server._answer({"cmd": "match", "profile": "polish", "document_key": "p"}, server.handlers) == {"ok": True}
    assert server.state is not None and server.state.rules.auction.opening_bid == document["rules"]["auction"]["opening_bid"]
    unknown = server._answer({"cmd": "match", "profile": "polish", "document_key": "q"}, server.handlers)
    assert "unknown document_key 'q'" in unknown["errored"]["message"]


def test_a_match_state_left_out_is_the_start_of_a_match() -> None:
    """docs/protocol.md, batch: a field of the match state left out is as at the start of a
    match; fit's batches leave out what a case does not set (most often the whole state)."""
    start = {"scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
             "barrel": [{"on": False, "attempts": 0, "failed_visits": 0} for _ in range(3)]}
    for seed in range(4):
        requests = random_requests(seed, 20)
        match = requests[0]
        whole = _batched([{**match, "state": start}, *requests[1:]], "changes")
        assert _batched(requests, "changes") == whole
        assert _batched([{**match, "state": {}}, *requests[1:]], "changes") == whole
        scores = {**start, "scores": [120, -40, 35]}
        assert (_batched([{**match, "state": {"scores": [120, -40, 35]}}, *requests[1:]], "changes")
                == _batched([{**match, "state": scores}, *requests[1:]], "changes"))


def test_the_start_reply_declares_the_extension() -> None:
    assert Server().handle_line('{"cmd": "start", "seq": 1, "version": 1}')["extensions"] == ["batch", "playout", "expectations"]


@pytest.mark.slow
def test_observe_reads_the_same_record_in_one_request_as_step_by_step() -> None:
    cases = [c for c in discover([CASES_DIR]) if isinstance(c, Transcript)][::9]
    documents = {name: variants.resolve(name).to_document() for name in {c.profiles[0] for c in cases}}
    stepped, batched = observe.Observer(REFERENCE_COMMAND), observe.Observer(REFERENCE_COMMAND)
    try:
        stepped._started()
        assert stepped.batch
        stepped.batch = False  # as an implementation that does not declare the extension
        for case in cases:
            profile = case.profiles[0]
            want = stepped.observe(case, profile, documents[profile])
            got = batched.observe(case, profile, documents[profile])
            assert got == want, case.id
        assert batched.batch
    finally:
        stepped.close()
        batched.close()
