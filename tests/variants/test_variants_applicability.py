"""Inert knobs: values no transcript can show under a profile, computed from the schema."""

from __future__ import annotations

import variants


def test_penalty_is_inert_without_penalty_from() -> None:
    inert = variants.inert_knobs(variants.resolve("gambler-club"))
    assert inert["giving_up.penalty"] == "it applies only when giving_up.allowed is true and giving_up.penalty_from is not null"


def test_penalty_applies_where_late_give_ups_cost() -> None:
    assert "giving_up.penalty" not in variants.inert_knobs(variants.resolve("classic"))


def test_switching_a_section_off_makes_its_knobs_inert() -> None:
    with_barrel = variants.inert_knobs(variants.resolve("skill-games"))
    without = variants.inert_knobs(variants.resolve("skill-games+no-barrel"))
    assert "barrel.threshold" not in with_barrel
    assert "barrel.threshold" in without
    assert "giving_up.on_barrel" in without


def test_defenders_can_win_matters_only_where_a_defender_can_reach_the_target() -> None:
    assert "match_end.defenders_can_win" in variants.inert_knobs(variants.resolve("polish"))
    assert "match_end.defenders_can_win" not in variants.inert_knobs(variants.resolve("classic"))
    assert "match_end.defenders_can_win" not in variants.inert_knobs(variants.resolve("skill-games+no-barrel"))


def test_display_only_knob() -> None:
    assert variants.inert_knobs(variants.resolve("polish"))["giving_up.local_name"] == "it changes only the name shown"


def test_enabled_switches_are_never_inert() -> None:
    for name in ("gambler-club", "classic", "skill-games", "polish", "polish-tournament"):
        inert = variants.inert_knobs(variants.resolve(name))
        assert not any(knob.endswith(".enabled") or knob == "giving_up.allowed" for knob in inert)
