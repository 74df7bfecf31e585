"""Expectations (the batch extension's ``expectation_key``): a replay that names the replies it
expects weighs exactly as one that reads every reply, the server counts only replies that
are the same JSON value as expected, and a key it does not hold is sent again, never
taken for a match."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

import variants
from conformance.corpus import schemas
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, case_ids, discover
from conformance.harness.process import ProtocolFailure
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import evidence, expectation, observe
from reference_impl.server import Server
from tests.support.paths import FIXTURES
from tests.support.server import random_requests

HOUSE = FIXTURES / "house"
CLASSIC_HOUSE = str(HOUSE / "many-knobs.yaml")  # twelve knobs of classic changed
REFUSING_HOUSE = str(HOUSE / "refusing-knobs.yaml")  # twelve, some refusing corpus actions: records end early
POLISH_HOUSE = str(HOUSE / "polish-many-knobs.yaml")  # eleven knobs of polish changed


def _server_keeping(count: int, extensions: str = '["batch", "playout", "expectations"]') -> list[str]:
    """The reference as a process that keeps only ``count`` expectations and declares ``extensions``."""
    code = (f"import sys, reference_impl.server as s; s.MAX_EXPECTATIONS = {count}; s.EXTENSIONS = {extensions}; "
            "sys.exit(s.main())")
    return [sys.executable, "-I", "-c", code]


def _cases(pick: slice = slice(None)) -> list[Transcript]:
    """The corpus's transcripts in listing order, or the ``pick`` of them. Only the picked files
    are read: the whole corpus costs about half a second even from the cache, and the fast
    tests here pick a few cases of it."""
    listed = [(root, case_id) for root in (CASES_DIR, GENERATED_DIR) for case_id in case_ids([root])][pick]
    return [case for root in (CASES_DIR, GENERATED_DIR)
            for case in discover([root], select={case_id for where, case_id in listed if where == root}.__contains__)
            if isinstance(case, Transcript)]


def _documents(cases: list[Transcript]) -> dict[str, dict[str, Any]]:
    return {name: variants.resolve(name).to_document() for name in {case.profiles[0] for case in cases}}


def _shown(implementation: list[str], cases: list[Transcript], documents: dict[str, dict[str, Any]]) -> dict[str, observe.CaseRecord]:
    """The implementation's records as fit weighs them (``evidence.shown``), observed step by step."""
    pool = observe.Pool(implementation, 2)
    try:
        records = pool.map(cases, lambda o, c: o.observe(c, c.profiles[0], documents[c.profiles[0]]))
    finally:
        pool.close()
    return {record.case_id: evidence.shown(record, evidence.Partial())[0] for record in records}


