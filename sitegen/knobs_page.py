"""The knob reference: every knob of the profile schema, for a referee writing house rules.

Generated from spec/schema/profile.schema.json (so a knob added there appears here with no
other change) and the bundled profiles: the knob's meaning, the values it allows (each in
words), its default, and what each profile and option sets it to.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import variants
from variants.prose import SENTENCES, anchor, format_value, sentence
from variants.schema import knob_entry, rule_sections

NULL_WORDS = re.compile(r"null: ([^.;)]+)")


def null_meaning(description: str) -> str:
    """What null means for an int-or-null knob, in words ("no limit", "no bonus", ...), from the
    schema's "null: ..." note."""
    found = NULL_WORDS.search(description)
    words = found.group(1).strip() if found else "no limit"
    return "no limit" if words == "off" else words


def allowed_values(knob: str, value_schema: dict[str, Any], description: str) -> list[str]:
    """The values a knob accepts, one Markdown list item each, with what each means."""
    kinds = value_schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    items: list[str] = []
    if "enum" in value_schema:
        items += [f"`{format_value(v)}`: {_meaning(knob, v)}" for v in value_schema["enum"]]
    elif "boolean" in kinds:
        items += [f"`true`: {_meaning(knob, True)}", f"`false`: {_meaning(knob, False)}"]
    elif "integer" in kinds:
        low, high = value_schema.get("minimum"), value_schema.get("maximum")
        bounds = f" from {low} to {high}" if low is not None and high is not None else ""
        items.append(f"a whole number{bounds}")
    elif "object" in kinds:
        fields = value_schema.get("properties", {})
        items.append("a mapping of " + ", ".join(f"`{name}`" for name in fields) + " to whole numbers"
                     if fields else "a mapping")
    elif "array" in kinds:
        items.append("a list (`[]` for none) of entries, each a mapping:")
        for name, field in value_schema.get("items", {}).get("properties", {}).items():
            choices = ", ".join(f"`{v}`" for v in field.get("enum", []))
            items.append(f"    - `{name}`: {field.get('description', '')}" + (f" One of {choices}." if choices else ""))
    if "null" in kinds:
        meaning = null_meaning(description)
        said = sentence(knob, None, {}) if knob in SENTENCES else ""
        items.append(f"`null`: {meaning}" + (f" ({said.rstrip('.')})" if said and not said.startswith("`") else "")
                     + ". Write `null`, not `off` (YAML reads `off` as false).")
    return items


def _meaning(knob: str, value: Any) -> str:
    said = sentence(knob, value, {}) if knob in SENTENCES else ""
    return said if said and not said.startswith("`") else "see the meaning above."


def profiles_setting(knob: str, names: Sequence[str]) -> list[str]:
    """What the bundled profiles set, grouped by value, then each option that changes it."""
    by_value: dict[str, list[str]] = {}
    options = []
    for info in variants.list_profiles():
        if info.name not in names:
            continue
        by_value.setdefault(format_value(variants.resolve(info.name).value(knob)), []).append(
            f"[{info.name}](profiles/{info.name}.md#{anchor(knob)})")
        for option in info.options:
            full = f"{info.name}+{option.name}"
            resolved = variants.resolve(full)
            if resolved.provenance.get(knob, {}).get("from") == full:
                options.append(f"`{full}` sets `{format_value(resolved.value(knob))}`")
    values = " · ".join(f"`{value}`: {', '.join(profiles)}" for value, profiles in by_value.items())
    lines = [f"Profiles: {values}."]
    return lines + ([f"Options: {'; '.join(options)}."] if options else [])


def knob_reference_page(mark: str, names: Sequence[str], sections: Sequence[str], titles: dict[str, str]) -> str:
    lines = ["---", "search:", "  boost: 3", "---", mark, "", "# Knob reference", "",
             "Every rule a profile can set (a *knob*), by rule section: what it means, the values it "
             "allows, its default (the value the schema suggests; every root profile states its own), and "
             "what each bundled profile and option sets. A house-rules file changes a knob by naming it "
             "under its section, with a source or a ruling (see [Write your house rules](house-rules.md)). "
             "`null` is written `null`: it means the rule is not in play (no limit, no bonus).", ""]
    schema_sections = rule_sections()
    lines += ["Sections: " + " · ".join(f"[{titles.get(s, s)}](#{s.replace('_', '-')})" for s in sections), ""]
    for section in sections:
        entry_section = schema_sections.get(section, [])
        if not entry_section:
            continue
        lines += [f"## {titles.get(section, section)} {{#{section.replace('_', '-')}}}", ""]
        for knob_name in entry_section:
            knob = f"{section}.{knob_name}"
            entry = knob_entry(section, knob_name)
            value_schema = entry["properties"]["value"]
            description = str(entry.get("description", ""))
            lines += [f"### `{knob}` {{#{anchor(knob)}}}", "", description, "", "Allowed values:", ""]
            lines += [item if item.startswith("    ") else f"- {item}" for item in allowed_values(knob, value_schema, description)]
            if "default" in value_schema:
                lines += ["", f"Default: `{format_value(value_schema['default'])}`."]
            lines += ["", *profiles_setting(knob, names), ""]
    return "\n".join(lines) + "\n"
