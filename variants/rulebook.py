"""A profile as a rulebook: the rules in play, in the order a deal goes, in plain words.

Every sentence comes from the profile's values (variants/prose.py says each knob's value in
words); a rule another value makes irrelevant (``inert_knobs``) is left out, and a section
that is switched off (no barrel, no bolts) is named once at the end. The worked examples are
computed from the same values, so a house file gets its own. ``thousand rulebook FILE``
writes it as Markdown or as one self-contained HTML page (no site needed, every text escaped).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from spec.vocabulary import RuleValues
from variants.applicability import inert_knobs
from variants.errors import ProfileError
from variants.model import ResolvedProfile
from variants.prose import sentence
from variants.resolve import resolve
from spec import SPEC_DIR



@dataclass(frozen=True)
class Chapter:
    """One step of the deal: its rules as sentences, then worked examples (each a list of lines)."""

    title: str
    rules: tuple[str, ...]
    examples: tuple[str, ...] = ()


# The chapters in the order a deal goes, each with the knobs it gathers ("section" or
# "section.prefix" for part of one) and a fixed opening that every profile shares (the pack,
# the deal of 7 + 3, the exchange, eight tricks: no knob changes them). A section whose
# switch (SWITCH_KNOB) is off is not in play and gets no chapter.
CHAPTERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("The deal", ("deal", "redeals"),
     "The dealer gives each player 7 cards and puts 3 face down in the middle: the talon."),
    ("The auction", ("auction",),
     "Players bid for the right to take the talon and play alone against the other two; "
     "the last bidder left is the declarer."),
    ("The talon and the exchange", ("talon.shown",),
     "The declarer takes the talon into hand, then gives one card face down to each opponent: "
     "everyone holds 8 cards."),
    ("The contract", ("talon.contract",), ""),
    ("Giving up", ("giving_up",), ""),
    ("The play", ("play",),
     "Eight tricks. Each player plays one card in turn to the left; the winner of a trick leads to the "
     "next. The highest trump wins the trick, else the highest card of the suit led. There is no trump "
     "until a marriage makes one."),
    ("Marriages", ("marriages",),
     "A marriage is the king and queen of one suit, held together by the player on lead."),
    ("Scoring", ("scoring",),
     "After the eighth trick each player adds the card points taken and the marriages declared. The "
     "declarer makes the contract when that total reaches it; a failed contract is subtracted."),
    ("Bolts", ("bolts",), ""),
    ("The 800 rule", ("defender_lock",), ""),
    ("The dump", ("dump",), ""),
    ("The barrel", ("barrel",), ""),
    ("End of the match", ("match_end",), ""),
)
SWITCHES = {"bolts": "bolts", "defender_lock": "the 800 rule", "dump": "the dump", "barrel": "the barrel",
            "giving_up": "giving up"}
SWITCH_KNOB = {"bolts": "enabled", "defender_lock": "enabled", "dump": "enabled", "barrel": "enabled",
               "giving_up": "allowed"}
# Knobs a chapter words itself: no sentence of their own.
SKIPPED = {"giving_up.local_name", "giving_up.allowed"}
CARDS = ("24 cards: ace, ten, king, queen, jack and nine of each suit (♠ ♣ ♦ ♥), ranked in that order, "
         "the ten above the king. They are worth 11, 10, 4, 3, 2 and 0 points: 120 in all. Three players "
         "each play for themselves.")
KNOB_ID = re.compile(r"\b([a-z_]+)\.([a-z0-9_]+)\b")
SNAKE = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")


def in_play(profile: ResolvedProfile, section: str) -> bool:
    switch = SWITCH_KNOB.get(section)
    return switch is None or bool(profile.rules.get(section, {}).get(switch, True))


def chapters(profile: ResolvedProfile) -> list[Chapter]:
    """The rulebook's chapters: the rules in play, in deal order, with worked examples."""
    inert = inert_knobs(profile)
    found = [Chapter("The cards", (CARDS,))]
    for title, parts, opening in CHAPTERS:
        rules = [plain(sentence(full, value, profile.rules)) for full, value in _knobs_of(profile, parts, inert)]
        if not rules:
            continue
        if title == "Giving up":
            opening = giving_up_opening(profile.rules)
        found.append(Chapter(title, tuple(([opening] if opening else []) + rules),
                             tuple(examples_for(title, profile.rules))))
    return found


