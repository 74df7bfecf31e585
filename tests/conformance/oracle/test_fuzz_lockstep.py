"""The lockstep layer of ``thousand fuzz`` and ``thousand fit`` (issue 13): pipelined
requests keep every guarantee of one request at a time (per-reply deadline, clipping,
garbage and crashes reported), an implementation that fails is a finding and never hangs
the fuzzer, and the byte-equality shortcut never hides a difference."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import variants
from conformance.oracle import fuzz, observe
from conformance.harness.process import Implementation, Timeout
from conformance.harness.runner import DEFAULT_MATCH_STATE, REFERENCE_COMMAND
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from tests.fake_impls.toy_corpus import fake
from reference_impl.server import MAX_LINE, read_lines, serve
from tests.support.paths import FAKE_IMPLS

pytestmark = pytest.mark.slow  # every test runs fuzz against doubles in subprocesses

LOCKSTEP = FAKE_IMPLS / "lockstep.py"
CLASSIC = variants.resolve("classic").to_document()
HANDS = [["AS", "10S", "KS", "QS", "JS", "9S", "AC"], ["10C", "KC", "QC", "JC", "9C", "AD", "10D"],
         ["KD", "QD", "JD", "9D", "AH", "10H", "KH"]]
TALON = ["QH", "JH", "9H"]


def lockstep(mode: str, when: int = 3) -> list[str]:
    return [sys.executable, str(LOCKSTEP), mode, str(when)]


# --- the process layer -------------------------------------------------------------------

def test_a_pipelined_batch_larger_than_both_pipes_is_answered_in_order() -> None:
    # 3000 requests (~75 KB) and their replies (~3 MB) overflow both pipes: the runner must
    # read while it writes, or both sides wait for each other for ever
    impl = Implementation(REFERENCE_COMMAND, 20.0)
    try:
        impl.request("start", version=1)
        impl.request("match", profile="classic", document=CLASSIC, state=DEFAULT_MATCH_STATE)
        impl.request("deal", dealer=0, hands=HANDS, talon=TALON)
        posted = impl.post([("state", {}), ("legal", {})] * 1500)
        answers = impl.collect(posted)
        assert [a.reply["seq"] for a in answers] == [p.seq for p in posted] == list(range(4, 3004))
        assert all(a.line.endswith(b"\n") and a.line.startswith(b'{"seq":') for a in answers)
        assert answers[0].reply["state"]["phase"] == "auction" and "bid 100" in answers[1].reply["actions"]
        assert impl.request("stop") == {"seq": 3004, "ok": True}
    finally:
        impl.kill()


def test_a_batch_the_implementation_never_reads_times_out_per_reply() -> None:
    hostile = [sys.executable, str(Path(fake("ok")[1]).parent / "hostile.py"), "no_read"]
    impl = Implementation(hostile, 1.0)
    try:
        impl.request("start", version=1)
        posted = impl.post([("legal", {"padding": "x" * 100_000})] * 20)
        started = time.monotonic()
        with pytest.raises(Timeout, match="did not read the 'legal' request within 1 s"):
            impl.collect(posted)
        assert time.monotonic() - started < 5  # the first reply's deadline, not twenty of them
    finally:
        impl.kill()


def test_pipelined_replies_from_a_hanging_implementation_end_at_the_deadline() -> None:
    impl = Implementation(fake("hang_on_apply"), 1.0)
    try:
        impl.request("start", version=1)
        posted = impl.post([("apply", {"action": "play AS"}), ("state", {}), ("legal", {})])
        with pytest.raises(Timeout, match="no reply to 'apply' within 1 s"):
            impl.collect(posted)
    finally:
        impl.kill()


# --- the reference server's reading ------------------------------------------------------

class Chunks(io.RawIOBase):
    """Raw bytes that arrive in the given chunks, one read at a time (as from a pipe)."""

    def __init__(self, chunks: list[bytes], log: list[str]) -> None:
        self.chunks, self.log = list(chunks), log

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.log.append("read")
        chunk = self.chunks.pop(0) if self.chunks else b""
        if len(chunk) > len(buffer):  # the rest comes with the next read
            chunk, rest = chunk[:len(buffer)], chunk[len(buffer):]
            self.chunks.insert(0, rest)
        buffer[:len(chunk)] = chunk
        return len(chunk)


def pipe(chunks: list[bytes], log: list[str] | None = None) -> io.BufferedReader:
    return io.BufferedReader(Chunks(chunks, [] if log is None else log))


def test_lines_are_joined_across_chunks_and_the_flush_comes_only_before_a_wait() -> None:
    log: list[str] = []
    stream = pipe([b'{"a":1}\n{"b"', b':2}\n{"c":3}\n{"d":4}\n', b"tail"], log)
    lines = []
    for line in read_lines(stream, lambda: log.append("flush")):
        log.append("line")
        lines.append(line)
    assert lines == [b'{"a":1}\n', b'{"b":2}\n', b'{"c":3}\n', b'{"d":4}\n', b"tail"]
    assert log == ["flush", "read", "line", "flush", "read", "line", "line", "line", "flush", "read",
                   "flush", "read", "line"]


def test_an_over_long_line_is_one_none_wherever_the_chunks_cut_it() -> None:
    long = b"x" * (MAX_LINE + 1)
    stream = pipe([b'{"a":1}\n' + long[:1000], long[1000:] + b"\n", b'{"b":2}\n', b"y" * (MAX_LINE + 1)])
    assert list(read_lines(stream)) == [b'{"a":1}\n', None, b'{"b":2}\n', None]
    exact = b"z" * MAX_LINE
    assert list(read_lines(pipe([exact + b"\n", exact]))) == [exact + b"\n", exact]


class Writes(io.StringIO):
    """An output that counts its writes (an unbuffered stdout makes each one a system call)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def write(self, text: str) -> int:
        self.calls += 1
        return super().write(text)


