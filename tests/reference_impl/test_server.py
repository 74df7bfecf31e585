"""Protocol v1 of ``thousand-reference`` (DESIGN.md "Protocol v1")."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

from tests.support.engine import document

from reference_impl.server import Server, main, serve
from tests.support.paths import ROOT
from tests.support.server import HANDS, TALON



def ask(server: Server, request: dict[str, Any] | str) -> dict[str, Any]:
    return server.handle_line(request if isinstance(request, str) else json.dumps(request))


def test_a_session_over_a_subprocess() -> None:
    requests = [
        {"cmd": "start", "seq": 1, "version": 1},
        {"cmd": "match", "seq": 2, "profile": "polish", "document": document("polish")},
        {"cmd": "deal", "seq": 3, "dealer": 0, "hands": HANDS, "talon": TALON},
        {"cmd": "legal", "seq": 4},
        {"cmd": "apply", "seq": 5, "action": "pass"},
        {"cmd": "apply", "seq": 6, "action": "bid 100"},
        {"cmd": "state", "seq": 7},
        {"cmd": "stop", "seq": 8},
    ]
    text = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([sys.executable, "-m", "reference_impl.server"], input=text, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["seq"] for r in replies] == list(range(1, 9))
    assert replies[0]["version"] == 1 and replies[0]["profiles"] == "any"
    assert set(replies[0]["implementation"]) == {"name", "version", "language", "homepage"}
    assert replies[1] == {"seq": 2, "ok": True}
    assert replies[2] == {"seq": 3, "ok": True, "events": []}
    assert replies[3] == {"seq": 4, "actions": ["bid 100"]}
    assert replies[4]["ok"] is False and replies[4]["refusal"]["class"] == "illegal"
    assert replies[4]["refusal"]["reason"] == "opener_must_bid"
    assert replies[5] == {"seq": 6, "ok": True, "events": []}
    state = replies[6]["state"]
    assert state["phase"] == "auction" and state["to_act"] == 2 and state["high_bid"] == 100
    assert state["hands"][0] == ["AS", "10S", "KS", "QS", "JS", "9S", "AC"]
    assert replies[7] == {"seq": 8, "ok": True}


def test_bad_requests_get_errored_replies_not_a_crash() -> None:
    server = Server()
    assert "errored" in ask(server, "not json")
    assert "errored" in ask(server, "[1, 2]")
    assert ask(server, {"cmd": "fly", "seq": 1})["errored"]["message"].startswith("unknown cmd")
    assert "errored" in ask(server, {"cmd": "start", "seq": 2, "version": 2})
    assert "send 'match' first" in ask(server, {"cmd": "legal", "seq": 3})["errored"]["message"]
    assert "errored" in ask(server, {"cmd": "match", "seq": 4, "profile": "x"})
    broken = document("polish")
    del broken["rules"]["auction"]["bid_step"]
    reply = ask(server, {"cmd": "match", "seq": 5, "document": broken})
    assert reply["errored"]["message"] == "rules.auction.bid_step: missing knob"
    assert ask(server, {"cmd": "match", "seq": 6, "document": document("polish")}) == {"seq": 6, "ok": True}
    reply = ask(server, {"cmd": "deal", "seq": 7, "dealer": 0, "hands": HANDS[:2], "talon": TALON})
    assert "hands" in reply["errored"]["message"]
    twice = [HANDS[0], HANDS[0], HANDS[2]]
    assert "dealt twice" in ask(server, {"cmd": "deal", "seq": 8, "dealer": 0, "hands": twice, "talon": TALON})["errored"]["message"]
    assert "errored" in ask(server, {"cmd": "deal", "seq": 9, "dealer": 5, "hands": HANDS, "talon": TALON})
    assert "errored" in ask(server, {"cmd": "apply", "seq": 10})


def test_malformed_and_illegal_refusals() -> None:
    server = Server()
    ask(server, {"cmd": "match", "seq": 1, "document": document("skill-games"), "state": {"scores": [57.5, 0, 0]}})
    ask(server, {"cmd": "deal", "seq": 2, "dealer": 0, "hands": HANDS, "talon": TALON})
    malformed = ask(server, {"cmd": "apply", "seq": 3, "action": "bid one hundred"})
    assert malformed["refusal"]["class"] == "malformed" and malformed["refusal"]["reason"] == "malformed_action"
    unknown = ask(server, {"cmd": "apply", "seq": 4, "action": "play 1S"})
    assert unknown["refusal"]["reason"] == "unknown_card"
    not_text = ask(server, {"cmd": "apply", "seq": 5, "action": 100})
    assert not_text["refusal"]["class"] == "malformed"
    assert ask(server, {"cmd": "state", "seq": 6})["state"]["scores"] == [57.5, 0, 0]


def test_serve_stops_at_stop_and_at_the_end_of_input() -> None:
    out = io.StringIO()
    serve(io.StringIO('{"cmd":"stop","seq":1}\n{"cmd":"start","seq":2,"version":1}\n'), out)
    assert out.getvalue() == '{"seq":1,"ok":true}\n'
    out = io.StringIO()
    serve(io.StringIO('\n{"cmd":"start","seq":1,"version":1}\n'), out)
    assert len(out.getvalue().splitlines()) == 1


def test_help(capsys: Any) -> None:
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    assert "protocol v1" in capsys.readouterr().out



class _Writes(io.StringIO):
    """An output that keeps what each write wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def test_serve_writes_a_whole_case_at_once_and_holds_step_replies() -> None:
    """Requests at hand: step replies go in one write; a batch's reply is written as soon as it
    is built (a client that wrote the next case ahead reads it while that case is played)."""
    match = {"cmd": "match", "document": document("classic")}
    lines = [{"cmd": "start", "seq": 1, "version": 1}, {"cmd": "legal", "seq": 2},
             {"cmd": "batch", "seq": 3, "requests": [match]}, {"cmd": "batch", "seq": 4, "requests": [match]},
             {"cmd": "state", "seq": 5}, {"cmd": "legal", "seq": 6}]
    out = _Writes()
    serve(io.BufferedReader(io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())), out)
    assert [[json.loads(reply)["seq"] for reply in text.splitlines()] for text in out.writes] == [[1, 2, 3], [4], [5, 6]]
