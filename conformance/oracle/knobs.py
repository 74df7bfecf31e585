"""Which knobs decide a transcript's outcome: each knob changed alone, the case replayed.

A case's ``knobs`` list says which rules it tests. Writing that list by hand drifts (a case
labelled with the bid step that really depends on the ceiling), so it is computed: for every
profile of the case and every knob that can matter there (not inert, not display-only), the
knob's value is changed alone to each of a few other allowed values, the case is replayed
against an implementation with that changed document, and the knob decides the case when
some check of the case (legal set, refusal, events, state) no longer holds.

The replay speaks protocol v1 through an ``ask(command, **fields) -> reply`` callable, so
this module never imports the reference: ``conformance.oracle.generate`` passes its subprocess,
and the tests pass the reference's server in-process (much faster).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, Sequence

from conformance.corpus.transcripts import refused_reasons
from conformance.harness.runner import DEFAULT_MATCH_STATE, same, state_differences, unmatched_event

Ask = Callable[..., dict[str, Any]]
Deals = Sequence[Mapping[str, Any]]

# Nearby integers tried for an integer knob: one point either side shows an off-by-one
# threshold, ten either side a value that moves past a bid or score on the grid.
NEARBY = (-1, 1, -10, 10)
# A null (switched off) integer knob is switched on at these values, besides the values the
# bundled profiles use and the schema's minimum: 10, a typical step.
SWITCHED_ON = (10,)


def _value_schema(section: str, knob: str) -> dict[str, Any]:
    from variants.schema import knob_entry

    entry = knob_entry(section, knob)
    spec: dict[str, Any] = entry.get("properties", {}).get("value", entry)
    return spec


@functools.cache
def _bundled_rules() -> tuple[dict[str, Any], ...]:
    import variants

    return tuple(variants.resolve(name).to_document()["rules"] for name in variants.all_names())


def _seen_values(section: str, knob: str) -> list[Any]:
    """The values of the knob across the bundled profiles and options (for null integers)."""
    found: list[Any] = []
    for rules in _bundled_rules():
        value = rules.get(section, {}).get(knob)
        if value not in found:
            found.append(value)
    return found


def alternatives(section: str, knob: str, value: Any) -> list[Any]:
    """A few other allowed values of a knob: every other enum value, the other boolean,
    nearby integers and null, each integer of a switched-off knob, one marriage value or
    one redeal rule changed at a time."""
    spec = _value_schema(section, knob)
    kinds = spec.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    if "enum" in spec:
        found = [v for v in spec["enum"] if v != value]
    elif "boolean" in kinds:
        found = [not value]
    elif "integer" in kinds:
        found = _integers(spec, kinds, value, _seen_values(section, knob))
    elif "object" in kinds and isinstance(value, dict):
        found = [{**value, key: number + 10} for key, number in value.items()]
    elif "array" in kinds and isinstance(value, list):
        found = _rule_lists(value)
    else:
        found = []
    unique: list[Any] = []
    for candidate in found:
        if candidate != value and candidate not in unique:
            unique.append(candidate)
    return unique


def _integers(spec: Mapping[str, Any], kinds: list[str], value: Any, seen: Sequence[Any]) -> list[Any]:
    low, high = spec.get("minimum", -10**9), spec.get("maximum", 10**9)
    if value is None:
        found = [spec.get("minimum"), *SWITCHED_ON, *seen]
    else:
        found = [value + delta for delta in NEARBY] + list(seen) + ([None] if "null" in kinds else [])
    return [v for v in found if v is None and "null" in kinds or isinstance(v, int) and low <= v <= high]


def _rule_lists(rules: list[Any]) -> list[Any]:
    """No rule at all, each rule left out, each rule's `by` turned over."""
    found: list[Any] = [[]]
    for index, rule in enumerate(rules):
        found.append(rules[:index] + rules[index + 1:])
        flipped = {**rule, "by": "claim" if rule.get("by") == "automatic" else "automatic"}
        found.append(rules[:index] + [flipped] + rules[index + 1:])
    return found


@functools.cache
def _resolved(profile: str) -> tuple[dict[str, Any], frozenset[str]]:
    """The profile's resolved document (rules only: provenance decides nothing) and its
    knobs that cannot change an outcome."""
    import variants

    resolved = variants.resolve(profile)
    document = {key: value for key, value in resolved.to_document().items() if key != "provenance"}
    return document, frozenset(variants.inert_knobs(resolved))


