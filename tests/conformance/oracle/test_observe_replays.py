"""``Pool.replay``: the reference replaying cases with a few batches written ahead of the
replies read gives the very records ``observe`` gives one case after the other, errored and
broken ones included (a document it refuses, a deal it ends elsewhere, an expectation it
dropped, a process that dies on some cases)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import variants
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import evidence, observe
from tests.support.paths import FIXTURES

HOUSE = FIXTURES / "house"
CLASSIC_HOUSE = str(HOUSE / "many-knobs.yaml")  # under it one case deals again during an auction

Item = tuple[Transcript, dict[str, Any], observe.CaseRecord | None]


def _reference(code: str) -> list[str]:
    """The reference as a process changed by ``code`` (run with ``s``, its server module)."""
    return [sys.executable, "-I", "-c", f"import os, sys, reference_impl.server as s\n{code}\nsys.exit(s.main())"]


KEEPING_TWO = _reference("s.MAX_EXPECTATIONS = 2")  # drops expectations the oracle believes it holds
DYING = _reference("rules = s.Server._rules\n"  # dies on every match under the house rules
                   "def dying(self, request):\n"
                   "    kept = rules(self, request)\n"
                   "    if kept.auction.max_bid == 390:\n"
                   "        os._exit(3)\n"
                   "    return kept\n"
                   "s.Server._rules = dying")


@pytest.fixture(scope="module")
def items() -> list[Item]:
    """Classic cases, each under one of: classic, the house rules, rules the reference refuses;
    every other one with the house implementation's record as its expectation."""
    corpus = [case for case in discover([CASES_DIR, GENERATED_DIR]) if isinstance(case, Transcript)]
    cases = [case for case in corpus if "classic" in case.profiles][:90]
    cases[44:44] = [case for case in corpus if case.id.endswith("/four-nines-same-dealer-deals-again")]  # at a house place
    classic = variants.resolve("classic").to_document()
    house = variants.resolve(CLASSIC_HOUSE).to_document()
    refused = {**classic, "rules": {**classic["rules"], "auction": {**classic["rules"]["auction"], "opening_bid": "x"}}}
    implementation = observe.Pool([*REFERENCE_COMMAND, "--rules", CLASSIC_HOUSE], 2)
    try:
        records = implementation.map(cases, lambda o, c: o.observe(c, "classic", classic))
    finally:
        implementation.close()
    shown = [evidence.shown(record, evidence.Partial())[0] for record in records]
    documents = [classic, house, classic, refused, house]
    return [(case, documents[at % len(documents)], shown[at] if at % 2 else None) for at, case in enumerate(cases)]


def _ask(item: Item) -> observe.Replay:
    case, document, expected = item
    return observe.Replay(case, "classic", document, (), expected)


@pytest.mark.slow
@pytest.mark.parametrize("command", [list(REFERENCE_COMMAND), KEEPING_TWO, DYING], ids=["reference", "keeping-two", "dying"])
@pytest.mark.parametrize("ahead", [1, 3])
def test_replays_are_the_records_observe_makes_one_by_one(items: list[Item], command: list[str], ahead: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    one_by_one = observe.Pool(command, 1, batch=True)
    try:
        wanted = [one_by_one.observers[0].observe(*_ask(item)) for item in items]
    finally:
        one_by_one.close()
    monkeypatch.setattr(observe, "IN_FLIGHT", ahead)
    written_ahead = observe.Pool(command, 1, batch=True)
    try:
        got = written_ahead.replay(items, _ask)
        again = written_ahead.replay(items, _ask)  # every document and expectation held now
    finally:
        written_ahead.close()
    assert any(record.ended.startswith("error: errored on 'match'") for record in wanted)
    if command is DYING:
        assert any("closed its output" in record.ended for record in wanted)
    else:
        assert any(record.ended.startswith("error: errored on 'deal'") for record in wanted)
    assert got == wanted
    assert [record.source for record in got] == [record.source for record in wanted]
    assert [record.ended for record in again] == [record.ended for record in wanted]


@pytest.mark.slow
def test_two_reference_processes_replay_as_one(items: list[Item]) -> None:
    one, two = observe.Pool(REFERENCE_COMMAND, 1, batch=True), observe.Pool(REFERENCE_COMMAND, 2, batch=True)
    try:
        assert two.replay(items, _ask) == one.replay(items, _ask)
    finally:
        one.close()
        two.close()