def _knobs_of(profile: ResolvedProfile, parts: Sequence[str], inert: Mapping[str, str]) -> list[tuple[str, Any]]:
    """The knobs in play of a chapter, in the profile's order."""
    found = []
    for part in parts:
        section, _, prefix = part.partition(".")
        if not in_play(profile, section):
            continue
        for knob, value in profile.rules.get(section, {}).items():
            full = f"{section}.{knob}"
            if knob.startswith(prefix) and full not in inert and full not in SKIPPED:
                found.append((full, value))
    return found


def giving_up_opening(rules: RuleValues) -> str:
    name = str(rules["giving_up"].get("local_name") or "").replace("_", " ")
    called = f" (called *{name}* here)" if name else ""
    return f"The declarer may give up the deal{called} instead of playing it."


def not_in_play(profile: ResolvedProfile) -> list[str]:
    return [words for section, words in SWITCHES.items() if not in_play(profile, section)]


def plain(text: str) -> str:
    """A sentence without code marks or ids: `x` loses its backticks, snake_case its underscores."""
    text = text.replace("`", "")
    text = KNOB_ID.sub(lambda m: m.group(2).replace("_", " ") if m.group(1) in _SECTION_WORDS else m.group(0), text)
    return SNAKE.sub(lambda m: m.group(0).replace("_", " "), text)


_SECTION_WORDS = {"deal", "auction", "talon", "giving_up", "play", "marriages", "scoring", "bolts", "barrel",
                  "defender_lock", "dump", "redeals", "match_end"}


# --- worked examples, computed from the values ---------------------------------------------

def round_total(total: float, rounding: str) -> float:
    """A total rounded as the schema defines the values: nearest_5 (remainder 1-2 down, 3-4
    up), nearest_10 (remainder 0-4 down, 5-9 up), exact."""
    if rounding == "exact":
        return total
    unit = 5 if rounding == "nearest_5" else 10
    low = int(total) - int(total) % unit
    return low + unit if total - low >= unit / 2 else low


def bid_ladder(rules: RuleValues, count: int = 6) -> list[int]:
    """The first legal amounts from the opening bid up."""
    auction = rules["auction"]
    amounts = [int(auction["opening_bid"])]
    while len(amounts) < count:
        last = amounts[-1]
        high_step, high_from = auction.get("high_bid_step"), auction.get("high_bid_from")
        step = int(high_step) if high_step and high_from is not None and last >= int(high_from) else int(auction["bid_step"])
        amounts.append(last - last % step + step if last % step else last + step)
    return amounts


def examples_for(title: str, rules: RuleValues) -> list[str]:
    if title == "The auction":
        return auction_examples(rules)
    if title == "Scoring":
        return scoring_examples(rules)
    if title == "Giving up":
        return giving_up_examples(rules)
    return []


def auction_examples(rules: RuleValues) -> list[str]:
    ladder = ", ".join(str(a) for a in bid_ladder(rules))
    return [f"The first legal amounts are {ladder} and so on, up to {rules['auction']['max_bid']}."]


def _number(value: float) -> str:
    return f"{value:g}"


def scoring_examples(rules: RuleValues) -> list[str]:
    scoring, marriages = rules["scoring"], rules["marriages"]["values"]
    hearts = int(marriages.get("H", 100))
    contract, points = 140, 47
    total = points + hearts
    rounded = round_total(total, str(scoring["declarer_rounding"]))
    shown = _number(total) if rounded == total else f"{total}, rounded to {_number(rounded)}"
    scored = contract if scoring["declarer_scores"] == "contract" else rounded
    made = (f"The declarer's contract is {contract}. They take {points} card points and declared the hearts "
            f"marriage ({hearts}): {points} + {hearts} = {shown}, at least {contract}, so the contract is made "
            f"and they score {_number(scored)}.")
    failed_total = 120
    failed_rounded = round_total(failed_total, str(scoring["declarer_rounding"]))
    defenders = {"lost": "the defenders gain nothing from it",
                 "split_among_defenders": f"each defender also gains {_number(contract / 2)}",
                 "each_defender": f"each defender also gains {contract}"}.get(str(scoring["failed_contract_points"]), "")
    failed = (f"Had they taken {failed_total - hearts} card points ({failed_total - hearts} + {hearts} = "
              f"{_number(failed_rounded)}), fewer than {contract}: they lose {contract} (score −{contract})"
              + (f", and {defenders}." if defenders else "."))
    lines = [made, failed]
    defender = str(scoring["defender_rounding"])
    if defender != "exact":
        shown_pairs = [(total, round_total(total, defender)) for total in (22, 23, 25)]
        said = ", ".join(f"{a} scores {_number(b)}" for a, b in shown_pairs)
        lines.append(f"A defender's total is rounded: {said}.")
    return lines