@functools.cache
def changed_documents(profile: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    """``(knob, document)`` for every single-knob change worth trying under the profile:
    the changes a valid profile could make (the cross-knob checks of ``variants`` pass).

    Cached, and built by shallow copies: the same document objects serve every case, so an
    implementation may cache what it builds from each one.
    """
    from variants.checks import CONSISTENCY_CHECKS
    from variants.schema import rule_sections

    document, inert = _resolved(profile)
    rules = document["rules"]
    found = []
    for section, knobs in rule_sections().items():
        for knob in knobs:
            name = f"{section}.{knob}"
            if name in inert or knob not in rules.get(section, {}):
                continue
            for value in alternatives(section, knob, rules[section][knob]):
                changed_rules = {**rules, section: {**rules[section], knob: value}}
                if any(check(changed_rules) is not None for check in CONSISTENCY_CHECKS):
                    continue  # no valid profile has it (stop_at 50 below the opening bid): it proves nothing
                found.append((name, {**document, "rules": changed_rules}))
    return tuple(found)


class _Changed(Exception):
    """A check of the case no longer holds."""


def outcome_holds(ask: Ask, profile: str, document: Mapping[str, Any], deals: Deals,
                  match: Mapping[str, Any] | None = None) -> bool | None:
    """Whether every check of the case holds under ``document`` (None: the implementation
    does not accept the document at all, so the change says nothing)."""
    reply = ask("match", profile=profile, document=document, state={**DEFAULT_MATCH_STATE, **(match or {})})
    if reply.get("ok") is not True:
        return None
    try:
        for deal in deals:
            _replay_deal(ask, deal)
    except _Changed:
        return False
    return True


def _replay_deal(ask: Ask, deal: Mapping[str, Any]) -> None:
    reply = ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
    _require(reply.get("ok") is True)
    _events(deal.get("events"), reply)
    for step in deal["steps"]:
        if "player" in step:
            _require(same(step["player"], ask("state")["state"].get("to_act")))
        if "legal" in step:
            actions = ask("legal").get("actions")
            _require(isinstance(actions, list) and set(actions) == set(step["legal"]))
        reply = ask("apply", action=step["action"])
        if "refused" in step:
            refusal = reply.get("refusal")
            _require(reply.get("ok") is False and isinstance(refusal, dict) and refusal.get("reason") in refused_reasons(step["refused"]))
            continue
        _require(reply.get("ok") is True)
        _events(step.get("events"), reply)
        _expect(ask, step.get("expect"))
    _expect(ask, deal.get("expect"))


def _require(holds: bool) -> None:
    if not holds:
        raise _Changed


def _events(expected: list[dict[str, Any]] | None, reply: Mapping[str, Any]) -> None:
    if expected:
        actual = reply.get("events")
        _require(isinstance(actual, list) and unmatched_event(expected, actual) is None)


def _expect(ask: Ask, expected: Mapping[str, Any] | None) -> None:
    if expected:
        state = ask("state").get("state")
        _require(isinstance(state, dict) and not state_differences(dict(expected), state))


def _worth_trying(profile: str, profiles: Sequence[str]) -> Callable[[str], bool] | None:
    """Which knobs to try under this profile of the case (None: every knob).

    A profile ``name+option`` differs from ``name`` only in the knobs its options set; when
    the case also lists ``name``, every other knob was already tried there, so only the
    option's knobs and the knobs live under the option but inert under the base are tried
    (this keeps cases listing many options fast, at the price of missing an interaction
    between a changed knob and an option's knob).
    """
    base = profile.split("+")[0]
    if profile == base or base not in profiles:
        return None
    base_rules = _resolved(base)[0]["rules"]
    rules, inert = _resolved(profile)[0]["rules"], _resolved(base)[1]

    def differs(knob: str) -> bool:
        section, name = knob.split(".")
        return knob in inert or base_rules.get(section, {}).get(name) != rules.get(section, {}).get(name)

    return differs


def deciding_knobs(ask: Ask, profiles: Sequence[str], deals: Deals, match: Mapping[str, Any] | None = None) -> list[str]:
    """The knobs ("section.knob") whose change alone changes the case's outcome under any
    of its profiles, in schema order. A knob already found is not tried again."""
    found: set[str] = set()
    for profile in profiles:
        worth = _worth_trying(profile, profiles)
        for knob, document in changed_documents(profile):
            if knob in found or (worth is not None and not worth(knob)):
                continue
            if outcome_holds(ask, profile, document, deals, match) is False:
                found.add(knob)
    from variants.schema import rule_sections

    order = [f"{section}.{knob}" for section, knobs in rule_sections().items() for knob in knobs]
    return sorted(found, key=order.index)
