"""``thousand report FILE.json [--markdown]``: a verify report summarised for people.

Reads the JSON that ``thousand verify --report FILE.json`` wrote and prints who was
tested, the counts, a table of outcomes by rule section, and the unexpected outcomes.
With ``--markdown`` the same as Markdown, ready to paste into a README, an issue or a
pull request. Only the keys every report item has are read: id, title, profile, outcome,
knobs, message.
"""

from __future__ import annotations

import argparse
import functools
import html
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

from conformance.terminal import printable
from spec.vocabulary import OUTCOMES, ExitCode

NO_SECTION = "(no knobs)"
READ_KEYS = ("id", "title", "profile", "outcome", "knobs", "message")  # of each result: all that is read


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
    """The report in ``path``, read as every file of the project is (a regular file of bounded
    size: never a FIFO or a device), strict JSON (no NaN, no nesting past the parser's depth)
    and checked against spec/schema/report.schema.json for every key this command reads."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]
    from conformance.corpus.schemas import ReportFileError, read_report_json

    try:
        data = read_report_json(path)
    except ReportFileError as exc:
        raise ReportError(str(exc)) from None
    error = best_match(_validator().iter_errors(data))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise ReportError(f"{path}: not a verify report as written by thousand verify --report: at {where}: "
                          f"{error.message[:300]}")
    return dict(data)


@functools.cache
def _validator() -> Any:
    """The report schema's own definitions of what is read: the implementation, and the
    listed keys of each result (id, profile and outcome required); ``results`` is the name
    reports used before ``cases``."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
    from spec import SCHEMA_DIR

    full = json.loads((SCHEMA_DIR / "report.schema.json").read_text(encoding="utf-8"))
    case = full["$defs"]["case"]["properties"]
    item = {"type": "object", "required": ["id", "profile", "outcome"],
            "properties": {key: case[key] for key in READ_KEYS}}
    results = {"type": "array", "items": item}
    implementation = {"type": ["object", "null"],
                      "properties": {"name": {"type": ["string", "null"]}, "version": {"type": ["string", "null"]}}}
    return Draft202012Validator({
        "type": "object", "properties": {"implementation": implementation, "cases": results, "results": results},
        "anyOf": [{"required": ["cases"]}, {"required": ["results"]}]})


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


# what can start emphasis, code, a link, a heading, a table cell or an attribute list
# (attr_list's "{: ...}" and "{ ...}"); "(" and "!" only act after "]" or before "[", both escaped
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#|~{}])")
# what starts a block only at the start of a line: a list item, a quote, a setext underline, a
# snippet inclusion ("--8<--"), a numbered item
_LINE_START = re.compile(r"^([-+=>]|\d+[.)])")


def markdown_text(value: Any) -> str:
    """Text from a report or a profile (an implementation's name, a case id, a message, a
    summary, a ruling) as inert Markdown on one line: no HTML, no emphasis, link, image,
    heading, table cell break, attribute list or block."""
    flat = " ".join(printable(str(value)).split())
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))
    return _LINE_START.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], text)


def markdown_code(value: Any) -> str:
    """Text as an inline code span on one line whose fence no backtick in it can close."""
    flat = " ".join(printable(str(value)).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", flat)), default=0) + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") else flat
    return f"{fence}{padded}{fence}"


def _plain(value: Any) -> str:
    """Text from a report for the terminal: control characters escaped, on one line."""
    return " ".join(printable(str(value)).split("\n"))


def render(report: Mapping[str, Any], markdown: bool) -> str:
    text = markdown_text if markdown else _plain
    results = results_of(report)
    sections = by_section(results)
    unexpected = [r for r in results if r.get("outcome") not in ("pass", "skipped")]
    title = f"Thousand conformance: {text(implementation_name(report))}"
    lines = [f"## {title}" if markdown else title, ""]
    lines += [f"{len(results)} (case, profile) pairs: {summary_line(results)}.", ""]
    headers = ["rule section", *OUTCOMES]
    rows = [[text(section), *(str(counts[o]) for o in OUTCOMES)] for section, counts in sections.items()]
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
            if markdown:
                lines.append(f"- {markdown_code(where)} {result.get('outcome')}: {markdown_text(result.get('message') or '')}")
            else:
                lines.append("  " + _plain(f"{result.get('outcome')}: {where}: {result.get('message') or result.get('title', '')}"))
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
        return ExitCode.USAGE
    sys.stdout.write(render(report, args.markdown))
    return ExitCode.PASSED
