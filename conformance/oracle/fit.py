"""``thousand fit``: which rules does an engine play? A house profile, and what no knob explains.

The implementation is observed once over the corpus cases of a profile P (keep-going: every
legal set, reply and state, see ``observe``). The reference, run as a subprocess and fed a
candidate rule set in ``match``, replays the same actions; the differences between the two
records are what a rule set fails to explain. A greedy search starting from P proposes
single-knob changes among the knobs that apply (plus a controlling knob together with a knob
it switches on), screens them on one mismatching case per signature, evaluates the few best
on every mismatching case, accepts the best one if it lowers the mismatches without breaking
a matching case, and repeats until nothing improves.

Cost is kept near a few verify runs: only mismatching cases are replayed, candidates are
screened on a small sample first, knobs of the rule sections the signatures point at are
screened first, and every (rules, case) record is computed once.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

import variants
from conformance.harness import diagnosis, process, reports
from conformance.oracle import observe
from conformance.terminal import clear_progress, printable, terminal_progress
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, TranscriptError, load
from variants.schema import knob_entry, rule_sections

MAX_TIMEOUT = 86400  # seconds, as thousand verify caps --timeout (a larger one overflows the poll)
NAME_LIMIT = 60  # characters of the implementation's name written into the fitted profile
BEAM = 3  # candidates evaluated on every mismatching case per round
SAMPLE = 6  # mismatching cases a candidate is screened on
MAX_ROUNDS = 8
Rules = dict[str, dict[str, Any]]

# The rule sections a signature points at, by the words in it: the screening order only.
_POINTERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("auction", ("auction", "talon")), ("bid", ("auction",)), ("opener", ("auction",)),
    ("opening", ("auction",)), ("contract", ("talon", "auction", "giving_up")),
    ("exchange", ("giving_up", "talon", "redeals")), ("give_up", ("giving_up", "barrel")),
    ("give", ("giving_up",)), ("play", ("play", "marriages")), ("must_", ("play",)),
    ("marriage", ("marriages", "auction")), ("aces", ("marriages",)), ("trump", ("marriages", "play")),
    ("trick", ("play", "marriages")), ("talon", ("talon", "redeals")), ("redeal", ("redeals", "deal")),
    ("claim", ("redeals",)), ("dealer", ("deal", "redeals")), ("bolt", ("bolts",)),
    ("barrel", ("barrel",)), ("score_reset", ("barrel",)), ("dump", ("dump",)),
    ("match_", ("match_end", "barrel")), ("winner", ("match_end", "barrel")),
    ("scores", ("scoring", "giving_up", "bolts", "barrel", "defender_lock", "dump", "marriages", "match_end")),
    ("deal_result", ("scoring", "giving_up", "marriages")), ("deal_scored", ("scoring", "giving_up", "defender_lock", "dump")),
    ("card_points", ("play", "marriages")), ("phase", ("redeals", "match_end", "giving_up")),
)


@dataclass(frozen=True)
class Change:
    knob: str  # section.knob
    value: Any

    def text(self) -> str:
        return f"{self.knob}: {json.dumps(self.value)}"


@dataclass(frozen=True)
class Accepted:
    changes: tuple[Change, ...]
    cases_fixed: int
    cases_improved: int
    example: str


@dataclass
class FitResult:
    profile: str
    rules: Rules
    accepted: list[Accepted]
    residual: dict[str, tuple[observe.Difference, ...]]  # case id -> differences left
    cases: int
    seconds: float = 0.0
    evaluations: int = 0
    exercised: dict[str, tuple[str, ...]] = field(default_factory=dict)  # case id -> the knobs it exercises


def set_knob(rules: Rules, changes: Sequence[Change]) -> Rules:
    new = {section: dict(knobs) for section, knobs in rules.items()}
    for change in changes:
        section, _, name = change.knob.partition(".")
        new[section][name] = change.value
    return new


def _bundled_values() -> dict[str, list[Any]]:
    """Every value some bundled profile or option gives each knob."""
    seen: dict[str, list[Any]] = {}
    for name in variants.all_names():
        for section, knobs in variants.resolve(name).rules.items():
            for knob, value in knobs.items():
                plain = variants.thaw(value)
                if plain not in seen.setdefault(f"{section}.{knob}", []):
                    seen[f"{section}.{knob}"].append(plain)
    return seen


_VALUES: dict[str, list[Any]] = {}


def knob_domain(knob: str, current: Any) -> list[Any]:
    """The values tried for a knob: its enum or both booleans; for a number, the bundled
    profiles' values, the schema default and near neighbours; null where the knob allows it."""
    if not _VALUES:
        _VALUES.update(_bundled_values())
    section, _, name = knob.partition(".")
    schema = knob_entry(section, name)["properties"]["value"]
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    values: list[Any] = list(_VALUES.get(knob, []))
    if "enum" in schema:
        values += schema["enum"]
    elif "boolean" in kinds:
        values += [True, False]
    elif "integer" in kinds:
        low, high = schema.get("minimum", 0), schema.get("maximum", 10**6)
        numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        if isinstance(schema.get("default"), int):
            numbers.append(schema["default"])
        near = {n + d for n in numbers for d in ((-1, 1, 2) if n <= 10 else (-20, -10, 10, 20))}
        values += sorted(v for v in near if low <= v <= high)
    if "null" in kinds:
        values.append(None)
    unique: list[Any] = []
    for value in values:
        if value not in unique and value != current:
            unique.append(value)
    return unique


