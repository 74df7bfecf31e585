"""Read conformance transcripts (DESIGN.md, Transcript format) safely and check them.

A transcript that cannot be read or is wrong is never a crash: ``load`` raises
``TranscriptError`` whose message names the file, the line, the field and what was expected,
and ``discover`` turns it into a ``CaseBug`` that the runner reports as a "case bug" outcome.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from conformance import schemas
from variants.schema import rule_sections

CONFORMANCE_DIR = Path(__file__).resolve().parent
CASES_DIR = CONFORMANCE_DIR / "cases"
GENERATED_DIR = CONFORMANCE_DIR / "generated"
MAX_BYTES = 2 * 1024 * 1024  # far above any real transcript; guards against a runaway file
ALL_CARDS = frozenset(rank + suit for suit in "SCDH" for rank in ("A", "10", "K", "Q", "J", "9"))
MALFORMED_REASONS = frozenset({"malformed_action", "unknown_card"})


class TranscriptError(Exception):
    """A transcript that cannot be used: the message says where and why."""


@dataclass(frozen=True)
class Transcript:
    """One valid case. ``deals`` keeps the YAML's plain data (dicts and lists)."""

    id: str
    title: str
    path: Path
    profiles: tuple[str, ...]
    knobs: tuple[str, ...]
    deals: tuple[dict[str, Any], ...]
    match: dict[str, Any] | None = None
    source: str | None = None
    generated: bool = False
    description: str = ""


@dataclass(frozen=True)
class CaseBug:
    """A transcript file that could not be loaded; reported, never run."""

    id: str
    path: Path
    message: str
    title: str = ""
    profiles: tuple[str, ...] = field(default_factory=tuple)
    knobs: tuple[str, ...] = field(default_factory=tuple)


# --- YAML: safe, YAML 1.2 booleans, no duplicate keys, with line numbers ---------------

_BOOL_12 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: much faster


class _Loader(_Base):  # type: ignore[misc,valid-type,unused-ignore]
    """SafeLoader where only true/false are booleans.

    YAML 1.1 reads ``on``/``off``/``yes``/``no`` as booleans, which would turn the barrel
    field ``on:`` into the key ``True``.
    """


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_12, list("tTfF"))


def _line_map(node: yaml.Node, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int], source: str) -> None:
    """Record the 1-based line of every value below ``node``; refuse duplicate keys."""
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                raise TranscriptError(f"{source}:{line}: duplicate key {key!r} (first at line {seen[key]})")
            seen[key] = line
            _line_map(value_node, path + (key,), lines, source)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _line_map(item, path + (index,), lines, source)


