"""Sources as data: spec/sources.yaml describes every cited document and lists its sections.

Every ``source:`` citation of a bundled profile or a transcript names a key of
spec/sources.yaml and a section listed for it. A transcript may also point at a ruling
instead: ``DESIGN ruling N``, ``DESIGN <a heading of DESIGN.md>`` or ``<profile> ruling on
<section.knob>`` (a knob whose value that profile sets by a ruling). Several citations are
separated by ``; ``. No file of the repository names a path outside it.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any, Iterator

import pytest
import yaml

import variants
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
from spec import SPEC_DIR
from variants.cli import format_profile
from tests.support.paths import ROOT

DESIGN = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
KINDS = {"club handout", "rules leaflet", "app guide", "rules site", "research"}


def _sources() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load((SPEC_DIR / "sources.yaml").read_text(encoding="utf-8"))
    sources: dict[str, dict[str, Any]] = data["sources"]
    return sources


def _profile_citations() -> Iterator[tuple[str, str]]:
    """(where, citation) for every `source:` of every bundled profile file, options included."""
    for path in sorted((SPEC_DIR / "profiles").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        blocks = [("rules", data.get("rules") or {})]
        blocks += [(f"options.{name}.rules", option.get("rules") or {}) for name, option in (data.get("options") or {}).items()]
        for prefix, rules in blocks:
            for section, knobs in rules.items():
                for knob, entry in knobs.items():
                    if isinstance(entry, dict) and "source" in entry:
                        yield f"{path.name}: {prefix}.{section}.{knob}", entry["source"]


def _ruling_reference_problem(citation: str) -> str | None:
    """None when the citation points at a ruling that exists, else what is wrong."""
    numbered = re.fullmatch(r"DESIGN ruling (\d+)", citation)
    if numbered:
        rulings = DESIGN.split("## Rulings shared by the profiles", 1)[1].split("\n## ", 1)[0]
        found = re.search(rf"^{numbered.group(1)}\. ", rulings, re.MULTILINE)
        return None if found else f"DESIGN.md has no shared ruling {numbered.group(1)}"
    if citation.startswith("DESIGN "):
        heading = citation.removeprefix("DESIGN ")
        found = re.search(rf"^## {re.escape(heading)}( \(.*\))?$", DESIGN, re.MULTILINE)  # "(refusals)" may follow
        return None if found else f"DESIGN.md has no section '## {heading}'"
    on_knob = re.fullmatch(r"([a-z0-9-]+) ruling on ([a-z_]+\.[a-z_]+)", citation)
    if on_knob:
        profile, knob = on_knob.groups()
        origin = variants.resolve(profile).provenance.get(knob)
        return None if origin and "ruling" in origin else f"{profile} sets {knob} by no ruling"
    return "not a citation 'KEY section' of spec/sources.yaml nor a ruling reference"


def citation_problem(citation: str, sources: dict[str, dict[str, Any]], rulings_allowed: bool) -> str | None:
    key, _, section = citation.partition(" ")
    if key in sources:
        return None if section in sources[key]["sections"] else f"{key} has no section {section!r} (spec/sources.yaml)"
    if rulings_allowed:
        return _ruling_reference_problem(citation)
    return f"{key!r} is not a key of spec/sources.yaml"


def test_sources_file_has_the_shared_format() -> None:
    sources = _sources()
    assert sources
    for key, entry in sources.items():
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", key), key
        assert set(entry) == {"title", "where", "kind", "summary", "reliability", "sections"}, key
        assert entry["kind"] in KINDS, key
        assert all(isinstance(entry[field], str) and len(entry[field]) >= 20 for field in ("summary", "reliability", "where")), key
        sections = entry["sections"]
        assert sections and all(isinstance(s, str) and s for s in sections) and len(set(sections)) == len(sections), key


def test_every_profile_source_key_is_described() -> None:
    sources = _sources()
    for path in sorted((SPEC_DIR / "profiles").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key, record in (data.get("sources") or {}).items():
            assert key in sources, f"{path.name}: source {key!r} is not in spec/sources.yaml"
            assert "file" not in record, f"{path.name}: source {key!r} names a file; keep title and note"


def test_every_profile_citation_names_a_listed_section() -> None:
    sources = _sources()
    problems = [f"{where}: {citation!r}: {problem}" for where, citation in _profile_citations()
                if (problem := citation_problem(citation, sources, rulings_allowed=False))]
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_every_transcript_citation_names_a_listed_section_or_a_ruling() -> None:
    sources, problems = _sources(), []
    for case in discover([CASES_DIR, GENERATED_DIR]):
        if isinstance(case, Transcript) and case.source:
            for citation in case.source.split("; "):
                problem = citation_problem(citation, sources, rulings_allowed=True)
                if problem:
                    problems.append(f"{case.id}: {citation!r}: {problem}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("citation", ["seed-004 Nowhere", "seed-999 The deal", "DESIGN ruling 99",
                                      "DESIGN No such heading", "classic ruling on auction.opening"])
def test_a_bad_citation_is_reported(citation: str) -> None:
    assert citation_problem(citation, _sources(), rulings_allowed=True) is not None


def test_no_tracked_file_names_a_path_outside_the_repository() -> None:
    outside = ("shared" + "/seeds", "../" + "shared", "shared" + "/research")  # split so this file does not match itself
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\n")
    found = []
    for name in filter(None, listed):
        path = ROOT / name
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        found += [f"{name}: {word}" for word in outside if word in text]
    assert not found, "\n".join(found)


def test_show_prints_no_path_outside_the_repository() -> None:
    for name in variants.all_names():
        text = "\n".join(format_profile(variants.resolve(name)))
        assert "shared/" not in text and "../" not in text, name