def applying_knobs(profile: variants.ResolvedProfile, rules: Rules) -> list[str]:
    """The knobs that can change an outcome under these rules, in schema order."""
    inert = variants.inert_knobs(replace(profile, rules=rules))
    return [f"{s}.{k}" for s, knobs in rule_sections().items() for k in knobs
            if f"{s}.{k}" not in inert and len(knob_domain(f"{s}.{k}", rules[s][k])) > 0]


def proposals(profile: variants.ResolvedProfile, rules: Rules) -> list[tuple[Change, ...]]:
    """Single-knob changes among the knobs that apply, and each change of a controlling knob
    together with each value of a knob that the change switches on."""
    before = set(applying_knobs(profile, rules))
    found: list[tuple[Change, ...]] = []
    for knob in before:
        section, _, name = knob.partition(".")
        for value in knob_domain(knob, rules[section][name]):
            change = Change(knob, value)
            found.append((change,))
            switched_on = set(applying_knobs(profile, set_knob(rules, [change]))) - before
            for other in sorted(switched_on):
                o_section, _, o_name = other.partition(".")
                found += [(change, Change(other, v)) for v in knob_domain(other, rules[o_section][o_name])]
    return found


def pointed_sections(signatures: Sequence[str]) -> dict[str, int]:
    """Rule section -> how many signatures point at it."""
    weight: dict[str, int] = {}
    for signature in signatures:
        for word, sections in _POINTERS:
            if word in signature:
                for section in sections:
                    weight[section] = weight.get(section, 0) + 1
    return weight


# --- the search --------------------------------------------------------------------------

