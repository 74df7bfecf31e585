"""``thousand compare``: the rule differences between profiles, and what they do to real deals.

Two parts:

1. the knob differences, grouped by rule section (DESIGN.md), each value with the source
   or ruling its profile gives for it;
2. the impact: every hand-written transcript that applies to one of the compared profiles
   is replayed under each of them (conformance/rulesets/replay.py); the transcripts whose result
   differs are listed with the numbers (``--all`` lists every one).

Public functions for the site generator: ``compare_markdown(names)``,
``knob_difference_matrix(names)``, ``knob_differences(names)`` and ``impact(names)``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

import variants
from conformance.corpus.transcripts import Transcript
from conformance.rulesets.replay import (
    Replay, Replayer, ReplayError, differing_fields, legal_differences, markdown_table, resolved, show,
    text_table, hand_written_cases,
)
from spec.vocabulary import ExitCode

LEGAL_LINES_SHOWN = 5  # per transcript in the text and Markdown outputs; JSON has them all
# the result field a transcript's one-line headline prefers, in order
HEADLINE_ORDER = ("deltas", "scores", "winner", "outcome", "events", "tricks", "trump", "replay")


# --- knob differences ---------------------------------------------------------------------

@dataclass
class KnobDifference:
    """One knob whose value is not the same in every compared profile."""

    knob: str
    values: dict[str, Any]  # profile -> value
    provenance: dict[str, dict[str, Any]]  # profile -> {"source" or "ruling", "from", ...}

    @property
    def section(self) -> str:
        return self.knob.split(".")[0]

    def to_json(self) -> dict[str, Any]:
        return {"knob": self.knob, "section": self.section,
                "values": {name: {"value": value, **self.provenance.get(name, {})} for name, value in self.values.items()}}


def _knob_names(profiles: Sequence[variants.ResolvedProfile]) -> list[str]:
    """Every ``section.knob`` of the profiles, in the profiles' (DESIGN.md) section order."""
    names: list[str] = []
    for profile in profiles:
        for section, knobs in profile.rules.items():
            names.extend(f"{section}.{knob}" for knob in knobs if f"{section}.{knob}" not in names)
    return names


def _value(profile: variants.ResolvedProfile, knob: str) -> Any:
    section, _, name = knob.partition(".")
    return variants.thaw(profile.rules.get(section, {}).get(name))


def knob_differences(names: Sequence[str]) -> list[KnobDifference]:
    """The knobs whose values differ between the named profiles (name or name+option)."""
    profiles = [resolved(name) for name in names]
    found = []
    for knob in _knob_names(profiles):
        values = {name: _value(profile, knob) for name, profile in zip(names, profiles)}
        if len({json.dumps(value, sort_keys=True) for value in values.values()}) > 1:
            provenance = {name: variants.thaw(profile.provenance.get(knob, {})) for name, profile in zip(names, profiles)}
            found.append(KnobDifference(knob, values, provenance))
    return found


def knob_difference_matrix(names: Sequence[str]) -> dict[str, dict[str, int]]:
    """How many knobs differ between each pair of the named profiles: matrix[a][b]."""
    profiles = {name: resolved(name) for name in names}
    knobs = _knob_names(list(profiles.values()))
    values = {name: {knob: json.dumps(_value(p, knob), sort_keys=True) for knob in knobs} for name, p in profiles.items()}
    return {a: {b: sum(values[a][k] != values[b][k] for k in knobs) for b in names} for a in names}


def format_value(value: Any) -> str:
    """A knob value as the profiles write it; redeal rules one per clause."""
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return "; ".join(" ".join(show(v) for v in rule.values()) for rule in value) or "none"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return ", ".join(f"{key} {show(item)}" for key, item in value.items())
    return show(value)


def provenance_text(entry: dict[str, Any], profile: str = "") -> str:
    """``source: ...`` or ``ruling: ...``, with the profile that set it (when not ``profile``
    itself) and an unverified flag."""
    if "source" in entry:
        text = f"source: {entry['source']}"
    elif "ruling" in entry:
        text = f"ruling: {entry['ruling']}"
    else:
        text = "no source or ruling recorded"
    if entry.get("from") and entry["from"] != profile:
        text += f" (set by {entry['from']})"
    if entry.get("unverified"):
        text += " [unverified]"
    return text


# --- impact -------------------------------------------------------------------------------

