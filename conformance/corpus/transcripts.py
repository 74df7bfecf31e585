"""Read conformance transcripts (DESIGN.md, Transcript format) safely and check them.

A transcript that cannot be read or is wrong is never a crash: ``load`` raises
``TranscriptError`` whose message names the file, the line, the column, the field and what
was expected (quoting at most a short excerpt of the file), and ``discover`` turns it into a
``CaseBug`` that the runner reports as a "case bug" outcome; the other cases still load.
Files are read by ``variants.loader``, the reader profiles use too (YAML 1.2 core, no
aliases, only regular files, bounded size). ``discover`` keeps the checked transcripts in a
cache keyed by file content (``conformance.corpus.cache``), so a run does not parse and
validate the whole corpus again.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from conformance.corpus import cache as corpus_cache
from spec.vocabulary import DECK
from variants.loader import MAX_TRANSCRIPT_BYTES, Marks, YamlError, clip, decode, excerpt, parse_document, read_bytes

CONFORMANCE_DIR = Path(__file__).resolve().parent.parent  # the corpus folders stay at conformance/cases, /generated
CASES_DIR = CONFORMANCE_DIR / "cases"
GENERATED_DIR = CONFORMANCE_DIR / "generated"
MAX_BYTES = MAX_TRANSCRIPT_BYTES
ALL_CARDS = frozenset(DECK)
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


# --- reading: the project's one safe YAML reader (variants.loader), YAML 1.2 core ----------

def read_yaml(path: Path, display: str | None = None) -> tuple[Any, Marks]:
    """The data of a YAML file and the position of each value (keyed by its path of keys)."""
    source = display or str(path)
    return _parse(_read(path, source), source)


def _where(source: str, marks: Marks, path: Iterable[Any]) -> str:
    """``file:line:column: field:`` of the value at ``path`` (or of its nearest ancestor)."""
    parts = tuple(path)
    position = marks.of_value(parts)
    return f"{source}:{position.line}:{position.column}: {_field(parts)}:"


def _field(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


# --- knob names -----------------------------------------------------------------------

@functools.cache
def knob_names() -> frozenset[str]:
    """Every ``section.knob`` of the profile schema."""
    from variants.schema import rule_sections  # the profile schema: only needed on a cache miss

    return frozenset(f"{section}.{knob}" for section, knobs in rule_sections().items() for knob in knobs)


# --- checks ---------------------------------------------------------------------------

def _check_cards(data: dict[str, Any], marks: Marks, source: str) -> None:
    for number, deal in enumerate(data["deals"]):
        dealt = [card for hand in deal["hands"] for card in hand] + list(deal["talon"])
        repeated = sorted({card for card in dealt if dealt.count(card) > 1})
        where = _where(source, marks, ("deals", number, "hands"))
        if repeated:
            raise TranscriptError(
                f"{where} card(s) dealt twice: {', '.join(repeated)}; "
                "expected the 24 distinct cards, 7/7/7 and 3 in the talon")
        missing = sorted(ALL_CARDS - set(dealt))
        if missing:
            raise TranscriptError(f"{where} card(s) not dealt: {', '.join(missing)}")


def _check_knobs(data: dict[str, Any], marks: Marks, source: str) -> None:
    known = knob_names()
    for index, name in enumerate(data["knobs"]):
        if name not in known:
            raise TranscriptError(f"{_where(source, marks, ('knobs', index))} {excerpt(name)} is not a knob "
                                  "(section.knob) of the profile schema")


def check(data: Any, marks: Marks, source: str) -> None:
    """Everything that depends on the file's content alone: schema, cards, knob names."""
    problem = best_problem(data)
    if problem is not None:
        where, message = problem
        raise TranscriptError(f"{_where(source, marks, where)} {message}")
    _check_cards(data, marks, source)
    _check_knobs(data, marks, source)


def expected_id(path: Path, root: Path) -> str:
    """The id a transcript at ``path`` must carry: its path below ``root`` without .yaml."""
    return path.relative_to(root).with_suffix("").as_posix()


def _check_id(data: dict[str, Any], want: str, marks: Callable[[], Marks], source: str) -> None:
    if data["id"] != want:
        raise TranscriptError(f"{_where(source, marks(), ('id',))} {excerpt(data['id'])} must equal the path {want!r}")


def _transcript(data: dict[str, Any], path: Path) -> Transcript:
    return Transcript(
        id=data["id"], title=data["title"], path=path, profiles=tuple(data["profiles"]),
        knobs=tuple(data["knobs"]), deals=tuple(data["deals"]), match=data.get("match"),
        source=data.get("source"), generated=bool(data.get("generated", False)),
        description=data.get("description", ""),
    )


def _parse(raw: bytes, source: str) -> tuple[Any, Marks]:
    try:
        return parse_document(decode(raw, source), source)
    except YamlError as exc:
        raise TranscriptError(str(exc)) from None


def _read(path: Path, source: str) -> bytes:
    try:
        return read_bytes(path, source, MAX_BYTES)
    except YamlError as exc:
        raise TranscriptError(str(exc)) from None


def load(path: Path, root: Path) -> Transcript:
    """Read, validate and check one transcript; TranscriptError says what is wrong."""
    display = _display(path)
    data, marks = _parse(_read(path, display), display)
    check(data, marks, display)
    _check_id(data, expected_id(path, root), lambda: marks, display)
    return _transcript(data, path)


