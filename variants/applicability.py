"""Which knobs of a resolved profile can change an outcome, and which are inert there.

The profile schema annotates a knob with ``x-applies-when``: a list of alternatives, each
a mapping of other knobs to the value they must have (or ``{"not": value}``, or, for a
list-valued knob, ``{"any_item": {field: value}}`` or ``{"no_item": ...}``: some item, or
no item, has those fields). A knob
whose alternatives all fail is inert under that profile (``giving_up.penalty`` while
``penalty_from`` is null): no transcript can show its value, so coverage does not ask for
one. ``x-display-only`` marks a knob that changes only what is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from variants.model import ResolvedProfile
from variants.schema import knob_entry


def _holds(profile: ResolvedProfile, knob: str, wanted: Any) -> bool:
    actual = profile.value(knob)
    if isinstance(wanted, dict) and set(wanted) == {"not"}:
        return bool(actual != wanted["not"])
    if isinstance(wanted, dict) and set(wanted) in ({"any_item"}, {"no_item"}):
        fields: dict[str, Any] = wanted["any_item"] if "any_item" in wanted else wanted["no_item"]
        found = any(isinstance(item, Mapping) and all(item.get(k) == v for k, v in fields.items()) for item in actual or ())
        return found if "any_item" in wanted else not found
    return bool(actual == wanted)


def _describe(alternative: dict[str, Any]) -> str:
    parts = []
    for knob, wanted in alternative.items():
        if isinstance(wanted, dict) and set(wanted) == {"not"}:
            parts.append(f"{knob} is not {_show(wanted['not'])}")
        elif isinstance(wanted, dict) and set(wanted) in ({"any_item"}, {"no_item"}):
            kind = "has an item" if "any_item" in wanted else "has no item"
            item: dict[str, Any] = wanted["any_item"] if "any_item" in wanted else wanted["no_item"]
            fields = ", ".join(f"{k} {_show(v)}" for k, v in item.items())
            parts.append(f"{knob} {kind} with {fields}")
        else:
            parts.append(f"{knob} is {_show(wanted)}")
    return " and ".join(parts)


def _show(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def inert_reason(profile: ResolvedProfile, section: str, knob: str) -> str | None:
    """Why the knob cannot change any outcome under this profile, or None if it can."""
    entry = knob_entry(section, knob)
    if entry.get("x-display-only"):
        return "it changes only the name shown"
    alternatives: list[dict[str, Any]] = entry.get("x-applies-when", [])
    if not alternatives or any(all(_holds(profile, k, v) for k, v in alt.items()) for alt in alternatives):
        return None
    return "it applies only when " + " or when ".join(_describe(alt) for alt in alternatives)


def inert_knobs(profile: ResolvedProfile) -> dict[str, str]:
    """Every inert knob of the profile ("section.knob") with the reason."""
    found = {}
    for section, knobs in profile.rules.items():
        for knob in knobs:
            reason = inert_reason(profile, section, knob)
            if reason is not None:
                found[f"{section}.{knob}"] = reason
    return found


def controlling_knobs(section: str, knob: str) -> list[str]:
    """The knobs named in a knob's ``x-applies-when`` ("section.knob"), in order, once each."""
    found: list[str] = []
    for alternative in knob_entry(section, knob).get("x-applies-when", []):
        found += [name for name in alternative if name not in found]
    return found