class Fitter:
    def __init__(self, profile_name: str, cases: Sequence[Transcript], implementation: Sequence[str],
                 jobs: int = 1, timeout: float = 10.0, progress: Callable[[str], None] | None = None) -> None:
        self.profile_name = profile_name
        self.profile = variants.resolve(profile_name)
        self.cases = list(cases)
        self.by_id = {case.id: case for case in self.cases}
        self.implementation, self.jobs, self.timeout = list(implementation), jobs, timeout
        self.progress = progress or (lambda text: None)
        self.impl_records: dict[str, observe.CaseRecord] = {}
        self.implementation_name = ""
        self.memo: dict[tuple[str, str], tuple[observe.Difference, ...]] = {}
        self.reference = observe.Pool(REFERENCE_COMMAND, jobs, timeout, batch=True)
        self.evaluations = 0
        self._checked: dict[str, bool] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="thousand-fit-")

    def close(self) -> None:
        self.reference.close()
        self._tmp.cleanup()

    def observe_implementation(self) -> None:
        pool = observe.Pool(self.implementation, self.jobs, self.timeout)
        document = self.profile.to_document()
        done = [0]

        def tick() -> None:
            done[0] += 1
            self.progress(f"observing the implementation: {done[0]}/{len(self.cases)} cases")

        try:
            records = pool.map(self.cases, lambda o, c: o.observe(c, self.profile_name, document), tick)
        finally:
            self.implementation_name = next((o.name for o in pool.observers if o.name), "")
            pool.close()
        self.impl_records = {record.case_id: record for record in records}

    def differences(self, rules: Rules, case_ids: Sequence[str]) -> dict[str, tuple[observe.Difference, ...]]:
        """Case id -> the differences between the reference under ``rules`` and the implementation."""
        key = json.dumps(rules, sort_keys=True)
        todo = [case_id for case_id in case_ids if (key, case_id) not in self.memo]
        if todo:
            document = {**self.profile.to_document(), "rules": rules}
            records = self.reference.map(todo, lambda o, c: o.observe(self.by_id[c], self.profile_name, document))
            self.evaluations += len(todo)
            for case_id, record in zip(todo, records):
                self.memo[key, case_id] = tuple(observe.compare(record, self.impl_records[case_id]))
        return {case_id: self.memo[key, case_id] for case_id in case_ids}

    def consistent(self, rules: Rules) -> bool:
        """Do these rules resolve as a house profile (the consistency checks of ``validate``)?"""
        key = json.dumps(rules, sort_keys=True)
        if key not in self._checked:
            folder = Path(self._tmp.name) / f"c{len(self._checked)}"
            folder.mkdir()
            path = folder / "fitted.yaml"
            path.write_text(house_yaml(self.profile, rules, [], "fitted", "candidate"), encoding="utf-8")
            try:
                variants.resolve(str(path))
                self._checked[key] = True
            except variants.ProfileError:
                self._checked[key] = False
        return self._checked[key]

    def run(self) -> FitResult:
        started = time.monotonic()
        if not self.impl_records:
            self.observe_implementation()
        ids = [case.id for case in self.cases]
        rules: Rules = variants.thaw(self.profile.rules)
        current = self.differences(rules, ids)
        accepted: list[Accepted] = []
        for round_number in range(1, MAX_ROUNDS + 1):
            bad = [c for c in ids if current[c]]
            if not bad:
                break
            step = self._round(rules, current, bad, round_number)
            if step is None:
                break
            changes, new_current, record = step
            rules, current = set_knob(rules, changes), new_current
            accepted = _merged(accepted, record)
        residual = {case_id: diffs for case_id, diffs in current.items() if diffs}
        return FitResult(self.profile_name, rules, accepted, residual, len(ids),
                         time.monotonic() - started, self.evaluations,
                         {case_id: self.by_id[case_id].knobs for case_id in residual})

    def _round(self, rules: Rules, current: dict[str, tuple[observe.Difference, ...]], bad: list[str],
               round_number: int) -> tuple[tuple[Change, ...], dict[str, tuple[observe.Difference, ...]], Accepted] | None:
        """One accepted change, or None: the knobs the signatures point at are tried first,
        the others only when none of those holds up."""
        sigs = {c: observe.signatures(current[c]) for c in bad}
        sample = _sample(sigs)
        weight = pointed_sections([s for c in bad for s in sigs[c]])
        candidates = proposals(self.profile, rules)
        candidates.sort(key=lambda cand: -max(weight.get(ch.knob.partition(".")[0], 0) for ch in cand))
        pointed = [c for c in candidates if any(weight.get(ch.knob.partition(".")[0]) for ch in c)]
        rest = [c for c in candidates if c not in pointed]
        for group in (pointed, rest):
            screened = self._screen(rules, group, sample, sigs, round_number, current)
            accepted = self._pick(rules, current, bad, sigs, screened, round_number)
            if accepted is not None:
                return accepted
        return None

    def _screen(self, rules: Rules, group: list[tuple[Change, ...]], sample: list[str],
                sigs: dict[str, tuple[str, ...]], round_number: int,
                current: dict[str, tuple[observe.Difference, ...]]) -> list[tuple[Change, ...]]:
        """The candidates that help on the sample, the most helpful first."""
        screened: list[tuple[int, int, int, tuple[Change, ...]]] = []
        whole = 0  # single changes that explain the whole sample
        apart = _score(current, sample)[2]
        for number, cand in enumerate(group, start=1):
            self.progress(f"round {round_number}: screening {number}/{len(group)} candidates on {len(sample)} cases")
            after = self.differences(set_knob(rules, cand), sample)
            gain = sum(len(sigs[c]) - len(observe.signatures(after[c])) for c in sample)
            fixed = sum(1 for c in sample if not after[c])
            closer = apart - _score(after, sample)[2]
            if gain > 0 or fixed > 0 or closer > 0:
                screened.append((fixed, gain, closer, cand))
            if fixed == len(sample) and len(cand) == 1:
                whole += 1
                if whole == BEAM:
                    # nothing screened later does better on the sample; the beam holds several,
                    # since two values of a knob can both explain it and differ elsewhere
                    break
        screened.sort(key=lambda item: (-item[0], -item[1], -item[2], len(item[3])))
        return [cand for _fixed, _gain, _closer, cand in screened]

    def _pick(self, rules: Rules, current: dict[str, tuple[observe.Difference, ...]], bad: list[str],
              sigs: dict[str, tuple[str, ...]], screened: list[tuple[Change, ...]],
              round_number: int) -> tuple[tuple[Change, ...], dict[str, tuple[observe.Difference, ...]], Accepted] | None:
        """Of the first BEAM screened candidates, the one with the fewest mismatches over every
        case (the differing ones and those that matched), if it lowers them: two candidates
        can fix the same differing cases while only one keeps the matching ones."""
        before = _score(current, bad)
        ranked = []
        for cand in screened[:BEAM]:
            new_rules = set_knob(rules, cand)
            if not self.consistent(new_rules):
                continue
            self.progress(f"round {round_number}: evaluating {' '.join(ch.text() for ch in cand)} on {len(bad)} cases")
            after = self.differences(new_rules, bad)
            score = _score(after, bad)
            if score < before:
                ranked.append((score, cand, after))
        good = [c for c in current if c not in bad]
        lowest = _score(current, list(current))  # a candidate must go below this over every case
        best: tuple[tuple[Change, ...], dict[str, tuple[observe.Difference, ...]]] | None = None
        for _score_after, cand, after in sorted(ranked, key=lambda item: (item[0], len(item[1]))):
            self.progress(f"round {round_number}: checking {' '.join(ch.text() for ch in cand)} on {len(good)} matching cases")
            merged = {**current, **after, **self.differences(set_knob(rules, cand), good)}
            score = _score(merged, list(merged))
            if score >= lowest:
                continue
            lowest, best = score, (cand, merged)
            if not any(merged[c] for c in good):
                break  # breaks no matching case: the candidates after it do no better on the differing ones
        if best is None:
            return None
        cand, merged = best
        fixed_ids = [c for c in bad if not merged[c]]
        improved = [c for c in bad if merged[c] and len(observe.signatures(merged[c])) < len(sigs[c])]
        example = (fixed_ids or improved or bad)[0]
        return cand, merged, Accepted(cand, len(fixed_ids), len(improved), example)


