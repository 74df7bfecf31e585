"""The reference server never dies on a line (issue 10, item 7): each hostile line below gets
one errored reply (with its seq when that can be read), and the next line is served."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reference_impl.server import MAX_LINE, Server
from tests.support.paths import ROOT

START = b'{"cmd":"start","seq":%d,"version":1}'

# (the hostile line, the seq its reply carries, words of the errored message)
ROWS = [
    (b'{"cmd":[],"seq":1}', 1, "unknown cmd a list"),
    (b'{"cmd":{},"seq":2}', 2, "unknown cmd an object"),
    (b'{"cmd":{}}', None, "seq: expected an integer, got nothing"),
    (b'{"cmd":"start","seq":' + b"9" * 5000 + b',"version":1}', None, "an integer of 5000 digits"),
    (b"[" * 100_000, None, "nested too deeply"),
    (b'{"cmd":"start","seq":3,"version":1,"note":"caf\xe9"}', 3, "not UTF-8 text: byte 0xe9"),
    (b'{"cmd":"start","seq":4,"version":1,"note":"' + b"x" * (10 * 1024 * 1024) + b'"}', None,
     f"request line longer than {MAX_LINE} bytes"),
    (b"[1, 2]", None, "request must be a JSON object"),
    (b'"start"', None, "request must be a JSON object"),
    (b"not json", None, "request is not JSON"),
    (b'{"cmd":"start","seq":true,"version":1}', None, "seq: expected an integer, got true"),
    (b'{"cmd":"start","seq":5,"version":true}', 5, "protocol version true is not supported"),
    (b'{"cmd":"start","seq":6,"version":1.0}', 6, "protocol version 1.0 is not supported"),
    (b'{"cmd":"deal","seq":7,"dealer":true}', 7, "send 'match' first"),
    (b'{"cmd":"start","seq":8,"version":NaN}', None, "NaN is not a JSON number"),
]


def test_each_hostile_line_gets_errored_and_the_next_line_is_served() -> None:
    stdin = b""
    for number, (line, _, _) in enumerate(ROWS):
        stdin += line + b"\n" + START % (1000 + number) + b"\n"
    stdin += b'{"cmd":"stop","seq":9999}\n'
    done = subprocess.run([sys.executable, "-m", "reference_impl.server"], input=stdin, capture_output=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stderr == b"", done.stderr[-2000:]
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(replies) == 2 * len(ROWS) + 1
    for number, (line, seq, words) in enumerate(ROWS):
        reply, following = replies[2 * number], replies[2 * number + 1]
        assert reply["seq"] == seq and words in reply["errored"]["message"], (line[:60], reply)
        assert following["seq"] == 1000 + number and following["profiles"] == "any"
    assert replies[-1] == {"seq": 9999, "ok": True}


def test_a_dealer_given_as_true_is_not_seat_one() -> None:
    from tests.support.engine import document
    from tests.support.server import HANDS, TALON

    server = Server()
    assert server.handle_line(json.dumps({"cmd": "match", "seq": 1, "document": document("polish")})) == {"seq": 1, "ok": True}
    reply = server.handle_line(json.dumps({"cmd": "deal", "seq": 2, "dealer": True, "hands": HANDS, "talon": TALON}))
    assert reply["seq"] == 2 and "dealer" in reply["errored"]["message"]


@pytest.mark.parametrize("seq", [True, False, 1.5, "1", [1], 2**60])
def test_seq_must_be_an_integer(seq: object) -> None:
    reply = Server().handle_line(json.dumps({"cmd": "start", "seq": seq, "version": 1}))
    assert reply["seq"] is None and reply["errored"]["message"].startswith("seq: expected an integer")


def test_messages_quote_only_an_excerpt() -> None:
    reply = Server().handle_line(json.dumps({"cmd": "x" * 10_000, "seq": 1}))
    assert len(reply["errored"]["message"]) < 200
