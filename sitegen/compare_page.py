"""The "Rules side by side" page: one row per rule, one column per profile.

The table is written as HTML (not a Markdown table) so each cell carries its profile's name
for the narrow-screen layout, where rows become cards (docs/stylesheets/extra.css), and so
rulings can sit in <details> to be read whole. docs/javascripts/compare.js adds the
"differences only" switch, which hides rows whose values agree.
"""

from __future__ import annotations

import html
import re
from typing import Any, Mapping

import variants
from variants.prose import format_value, sentence
from sitegen.sources import CITATION, key_of
from variants.schema import knob_entry, rule_sections

Sections = tuple[str, ...]

# A knob id (scoring.defender_rounding) or a bare snake_case id (nearest_10, max_bid) in a
# profile's own text (rulings, notes): shown as code on the authors' pages, never as prose.
IDS = re.compile(r"\b[a-z_]+\.[a-z0-9_]+\b|\b[a-z0-9]+(?:_[a-z0-9]+)+\b")


def mark_ids(text: str, before: str = "`", after: str = "`") -> str:
    """The text with each id marked as code (Markdown backticks by default, or HTML tags)."""
    return IDS.sub(lambda m: f"{before}{m.group(0)}{after}" if "_" in m.group(0) or _is_knob(m.group(0))
                   else m.group(0), text)


def _is_knob(word: str) -> bool:
    section, _, knob = word.partition(".")
    return knob in rule_sections().get(section, [])


def folded_profiles(names: list[str]) -> dict[str, str]:
    """Profiles whose resolved rules equal their parent's: name -> parent (shown as a note, not a column)."""
    parents = {info.name: info.extends for info in variants.list_profiles()}
    folded = {}
    for name in names:
        parent = parents.get(name)
        if parent and variants.resolve(name).rules == variants.resolve(parent).rules:
            folded[name] = parent
    return folded


# Where the schema's description opens with one of the values ("'forced': ..."), the row
# needs a neutral wording of the question instead.
QUESTIONS = {
    "auction.opening": "Is the opener's first bid forced to the opening amount?",
    "auction.raise": "How far a bid may jump above the last one.",
    "auction.ceiling": "The highest bid allowed, counted from the marriages held.",
    "talon.shown": "When the talon is shown to everyone.",
    "giving_up.moment": "When the declarer may give up.",
    "talon.contract_ceiling": "What limits a raised contract.",
    "play.may_trump_instead": "May a player holding the suit led trump instead of following?",
    "giving_up.half_bid_rounding": "How half the bid is rounded when a give-up pays half.",
    "marriages.declaration": "How a marriage is declared.",
    "bolts.every": "Which bolt costs the penalty (every N-th).",
    "bolts.counting": "Whether bolts must be consecutive to count.",
    "barrel.attempt_counts": "Which deals count as attempts on the barrel.",
    "defender_lock.mode": "What the 800 rule does to defending points.",
    # The schema's description names other knobs by id or runs past one sentence: the row
    # says the same in words (tests/sitegen/test_prose.py fails on an id or a cut-off bracket).
    "auction.bid_step": "The step between legal bids: the opening bid, then every multiple of the step above it.",
    "auction.high_bid_step": "A larger step for high bids, if any.",
    "auction.high_bid_from": "The bid above which the larger step for high bids applies.",
    "auction.dealer_must_bid": "Must the dealer bid when the two others have passed without a bid?",
    "auction.all_pass": "What happens when all three players pass without a bid.",
    "auction.pre_talon_max": "The highest bid allowed before the talon is seen.",
    "auction.barrel_min_bid": "The least bid of a player on the barrel.",
    "talon.shown_from_bid": "The least winning bid at which the talon is shown, where showing depends on the bid.",
    "talon.contract_ceiling_hand": "Which cards count for the marriage limits of a raised contract.",
    "giving_up.defender_gain_amount": "Each defender's gain from a give-up, where the gain is a fixed amount.",
    "giving_up.penalty": "The extra cost of a late give-up.",
    "giving_up.penalty_repeats": "Which late give-ups pay the extra cost.",
    "play.overtrump_against": "Against whose winning trump the duty to overtrump holds.",
    "play.beat_after_trump": "When a trump already wins the trick, must a player following suit still beat the suit led?",
    "marriages.last_trick": "The last trick on which a marriage may be declared.",
    "scoring.declarer_scores": "What a declarer who makes the contract scores.",
    "scoring.failed_contract_points": "Where the points of a failed contract go.",
    "barrel.win_by": "How a player on the barrel wins.",
    "barrel.crowding": "What happens when a newcomer arrives on a full barrel.",
    "barrel.arrivals_over_limit": "What happens when more players arrive on the barrel at once than there are places.",
    "redeals.after_exchange_window": "When a redeal after the exchange may be claimed.",
    "match_end.tie_break": "Who wins when several players reach the target in the same deal.",
}


