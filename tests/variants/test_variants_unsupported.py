"""spec/unsupported.yaml: every variant axis of the digest is mapped to knobs or refused with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

import variants
from variants import ProfileError, load_axes
from variants.schema import rule_sections


def test_every_axis_has_knobs_or_a_reason() -> None:
    axes = load_axes()
    knobs = {f"{section}.{knob}" for section, names in rule_sections().items() for knob in names}
    for axis in axes:
        assert axis.supported == bool(axis.knobs)
        assert set(axis.knobs) <= knobs, axis.axis
        if not axis.supported:
            assert len(axis.reason) > 40 and axis.reason.endswith("."), axis.axis


def test_the_unsupported_axes_of_the_digest_are_listed() -> None:
    refused = " ".join(axis.axis.lower() for axis in load_axes() if not axis.supported)
    for word in ("golden round", "blind bidding", "four players"):
        assert word in refused


def test_the_expressible_axes_of_the_digest_map_to_their_knobs() -> None:
    mapped = {knob for axis in load_axes() for knob in axis.knobs}
    for knob in (
        "auction.high_bid_step", "marriages.trump_from", "scoring.declarer_rounding", "giving_up.defender_gain",
        "giving_up.limit", "giving_up.on_barrel", "bolts.counting", "barrel.max_occupants",
        "barrel.failed_visit_reset", "dump.negative", "redeals.rules", "marriages.first_trick",
        "marriages.four_aces", "match_end.target",
    ):
        assert knob in mapped, knob


def test_a_bad_axes_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "axes.yaml"
    path.write_text("axes:\n  - axis: Something\n    knob: [auction.nope]\n", encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_axes(path)
    assert str(caught.value) == f"{path}:2:5: axes[0]: no such knob 'auction.nope'"


def test_an_axis_without_knobs_needs_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "axes.yaml"
    path.write_text("axes:\n  - axis: Something\n    supported: false\n", encoding="utf-8")
    with pytest.raises(ProfileError, match="needs 'supported: false' and a 'reason'"):
        load_axes(path)


def test_equivalent_values_table_reads() -> None:
    """spec/equivalent-values.yaml: every entry names a knob, a profile and its reason."""
    found = variants.load_equivalents()
    assert found and all(item.reason for item in found)
    assert "classic marriages.last_trick=7" in {item.label for item in found}


@pytest.mark.parametrize(("text", "expected"), [
    ("equivalent: 3\n", "a list 'equivalent'"),
    ("equivalent:\n  - {knob: auction.nope, values: [1], profiles: [classic], reason: x}\n", "no such knob 'auction.nope'"),
    ("equivalent:\n  - {knob: auction.max_bid, values: [410], profiles: [nowhere], reason: x}\n", "no such profile or option 'nowhere'"),
    ("equivalent:\n  - {knob: auction.max_bid, values: [], profiles: [classic], reason: x}\n", "non-empty list"),
    ("equivalent:\n  - {knob: auction.max_bid, values: [410], profiles: [classic]}\n", "exactly 'knob'"),
])
def test_equivalent_values_table_refuses_bad_entries(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "equivalent-values.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(variants.ProfileError) as caught:
        variants.load_equivalents(path)
    assert expected in str(caught.value) and "equivalent-values.yaml" in str(caught.value)
