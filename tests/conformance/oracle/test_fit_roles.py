"""fit's role tables come from the schema (``x-fit-role``, ``x-fit-event``).

The tables are the ones fit used when they were written out in ``candidates.py``; a new
number knob names its role in the schema and fit reads it from there.
"""

from __future__ import annotations

from conformance.oracle import candidates
from variants.schema import FIT_ROLES, fit_roles, rule_sections, knob_entry


def test_the_tables_read_from_the_schema_are_the_ones_fit_used() -> None:
    assert candidates.AMOUNT_KNOBS == {
        "auction.opening_bid", "auction.high_bid_from", "auction.marriage_needed_above", "auction.max_bid",
        "auction.stop_at", "auction.pre_talon_max", "auction.barrel_min_bid", "talon.shown_from_bid",
        "barrel.min_contract"}
    assert candidates.STEP_KNOBS == {"auction.bid_step", "auction.high_bid_step"}
    assert candidates.SCORE_LINES == {"barrel.threshold": "barrel_entered", "match_end.target": "match_won"}
    assert candidates.TALON_LINE == "talon.shown_from_bid"
    assert candidates.MARRIAGE_LINE == "marriages.last_trick"
    assert candidates.COUNT_KNOBS == {"giving_up.defenders_paid_from": "give_up", "giving_up.penalty_from": "give_up",
                                      "giving_up.limit": "give_up", "bolts.every": "bolt",
                                      # added with its schema entry alone: no edit of candidates.py
                                      "giving_up.declarer_loses_from": "give_up"}


def test_every_number_knob_has_a_known_role() -> None:
    roles = fit_roles()
    for section, knobs in rule_sections().items():
        for knob in knobs:
            kind = knob_entry(section, knob)["properties"]["value"].get("type")
            if "integer" in (kind if isinstance(kind, list) else [kind]):
                assert f"{section}.{knob}" in roles, f"{section}.{knob} has no x-fit-role"
    assert all(set(names) <= set(FIT_ROLES) for names, _event in roles.values())
    assert roles["barrel.attempts"] == (("number",), None)