# (implementation, the rules the reference replays under: None for each case's own profile)
RULE_SETS = {
    "the profile's own rules": (list(REFERENCE_COMMAND), None),
    "classic house rules against the profile": ([*REFERENCE_COMMAND, "--rules", CLASSIC_HOUSE], None),
    "classic house rules refusing actions against the profile": ([*REFERENCE_COMMAND, "--rules", REFUSING_HOUSE], None),
    "polish house rules against the profile": ([*REFERENCE_COMMAND, "--rules", POLISH_HOUSE], None),
    "the profile against classic house rules": (list(REFERENCE_COMMAND), CLASSIC_HOUSE),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_every_case_weighs_the_same_with_and_without_expectations(name: str) -> None:
    implementation, replayed = RULE_SETS[name]
    cases = _cases()
    documents = _documents(cases)
    shown = _shown(implementation, cases, documents)
    house = variants.resolve(replayed).to_document() if replayed else None
    reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    reused = read = 0
    try:
        for case in cases:
            profile = case.profiles[0]
            document = house or documents[profile]
            mine = shown[case.id]
            plain = reference.observe(case, profile, document)
            expecting = reference.observe(case, profile, document, (), mine)
            assert evidence.weigh(expecting, mine) == evidence.weigh(plain, mine), case.id
            if mine.ended == "complete":
                assert expecting == plain, case.id
            else:  # asked only as far as the record it is weighed against
                assert expecting.steps == plain.steps[:len(expecting.steps)], case.id
            reused += sum(ours is theirs for ours, theirs in zip(expecting.steps, mine.steps))
            read += sum(ours is not theirs for ours, theirs in zip(expecting.steps, mine.steps))
        assert reference.expects
    finally:
        reference.close()
    assert reused > 1000  # the expectations were met on many steps
    if name != "the profile's own rules":
        assert read > 100  # and the replies that differ were read in full


@pytest.mark.slow
def test_a_partial_implementation_weighs_the_same_with_and_without_expectations() -> None:
    cases = _cases(slice(None, None, 3))
    documents = _documents(cases)
    partial = evidence.Partial(frozenset({"give_up", "marriage"}), frozenset({"bolts", "give_ups"}))
    pool = observe.Pool([*REFERENCE_COMMAND, "--rules", CLASSIC_HOUSE], 2)
    try:
        records = pool.map(cases, lambda o, c: o.observe(c, c.profiles[0], documents[c.profiles[0]]))
    finally:
        pool.close()
    shown = {record.case_id: evidence.shown(record, partial) for record in records}
    assert any(cut.ended.startswith("skipped") for cut, _unchecked in shown.values())
    reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    try:
        for case in cases:
            profile, (mine, unchecked) = case.profiles[0], shown[case.id]
            plain = reference.observe(case, profile, documents[profile])
            expecting = reference.observe(case, profile, documents[profile], (), mine)
            assert evidence.weigh(expecting, mine, partial, unchecked) == evidence.weigh(plain, mine, partial, unchecked), case.id
    finally:
        reference.close()


def test_a_known_source_is_still_not_read_again() -> None:
    cases = _cases(slice(None, None, 150))  # a case of every kind of profile is enough for the claim; the fast tier pays for each
    documents = _documents(cases)
    shown = _shown([*REFERENCE_COMMAND, "--rules", CLASSIC_HOUSE], cases, documents)
    reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    try:
        for case in cases:
            profile = case.profiles[0]
            first = reference.observe(case, profile, documents[profile], (), shown[case.id])
            again = reference.observe(case, profile, documents[profile], {first.source}, shown[case.id])
            assert first.source and again.ended == observe.KNOWN and again.source == first.source, case.id
            plain = reference.observe(case, profile, documents[profile], {first.source})
            assert plain.ended != observe.KNOWN  # another reply, another source: nothing is taken for it
    finally:
        reference.close()


@pytest.mark.slow
def test_an_errored_replay_keeps_the_reference_process() -> None:
    cases = _cases()
    house = variants.resolve(CLASSIC_HOUSE).to_document()  # under it one case deals again during an auction
    reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    fresh = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    try:
        reference._started()
        assert reference.impl is not None
        process = reference.impl.process.pid
        records = [reference.observe(case, case.profiles[0], house) for case in cases]
        assert any(record.ended.startswith("error: errored on 'deal'") for record in records)
        assert reference.impl is not None and reference.impl.process.pid == process
        for case, record in list(zip(cases, records))[::50]:
            assert fresh.observe(case, case.profiles[0], house) == record, case.id
    finally:
        reference.close()
        fresh.close()


def test_an_expectation_the_server_dropped_is_sent_again() -> None:
    cases = _cases(slice(None, 60, 6))
    documents = _documents(cases)
    shown = _shown([*REFERENCE_COMMAND, "--rules", CLASSIC_HOUSE], cases, documents)
    forgetful = observe.Pool(_server_keeping(1), 1, batch=True).observers[0]
    reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    try:
        for case in cases + cases:  # the second round names keys the server dropped long ago
            profile = case.profiles[0]
            want = reference.observe(case, profile, documents[profile], (), shown[case.id])
            got = forgetful.observe(case, profile, documents[profile], (), shown[case.id])
            assert got == want and not got.broken, case.id
        assert forgetful.impl is not None and forgetful.expects
    finally:
        forgetful.close()
        reference.close()


def test_an_implementation_without_the_extension_is_sent_no_expectation() -> None:
    cases = _cases(slice(None, 40, 4))
    documents = _documents(cases)
    shown = _shown([*REFERENCE_COMMAND, "--rules", CLASSIC_HOUSE], cases, documents)
    plain = observe.Pool(_server_keeping(1024, '["batch", "playout"]'), 1, batch=True).observers[0]
    reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
    sent: list[dict[str, Any]] = []
    try:
        plain._started()
        assert plain.impl is not None and plain.batch and not plain.expects
        plain.impl.on_message = lambda direction, command, message: sent.append(message) if direction == "command" else None
        for case in cases:
            profile = case.profiles[0]
            got = plain.observe(case, profile, documents[profile], (), shown[case.id])
            assert got == reference.observe(case, profile, documents[profile]), case.id
    finally:
        plain.close()
        reference.close()
    batches = [message for message in sent if message["cmd"] == "batch"]
    assert len(batches) == len(cases) and not any("expectation_key" in message or "expectation" in message for message in batches)


# --- the server's side ----------------------------------------------------------------------

def _case_requests() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The match and the other requests of a classic case with a refusal, a played deal and its scoring."""
    (case,) = [c for c in discover([CASES_DIR], select="classic/barrel/arrive-then-win-next-deal".__eq__)
               if isinstance(c, Transcript)]
    match = {"cmd": "match", "profile": "classic", "document": variants.resolve("classic").to_document(),
             "state": {**observe.DEFAULT_MATCH_STATE, **(case.match or {})}}
    requests: list[dict[str, Any]] = []
    for deal in case.deals:
        requests += [{"cmd": "deal", "dealer": deal["dealer"], "hands": deal["hands"], "talon": deal["talon"]}, {"cmd": "state"}]
        for step in deal["steps"]:
            requests += [{"cmd": "legal"}, {"cmd": "apply", "action": step["action"]}, {"cmd": "state"}]
    requests.append({"cmd": "apply", "action": "bid 100"})  # refused: the match or the deal is over
    return match, requests


def _replies_one_by_one(match: dict[str, Any], requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    server = Server()
    server._answer(match, server.handlers)
    return [json.loads(json.dumps(server._answer(request, server.handlers))) for request in requests]


def _batch(server: Server, match: dict[str, Any], seq: int, **fields: Any) -> dict[str, Any]:
    return server.handle_line(json.dumps({"cmd": "batch", "seq": seq, "states": "full", "requests": [match], **fields}))


def _spread(replies: list[Any]) -> list[Any]:
    """The batch replies after the match's, each count spread into that many None."""
    spread: list[Any] = []
    for item in replies[1:]:
        spread += [None] * item if type(item) is int else [item]
    return spread


def test_only_replies_that_are_the_same_json_value_are_counted() -> None:
    match, requests = _case_requests()
    replies = _replies_one_by_one(match, requests)
    refused = len(requests) - 1
    assert replies[refused]["ok"] is False
    expected = json.loads(json.dumps(replies))
    expected[refused]["refusal"]["message"] = "another engine's words"  # never compared
    states = [at for at, request in enumerate(requests) if request["cmd"] == "state"]
    tampered = {
        states[2]: lambda state: state.update(talon_shown=int(state["talon_shown"])),  # 0 for false
        states[4]: lambda state: state.update(scores=[float(score) for score in state["scores"]]),  # 0.0 for 0
        states[6]: lambda state: state.update(barrel=[dict(reversed(seat.items())) for seat in state["barrel"]]),
        states[8]: lambda state: state.update(hands=[list(reversed(hand)) for hand in state["hands"]]),
    }
    for at, change in tampered.items():
        change(expected[at]["state"])
    events = [at for at, reply in enumerate(expected) if reply.get("events")]
    first, last = expected[events[0]]["events"], expected[events[-1]]["events"]
    first[0] = dict(reversed(first[0].items()))  # the members of an event in another order
    last.pop()  # an event missing
    differing = sorted({*tampered, events[0], events[-1]})
    server = Server()
    answer = _batch(server, match, 1, expectation_key="case", expectation={"requests": requests, "replies": expected})
    spread = _spread(answer["replies"])
    assert len(spread) == len(requests)
    assert [at for at, reply in enumerate(spread) if reply is not None] == differing
    assert all(spread[at] == replies[at] for at in differing)  # the reference's own reply, in full
    again = _batch(server, match, 2, expectation_key="case")  # named alone, kept by the server
    assert again["replies"] == answer["replies"]
    request = {"cmd": "batch", "seq": 1, "states": "full", "requests": [match], "expectation_key": "case",
               "expectation": {"requests": requests, "replies": expected}}
    assert schemas.first_problem(schemas.command_validator("batch"), request) is None
    assert schemas.reply_problem("batch", answer) is None and schemas.reply_problem("batch", again) is None


def test_states_as_changes_count_the_same_replies() -> None:
    match, requests = _case_requests()
    replies = _replies_one_by_one(match, requests)
    expected: list[Any] = []
    last: dict[str, Any] | None = None
    for request, reply in zip(requests, replies):
        if request["cmd"] == "state" and last is not None:
            expected.append({"changes": {k: v for k, v in reply["state"].items() if last[k] != v}})
        else:
            expected.append(reply)
        last = reply["state"] if request["cmd"] == "state" else last
    expected[-1] = None  # no expectation: the reply comes in full
    line = json.dumps({"cmd": "batch", "seq": 1, "states": "changes", "requests": [match], "expectation_key": "c",
                       "expectation": {"requests": requests, "replies": expected}})
    answer = Server().handle_line(line)
    assert answer["replies"][1:] == [len(requests) - 1, {k: v for k, v in replies[-1].items()}]


def test_kept_requests_with_nothing_expected_are_answered_as_a_plain_batch() -> None:
    for seed in range(6):
        requests = random_requests(seed, 40)  # a match, a deal, random actions (some refused, some malformed)
        plain = Server().handle_line(json.dumps({"cmd": "batch", "seq": 1, "states": "changes", "requests": requests}))
        kept = {"requests": requests[1:] + [{"cmd": "legal", "extra": 1}, {"cmd": "stop"}], "replies": None}
        kept["replies"] = [None] * len(kept["requests"])
        nothing = Server().handle_line(json.dumps({"cmd": "batch", "seq": 1, "states": "changes", "requests": requests[:1],
                                                   "expectation_key": "k", "expectation": kept}))
        assert nothing["replies"][:len(plain["replies"])] == plain["replies"]
        assert "actions" in nothing["replies"][-2] and "unknown cmd 'stop'" in nothing["replies"][-1]["errored"]["message"]
    without_match = Server().handle_line(json.dumps({"cmd": "batch", "seq": 2, "requests": [], "expectation_key": "k",
                                                     "expectation": {"requests": [{"cmd": "legal"}], "replies": [None]}}))
    assert "no match" in without_match["replies"][0]["errored"]["message"]


@pytest.mark.parametrize("fields, message", [
    ({"expectation_key": "nobody"}, "unknown expectation_key 'nobody': send the expectation with it first"),
    ({"expectation_key": 7, "expectation": {"requests": [], "replies": []}}, "'expectation_key' must be a string"),
    ({"expectation": {"requests": [], "replies": []}}, "an 'expectation' needs an 'expectation_key'"),
    ({"expectation_key": "k", "expectation": []}, "'expectation' must be an object {requests, replies}"),
    ({"expectation_key": "k", "expectation": {"requests": [{"cmd": "legal"}], "replies": []}},
     "expectation 'replies' must be a list of 1 replies (or nulls)"),
    ({"expectation_key": "k", "expectation": {"requests": ["legal"], "replies": [None]}},
     "expectation 'requests' must be a list of request objects"),
    ({"expectation_key": "k", "expectation": {"requests": [{"cmd": "legal"}], "replies": [["bid 100"]]}},
     "an expected reply must be an object or null"),
    ({"expectation_key": "k", "expectation": {"requests": [{"cmd": "state"}], "replies": [{"changes": {}}]}},
     "an expected state reply must be {\"state\": {...}}"),
])
def test_a_malformed_or_unknown_expectation_is_an_error_before_anything_is_carried_out(fields: dict[str, Any],
                                                                                      message: str) -> None:
    server = Server()
    match = {"cmd": "match", "profile": "classic", "document": variants.resolve("classic").to_document()}
    answer = _batch(server, match, 5, **fields)
    assert answer["seq"] == 5 and message in answer["errored"]["message"]
    assert server.state is None  # not even the match was carried out


# --- the client's side ----------------------------------------------------------------------

def _an_expectation() -> expectation.Expectation:
    cases = _cases(slice(1))
    documents = _documents(cases)
    record = _shown(list(REFERENCE_COMMAND), cases, documents)[cases[0].id]
    from conformance.oracle import batch

    written = expectation.written(cases[0].deals, batch.case_requests(cases[0].deals), record)
    assert written is not None and all(written.expected)
    return written


@pytest.mark.parametrize("replies, error", [
    ([{"ok": True}, 0], "a count of 0"),
    ([{"ok": True}, 10_000], "a count of 10000"),
    ([2, {"ok": True}], "a count of 2 replies as expected at request 1"),
])
def test_a_count_where_nothing_was_expected_is_a_protocol_failure(replies: list[Any], error: str) -> None:
    with pytest.raises(ProtocolFailure, match=error):
        expectation.expanded(replies, _an_expectation(), 1)


def test_true_is_no_count() -> None:
    assert expectation.expanded([{"ok": True}, True], _an_expectation(), 1) == [{"ok": True}, True]