def _merged(accepted: list[Accepted], record: Accepted) -> list[Accepted]:
    """The accepted changes with a new one; a knob changed again (another value that explains
    more) keeps one record, holding the evidence of both rounds and the first example."""
    knobs = {change.knob for change in record.changes}
    earlier = [a for a in accepted if knobs & {change.knob for change in a.changes}]
    if not earlier:
        return [*accepted, record]
    values = {change.knob: change for a in earlier for change in a.changes}
    values.update({change.knob: change for change in record.changes})
    merged = Accepted(tuple(values.values()), record.cases_fixed + sum(a.cases_fixed for a in earlier),
                      record.cases_improved + sum(a.cases_improved for a in earlier), earlier[0].example)
    return [a for a in accepted if a not in earlier] + [merged]


def _score(records: dict[str, tuple[observe.Difference, ...]], ids: Sequence[str]) -> tuple[int, int, int]:
    """(cases that differ, distinct signatures summed over cases, values that differ): lower
    is better. The values break ties: of two knobs that change the same deltas, each alone
    leaves the signature ("deal_scored differs in deltas") but one of them sets some right."""
    return (sum(1 for c in ids if records[c]), sum(len(observe.signatures(records[c])) for c in ids),
            sum(_values_apart(d.expected, d.actual) for c in ids for d in records[c]))