def giving_up_examples(rules: RuleValues) -> list[str]:
    giving = rules["giving_up"]
    bid = 115
    loses = f"the declarer loses {bid}" if giving["declarer_loses"] == "winning_bid" else "the declarer's score does not change"
    if giving["defender_gain"] == "fixed":
        gain = f"each defender gains {giving['defender_gain_amount']}"
    else:
        half = bid / 2
        rounding = str(giving["half_bid_rounding"])
        kept = {"exact": half, "up_to_5": float(round_up_to(half, 5)), "down": float(int(half))}.get(rounding, half)
        gain = f"each defender gains half the bid: {_number(half)}" + (f", rounded to {_number(kept)}" if kept != half else "")
    paid_from = int(giving.get("defenders_paid_from") or 1)
    note = f" (from the declarer's give-up number {paid_from} on; before that, nothing)" if paid_from > 1 else ""
    return [f"The winning bid is {bid} and the declarer gives up: {loses}; {gain}{note}."]


def round_up_to(value: float, unit: int) -> int:
    whole = int(value)
    return whole if whole == value and whole % unit == 0 else whole - whole % unit + unit


# --- rulings, sources -----------------------------------------------------------------------

# The forms a source key takes in a ruling's text ("seed-004", "Seed 004", "Kurnik").
CITATION = re.compile(r"\b(?:[Ss]eed[- ](\d{3})|([Kk]urnik))\b")


def catalogue() -> dict[str, Mapping[str, Any]]:
    """The bundled sources (spec/sources.yaml) by key: title, where to find it, ..."""
    data = yaml.safe_load((SPEC_DIR / "sources.yaml").read_text(encoding="utf-8")) or {}
    return dict(data.get("sources") or {})


def rulings(profile: ResolvedProfile) -> list[tuple[str, str]]:
    """The profile's rulings beyond single knobs: ids said in words, source keys as titles."""
    titles = {key: str(record["title"]) for key, record in profile.sources.items()}

    def title_of(match: re.Match[str]) -> str:
        key = f"seed-{match.group(1)}" if match.group(1) else "kurnik"
        return f"“{titles[key]}”" if key in titles else match.group(0)
    return [(plain(str(r["topic"])), CITATION.sub(title_of, plain(str(r["ruling"])))) for r in profile.rulings]


def sources(profile: ResolvedProfile) -> list[str]:
    """Each source the profile rests on: its title and where a reader finds it (a house file's
    own source: its url or note)."""
    known = catalogue()
    lines = []
    for key, record in profile.sources.items():
        where = known.get(key, {}).get("where") or record.get("url") or record.get("note") or ""
        lines.append(f"“{record['title']}”" + (f". {str(where).strip()}" if where else ""))
    return lines


# --- output --------------------------------------------------------------------------------

