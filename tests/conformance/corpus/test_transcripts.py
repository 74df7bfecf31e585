"""Loading transcripts: every problem is one clear message with file, line, column and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.corpus import transcripts
from conformance.corpus.transcripts import CaseBug, Transcript, TranscriptError, load
from tests.support.transcripts import GOOD, text





def write(tmp_path: Path, body: str, name: str = "club/play/example") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def problem(tmp_path: Path, body: str, name: str = "club/play/example") -> str:
    with pytest.raises(TranscriptError) as caught:
        load(write(tmp_path, body, name), tmp_path)
    return str(caught.value)


def test_a_good_transcript_loads(tmp_path: Path) -> None:
    case = load(write(tmp_path, text()), tmp_path)
    assert case.id == "club/play/example" and case.profiles == ("gambler-club",)
    assert case.deals[0]["expect"]["scores"] == [160, 57.5, 15]


def test_on_is_a_key_not_a_boolean(tmp_path: Path) -> None:
    """YAML 1.1 would read the barrel's ``on:`` as the boolean key True."""
    case = load(write(tmp_path, text()), tmp_path)
    assert case.match is not None and case.match["barrel"][0] == {"on": True, "attempts": 1, "failed_visits": 0}


@pytest.mark.parametrize(("change", "words"), [
    (("title: An example\n", "title: An example\ntitle: Again\n"), ":3:1: title: duplicate key 'title': first at line 2, again at line 3"),
    (("dealer: 2", "dealer: 3"), ":8:13: deals[0].dealer: 3 is greater than the maximum of 2"),
    (("player: 0", "player: zero"), ":13:17: deals[0].steps[0].player: 'zero' is not of type 'integer'"),
    (("refused: must_follow_suit", "refused: not_a_reason"), ":16:18: deals[0].steps[1].refused:"),
    (("legal: [bid 100]", "legal: [bid100]"), ":14:17: deals[0].steps[0].legal[0]:"),
    (("knobs: [play.must_trump]", "knobs: [play.must_trumps]"), ":4:9: knobs[0]: 'play.must_trumps' is not a knob"),
    (("id: club/play/example", "id: club/play/other"), ":1:5: id: 'club/play/other' must equal the path 'club/play/example'"),
    (("talon: TALON", "talon: [QH, JH, AS]"), "card(s) dealt twice: AS"),
    (("talon: TALON", "talon: [QH, JH]"), ":10:12: deals[0].talon: ['QH', 'JH'] is too short"),
    (("  - dealer: 2", "  - dealer: 2\n    colour: red"), "deals[0]: Additional properties are not allowed ('colour'"),
    (("    steps:", "    steps: [\n"), "13:7: malformed YAML"),
])
def test_each_problem_names_line_and_field(tmp_path: Path, change: tuple[str, str], words: str) -> None:
    body = text(GOOD.replace(*change))
    message = problem(tmp_path, body)
    assert message.startswith(str(tmp_path / "club/play/example.yaml")) or message.startswith("club/play/example.yaml")
    assert words in message


def test_odd_files_are_one_clear_error(tmp_path: Path) -> None:
    assert "the file is empty" in problem(tmp_path, "")
    path = write(tmp_path, "")
    path.write_bytes(b"id: \xff\xfe\n")
    with pytest.raises(TranscriptError, match="not UTF-8"):
        load(path, tmp_path)
    path.write_bytes(b"#" * (transcripts.MAX_BYTES + 1))
    with pytest.raises(TranscriptError, match="file too large"):
        load(path, tmp_path)
    assert "expected a mapping (a transcript), got a list" in problem(tmp_path, "- a list\n")
    assert "tag 'tag:yaml.org,2002:python/object:os.system' is not allowed" in problem(tmp_path, "!!python/object:os.system {}\n")


def test_discover_turns_bad_files_into_case_bugs(tmp_path: Path) -> None:
    write(tmp_path, text())
    write(tmp_path, "id: club/bad\ntitle: broken\nprofiles: [classic]\nknobs: [nope]\ndeals: []\n", "club/bad")
    found = transcripts.discover([tmp_path])
    assert [type(item) for item in found] == [CaseBug, Transcript]
    bug = found[0]
    assert isinstance(bug, CaseBug) and bug.id == "club/bad" and bug.profiles == ("classic",) and bug.title == "broken"


def test_knob_names_come_from_the_profile_schema() -> None:
    names = transcripts.knob_names()
    assert {"auction.bid_step", "auction.opening", "play.must_beat", "redeals.rules"} <= names
    assert "auction.bid_stepp" not in names and "bid_step" not in names


@pytest.mark.slow
def test_every_bundled_transcript_loads() -> None:
    bugs = [item.message for item in transcripts.discover([transcripts.CASES_DIR, transcripts.GENERATED_DIR])
            if isinstance(item, CaseBug)]
    assert not bugs, "\n".join(bugs)
