"""Fuzzed bytes for the loaders and the reference server (issue 10, items 6 and 7): only the
project's own errors come out (ProfileError, TranscriptError or a CaseBug, an errored reply),
never another exception, and the server answers every line."""

from __future__ import annotations

import io
import json
from pathlib import Path
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.corpus import transcripts
from conformance.corpus.transcripts import CaseBug, Transcript, TranscriptError
from reference_impl.server import Server, serve
from spec import PROFILES_DIR
from tests.support.transcripts import text
from variants import ProfileError, ResolvedProfile, load_profile_file

# Pieces that reach the corners of YAML: tags, anchors, keys, escapes, odd scalars, controls.
NASTY = [
    "!!int ", "!!bool ", "!!float ", "!!str ", "!!null ", "!!python/object:os.system ", "!!binary ", "!x ", "! ",
    "&a ", "*a", "? ", ": ", "- ", "[", "]", "{", "}", ",", "\n", "  ", "\t", "#", "'", '"', "|", ">", "---\n", "...\n",
    "<<: ", "on", "yes", "0x1F", "0o17", "017", "1_000", "14:40", "1e3", ".inf", ".nan", "~", "null", "true",
    "9" * 40, "9" * 5000, "\\0", "\\ud800", "\\x85", "\x00", "\x07", "\x1b", "\x85", "\u2028", "\ufeff", "\ud800",
    "%YAML 1.1\n", "%TAG ! tag:x,2000:\n",
]
EDIT = st.tuples(st.integers(0, 10_000), st.integers(0, 5), st.one_of(st.sampled_from(NASTY), st.text(max_size=6)))


def mutate(source: str, edits: list[tuple[int, int, str]]) -> bytes:
    """``source`` with each edit (position, characters removed, text inserted) applied."""
    for position, removed, inserted in edits:
        at = position % (len(source) + 1)
        source = source[:at] + inserted + source[at + removed:]
    return source.encode("utf-8", "surrogatepass")


PROFILE = (PROFILES_DIR / "classic.yaml").read_text(encoding="utf-8")


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_fuzzed_profile_bytes_give_a_profile_or_a_profile_error(edits: list[tuple[int, int, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "classic.yaml"
        path.write_bytes(mutate(PROFILE, edits))
        try:
            result = load_profile_file(path)
        except ProfileError as error:
            assert error.message and str(error).startswith(str(path))
            assert "\x00" not in str(error)
        else:
            assert isinstance(result, ResolvedProfile)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(EDIT, min_size=1, max_size=4))
def test_fuzzed_transcript_bytes_give_a_transcript_or_a_case_bug(edits: list[tuple[int, int, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / "club/play/example.yaml"
        path.parent.mkdir(parents=True)
        path.write_bytes(mutate(text(), edits))
        try:
            loaded = transcripts.load(path, root)
        except TranscriptError as error:
            assert str(error).startswith(str(path)) or str(error).startswith("club/play/example.yaml")
            loaded = None
        (found,) = transcripts.discover([root], cache=False)
        assert isinstance(found, Transcript if loaded else CaseBug)


REQUEST_PIECES = st.one_of(
    st.sampled_from([b'{"cmd":', b'"start"', b'"apply"', b'"deal"', b'"seq":', b'"version":', b"1", b"true", b"null",
                     b"[]", b"{}", b"[" * 3000, b"9" * 5000, b"NaN", b"-Infinity", b"\xff", b"\xed\xa0\x80", b"\\ud800",
                     b'"\\u0000"', b",", b"}", b'"dealer":', b'"action":', b'"hands":', b'"document":']),
    st.binary(max_size=8),
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(REQUEST_PIECES, max_size=8).map(b"".join), min_size=1, max_size=5))
def test_every_fuzzed_line_gets_one_json_reply(lines: list[bytes]) -> None:
    lines = [line.replace(b"\n", b" ") for line in lines if line.strip()]
    stdin = b"".join(line + b"\n" for line in lines) + b'{"cmd":"stop","seq":99}\n'
    out = io.StringIO()
    serve(io.BytesIO(stdin), out)
    replies = [json.loads(reply) for reply in out.getvalue().splitlines()]
    stopped = [reply for reply in replies if reply.get("ok") is True and reply.get("seq") == 99]
    assert len(replies) == len(lines) + (1 if stopped else 0) or replies[-1].get("ok") is True
    for reply in replies:
        assert isinstance(reply, dict) and "seq" in reply
        assert reply["seq"] is None or type(reply["seq"]) is int
        if "errored" in reply:
            assert isinstance(reply["errored"]["message"], str) and len(reply["errored"]["message"]) <= 300


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(request=st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                                st.sampled_from(["cmd", "seq", "version", "dealer", "hands", "talon", "action",
                                                 "document", "state", "x"]), inner, max_size=5), max_leaves=12))
def test_every_fuzzed_request_gets_an_answer(request: object) -> None:
    server = Server()
    reply = server.handle_line(json.dumps(request))
    assert isinstance(reply, dict) and set(reply) >= {"seq"}
    json.dumps(reply, allow_nan=False)
