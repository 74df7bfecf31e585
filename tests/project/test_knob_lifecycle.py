"""Every knob has every piece DESIGN.md "Adding a knob" lists (tools/knob_lifecycle.py).

The repository's knobs pass; a knob with one piece taken away fails naming that piece, for
each piece in turn (so the check cannot pass by reading nothing).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import pytest

from tools import knob_lifecycle
from tools.knob_lifecycle import Pieces, gaps, knob_gaps

NEW = "auction.brand_new"  # a knob made up for the tests below


@functools.cache
def repository() -> Pieces:
    return knob_lifecycle.load()


def test_every_knob_has_every_piece() -> None:
    found = gaps(repository())
    assert not found, "\n".join(found)


def _entry(kind: Any, enum: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"type": kind, **({"enum": enum} if enum else {})}
    return {"properties": {"value": value}, **extra}


def complete(entry: dict[str, Any], values: tuple[str, ...]) -> Pieces:
    """Pieces in which the made-up knob has everything: the check finds nothing missing."""
    return Pieces(
        schema={NEW: entry}, root_profiles={"root": {NEW}},
        reader='brand_new=s.boolean("brand_new")', engine="if self.rules.auction.brand_new:",
        sentences={NEW}, diagnosed={NEW}, mutants={NEW},
        played={NEW: set(values)}, shown={NEW: set(values)}, unplayed=(), no_mutant=())


SWITCH = (_entry("boolean"), ("true", "false"))
NUMBER = (_entry(["integer", "null"], **{"x-fit-role": ["number"]}), ("3", "null"))


@pytest.mark.parametrize("entry,values", [SWITCH, NUMBER], ids=["switch", "number"])
def test_a_complete_knob_passes(entry: dict[str, Any], values: tuple[str, ...]) -> None:
    assert knob_gaps(NEW, complete(entry, values)) == []


# (what is taken away, the phrase the check reports)
MISSING = [
    ({"root_profiles": {"root": set()}}, "no value in root profile root"),
    ({"reader": "nothing here"}, "the engine does not read it"),
    ({"engine": "nothing here"}, "the engine does not use it"),
    ({"sentences": set()}, "no prose sentence"),
    ({"diagnosed": {"play"}}, "no diagnosis entry"),
    ({"mutants": set()}, "no mutant naming it"),
    ({"shown": {NEW: {"true"}}}, "value false: no case shows it"),
    ({"played": {NEW: {"true"}}, "shown": {NEW: {"true"}}}, "value false: no bundled profile or option plays it"),
]


@pytest.mark.parametrize("change,phrase", MISSING, ids=[phrase for _, phrase in MISSING])
def test_a_knob_lacking_a_piece_fails_naming_it(change: dict[str, Any], phrase: str) -> None:
    pieces = dataclasses.replace(complete(*SWITCH), **change)
    found = knob_gaps(NEW, pieces)
    assert any(phrase in gap for gap in found), found


def test_a_number_without_a_fit_role_fails() -> None:
    entry = _entry("integer")
    found = knob_gaps(NEW, complete(entry, ("3",)))
    assert found == ["a number without a fit role (x-fit-role in the schema)"]


def test_a_count_without_its_event_fails() -> None:
    entry = _entry("integer", **{"x-fit-role": ["count"]})
    assert knob_gaps(NEW, complete(entry, ("3",))) == ["fit role ['count'] without its event (x-fit-event in the schema)"]


def test_the_diagnosis_fallback_does_not_count_as_an_entry() -> None:
    """A ``default:`` list names every section; only the entries of real checks count."""
    tree = {"default": ["auction"], "legal": {"auction": {"pass": ["auction.reentry", "see state.phase"], "default": ["talon"]}}}
    assert knob_lifecycle.diagnosed(tree) == {"auction.reentry"}


def test_a_piece_for_a_knob_the_schema_lacks_is_reported() -> None:
    pieces = dataclasses.replace(complete(*SWITCH), sentences={NEW, "auction.gone"})
    assert gaps(pieces) == ["auction.gone: a prose sentence for a knob the schema does not have"]


def test_the_repository_s_new_knobs_are_complete() -> None:
    """The knobs and values of issue 51 (two new knobs, a nullable number, a new choice)."""
    pieces = repository()
    for knob in ("auction.ends_at_max_bid", "barrel.attempts", "match_end.tie_break", "giving_up.declarer_loses_from"):
        assert knob_gaps(knob, pieces) == [], knob
    assert "null" in pieces.shown["barrel.attempts"]
    assert '"declarer_then_highest_then_play_on"' in pieces.shown["match_end.tie_break"]
    assert {"true", "false"} <= set(pieces.shown["auction.ends_at_max_bid"])
    assert {"1", "2"} <= set(pieces.shown["giving_up.declarer_loses_from"])
