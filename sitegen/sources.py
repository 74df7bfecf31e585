"""The Sources page, generated from spec/sources.yaml, and the links every citation gets.

A citation is written "<key> <section>" (profiles: `seed-004 The deal`) or, in older
transcripts, "seed 004 The deal"; both link to `sources.md#<key>`. Which profiles rest on
a source is found by scanning the profiles' citations, never written by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

import yaml

import variants
from spec import SPEC_DIR

SOURCES_FILE = SPEC_DIR / "sources.yaml"
# "seed-004", "seed 004", "Seed 000" and "Kurnik"/"kurnik": the forms written in the repository.
CITATION = re.compile(r"\b(?:[Ss]eed[- ](\d{3})|([Kk]urnik))\b")


@dataclass(frozen=True)
class Source:
    """One rule document as spec/sources.yaml describes it."""

    key: str
    title: str
    where: str
    kind: str
    summary: str
    reliability: str
    sections: tuple[str, ...]


def load_sources() -> dict[str, Source]:
    """Every source of spec/sources.yaml by key, in file order (empty when the file is absent)."""
    if not SOURCES_FILE.exists():
        return {}
    data = yaml.safe_load(SOURCES_FILE.read_text(encoding="utf-8")) or {}
    return {
        key: Source(key, str(entry["title"]), str(entry.get("where", "")).strip(), str(entry["kind"]), str(entry["summary"]).strip(),
                    str(entry["reliability"]).strip(), tuple(str(s) for s in entry.get("sections", [])))
        for key, entry in (data.get("sources") or {}).items()
    }


def key_of(match: re.Match[str]) -> str:
    return f"seed-{match.group(1)}" if match.group(1) else "kurnik"


def link_citations(text: str, page: str) -> str:
    """The text with each source key linked to its entry on the Sources page."""
    target = "../" * page.count("/") + "sources.md"
    return CITATION.sub(lambda m: f"[{m.group(0)}]({target}#{key_of(m)})", text)


def citations(text: str) -> set[str]:
    return {key_of(m) for m in CITATION.finditer(text)}


def profiles_citing(names: Iterable[str]) -> dict[str, dict[str, int]]:
    """source key -> {profile: how many of its values cite it}, options included."""
    found: dict[str, dict[str, int]] = {}
    for name in names:
        document = variants.resolve(name).to_document()
        for entry in document["provenance"].values():
            if entry.get("from") not in (None, name) or "source" not in entry:
                continue  # inherited values count for the profile that wrote them
            for key in citations(entry["source"]):
                found.setdefault(key, {}).setdefault(name, 0)
                found[key][name] += 1
    return found


def sources_page(mark: str, names: list[str], case_sources: Mapping[str, str | None]) -> str:
    """The Sources page: each document, what it is, its sections, how far to trust it, who cites it."""
    sources = load_sources()
    used = profiles_citing(names)
    by_case: dict[str, list[str]] = {}
    for case_id, text in case_sources.items():
        for key in citations(text or ""):
            by_case.setdefault(key, []).append(case_id)
    lines = [mark, "", "# Sources", "",
             "The rule documents the profiles rest on. Every value on a profile page names its source "
             "as *key section* (for example *seed-004 The deal*) or carries a ruling, the project's "
             "decision where the sources are silent. The documents themselves are not published here; "
             "these entries say, in the project's words, what each one is, where to find it and how far "
             "to trust it. A ruling is never shown as a source: where a source is silent or vague, the "
             "profile page says *Ruling* and gives the project's reason.", "",
             "| key | document | kind | profiles resting on it |", "|---|---|---|---|"]
    for key, source in sources.items():
        lines.append(f"| [{key}](#{key}) | {source.title} | {source.kind} | {_profile_list(used.get(key, {}))} |")
    for key, source in sources.items():
        lines += _source_entry(source, used.get(key, {}), by_case.get(key, []))
    return "\n".join(lines) + "\n"


def _profile_list(counts: Mapping[str, int]) -> str:
    return ", ".join(f"[{name}](profiles/{name}.md)" for name in sorted(counts)) or "–"


def _source_entry(source: Source, counts: Mapping[str, int], cases: list[str]) -> list[str]:
    lines = ["", f"## {source.key}: {source.title} {{#{source.key}}}", "",
             f"**Kind:** {source.kind}  ", f"**Where to find it:** {source.where}  ", f"**Cited by:** " + (", ".join(
                 f"[{name}](profiles/{name}.md) ({n} value{'s' if n != 1 else ''})" for name, n in sorted(counts.items()))
                 or "no profile") + f"; {len(cases)} hand-written transcript{'s' if len(cases) != 1 else ''}",
             "", source.summary, "", f"**How reliable:** {source.reliability}", "",
             "Sections, as cited:", ""]
    lines += [f"- {section}" for section in source.sections]
    return lines

