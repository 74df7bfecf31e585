"""The pieces every knob needs (DESIGN.md "Adding a knob"), read from the files that hold them.

Not a test module: ``tests/project/test_knob_lifecycle.py`` uses it, and run as a script it
lists every missing piece, one a line, and exits 1 when there is one:

    python tools/knob_lifecycle.py

A knob is a property of a rule section in ``spec/schema/profile.schema.json``. It needs:
its value in every root profile (``extends: null``); the engine reading it
(``reference_impl/rules.py``) and using it (an attribute of that name elsewhere in
``reference_impl``); a sentence in ``variants/prose.py``; its name in ``spec/diagnosis.yaml``
(a section name there covers a knob for the runner, but a knob's own checks name it); a
mutant naming it (``mutants/catalogue.py``); a case showing each value a bundled profile or
option plays where the knob applies, and for a choice or a switch every value played
somewhere (or listed in ``UNPLAYED`` with the reason); and for a number, its role for
``thousand fit`` (``x-fit-role``, with ``x-fit-event`` for a count or a score line).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Mapping

import yaml

if __package__ in (None, ""):  # run as a script: the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "reference_impl"
READER = ENGINE / "rules.py"
DIAGNOSIS = ROOT / "spec" / "diagnosis.yaml"
EVENT_ROLES = ("count", "score_line")  # roles whose readings come from an event's numbers

# "knob=value" (value in JSON) -> why no bundled profile or option plays it. A value here
# has no case because no bundled rule set can deal it; an option playing it, with a case,
# takes it off the list (the test fails on an entry that is played).
UNPLAYED: dict[str, str] = {
    f"{knob}={value}": "no bundled profile or option plays it where the knob applies"
    for knob, value in (
        ("deal.dealer_after_redeal", '"next"'), ("auction.raise", '"one_step"'), ("talon.contract_raise", "false"),
        ("talon.contract_ceiling_hand", '"auction_hand"'), ("talon.contract_ceiling_hand", '"hand_with_talon"'),
        ("giving_up.allowed", "false"), ("play.must_trump", "false"), ("marriages.first_trick", "true"),
        ("marriages.trump_from", '"next_trick"'), ("scoring.declarer_rounding", '"nearest_10"'),
        ("scoring.declarer_rounding", '"nearest_5"'), ("scoring.defender_rounding", '"exact"'),
        ("bolts.zero", '"no_tricks"'), ("bolts.counting", '"consecutive"'), ("bolts.in_give_up_deal", "true"),
        ("barrel.attempt_counts", '"as_declarer"'), ("barrel.give_up_deal_counts", "false"),
        ("barrel.defender_points", '"counted"'),
        ("match_end.defenders_can_win", "false"),
    )
}

# Knobs no mutant names yet: each is exercised only by mutants of its whole section (a
# fixed rule of it) or not at all. A new knob is not listed here: it comes with its mutant.
NO_MUTANT: frozenset[str] = frozenset({
    "auction.opening_bid", "auction.high_bid_step", "auction.high_bid_from", "auction.raise", "giving_up.allowed",
    "giving_up.defender_gain", "giving_up.defender_gain_amount", "giving_up.penalty", "giving_up.limit",
    "play.first_lead", "bolts.enabled", "bolts.penalty", "barrel.enabled", "dump.score", "redeals.rules",
    "match_end.target"})


@dataclass(frozen=True)
class Pieces:
    """What the repository holds for the knobs, each piece as the check needs it."""

    schema: Mapping[str, Mapping[str, Any]]  # "section.knob" -> its schema entry
    root_profiles: Mapping[str, Collection[str]]  # root profile -> the knobs it states
    reader: str  # the text of the engine's profile reader
    engine: str  # the text of the other engine modules
    sentences: Collection[str]  # knobs with a prose sentence
    diagnosed: Collection[str]  # knobs and sections spec/diagnosis.yaml names for a check (not a fallback)
    mutants: Collection[str]  # knobs some mutant names
    played: Mapping[str, Collection[str]]  # knob -> values (JSON) a bundled rule set plays where it applies
    shown: Mapping[str, Collection[str]]  # knob -> values (JSON) some case of such a rule set shows
    unplayed: Collection[str] = frozenset(UNPLAYED)
    no_mutant: Collection[str] = frozenset(NO_MUTANT)


def _domain(entry: Mapping[str, Any]) -> list[str]:
    """The values every one of which needs a rule set playing it: a choice's, a switch's."""
    value = entry["properties"]["value"]
    if "enum" in value:
        return [json.dumps(item) for item in value["enum"]]
    return ["true", "false"] if value.get("type") == "boolean" else []


def _is_number(entry: Mapping[str, Any]) -> bool:
    kind = entry["properties"]["value"].get("type")
    return "integer" in (kind if isinstance(kind, list) else [kind])


def knob_gaps(knob: str, pieces: Pieces) -> list[str]:
    """What the knob lacks, one phrase each."""
    entry = pieces.schema[knob]
    name = knob.partition(".")[2]
    found = [f"no value in root profile {profile}" for profile, knobs in sorted(pieces.root_profiles.items())
             if knob not in knobs]
    if f'"{name}"' not in pieces.reader:
        found.append("the engine does not read it (reference_impl/rules.py)")
    elif not entry.get("x-display-only") and not re.search(rf"\.{name}_?\b", pieces.engine):
        found.append("the engine does not use it (no attribute of that name in reference_impl)")
    if knob not in pieces.sentences:
        found.append("no prose sentence (variants/prose.py SENTENCES)")
    if knob not in pieces.diagnosed and knob.partition(".")[0] not in pieces.diagnosed:
        found.append("no diagnosis entry naming it or its section (spec/diagnosis.yaml, beside a default)")
    if knob not in pieces.mutants and not entry.get("x-display-only") and knob not in pieces.no_mutant:
        found.append("no mutant naming it (mutants/catalogue.py)")
    played, shown = set(pieces.played.get(knob, ())), set(pieces.shown.get(knob, ()))
    for value in _domain(entry):
        if value not in played and f"{knob}={value}" not in pieces.unplayed and not entry.get("x-display-only"):
            found.append(f"value {value}: no bundled profile or option plays it (add an option, or UNPLAYED)")
    for value in sorted(played - shown):
        found.append(f"value {value}: no case shows it (conformance/cases)")
    if _is_number(entry):
        roles = entry.get("x-fit-role")
        if not roles:
            found.append("a number without a fit role (x-fit-role in the schema)")
        elif any(role in EVENT_ROLES for role in roles) and not entry.get("x-fit-event"):
            found.append(f"fit role {roles} without its event (x-fit-event in the schema)")
    return found


def gaps(pieces: Pieces) -> list[str]:
    """Every missing piece of every knob, and every piece naming a knob the schema lacks."""
    found = [f"{knob}: {gap}" for knob in pieces.schema for gap in knob_gaps(knob, pieces)]
    sections = {knob.partition(".")[0] for knob in pieces.schema}
    for where, names in (("prose sentence", pieces.sentences), ("mutant", pieces.mutants),
                         ("diagnosis entry", pieces.diagnosed)):
        found += [f"{name}: a {where} for a knob the schema does not have"
                  for name in sorted(set(names) - set(pieces.schema) - sections)]
    found += [f"{knob}: listed in NO_MUTANT but a mutant names it" for knob in sorted(set(pieces.no_mutant) & set(pieces.mutants))]
    stale = sorted(label for label in pieces.unplayed
                   if label.partition("=")[2] in pieces.played.get(label.partition("=")[0], ()))
    found += [f"{label}: listed as unplayed but a bundled rule set plays it" for label in stale]
    return found


def diagnosed(tree: Any, key: str = "") -> set[str]:
    """The knobs and sections diagnosis.yaml names under keys other than ``default`` (a
    fallback naming every section would cover any knob); ``see kind.key`` links are not names."""
    if isinstance(tree, dict):
        return {name for child, sub in tree.items() for name in diagnosed(sub, str(child))}
    if isinstance(tree, list) and key != "default":
        return {str(item) for item in tree if not str(item).startswith("see ")}
    return set()


def load() -> Pieces:
    """The pieces as the repository holds them now (resolves every bundled rule set: seconds)."""
    import variants
    from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
    from mutants.catalogue import CATALOGUE
    from variants.prose import SENTENCES
    from variants.schema import knob_entry, rule_sections

    schema = {f"{section}.{knob}": knob_entry(section, knob) for section, knobs in rule_sections().items() for knob in knobs}
    cases = [case for case in discover([CASES_DIR, GENERATED_DIR]) if isinstance(case, Transcript)]
    played: dict[str, set[str]] = {}
    shown: dict[str, set[str]] = {}
    roots: dict[str, set[str]] = {}
    root_names = {info.name for info in variants.list_profiles() if info.extends is None}
    for name in variants.all_names():
        resolved = variants.resolve(name)
        if name in root_names:  # the knobs the file itself states
            roots[name] = {knob for knob, origin in resolved.provenance.items() if origin.get("from") == name}
        inert = variants.inert_knobs(resolved)
        mine = [case for case in cases if name in case.profiles]
        for section, knobs in resolved.rules.items():
            for knob, value in knobs.items():
                label = f"{section}.{knob}"
                if label in inert:
                    continue
                text = json.dumps(variants.thaw(value), sort_keys=True)
                played.setdefault(label, set()).add(text)
                if any(label in case.knobs for case in mine):
                    shown.setdefault(label, set()).add(text)
    engine = "\n".join(path.read_text(encoding="utf-8") for path in sorted(ENGINE.glob("*.py")) if path != READER)
    return Pieces(schema=schema, root_profiles=roots, reader=READER.read_text(encoding="utf-8"), engine=engine,
                  sentences=set(SENTENCES), diagnosed=diagnosed(yaml.safe_load(DIAGNOSIS.read_text(encoding="utf-8"))),
                  mutants={knob for mutant in CATALOGUE.values() for knob in mutant.knobs},
                  played=played, shown=shown)


def main() -> int:
    found = gaps(load())
    for line in found:
        print(line)
    print(f"{len(found)} missing pieces")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