def rule_label(section: str, knob: str) -> str:
    """The rule in one neutral sentence: the first sentence of the schema's description."""
    if f"{section}.{knob}" in QUESTIONS:
        return QUESTIONS[f"{section}.{knob}"]
    text = str(knob_entry(section, knob).get("description", "")).strip()
    first = first_sentence(text).rstrip(";")
    return first if first.endswith(".") else first + "."


def first_sentence(text: str) -> str:
    """The text up to the first '.' or ';' outside brackets that ends a sentence ("(e.g. x. y)" is kept whole)."""
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ".;" and (index + 1 == len(text) or text[index + 1].isspace()):
            return text[: index + 1]
    return text


def compare_page(mark: str, names: list[str], sections: Sections, titles: Mapping[str, str]) -> str:
    folded = folded_profiles(names)
    shown = [name for name in names if name not in folded]
    resolved = {name: variants.resolve(name) for name in shown}
    documents = {name: r.to_document() for name, r in resolved.items()}
    inert = {name: variants.inert_knobs(r) for name, r in resolved.items()}
    lines = ["---", "hide:", "  - toc", "---", mark, "", "# Compare the profiles", "",
             "Every rule of every profile side by side. Each row names the rule and its knob id; each cell "
             "says the profile's value in words, with its source or, where the sources are silent, the "
             "project's ruling (open *ruling* to read it whole). Rows marked **differs** are where the "
             "profiles disagree; *not in play* marks a value another rule makes irrelevant in that profile.", ""]
    for name, parent in folded.items():
        lines += [f'!!! note "Where is {name}?"',
                  f"    [{name}](profiles/{name}.md) has no rule of its own: every value equals "
                  f"[{parent}](profiles/{parent}.md)'s (its own entries only restate or mark them unverified), "
                  f"so it shares {parent}'s column.", ""]
    lines += ['<div class="compare-controls"></div>', ""]  # compare.js puts the "differences only" switch here
    for section in sections:
        knobs = sorted({k for r in resolved.values() for k in r.rules.get(section, {})})
        if not knobs:
            continue
        lines += [f"## {titles[section]}", "", '<table class="compare-table">', "<thead><tr><th>rule</th>"
                  + "".join(f'<th><a href="../profiles/{n}/">{n}</a></th>' for n in shown) + "</tr></thead>", "<tbody>"]
        for knob in knobs:
            lines.append(_row(section, knob, shown, resolved, documents, inert))
        lines += ["</tbody></table>", ""]
    return "\n".join(lines) + "\n"


def _row(section: str, knob: str, names: list[str], resolved: Mapping[str, Any],
         documents: Mapping[str, Any], inert: Mapping[str, Mapping[str, str]]) -> str:
    full = f"{section}.{knob}"
    values = [resolved[n].rules.get(section, {}).get(knob) for n in names]
    differs = any(v != values[0] for v in values)
    label = (f'<th scope="row"><span class="rule">{html.escape(rule_label(section, knob))}</span> '
             f'<code>{full}</code>' + (' <span class="differs">differs</span>' if differs else "") + "</th>")
    cells = [_cell(full, name, value, resolved[name].rules, documents[name]["provenance"].get(full, {}),
                   inert[name].get(full), differs)
             for name, value in zip(names, values)]
    classes = "differs-row" if differs else "same-row"
    if all(inert[n].get(full) for n in names):
        classes += " inert-row"
    return f'<tr class="{classes}">{label}' + "".join(cells) + "</tr>"


def _cell(knob: str, name: str, value: Any, rules: Any, entry: Mapping[str, Any], inert: str | None, differs: bool) -> str:
    words = html.escape(sentence(knob, value, rules)).replace("`", "")
    words = re.sub(r"\*([^*]+)\*", r"<em>\1</em>", words)
    code = f"<code>{html.escape(format_value(value))}</code>"
    value_html = f"<strong>{words}</strong>" if differs else words
    if inert:
        body = (f'<details class="inert"><summary>not in play here ({code})</summary>{_code_ids(html.escape(inert))}. '
                f"{_provenance(entry)}</details>")
    else:
        body = f"{value_html} {code}<br>{_provenance(entry)}"
    return f'<td data-profile="{name}">{body}</td>'


def _provenance(entry: Mapping[str, Any]) -> str:
    unverified = " <em>(unverified)</em>" if entry.get("unverified") else ""
    if "source" in entry:
        return f'<small>Source: {_linked(entry["source"])}{unverified}</small>'
    if "ruling" in entry:
        ruling = _code_ids(_linked(str(entry["ruling"])))
        return f'<details class="ruling"><summary>ruling{unverified}</summary>{ruling}</details>'
    return "<small>no provenance</small>"


def _code_ids(escaped: str) -> str:
    return mark_ids(escaped, "<code>", "</code>")


def _linked(text: str) -> str:
    """Escaped text with each source key linked to the Sources page (raw HTML: the site's URL form)."""
    escaped = html.escape(text)
    return CITATION.sub(lambda m: f'<a href="../sources/#{key_of(m)}">{m.group(0)}</a>', escaped)
