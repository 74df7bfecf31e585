"""Loading profile files, following ``extends``, applying options, and listing profiles."""

from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec import PROFILES_DIR
from variants.checks import Origin, check_consistency, check_document, rule_entries
from variants.errors import ProfileError, raise_all
from variants.loader import DocPath, Marks, load_yaml_file
from variants.model import OptionInfo, ProfileInfo, ResolvedProfile, freeze
from variants.schema import display_path, rule_sections, validate_document

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


@dataclass(frozen=True)
class _Document:
    """One validated profile file."""

    file: Path
    data: dict[str, Any]
    marks: Marks

    @property
    def name(self) -> str:
        return str(self.data["profile"])


_cache: dict[tuple[Path, int, int], _Document] = {}


def _load_document(path: Path) -> _Document:
    """Read, parse, schema-check and file-check one profile file (cached by mtime and size)."""
    try:
        stat = path.resolve().stat()
        key: tuple[Path, int, int] | None = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        key = None
    if key is not None and key in _cache:
        return _cache[key]
    data, marks = load_yaml_file(path)
    try:
        validate_document(data, marks, str(path))
    except ProfileError as schema_error:
        raise_all([*schema_error.all(), *_file_problems_despite_schema(data, marks, path)])
    check_document(data, marks, str(path), path.stem)
    document = _Document(path, data, marks)
    if key is not None:
        _cache[key] = document
    return document


def _file_problems_despite_schema(data: Any, marks: Any, path: Path) -> list[ProfileError]:
    """The file's own problems (a citation of no listed source, ...) on a file that also breaks
    the schema, so one run reports both kinds; none when the file is too broken to look at."""
    try:
        check_document(data, marks, str(path), path.stem)
    except ProfileError as error:
        return list(error.all())
    except (KeyError, TypeError, AttributeError, ValueError):
        return []  # the schema errors say why: the shape these checks read is not there
    return []


def _find_parent(name: str, search: tuple[Path, ...]) -> Path | None:
    for folder in search:
        candidate = folder / f"{name}.yaml"
        if candidate.is_file():
            return candidate
    return None


def _chain(leaf: _Document) -> list[_Document]:
    """The documents from the root profile down to ``leaf``."""
    chain = [leaf]
    search = (leaf.file.parent, PROFILES_DIR)
    while chain[-1].data["extends"] is not None:
        child = chain[-1]
        parent = str(child.data["extends"])
        names = [doc.name for doc in chain]
        pos = child.marks.of_value(("extends",))
        if parent in names:
            cycle = " -> ".join(names[names.index(parent):] + [parent])
            raise ProfileError(str(child.file), f"extends cycle: {cycle}", line=pos.line, column=pos.column, path="extends")
        path = _find_parent(parent, search)
        if path is None:
            trail = " -> ".join(names + [parent])
            raise ProfileError(
                str(child.file),
                f"unknown parent profile {parent!r} (chain: {trail}); no {parent}.yaml next to the file or among the bundled profiles",
                line=pos.line, column=pos.column, path="extends",
            )
        chain.append(_load_document(path))
    chain.reverse()
    return chain


class _Builder:
    """Accumulates knob values, provenance and origins, later writers winning per knob."""

    def __init__(self) -> None:
        self.rules: dict[str, dict[str, Any]] = {}
        self.provenance: dict[str, dict[str, Any]] = {}
        self.origins: dict[str, Origin] = {}
        self.writes = 0

    def apply(self, block: dict[str, Any], prefix: DocPath, document: _Document, label: str) -> None:
        for section, knob, path, entry in rule_entries(block, prefix):
            key = f"{section}.{knob}"
            self.rules.setdefault(section, {})[knob] = copy.deepcopy(entry["value"])
            origin: dict[str, Any] = {"source": entry["source"]} if "source" in entry else {"ruling": entry["ruling"]}
            if entry.get("unverified"):
                origin["unverified"] = True
            origin["from"] = label
            self.provenance[key] = origin
            pos = document.marks.of_value(path + ("value",))
            self.origins[key] = Origin(str(document.file), pos.line, pos.column, display_path(path), self.writes)
            self.writes += 1

    def check_complete(self, root: _Document) -> None:
        for section, knobs in rule_sections().items():
            for knob in knobs:
                if knob not in self.rules.get(section, {}):
                    raise ProfileError(str(root.file), f"missing knob {section}.{knob}", path=f"rules.{section}")


def _options_of(chain: list[_Document]) -> dict[str, tuple[_Document, dict[str, Any]]]:
    """Option name -> (the file defining it, its data); a child's option replaces its parent's."""
    options: dict[str, tuple[_Document, dict[str, Any]]] = {}
    for document in chain:
        for name, option in document.data.get("options", {}).items():
            options[name] = (document, option)
    return options