@dataclass
class Impact:
    """One transcript replayed under every compared profile."""

    case: Transcript
    replays: list[Replay]
    differing: list[str] = field(default_factory=list)  # result cells that differ
    legal: list[str] = field(default_factory=list)  # steps whose legal sets differ, in words

    @property
    def differs(self) -> bool:
        return bool(self.differing)

    @property
    def diverges(self) -> bool:
        """Some profile refused a step or stopped before the transcript's end."""
        return any(replay.stop or replay.error for replay in self.replays)

    def summary(self) -> list[str]:
        """Every differing result in one line: "deal 1 deltas [160, 25, 15] vs [160, 20, 10]"."""
        return [f"{key}: " + " vs ".join(replay.result_cells().get(key, "(not reached)") for replay in self.replays)
                for key in self.differing]

    def headline(self) -> str:
        """The most telling difference: where a replay stopped, else a score before an outcome."""
        if self.diverges:
            return self.summary()[0]
        for wanted in HEADLINE_ORDER:
            for line in self.summary():
                if line.split(":")[0].endswith(wanted):
                    return line
        return self.summary()[0] if self.differing else "same result under every profile"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.case.id, "title": self.case.title, "profiles": list(self.case.profiles),
                "differs": self.differs, "differing": self.differing, "summary": self.summary(), "headline": self.headline(),
                "legal_differences": self.legal, "replays": [replay.to_json() for replay in self.replays]}


def applies(case: Transcript, names: Sequence[str]) -> bool:
    """Does the transcript name one of the compared profiles (name+option matched exactly)?"""
    wanted = {_canonical(name) for name in names}
    return any(_canonical(name) in wanted for name in case.profiles)


def _canonical(name: str) -> str:
    try:
        return variants.resolve(name).name
    except variants.ProfileError:
        return name


def impact(names: Sequence[str], patterns: Sequence[str] = (), replayer: Replayer | None = None) -> list[Impact]:
    """Every applicable hand-written transcript (ids matching ``patterns`` if given), replayed."""
    cases = [case for case in hand_written_cases() if applies(case, names)
             and (not patterns or any(fnmatch.fnmatchcase(case.id, p) for p in patterns))]
    own = replayer or Replayer()
    try:
        found = []
        for case in cases:
            replays = [own.replay(case, name) for name in names]
            found.append(Impact(case, replays, differing_fields(replays), legal_differences(replays, collapse_bids=True)))
        return found
    finally:
        if replayer is None:
            own.close()


# --- output ---------------------------------------------------------------------------------

def _knob_tables(differences: Sequence[KnobDifference], names: Sequence[str], markdown: bool) -> list[str]:
    """One table per rule section; provenance as numbered notes under each table."""
    table = markdown_table if markdown else text_table
    out: list[str] = []
    sections: list[str] = []
    for difference in differences:
        if difference.section not in sections:
            sections.append(difference.section)
    for section in sections:
        rows, notes = [], []  # type: list[list[str]], list[str]
        for difference in (d for d in differences if d.section == section):
            row = [difference.knob]
            for name in names:
                note = f"{name}: {provenance_text(difference.provenance.get(name, {}), name)}"
                if note not in notes:
                    notes.append(note)
                row.append(f"{format_value(difference.values[name])} [{notes.index(note) + 1}]")
            rows.append(row)
        out += [f"### {section}" if markdown else f"[{section}]", "", table(["knob", *names], rows, _marks(rows)), ""]
        bullet = "" if markdown else "  "
        out += [f"{bullet}{number}. {note}" for number, note in enumerate(notes, start=1)] + [""]
    return out