def test_requests_at_hand_get_their_replies_in_one_write() -> None:
    out = Writes()
    serve(io.BytesIO(b'{"cmd":"start","seq":1,"version":1}\n\n{"cmd":"legal","seq":2}\n{"cmd":"stop","seq":3}\n'), out)
    replies = out.getvalue().splitlines()
    assert len(replies) == 3 and replies[2] == '{"seq":3,"ok":true}' and "send 'match' first" in replies[1]
    assert out.calls == 1
    out = Writes()
    serve(pipe([b'{"cmd":"legal","seq":1}\n{"cmd":"legal","seq":2}\n', b'{"cmd":"legal","seq":3}\n']), out)
    assert out.calls == 2 and len(out.getvalue().splitlines()) == 3  # the first two before waiting for the third


# --- lockstep play -----------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "words"), [
    ("garbage", "not JSON"),
    ("crash", "exited with code 5"),
    ("errored", "errored on 'apply'"),
    ("deep", "nested too deeply"),
    ("huge", f"longer than {8 * 1024 * 1024} bytes"),
])
def test_an_implementation_that_fails_is_a_divergence_not_an_error(mode: str, words: str) -> None:
    outcome = fuzz.fuzz(lockstep(mode, 1), "classic", CLASSIC, deals=4, seed="1", timeout=5.0)
    assert outcome.error == "" and outcome.divergence is not None
    first = outcome.divergence.findings[0]
    assert outcome.divergence.finding.signature == "record: the implementation failed" and words in first.actual
    assert len(first.actual) < 1000  # a reply is quoted in a clipped excerpt only


def test_a_hanging_implementation_ends_its_trial_at_the_deadline() -> None:
    pair = fuzz.Pair(lockstep("hang", 2), REFERENCE_COMMAND, 1.0)
    try:
        started = time.monotonic()
        scenario, divergence = fuzz.random_trial(pair, "classic", CLASSIC, "1", 0)
        assert time.monotonic() - started < 8
        assert divergence is not None and "no reply to 'apply' within 1 s" in divergence.findings[0].actual
        assert [len(deal.actions) for deal in scenario.deals] == [2]  # cut at the action that hung
        implementation, reference = pair.sides
        assert implementation.impl is None  # replaced for the next trial
        assert reference.impl is not None and reference.impl.process.poll() is None  # its replies were all read
        _, again = fuzz.random_trial(pair, "classic", CLASSIC, "1", 0)  # the same trial, on a fresh process
        assert again is not None and again.findings == divergence.findings
    finally:
        pair.close()


def test_a_skipped_action_ends_its_trial_and_the_run_goes_on() -> None:
    """Issue 48 item 2: a skip used to end the whole run (exit 5); it is unchecked, as verify
    and fit count it: that trial ends without a finding, and the run plays the deals asked."""
    outcome = fuzz.fuzz(lockstep("skip"), "classic", CLASSIC, deals=4, seed="1", timeout=5.0)
    assert outcome.error == "" and outcome.divergence is None and outcome.deals_played == 4
    assert sum(outcome.skipped_trials.values()) == 1 and outcome.trials > 1, outcome.skipped_trials
    assert all(said.startswith("apply ") and said.endswith("skipped: no such rule here") for said in outcome.skipped_trials)
    assert not outcome.nothing_checked and fuzz.exit_code(outcome) == 0