def _build(leaf: _Document, option_names: list[str]) -> ResolvedProfile:
    chain = _chain(leaf)
    builder = _Builder()
    for document in chain:
        builder.apply(document.data["rules"], ("rules",), document, document.name)
    builder.check_complete(chain[0])
    available = _options_of(chain)
    titles = []
    for option in option_names:
        if option not in available:
            listed = ", ".join(sorted(available)) or "none"
            raise ProfileError(str(leaf.file), f"unknown option {option!r} for profile {leaf.name!r}; available options: {listed}", path="options")
        document, data = available[option]
        builder.apply(data["rules"], ("options", option, "rules"), document, f"{leaf.name}+{option}")
        titles.append(str(data["title"]))
    full_name = "+".join([leaf.name, *option_names])
    check_consistency(builder.rules, builder.origins, full_name if option_names else "")
    sources: dict[str, Any] = {}
    rulings: list[Any] = []
    for document in chain:
        sources.update(document.data["sources"])
        rulings.extend(document.data.get("rulings", []))
    draft = any(document.data["status"] == "draft" for document in chain)
    return ResolvedProfile(
        name=full_name,
        title=" + ".join([str(leaf.data["title"]), *titles]),
        status="draft" if draft else "stable",
        summary=str(leaf.data["summary"]),
        profile=leaf.name,
        options=tuple(option_names),
        rules=freeze(builder.rules),
        provenance=freeze(builder.provenance),
        rulings=freeze(rulings),
        sources=freeze(sources),
        lineage=tuple(document.name for document in reversed(chain[:-1])),
    )


def _split(name: str) -> tuple[str, list[str]]:
    if not isinstance(name, str) or not name:
        raise ProfileError(repr(name), "expected a profile name such as 'classic' or 'classic+four-aces'")
    profile, *options = name.split("+")
    for part in [profile, *options]:
        if not _NAME.fullmatch(part):
            raise ProfileError(name, f"invalid name part {part!r}: expected lowercase letters, digits and hyphens")
    repeated = sorted({option for option in options if options.count(option) > 1})
    if repeated:
        raise ProfileError(name, f"option {repeated[0]!r} is given twice")
    return profile, options


def bundled_names() -> list[str]:
    """The names of the bundled profiles, sorted."""
    return sorted(path.stem for path in PROFILES_DIR.glob("*.yaml"))


def _split_file(name: str) -> tuple[Path, list[str]]:
    """``path/to/house.yaml+option`` -> the file and the option names (split at the last
    ``.yaml``: a folder may be named ``rules.yaml.d``)."""
    head, _, tail = name.rpartition(".yaml")
    options = tail.split("+")[1:] if tail else []
    if tail and not tail.startswith("+"):
        raise ProfileError(name, "expected options after the file name as 'house.yaml+option'")
    for option in options:
        if not _NAME.fullmatch(option):
            raise ProfileError(name, f"invalid option name {option!r}: expected lowercase letters, digits and hyphens")
    return Path(head + ".yaml"), options


def resolve(name: str) -> ResolvedProfile:
    """Resolve ``profile`` or ``profile+option+option`` from the bundled profiles.

    A name containing ``.yaml`` is a profile file anywhere (a house variant):
    ``path/to/house.yaml`` or ``path/to/house.yaml+option``.
    """
    if isinstance(name, str) and ".yaml" in name:
        file, file_options = _split_file(name)
        return _build(_load_document(file), file_options)
    profile, options = _split(name)
    path = PROFILES_DIR / f"{profile}.yaml"
    if not path.is_file():
        names = bundled_names()
        local = Path(f"{profile}.yaml")
        if local.is_file():  # a house file here, named without its extension
            hint = f"; did you mean the file ./{local}? (a file is named with its .yaml)"
        else:
            close = difflib.get_close_matches(profile, names, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ProfileError(name, f"unknown profile {profile!r}{hint} (profiles: {', '.join(names)})")
    return _build(_load_document(path), options)


def load_profile_file(path: str | Path) -> ResolvedProfile:
    """Validate a profile file anywhere and return it resolved without options.

    Every option the file defines is resolved too, so an option that makes the rules
    inconsistent is reported. ``extends`` looks next to the file, then among the bundled
    profiles.
    """
    document = _load_document(Path(path))
    base = _build(document, [])
    problems: dict[str, ProfileError] = {}
    for option in document.data.get("options", {}):  # each option's problems, all in one report
        try:
            _build(document, [option])
        except ProfileError as error:
            problems.update((str(problem), problem) for problem in error.all())
    raise_all(list(problems.values()))
    return base


def list_profiles() -> list[ProfileInfo]:
    """The bundled profiles with their titles, status and options."""
    listing = []
    for name in bundled_names():
        document = _load_document(PROFILES_DIR / f"{name}.yaml")
        options = tuple(
            OptionInfo(option, str(data["title"]), str(data.get("summary", "")))
            for option, (_doc, data) in _options_of(_chain(document)).items()
        )
        listing.append(
            ProfileInfo(
                name=document.name,
                title=str(document.data["title"]),
                status=str(document.data["status"]),
                summary=str(document.data["summary"]),
                extends=document.data["extends"],
                options=options,
            )
        )
    return listing


def all_names() -> list[str]:
    """Every bundled profile and every ``profile+option``, in listing order."""
    names: list[str] = []
    for info in list_profiles():
        names.append(info.name)
        names.extend(f"{info.name}+{option.name}" for option in info.options)
    return names
