"""The Python adapter kit: protocol v1 around four methods, the seat rotation, the Python toy on it."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

from conformance import kit
from conformance.cli.verify import resolve_document
from conformance.corpus.transcripts import CASES_DIR, discover
from conformance.cli.verify import read_case_list
from conformance.harness import runner
from tests.support.paths import ROOT


class Recorder(kit.Engine):
    """An engine that keeps what it is given and reports a state in its own seats."""

    rotates = True
    absent = ("bolts",)

    def deal(self, deal: kit.Deal) -> None:
        self.given = deal

    def legal(self) -> list[str]:
        return ["pass"]

    def apply(self, action: kit.Action) -> None:
        if action.kind == "play":
            raise kit.Refused()  # it cannot tell why
        if action.kind == "give_up":
            raise RuntimeError("engine bug")
        if action.kind == "redeal":
            raise kit.Skip("no redeals here")

    def state(self) -> dict[str, Any]:
        return {"phase": "deal_over", "to_act": None, "declarer": 0, "winner": None, "scores": [10, 20, 30],
                "bolts": [1, 1, 1], "auction": [{"player": 0, "action": "bid 100"}], "trick": [],
                "deal_result": {"kind": "played", "made": True, "points": [1, 2, 3], "deltas": [4, 5, 6]}}


def served(engine: kit.Engine, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = io.StringIO()
    kit.serve(engine, io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


HANDS = [["AS"], ["KS"], ["QS"]]


def test_the_kit_declares_what_the_runner_does_and_answers_every_request() -> None:
    engine = Recorder()
    replies = served(engine, [
        {"cmd": "start", "seq": 1, "version": 1},
        {"cmd": "match", "seq": 2, "profile": "classic", "document": {"rules": {}}, "state": {"scores": [1, 2, 3]}},
        {"cmd": "deal", "seq": 3, "dealer": 0, "hands": HANDS, "talon": ["JS", "9S", "10S"]},
        {"cmd": "apply", "seq": 4, "action": "bid 0100"},
        {"cmd": "apply", "seq": 5, "action": "play XX"},
        {"cmd": "apply", "seq": 6, "action": "play AS"},
        {"cmd": "apply", "seq": 7, "action": "give_up"},
        {"cmd": "apply", "seq": 8, "action": "redeal"},
        {"cmd": "state", "seq": 9},
        {"cmd": "stop", "seq": 10},
    ])
    assert [r["seq"] for r in replies] == list(range(1, 11))
    start = replies[0]
    assert (start["events"], start["profiles"], start["unsupported"]) == ("derived", "own", {"state_fields": ["bolts"]})
    assert replies[3]["refusal"]["reason"] == "malformed_action" and replies[3]["refusal"]["class"] == "malformed"
    assert replies[4]["refusal"]["reason"] == "unknown_card"
    assert replies[5] == {"seq": 6, "ok": False, "refusal": {"class": "illegal", "message": "refused"}}  # no reason
    assert "RuntimeError: engine bug" in replies[6]["errored"]["message"]  # and the adapter goes on
    assert replies[7]["skipped"] == {"reason": "no redeals here"}
    # dealer 0: the opener is seat 1, the engine's seat 0
    assert engine.given.hands == [["KS"], ["QS"], ["AS"]] and engine.given.dealer == 2
    assert engine.given.match["scores"] == [2, 3, 1]
    state = replies[8]["state"]
    assert "bolts" not in state  # declared absent: left out
    assert (state["declarer"], state["auction"], state["dealer"], state["next_dealer"]) == (1, [{"player": 1, "action": "bid 100"}], 0, 1)
    assert state["scores"] == [30, 10, 20]  # engine seat 2 is protocol seat 0 (the dealer)
    assert state["deal_result"]["points"] == [3, 1, 2]


def test_the_python_toy_on_the_kit_passes_the_starter_subset_with_valid_messages() -> None:
    starter = read_case_list(ROOT / "conformance" / "starter.txt")
    # only the starter cases are read (the whole corpus would be validated for them otherwise)
    jobs = runner.plan(discover([CASES_DIR], select=lambda case_id: runner.case_selected(case_id, starter, [])),
                       (), starter)
    command = (sys.executable, str(ROOT / "examples" / "adapters" / "python" / "adapter.py"))
    state = runner.run_jobs(jobs, runner.Settings(command, 20.0, True, resolve_document))
    outcomes = [state.results[i].outcome for i in sorted(state.results)]
    assert outcomes and set(outcomes) == {"pass"}, [r.message for r in state.results.values() if r.outcome != "pass"][:3]
    assert (state.start_reply or {}).get("events") == "derived"
