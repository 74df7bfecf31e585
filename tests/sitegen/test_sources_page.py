"""spec/sources.yaml describes every source the profiles cite, and the Sources page shows each."""

from __future__ import annotations


import variants
from sitegen.sources import link_citations, load_sources
from tests.support.paths import ROOT

KINDS = {"club handout", "rules leaflet", "app guide", "rules site", "research"}


def test_every_profile_citation_names_a_described_source_and_section() -> None:
    sources = load_sources()
    for name in variants.all_names():
        for knob, entry in variants.resolve(name).provenance.items():
            if "source" not in entry:
                continue
            key, _, section = entry["source"].partition(" ")
            assert key in sources, f"{name} {knob} cites {key!r}, which spec/sources.yaml does not describe"
            assert section in sources[key].sections, f"{name} {knob}: section {section!r} is not listed under {key}"


def test_every_source_is_described_in_full() -> None:
    for key, source in load_sources().items():
        assert source.kind in KINDS, key
        assert len(source.summary) >= 40 and len(source.reliability) >= 40, key
        assert source.sections, key


def test_the_sources_page_has_an_anchor_per_source() -> None:
    text = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    for key in load_sources():
        assert f"{{#{key}}}" in text, key


def test_citations_link_from_any_depth() -> None:
    assert link_citations("Source: seed-004 The deal", "profiles/polish.md") == \
        "Source: [seed-004](../sources.md#seed-004) The deal"
    assert link_citations("seed 000 §08 Worked score; Kurnik via the digest", "cases/a/b/c.md") == \
        "[seed 000](../../../sources.md#seed-000) §08 Worked score; [Kurnik](../../../sources.md#kurnik) via the digest"