def _marks(rows: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """Cells whose value differs from the first profile's (the knob column and notes aside)."""
    def bare(cell: str) -> str:
        return cell.rsplit(" [", 1)[0]
    return [(r, c) for r, row in enumerate(rows) for c in range(2, len(row)) if bare(row[c]) != bare(row[1])]


def _impact_lines(found: Sequence[Impact], names: Sequence[str], show_all: bool, markdown: bool) -> list[str]:
    table = markdown_table if markdown else text_table
    # the same play scored differently first: those are the arguments about house rules
    listed = sorted((item for item in found if show_all or item.differs), key=lambda item: (not item.differs, item.diverges))
    differing = sum(item.differs for item in found)
    played_through = sum(item.differs and not item.diverges for item in found)
    out = [f"{len(found)} hand-written transcript(s) apply to these profiles, replayed under each: {differing} "
           f"with a different result ({played_through} play through under every profile and end differently, "
           f"{differing - played_through} become illegal under some profile)"
           + ("" if show_all else "; only those are listed (--all lists every one)") + ".", ""]
    for item in listed:
        out += [f"### {item.case.id}" if markdown else f"== {item.case.id}", "",
                f"{item.case.title} (transcript profiles: {', '.join(item.case.profiles)})", ""]
        keys = item.differing if item.differs else ["replay"]
        rows = [[key] + [replay.result_cells().get(key, "(not reached)") for replay in item.replays] for key in keys]
        out += [table(["result", *names], rows, _result_marks(rows)), ""]
        bullet = "- " if markdown else "  "
        out += [f"{bullet}in short: {item.headline()}"]
        if item.legal:
            more = len(item.legal) - LEGAL_LINES_SHOWN
            out += [f"{bullet}legal sets differ:"]
            out += [f"{bullet}  {line}" for line in item.legal[:LEGAL_LINES_SHOWN]]
            out += [f"{bullet}  ... {more} more step(s)"] if more > 0 else []
        out += [f"{bullet}{replay.profile}: {note}" for replay in item.replays for note in replay.notes]
        out.append("")
    return out


def _result_marks(rows: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    return [(r, c) for r, row in enumerate(rows) for c in range(2, len(row)) if row[c] != row[1]]


def render(names: Sequence[str], differences: Sequence[KnobDifference], found: Sequence[Impact] | None,
           show_all: bool = False, markdown: bool = False) -> str:
    """The whole comparison as a terminal report or a Markdown page."""
    title = "Compare " + " vs ".join(names)
    out = [f"# {title}" if markdown else title, ""]
    drafts = [name for name in names if resolved(name).status != "stable"]
    if drafts:
        out += [f"Draft profile(s): {', '.join(drafts)} (values not all verified against a source).", ""]
    out += ["## Rule differences" if markdown else "RULE DIFFERENCES", ""]
    if differences:
        marker = "bold" if markdown else "*"
        out += [f"{len(differences)} knob(s) differ; {marker} marks a value that differs from {names[0]}'s; "
                "[n] points to the source or ruling listed under each section.", ""]
        out += _knob_tables(differences, names, markdown)
    else:
        out += ["No knob differs: the profiles play by the same rules.", ""]
    if found is not None:
        out += ["## Impact on the transcripts" if markdown else "IMPACT ON THE TRANSCRIPTS", ""]
        out += _impact_lines(found, names, show_all, markdown)
    return "\n".join(out).rstrip() + "\n"


def compare_json(names: Sequence[str], differences: Sequence[KnobDifference], found: Sequence[Impact] | None,
                 show_all: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {"profiles": list(names), "knob_differences": [d.to_json() for d in differences]}
    if found is not None:
        data["impact"] = {"transcripts": len(found), "differing": sum(item.differs for item in found),
                          "cases": [item.to_json() for item in found if show_all or item.differs]}
    return data


def compare_markdown(names: Sequence[str], show_all: bool = False, patterns: Sequence[str] = ()) -> str:
    """The Markdown page comparing ``names``: rule differences, then the impact on transcripts."""
    return render(names, knob_differences(names), impact(names, patterns), show_all, markdown=True)


# --- thousand compare ----------------------------------------------------------------------

def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare", help="rule differences between profiles and what they do to the transcripts",
        description="Show the knobs that differ between profiles (with each value's source or ruling), "
                    "then replay every hand-written transcript of those profiles under each of them and list "
                    "the ones whose result differs.")
    parser.add_argument("profiles", nargs="+", metavar="PROFILE", help="profile or profile+option; at least two")
    parser.add_argument("--all", action="store_true", dest="show_all", help="list every transcript, not only those that differ")
    parser.add_argument("-k", action="append", default=[], dest="include", metavar="GLOB",
                        help="only transcripts whose id matches this glob; repeatable")
    parser.add_argument("--no-impact", action="store_true", help="show only the rule differences (no replays)")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print JSON")
    form.add_argument("--markdown", action="store_true", help="print Markdown")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    names = list(args.profiles)
    if len(names) < 2:
        print("thousand compare: expected at least two profiles (name or name+option)", file=sys.stderr)
        return ExitCode.USAGE
    try:
        differences = knob_differences(names)
    except ReplayError as exc:
        print(f"thousand compare: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    found = None if args.no_impact else impact(names, args.include)
    if args.json:
        print(json.dumps(compare_json(names, differences, found, args.show_all), indent=2))
    else:
        print(render(names, differences, found, args.show_all, markdown=args.markdown), end="")
    return ExitCode.FAILED if found and any(replay.error for item in found for replay in item.replays) else ExitCode.PASSED
