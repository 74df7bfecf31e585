"""Validation against spec/schema/profile.schema.json, with errors mapped to YAML lines."""

from __future__ import annotations

import difflib
import json
from functools import lru_cache
from typing import Any

# jsonschema ships no type stubs and the project installs none: its objects are Any here.
import jsonschema  # type: ignore[import-untyped,unused-ignore]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped,unused-ignore]

from spec import SCHEMA_DIR
from variants.errors import ProfileError, raise_all
from variants.loader import DocPath, Marks, dotted

SCHEMA_FILE = SCHEMA_DIR / "profile.schema.json"

_PATTERN_MEANING = {
    "^[a-z0-9][a-z0-9-]{0,62}$": "a name of lowercase letters, digits and hyphens (at most 63 characters)",
    "^[a-z0-9][a-z0-9-]* \\S.*$": "a citation 'SOURCE-KEY section', e.g. 'seed-000 §03 Auction and talon'",
    "^[a-z_]+\\.[a-z_]+$": "a knob as 'section.knob', e.g. 'auction.bid_step'",
}


@lru_cache(maxsize=1)
def profile_schema() -> dict[str, Any]:
    """The profile schema (read once)."""
    with SCHEMA_FILE.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema


def _is_strict_integer(_checker: Any, instance: Any) -> bool:
    # JSON Schema counts 5.0 as an integer; a profile must write 5.
    return isinstance(instance, int) and not isinstance(instance, bool)


@lru_cache(maxsize=1)
def _validator() -> Any:
    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine("integer", _is_strict_integer)
    strict = jsonschema.validators.extend(base, type_checker=checker)
    return strict(profile_schema())


def rule_sections() -> dict[str, list[str]]:
    """Section -> knob names, in schema order."""
    sections = profile_schema()["$defs"]["rules"]["properties"]
    return {name: list(spec["properties"]) for name, spec in sections.items()}


def knob_entry(section: str, knob: str) -> dict[str, Any]:
    """The schema of a knob's entry (``value`` with its provenance, and the ``x-`` annotations)."""
    entry: dict[str, Any] = profile_schema()["$defs"]["rules"]["properties"][section]["properties"][knob]
    return entry


FIT_ROLES = ("amount", "step", "count", "score_line", "bid_line", "trick_line", "number")
# The roles of a number inside the items of a list knob (a redeal rule's points): ``hand_points``
# is a line of a hand's card points, shown by the hands of the players the ``x-fit-event``
# events name (the event's ``reason`` is the value of the item's enum field it belongs to)
ITEM_FIT_ROLES = ("hand_points",)


def fit_roles() -> dict[str, tuple[tuple[str, ...], str | None]]:
    """``section.knob`` -> (its ``x-fit-role`` list, its ``x-fit-event`` or None), for every
    number knob the schema annotates: how ``thousand fit`` reads candidate values for it."""
    found: dict[str, tuple[tuple[str, ...], str | None]] = {}
    for section, knobs in rule_sections().items():
        for knob in knobs:
            entry = knob_entry(section, knob)
            if "x-fit-role" in entry:
                found[f"{section}.{knob}"] = (tuple(entry["x-fit-role"]), entry.get("x-fit-event"))
    return found


def item_fit_roles() -> dict[str, dict[str, tuple[tuple[str, ...], str | None]]]:
    """``section.knob`` -> item field -> (its ``x-fit-role`` list, its ``x-fit-event`` or None),
    for every list knob whose items hold a number the schema annotates."""
    found: dict[str, dict[str, tuple[tuple[str, ...], str | None]]] = {}
    for section, knobs in rule_sections().items():
        for knob in knobs:
            items = knob_entry(section, knob)["properties"]["value"].get("items", {})
            for name, spec in items.get("properties", {}).items():
                if "x-fit-role" in spec:
                    found.setdefault(f"{section}.{knob}", {})[name] = (tuple(spec["x-fit-role"]), spec.get("x-fit-event"))
    return found


def validate_document(data: Any, marks: Marks, file: str) -> None:
    """Raise a ProfileError for the first schema violation (by position in the file), carrying
    every other one (``more``)."""
    found = [_describe(error, marks, file) for error in _validator().iter_errors(data)]
    unique = {(p.line, p.column, p.path, p.message): p for p in found if p is not None}
    raise_all(list(unique.values()))


def display_path(path: DocPath) -> str:
    """The dotted path of a field, leaving out the 'value' step inside a knob entry."""
    parts = list(path)
    for start in (0, 2):  # rules.SECTION.KNOB.value, options.NAME.rules.SECTION.KNOB.value
        head = parts[start : start + 4]
        if len(head) == 4 and head[0] == "rules" and head[3] == "value" and (start == 0 or parts[0] == "options"):
            del parts[start + 3]
            break
    return dotted(tuple(parts))


def _describe(error: ValidationError, marks: Marks, file: str) -> ProfileError | None:
    path: DocPath = tuple(error.absolute_path)
    handler = _HANDLERS.get(str(error.validator), _generic)
    result = handler(error, path, marks)
    if result is None:
        return None
    where, message, is_key = result
    pos = marks.of_key(where) if is_key else marks.of_value(where)
    return ProfileError(file, message, line=pos.line, column=pos.column, path=display_path(where))