def best_problem(data: Any) -> tuple[tuple[Any, ...], str] | None:
    """The first schema violation: the path of the field and what was expected.

    jsonschema's messages quote the offending value whole; here it is cut to an excerpt,
    so that a file which is not a transcript at all (a symlink to a secret) is not copied
    into the message.
    """
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]

    from conformance.corpus import schemas

    error = best_match(schemas.transcript_validator().iter_errors(data))
    if error is None:
        return None
    if not error.absolute_path and not isinstance(error.instance, dict):
        # The whole file is one value: perhaps not a transcript at all (a symlink to a
        # secret), so none of it is quoted.
        kind = "a list" if isinstance(error.instance, list) else "text" if isinstance(error.instance, str) else "a scalar"
        message = f"expected a mapping (a transcript), got {kind}"
    elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        extra = [key for key in error.instance if key not in known]
        message = f"Additional properties are not allowed ({clip(', '.join(map(repr, extra)))} unexpected)"
    else:
        message = error.message.replace(repr(error.instance), excerpt(error.instance))
    return tuple(error.absolute_path), clip(message, 200)


def _display(path: Path) -> str:
    """The path as shown in messages: relative to the current folder when below it.

    ``os.path.abspath`` rather than ``Path.resolve``: a symlink loop must not raise here, and
    a symlink is named by its own path, never by its target's.
    """
    absolute, here = os.path.abspath(path), os.path.join(os.getcwd(), "")
    return absolute[len(here):] if absolute.startswith(here) else str(path)


def yaml_files(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Every ``*.yaml`` entry below ``root`` (whatever its kind: judged when read), sorted,
    and the folders that could not be listed.

    Symlinks to folders are not followed, so a symlink loop cannot make the walk endless.
    """
    files: list[Path] = []
    unlisted: list[tuple[Path, str]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            unlisted.append((folder, exc.strerror or type(exc).__name__))
            continue
        for entry in entries:
            if entry.name.endswith(".yaml"):
                files.append(Path(entry.path))
            elif _is_folder(entry):
                pending.append(Path(entry.path))
    return sorted(files), unlisted


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def case_ids(roots: Iterable[Path]) -> list[str]:
    """The id of every ``*.yaml`` below each root, without reading any file (for "names no
    case" checks and "did you mean" suggestions when ``discover`` was given ``select``)."""
    return [expected_id(path, root) for root in roots if root.is_dir() for path in yaml_files(root)[0]]


def discover(roots: Iterable[Path], *, select: Callable[[str], bool] | None = None,
             cache: bool = True) -> list[Transcript | CaseBug]:
    """Every ``*.yaml`` below each root, loaded; bad files become CaseBug entries.

    Never raises for a file: whatever one file holds, it becomes a Transcript or a CaseBug.
    ``select`` (a predicate on the case id, the path below its root without .yaml) leaves
    out the files it rejects before they are read. ``cache=False`` (or the environment
    variable THOUSAND_NO_CACHE) reads and checks every file afresh.
    """
    store = corpus_cache.open_store() if cache else None
    found: list[Transcript | CaseBug] = []
    for root in roots:
        if not root.is_dir():
            continue
        files, unlisted = yaml_files(root)
        for folder, reason in unlisted:
            case_id = expected_id(folder, root) if folder != root else "."
            found.append(CaseBug(id=case_id, path=folder, message=f"{_display(folder)}: cannot list the folder: {reason}"))
        prefix = len(os.path.join(str(root), ""))
        for path in files:
            case_id = str(path)[prefix:-len(".yaml")].replace(os.sep, "/")  # expected_id, without pathlib's cost
            if select is None or select(case_id):
                found.append(_discover_one(path, root, case_id, store))
    if store is not None:
        store.save()
    return found


def _discover_one(path: Path, root: Path, case_id: str, store: corpus_cache.Store | None) -> Transcript | CaseBug:
    display = _display(path)
    data: Any = None
    try:
        raw = _read(path, display)
        key = store.key(raw) if store is not None else ""
        data = store.get(key) if store is not None else None
        if data is None:
            data, marks = _parse(raw, display)
            check(data, marks, display)
            if store is not None:
                store.put(key, data)
        _check_id(data, case_id, lambda: _parse(raw, display)[1], display)
        return _transcript(data, path)
    except TranscriptError as exc:
        return _bug(case_id, path, str(exc), data)
    except Exception as exc:  # noqa: BLE001 - a loader bug must cost one case, not the run
        return _bug(case_id, path, f"{display}: cannot be loaded: internal error {type(exc).__name__}", data)


def _bug(case_id: str, path: Path, message: str, data: Any) -> CaseBug:
    """A CaseBug that keeps whatever the file says about itself, for filtering and reports."""
    title: str = ""
    profiles: tuple[str, ...] = ()
    knobs: tuple[str, ...] = ()
    if isinstance(data, dict):
        title = clip(data["title"], 80) if isinstance(data.get("title"), str) else ""
        profiles = tuple(p for p in _list(data.get("profiles")) if isinstance(p, str))
        knobs = tuple(k for k in _list(data.get("knobs")) if isinstance(k, str))
    return CaseBug(id=case_id, path=path, message=message, title=title, profiles=profiles, knobs=knobs)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def refused_reasons(refused: str | list[str]) -> tuple[str, ...]:
    """The reasons a step's ``refused`` accepts: one, or any of those listed (several apply)."""
    return (refused,) if isinstance(refused, str) else tuple(refused)


def written_reasons(reasons: tuple[str, ...]) -> str | list[str]:
    """``refused`` as a transcript writes it: the reason alone, or the list where several apply."""
    return reasons[0] if len(reasons) == 1 else list(reasons)


def refusal_class(reason: str) -> str:
    """The refusal class of a reason code (DESIGN.md, Reason codes)."""
    return "malformed" if reason in MALFORMED_REASONS else "illegal"