def _values_apart(expected: Any, actual: Any) -> int:
    """How many plain values differ between two replies or states, field by field."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return sum(_values_apart(expected.get(k), actual.get(k)) for k in set(expected) | set(actual))
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)) and len(expected) == len(actual):
        return sum(_values_apart(e, a) for e, a in zip(expected, actual))
    return 0 if expected == actual else 1


def _sample(sigs: dict[str, tuple[str, ...]]) -> list[str]:
    """One case for each signature, the commonest signatures first, at most SAMPLE cases."""
    count: dict[str, int] = {}
    for case_sigs in sigs.values():
        for s in case_sigs:
            count[s] = count.get(s, 0) + 1
    chosen: list[str] = []
    for signature in sorted(count, key=lambda s: -count[s]):
        case = next(c for c, found in sigs.items() if signature in found)
        if case not in chosen:
            chosen.append(case)
        if len(chosen) == SAMPLE:
            break
    return chosen


# --- output ------------------------------------------------------------------------------

def changed_knobs(profile: variants.ResolvedProfile, rules: Rules) -> list[str]:
    return [f"{s}.{k}" for s, knobs in rules.items() for k in knobs
            if variants.thaw(profile.rules[s][k]) != knobs[k]]


def house_yaml(profile: variants.ResolvedProfile, rules: Rules, accepted: Sequence[Accepted], name: str,
               implementation: str) -> str:
    """A house profile extending P's base profile: every knob that differs from the base,
    with the evidence as its ruling (P's own options are carried over as they are)."""
    evidence = {ch.knob: record for record in accepted for ch in record.changes}
    base = variants.resolve(profile.profile)
    body: dict[str, dict[str, Any]] = {}
    for knob in changed_knobs(base, rules):
        section, _, key = knob.partition(".")
        record = evidence.get(knob)
        if record is not None:
            closer = f" (and comes closer on {record.cases_improved} more)" if record.cases_improved else ""
            ruling = (f"thousand fit: with this value the reference reproduces {implementation} on "
                      f"{record.cases_fixed} more case(s) of {profile.name}{closer}, e.g. {record.example}.")
        else:
            ruling = f"Carried over from {profile.name}, which sets it ({profile.provenance[knob]['from']})."
        body.setdefault(section, {})[key] = {"value": rules[section][key], "ruling": ruling}
    document = {
        "profile": name, "title": f"{profile.name} as {implementation} plays it",
        "status": "draft", "summary": f"Fitted by thousand fit: the rules under which the reference "
                                      f"plays like {implementation} on the corpus cases of {profile.name}.",
        "extends": profile.profile, "sources": {}, "rules": body,
    }
    return str(yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100))


def residual_groups(residual: dict[str, tuple[observe.Difference, ...]]) -> list[tuple[str, list[str], observe.Difference]]:
    """(signature, case ids, first example), the largest group first. A case counts under its
    first difference only: what follows in the same case is most often a consequence."""
    groups: dict[str, tuple[list[str], observe.Difference]] = {}
    for case_id, diffs in residual.items():
        if diffs:
            groups.setdefault(diffs[0].signature, ([], diffs[0]))[0].append(case_id)
    return sorted(((s, ids, ex) for s, (ids, ex) in groups.items()), key=lambda g: (-len(g[1]), g[0]))


def describe_groups(residual: dict[str, tuple[observe.Difference, ...]], exercised: dict[str, tuple[str, ...]],
                    limit: int = 12) -> list[str]:
    """The residual as ``thousand verify`` prints root causes: the same signatures and knobs,
    each case judged by its first difference, grouped by the knob their checks share."""
    failures = [diagnosis.Failure(case_id, observe.findings(diffs), exercised=exercised.get(case_id, ()))
                for case_id, diffs in residual.items() if diffs]
    causes = diagnosis.groups(failures)
    out = io.StringIO()
    reports.print_groups(causes, len(failures), out, shown=limit, further=diagnosis.further(failures, causes))
    return out.getvalue().rstrip("\n").splitlines()