# A handler returns (path to report, message, whether to point at the key) or None to drop.
_Result = tuple[DocPath, str, bool] | None


def _show(instance: Any) -> str:
    if instance is None:
        return "null"
    if isinstance(instance, bool):
        return "true" if instance else "false"
    if isinstance(instance, dict):
        return "a mapping"
    if isinstance(instance, list):
        return "a list"
    if isinstance(instance, str):
        return repr(instance if len(instance) <= 60 else instance[:57] + "...")
    return repr(instance)


def expected(schema: dict[str, Any]) -> str:
    """What a schema accepts, in words."""
    if "enum" in schema:
        return "one of " + ", ".join(_show(v) for v in schema["enum"])
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    words = {
        "integer": "an integer",
        "string": "a string",
        "boolean": "true or false",
        "object": "a mapping",
        "array": "a list",
        "null": "null",
    }
    text = " or ".join(words.get(kind, kind) for kind in kinds) or "a value"
    if "integer" in kinds:
        bounds = []
        if "minimum" in schema:
            bounds.append(f">= {schema['minimum']}")
        if "maximum" in schema:
            bounds.append(f"<= {schema['maximum']}")
        if bounds:
            text = text.replace("an integer", "an integer " + " and ".join(bounds))
    if "integer" in kinds and "null" in kinds:
        text += " (write null for no limit)"
    if "value" in schema.get("properties", {}):
        text = "a mapping {value: ..., source: ...} or {value: ..., ruling: ...}"
    return text


def _type(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    if not path and isinstance(error.instance, str):
        # The whole file is one piece of text: perhaps not a profile at all (a symlink to a
        # secret), so none of it is quoted.
        return path, f"expected {expected(error.schema)}, got text (the file is not a profile)", False
    return path, f"expected {expected(error.schema)}, got {_show(error.instance)}", False


def _bound(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    return path, f"expected {expected(error.schema)}, got {_show(error.instance)}", False


def _enum(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    return path, f"expected one of {', '.join(_show(v) for v in error.validator_value)}, got {_show(error.instance)}", False


def _required(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    instance = error.instance
    missing = [k for k in error.validator_value if k not in instance]
    names = ", ".join(repr(k) for k in missing)
    return path, f"missing required field{'s' if len(missing) > 1 else ''} {names}", bool(path)


def _unknown(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    schema: dict[str, Any] = error.schema
    known = list(schema.get("properties", {}))
    extra = [k for k in error.instance if k not in known]
    first = min(extra, key=lambda k: (marks.of_key(path + (k,)).line, k))
    kind = _kind_of_key(path)
    hint = difflib.get_close_matches(first, known, n=1, cutoff=0.6)
    if hint:
        advice = f"; did you mean {hint[0]!r}?"
    else:
        advice = "; expected one of " + ", ".join(known)
    return path + (first,), f"unknown {kind} {first!r}{advice}", True


def _kind_of_key(path: DocPath) -> str:
    tail = path[2:] if path[:1] == ("options",) and len(path) >= 3 else path
    if tail == ("rules",):
        return "section"
    if len(tail) == 2 and tail[0] == "rules":
        return "knob"
    return "key"


def _pattern(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    if "propertyNames" in error.schema_path:  # a mapping key, not a value
        return _property_names(error, path, marks)
    meaning = _PATTERN_MEANING.get(str(error.validator_value), f"text matching {error.validator_value}")
    return path, f"expected {meaning}, got {_show(error.instance)}", False


def _property_names(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    name = str(error.instance)
    return path + (name,), f"invalid name {name!r}: expected {_PATTERN_MEANING['^[a-z0-9][a-z0-9-]{0,62}$']}", True


def _length(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    size = len(error.instance)
    limit = error.validator_value
    if error.validator == "minLength":
        what = "a ruling must be full sentences giving the reason; " if path and path[-1] == "ruling" else ""
        return path, f"{what}expected at least {limit} characters, got {size}", False
    return path, f"expected at most {limit} characters, got {size}", False


def _any_of(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    instance = error.instance
    if isinstance(instance, dict):  # the one_reason rule of a knob entry
        return path, "a value needs a 'source' (a cited section) or a 'ruling' (the reason)", True
    if path and path[-1] == "extends":
        return path, f"expected a profile name or null, got {_show(instance)}", False
    return _generic(error, path, marks)


def _not(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    instance = error.instance
    if isinstance(instance, dict) and "source" in instance and "ruling" in instance:
        return path + ("ruling",), "give exactly one of 'source' or 'ruling', not both", True
    return None  # a non-mapping entry: its type error says it better


def _generic(error: ValidationError, path: DocPath, marks: Marks) -> _Result:
    return path, error.message, False


_HANDLERS = {
    "type": _type,
    "minimum": _bound,
    "maximum": _bound,
    "enum": _enum,
    "required": _required,
    "additionalProperties": _unknown,
    "pattern": _pattern,
    "propertyNames": _property_names,
    "minLength": _length,
    "maxLength": _length,
    "anyOf": _any_of,
    "not": _not,
}
