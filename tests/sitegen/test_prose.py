"""The site's sentences are finished and true: built for every profile, no page's prose shows a
snake_case id, leaves a bracket open, or says something a profile's own values contradict."""

from __future__ import annotations

import re
from typing import Any, Callable

import pytest

import variants
from sitegen import build
from sitegen.compare_page import compare_page, first_sentence, rule_label
from sitegen.knobs_page import knob_reference_page
from variants import rulebook
from variants.schema import knob_entry, rule_sections
from tests.support.paths import ROOT

NAMES = build.profile_names()
SNAKE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")


def prose_of(markdown: str) -> str:
    """The words a reader reads: without front matter, code, HTML tags and comments, link
    targets, anchors and attribute lists."""
    text = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<code>.*?</code>", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return re.sub(r"\{[#:.][^}]*\}", "", text)


def problems(markdown: str) -> list[str]:
    found = []
    for line in prose_of(markdown).splitlines():
        ids = SNAKE.findall(line)
        if ids:
            found.append(f"snake_case id {ids[0]!r}: {line.strip()[:160]}")
        for opening, closing in ("()", "[]"):
            if line.count(opening) != line.count(closing):
                found.append(f"unbalanced {opening}{closing}: {line.strip()[:160]}")
    return found


# Sentences that hold only for some values of a knob: (pattern, knob, the values it is true for).
CLAIMS: tuple[tuple[str, str, Callable[[Any], bool]], ...] = (
    (r"opener may (?:never|not) pass", "auction.opener_may_pass", lambda v: v is False),
    (r"(?<!whether the )(?<!when the )(?<!if the )opener may pass", "auction.opener_may_pass", lambda v: v is True),
    (r"(?:declarer|who gives up) loses the (?:winning )?bid", "giving_up.declarer_loses", lambda v: v == "winning_bid"),
    (r"gives up loses nothing", "giving_up.declarer_loses", lambda v: v == "nothing"),
    (r"the others are paid", "giving_up.defenders_paid_from", lambda v: v == 1),
    (r"no duty to beat", "play.must_beat", lambda v: v is False),
    (r"must beat the winning card", "play.must_beat", lambda v: v is True),
    (r"there are no bolts", "bolts.enabled", lambda v: v is False),
    (r"there is no barrel", "barrel.enabled", lambda v: v is False),
    (r"first bid of the auction is exactly", "auction.opening", lambda v: v == "forced"),
)


def contradictions(text: str, profile: variants.ResolvedProfile) -> list[str]:
    return [f"{profile.name}: {pattern!r} but {knob} is {profile.value(knob)!r}"
            for pattern, knob, holds in CLAIMS
            if re.search(pattern, text, re.I) and not holds(profile.value(knob))]


@pytest.fixture(scope="module")
def cases() -> list[Any]:
    return build.hand_written(build.load_corpus())


@pytest.mark.parametrize("name", variants.all_names())
def test_every_rulebook_is_finished_and_true(name: str) -> None:
    profile = variants.resolve(name)
    text = rulebook.markdown(profile)
    assert not problems(text), "\n".join(problems(text))
    assert not contradictions(text, profile)
    html_text = rulebook.html_page(profile)
    assert not problems(html_text)


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_page_is_finished_and_true(name: str, cases: list[Any]) -> None:
    text = build.profile_page(name, cases) + build.rulebook_page(name, cases)
    assert not problems(text), "\n".join(problems(text))
    rules_in_play = text.split("## Named options")[0]  # an option's title speaks of the option's values
    assert not contradictions(prose_of(rules_in_play), variants.resolve(name))


def test_the_compare_page_labels_are_finished_sentences_without_ids() -> None:
    labels = [rule_label(section, knob) for section, knobs in rule_sections().items() for knob in knobs]
    bad = [label for label in labels if SNAKE.search(label) or label.count("(") != label.count(")")]
    assert not bad, bad
    page = compare_page(build.MARK, NAMES, build.SECTIONS, build.SECTION_TITLES)
    assert not problems(page), "\n".join(problems(page)[:10])


def test_a_first_sentence_keeps_its_brackets_whole() -> None:
    assert first_sentence("A (b. c) d. E.") == "A (b. c) d."
    assert first_sentence("'x' (the deal is abandoned without score. y) or z. More.") == \
        "'x' (the deal is abandoned without score. y) or z."


@pytest.mark.slow
def test_no_knob_description_claims_what_a_value_of_a_knob_denies() -> None:
    """A knob's meaning holds for every profile: it may not state a claim that some allowed
    value of another knob makes false (auction.opening once said the opener may never pass)."""
    page = knob_reference_page(build.MARK, NAMES, build.SECTIONS, build.SECTION_TITLES)
    descriptions = [str(knob_entry(section, knob).get("description", ""))
                    for section, knobs in rule_sections().items() for knob in knobs]
    found = [f"{pattern!r} in {description[:80]!r}" for description in descriptions
             for pattern, knob, holds in CLAIMS
             if re.search(pattern, description, re.I)
             and not all(holds(variants.resolve(name).value(knob)) for name in variants.all_names())]
    assert not found, found
    assert "The opener may never pass first." not in page


@pytest.mark.slow
def test_how_a_deal_goes_says_nothing_a_profile_contradicts() -> None:
    text = (ROOT / "docs" / "how-a-deal-goes.md").read_text(encoding="utf-8")
    text = re.sub(r'--8<-- "([^"]+)"', lambda m: (ROOT / m.group(1)).read_text(encoding="utf-8"), text)
    # A claim is allowed on a line naming the profiles it is true of (the generated list does).
    found = []
    for line in prose_of(text).splitlines():
        named = [n for n in NAMES if variants.resolve(n).title in line]
        for name in named or NAMES:
            found += contradictions(line, variants.resolve(name))
    assert not found, found


def test_the_checks_catch_what_they_look_for() -> None:
    assert problems("Legal amounts are opening_bid, then more.")
    assert problems("When all pass: 'redeal' (the deal is abandoned.")
    assert not problems("The `opening_bid` code and [a link](x_y.md) are not prose.")
    polish = variants.resolve("polish")
    assert contradictions("the declarer loses the bid and the others are paid", polish)
    assert not contradictions("The declarer who gives up loses nothing by it.", polish)


def test_a_ruling_is_never_shown_as_a_source() -> None:
    """polish's source says only that defenders are rounded to tens: the sentence beside
    'Source:' says no more, and where a 5 goes is the profile's ruling, shown as one."""
    page = (ROOT / "docs" / "profiles" / "polish.md").read_text(encoding="utf-8")
    entry = page.split('id="scoring-defender-rounding"')[1].split("\n- ")[0]
    assert "Source:" in entry and "5 and above" not in entry and "rounds up" not in entry
    rulings = page.split("## Rulings beyond single knobs")[1]
    assert "rounds such a total up" in rulings and "scoring-defender-rounding" in rulings


def test_every_bundled_profile_has_a_rulebook_page_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in NAMES:
        assert (ROOT / "docs" / "rulebook" / f"{name}.md").is_file(), name
        assert f"rulebook/{name}.md" in nav, name
        profile_page = (ROOT / "docs" / "profiles" / f"{name}.md").read_text(encoding="utf-8")
        assert f"(../rulebook/{name}.md)" in profile_page, f"{name}: the spec page links to its rulebook"
