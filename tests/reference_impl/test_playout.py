"""The ``playout`` extension (docs/protocol.md "Extensions"): the reference plays a random deal
by the documented choice rule in one request, and its replies are those a ``batch`` of the
same requests gets; fuzz drives the implementation with the actions it chose."""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

import pytest

import variants
from conformance.oracle import fuzz, positions
from conformance.harness.runner import DEFAULT_MATCH_STATE, REFERENCE_COMMAND
from reference_impl.playout import Chooser, Stream
from reference_impl.server import Server
from tests.support.paths import FAKE_IMPLS

CLASSIC = variants.resolve("classic").to_document()
DECK = [rank + suit for suit in "SCDH" for rank in ("A", "10", "K", "Q", "J", "9")]


def test_the_stream_is_splitmix64() -> None:
    # the published outputs of splitmix64 from the state 0 (Vigna's splitmix64.c)
    stream = Stream(0)
    assert [stream.draw(1 << 64) for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert Stream(0).draw(100) == 0xE220A8397B1DCDAF % 100


def test_a_lone_legal_action_is_picked_and_none_stops() -> None:
    chooser = Chooser(5, ["any", "any", "any"], [])
    assert chooser.choose([], {}) is None
    state = {"phase": "claim", "to_act": 0, "hands": [[], [], []]}
    # from a one-action set the choice is that action, or (the 8% draw) one outside the set
    picked = {chooser.choose(["no_redeal"], state) for _ in range(200)}
    assert "no_redeal" in picked and "redeal" in picked and len(picked) <= 9


def _server() -> Server:
    server = Server()
    server.handle_line(json.dumps({"cmd": "start", "seq": 1, "version": 1}))
    return server


def _match(server: Server, seq: int) -> None:
    reply = server.handle_line(json.dumps({"cmd": "match", "seq": seq, "profile": "classic", "document": CLASSIC,
                                           "state": DEFAULT_MATCH_STATE}))
    assert reply.get("ok") is True, reply


def test_a_playout_answers_as_a_batch_of_its_requests_and_follows_the_legal_sets() -> None:
    rng = random.Random(3)
    server, other = _server(), _server()
    for number in range(30):
        deck = DECK[:]
        rng.shuffle(deck)
        deal = {"dealer": number % 3, "hands": [deck[0:7], deck[7:14], deck[14:21]], "talon": deck[21:]}
        _match(server, 2)
        played = server.handle_line(json.dumps({"cmd": "playout", "seq": 3, "deal": deal, "seed": number,
                                                "styles": ["any", "low", "long"], "favoured": [120],
                                                "max_actions": 120, "states": "changes"}))
        actions, replies = played["actions"], played["replies"]
        requests = [{"cmd": "deal", **deal}, {"cmd": "state"}, {"cmd": "legal"}]
        for action in actions:
            requests += [{"cmd": "apply", "action": action}, {"cmd": "state"}, {"cmd": "legal"}]
        _match(other, 2)
        batched = other.handle_line(json.dumps({"cmd": "batch", "seq": 3, "states": "changes", "requests": requests}))
        assert batched["replies"] == replies
        assert len(replies) == 3 + 3 * len(actions)
        # an action is refused exactly when the legal set before it lacks it
        for index, action in enumerate(actions):
            legal, applied = replies[3 * index + 2]["actions"], replies[3 * index + 3]
            assert applied["ok"] is (action in legal), (action, legal)
        last: dict[str, Any] = {}
        for reply in replies:
            last.update(reply.get("state", reply.get("changes", {})))
        assert last["phase"] in ("deal_over", "match_over") or len(actions) == 120


def test_playout_requests_are_checked() -> None:
    server = _server()
    _match(server, 2)
    deal = {"dealer": 0, "hands": [DECK[0:7], DECK[7:14], DECK[14:21]], "talon": DECK[21:]}
    good = {"cmd": "playout", "seq": 3, "deal": deal, "seed": 1, "styles": ["any"] * 3, "max_actions": 5}
    for field, value, said in (("seed", -1, "'seed' must be an integer"), ("seed", True, "'seed' must be an integer"),
                               ("styles", ["any", "fast", "low"], "'styles' must list 3 of"),
                               ("max_actions", 1001, "'max_actions' must be an integer from 0 to 1000"),
                               ("favoured", [1.5], "'favoured' must be a list of integers"),
                               ("deal", [], "expected 'deal'")):
        reply = server.handle_line(json.dumps({**good, field: value}))
        assert said in reply["errored"]["message"], reply
    reply = server.handle_line(json.dumps(good))
    assert len(reply["actions"]) == 5 and len(reply["replies"]) == 18


def test_fuzz_of_the_reference_against_itself_plays_out_and_finds_nothing() -> None:
    asked: list[str] = []
    pair = fuzz.Pair(REFERENCE_COMMAND, REFERENCE_COMMAND, 20.0)
    played_out = pair.played_out

    def counted(*args: Any) -> Any:
        asked.append("playout")
        return played_out(*args)

    setattr(pair, "played_out", counted)
    try:
        for trial in range(12):
            _, divergence = fuzz.random_trial(pair, "classic", CLASSIC, "7", trial)
            assert divergence is None
    finally:
        pair.close()
    assert asked  # the random trials' deals went through playout


@pytest.mark.parametrize(("mode", "said"), [
    ("errored", "out of memory, says the fake"),
    ("huge", "lists 20000 actions"),
    ("short", "replies to"),
    ("hang", "no reply to 'batch' within 2 s"),
])
@pytest.mark.slow
def test_an_implementation_broken_in_its_batch_replies_is_reported_broken(mode: str, said: str) -> None:
    command = [sys.executable, str(FAKE_IMPLS / "batch_hostile.py"), mode]
    started = time.monotonic()
    outcome = fuzz.fuzz(command, "classic", CLASSIC, 20, "3", timeout=2.0)
    # broken mid-deal: a finding that says so (exit 4); broken before the first action: the run's error
    told = (str(outcome.findings[0].divergence.findings[0].actual)
            if outcome.findings and fuzz.failed(outcome.findings[0].divergence) else outcome.error)
    assert said in told and (outcome.findings or told.startswith("the implementation broke the protocol")), outcome
    assert time.monotonic() - started < 120


def test_a_playout_position_is_checked() -> None:
    server = _server()
    _match(server, 2)
    deal = {"dealer": 0, "hands": [DECK[0:7], DECK[7:14], DECK[14:21]], "talon": DECK[21:]}
    good = {"cmd": "playout", "seq": 3, "deal": deal, "seed": 1, "styles": ["any"] * 3, "max_actions": 5}
    plan = {"declarer": 1, "plans": [[], [[None, "bid 100"]], []], "scripted": True, "least_contract": 120}
    for position, said in (([], "'position' must be an object"), ({**plan, "declarer": 3}, "'declarer' must be a seat"),
                           ({**plan, "plans": [[], []]}, "'plans' must list 3 seats"),
                           ({**plan, "plans": [[["1", "pass"]], [], []]}, "'plans' must list 3 seats"),
                           ({**plan, "scripted": 1}, "'scripted' must be true or false")):
        reply = server.handle_line(json.dumps({**good, "position": position}))
        assert said in reply["errored"]["message"], reply
    reply = server.handle_line(json.dumps({**good, "position": plan}))
    assert len(reply["actions"]) == 5 and len(reply["replies"]) == 18


@pytest.mark.parametrize("profile", ["classic", "polish", "gambler-club"])
def test_a_scripted_position_plays_the_same_actions_in_lockstep_and_in_a_playout(profile: str) -> None:
    # positions.chooser (the runner's, asked a step at a time) and reference_impl.playout.Plan
    # (the reference's, one playout request) write out the same plan-following rule; a scripted
    # position never falls back to a random draw, so both must choose the same actions
    document = variants.resolve(profile).to_document()
    rules = document["rules"]
    pair = fuzz.Pair(REFERENCE_COMMAND, REFERENCE_COMMAND, 20.0)

    def no_draw(legal: tuple[str, ...], state: dict[str, Any]) -> str | None:
        assert not legal, "a scripted position asked the random policy"
        return None

    compared = 0
    try:
        for number in range(20):
            rng = random.Random(f"same/{profile}/{number}")
            position = positions.random_position(rng, rules, fuzz.random_match_state(rng, rules))
            if not position.scripted:
                continue
            scenario = fuzz.Scenario(position.match, (fuzz.Deal(position.dealer, position.hands, position.talon),),
                                     position.name)
            stepped, divergence = fuzz.play(pair, profile, document, scenario, positions.chooser(position, no_draw),
                                            lambda number, state: None)
            assert divergence is None
            playout = fuzz.Playout(random.Random(number), ("any",) * 3, fuzz.favoured_amounts(rules),
                                   positions.plan_fields(position))
            played, divergence = fuzz.play(pair, profile, document, scenario, None, lambda number, state: None,
                                           playout=playout)
            assert divergence is None
            assert played.deals[0].actions == stepped.deals[0].actions, position.name
            assert len(stepped.deals[0].actions) > 10
            compared += 1
    finally:
        pair.close()
    assert compared >= 5
