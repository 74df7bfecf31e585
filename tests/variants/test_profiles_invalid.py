"""Invalid profiles: one fault per fixture, each with one clear error at the right place.

Fixtures live in tests/fixtures/profiles/invalid/, named after their fault. Faults that
need large or binary files (deep nesting, a huge file, bytes that are not UTF-8) are
generated here in a temporary folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from variants import ProfileError, load_profile_file
from tests.support.paths import FIXTURES

INVALID = FIXTURES / "profiles" / "invalid"

# fixture -> (line, column or None, path, text the message contains)
EXPECTED: dict[str, tuple[int, int | None, str, str]] = {
    "alias-bomb": (10, 15, "rules.auction.bid_step", "anchors (&name) are not allowed"),
    "bad-status": (3, 9, "status", "expected one of 'stable', 'draft', got 'final'"),
    "barrel-threshold-above-target": (10, 24, "rules.barrel.threshold", "the barrel threshold 1000 must be below the target 1000"),
    "bolts-every-zero": (10, 20, "rules.bolts.every", "expected an integer >= 1 and <= 100, got 0"),
    "both-source-and-ruling": (10, 68, "rules.auction.bid_step.ruling", "give exactly one of 'source' or 'ruling', not both"),
    "defender-lock-from-above-target": (10, 19, "rules.defender_lock.from", "defender_lock.from 1000 must be below the target 1000"),
    "dump-score-above-target": (10, 20, "rules.dump.score", "the dump score 1555 must be below the target 1000"),
    "duplicate-key": (11, 5, "rules.auction.bid_step", "duplicate key 'bid_step': first at line 10, again at line 11"),
    "empty-file": (1, 1, "", "the file is empty: expected a mapping"),
    "enum-bad-value": (10, 22, "rules.auction.opening", "expected one of 'forced', 'at_least', got 'sometimes'"),
    # The chain starts at the file asked for; the error sits on the extends that closes it.
    "extends-cycle-a": (5, 10, "extends", "extends cycle: extends-cycle-a -> extends-cycle-b -> extends-cycle-a"),
    "extends-cycle-b": (5, 10, "extends", "extends cycle: extends-cycle-b -> extends-cycle-a -> extends-cycle-b"),
    "float-bid-step": (10, 23, "rules.auction.bid_step", "expected an integer >= 1 and <= 100, got 5.0"),
    "four-aces-with-automatic-declaration": (10, 24, "rules.marriages.four_aces", "automatic declaration refuses"),
    "high-bid-step-not-multiple": (10, 28, "rules.auction.high_bid_step", "high_bid_step 7 is not a multiple of bid_step 5"),
    "knob-not-a-mapping": (10, 15, "rules.auction.bid_step", "expected a mapping {value: ..., source: ...} or {value: ..., ruling: ...}, got 5"),
    "malformed-yaml": (11, 5, "", "malformed YAML: while parsing a flow mapping, did not find expected ',' or '}'"),
    "max-bid-below-opening": (10, 22, "rules.auction.max_bid", "max_bid 90 is below opening_bid 100"),
    # the first knob of the first section: a knob added to any later section leaves the fixture as it is
    "missing-knob-in-root": (16, 3, "rules.deal", "missing knob 'dealer_after_redeal': a root profile (extends: null) states every knob"),
    "missing-source": (10, 5, "rules.auction.bid_step", "a value needs a 'source' (a cited section) or a 'ruling' (the reason)"),
    "multiple-documents": (11, 1, "", "more than one document: expected exactly one"),
    "not-a-mapping": (1, 1, "", "expected a mapping, got a list"),
    "option-inconsistent": (16, 25, "options.tiny-target.rules.match_end.target", "the barrel threshold 880 must be below the target 500 (in option-inconsistent+tiny-target)"),
    "option-without-title": (12, 3, "options.wide-steps", "missing required field 'title'"),
    "profile-name-mismatch": (1, 10, "profile", "the profile is named 'another-name' but the file is profile-name-mismatch.yaml"),
    "python-tag": (10, 23, "rules.auction.bid_step.value", "tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed"),
    "redeal-unknown-condition": (12, 23, "rules.redeals.rules[0].condition", "expected one of 'four_nines', 'three_nines'"),
    "redeal-without-points": (12, 9, "rules.redeals.rules", "rule 1 (talon_under_points) needs 'points'"),
    "ruling-names-unknown-knob": (14, 13, "rulings[0].knobs[0]", "no such knob 'auction.bid_size'"),
    "short-ruling": (10, 34, "rules.auction.bid_step.ruling", "a ruling must be full sentences giving the reason; expected at least 20 characters, got 8"),
    "source-without-section": (10, 34, "rules.auction.bid_step.source", "expected a citation 'SOURCE-KEY section'"),
    "stop-at-off-grid": (10, 22, "rules.auction.stop_at", "stop_at 123 is not a legal bid amount"),
    "tab-indentation": (10, 1, "", "tab character in indentation: YAML indentation must use spaces"),
    "talon-shown-from-opening-bid": (11, 29, "rules.talon.shown_from_bid", "shown_from_bid 100 is not above opening_bid 100"),
    "unknown-knob": (10, 5, "rules.auction.bid_stpe", "unknown knob 'bid_stpe'; did you mean 'bid_step'?"),
    "unknown-marriage-suit": (10, 51, "rules.marriages.values.X", "unknown key 'X'; expected one of S, C, D, H"),
    "unknown-parent": (5, 10, "extends", "unknown parent profile 'no-such-profile' (chain: unknown-parent -> no-such-profile)"),
    "unknown-section": (9, 3, "rules.aution", "unknown section 'aution'; did you mean 'auction'?"),
    "unknown-source-key": (10, 34, "rules.auction.bid_step.source", "cites 'seed-999', which is not a key of 'sources' (sources: seed-000)"),
    "unknown-top-level-key": (11, 1, "notes", "unknown key 'notes'; expected one of profile, title"),
    "unverified-not-boolean": (10, 80, "rules.auction.bid_step.unverified", "expected true or false, got 'maybe'"),
    "wrong-type-bid-step": (10, 23, "rules.auction.bid_step", "expected an integer >= 1 and <= 100, got 'five'"),
}


def error_of(path: Path) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        load_profile_file(path)
    return caught.value


def test_there_are_at_least_25_fixtures_and_each_is_checked() -> None:
    names = sorted(path.stem for path in INVALID.glob("*.yaml"))
    assert len(names) >= 25
    assert names == sorted(EXPECTED)


@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_each_fault_gives_its_message_line_and_path(fault: str) -> None:
    line, column, path, text = EXPECTED[fault]
    error = error_of(INVALID / f"{fault}.yaml")
    assert text in error.message
    assert (error.line, error.column, error.path) == (line, column, path)
    # The message names the file of the fault (an option's fault points into its own file).
    assert error.file.endswith(".yaml")
    shown = str(error)
    assert shown.startswith(f"{error.file}:{line}:{column}:")
    assert "Traceback" not in shown


def test_a_deeply_nested_file_is_refused(tmp_path: Path) -> None:
    depth = 10_000
    path = tmp_path / "deep-nesting.yaml"
    path.write_text("profile: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    error = error_of(path)
    assert error.message == "nesting deeper than 64 levels"
    assert (error.line, error.column) == (1, 10 + 63)


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge-file.yaml"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing them
    error = error_of(path)
    assert error.message == "file too large: 52428800 bytes, the limit is 1048576 bytes (1 MiB)"
    assert error.line is None and error.path == ""


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("profile: latin1\ntitle: caf\xe9\n".encode("latin-1"))
    error = error_of(path)
    assert error.message == "not UTF-8 text: byte 0xe9"
    assert (error.line, error.column) == (2, 11)


def test_a_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    error = error_of(tmp_path / "absent.yaml")
    assert error.message.startswith("cannot read the file")


def test_aliases_alone_are_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "alias.yaml"
    path.write_text("profile: alias\ntitle: *x\n", encoding="utf-8")
    error = error_of(path)
    assert error.message == "aliases (*name) are not allowed: write the value out"
    assert (error.line, error.column) == (2, 8)


def test_a_child_may_extend_a_profile_next_to_it(tmp_path: Path) -> None:
    """extends looks next to the file first; a local parent's fault is reported in that file."""
    shutil.copy(INVALID / "unknown-knob.yaml", tmp_path / "unknown-knob.yaml")
    child = tmp_path / "child.yaml"
    child.write_text(
        "profile: child\ntitle: A child of a bad parent\nstatus: draft\n"
        "summary: Extends a local file that has an unknown knob.\nextends: unknown-knob\n"
        "sources: {}\nrules: {}\n",
        encoding="utf-8",
    )
    error = error_of(child)
    assert error.file == str(tmp_path / "unknown-knob.yaml")
    assert error.path == "rules.auction.bid_stpe"
