"""``thousand report FILE.json [--markdown]``: a verify report summarised for people.

Reads the JSON that ``thousand verify --report FILE.json`` wrote and prints who was
tested, the counts, a table of outcomes by rule section, and the unexpected outcomes.
With ``--markdown`` the same as Markdown, ready to paste into a README, an issue or a
pull request. Only the keys every report item has are read: id, title, profile, outcome,
knobs, message.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

OUTCOMES = ("pass", "fail", "error", "timeout", "skipped", "case_bug")
NO_SECTION = "(no knobs)"


class ReportError(Exception):
    """The file is not a verify report."""


def sections_of(result: Mapping[str, Any]) -> list[str]:
    """The rule sections a result tests: those of the knobs its case exercises (as the runner counts them)."""
    return sorted({str(knob).split(".")[0] for knob in result.get("knobs") or []}) or [NO_SECTION]


def by_section(results: Sequence[Mapping[str, Any]]) -> dict[str, Counter[str]]:
    """Rule section -> how many (case, profile) pairs testing it had each outcome (a pair counts in each of its sections)."""
    table: dict[str, Counter[str]] = {}
    for result in results:
        for section in sections_of(result):
            table.setdefault(section, Counter())[str(result.get("outcome"))] += 1
    return dict(sorted(table.items()))


def read_report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ReportError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results", data.get("cases")), list):
        raise ReportError(f"{path}: not a verify report (expected an object with a 'results' list, "
                          "as written by thousand verify --report)")
    return data


def results_of(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-pair results (`results`; reports before the runner's rewrite called them `cases`)."""
    return list(report.get("results", report.get("cases", [])))


def implementation_name(report: Mapping[str, Any]) -> str:
    info = report.get("implementation") or {}
    name = str(info.get("name") or "unnamed implementation")
    return name + (f" {info['version']}" if info.get("version") else "")


def summary_line(results: Sequence[Mapping[str, Any]]) -> str:
    counts = Counter(str(r.get("outcome")) for r in results)
    return ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts[o]) or "no results"


def render(report: Mapping[str, Any], markdown: bool) -> str:
    results = results_of(report)
    sections = by_section(results)
    unexpected = [r for r in results if r.get("outcome") not in ("pass", "skipped")]
    title = f"Thousand conformance: {implementation_name(report)}"
    lines = [f"## {title}" if markdown else title, ""]
    lines += [f"{len(results)} (case, profile) pairs: {summary_line(results)}.", ""]
    headers = ["rule section", *OUTCOMES]
    rows = [[section, *(str(counts[o]) for o in OUTCOMES)] for section, counts in sections.items()]
    if markdown:
        lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
    else:
        widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
        lines += ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    if unexpected:
        lines += ["", "Unexpected outcomes:" if not markdown else "### Unexpected outcomes", ""]
        for result in unexpected:
            where = f"{result.get('id')} [{result.get('profile')}]"
            text = f"{result.get('outcome')}: {where}: {result.get('message') or result.get('title', '')}"
            lines.append(f"- `{where}` {result.get('outcome')}: {result.get('message') or ''}" if markdown else "  " + text)
    return "\n".join(lines).rstrip() + "\n"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report", help="summarise a verify report (JSON) as text or Markdown",
        description="Summarise the JSON report of 'thousand verify --report FILE.json': the implementation, "
                    "the counts, outcomes by rule section and the unexpected outcomes. --markdown prints "
                    "Markdown to publish with your implementation.")
    parser.add_argument("report", type=Path, metavar="FILE.json", help="a report written by thousand verify --report")
    parser.add_argument("--markdown", action="store_true", help="print Markdown instead of plain text")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        report = read_report(args.report)
    except ReportError as exc:
        print(f"thousand report: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render(report, args.markdown))
    return 0
