"""Record comparison with its fast paths gives exactly what the plain walk gives.

``runner.same`` and ``runner.equal`` rule pairs out with ``==`` and settle equal pairs by
their ``repr`` before walking them; ``observe.compare`` keeps a state field's verdict
while both sides hold the very objects of the step before, and passes over replies that are
the same to the last type. The plain versions (as the runner had them before) are written
out here, and both are run on random JSON values built to be near each other (60 against
60.0, true against 1, members in another order, NaN, -0.0) and on real records of the
reference under other rules, some of their values changed the same way.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import variants
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
from conformance.harness import runner
from conformance.harness.findings import Finding
from conformance.harness.process import Answer
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import observe


def plain_same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return bool(expected == actual)
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            plain_same(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and plain_same(v, actual[k]) for k, v in expected.items())
    return type(expected) is type(actual) and bool(expected == actual)


def plain_equal(one: Any, other: Any) -> bool:
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(plain_equal(one[k], other[k]) for k in one)
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(plain_equal(a, b) for a, b in zip(one, other))
    return plain_same(one, other)


NAN = float("nan")
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, -0.0, 1.0, 2.5, 60.0, NAN, math.inf]),
                    st.integers(), st.floats(), st.sampled_from(["", "a", "60", "true", "nan", "banana"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.sampled_from("abcd"), inner, max_size=4)),
                      max_leaves=12)


def twin(draw: Callable[[Any], Any], value: Any) -> Any:
    """A value near ``value``: the same, or with numbers, bools and members swapped for ones
    ``==`` (or ``equal``) may take for them, or a member more or less."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return value  # the very object
    if choice == 1:
        return draw(values)
    if isinstance(value, bool):
        return draw(st.sampled_from([value, int(value), float(value), not value]))
    if isinstance(value, int):
        return draw(st.sampled_from([value, float(value), bool(value), value + 1]))
    if isinstance(value, float):
        return draw(st.sampled_from([value, -value, value if math.isnan(value) else int(value) if math.isfinite(value) else value]))
    if isinstance(value, list):
        items = [twin(draw, item) for item in value]
        return items if choice > 2 or not items else items[:-1]
    if isinstance(value, dict):
        members = [(k, twin(draw, v)) for k, v in value.items()]
        if choice == 3:
            members.reverse()  # another member order
        if choice == 4:
            members.append(("z", draw(scalars)))
        if choice == 5 and members:
            members.pop(0)
        return dict(members)
    return copy.copy(value)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_same_and_equal_agree_with_the_plain_walk(data: st.DataObject) -> None:
    one = data.draw(values)
    other = twin(data.draw, one)
    for a, b in ((one, other), (other, one)):
        assert runner.equal(a, b) is plain_equal(a, b), (a, b)
        assert runner.same(a, b) is plain_same(a, b), (a, b)
        assert runner.equal([a], [b]) is plain_equal([a], [b]), (a, b)
        assert runner.equal({"k": a}, {"k": b}) is plain_equal({"k": a}, {"k": b}), (a, b)


