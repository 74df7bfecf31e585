"""The "Same deal, every rulebook" page: transcripts replayed under every profile, for readers.

The replays come from conformance.rulesets.replay (the reference implementation, run as a
subprocess); this module only lays them out for a browser: one row per group of
profiles that came to the same result, one column per result field, in words, with seat names
and suit symbols, inside a box that scrolls on its own when wider than the page.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from typing import Any, Sequence

from conformance.rulesets import compare, replay
from conformance.rulesets.replay import DealRecord, Replay
from sitegen.narrate import prose_paragraphs, symbolize
from variants.prose import SUIT_SYMBOLS
from sitegen.sources import link_citations

ROWS = (
    ("replay", "How the replay went"),
    ("outcome", "Outcome"),
    ("contract", "Contract"),
    ("declarer", "Declarer"),
    ("tricks", "Tricks won"),
    ("trump", "Trump"),
    ("points", "Points: cards, marriages, bonuses"),
    ("deltas", "Change this deal"),
    ("scores", "Scores after"),
    ("events", "Of note"),
)


def seats(values: Any) -> str:
    """A per-seat list in words: `seat 0: 160 · seat 1: 25 · seat 2: 15`."""
    if not isinstance(values, list):
        return replay.show(values)
    return " · ".join(f"seat {seat}: {replay.show(value)}" for seat, value in enumerate(values))


def tricks_text(winners: Sequence[Any]) -> str:
    """Who won how many tricks, and which: `seat 0: 6 (1–6) · seat 2: 1 (7) · seat 1: 1 (8)`."""
    if not winners:
        return "–"
    counts = Counter(winners)
    parts = []
    for seat in sorted(counts, key=str):
        numbers = [str(i + 1) for i, w in enumerate(winners) if w == seat]
        parts.append(f"seat {seat}: {counts[seat]} (trick{'s' if len(numbers) > 1 else ''} {', '.join(numbers)})")
    return " · ".join(parts)


def trump_text(trumps: Sequence[str]) -> str:
    """`D@2` -> `♦ from trick 2`."""
    words = []
    for item in trumps:
        suit, _, trick = item.partition("@")
        words.append(f"{SUIT_SYMBOLS.get(suit, suit)} from trick {trick}")
    return ", then ".join(words) or "no trump"


def event_text(text: str) -> str:
    """Events in words with suit symbols: `seat 0 marriage D 80` -> `seat 0 marriage ♦ 80`."""
    return re.sub(r"\bmarriage ([SCDH])\b", lambda m: f"marriage {SUIT_SYMBOLS[m.group(1)]}", symbolize(text))


def deal_cells(group: Sequence[Replay], number: int) -> dict[str, str]:
    first = group[0]
    deal: DealRecord | None = next((d for d in first.deals if d.number == number), None)
    cells = {"replay": _stop(first, number)}
    if deal is None:
        return {**cells, **{name: "not reached" for name, _ in ROWS[1:]}}
    plain = deal.cells()
    return {
        **cells,
        "outcome": plain["outcome"],
        "contract": "–" if deal.contract is None else plain["contract"],
        "declarer": "–" if deal.declarer is None else f"seat {deal.declarer}",
        "tricks": tricks_text(deal.tricks),
        "trump": trump_text(deal.trumps),
        "points": seats(deal.points) if deal.points is not None else "–",
        "deltas": seats(deal.deltas) if deal.deltas is not None else "–",
        "scores": seats(deal.scores),
        "events": "; ".join(event_text(e) for e in deal.events) + (
            f"; seat {deal.winner} wins the match" if deal.winner is not None else "") or "–",
    }


def _stop(first: Replay, number: int) -> str:
    if first.error:
        return "the implementation failed (see below)"
    stop = first.stop
    if stop is None or stop.deal > number:
        return "all steps legal"
    if stop.deal < number:
        return "not reached"
    if stop.step is None:
        return "not played"
    return f"step {stop.step}: `{symbolize(stop.action or '')}` refused ({stop.reason})"


def deal_table(groups: Sequence[Sequence[Replay]], number: int) -> list[str]:
    """One deal: a row per group of profiles, a column per result field; cells that differ from
    the first row in bold. On a phone each row becomes a card (extra.css)."""
    columns = [deal_cells(group, number) for group in groups]
    head = "".join(f"<th>{title}</th>" for _, title in ROWS)
    lines = ['<div class="replay-scroll"><table class="replay-table">',
             f"<thead><tr><th>Profiles</th>{head}</tr></thead><tbody>"]
    for index, (group, column) in enumerate(zip(groups, columns)):
        cells = []
        for name, title in ROWS:
            text = _inline(column[name])
            differs = index and column[name] != columns[0][name]
            cells.append(f'<td data-field="{title}">' + (f"<strong>{text}</strong>" if differs else text) + "</td>")
        names = html.escape(replay.compact_names([r.profile for r in group]))
        lines.append(f'<tr><th scope="row">{names}</th>{"".join(cells)}</tr>')
    return lines + ["</tbody></table></div>", ""]


def _inline(text: str) -> str:
    """Escaped text with `code` spans kept as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def case_section(case_id: str, names: Sequence[str]) -> list[str]:
    case = replay.load_case(case_id)
    replays = replay.replay_case(case, names)
    home = set(case.profiles)
    groups = replay.group_by_result(sorted(replays, key=lambda r: r.profile not in home))
    deal_count = max([len(r.deals) for r in replays] + [len(case.deals)])
    lines = [f"## {case.title}", "", f"Transcript [{case.id}](cases/{case.id}.md), replayed under {len(replays)} "
             "profiles and options; profiles that came to the same result share a row, and bold marks "
             "what differs from the first row.", ""]
    if case.description:
        lines += ["??? info \"What the transcript records under " + ", ".join(case.profiles) + "\"", ""]
        lines += ["    " + link_citations(line, "compare-deals.md") if line else "" for line in prose_paragraphs(case.description)]
    for number in range(1, deal_count + 1):
        if deal_count > 1:
            lines += [f"### Deal {number}", ""]
        lines += deal_table(groups, number)
    lines += ["### How each result comes about", ""]
    for group in groups:
        names = [r.profile for r in group]
        lines += [f"**{replay.compact_names(names)}**", ""]
        lines += [f"- {words}" for words in replay.folded_members(names)]
        body = replay.explanation_lines(group, case, groups[0][0].profile)
        lines += [f"- {event_text(symbolize(line))}".replace(" -> ", " → ") for line in body] + [""]
    return lines


def compare_deals_page(mark: str, names: list[str], case_ids: Sequence[str]) -> str:
    """The pairwise matrix of knob differences and a few deals replayed under every profile."""
    matrix = compare.knob_difference_matrix(names)
    lines = ["---", "hide:", "  - toc", "---", mark, "", "# Same deal, every rulebook", "",
             "How many rules differ between each pair of profiles, then real transcripts replayed under "
             "every profile and option by the reference implementation (`thousand replay CASE --profiles all`). "
             "A profile that refuses a step stops there, with the reason. Seats are numbered 0, 1 and 2 "
             "in playing order (clockwise).", "",
             "## How far apart the profiles are", "", "Rules (knobs) that differ, pair by pair:", "",
             '<div class="replay-scroll" markdown>', "",
             "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for a in names:
        lines.append(f"| **{a}** | " + " | ".join(str(matrix[a][b]) if a != b else "–" for b in names) + " |")
    lines += ["", "</div>", ""]
    all_names = replay.parse_profiles("all")
    for case_id in case_ids:
        lines += ["", *case_section(case_id, all_names)]
    return "\n".join(lines) + "\n"