# --- the command -------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fit", help="find the knob values under which the reference plays like an implementation",
        description="Observe an implementation on the corpus cases of a profile, then search knob values "
                    "from that profile for the rules under which the reference reproduces it best. Prints "
                    "a house profile (extends the profile) and the differences no knob explains. Exit 0 when the "
                    "fitted rules explain every case, 1 when differences are left, 2 on usage errors, 3 when "
                    "the fitted profile does not validate (a bug here), 4 when the implementation could not start "
                    "or broke the protocol on every case (no profile written), 129/130/143 when stopped by "
                    "SIGHUP/SIGINT/SIGTERM.")
    parser.add_argument("--profile", required=True, metavar="P", help="the profile to start from ('name' or 'name+option')")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="processes of each side run in parallel")
    parser.add_argument("--output", type=Path, metavar="FILE.yaml", help="write the fitted house profile here")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help=f"seconds to wait for each reply (default 10, at most {MAX_TIMEOUT})")
    parser.add_argument("-k", action="append", default=[], dest="include", metavar="GLOB",
                        help="only case ids matching this glob; repeatable")
    parser.add_argument("--cases", action="append", type=Path, default=[], metavar="DIR",
                        help="transcript folder (default: conformance/cases and conformance/generated)")
    parser.add_argument("impl_command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="the implementation (after --)")
    parser.set_defaults(func=main)


def command_of(args: argparse.Namespace, tool: str, default: Sequence[str] = ()) -> list[str] | None:
    """The implementation's command after ``--`` (or ``default``), or None (said on stderr)
    on a usage error in it or in ``--jobs`` / ``--timeout``."""
    command = list(args.impl_command)
    if command and command[0] == "--":
        command = command[1:]
    command = command or list(default)
    if not command:
        print(f"thousand {tool}: give the implementation's command after --", file=sys.stderr)
        return None
    try:  # thousand verify --rules hands these over as text (verify checks its options itself)
        args.jobs, args.timeout = int(args.jobs), float(args.timeout)
    except ValueError:
        args.jobs = 0
    if not 1 <= args.jobs <= 256 or not math.isfinite(args.timeout) or not 0 < args.timeout <= MAX_TIMEOUT:
        print(f"thousand {tool}: --jobs must be a whole number from 1 to 256 and --timeout more than 0 and at most "
              f"{MAX_TIMEOUT} seconds", file=sys.stderr)
        return None
    return command


def resolved_option(name: str, tool: str, option: str) -> variants.ResolvedProfile | None:
    """The rules an option names, or None with the reason on stderr (a usage error)."""
    try:
        return variants.resolve(name)
    except variants.ProfileError as exc:
        print(f"thousand {tool}: {option}: {exc}", file=sys.stderr)
        return None


def cases_for(names: set[str], roots: Sequence[Path], include: Sequence[str] = ()) -> list[Transcript]:
    """The valid transcripts that list one of these profile names (case bugs are left out).

    A file whose one-line ``profiles:`` names none of them is not loaded at all: reading
    and validating the whole corpus would cost more than a fit of one profile."""
    found = []
    for root in roots or [CASES_DIR, GENERATED_DIR]:
        for path in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
            listed = _listed_profiles(path)
            if listed is not None and not names & listed:
                continue
            try:
                case = load(path, root)
            except TranscriptError:
                continue
            if names & set(case.profiles) and (not include or any(fnmatch.fnmatchcase(case.id, p) for p in include)):
                found.append(case)
    return found


def _listed_profiles(path: Path) -> set[str] | None:
    """The profiles of a transcript's one-line ``profiles: [...]``, or None when not written so."""
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("profiles:"):
                    value = yaml.safe_load(line)
                    listed = value.get("profiles") if isinstance(value, dict) else None
                    return {str(p) for p in listed} if isinstance(listed, list) else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return None


def main(args: argparse.Namespace) -> int:
    """``thousand fit``; SIGINT, SIGTERM and SIGHUP stop it with one line (no fitted profile)."""
    saved = process.trap_signals()
    try:
        return _fit(args)
    except process.Interrupted as exc:
        clear_progress()
        print(f"thousand fit: stopped by {exc.name}; no fitted profile written", file=sys.stderr)
        return 128 + exc.signum
    finally:
        process.restore_signals(saved)


def _fit(args: argparse.Namespace) -> int:
    command = command_of(args, "fit")
    if command is None:
        return 2
    name = args.output.stem if args.output else "fitted"
    if args.output and (args.output.suffix != ".yaml" or not _valid_name(name)):
        print("thousand fit: --output must be NAME.yaml, NAME of lowercase letters, digits and hyphens", file=sys.stderr)
        return 2
    problem = reports.folder_problem(args.output) if args.output else None
    if problem:
        print(f"thousand fit: --output {problem}", file=sys.stderr)
        return 2
    profile = resolved_option(args.profile, "fit", "--profile")
    if profile is None:
        return 2
    cases = cases_for({profile.name}, args.cases, args.include)
    if not cases:
        print(f"thousand fit: no case lists profile {profile.name!r}", file=sys.stderr)
        return 2
    progress = terminal_progress("fit")
    fitter = Fitter(profile.name, cases, command, args.jobs, args.timeout, progress)
    try:
        with process.supervised():
            try:
                fitter.observe_implementation()
            except process.CannotStart as exc:
                clear_progress()
                print(f"thousand fit: the implementation could not start: {printable(str(exc))}; "
                      "no fitted profile written", file=sys.stderr)
                return reports.EXIT_CANNOT_START
            observed = [r for r in fitter.impl_records.values() if not r.broken]
            if not observed:
                clear_progress()
                first = next(iter(fitter.impl_records.values())).ended
                print(f"thousand fit: the implementation broke the protocol on every case ({printable(first)[:500]}); "
                      "no fitted profile written", file=sys.stderr)
                return reports.EXIT_CANNOT_START
            result = fitter.run()
    finally:
        fitter.close()
        clear_progress()
    implementation = _implementation_name(fitter)
    text = house_yaml(profile, result.rules, result.accepted, name, implementation)
    problem = _invalid_fitted(text, name)
    if problem:  # a bug here, never the implementation's: said, and nothing written
        print(f"thousand fit: the fitted profile does not validate ({problem}); not written", file=sys.stderr)
        return reports.EXIT_INTERNAL
    print(report(result, text))
    if args.output:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"thousand fit: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    broken = [r for r in fitter.impl_records.values() if r.broken]
    return 1 if result.residual or broken else 0


def _invalid_fitted(text: str, name: str) -> str | None:
    """Why the fitted profile would not pass ``thousand validate``, or None."""
    with tempfile.TemporaryDirectory(prefix="thousand-fit-") as folder:
        path = Path(folder) / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            variants.resolve(str(path))
        except variants.ProfileError as exc:
            return str(exc).replace(folder, "")[:500]
    return None


def _valid_name(name: str) -> bool:
    import re

    return re.fullmatch(r"[a-z0-9][a-z0-9-]{0,62}", name) is not None


def _implementation_name(fitter: Fitter) -> str:
    """The name the implementation gave (or its command's last word), fit for a title: no
    control or format characters, no line breaks, at most NAME_LIMIT characters."""
    raw = fitter.implementation_name or Path(fitter.implementation[-1]).name
    cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in raw).split())
    if len(cleaned) > NAME_LIMIT:
        cleaned = cleaned[:NAME_LIMIT - 3].rstrip() + "..."
    return cleaned or "the implementation"


def report(result: FitResult, text: str) -> str:
    lines = [f"# thousand fit: {result.cases} cases of {result.profile}, {result.evaluations} reference replays, "
             f"{result.seconds:.1f} s"]
    if result.accepted:
        for record in result.accepted:
            lines.append(f"# changed {', '.join(ch.text() for ch in record.changes)}: explains {record.cases_fixed} "
                         f"case(s), e.g. {record.example}")
    else:
        lines.append("# no knob change explains any difference")
    lines.append(text.rstrip())
    if result.residual:
        lines.append(f"# residual: {len(result.residual)} case(s) differ under the fitted rules; no knob explains "
                     "them (likely bugs, or rules the schema has no knob for):")
        lines += ["# " + line for line in describe_groups(result.residual, result.exercised)]
    else:
        lines.append("# residual: none: the reference under these rules plays like the implementation on every case")
    return "\n".join(lines)
