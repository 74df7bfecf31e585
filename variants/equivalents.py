"""Knob values that play as a profile's own on every deal (spec/equivalent-values.yaml)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec import SPEC_DIR
from variants.errors import ProfileError
from variants.loader import Position, load_yaml_file
from variants.resolve import all_names
from variants.schema import rule_sections

EQUIVALENTS_FILE = SPEC_DIR / "equivalent-values.yaml"


@dataclass(frozen=True)
class Equivalent:
    """One value of a knob that no deal of the profile can tell from the profile's own value."""

    profile: str  # a profile or ``profile+option``
    knob: str  # section.knob
    value: Any
    reason: str

    @property
    def label(self) -> str:
        """``profile knob=value``, the value in JSON (as tests and reports name it)."""
        return f"{self.profile} {self.knob}={json.dumps(self.value, sort_keys=True)}"


def load_equivalents(path: Path = EQUIVALENTS_FILE) -> list[Equivalent]:
    """Read and check the table; one Equivalent per profile and value."""
    data, marks = load_yaml_file(path)
    file = str(path)
    if not isinstance(data, dict) or not isinstance(data.get("equivalent"), list):
        raise ProfileError(file, "expected a mapping with a list 'equivalent'", line=1, column=1)
    names = set(all_names())  # read once: each listing reads and resolves every bundled profile
    found: list[Equivalent] = []
    for index, item in enumerate(data["equivalent"]):
        found += _entry(item, index, file, marks.of_value(("equivalent", index)), names)
    return found


def _entry(item: object, index: int, file: str, pos: Position, names: set[str]) -> list[Equivalent]:
    def fail(message: str) -> ProfileError:
        return ProfileError(file, message, line=pos.line, column=pos.column, path=f"equivalent[{index}]")

    if not isinstance(item, dict) or set(item) != {"knob", "values", "profiles", "reason"}:
        raise fail("expected a mapping with exactly 'knob', 'values', 'profiles' and 'reason'")
    section, _, knob = str(item["knob"]).partition(".")
    if knob not in rule_sections().get(section, []):
        raise fail(f"no such knob {item['knob']!r}")
    if not isinstance(item["values"], list) or not item["values"]:
        raise fail("expected 'values' to be a non-empty list of the knob's values")
    if not isinstance(item["profiles"], list) or not all(isinstance(p, str) for p in item["profiles"]):
        raise fail("expected 'profiles' to be a list of profile names")
    unknown = [p for p in item["profiles"] if p not in names]
    if unknown:
        raise fail(f"no such profile or option {unknown[0]!r}")
    if not isinstance(item["reason"], str) or not item["reason"].strip():
        raise fail("expected 'reason' to say why no deal can show the difference")
    return [Equivalent(profile, str(item["knob"]), value, item["reason"])
            for profile in item["profiles"] for value in item["values"]]


def shown_by_no_deal(profile: str, values: dict[str, Any]) -> dict[str, str]:
    """Knob ("section.knob") -> why no deal of ``profile`` can show another value: a switch (an
    enum or a boolean) every other value of which the table lists as equivalent under it. Such
    a value needs no case there, as an inert knob needs none (``thousand coverage``)."""
    from variants.schema import knob_entry

    listed: dict[str, list[Equivalent]] = {}
    for equivalent in load_equivalents():
        if equivalent.profile == profile:
            listed.setdefault(equivalent.knob, []).append(equivalent)
    found = {}
    for knob, entries in listed.items():
        section, _, name = knob.partition(".")
        schema = knob_entry(section, name)["properties"]["value"]
        domain = schema["enum"] if "enum" in schema else [True, False] if schema.get("type") == "boolean" else None
        if domain is None or knob not in values:
            continue
        others = [v for v in domain if v != values[knob]]
        if others and all(any(e.value == v for e in entries) for v in others):
            found[knob] = f"every other value plays the same here ({entries[0].reason})"
    return found