def test_a_short_timeout_is_the_implementations_and_never_times_out_the_reference() -> None:
    """Issue 52 row 12: ``--timeout`` just above the minimum timed out the reference, and the run
    stopped on "the reference failed". The timeout is for the implementation under test; the
    reference (trusted) waits its own, which does not shrink with it: here it takes 0.6 s a
    deal, over the 0.3 s the implementation is given, and the run plays its deals."""
    slow = [sys.executable, str(FAKE_IMPLS / "slow_reference.py"), "0.6"]
    outcome = fuzz.fuzz(list(REFERENCE_COMMAND), "classic", CLASSIC, deals=2, seed="1", timeout=0.3, reference=slow)
    assert outcome.error == "" and outcome.deals_played == 2 and not outcome.findings, outcome.error


def test_the_same_values_written_differently_are_no_divergence() -> None:
    # the states' keys in another order: not the reference's bytes, so the deep comparison runs
    outcome = fuzz.fuzz(lockstep("reordered"), "classic", CLASSIC, deals=3, seed="2", timeout=5.0)
    assert outcome.error == "" and outcome.divergence is None and outcome.deals_played >= 3


def turn(state: dict[str, Any], legal: tuple[str, ...], lines: tuple[bytes, ...]) -> observe.Turn:
    return observe.Turn(observe.Reply(True), state, legal, lines)


def test_the_byte_shortcut_only_skips_the_comparison_of_identical_lines() -> None:
    step = observe.StepRecord(1, 1, "pass", ("bid 100", "pass"), observe.Reply(True), {"phase": "auction", "to_act": 1})
    want = turn(step.state, ("pass",), (b"r", b"s", b"l"))
    before = (turn({}, ("bid 100", "pass"), (b"", b"", b"L")), turn({}, ("bid 100", "pass"), (b"", b"", b"L")))
    assert fuzz._compare(step, turn({"to_act": 1, "phase": "auction"}, ("pass",), (b"r", b"s2", b"l")), want, before,
                         "auction") == ()
    moved = fuzz._compare(step, turn({"phase": "auction", "to_act": 2}, ("pass",), (b"r", b"s3", b"l")), want, before,
                          "auction")
    assert [f.signature for f in observe.findings(moved)] == ["state.to_act"]
    short = (turn({}, ("pass",), (b"", b"", b"L2")), before[1])
    missing = observe.findings(fuzz._compare(step, want, want, short, "auction"))
    assert [f.signature for f in missing] == ["legal[auction]: missing bids above the highest other amounts"]


# --- observing cases ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def classic_cases() -> list[Any]:
    wanted = ("classic/auction/", "classic/play/", "classic/bolts/")
    cases = [c for c in discover([CASES_DIR], select=lambda name: name.startswith(wanted)) if isinstance(c, Transcript)]
    return [c for c in cases if "classic" in c.profiles][:8]


def observers(command: list[str] | tuple[str, ...], timeout: float = 10.0) -> Iterator[observe.Observer]:
    for kind in (observe.Observer, observe.BatchObserver):
        yield kind(command, timeout)


def test_a_case_written_at_once_is_observed_as_step_by_step(classic_cases: list[Any]) -> None:
    assert classic_cases
    step, batch = observers(REFERENCE_COMMAND)
    try:
        for case in classic_cases:
            one, other = step.observe(case, "classic", CLASSIC), batch.observe(case, "classic", CLASSIC)
            assert one == other and one.ended in ("complete", "left_transcript") and one.steps
    finally:
        step.close()
        batch.close()


def test_a_case_that_leaves_its_transcript_early_is_not_an_error_when_written_at_once() -> None:
    # under a changed give-up moment these three-deal cases leave the transcript in an early
    # deal; the later deal requests, already written, are refused, and must not count
    names = ("polish/deal/dealer-passes-left-over-three-deals", "polish/giving_up/second-bomb-in-a-later-deal")
    cases = [c for c in discover([CASES_DIR], select=lambda name: name in names) if isinstance(c, Transcript)]
    document = variants.resolve("polish").to_document()
    document["rules"]["giving_up"]["moment"] = "before_exchange"
    step, batch = observers(REFERENCE_COMMAND)
    try:
        assert len(cases) == 2
        for case in cases:
            one, other = step.observe(case, "polish", document), batch.observe(case, "polish", document)
            assert one == other and one.ended == "left_transcript" and len(one.steps) > 1
    finally:
        step.close()
        batch.close()


def test_a_batch_observer_on_a_hanging_process_ends_with_an_error(classic_cases: list[Any]) -> None:
    batch = observe.BatchObserver(lockstep("hang", 1), 1.0)
    try:
        batch.ask("start", version=1)  # started: the time below is the deadline's only
        started = time.monotonic()
        record = batch.observe(classic_cases[0], "classic", CLASSIC)
        assert record.ended.startswith("error: no reply to 'apply' within 1 s") and time.monotonic() - started < 5
        assert batch.impl is None  # killed, restarted for the next case
    finally:
        batch.close()
