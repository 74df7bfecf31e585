"""The protocol page's tables (spec/protocol.yaml) checked against the reference server.

The reference runs as a subprocess (``python -m reference_impl.server``) and plays
hand-written cases' actions over protocol v1, asking for the ``state`` whenever the phase
may have changed: every state field of the table must appear in those replies and every
field of a reply must be in the table; every phase must be seen; every event of the table
must be emitted, with exactly the fields the table lists, and every event emitted must be
in the table. The cases played are one that expects each event, one that expects a claim
window and the first of each profile (the whole corpus takes half a minute on a busy
machine; these, a few seconds).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

import variants
from conformance.harness.process import Implementation
from conformance.harness.runner import DEFAULT_MATCH_STATE, REFERENCE_COMMAND
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from sitegen.protocol import STATE_MARK, EVENTS_MARK, TEMPLATES, phase_groups, protocol_page, protocol_reference


class Observed:
    """What the reference's replies showed: state fields, phases, events and their fields."""

    def __init__(self) -> None:
        self.state_fields: set[str] = set()
        self.phases: set[str] = set()
        self.events: dict[str, set[frozenset[str]]] = defaultdict(set)

    def state(self, state: dict[str, Any]) -> None:
        self.state_fields |= set(state)
        self.phases.add(state["phase"])

    def emitted(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self.events[event["type"]].add(frozenset(event) - {"type"})


def _chosen_cases() -> list[Transcript]:
    cases = [case for case in discover([CASES_DIR]) if isinstance(case, Transcript)]
    chosen: dict[str, Transcript] = {}
    for case in cases:  # the first case of each profile
        chosen.setdefault(case.profiles[0], case)
    texts = {case.id: case.path.read_text(encoding="utf-8") for case in cases}
    for wanted in [f"type: {event['type']}" for event in protocol_reference()["events"]] + ["phase: claim"]:
        found = next((case for case in cases if wanted in texts[case.id]), None)
        if found is not None:
            chosen[found.id] = found
    return list(chosen.values())


@pytest.fixture(scope="module")
def observed() -> Observed:
    seen = Observed()
    documents: dict[str, Any] = {}
    impl = Implementation(REFERENCE_COMMAND, 30.0)
    try:
        assert impl.request("start", version=1)["profiles"] == "any"
        for case in _chosen_cases():
            profile = case.profiles[0]
            documents.setdefault(profile, variants.resolve(profile).to_document())
            impl.request("match", profile=profile, document=documents[profile], state={**DEFAULT_MATCH_STATE, **(case.match or {})})
            for deal in case.deals:
                seen.emitted(impl.request("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"]).get("events", []))
                seen.state(impl.request("state")["state"])
                for step in deal["steps"]:
                    reply = impl.request("apply", action=step["action"])
                    seen.emitted(reply.get("events") or [])
                    if reply.get("events") or step["action"].startswith(("give ", "no_redeal")):  # the phase may have changed
                        seen.state(impl.request("state")["state"])
    finally:
        impl.stop()
    return seen


def test_every_field_covers_every_phase_once() -> None:
    reference = protocol_reference()
    phases = reference["phases"]
    for field in reference["state_fields"]:
        named = [phase for names, _ in phase_groups(field) for phase in names]
        assert sorted(named) == sorted(phases), f"{field['name']}: phases {named}"
        assert all(isinstance(field[key], str) and field[key] for key in ("name", "type", "meaning")), field["name"]
    for event in reference["events"]:
        assert event["fields"] and all(isinstance(text, str) and text for text in event["fields"].values()), event["type"]


def test_state_table_matches_real_state_replies(observed: Observed) -> None:
    listed = {field["name"] for field in protocol_reference()["state_fields"]}
    assert listed - observed.state_fields == set(), "listed but never in a state reply"
    assert observed.state_fields - listed == set(), "in a state reply but not in spec/protocol.yaml"
    assert observed.phases == set(protocol_reference()["phases"])


def test_event_table_matches_real_events(observed: Observed) -> None:
    listed = {event["type"]: frozenset(event["fields"]) for event in protocol_reference()["events"]}
    assert set(listed) - set(observed.events) == set(), "listed but never emitted over the corpus"
    assert set(observed.events) - set(listed) == set(), "emitted but not in spec/protocol.yaml"
    for kind, field_sets in observed.events.items():
        assert field_sets == {listed[kind]}, f"{kind}: emitted with fields {sorted(map(sorted, field_sets))}, listed {sorted(listed[kind])}"


def test_the_page_renders_the_tables_and_the_points_adapters_asked_about() -> None:
    template = (TEMPLATES / "protocol.md").read_text(encoding="utf-8")
    assert STATE_MARK in template and EVENTS_MARK in template
    page = protocol_page("<!-- mark -->")
    assert STATE_MARK not in page and EVENTS_MARK not in page
    for field in protocol_reference()["state_fields"]:
        assert f"| `{field['name']}` |" in page
    for words in ("`trick` | list of {player, card}", "raw total", "whole change", "8 after a played deal",
                  "stay listed", "thousand show PROFILE --json", "snapshot", "Adapter checklist"):
        assert words in page, words