def markdown(profile: ResolvedProfile, spec_link: str | None = None) -> str:
    """The rulebook as Markdown. Profile text (titles, rulings) is escaped as HTML, so a house
    file cannot inject markup into a page that renders it."""
    esc = _escape
    lines = [f"# {esc(profile.title)}: the rules", ""]
    intro = f"The rules of *{esc(profile.name)}* as they are played, in the order a deal goes."
    if spec_link:
        intro += f" Every value with its source, and the transcripts that test it: [the profile page]({spec_link})."
    lines += [intro, ""]
    if profile.status == "draft":
        lines += ["**Draft:** parts of these rules could not be checked against a written source.", ""]
    for number, chapter in enumerate(chapters(profile)):
        lines += [f"## {number}. {chapter.title}" if number else f"## {chapter.title}", ""]
        lines += [f"- {esc(rule)}" for rule in chapter.rules]
        if chapter.examples:
            lines += ["", "*Example.* " + " ".join(esc(e) for e in chapter.examples)]
        lines.append("")
    missing = not_in_play(profile)
    if missing:
        lines += ["## Not played here", "", f"These rules have no {_join(missing)}.", ""]
    found = rulings(profile)
    if found:
        lines += ["## Rulings", "", "Where the sources are silent, these rules decide:", ""]
        lines += [f"- **{esc(topic)}.** {esc(text)}" for topic, text in found]
        lines.append("")
    lines += ["## Sources", ""] + [f"- {esc(s)}" for s in sources(profile)] + [""]
    return "\n".join(lines)


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def _join(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


PRINT_CSS = """
body { font: 11pt/1.4 Georgia, serif; max-width: 46em; margin: 1.5em auto; padding: 0 1em; color: #111; }
h1 { font-size: 1.6em; margin: 0 0 .3em; } h2 { font-size: 1.15em; margin: 1em 0 .3em; border-bottom: 1px solid #999; }
ul { margin: .2em 0; padding-left: 1.3em; } li { margin: .1em 0; } .example { font-style: italic; margin: .3em 0; }
@media print { @page { size: A4; margin: 14mm; } body { margin: 0; max-width: none; font-size: 9.5pt; line-height: 1.3; } li { margin: 0; }
  h2 { break-after: avoid; } li, .example { break-inside: avoid; } }
"""


def html_page(profile: ResolvedProfile) -> str:
    """The rulebook as one self-contained HTML page: no script, no outside file, every text escaped."""
    esc = _escape
    body = [f"<h1>{esc(profile.title)}: the rules</h1>",
            f"<p>The rules of <em>{esc(profile.name)}</em> as they are played, in the order a deal goes.</p>"]
    if profile.status == "draft":
        body.append("<p><strong>Draft:</strong> parts of these rules could not be checked against a written source.</p>")
    for number, chapter in enumerate(chapters(profile)):
        body.append(f"<h2>{f'{number}. ' if number else ''}{esc(chapter.title)}</h2>")
        body.append("<ul>" + "".join(f"<li>{_emphasis(esc(rule))}</li>" for rule in chapter.rules) + "</ul>")
        if chapter.examples:
            body.append(f'<p class="example">Example. {esc(" ".join(chapter.examples))}</p>')
    missing = not_in_play(profile)
    if missing:
        body += ["<h2>Not played here</h2>", f"<p>These rules have no {esc(_join(missing))}.</p>"]
    found = rulings(profile)
    if found:
        body += ["<h2>Rulings</h2>", "<p>Where the sources are silent, these rules decide:</p>",
                 "<ul>" + "".join(f"<li><strong>{esc(t)}.</strong> {esc(r)}</li>" for t, r in found) + "</ul>"]
    body += ["<h2>Sources</h2>", "<ul>" + "".join(f"<li>{esc(s)}</li>" for s in sources(profile)) + "</ul>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(profile.title)}: the rules</title><style>{PRINT_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _emphasis(escaped: str) -> str:
    return re.sub(r"\*([^*<>]+)\*", r"<em>\1</em>", escaped)


# --- the command ---------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    """Add ``rulebook`` to the ``thousand`` parser."""
    parser = subparsers.add_parser(
        "rulebook", help="write a profile's rules in plain words, to read at the table or print",
        description="Write the rules in play of a profile (bundled name, NAME+OPTION, or a house file such as "
                    "./my-house.yaml) in the order a deal goes, with worked examples computed from its values. "
                    "Markdown by default; --html writes one self-contained page to print (two to four A4 pages).")
    parser.add_argument("profile", metavar="PROFILE[+OPTION...]")
    parser.add_argument("--html", action="store_true", help="write a self-contained HTML page instead of Markdown")
    parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    parser.set_defaults(func=run_rulebook)


def run_rulebook(args: argparse.Namespace) -> int:
    try:
        profile = resolve(args.profile)
    except ProfileError as error:
        print(str(error), file=sys.stderr)
        return 1
    text = html_page(profile) if args.html else markdown(profile)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as error:
            print(f"{args.output}: cannot write: {error.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0

