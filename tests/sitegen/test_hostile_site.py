"""Hostile words in a profile or a report reach the site as text, never as markup (issue 52,
rows 1 and 3).

A profile that ``thousand validate`` accepts may say anything in its summary, its rulings and
its sources; a report holds whatever an implementation called itself. The pages are built
from them by the generator's own functions and rendered with the site's Markdown extensions
(attribute lists and Markdown in HTML included); the HTML then holds no live link, image,
attribute, emphasis or tag that came from those words.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import markdown
import pytest
import yaml

import variants
from conformance.cli.report import render
from spec import PROFILES_DIR

HOSTILE_WORDS = [
    "[here](javascript:alert(3))",
    "![img](javascript:alert(4))",
    "<script>alert(5)</script>",
    "<a href='javascript:alert(6)'>x</a>",
    "*loud* _also_ **bold**",
    "{: onclick=\"alert(7)\" }",
    "Engine { onclick=\"alert(1)\" }",
    "<https://example.invalid/auto>",
    "--8<-- \"README.md\"",
]
SUMMARY = "A hostile club. " + " ".join(HOSTILE_WORDS) + "\n{: onclick=\"alert(8)\" }\n"
# the site's extensions that can turn words into markup (mkdocs.yml); snippets is left out
# (it needs the build's base path) and its line form is checked in the Markdown text itself
EXTENSIONS = ["attr_list", "md_in_html", "tables", "admonition", "pymdownx.details", "pymdownx.superfences"]


def _live(page_html: str) -> list[str]:
    """Markup in the HTML that hostile words could have made."""
    found = re.findall(r"<a\b[^>]*href=\"javascript:[^\"]*\"", page_html, re.I)
    found += re.findall(r"<[a-zA-Z][^>]*\son[a-z]+\s*=[^>]*>", page_html)  # an attribute in a tag (attr_list)
    found += re.findall(r"<(?:script|img)\b[^>]*>", page_html)
    found += re.findall(r"<(?:em|strong)>(?:loud|also|bold)</", page_html)  # the hostile emphasis, not the page's
    found += re.findall(r"<a\b[^>]*href=\"https://example\.invalid", page_html)
    return found


@pytest.fixture()
def hostile_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bundled profiles, with skill-games's summary, a ruling and a ruling of a value
    made hostile (the profile still validates)."""
    folder = tmp_path / "profiles"
    shutil.copytree(PROFILES_DIR, folder)
    path = folder / "skill-games.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["summary"] = SUMMARY
    data["title"] = "Club [t](javascript:alert(9)) {: onclick=\"alert(10)\" }"
    data["rules"]["auction"]["max_bid"]["ruling"] = "See [x](javascript:alert(11)) " + HOSTILE_WORDS[5]
    data["rulings"] = [{"topic": "[topic](javascript:alert(12))", "ruling": " ".join(HOSTILE_WORDS),
                        "knobs": ["auction.max_bid"]}]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    monkeypatch.setattr(sys.modules["variants.resolve"], "PROFILES_DIR", folder)
    assert "javascript" in variants.resolve("skill-games").summary  # it validates, as validate accepts it
    return "skill-games"


def test_a_hostile_profile_page_has_no_live_link_or_attribute(hostile_profiles: str) -> None:
    from sitegen.build import profile_page, profiles_index

    page = profile_page(hostile_profiles, [])
    assert not any(line.startswith("--8<--") for line in page.splitlines())  # no snippet inclusion
    rendered = markdown.markdown(page, extensions=EXTENSIONS)
    assert "alert(3)" in rendered and "alert(7)" in rendered  # the words are there, as text
    assert _live(rendered) == []
    index = markdown.markdown(profiles_index([hostile_profiles]), extensions=EXTENSIONS)
    assert "alert(9)" in index and _live(index) == []


def test_a_hostile_report_in_markdown_has_no_live_link_or_attribute() -> None:
    # attr_list acts on a "{...}" that ends a heading, a list item or a paragraph: each text ends so
    report = {"implementation": {"name": "Engine { onclick=\"alert(1)\" }"},
              "cases": [{"id": "a/[x](javascript:alert(13))", "profile": "classic", "outcome": "fail",
                         "knobs": ["{: onclick=\"alert(14)\" }"],
                         "message": " ".join(HOSTILE_WORDS) + " {: onclick=\"alert(15)\" }"}]}
    text = render(report, markdown=True)
    rendered = markdown.markdown(text, extensions=EXTENSIONS)
    assert "alert(1)" in rendered and "alert(14)" in rendered and "alert(15)" in rendered
    assert _live(rendered) == []
    assert "<h2>Thousand conformance: Engine { onclick=" in rendered  # a heading with no attribute


def test_the_live_markup_detector_sees_what_unescaped_words_make() -> None:
    """The check above can fail: the same words, not escaped, make live markup."""
    rendered = markdown.markdown("## Engine { onclick=\"alert(1)\" }\n\n" + " ".join(HOSTILE_WORDS),
                                 extensions=EXTENSIONS)
    assert len(_live(rendered)) >= 3