def test_the_number_rules_hold() -> None:
    """The rules in the docstrings, as worked cases: 60 is 60.0, a bool is never a number,
    NaN is not itself even as one object, and ``same`` reads mappings on the expected keys."""
    assert runner.equal(60, 60.0) and runner.equal([{"a": 60}], [{"a": 60.0}])
    assert not runner.equal(True, 1) and not runner.equal([True], [1]) and not runner.equal({"a": 0}, {"a": False})
    assert not runner.equal([NAN], [NAN]) and not runner.equal(NAN, NAN)
    assert runner.equal({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert runner.same({"a": 1}, {"a": 1.0, "b": 2}) and not runner.equal({"a": 1}, {"a": 1.0, "b": 2})
    assert runner.identical([1, {"a": "x"}], [1, {"a": "x"}]) and not runner.identical([1], [1.0])
    assert not runner.identical((1,), [1]) and not runner.identical({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not runner.identical([10 ** 5000], [10 ** 5000]) and runner.equal([10 ** 5000], [10 ** 5000])


# --- compare on real records -------------------------------------------------------------

def plain_compare(expected: observe.CaseRecord, actual: observe.CaseRecord, monkeypatch: pytest.MonkeyPatch) -> list[Finding]:
    """``compare`` with no fast path: the plain equality, every field and reply compared."""
    fast_details = observe._state_details
    with monkeypatch.context() as patched:
        patched.setattr(observe, "equal", plain_equal)
        patched.setattr(observe, "_same_reply", lambda want, got: False)
        patched.setattr(observe, "_state_details", lambda want, got, before=None, changed=None: fast_details(want, got, None))
        return observe.compare(expected, actual)


def rules_changed(document: dict[str, Any], section: str, knob: str, value: Any) -> dict[str, Any]:
    rules = copy.deepcopy(document["rules"])
    rules[section][knob] = value
    return {**document, "rules": rules}


@pytest.fixture(scope="module")
def records() -> Iterator[dict[str, list[observe.CaseRecord]]]:
    """Records of the 8 longest classic cases under classic and three other rule sets: read in
    one batch (unchanged fields shared from step to step) and step by step (every value its
    own object)."""
    cases = [c for c in discover([CASES_DIR, GENERATED_DIR]) if isinstance(c, Transcript) and c.profiles[0] == "classic"]
    cases = sorted(cases, key=lambda c: -sum(len(deal["steps"]) for deal in c.deals))[:8]
    classic = variants.resolve("classic").to_document()
    documents = {"classic": classic, "capped": rules_changed(classic, "auction", "max_bid", 300),
                 "must beat": rules_changed(classic, "play", "must_beat", True),
                 "marriages": rules_changed(classic, "marriages", "values", {"S": 100, "C": 80, "D": 60, "H": 40})}
    batched, stepped = observe.Pool(REFERENCE_COMMAND, batch=True), observe.Pool(REFERENCE_COMMAND)
    try:
        stepped.observers[0]._started()
        stepped.observers[0].batch = False  # read step by step though it offers the batch
        found = {name: batched.map(cases, lambda o, c: o.observe(c, "classic", document)) for name, document in documents.items()}
        found["stepped"] = stepped.map(cases, lambda o, c: o.observe(c, "classic", classic))
    finally:
        batched.close()
        stepped.close()
    yield found


@pytest.mark.slow
@pytest.mark.parametrize("told", [False, True])
def test_compare_on_real_records_is_the_plain_compare(records: dict[str, list[observe.CaseRecord]],
                                                      monkeypatch: pytest.MonkeyPatch, told: bool) -> None:
    """``told``: the implementation's records with their changes told (``with_changes``, as fit
    weighs them) against the reference's read from a batch: only the fields changed on either
    side are looked at again, and the differences are still those of the plain compare."""
    others = {name: [observe.with_changes(r) for r in found] if told else found for name, found in records.items()}
    differing = 0
    for one in records.values():
        for other in others.values():
            for expected, actual in zip(one, other):
                fast = observe.compare(expected, actual)
                assert repr(fast) == repr(plain_compare(expected, actual, monkeypatch)), expected.case_id
                differing += bool(fast)
    assert differing > 20  # the rule sets do tell the records apart


def changed(record: observe.CaseRecord, draw: Callable[[Any], Any]) -> observe.CaseRecord:
    """The record with some values swapped for near ones; an object shared by several steps
    stays shared (changed once), as a record built from state changes shares it."""
    swapped: dict[int, Any] = {}

    def near(value: Any, odds: int = 5) -> Any:
        if id(value) not in swapped:
            swapped[id(value)] = twin(draw, value) if draw(st.integers(0, odds)) == 0 else value
        return swapped[id(value)]

    steps = []
    for step in record.steps:
        state = {key: near(value) for key, value in step.state.items() if draw(st.integers(0, 40))}
        if not draw(st.integers(0, 30)):
            state["extra"] = draw(scalars)
        events = tuple(near(e, 1) for e in step.reply.events)
        reply = observe.Reply(step.reply.accepted, events, step.reply.refusal)
        if not draw(st.integers(0, 30)):
            reply = draw(st.sampled_from([observe.Reply(False), observe.Reply(not reply.accepted, events, ("illegal", "x"))]))
        steps.append(observe.StepRecord(step.deal, step.step, step.action, step.legal, reply, state))
    return observe.CaseRecord(record.case_id, tuple(steps), record.ended)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])  # a shrink of whole records takes minutes
@given(st.data())
def test_compare_on_changed_records_is_the_plain_compare(records: dict[str, list[observe.CaseRecord]],
                                                         monkeypatch: pytest.MonkeyPatch, data: st.DataObject) -> None:
    names = sorted(records)
    index = data.draw(st.integers(0, len(records["classic"]) - 1))
    expected = records[data.draw(st.sampled_from(names))][index]
    actual = changed(records[data.draw(st.sampled_from(names))][index], data.draw)
    told = observe.with_changes(actual)  # as fit weighs an implementation's record
    for one, other in ((expected, actual), (actual, expected), (expected, told), (told, expected)):
        assert repr(observe.compare(one, other)) == repr(plain_compare(one, other, monkeypatch))


# --- fields that changed, and records read from the same reply ----------------------------

def _state_step(step: int, state: dict[str, Any], changed: frozenset[str] | None = None) -> observe.StepRecord:
    return observe.StepRecord(1, step, None if step == 0 else "pass", None, observe.Reply(True), state, changed)


def test_a_field_changed_back_or_gone_is_compared_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bid the implementation changes and changes back, and a field it shows once: each
    step compares what changed on either side, the reference's unchanged throughout."""
    unchanged = frozenset[str]()
    ref = observe.CaseRecord("c", (_state_step(0, {"phase": "auction", "bid": 100}),
                                   _state_step(1, {"phase": "auction", "bid": 100}, unchanged),
                                   _state_step(2, {"phase": "auction", "bid": 100}, unchanged)))
    impl = observe.with_changes(observe.CaseRecord("c", (_state_step(0, {"phase": "auction", "bid": 100, "extra": 1}),
                                                         _state_step(1, {"phase": "auction", "bid": 110}),
                                                         _state_step(2, {"phase": "auction", "bid": 100}))))
    assert [step.changed for step in impl.steps] == [None, {"bid", "extra"}, {"bid"}]
    assert impl.steps[2].state["phase"] is impl.steps[0].state["phase"]
    found = observe.compare(ref, impl)
    assert [(d.step, d.detail) for d in found] == [(0, "state.extra"), (1, "state.bid")]
    assert repr(found) == repr(plain_compare(ref, impl, monkeypatch))


def test_a_batch_record_tells_the_fields_changed_since_the_step_before(records: dict[str, list[observe.CaseRecord]]) -> None:
    told = 0
    for name, found in records.items():
        for record in found:
            for before, step in zip(record.steps, record.steps[1:]):
                if step.changed is None:
                    continue
                told += 1
                assert step.state.keys() <= before.state.keys() | step.changed
                assert all(step.state[key] is before.state[key] for key in step.state.keys() - step.changed)
            assert name == "stepped" or record.steps[-1].changed is not None  # read step by step: not told
    assert told > 100


def test_records_share_a_source_only_when_read_from_the_same_reply(records: dict[str, list[observe.CaseRecord]]) -> None:
    by_source: dict[tuple[str, bytes], observe.CaseRecord] = {}
    for name, found in records.items():
        for record in found:
            assert bool(record.source) == (name != "stepped")  # step by step, no one reply holds the record
            if record.source:
                assert by_source.setdefault((record.case_id, record.source), record) == record
    assert len(records["classic"]) < len(by_source) < 4 * len(records["classic"])  # some rules leave a case alone


def test_a_source_is_the_reply_after_its_seq_and_whether_reasons_are_told() -> None:
    observer = observe.BatchObserver(REFERENCE_COMMAND)
    told = observer._source(Answer(b'{"seq":3,"replies":[]}', {"seq": 3, "replies": []}))
    assert told and told == observer._source(Answer(b'{"seq":40,"replies":[]}', {"seq": 40, "replies": []}))
    assert told != observer._source(Answer(b'{"seq":3,"replies":[{}]}', {"seq": 3, "replies": [{}]}))
    assert observer._source(Answer(b'{"replies":[],"seq":3}', {"seq": 3, "replies": []})) == b""
    observer.reasons = False
    assert observer._source(Answer(b'{"seq":3,"replies":[]}', {"seq": 3, "replies": []})) not in (told, b"")


def test_a_reply_of_a_known_source_is_not_read_again() -> None:
    case = next(c for c in discover([CASES_DIR]) if isinstance(c, Transcript) and c.id.startswith("classic/auction/"))
    classic = variants.resolve("classic").to_document()
    pool = observe.Pool(REFERENCE_COMMAND, batch=True)
    try:
        observer = pool.observers[0]
        full = observer.observe(case, "classic", classic)
        again = observer.observe(case, "classic", classic, {full.source})
        other = observer.observe(case, "classic", rules_changed(classic, "auction", "opening_bid", 120), {full.source})
    finally:
        pool.close()
    assert full.steps and full.ended != observe.KNOWN
    assert again == observe.CaseRecord(case.id, (), observe.KNOWN) and again.source == full.source
    assert other.steps and other.source != full.source