def read_yaml(path: Path, display: str | None = None) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The data of a YAML file and the line of each value (keyed by its path of keys)."""
    source = display or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise TranscriptError(f"{source}: file is {size} bytes; at most {MAX_BYTES} are read")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise TranscriptError(f"{source}: cannot read: {exc.strerror}") from None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise TranscriptError(f"{source}:1: empty file; expected a transcript mapping")
        lines: dict[tuple[Any, ...], int] = {}
        _line_map(node, (), lines, source)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise TranscriptError(f"{source}:{line}: YAML error: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise TranscriptError(f"{source}: YAML error: {exc}") from None
    finally:
        loader.dispose()
    return data, lines


def _line_of(lines: dict[tuple[Any, ...], int], path: Iterable[Any]) -> int:
    """The line of the deepest recorded prefix of ``path``."""
    parts = tuple(path)
    while parts not in lines and parts:
        parts = parts[:-1]
    return lines.get(parts, 1)


def _field(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


# --- knob names -----------------------------------------------------------------------

@functools.cache
def knob_names() -> frozenset[str]:
    """Every ``section.knob`` of the profile schema."""
    return frozenset(f"{section}.{knob}" for section, knobs in rule_sections().items() for knob in knobs)


# --- checks ---------------------------------------------------------------------------

def _check_cards(data: dict[str, Any], lines: dict[tuple[Any, ...], int], source: str) -> None:
    for number, deal in enumerate(data["deals"]):
        dealt = [card for hand in deal["hands"] for card in hand] + list(deal["talon"])
        repeated = sorted({card for card in dealt if dealt.count(card) > 1})
        if repeated:
            line = _line_of(lines, ("deals", number, "hands"))
            raise TranscriptError(
                f"{source}:{line}: deals[{number}]: card(s) dealt twice: {', '.join(repeated)}; "
                "expected the 24 distinct cards, 7/7/7 and 3 in the talon")
        missing = sorted(ALL_CARDS - set(dealt))
        if missing:
            line = _line_of(lines, ("deals", number, "hands"))
            raise TranscriptError(f"{source}:{line}: deals[{number}]: card(s) not dealt: {', '.join(missing)}")


def _check_knobs(data: dict[str, Any], lines: dict[tuple[Any, ...], int], source: str) -> None:
    known = knob_names()
    for index, name in enumerate(data["knobs"]):
        if name not in known:
            line = _line_of(lines, ("knobs", index))
            raise TranscriptError(f"{source}:{line}: knobs[{index}]: {name!r} is not a knob (section.knob) of the profile schema")


def expected_id(path: Path, root: Path) -> str:
    """The id a transcript at ``path`` must carry: its path below ``root`` without .yaml."""
    return path.relative_to(root).with_suffix("").as_posix()


def load(path: Path, root: Path) -> Transcript:
    """Read, validate and check one transcript; TranscriptError says what is wrong."""
    display = _display(path)
    data, lines = read_yaml(path, display)
    problem = best_problem(data)
    if problem is not None:
        where, message = problem
        raise TranscriptError(f"{display}:{_line_of(lines, where)}: {_field(where)}: {message}")
    want = expected_id(path, root)
    if data["id"] != want:
        raise TranscriptError(f"{display}:{_line_of(lines, ('id',))}: id: {data['id']!r} must equal the path {want!r}")
    _check_cards(data, lines, display)
    _check_knobs(data, lines, display)
    return Transcript(
        id=data["id"], title=data["title"], path=path, profiles=tuple(data["profiles"]),
        knobs=tuple(data["knobs"]), deals=tuple(data["deals"]), match=data.get("match"),
        source=data.get("source"), generated=bool(data.get("generated", False)),
        description=data.get("description", ""),
    )


def best_problem(data: Any) -> tuple[tuple[Any, ...], str] | None:
    """The first schema violation: the path of the field and what was expected."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]

    error = best_match(schemas.transcript_validator().iter_errors(data))
    if error is None:
        return None
    return tuple(error.absolute_path), error.message


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def discover(roots: Iterable[Path]) -> list[Transcript | CaseBug]:
    """Every ``*.yaml`` below each root, loaded; bad files become CaseBug entries."""
    found: list[Transcript | CaseBug] = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.yaml")):
            try:
                found.append(load(path, root))
            except TranscriptError as exc:
                found.append(_bug(path, root, str(exc)))
    return found


def _bug(path: Path, root: Path, message: str) -> CaseBug:
    """A CaseBug that keeps whatever the file says about itself, for filtering and reports."""
    case_id = expected_id(path, root)
    title: str = ""
    profiles: tuple[str, ...] = ()
    knobs: tuple[str, ...] = ()
    try:
        data, _ = read_yaml(path)
        if isinstance(data, dict):
            title = data["title"] if isinstance(data.get("title"), str) else ""
            profiles = tuple(p for p in data.get("profiles") or () if isinstance(p, str))
            knobs = tuple(k for k in data.get("knobs") or () if isinstance(k, str))
    except (TranscriptError, TypeError):
        pass
    return CaseBug(id=case_id, path=path, message=message, title=title or "", profiles=profiles, knobs=knobs)


def refusal_class(reason: str) -> str:
    """The refusal class of a reason code (DESIGN.md, Reason codes)."""
    return "malformed" if reason in MALFORMED_REASONS else "illegal"
