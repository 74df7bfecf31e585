"""``thousand coverage``: which hand-written cases exercise each knob value of each profile.

A profile "uses" every knob of its resolved rules except its inert ones: knobs that
cannot change any outcome under that profile (``variants.inert_knobs``, from the schema's
``x-applies-when`` and ``x-display-only``: the knobs of a section switched off, a display
name, ``giving_up.penalty`` without ``penalty_from``...). A profile that extends another, and a
profile with options, owes cases of its own only for the values it changes: the rest are
exercised by its parent's cases, which the report shows as inherited.
The command exits 1 when a used knob value has no case.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import variants
from variants.equivalents import shown_by_no_deal
from conformance.corpus.transcripts import CASES_DIR, Transcript, discover
from spec.vocabulary import ExitCode

def knob_values(rules: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``section.knob`` -> value of resolved rules."""
    return {f"{section}.{knob}": variants.thaw(value) for section, knobs in rules.items() for knob, value in knobs.items()}


@dataclass
class KnobCoverage:
    value: Any
    cases: list[str] = field(default_factory=list)
    required: bool = True  # the profile owes a case of its own for this value
    inherited_from: str | None = None  # the parent whose cases cover it
    inert: str | None = None  # why no case can show this value under the profile

    @property
    def missing(self) -> bool:
        return self.required and not self.cases


@dataclass
class ProfileSpec:
    """A profile to cover: its name, its knob values, its inert knobs (with why) and the profile it changes."""

    name: str
    values: dict[str, Any]
    parent: str | None = None
    parent_values: dict[str, Any] | None = None
    inert: dict[str, str] = field(default_factory=dict)
    borrows: bool = False  # a house file: its parent's cases count for the values it keeps


def profile_coverage(spec: ProfileSpec, cases: Sequence[Transcript]) -> dict[str, KnobCoverage]:
    """Coverage of one profile's knobs by the cases that apply to it."""
    report: dict[str, KnobCoverage] = {}
    for knob, value in sorted(spec.values.items()):
        kept = spec.borrows and spec.parent_values is not None and spec.parent_values.get(knob) == value
        names = {spec.name, spec.parent} if kept else {spec.name}
        entry = KnobCoverage(value, [case.id for case in cases if names & set(case.profiles) and knob in case.knobs])
        if knob in spec.inert:
            entry.required, entry.inert = False, spec.inert[knob]
        elif spec.parent is not None and spec.parent_values is not None and spec.parent_values.get(knob) == value:
            entry.required, entry.inherited_from = False, spec.parent
        report[knob] = entry
    return report


def coverage(profiles: Sequence[ProfileSpec], cases: Iterable[Transcript]) -> dict[str, dict[str, KnobCoverage]]:
    hand_written = [case for case in cases if not case.generated]
    return {spec.name: profile_coverage(spec, hand_written) for spec in profiles}


def bundled_profiles(selected: Sequence[str] = ()) -> list[ProfileSpec]:
    """Every bundled profile and each of its options, resolved by ``variants``."""

    specs = [house_profile(name) for name in selected if ".yaml" in name]
    selected = [name for name in selected if ".yaml" not in name] if specs else selected
    if specs and not selected:
        return specs
    for info in variants.list_profiles():
        names = [(info.name, info.extends)] + [(f"{info.name}+{option.name}", info.name) for option in info.options]
        for name, parent in names:
            if selected and not any(name == s or ("+" not in s and name.split("+")[0] == s) for s in selected):
                continue
            parent_values = knob_values(variants.resolve(parent).rules) if parent else None
            resolved = variants.resolve(name)
            values = knob_values(resolved.rules)
            unshown = {**shown_by_no_deal(name, values), **variants.inert_knobs(resolved)}
            specs.append(ProfileSpec(name, values, parent, parent_values, unshown))
    return specs


def house_profile(path: str) -> ProfileSpec:
    """A house-rules file (``thousand coverage --profile ./house.yaml``): the values it keeps from
    its parent are covered by the parent's cases; each value it changes needs a case of its own."""
    import yaml

    resolved = variants.resolve(path)
    parent = yaml.safe_load(Path(path.split(".yaml")[0] + ".yaml").read_text(encoding="utf-8")).get("extends")
    parent_values = knob_values(variants.resolve(parent).rules) if parent else None
    return ProfileSpec(resolved.name, knob_values(resolved.rules), parent, parent_values,
                       variants.inert_knobs(resolved), borrows=True)


def as_json(report: Mapping[str, Mapping[str, KnobCoverage]]) -> dict[str, Any]:
    return {
        "profiles": {name: {knob: {"value": entry.value, "cases": entry.cases, "required": entry.required,
                                   "inherited_from": entry.inherited_from, "inert": entry.inert}
                            for knob, entry in knobs.items()}
                     for name, knobs in report.items()},
        "missing": [f"{name}: {knob}" for name, knobs in report.items() for knob, entry in knobs.items() if entry.missing],
    }


def as_text(report: Mapping[str, Mapping[str, KnobCoverage]]) -> str:
    lines = []
    for name, knobs in report.items():
        covered = sum(1 for entry in knobs.values() if entry.required and entry.cases)
        required = sum(1 for entry in knobs.values() if entry.required)
        lines.append(f"{name}: {covered}/{required} knob values with a case")
        for knob, entry in knobs.items():
            value = json.dumps(entry.value, ensure_ascii=False)
            if entry.missing:
                note = "MISSING: no case"
            elif entry.cases:
                note = f"{len(entry.cases)} case(s): " + ", ".join(entry.cases[:3]) + (" ..." if len(entry.cases) > 3 else "")
            elif entry.inherited_from:
                note = f"inherited from {entry.inherited_from}"
            else:
                note = f"inert: {entry.inert}"
            lines.append(f"  {knob} = {value}  {note}")
    return "\n".join(lines)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "coverage", help="which cases exercise each knob value of each profile",
        description="For each profile (and option): every knob, its resolved value and the hand-written "
                    "cases that exercise it. Exits 1 when a knob value used by a profile has no case.")
    parser.add_argument("--profile", action="append", default=[], metavar="P", help="only this profile (repeatable)")
    parser.add_argument("--cases", action="append", type=Path, default=[], metavar="DIR",
                        help="transcript folder (default conformance/cases)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from variants import ProfileError

    cases = [item for item in discover(args.cases or [CASES_DIR]) if isinstance(item, Transcript)]
    try:
        specs = bundled_profiles(args.profile)
    except ProfileError as exc:
        print(f"thousand coverage: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if not specs:
        print(f"thousand coverage: no profile matches {', '.join(args.profile)}", file=sys.stderr)
        return ExitCode.USAGE
    report = coverage(specs, cases)
    print(json.dumps(as_json(report), indent=2, ensure_ascii=False) if args.json else as_text(report))
    return ExitCode.FAILED if any(entry.missing for knobs in report.values() for entry in knobs.values()) else ExitCode.PASSED
