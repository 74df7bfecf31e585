"""Hostile or broken transcript and profile files (issue 10, item 6): each is one clear error
naming the file and the place, bounded in time and memory, and never a traceback. A bad
transcript is that case's CaseBug; the other cases still load."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from conformance.corpus import cache as corpus_cache, transcripts
from conformance.corpus.transcripts import CaseBug, Transcript, TranscriptError
from spec import PROFILES_DIR
from tests.support.transcripts import text
from variants import ProfileError, load_profile_file
from variants.loader import YamlError, read_bytes

GOOD_ID = "club/play/example"
SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY0123456789abcdefSECRET"
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + n)}: &{chr(98 + n)} [*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, "
    f"*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}]\n" for n in range(8))


def good(body: str, old: str, new: str) -> str:
    """The good transcript with one change."""
    changed = text().replace(old, new, 1)
    assert changed != text()
    return changed


def corpus(tmp_path: Path, bad: dict[str, str | bytes]) -> Path:
    """A corpus of the good transcript and the given bad files (name -> content)."""
    root = tmp_path / "corpus"
    (root / "club/play").mkdir(parents=True)
    (root / f"{GOOD_ID}.yaml").write_text(text(), encoding="utf-8")
    for name, content in bad.items():
        path = root / f"club/play/{name}.yaml"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def discover_within(root: Path, seconds: float = 20.0) -> list[Transcript | CaseBug]:
    """discover() in a thread: a test that would hang fails instead."""
    found: list[list[Transcript | CaseBug]] = []
    worker = threading.Thread(target=lambda: found.append(transcripts.discover([root], cache=False)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"discover() still running after {seconds} s"
    return found[0]


def bug_of(found: list[Transcript | CaseBug], name: str) -> CaseBug:
    """The CaseBug of club/play/NAME, after checking that the good case still loaded."""
    assert any(isinstance(item, Transcript) and item.id == GOOD_ID for item in found)
    (bug,) = [item for item in found if item.id == f"club/play/{name}"]
    assert isinstance(bug, CaseBug), bug
    assert bug.message.startswith(str(Path("corpus") / "club/play" / name)) or f"club/play/{name}.yaml" in bug.message
    assert "Traceback" not in bug.message and len(bug.message) < 400
    return bug


# --- transcripts: each row of the table --------------------------------------------

@pytest.mark.parametrize(("name", "content", "words"), [
    ("recursive-alias", "id: &a [*a]\n", "1:5: id: anchors (&name) are not allowed"),
    ("alias-only", good(text(), "title: An example", "title: *t"), "2:8: title: aliases (*name) are not allowed"),
    ("complex-key", "? [a, b]\n: 1\n", "1:3: a mapping key must be a plain name"),
    ("int-abc", good(text(), "dealer: 2", "dealer: !!int abc"), "deals[0].dealer: !!int 'abc': the text is not a YAML 1.2 int"),
    ("int-empty", good(text(), "dealer: 2", "dealer: !!int"), "deals[0].dealer: !!int '': the text is not a YAML 1.2 int"),
    ("bool-maybe", good(text(), "player: 0", "player: !!bool maybe"), "player: !!bool 'maybe': the text is not a YAML 1.2 bool"),
    ("python-tag", "!!python/object/apply:os.system [echo hi]\n", "tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed"),
    ("huge-integer", good(text(), "dealer: 2", "dealer: " + "7" * 5000), "deals[0].dealer: an integer of 5000 digits is out of range"),
    ("nul", good(text(), "title: An example", "title: An \x00example"), "2:11: character U+0000 is not allowed"),
    ("control", good(text(), "title: An example", "title: An \x1bexample"), "2:11: character U+001B is not allowed"),
    ("escaped-nul", good(text(), "title: An example", 'title: "An \\0example"'), "2:8: title: the value holds the control character"),
    ("lone-surrogate", good(text(), "title: An example", 'title: "\\ud800"'), "malformed YAML"),
    ("surrogate-bytes", text().encode().replace(b"An example", b"An \xed\xa0\x80", 1),
     "2:11: not UTF-8 text: byte 0xed"),
    ("latin-1", "id: caf\xe9\n".encode("latin-1"), "1:8: not UTF-8 text: byte 0xe9"),
    ("deep-nesting", "id: " + "[" * 100_000 + "\n", "nesting deeper than 64 levels"),
    ("yaml11-octal", good(text(), "dealer: 2", "dealer: 02"), "'02' is read differently by YAML 1.1 and 1.2"),
    ("yaml11-on", good(text(), "attempts: 1", "attempts: on"), "'on' is true/false in YAML 1.1"),
])
def test_each_bad_transcript_is_its_case_bug(tmp_path: Path, name: str, content: str | bytes, words: str) -> None:
    found = discover_within(corpus(tmp_path, {name: content}))
    bug = bug_of(found, name)
    assert words in bug.message
    with pytest.raises(TranscriptError):  # load() says the same, as its own error type
        transcripts.load(tmp_path / "corpus" / f"club/play/{name}.yaml", tmp_path / "corpus")


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    """Nine levels of nine aliases (a billion 'x' if expanded): refused at the first alias."""
    assert len(ALIAS_BOMB.encode()) < 400
    started = time.perf_counter()
    found = discover_within(corpus(tmp_path, {"bomb": ALIAS_BOMB}), seconds=10)
    assert time.perf_counter() - started < 5
    assert "1:4: a: anchors (&name) are not allowed" in bug_of(found, "bomb").message


def test_a_symlink_loop_is_a_case_bug(tmp_path: Path) -> None:
    root = corpus(tmp_path, {})
    (root / "club/play/loop.yaml").symlink_to("loop.yaml")
    (root / "club/loop-folder").symlink_to(root / "club")  # a folder symlink is not followed
    found = discover_within(root)
    assert "cannot read the file: Too many levels of symbolic links" in bug_of(found, "loop").message
    assert len(found) == 2


def test_a_symlink_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    root = corpus(tmp_path, {})
    (root / "club/play/zero.yaml").symlink_to("/dev/zero")
    assert "a character device, not a regular file: not read" in bug_of(discover_within(root, 10), "zero").message


def test_a_fifo_is_skipped_without_hanging(tmp_path: Path) -> None:
    root = corpus(tmp_path, {})
    os.mkfifo(root / "club/play/x.yaml")  # nobody ever writes to it: opening it to read would block
    assert "a FIFO, not a regular file: not read" in bug_of(discover_within(root, 10), "x").message


def test_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path: Path) -> None:
    """read_bytes opens non-blocking and checks the opened file again."""
    fifo = tmp_path / "x.yaml"
    os.mkfifo(fifo)
    original = os.stat

    def stat_says_regular(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if str(path) == str(fifo):
            return original(__file__)
        return original(path, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "stat", stat_says_regular)
        with pytest.raises(YamlError, match="a FIFO, not a regular file"):
            read_bytes(fifo, "x.yaml")


def test_at_most_limit_plus_one_bytes_are_read(tmp_path: Path) -> None:
    """A file whose size says nothing (a /proc file reports 0) is still bounded."""
    proc = Path("/proc/self/maps")
    if not proc.exists():
        pytest.skip("no /proc")
    with pytest.raises(YamlError, match="file too large: more than 50 bytes read"):
        read_bytes(proc, "maps", limit=50)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (transcripts.MAX_BYTES + 1))
    with pytest.raises(TranscriptError, match="file too large"):
        transcripts.load(big, tmp_path)


@pytest.mark.parametrize("secret", [
    f"AWS_SECRET_ACCESS_KEY={SECRET}\n",
    f"api_key: {SECRET}\n",
    f"- {SECRET}\n",
    f"id: {SECRET}\n",
])
def test_a_symlink_to_a_secret_is_not_quoted(tmp_path: Path, secret: str) -> None:
    (tmp_path / "secret.txt").write_text(secret, encoding="utf-8")
    root = corpus(tmp_path, {})
    (root / "club/play/leak.yaml").symlink_to(tmp_path / "secret.txt")
    bug = bug_of(discover_within(root), "leak")
    for shown in (bug.message, bug.title, *bug.profiles, *bug.knobs):
        assert SECRET[:20] not in shown and SECRET[-20:] not in shown


def test_a_folder_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can list any folder")
    root = corpus(tmp_path, {})
    (root / "locked").mkdir()
    (root / "locked").chmod(0)
    try:
        found = discover_within(root)
    finally:
        (root / "locked").chmod(0o700)
    assert any(isinstance(item, CaseBug) and "cannot list the folder" in item.message for item in found)


def test_select_reads_only_the_chosen_files(tmp_path: Path) -> None:
    root = corpus(tmp_path, {"broken": "id: [\n"})
    os.mkfifo(root / "club/play/fifo.yaml")
    found = transcripts.discover([root], select=lambda case_id: case_id == GOOD_ID, cache=False)
    assert [item.id for item in found] == [GOOD_ID] and isinstance(found[0], Transcript)


# --- the content cache ----------------------------------------------------------------------

def test_the_cache_serves_the_same_transcripts_and_sees_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    root = corpus(tmp_path, {})
    first = transcripts.discover([root])
    assert (tmp_path / "cache" / corpus_cache.FILE_NAME).is_file()
    assert transcripts.discover([root]) == first == transcripts.discover([root], cache=False)
    # An edit that breaks the file is seen: the cache is keyed by content, not by name.
    path = root / f"{GOOD_ID}.yaml"
    path.write_text(good(text(), "dealer: 2", "dealer: 3"), encoding="utf-8")
    (bug,) = transcripts.discover([root])
    assert isinstance(bug, CaseBug) and "deals[0].dealer: 3 is greater than the maximum of 2" in bug.message
    # A moved file keeps its cached content but its id is still checked against the path.
    path.write_text(text(), encoding="utf-8")
    path.rename(root / "club/play/moved.yaml")
    (moved,) = transcripts.discover([root])
    assert isinstance(moved, CaseBug) and "must equal the path 'club/play/moved'" in moved.message
    assert not [name for name in os.listdir(tmp_path / "cache") if name.endswith(".tmp")]


@pytest.mark.parametrize("damage", [b"", b"not json\n{}", b"{\"format\": 1}\n{\"a\": 1", b"\xff\xfe"])
def test_a_damaged_cache_is_ignored_and_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes) -> None:
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    root = corpus(tmp_path, {})
    expected = transcripts.discover([root], cache=False)
    cache_file = tmp_path / "cache" / corpus_cache.FILE_NAME
    cache_file.parent.mkdir()
    cache_file.write_bytes(damage)
    assert transcripts.discover([root]) == expected
    assert cache_file.read_bytes() != damage  # rebuilt


def test_a_tampered_entry_with_a_valid_digest_is_not_trusted_blindly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    root = corpus(tmp_path, {})
    expected = transcripts.discover([root])
    store = corpus_cache.open_store()
    assert store is not None and len(store.entries) == 1
    key = next(iter(store.entries))
    store.put(key, {"id": GOOD_ID, "profiles": "not a list"})
    store.save()
    assert transcripts.discover([root]) == expected


@pytest.mark.parametrize("emptied", ["deals", "action"])
def test_an_entry_emptied_and_signed_again_with_the_users_key_is_checked_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emptied: str) -> None:  # issue 52, row 19
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    root = corpus(tmp_path, {})
    expected = transcripts.discover([root])
    store = corpus_cache.open_store()
    assert store is not None and len(store.entries) == 1
    key, data = next(iter(store.entries.items()))
    step = {"expect": {}}  # its action dropped
    hollow = {**data, "deals": []} if emptied == "deals" else {**data, "deals": [{**data["deals"][0], "steps": [step]}]}
    store.put(key, hollow)
    store.save()  # signed with the folder's own key: the digest is valid
    assert corpus_cache.open_store().entries[key] == hollow  # type: ignore[union-attr]
    assert transcripts.discover([root]) == expected  # the file was read and checked again, not the entry


def test_the_cache_file_is_read_once_while_it_is_the_same_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    root = corpus(tmp_path, {})
    expected = transcripts.discover([root])  # writes the cache
    reads: list[Path] = []
    checked = corpus_cache._checked_entries
    monkeypatch.setattr(corpus_cache, "_checked_entries", lambda file, salt: reads.append(file) or checked(file, salt))
    assert transcripts.discover([root]) == expected == transcripts.discover([root])
    assert len(reads) == 1
    # a store adds to its own copy: what one run put is not in the next store unless saved
    store = corpus_cache.open_store()
    assert store is not None
    store.entries["unsaved"] = {}
    assert "unsaved" not in corpus_cache.open_store().entries  # type: ignore[union-attr]
    # written again (another run's save renames a new file over it): read again
    cache_file = tmp_path / "cache" / corpus_cache.FILE_NAME
    cache_file.write_bytes(b"not json\n{}")
    assert transcripts.discover([root]) == expected
    assert len(reads) == 2


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THOUSAND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("THOUSAND_NO_CACHE", "1")
    transcripts.discover([corpus(tmp_path, {})])
    assert not (tmp_path / "cache").exists()


# --- profiles: the same reader --------------------------------------------------------------

CLASSIC = (PROFILES_DIR / "classic.yaml").read_text(encoding="utf-8")


def profile_error(tmp_path: Path, body: str | bytes, name: str = "classic") -> ProfileError:
    path = tmp_path / f"{name}.yaml"
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body, encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile_file(path)
    assert "Traceback" not in str(caught.value) and str(caught.value).startswith(str(path))
    return caught.value


@pytest.mark.parametrize(("value", "words"), [
    ("01000", "'01000' is read differently by YAML 1.1 and 1.2"),
    ("14:40", "'14:40' is read differently by YAML 1.1 and 1.2"),
    ("0x384", "'0x384' is read differently by YAML 1.1 and 1.2"),
    ("1_000", "'1_000' is read differently by YAML 1.1 and 1.2"),
    ("on", "'on' is true/false in YAML 1.1 but text in YAML 1.2"),
    ("yes", "'yes' is true/false in YAML 1.1 but text in YAML 1.2"),
    ("!!int", "!!int '': the text is not a YAML 1.2 int"),
    ("!!int abc", "!!int 'abc': the text is not a YAML 1.2 int"),
    ("!!bool maybe", "!!bool 'maybe': the text is not a YAML 1.2 bool"),
    ("9" * 5000, "an integer of 5000 digits is out of range"),
    (".inf", "'.inf' is not a finite number"),
])
def test_ambiguous_or_bad_profile_values_are_refused(tmp_path: Path, value: str, words: str) -> None:
    body = CLASSIC.replace("target: {value: 1000,", f"target: {{value: {value},", 1)
    assert body != CLASSIC
    error = profile_error(tmp_path, body)
    assert words in error.message
    assert error.path == "rules.match_end.target.value" and error.line == CLASSIC[:CLASSIC.index("target: {value")].count("\n") + 1


@pytest.mark.parametrize(("change", "words"), [
    (("title:", "title: \x00"), "character U+0000 is not allowed"),
    (("title:", "title: \x07"), "character U+0007 is not allowed"),
    (("title:", 'title: "\\ud800"\nx:'), "malformed YAML"),
    (("title:", 'title: "\\x01"\nx:'), "the value holds the control character or lone surrogate U+0001"),
    (("profile: classic", "profile: &p [*p]"), "anchors (&name) are not allowed"),
    (("profile: classic", "? [a, b]\n: 1\nprofile: classic"), "a mapping key must be a plain name"),
])
def test_bad_profile_text_is_one_profile_error(tmp_path: Path, change: tuple[str, str], words: str) -> None:
    body = CLASSIC.replace(*change, 1)
    assert body != CLASSIC
    assert words in profile_error(tmp_path, body).message


def test_a_profile_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    started = time.perf_counter()
    assert "anchors (&name) are not allowed" in profile_error(tmp_path, ALIAS_BOMB).message
    assert time.perf_counter() - started < 5


def test_odd_profile_files_are_one_profile_error(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    cases = {"loop": "loop.yaml", "zero": "/dev/zero", "leak": str(tmp_path / "secret.txt")}
    for name, target in cases.items():
        (tmp_path / f"{name}.yaml").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.yaml")
    messages = {}
    for name in [*cases, "fifo"]:
        with pytest.raises(ProfileError) as caught:
            load_profile_file(tmp_path / f"{name}.yaml")
        messages[name] = str(caught.value)
    assert "Too many levels of symbolic links" in messages["loop"]
    assert "a character device, not a regular file" in messages["zero"]
    assert "a FIFO, not a regular file" in messages["fifo"]
    assert "expected a mapping, got text (the file is not a profile)" in messages["leak"]
    assert SECRET[:20] not in messages["leak"]


def test_text_handed_in_with_a_lone_surrogate_is_one_error() -> None:
    from variants.loader import parse_text

    with pytest.raises(ProfileError, match="lone surrogate U\\+D800") as caught:
        parse_text("profile: x\ntitle: \ud800\n", "f.yaml")
    assert (caught.value.line, caught.value.column) == (2, 8)


# --- file names with control characters (issue 52, row 11) -------------------------------

@pytest.mark.parametrize(("command", "name", "exists"), [
    ("validate", "bad\x1b[31m\x07.yaml", True),
    ("validate", "gone\x1b]0;owned\x07.yaml", False),
    ("show", "./bad\x1b[31m\x07.yaml", True),
    ("report", "bad\x1b[31m\x07.json", True),
    ("report", "gone\x1b[2J\x07.json", False),
])
def test_a_file_name_with_control_characters_is_shown_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], command: str,
                                                              name: str, exists: bool) -> None:
    from conformance import cli

    monkeypatch.chdir(tmp_path)
    if exists:
        (tmp_path / name).write_text("not a profile, not a report\n", encoding="utf-8")
    code = cli.main([command, name])
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert code in (1, 2) and "\\x1b" in shown and "\\x07" in shown
    assert "\x1b" not in shown and "\x07" not in shown
