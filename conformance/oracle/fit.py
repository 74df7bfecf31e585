"""``thousand fit``: which rules does an engine play? A house profile, and what no value it tried explains.

The implementation is observed once over the corpus cases of a profile P (keep-going: every
legal set, reply and state, see ``observe``). The reference, run as a subprocess and fed a
candidate rule set in ``match``, replays the same actions, and the two records are weighed
observation by observation (``evidence``): a rule set's score is the implementation's
observations it does not reproduce. Skipped, errored and unsupported steps are no evidence,
nor is an observation where the implementation contradicts itself (set aside for the
residual), and one downstream of a difference left proves no rule.

The differing observations are grouped by the knobs spec/diagnosis.yaml says decide them
(the bid legal set by the ceiling, the marriage condition, the maximum, the stop, the step,
the opening and the marriage values together). Each group's knobs are searched jointly on a
sample of its cases (every combination when few, a beam otherwise), with values read from
the implementation's own replies (``candidates``); a group's best change is taken when it
lowers the score over every case without breaking a matching case; when none does, an
earlier value may stand in for another knob's, and each change is tried with one earlier
change of the group put back (and one more switch or small count it makes decide). Before it reports, fit
checks that no single change of one knob to one of its values still does so (setting right
some observation not downstream of a difference left), then leaves out a change whose every
observation is downstream.
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import functools
import itertools
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeGuard

import yaml

from spec.vocabulary import EditableRuleValues as Rules  # the plain rules fit edits
from spec.vocabulary import ExitCode, ResidualVerdict
import variants
from conformance.harness import outputs, process, reports, steps
from conformance.harness.findings import Finding, Observed, RootCause
from conformance.oracle import asking, candidates, evidence, observe, residual
from conformance.oracle.policy import POLICY, Policy
from conformance.terminal import clear_progress, printable, terminal_progress
from conformance.harness.runner import MIN_TIMEOUT, REFERENCE_COMMAND
from conformance.harness.session import Declarations
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
from variants.applicability import controlling_knobs
from variants.schema import knob_entry, rule_sections

MAX_TIMEOUT = 86400  # seconds, as thousand verify caps --timeout (a larger one overflows the poll)
NAME_LIMIT = 60  # characters of the implementation's name written into the fitted profile


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
    example: str  # where one observation it fixes is: case, deal, step and what
    observations_fixed: int = 0
    observations_broken: int = 0


@dataclass
class FitResult:
    profile: str
    rules: Rules
    accepted: list[Accepted]
    residual: dict[str, tuple[Finding, ...]]  # case id -> differences left
    cases: int
    seconds: float = 0.0
    evaluations: int = 0
    exercised: dict[str, tuple[str, ...]] = field(default_factory=dict)  # case id -> the knobs it exercises
    weighed: dict[str, evidence.Evidence] = field(default_factory=dict)  # case id -> under the fitted rules
    equivalents: dict[str, list[Any]] = field(default_factory=dict)  # knob -> values that play the same on the corpus
    # knob -> changes of other knobs that, with it at the profile's value, play the same on the corpus
    in_its_place: dict[str, list[Change]] = field(default_factory=dict)
    asked: list[asking.Asked] = field(default_factory=list)  # the questions put to the implementation
    # question id -> observations of the implementation's answer that the fitted rules miss: its
    # answers contradict one another, or it plays a difference no value asked expresses
    answers_missed: dict[str, int] = field(default_factory=dict)
    # of those, question -> the residual cause its first difference has (the same finding)
    answers_known: dict[str, str] = field(default_factory=dict)
    searched_with: tuple[str, ...] = ()  # questions the last search read and played beside the corpus
    absent: frozenset[str] = frozenset()  # state fields the implementation declares absent
    events_derived: bool = False  # the implementation sends no events: both sides' are read off their states

    @property
    def unchecked(self) -> int:
        return sum(e.unchecked for e in self.weighed.values())


def set_knob(rules: Rules, changes: Sequence[Change]) -> Rules:
    new = {section: dict(knobs) for section, knobs in rules.items()}
    for change in changes:
        section, _, name = change.knob.partition(".")
        new[section][name] = change.value
    return new


_VALUES: dict[str, list[Any]] = {}


def knob_domain(knob: str, current: Any, policy: Policy | None = None) -> list[Any]:
    """The values tried for a knob: its enum or both booleans; for a number, the bundled
    profiles' values, the schema default and their neighbours (``policy``'s, the module's
    ``POLICY`` by default); null where the knob allows it."""
    policy = policy or POLICY
    if not _VALUES:
        _VALUES.update({knob: list(values) for knob, values in candidates.bundled().items()})
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
        near = {n + d for n in numbers for d in (policy.near_count if n <= policy.small_count else policy.domain_near)}
        values += sorted(v for v in near if low <= v <= high)
    if "null" in kinds:
        values.append(None)
    unique: list[Any] = []
    for value in values:
        if value not in unique and value != current:
            unique.append(value)
    return unique


def applying_knobs(profile: variants.ResolvedProfile, rules: Rules) -> list[str]:
    """The knobs that can change an outcome under these rules and have another value in
    ``knob_domain``, in schema order (the 45-variant benchmark draws its changes from these)."""
    return _knobs_with_other_values(profile, rules, knob_domain)


def searchable_knobs(profile: variants.ResolvedProfile, rules: Rules) -> list[str]:
    """The knobs that can change an outcome under these rules and have another value among
    those fit tries (``candidates.values``), in schema order. Unlike ``applying_knobs`` this
    keeps the structured knobs whose value every bundled profile shares (the marriage table):
    their candidates are built from the values, not only taken from the bundled profiles."""
    return _knobs_with_other_values(profile, rules, candidates.values)


def _knobs_with_other_values(profile: variants.ResolvedProfile, rules: Rules,
                             others: Callable[[str, Any], list[Any]]) -> list[str]:
    inert = variants.inert_knobs(replace(profile, rules=rules))
    return [f"{s}.{k}" for s, knobs in rule_sections().items() for k in knobs
            if f"{s}.{k}" not in inert and others(f"{s}.{k}", rules[s][k])]


# --- the search --------------------------------------------------------------------------

Score = tuple[int, int]  # (observations the rules fail to reproduce, plain values apart in them)


@dataclass(frozen=True)
class Group:
    """Differing observations decided by the same knobs (spec/diagnosis.yaml)."""

    knobs: tuple[str, ...]
    observations: int
    cases: tuple[str, ...]  # the cases that show them, the most telling first
    size: int  # of the sample a joint change is scored on, the first cases

    @property
    def sample(self) -> tuple[str, ...]:
        return self.cases[:self.size]


@dataclass(frozen=True)
class PhasePart:
    """The part of a group whose observations differ in one phase."""

    phase: str
    group: Group


class Fitter:
    def __init__(self, profile_name: str, cases: Sequence[Transcript], implementation: Sequence[str],
                 jobs: int = 1, timeout: float = 10.0, progress: Callable[[str], None] | None = None,
                 resolved: variants.ResolvedProfile | None = None, fallbacks: Sequence[str] = (),
                 policy: Policy | None = None) -> None:
        """``resolved``: the rules ``profile_name`` stands for when it is not a bundled name (a
        house file fuzz was given); ``fallbacks``: what a match names when the implementation's
        declared list lacks ``profile_name``; ``policy``: every tuning number (``POLICY`` by
        default, read when the fitter is made: a test may replace it)."""
        self.policy = policy or POLICY
        self.profile_name = profile_name
        self.profile = resolved or variants.resolve(profile_name)
        self.fallbacks = tuple(fallbacks)
        self.document = self.profile.to_document()  # what a replay sends, its rules replaced by the candidate's
        self._profile_rules: Rules = variants.thaw(self.profile.rules)  # the profile's own values, only read
        self.cases = list(cases)
        self.by_id = {case.id: case for case in self.cases}
        self.implementation, self.jobs, self.timeout = list(implementation), jobs, timeout
        self.progress = progress or (lambda text: None)
        self.impl_records: dict[str, observe.CaseRecord] = {}
        self.shown: dict[str, tuple[observe.CaseRecord, int]] = {}  # case id -> (evidence, unchecked steps)
        # case id -> the observations where the implementation contradicts itself: set aside
        self.contradicted: dict[str, frozenset[evidence.Key]] = {}
        self.partial = evidence.Partial()
        self.implementation_name = ""
        self.start_reply: dict[str, Any] = {}
        self.declared: Declarations | None = None  # what its start reply declares it sends less of
        self.memo: dict[tuple[str, str], evidence.Evidence] = {}
        self._by_source: dict[tuple[str, bytes], evidence.Evidence] = {}  # (case id, record source) -> its evidence
        self._sources: dict[str, set[bytes]] = {}  # case id -> the sources in _by_source: not read into records again
        self.reference = observe.Pool(REFERENCE_COMMAND, jobs, timeout, batch=True)
        self.evaluations = 0
        self.read = candidates.Readings(policy=self.policy)
        # knob -> the values the last single-change check tried for it, each alone over every
        # case: what the residual can say was tried (and nothing more)
        self.tried: dict[str, int] = {}
        self.timing: dict[str, float] = {}
        self.replays: dict[str, int] = {}  # phase -> reference replays it asked for
        self._live: dict[str, frozenset[str]] = {}
        # (rules key, group) searched with nothing found: a later pass that reaches the same
        # rules finds the same nothing, and a wide group's search can cost the whole corpus
        # fifty times over
        self._fruitless: set[tuple[str, Group]] = set()
        self.knobs = frozenset(f"{s}.{k}" for s, knobs in rule_sections().items() for k in knobs)

    def close(self) -> None:
        self.reference.close()

    # -- the evidence --

    def observe_implementation(self) -> None:
        started = time.monotonic()
        records = self._observed(self.cases)
        self.partial = evidence.Partial.read(self.start_reply.get("unsupported"), self.declared)
        self.impl_records = {record.case_id: record for record in records}
        self._by_source.clear()  # weighed against the records replaced here
        self._sources.clear()
        self._keep_shown(records)
        # one situation answered two ways in two cases: neither answer is evidence of a rule
        for case_id, keys in residual.inconsistent(self.impl_records, self.by_id).items():
            self.contradicted[case_id] = self.contradicted.get(case_id, frozenset()) | keys
        self.read = candidates.readings((cut for cut, _after in self.shown.values()), self.policy)
        self.timing["observing the implementation"] = time.monotonic() - started

    def add_cases(self, cases: Sequence[Transcript]) -> None:
        """Observe the implementation on more cases (asking's questions) and weigh them from now
        on; the readings of the search stay those of the corpus."""
        fresh = [case for case in cases if case.id not in self.by_id]
        self.cases.extend(fresh)
        self.by_id.update((case.id, case) for case in fresh)
        records = self._observed(fresh)
        self.impl_records.update((record.case_id, record) for record in records)
        self._keep_shown(records)

    def _observed(self, cases: Sequence[Transcript]) -> list[observe.CaseRecord]:
        pool = observe.Pool(self.implementation, self.jobs, self.timeout, fallbacks=self.fallbacks)
        document = self.profile.to_document()
        done = [0]

        def tick() -> None:
            done[0] += 1
            self.progress(f"observing the implementation: {done[0]}/{len(cases)} cases")

        try:
            records = pool.map(cases, lambda o, c: o.observe(c, self.profile_name, document), tick)
        finally:
            first = next((o for o in pool.observers if o.name or o.offered is not None), pool.observers[0])
            self.implementation_name = self.implementation_name or first.name
            self.start_reply = self.start_reply or dict(getattr(first, "start_reply", None) or {})
            self.declared = self.declared or first.declarations
            pool.close()
        return list(records)

    def _keep_shown(self, records: Sequence[observe.CaseRecord]) -> None:
        for record in records:
            cut, after = evidence.shown(record, self.partial)
            after += sum(1 for step in cut.steps if step.step and step.legal is None)  # a legal set it skipped
            steps = evidence.count_steps(self.by_id[record.case_id].deals)
            self.shown[record.case_id] = cut, after + evidence.transcript_steps(steps, cut) if cut.broken else after
            self.contradicted[record.case_id] = evidence.contradicted(record)

    def weigh(self, rules: Rules, case_ids: Sequence[str]) -> dict[str, evidence.Evidence]:
        """Case id -> the evidence of the reference under ``rules`` against the implementation."""
        key = _rules_key(rules)
        todo = [case_id for case_id in case_ids if (key, case_id) not in self.memo]
        if todo:
            started = time.monotonic()
            document = {**self.document, "rules": rules}
            records = self.reference.replay(todo, lambda c: observe.Replay(self.by_id[c], self.profile_name, document,
                                                                           self._sources.get(c, ()), self.shown[c][0]))
            self.evaluations += len(todo)
            for case_id, record in zip(todo, records):
                self.memo[key, case_id] = self._weighed(case_id, record)
            self.timing["reference replays"] = self.timing.get("reference replays", 0.0) + time.monotonic() - started
        return {case_id: self.memo[key, case_id] for case_id in case_ids}

    def _weighed(self, case_id: str, record: observe.CaseRecord) -> evidence.Evidence:
        """The evidence of one replay: that of an earlier replay of the case from the same
        reply (``CaseRecord.source``) when there is one. Most changes tried leave most cases
        alone, and their replays then repeat a record already weighed (7 in 10 of them on
        the twelve-changes stand-in): the reference does not even read such a reply into
        steps (``observe.KNOWN``)."""
        known = self._by_source.get((case_id, record.source)) if record.source else None
        if known is not None:
            return known
        cut, unchecked = self.shown[case_id]
        weighed = evidence.weigh(record, cut, self.partial, unchecked, self.contradicted.get(case_id, frozenset()))
        if record.source:
            self._by_source[case_id, record.source] = weighed
            self._sources.setdefault(case_id, set()).add(record.source)
        return weighed

    def weighed_already(self, rules: Rules, case_ids: Sequence[str]) -> dict[str, evidence.Evidence]:
        """Case id -> the evidence ``weigh`` already has under ``rules``, for those of the cases
        it has replayed (none is replayed here)."""
        key = _rules_key(rules)
        return {case_id: self.memo[key, case_id] for case_id in case_ids if (key, case_id) in self.memo}

    def differences(self, rules: Rules, case_ids: Sequence[str]) -> dict[str, tuple[Finding, ...]]:
        """Case id -> the differences between the reference under ``rules`` and the implementation."""
        return {case_id: e.differing for case_id, e in self.weigh(rules, case_ids).items()}

    def score(self, rules: Rules, case_ids: Sequence[str]) -> Score:
        return _score(self.weigh(rules, case_ids).values())

    def consistent(self, rules: Rules) -> bool:
        """Do these rules pass the cross-knob checks of ``validate``?"""
        from variants.checks import CONSISTENCY_CHECKS

        return all(check(rules) is None for check in CONSISTENCY_CHECKS)

    def made_consistent(self, rules: Rules, cand: tuple[Change, ...]) -> list[tuple[Change, ...]]:
        """``cand`` when the rules it makes pass the cross-knob checks; else ``cand`` with one
        more knob the failing check names moved to each of its values that passes (at most
        ``Policy.repairs``): an opening bid of 155 under a talon shown from 130 needs the talon shown
        otherwise, and which way only the evidence tells."""
        from variants.checks import CONSISTENCY_CHECKS

        new_rules = set_knob(rules, cand)
        failing = next((found for check in CONSISTENCY_CHECKS if (found := check(new_rules)) is not None), None)
        if failing is None:
            return [cand]
        moved = {c.knob for c in cand}
        repaired: list[tuple[Change, ...]] = []
        for knob in failing[0]:
            if knob in moved or knob not in self.knobs:
                continue
            for value in self._values(knob, new_rules):
                whole = (*cand, Change(knob, value))
                if self.consistent(set_knob(rules, whole)):
                    repaired.append(whole)
                    if len(repaired) >= self.policy.repairs:
                        return repaired
        return repaired

    def live(self, rules: Rules) -> frozenset[str]:
        """The knobs that can change an outcome under these rules."""
        key = _rules_key(rules)
        if key not in self._live:
            self._live[key] = frozenset(searchable_knobs(self.profile, rules))
        return self._live[key]

    # -- the search --

    def run(self, start: FitResult | None = None, focus: Sequence[str] = ()) -> FitResult:
        """The search over every case, from the profile's rules, or from ``start``'s rules and
        changes (a search again with more cases: what it found stays unless the cases undo it).
        ``focus``: the cases whose differences the groups are made of (every case's when empty);
        a change is still judged over every case. A search again is for what the answers show:
        the corpus's own differences were searched already, and a mutant's score group, searched
        again from the rules the answers kept, cost minutes for nothing."""
        started = time.monotonic()
        if not self.impl_records:
            self.observe_implementation()
        ids = [case.id for case in self.cases]
        rules: Rules = start.rules if start else variants.thaw(self.profile.rules)
        accepted: list[Accepted] = list(start.accepted) if start else []
        searching = self._phase("")
        for _pass in range(self.policy.passes):
            rules, found = self._pass(rules, ids, accepted, list(focus) or ids)
            if not found:
                break
        pruning = self._phase("joint search", searching)
        rules, accepted[:] = self._without_idle(rules, ids, accepted)
        checking = self._phase("leaving out idle changes", pruning)
        for _round in range(self.policy.passes):
            rules = self._stopped(rules, ids, accepted)
            # last, a change whose every observation follows a difference still left is no
            # evidence (``evidence.downstream``); once the search is over, that difference
            # stays. Taking it out can free a single change it blocked (a marriage line left
            # wrong broke a case a discard while void sets right), so the stop rule runs again
            settled, accepted[:] = self._without_idle(rules, ids, accepted, downstream=True)
            if settled == rules:
                break
            rules = settled
        closing = self._phase("single-change check", checking)
        self.weigh(rules, ids)
        seconds, evaluations = time.monotonic() - started, self.evaluations  # the search's, as reported
        equivalents = self._equivalents(rules, accepted, ids)
        in_its_place = self._in_its_place(rules, accepted, ids)
        rules, kept = _plainest(rules, accepted, equivalents)
        # the residual under the rules reported: an equal value kept instead can differ
        # downstream of what is left
        weighed = self.weigh(rules, ids)
        residual = {case_id: e.differing for case_id, e in weighed.items() if e.differs}
        result = FitResult(self.profile_name, rules, kept, residual, len(ids), seconds, evaluations,
                           {case_id: self.by_id[case_id].knobs for case_id in residual}, weighed, equivalents,
                           in_its_place, absent=self.partial.state_fields,
                           events_derived=self.partial.declared is not None and self.partial.declared.events_derived)
        self._phase("equally consistent values", closing)
        return result

    def _stopped(self, rules: Rules, ids: list[str], accepted: list[Accepted]) -> Rules:
        """The stop rule: single changes taken while one lowers the score over every case
        without breaking a matching case."""
        while True:
            step = self._single_change(rules, ids)
            if step is None:
                return rules
            rules = self._accept(rules, step, ids, accepted)
            # a change taken now can make an earlier one idle (or this one, found while an
            # earlier knob was still wrong): each must still earn its place
            rules, accepted[:] = self._without_idle(rules, ids, accepted)

    def _phase(self, name: str, since: tuple[float, int] | None = None) -> tuple[float, int]:
        """The clock and the replay count now; with ``since``, the phase ``name`` that ended
        here is recorded in ``timing`` and ``replays``."""
        now = time.monotonic(), self.evaluations
        if since is not None:
            self.timing[name] = now[0] - since[0]
            self.replays[name] = now[1] - since[1]
        return now

    def _pass(self, rules: Rules, ids: list[str], accepted: list[Accepted], focus: list[str]) -> tuple[Rules, bool]:
        """Each group of the differing observations of the ``focus`` cases searched once, the
        largest first; a group's best joint change is taken when it lowers the score over every case."""
        tried: set[tuple[str, ...]] = set()
        found = False
        while True:
            groups = [g for g in self.groups(rules, focus) if g.knobs not in tried and g.observations >= self.policy.min_group]
            if not groups:
                return rules, found
            group = groups[0]
            tried.add(group.knobs)
            self.progress(f"searching {_named(group)} ({group.observations} observations)")
            best = self._searched(rules, group, ids)
            for part in self._by_phase(rules, group, ids) if best is None else ():
                self.progress(f"searching {_named(group)} where its cases show them in the {part.phase} phase")
                best = self._searched(rules, part.group, ids)
                if best is not None:
                    break
            if best is not None:
                rules, found = self._accept(rules, best, ids, accepted), True

    def _searched(self, rules: Rules, group: Group, ids: list[str]) -> tuple[Change, ...] | None:
        """The group's best joint change over every case, by the joint search, then with a
        stand-in undone, completed, or searched again from a stand-in put back; None if none passes."""
        searched = _rules_key(rules), group
        if searched in self._fruitless:
            return None
        best = self._searching(rules, group, ids)
        if best is None:
            self._fruitless.add(searched)
        return best

    def _searching(self, rules: Rules, group: Group, ids: list[str], widened: int = 0) -> tuple[Change, ...] | None:
        """``_searched``'s search itself; ``widened``: the times its sample was widened."""
        proposed = self._joint(rules, group)
        best = self._best_over_all(rules, proposed, ids)
        if best is None:
            undone = self._undoing(rules, group, proposed)
            best = self._best_over_all(rules, undone, ids)
            # a proposed change that itself puts an earlier change back is an undoing too
            undone += [p for p in proposed if self._puts_back(rules, p)]
            if best is None:
                shown = self._shown_at_edges(rules, group, ids)
                # and the proposed changes themselves: a barrel switched on with its arrivals
                # uncapped sets the sample right and breaks wins reached by a jump over it
                completed = self._completed(rules, [*undone, *shown, *proposed], group, ids)
                best = self._best_over_all(rules, completed, ids)
                if best is None:  # a second switch: a marriage condition of 340 under a marriage
                    # ceiling needs the ceiling gone, and then the talon counted in the hand
                    best = self._best_over_all(rules, self._completed(rules, completed, group, ids), ids)
            if best is None:
                restarted = self._restarted(rules, group)
                best = self._best_over_all(rules, restarted, ids)
                if best is None:  # a change found afresh can need a switch beside it as much
                    best = self._best_over_all(rules, self._completed(rules, restarted, group, ids), ids)
        wider = self._unfooled(rules, group, proposed, ids) if best is None and widened < self.policy.widenings else None
        if wider is not None:
            self.progress(f"searching {_named(group)} again on a sample with the cases its best change broke")
            best = self._searching(rules, wider, ids, widened + 1)
        return best

    def _unfooled(self, rules: Rules, group: Group, proposed: Sequence[tuple[Change, ...]],
                  ids: list[str]) -> Group | None:
        """The group with the cases a proposed change broke (observations that matched before
        and differ under it) put into its sample, where that change set the whole sample right
        and so ended the search there; None where no such change broke a case outside the
        sample. Contracts capped at 370 for a declarer with no marriage read as a maximum of
        370, and the sample's three such cases match; over every case it breaks the holders of
        marriages, whose contracts reach 600, and only a sample with both shows no ceiling
        with a condition of 370."""
        sample = list(group.sample)
        now = self.weigh(rules, ids)
        for cand in proposed:
            moved = set_knob(rules, cand)
            if self.score(moved, sample)[0]:
                continue
            seen = self.weighed_already(moved, ids)
            broken = sorted((c for c in seen if seen[c].missed - now[c].missed and c not in sample),
                            key=lambda c: -len(seen[c].missed - now[c].missed))
            if broken:
                wider = [*sample, *broken[:self.policy.sample]]
                return Group(group.knobs, group.observations, (*wider, *(c for c in group.cases if c not in wider)),
                             len(wider))
        return None

    def _by_phase(self, rules: Rules, group: Group, ids: list[str]) -> list[PhasePart]:
        """The group's cases split by the phase its observations differ in, where its sample
        left some phase out: a score decided by fifty knobs differs after the last trick in
        many cases and after a give-up in a few, and a sample of the many never shows the
        defenders paid from the third give-up. The largest part first."""
        sampled = set(group.sample)
        phases: dict[str, collections.Counter[str]] = {}
        for case_id, found in self.weigh(rules, list(group.cases)).items():
            for d, deciding in found.deciding:
                if self._group_knobs(deciding) == group.knobs:
                    phases.setdefault(d.phase, collections.Counter())[case_id] += 1
        if len(phases) < 2:
            return []
        parts = [PhasePart(phase, Group(group.knobs, sum(count.values()), tuple(c for c, _n in count.most_common()),
                                                  self.policy.sample))
                 for phase, count in phases.items() if not set(count) <= sampled]
        return sorted(parts, key=lambda part: (-part.group.observations, part.phase))

    def _restarted(self, rules: Rules, group: Group) -> list[tuple[Change, ...]]:
        """The group's joint search run again from the rules with one earlier change of its
        knobs put back, each change found taken with that knob put back. A stand-in can hide
        what the right values would show: under a stop at 250 standing in for a maximum of
        250, the contract's ceiling switched off raises every contract to the 260 the stop
        needed beside it, and only from no stop does the maximum of 250 with no contract
        ceiling show as the engine's rule."""
        base = variants.thaw(self.profile.rules)
        found: dict[str, tuple[Change, ...]] = {}
        for knob in (k for k in changed_knobs(self.profile, rules) if k in group.knobs):
            back = Change(knob, _value_in(base, knob))
            start = set_knob(rules, [back])
            if not self.consistent(start):
                continue
            self.progress(f"searching {', '.join(group.knobs[:4])} again from {knob} put back")
            # the knobs of its section too: a switch put back makes them live again, and they are
            # what it stood in for (no dump for a dump at -165 that no case written for it shows)
            section = knob.partition(".")[0] + "."
            for cand in self._joint(start, group, frozenset(k for k in group.knobs if k.startswith(section))):
                # the knob put back, unless the search moved it again (to the value it needs beside the others)
                whole = cand if any(c.knob == knob for c in cand) else (back, *cand)
                if self.consistent(set_knob(rules, whole)):
                    found.setdefault(_key(whole), whole)
        return list(found.values())

    def _undoing(self, rules: Rules, group: Group, proposed: Sequence[tuple[Change, ...]]) -> list[tuple[Change, ...]]:
        """The proposed changes, each with one earlier change of the group's knobs put back to
        the profile's value: a value taken early can stand in for the right one of another knob
        (a marriage condition of 480 with bids before the talon capped at 200, for a condition
        of 115 under a marriage ceiling), and then the right value loses alone, while taken
        with the stand-in undone it fixes everything the two did."""
        base = variants.thaw(self.profile.rules)
        earlier = [k for k in changed_knobs(self.profile, rules) if k in group.knobs]
        found: dict[str, tuple[Change, ...]] = {}
        for cand in proposed:
            moved = {c.knob for c in cand}
            for knob in (k for k in earlier if k not in moved):
                section, _, name = knob.partition(".")
                whole = (*cand, Change(knob, base[section][name]))
                if self.consistent(set_knob(rules, whole)):
                    found.setdefault(_key(whole), whole)
        return list(found.values())

    def _puts_back(self, rules: Rules, cand: tuple[Change, ...]) -> bool:
        """Whether ``cand`` sets some knob changed so far back to the profile's value."""
        earlier = set(changed_knobs(self.profile, rules))
        return any(c.knob in earlier and self._at_profile_value(c) for c in cand)

    def _at_profile_value(self, change: Change) -> bool:
        """Whether the change sets its knob to the profile's own value."""
        return bool(change.value == _value_in(self._profile_rules, change.knob))

    def _shown_at_edges(self, rules: Rules, group: Group, ids: list[str]) -> list[tuple[Change, ...]]:
        """Single changes of the group's amount knobs to the amounts at the edges of its
        differing legal sets, for the completion step: such a value can be right and still lose
        alone. A marriage condition of 480 under a marriage ceiling caps the contracts of every
        marriage holder; with the ceiling gone too it is the engine's rule. Each is scored on the
        group's cases first, and weighed over every case (for the completion step to see what it
        broke) only when it makes some observation of theirs match."""
        sample = list(group.sample)
        now = self.weigh(rules, sample)
        shown: dict[str, list[int]] = {}
        for case_id in sample:
            for d in evidence.first_differences(now[case_id]):
                if d.kind is Observed.LEGAL and isinstance(d.expected, list) and isinstance(d.actual, list):
                    for knob in evidence.deciding_knobs(d):
                        if knob in candidates.AMOUNT_KNOBS and knob in group.knobs:
                            amounts = shown.setdefault(knob, [])
                            amounts += [n for n in candidates.edges(d.expected, d.actual) if n not in amounts]
        found: list[tuple[Change, ...]] = []
        for knob, amounts in shown.items():
            section, _, name = knob.partition(".")
            for amount in amounts:
                cand = (Change(knob, amount),)
                moved = set_knob(rules, cand)
                if amount == rules[section][name] or not self.consistent(moved):
                    continue
                after = self.weigh(moved, sample)
                if any(now[c].missed - after[c].missed for c in sample):
                    self.weigh(moved, ids)
                    found.append(cand)
        return found

    def _completed(self, rules: Rules, undone: Sequence[tuple[Change, ...]], group: Group,
                   ids: list[str]) -> list[tuple[Change, ...]]:
        """Each change with a stand-in undone, and one more switch (an enum or boolean knob, or
        a small count: ``_completing_values``) deciding an observation the change made differ,
        where that does better than the change alone on the cases it broke most and the
        group's sample: a marriage condition of 480
        also left the contract's ceiling nothing to cap, and the right condition of 115 caps
        every contract until the ceiling on the contract goes too. Only the cases the check
        over every case already replayed are looked at (no replay is spent on finding them).
        The best few, best first."""
        now = self.weigh(rules, ids)
        scored: list[tuple[Score, tuple[Change, ...]]] = []
        for cand in undone:
            moved_rules = set_knob(rules, cand)
            seen = self.weighed_already(moved_rules, ids)
            worse = sorted((c for c in seen if seen[c].missed - now[c].missed),
                           key=lambda c: -len(seen[c].missed - now[c].missed))
            if not worse:
                continue
            sample = list(dict.fromkeys([*worse[:self.policy.sample], *group.sample]))
            alone = self.score(moved_rules, sample)
            # a knob the change only puts back may take a completing value instead: the search
            # from a stand-in put back finds what the other knob must be, not what it needs beside it
            moved = {c.knob for c in cand if not self._at_profile_value(c)}
            live = self.live(moved_rules)
            deciding: list[str] = []
            for case_id in worse[:self.policy.sample]:
                for d, knobs in seen[case_id].deciding:
                    if evidence.key_of(d) in now[case_id].missed:
                        continue  # it differed before: the change did not make it differ
                    for knob in knobs:
                        if knob in self.knobs and knob not in moved and knob not in deciding and knob in live:
                            deciding.append(knob)
            for knob in deciding:
                for value in [*self._completing_values(knob, moved_rules), *self._moved_from(rules, cand, knob),
                              *_ceilings_kept(rules, cand, knob), *self._table_over(rules, cand, knob)]:
                    whole = (*(c for c in cand if c.knob != knob), Change(knob, value))
                    for full in [whole, *self._with_numbers_on(rules, whole)]:
                        if self.consistent(set_knob(rules, full)):
                            self.progress(f"  completing {' '.join(c.text() for c in full)}")
                            score = self.score(set_knob(rules, full), sample)
                            if score < alone:
                                scored.append((score, full))
        return [c for _s, c in sorted(scored, key=_ranking)[:self.policy.over_all]]

    def _with_numbers_on(self, rules: Rules, changes: tuple[Change, ...]) -> list[tuple[Change, ...]]:
        """``changes`` with each number their last change switches on set to its first
        readings: a lock on the defenders switched on does nothing from the profile's 800
        on scores of 100 to 200, and the line of 115 the scores show is the rule."""
        if _numeric(changes[-1].value):
            return []
        after = set_knob(rules, changes)
        return [(*changes, Change(knob, value)) for knob in self._switched_on(rules, changes, sorted(self.knobs))
                for value in self._values(knob, after)[:self.policy.carried]]

    def _table_over(self, rules: Rules, changes: tuple[Change, ...], knob: str) -> list[dict[str, Any]]:
        """For the marriage table beside a new marriage condition, the table the holders'
        bids show over that condition (``Readings.bounded_table``): with the condition moved
        from 120 to 100, a hearts holder offered 190 and refused 200 holds 90 to 99, where
        the table read over 120 said 70 to 79."""
        if knob != "marriages.values" or not any(c.knob == "auction.marriage_needed_above" for c in changes):
            return []
        table = self._read_table(rules, changes)
        return [table] if table is not None else []

    def _read_table(self, rules: Rules, changes: tuple[Change, ...]) -> dict[str, Any] | None:
        """The table the holders' bids show over the marriage condition of ``changes`` (else
        of ``rules``), nearest the rules' table; None where none is read."""
        condition = next((c.value for c in changes if c.knob == "auction.marriage_needed_above"),
                         _value_in(rules, "auction.marriage_needed_above"))
        if not _numeric(condition):
            return None
        return self.read.bounded_table(_value_in(rules, "marriages.values"), condition)

    def _completing_values(self, knob: str, rules: Rules) -> list[Any]:
        """The values a completing change tries: a switch's every value, and of a number only
        the small counts. Half the bid paid to the defenders takes every give-up until they
        are paid only from the third, a count that alone changed nothing while nothing was
        paid; amounts read from the replies would multiply the replays for little."""
        values = self._values(knob, rules)
        if "integer" in candidates.kinds(knob):
            return [v for v in values if _numeric(v) and v <= self.policy.small_count]
        return values

    def groups(self, rules: Rules, ids: Sequence[str]) -> list[Group]:
        """The differing observations grouped by their deciding knobs (those live under the
        rules, or switched on by a knob of the same group), the largest group first."""
        observations: dict[tuple[str, ...], collections.Counter[str]] = {}
        for case_id, found in self.weigh(rules, ids).items():
            for _d, deciding in found.deciding:
                knobs = self._group_knobs(deciding)
                if knobs:
                    observations.setdefault(knobs, collections.Counter())[case_id] += 1
        groups = [Group(knobs, sum(count.values()), tuple(c for c, _n in count.most_common()), self.policy.sample)
                  for knobs, count in observations.items()]
        return sorted(groups, key=lambda g: (-g.observations, g.knobs))

    def _group_knobs(self, deciding: Sequence[str]) -> tuple[str, ...]:
        """The knobs of the group an observation with these deciding knobs belongs to."""
        return tuple(k for k in deciding if k in self.knobs)

    def _values(self, knob: str, rules: Rules) -> list[Any]:
        section, _, name = knob.partition(".")
        return candidates.values(knob, rules[section][name], self.read)

    def causes(self, result: FitResult) -> list[RootCause]:
        """The residual's causes, each consistent one the residual would call a rule the schema
        has no knob for first searched in its switches, alone and in pairs (``paired``): one that
        such values reproduce is said so instead (fit's joint search reaches only some pairs).
        One that a number or a table decides stays open (``ResidualVerdict.UNTRIED``): fit
        tried some of its values, never all."""
        found = residual.causes(result.weighed, self.impl_records, result.exercised, self.profile_name, self.tried,
                                self.by_id)
        checked = 0
        for index, cause in enumerate(found):
            if cause.verdict != ResidualVerdict.NO_KNOB or checked >= self.policy.pair_causes:
                continue
            checked += 1
            self.progress(f"searching pairs of switches for {cause.signature}")
            pair = self.paired(result.rules, cause)
            if pair is not None:
                changes, fixed = pair
                found[index] = replace(cause, verdict=ResidualVerdict.PAIRED, why=(
                    f"{' with '.join(c.text() for c in changes)} reproduces {fixed} more observation(s) of its cases "
                    "and leaves its difference in none; fit did not adopt it (over every case it breaks others, "
                    "or the joint search never reached it)"))
            else:
                found[index] = replace(cause, why=cause.why + f"; {self.pairs_tried} change(s) of one or two of its "
                                                              "switches tried on its cases reproduce it in none")
        # every cause left with no knob, searched in pairs or past their budget alike: where a
        # number or a table decides it, "the schema has no knob for it" would claim more than was tried
        for index, cause in enumerate(found):
            untried = self._untried(result.rules, cause.knobs) if cause.verdict == ResidualVerdict.NO_KNOB else []
            if untried:
                found[index] = replace(cause, verdict=ResidualVerdict.UNTRIED, why=cause.why + (
                    f"; but {', '.join(untried)} take(s) numbers or tables of which fit tried only those the "
                    "observations show: your engine's own value may be one it never tried (thousand verify --rules "
                    "with that value tells)"))
        return found

    def _untried(self, rules: Rules, knobs: Sequence[str]) -> list[str]:
        """The knobs among ``knobs`` live under ``rules`` whose values fit cannot all try: a
        number or a table, not a switch (an enum or a truth value, whose every value is tried)."""
        live = self.live(rules)
        return [k for k in knobs if k in live and not self._switch(k, rules)]

    pairs_tried = 0  # rule sets the last ``paired`` tried
    explain_spent = False  # the last ``explaining`` stopped at its budget

    def paired(self, rules: Rules, cause: RootCause) -> tuple[tuple[Change, ...], int] | None:
        """One switch of a cause's knobs, or two changed together, that set its cases right where
        its difference shows: fewer observations missed over them, its signature in none of their
        findings and no new one among them. (fit's stop rule tries each single change too, but over every case, where
        it may break others.) Bounded by the policy's ``pair_switches`` switches, ``pair_budget`` rule sets, ``pair_cases``
        cases."""
        ids = [c for c in cause.cases if c in self.by_id][:self.policy.pair_cases]
        switches = [k for k in cause.knobs if k in self.knobs and self._switch(k, rules)][:self.policy.pair_switches]
        now = self.weigh(rules, ids)
        before = sum(len(e.missed) for e in now.values())
        # a change that trades its difference for another (the duty to beat switched off where an
        # engine skips it only on trump leads: the plain leads then differ) reproduces nothing
        allowed = {f.signature for e in now.values() for f in observe.findings(e.differing)} - {cause.signature}
        self.pairs_tried = 0
        singles = [(Change(k, v),) for k in switches for v in self._others(k, rules)]
        pairs = [(Change(k, a), Change(m, b)) for k, m in itertools.combinations(switches, 2)
                 for a in self._others(k, rules) for b in self._others(m, rules)]
        for changes in [*singles, *pairs]:
            new_rules = set_knob(rules, changes)
            if not self.consistent(new_rules):
                continue
            if self.pairs_tried >= self.policy.pair_budget:
                return None
            self.pairs_tried += 1
            after = self.weigh(new_rules, ids)
            missed = sum(len(e.missed) for e in after.values())
            shown = {f.signature for e in after.values() for f in observe.findings(e.differing)}
            if missed < before and shown <= allowed:
                return changes, before - missed
        return None

    def explaining(self, rules: Rules, case_ids: Sequence[str], elsewhere: Sequence[Transcript]) -> tuple[Change, ...] | None:
        """A value of one knob, or values of two, under which the reference plays ``case_ids``
        exactly as the implementation did (no observation missed) and misses none of its
        observations that ``rules`` play right over the ``elsewhere`` cases that exercise the
        changed knobs (a trade, hearts' marriage right and diamonds' now wrong, is no rule); None when none does within the policy's ``explain_budget`` rule sets. One deal is thin evidence:
        a declarer refused a give-up on it is also what "no give-ups at all" plays, which the
        cases of the give-up knobs contradict. Each value alone first, then each of the
        ``Policy.explain_nearer`` values that alone missed fewest (and fewer than ``rules``) with every
        other value: a rule that two knobs write (no cap on a defender, and a defender who may
        then win) comes nearer by its first knob alone."""
        def missed(changes: tuple[Change, ...], ids: Sequence[str]) -> int:
            return sum(len(e.missed) for e in self.weigh(set_knob(rules, changes), ids).values())

        def holds(changes: tuple[Change, ...]) -> bool:
            moved = {c.knob for c in changes}
            chosen = [case for case in elsewhere if moved & set(case.knobs)]
            self.add_cases(chosen)  # the implementation observed on them once, when first needed
            ids = [case.id for case in chosen]
            now, then = self.weigh(set_knob(rules, changes), ids), self.weigh(rules, ids)
            return bool(ids) and all(now[c].missed <= then[c].missed for c in ids)  # no case: nothing said

        before = missed((), case_ids)
        singles = [(Change(k, v),) for k in sorted(self.knobs) for v in self._others(k, rules)]
        self.explain_spent = False
        budget = iter(range(self.policy.explain_budget))
        nearer: list[tuple[int, tuple[Change, ...]]] = []
        for single in singles:
            for changes in self.made_consistent(rules, single):
                if next(budget, None) is None:
                    self.explain_spent = True
                    return None
                now = missed(changes, case_ids)
                if now == 0 and holds(changes):
                    return changes
                if 0 < now < before:
                    nearer.append((now, changes))
        for _now, first in sorted(nearer, key=lambda item: item[0])[:self.policy.explain_nearer]:
            moved = {c.knob for c in first}
            for single in (s for s in singles if s[0].knob not in moved):
                for changes in self.made_consistent(rules, (*first, *single)):
                    if next(budget, None) is None:
                        self.explain_spent = True
                        return None
                    if missed(changes, case_ids) == 0 and holds(changes):
                        return changes
        return None

    def _switch(self, knob: str, rules: Rules) -> bool:
        """An enum or boolean knob: every value it takes is a word or a truth value."""
        return all(isinstance(v, (bool, str)) for v in self._values(knob, rules))

    def _others(self, knob: str, rules: Rules) -> list[Any]:
        section, _, name = knob.partition(".")
        return [v for v in self._values(knob, rules) if v != rules[section][name]]

    def _joint(self, rules: Rules, group: Group, also: frozenset[str] = frozenset()) -> list[tuple[Change, ...]]:
        """Joint changes of the group's knobs that lower the score on its sample, best first:
        every combination where the product of the value lists is small, a beam otherwise.
        ``also``: knobs searched besides those its cases exercise. The amounts are read afresh
        from the sample alone: a dump at -165 shows once among the thousands of numbers earlier
        searches read, and a marriage condition of 340 that the contracts show once the
        auction is right is crowded out by the 330 the auctions showed under earlier rules."""
        sample = list(group.sample)
        self._read_afresh(rules)
        for d in (d for e in self.weigh(rules, sample).values() for d in e.differing):
            self.read.add_difference(d)
        base = self.score(rules, sample)
        knobs = self._suspects(group, sample, also)
        if len(knobs) > 1:
            # a knob only fit builds values for (the marriage table, whose one value every bundled
            # profile shares) is searched where it alone decides (a marriage's points) and by the
            # stop rule: in a wide group its built values would crowd out the coupled knobs
            knobs = [k for k in knobs if knob_domain(k, rules[k.partition(".")[0]][k.partition(".")[2]], self.policy)] or knobs
        domains = [self._values(k, rules) for k in knobs]
        scored: list[tuple[Score, tuple[Change, ...]]] = []
        if all(k in self.live(rules) for k in knobs) and math.prod(len(d) + 1 for d in domains) <= self.policy.exhaustive:
            for combination in itertools.product(*[[_KEEP, *d] for d in domains]):
                cand = tuple(Change(k, v) for k, v in zip(knobs, combination) if v is not _KEEP)
                for whole in self.made_consistent(rules, cand) if cand else ():
                    scored.append((self.score(set_knob(rules, whole), sample), whole))
        else:
            scored = self._beam(rules, group, knobs, sample)
        if "marriages.values" in group.knobs and "marriages.values" not in knobs:
            scored += self._with_read_table(rules, scored, sample)
        improving = sorted(((s, c) for s, c in scored if s < base), key=_ranking)
        return [c for _s, c in _with_ties(improving, self.policy.over_all, self.policy.tied)]

    def _read_afresh(self, rules: Rules) -> None:
        """Forget what was read from differences; read next against ``rules``' marriage table,
        marriage condition and stop (``Readings.fresh``)."""
        auction = rules["auction"]
        self.read.fresh(rules["marriages"]["values"], auction["marriage_needed_above"], auction["stop_at"])

    def _with_read_table(self, rules: Rules, scored: list[tuple[Score, tuple[Change, ...]]],
                         sample: list[str]) -> list[tuple[Score, tuple[Change, ...]]]:
        """The best joint changes with the marriage table the holders' bids show over their
        condition (``Readings.bounded_table``) in place of a change of the ceiling. The wide
        search leaves the table out (its built values would crowd out the coupled knobs), and
        no ceiling then stands in for it: a stop at 180 with every holder offered 180 reads as
        no ceiling, where a hearts holder refused 200 as above its ceiling shows a table."""
        found: list[tuple[Score, tuple[Change, ...]]] = []
        for _score, cand in sorted(scored, key=_ranking)[:self.policy.over_all]:
            kept = tuple(c for c in cand if c.knob not in ("auction.ceiling", "marriages.values"))
            table = self._read_table(rules, kept)
            whole = (*kept, Change("marriages.values", table))
            if table is not None and self.consistent(set_knob(rules, whole)):
                self.progress(f"  with the table read: {' '.join(c.text() for c in whole)}")
                found.append((self.score(set_knob(rules, whole), sample), whole))
        return found

    def _suspects(self, group: Group, sample: Sequence[str], also: frozenset[str] = frozenset()) -> list[str]:
        """The group's knobs to search: all of them when few; else those the sample's cases are
        known to exercise (their ``knobs``: a change of each alone changes the case), which
        keeps a score difference, decided by some forty knobs, to the few its cases test. There
        the knobs named for an event type only one side sent (``Readings.named``) go first: a
        beam over thirty knobs spends its budget before the dump section, last in the list,
        where the engine's extra ``dump`` event names it."""
        if len(group.knobs) <= self.policy.wide_group:
            return list(group.knobs)
        named = [k for k in group.knobs if k in self.read.named]
        ordered = [*named, *(k for k in group.knobs if k not in named)]
        exercised = {k for c in sample for k in self.by_id[c].knobs}
        # and the amount knobs whose values the differing legal sets showed: a case written for
        # the marriage ceiling does not list the maximum bid, yet an engine capping bids at 300
        # shows its cap there
        exercised |= set(self.read.edges) | self.read.stepped | self.read.named
        exercised |= also
        # and the knobs those switch on: a case that exercises a fixed gain for the defenders
        # does not list its amount (a change of the amount alone, under half the bid, changes
        # nothing), yet a fixed gain of 155 is both together
        exercised |= {k for k in group.knobs if set(controlling_knobs(*k.split("."))) & exercised}
        return [k for k in ordered if k in exercised] or ordered

    def _beam(self, rules: Rules, group: Group, knobs: list[str], sample: list[str]) -> list[tuple[Score, tuple[Change, ...]]]:
        """Joint changes found a knob at a time: every single change first, then the best few
        states carried deeper with the values that did best alone (a coupled value such as
        no marriage condition may do nothing alone, but it does no worse than most)."""
        frontier: list[tuple[Change, ...]] = [()]
        seen: set[str] = set()
        scored: list[tuple[Score, tuple[Change, ...]]] = []
        best: Score | None = None
        base = self.score(rules, sample)
        alone: dict[str, list[tuple[Score, Any]]] = {}
        for depth in range(self.policy.depth):
            found: list[tuple[Score, tuple[Change, ...]]] = []
            # past the first depth, the numbers a state switches on last (those not live alone):
            # a barrel switched on brings a dozen numbers of ten values each, and its arrival
            # cap, a switch of three, would come after the budget is spent
            order = sorted(knobs, key=lambda k: depth > 0 and k not in alone and "integer" in candidates.kinds(k))
            for changes in frontier:
                moved = set_knob(rules, changes)
                done, live = {c.knob for c in changes}, self.live(moved)
                for knob in order:
                    if knob in done or knob not in live:
                        continue
                    values = self._values(knob, moved)
                    if depth and knob in alone:
                        if all(score == base for score, _v in alone[knob]):
                            # no value of it alone changes anything the sample shows, yet a coupled
                            # one may: a marriage ceiling does nothing on a four aces hand until the
                            # aces count. A switch of few values goes on; a number does not (a stop
                            # at 300 found with a condition of 300 hides the maximum of 300). A
                            # count goes on as a switch: a penalty from the first give-up does
                            # nothing until the declarer loses the winning bid beside it
                            if "integer" in candidates.kinds(knob) and knob not in candidates.COUNT_KNOBS:
                                continue
                        else:
                            kept = [v for _s, v in sorted(alone[knob], key=lambda item: item[0])[:self.policy.per_knob]]
                            # and a number's first readings: a marriage condition read from a
                            # holder's highest bid does badly alone, and is the one a marriage
                            # ceiling needs beside it
                            if "integer" in candidates.kinds(knob):
                                kept += [v for v in values[:self.policy.carried] if v not in kept]
                            values = [v for v in values if v in kept]
                    for value in values:
                        cand = (*changes, Change(knob, value))
                        key = _key(cand)
                        if key in seen:
                            continue
                        seen.add(key)
                        if len(seen) > self.policy.group_budget:
                            break  # a wide group's search is cut here: the stop rule still tries every single change
                        for whole in self.made_consistent(rules, cand):
                            self.progress(f"  joint search over {len(knobs)} knobs, depth {depth + 1}: {' '.join(c.text() for c in whole)}")
                            score = self.score(set_knob(rules, whole), sample)
                            found.append((score, whole))
                            if not depth:
                                alone.setdefault(knob, []).append((score, value))
            found.sort(key=_ranking)
            scored += found
            if not found or (best is not None and found[0][0] >= best) or found[0][0][0] == 0:
                break
            best = found[0][0]
            frontier = [c for _s, c in _with_ties(found, self.policy.beam, self.policy.tied)]
            if not depth:  # and every switch turned alone: no ceiling does little until the maximum moves too
                frontier += [c for _s, c in found if c not in frontier and isinstance(c[-1].value, (str, bool))]
        return scored + self._refined(rules, knobs, sample, scored, seen)

    def _moved_from(self, rules: Rules, changes: tuple[Change, ...], knob: str) -> list[Any]:
        """For an amount knob, the amounts ``changes`` move other amount knobs away from (a
        completing value): a value taken earlier can stand in for this knob's (a maximum of 350
        for bids before the talon capped at 350), and moving it (to the 380 contracts reach)
        needs it here beside."""
        if knob not in candidates.AMOUNT_KNOBS:
            return []
        moved = [_value_in(rules, c.knob) for c in changes if c.knob in candidates.AMOUNT_KNOBS]
        return [v for v in dict.fromkeys(moved) if _numeric(v) and v != _value_in(rules, knob)]

    def _refined(self, rules: Rules, knobs: list[str], sample: list[str], scored: list[tuple[Score, tuple[Change, ...]]],
                 seen: set[str]) -> list[tuple[Score, tuple[Change, ...]]]:
        """The beam's best changes with one of their numbers moved again, or a number they
        switch on moved, while that does better. A knob moved early keeps the value that did best
        beside the knobs moved so far: with a marriage ceiling still on, a marriage condition of
        460 beside a maximum of 500 comes closest, and once the ceiling goes too the condition
        of 400 the engine plays is the one that matches; the beam never moves a knob twice. And
        a switch that does no better alone stops the beam before the number it switches on is
        tried: a fixed gain for the defenders, whose amount of 155 is the engine's."""
        found: list[tuple[Score, tuple[Change, ...]]] = []
        best = _with_ties(sorted(scored, key=_ranking), self.policy.beam, self.policy.tied)
        frontier = [item for item in best if len(item[1]) > 1]
        frontier += [item for item in best if item not in frontier and self._switched_on(rules, item[1], knobs)]
        for _round in range(self.policy.depth):
            better: list[tuple[Score, tuple[Change, ...]]] = []
            for score, changes in frontier:
                moves = [(at, change.knob) for at, change in enumerate(changes)
                         if "integer" in candidates.kinds(change.knob) and change.knob in knobs]
                moves += [(len(changes), knob) for knob in self._switched_on(rules, changes, knobs)]
                for at, knob in moves:
                    others = changes[:at] + changes[at + 1:]
                    for value in self._values(knob, set_knob(rules, others)):
                        cand = (*others, Change(knob, value))
                        key = _key(cand)
                        if key in seen or not self.consistent(set_knob(rules, cand)):
                            continue
                        seen.add(key)
                        moved = self.score(set_knob(rules, cand), sample)
                        if moved < score:
                            better.append((moved, cand))
            if not better:
                break
            better.sort(key=_ranking)
            found += better
            frontier = _with_ties(better, self.policy.beam, self.policy.tied)
        return found

    def _switched_on(self, rules: Rules, changes: tuple[Change, ...], knobs: list[str]) -> list[str]:
        """The numbers among ``knobs`` that ``changes`` make live (dead under ``rules``)."""
        moved = {c.knob for c in changes}
        now, after = self.live(rules), self.live(set_knob(rules, changes))
        return [k for k in knobs if k in after and k not in now and k not in moved and "integer" in candidates.kinds(k)]

    def _best_over_all(self, rules: Rules, proposed: Sequence[tuple[Change, ...]], ids: list[str],
                       weights: tuple[float, ...] | None = None) -> tuple[Change, ...] | None:
        """Of the proposed changes that make more observations match over every case while
        breaking no matching case, the one that makes most match (the first of equals: best on
        the sample first), else the same of those that break some but fix far more, with every
        knob left out that does not earn its place over all cases: a knob can fit the sample's
        few cases by chance. Values equal on the sample are not equal over all (a least barrel
        contract of 130 or of 200), so one that breaks nothing goes first."""
        now = self.weigh(rules, ids)

        def judged(cand: tuple[Change, ...], weight: float, need: int = 1) -> int | None:
            if not cand or not self.consistent(set_knob(rules, cand)):
                return None
            self.progress(f"checking {' '.join(ch.text() for ch in cand)} on {len(ids)} cases")
            return self._fixes(set_knob(rules, cand), {ch.knob for ch in cand}, ids, now, weight=weight,
                               need=need, closer=need == 1)

        for weight in weights or (math.inf, self.policy.broken_weight):
            best: tuple[Change, ...] = ()
            fixed = 0
            for cand in proposed:
                # a match target of 1010 sets right the barrel wins with 120 that a least contract
                # of 380 sets right too, but breaks the wins at 1000 it leaves alone: once taken,
                # no single change undoes it, and the sample's two barrel cases cannot tell
                more = judged(cand, weight, need=fixed + 1 if best else 1)
                if more is not None and (not best or more > fixed):
                    best, fixed = cand, more
            if best:
                cand = best
                shorter = True
                while shorter and len(cand) > 1:
                    shorter = False
                    for index in range(len(cand)):
                        fewer = cand[:index] + cand[index + 1:]
                        fewer_fixed = judged(fewer, weight, need=fixed)
                        if fewer_fixed is not None:  # the knob left out fixed nothing more
                            cand, fixed, shorter = fewer, fewer_fixed, True
                            break
                return cand
        return None

    def _fixes(self, new_rules: Rules, moved: set[str], ids: list[str], now: dict[str, evidence.Evidence],
               weight: float | None = None, need: int = 1, closer: bool = False) -> int | None:
        """The observations more that ``new_rules`` (``moved`` knobs changed) reproduce over
        every case, when at least ``need`` and the observations of matching cases it breaks,
        ``weight`` times, do not outweigh them (``math.inf``: it breaks none); else None.
        ``closer``: as many observations with fewer plain values apart in them will do (0)
        while searching, so that one of two coupled knobs can go first; whatever the search
        takes must still fix observations at the end (``_without_idle``).

        The cases where it can gain (a differing observation the moved knobs decide) are
        replayed first, then the others a chunk at a time, those whose own knob lists name
        a moved knob first; past the first ones no case is expected to gain, so the replays
        stop as soon as the loss so far outweighs the gain (most rejected changes break
        many cases at once): a rejected change costs a fraction of the corpus."""
        weight = self.policy.broken_weight if weight is None else weight
        net = broken = apart = 0
        least = 0 if closer else need
        gaining, *rest = self._chunks(moved, ids, now)
        # the gaining cases a chunk at a time, most to gain first, with what is left of them
        # as a bound: once even setting all of them right could not reach ``least`` (or make up
        # for what broke), the verdict after them is already None, so the rest is not replayed.
        # A proposal that cannot beat the best so far (``need``) costs a chunk or nothing
        gaining = sorted(gaining, key=lambda c: -len(now[c].missed))
        left = sum(len(now[c].missed) for c in gaining)
        for start in range(0, len(gaining), self.policy.chunk):
            if net + left < least or (broken and broken * weight > net + left):
                return None
            chunk = gaining[start:start + self.policy.chunk]
            after = self.weigh(new_rules, chunk)
            left -= sum(len(now[c].missed) for c in chunk)
            gained, lost = _balance(now, after, chunk)
            net, broken = net + gained, broken + lost
            apart += _score(now[c] for c in chunk)[1] - _score(after[c] for c in chunk)[1]
        if net < least or (broken and broken * weight > net):
            return None
        for chunk in rest:
            after = self.weigh(new_rules, chunk)
            gained, lost = _balance(now, after, chunk)
            net, broken = net + gained, broken + lost
            apart += _score(now[c] for c in chunk)[1] - _score(after[c] for c in chunk)[1]
            if net < least or (broken and broken * weight > net):
                return None
        return net if net >= need or (closer and net == 0 and apart > 0) else None

    def _without_idle(self, rules: Rules, ids: list[str], accepted: list[Accepted],
                      downstream: bool = False) -> tuple[Rules, list[Accepted]]:
        """The rules with every change put back to the profile's value that no longer earns its
        place: a change taken early can imitate a knob found later (no barrel looks like bolts
        counted on the barrel in some cases), and then it says something the evidence does not.
        A change that only brings values closer, fixing no observation, is idle too: of two
        values that reproduce as much, the profile's own is kept. With ``downstream``, so is a
        change that reproduces only observations ``evidence.downstream`` of a difference left."""
        base = variants.thaw(self.profile.rules)
        kept = list(accepted)
        changed = True
        while changed:
            changed = False
            now = self.weigh(rules, ids)
            for knob in changed_knobs(self.profile, rules):
                section, _, name = knob.partition(".")
                back = set_knob(rules, [Change(knob, base[section][name])])
                if not self.consistent(back):
                    continue
                self.progress(f"checking that {knob} still earns its place")
                if self._idle(back, knob, ids, now, downstream):
                    rules, changed = back, True
                    kept = [replace(a, changes=tuple(c for c in a.changes if c.knob != knob)) for a in kept]
                    kept = [a for a in kept if a.changes]
                    break
        return rules, kept

    def _idle(self, back: Rules, knob: str, ids: list[str], now: dict[str, evidence.Evidence],
              downstream: bool = False) -> bool:
        """Do the rules with ``knob`` put back reproduce as many observations (with
        ``downstream``, not counting those it loses that follow a difference left)? Given up at
        the first chunk of cases where putting it back loses more than it gained."""
        net = 0
        for chunk in self._chunks({knob}, ids, now):
            after = self.weigh(back, chunk)
            for c in chunk:
                missed_now, missed_back = evidence.compared(now[c], after[c])
                lost = len(evidence.clean_fixes(after[c], now[c])) if downstream else len(missed_back - missed_now)
                net += len(missed_now - missed_back) - lost
            if net < 0:
                return False
        return True

    def _chunks(self, moved: set[str], ids: list[str], now: dict[str, evidence.Evidence]) -> list[list[str]]:
        """The cases in the order a change of the ``moved`` knobs is replayed on them: first
        all those with a differing observation the knobs decide (where it can gain), then
        a chunk at a time those whose own knob lists name one of them (where it most likely
        loses), then the rest."""
        gaining = [c for c in ids if not moved.isdisjoint(now[c].decided_by)]
        taken = set(gaining)
        rest = sorted((c for c in ids if c not in taken), key=lambda c: not moved & set(self.by_id[c].knobs))
        return [gaining, *(rest[i:i + self.policy.chunk] for i in range(0, len(rest), self.policy.chunk))]

    def _single_change(self, rules: Rules, ids: list[str]) -> tuple[Change, ...] | None:
        """A change of one knob to one of its values that makes more observations match over
        every case and breaks no matching case, or None. Only the cases whose differing
        observations the knob decides can come closer, so a change is tried on those first,
        the cases with most to gain first, and given up as soon as what is left to gain
        cannot make up for what it lost."""
        now = self.weigh(rules, ids)
        deciding: dict[str, list[str]] = {}
        self._read_afresh(rules)
        for case_id, found in now.items():
            for d in found.differing:
                self.read.add_difference(d)
            for _d, knobs in found.deciding:
                for knob in knobs:
                    if case_id not in deciding.setdefault(knob, []):
                        deciding[knob].append(case_id)
        self.tried = {}
        for knob in sorted(set(deciding) & self.live(rules)):
            cases = sorted(deciding[knob], key=lambda c: -len(now[c].missed))
            for value in self._values(knob, rules):
                cand = (Change(knob, value),)
                new_rules = set_knob(rules, cand)
                if not self.consistent(new_rules):
                    continue
                self.tried[knob] = self.tried.get(knob, 0) + 1
                self.progress(f"checking that no single change helps: {cand[0].text()}")
                if (self._gains(new_rules, cases, now) and self._fixes(new_rules, {knob}, ids, now, math.inf)
                        and self._fixes_cleanly(new_rules, cases, now)):
                    return cand
        return None

    def _fixes_cleanly(self, new_rules: Rules, cases: list[str], now: dict[str, evidence.Evidence]) -> bool:
        """Does some observation ``new_rules`` set right over ``cases`` (replayed already) not
        follow a difference they leave (``evidence.downstream``)? A change that sets right only
        such observations is no evidence of a rule, and the stop rule does not take it."""
        after = self.weigh(new_rules, cases)
        return any(evidence.clean_fixes(now[c], after[c]) for c in cases)

    def _gains(self, new_rules: Rules, cases: list[str], now: dict[str, evidence.Evidence]) -> bool:
        """Do ``new_rules`` reproduce more observations over ``cases`` (those with most missed
        first)? Replayed a chunk at a time, stopping once the cases left, even all set
        right, could not make up for what the change lost."""
        net, left = 0, sum(len(now[c].missed) for c in cases)
        for start in range(0, len(cases), self.policy.chunk):
            chunk = cases[start:start + self.policy.chunk]
            after = self.weigh(new_rules, chunk)
            net += _balance(now, after, chunk)[0]
            left -= sum(len(now[c].missed) for c in chunk)
            if net > 0:
                return True  # the check over every case follows (its replays of these are kept)
            if net + left <= 0:
                return False
        return False

    def _accept(self, rules: Rules, cand: tuple[Change, ...], ids: list[str], accepted: list[Accepted]) -> Rules:
        before = self.weigh(rules, ids)
        new_rules = set_knob(rules, cand)
        after = self.weigh(new_rules, ids)
        compared = {c: evidence.compared(before[c], after[c]) for c in ids}
        fixed_obs = sum(len(missed_before - missed_after) for missed_before, missed_after in compared.values())
        broken_obs = sum(len(missed_after - missed_before) for missed_before, missed_after in compared.values())
        fixed = [c for c in ids if not before[c].matches and after[c].matches]
        example = next((c for c in ids if before[c].missed - after[c].missed), ids[0])
        gone = sorted(before[example].missed - after[example].missed)[0] if before[example].missed - after[example].missed else None
        where = f"{example} deal {gone[0]} step {gone[1]} ({gone[2]})" if gone else example
        record = Accepted(cand, len(fixed), sum(1 for c in ids if len(after[c].missed) < len(before[c].missed)),
                          where, fixed_obs, broken_obs)
        accepted[:] = _merged(accepted, record)
        return new_rules

    def _equivalents(self, rules: Rules, accepted: Sequence[Accepted], ids: list[str]) -> dict[str, list[Any]]:
        """Knob -> other values that play exactly as the chosen one on every case of the fit
        (the corpus cannot tell them apart: a gap worth a case)."""
        final = self.weigh(rules, ids)
        found: dict[str, list[Any]] = {}
        for record in accepted:
            for change in record.changes:
                example = record.example.split(" ")[0]
                tried = self._values(change.knob, rules)
                # the rule switched off first: it is the plainest of equal values
                tried = ([None] if None in tried else []) + [v for v in tried if v is not None][:self.policy.equivalents_tried]
                for value in tried:
                    other = set_knob(rules, [Change(change.knob, value)])
                    if not self.consistent(other) or self.weigh(other, [example])[example].clean != final[example].clean:
                        continue  # the example tells them apart at once
                    if self._plays_the_same(other, {change.knob}, ids, final):
                        found.setdefault(change.knob, []).append(value)
        return found


    def _in_its_place(self, rules: Rules, accepted: Sequence[Accepted], ids: list[str]) -> dict[str, list[Change]]:
        """Knob -> changes of another knob that, with this one at the profile's value, play
        exactly as the fitted rules on every case: the corpus cannot tell which rule the
        implementation plays. In skill-games every way to 1000 goes through the barrel, so a
        least contract of 320 to win from it plays as a match target above 1000. Tried on the
        first case that tells the knob's value from the profile's: the other knobs deciding
        what it sets right there, that case first."""
        final = self.weigh(rules, ids)
        found: dict[str, list[Change]] = {}
        for change in (change for record in accepted for change in record.changes):
            back = set_knob(rules, [Change(change.knob, _value_in(self._profile_rules, change.knob))])
            example = self._telling_case(back, {change.knob}, ids, final) if self.consistent(back) else None
            if example is None:
                continue
            for other in self._alternatives(back, change.knob, example, final[example]):
                if any(c.knob == other.knob for c in found.get(change.knob, [])):
                    continue  # one value of each other knob: the first that plays the same
                for value in _further(other, _value_in(back, other.knob), self.policy.further):
                    moved = set_knob(back, [Change(other.knob, value)])
                    if value != other.value and (not self.consistent(moved)
                                                 or self.weigh(moved, [example])[example].clean != final[example].clean):
                        continue
                    if self._plays_the_same(moved, {change.knob, other.knob}, ids, final):
                        found.setdefault(change.knob, []).append(Change(other.knob, value))
                        break
        return found

    def _alternatives(self, back: Rules, knob: str, example: str, final: evidence.Evidence) -> list[Change]:
        """Single changes of another knob that set ``example`` as the fitted rules do, where
        ``back`` (``knob`` put back) misses some observation they reproduce. Tried: every value
        of each knob deciding at least half of those observations (a score line's values are
        read from the scores, and a match target above 1000 is the seventh of them)."""
        seen = self.weigh(back, [example])[example]
        self._read_afresh(back)
        live = self.live(back)
        counted: collections.Counter[str] = collections.Counter()
        fixed = 0
        for d, knobs in seen.deciding:
            if evidence.key_of(d) in final.missed:
                continue
            fixed += 1
            self.read.add_difference(d)
            counted.update(k for k in knobs if k != knob and k in self.knobs and k in live)
        found: list[Change] = []
        for other in (k for k, count in counted.most_common() if 2 * count >= fixed):
            for value in self._values(other, back):
                cand = set_knob(back, [Change(other, value)])
                if self.consistent(cand) and self.weigh(cand, [example])[example].missed == final.missed:
                    found.append(Change(other, value))
        return found

    def _plays_the_same(self, other: Rules, knobs: set[str], ids: list[str], final: dict[str, evidence.Evidence]) -> bool:
        """Do ``other`` rules (``knobs`` changed) miss the same observations on every case, as
        far as a case can tell (``Evidence.clean``: not those downstream of a difference)?"""
        return self._telling_case(other, knobs, ids, final) is None

    def _telling_case(self, other: Rules, knobs: set[str], ids: list[str],
                      final: dict[str, evidence.Evidence]) -> str | None:
        """The first case on which ``other`` rules (``knobs`` changed) miss other observations
        than the fitted rules (``Evidence.clean``), or None. Replayed a chunk at a time, those the knobs can tell
        apart first, up to the first chunk with such a case."""
        for chunk in self._chunks(knobs, ids, final):
            after = self.weigh(other, chunk)
            for case_id in chunk:
                if after[case_id].clean != final[case_id].clean:
                    return case_id
        return None


def _ceilings_kept(rules: Rules, changes: tuple[Change, ...], knob: str) -> list[int]:
    """For the marriage condition beside a new marriage table, the conditions that keep one
    suit's holders' ceilings where they were (the condition plus the suit's worth): spades
    at 45 in place of 60 under a condition of 240 keep their ceiling of 300 over 255. A
    table read from the declarations moves every holder's ceiling, and the auction showed
    those ceilings."""
    condition = _value_in(rules, "auction.marriage_needed_above")
    table = next((c.value for c in changes if c.knob == "marriages.values"), None)
    if knob != "auction.marriage_needed_above" or not _numeric(condition) or not isinstance(table, dict):
        return []
    before = _value_in(rules, "marriages.values")
    kept = [condition + before[suit] - worth for suit, worth in table.items()
            if _numeric(worth) and _numeric(before.get(suit)) and worth != before[suit]]
    return [value for value in dict.fromkeys(kept) if value > 0]


def _further(change: Change, current: Any, times: Sequence[int]) -> list[Any]:
    """The value of a change found in another knob's place, then, for a number, values
    ``times`` as far from the current one (``Policy.further``): the value read is the nearest that sets
    the example right, and another case can need the line further out (a match target of
    1010 plays as a least contract of 210 to win from the barrel on the barrel's 880 plus
    120, but 880 plus 150 needs a target above 1030)."""
    if not (_numeric(change.value) and _numeric(current)) or change.value == current:
        return [change.value]
    low, high = candidates.integer_range(candidates.value_schema(change.knob))
    distance = change.value - current
    return [change.value, *(v for v in (current + k * distance for k in times) if low <= v <= high)]


def _balance(now: dict[str, evidence.Evidence], after: dict[str, evidence.Evidence], chunk: Sequence[str]) -> tuple[int, int]:
    """Over ``chunk``: the observations more that ``after`` reproduces than ``now`` (the net,
    as far as both replays compare: ``evidence.compared``), and those it misses in cases that
    matched."""
    net = broken = 0
    for c in chunk:
        missed_now, missed_after = evidence.compared(now[c], after[c])
        net += len(missed_now) - len(missed_after)
        if now[c].matches and missed_after:
            broken += len(missed_after)
    return net, broken


def _plainest(rules: Rules, accepted: list[Accepted], equivalents: dict[str, list[Any]]) -> tuple[Rules, list[Accepted]]:
    """Of values that play the same on every case, the rule switched off (null) is kept: it
    claims least. The value the search found is listed among the equally consistent ones."""
    for knob, others in equivalents.items():
        if None in others:
            section, _, name = knob.partition(".")
            equivalents[knob] = [rules[section][name], *(v for v in others if v is not None)]
            rules = set_knob(rules, [Change(knob, None)])
            accepted = [replace(a, changes=tuple(Change(c.knob, None) if c.knob == knob else c for c in a.changes))
                        for a in accepted]
    return rules, accepted


def _named(group: Group) -> str:
    """A group as a progress line names it: its first four knobs."""
    return f"{', '.join(group.knobs[:4])}{'...' if len(group.knobs) > 4 else ''}"


def _ranking(item: tuple[Score, tuple[Change, ...]]) -> tuple[Score, int, int]:
    """Best first: the score, then fewer knobs moved, then fewer numbers among them. Of two
    changes equal on the sample, a switch claims less than a number: no ceiling with a maximum
    of 300 before a marriage condition of 300 with the same maximum."""
    score, changes = item
    return score, len(changes), sum(1 for c in changes if _numeric(c.value))


def _numeric(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _with_ties(ranked: list[tuple[Score, tuple[Change, ...]]], count: int, tied: int) -> list[tuple[Score, tuple[Change, ...]]]:
    """The first ``count`` of changes ranked best first, and those as good as the best up to
    ``tied``: on a sample of one case a maximum of 525 with four aces worth anything and four
    aces worth 30 under a marriage ceiling score the same, and only the cases beyond tell."""
    best = [item for item in ranked[:tied] if ranked and item[0] == ranked[0][0]]
    return ranked[:count] + [item for item in best[count:]]


def _rules_key(rules: Rules) -> str:
    """Rules as one string: the key under which their replays and live knobs are kept."""
    return json.dumps(rules, sort_keys=True)


def _value_in(rules: Rules, knob: str) -> Any:
    section, _, name = knob.partition(".")
    return rules[section][name]


def _key(changes: Sequence[Change]) -> str:
    """The same changes in any order (values may be lists and mappings: not hashable)."""
    return json.dumps(sorted((c.knob, c.value) for c in changes), sort_keys=True)


_KEEP = object()  # a knob left at its value in a combination (None is a value of its own)


def _score(found: Iterable[evidence.Evidence]) -> Score:
    """(observations that differ, plain values apart in them): lower is better. The values
    break ties: of two knobs that change the same deltas, each alone leaves the observation
    differing but one of them sets some of its numbers right."""
    missed = apart = 0
    for e in found:
        missed += len(e.missed)
        apart += e.apart
    return missed, apart


def _merged(accepted: list[Accepted], record: Accepted) -> list[Accepted]:
    """The accepted changes with a new one; a knob changed again (another value that explains
    more) keeps one record, holding the evidence of both and the first example."""
    knobs = {change.knob for change in record.changes}
    earlier = [a for a in accepted if knobs & {change.knob for change in a.changes}]
    if not earlier:
        return [*accepted, record]
    values = {change.knob: change for a in earlier for change in a.changes}
    values.update({change.knob: change for change in record.changes})
    merged = Accepted(tuple(values.values()), record.cases_fixed + sum(a.cases_fixed for a in earlier),
                      record.cases_improved + sum(a.cases_improved for a in earlier), earlier[0].example,
                      record.observations_fixed + sum(a.observations_fixed for a in earlier),
                      record.observations_broken + sum(a.observations_broken for a in earlier))
    return [a for a in accepted if a not in earlier] + [merged]


# --- output ------------------------------------------------------------------------------

def changed_knobs(profile: variants.ResolvedProfile, rules: Rules) -> list[str]:
    return [f"{s}.{k}" for s, knobs in rules.items() for k in knobs
            if variants.thaw(profile.rules[s][k]) != knobs[k]]


def house_yaml(profile: variants.ResolvedProfile, rules: Rules, accepted: Sequence[Accepted], name: str,
               implementation: str, equivalents: dict[str, list[Any]] | None = None,
               in_its_place: dict[str, list[Change]] | None = None, asked: Sequence[asking.Asked] = ()) -> str:
    """A house profile extending P's base profile: every knob that differs from the base,
    with the evidence as its ruling (P's own options are carried over as they are)."""
    equivalents = equivalents or {}
    fitted = {ch.knob: record for record in accepted for ch in record.changes}
    base = variants.resolve(profile.profile)
    base_rules = variants.thaw(profile.rules)
    body: dict[str, dict[str, Any]] = {}
    for knob in changed_knobs(base, rules):
        section, _, key = knob.partition(".")
        record = fitted.get(knob)
        # the last question that decided: the one whose answer is the value kept
        question = next((a for a in reversed(asked) if a.knob == knob and a.answer != "untold"), None)
        if record is not None:
            ruling = (f"thousand fit: with this value the reference reproduces {record.observations_fixed} more "
                      f"observation(s) of {implementation} on the cases of {profile.name} "
                      f"({record.cases_fixed} whole case(s) more), e.g. {record.example}.")
            if record.observations_broken:
                ruling += f" It loses {record.observations_broken} observation(s) that matched before."
            others = equivalents.get(knob)
            instead = (in_its_place or {}).get(knob)
            if question is not None:
                ruling += f" Asked of {implementation}: {question.text()}."
                others, instead = [], []
            if others:
                ruling += (" Equally consistent with the corpus (no case tells them apart, a gap worth a case): "
                           + ", ".join(json.dumps(v) for v in others) + ".")
            if instead:
                ruling += (f" Equally consistent with the corpus, with this knob at {json.dumps(_value_in(base_rules, knob))}"
                           f" as {profile.name} has it: " + ", or ".join(c.text() for c in instead) + ".")
        elif question is not None:  # an unpinned knob: nothing the implementation showed on the corpus decides it
            ruling = (f"thousand fit: no observation of {implementation} on the cases of {profile.name} decides this "
                      f"knob. Asked of {implementation}: {question.text()}.")
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


def residual_groups(residual: dict[str, tuple[Finding, ...]]) -> list[tuple[str, list[str], Finding]]:
    """(signature, case ids, first example), the largest group first. A case counts under its
    first difference only: what follows in the same case is most often a consequence."""
    groups: dict[str, tuple[list[str], Finding]] = {}
    for case_id, diffs in residual.items():
        if diffs:
            groups.setdefault(observe.named(diffs[0]).signature, ([], diffs[0]))[0].append(case_id)
    return sorted(((s, ids, ex) for s, (ids, ex) in groups.items()), key=lambda g: (-len(g[1]), g[0]))


# --- the command -------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fit", help="find the knob values under which the reference plays like an implementation",
        description="Observe an implementation on the corpus cases of a profile, then search knob values "
                    "from that profile for the rules under which the reference reproduces it best. Prints "
                    "a house profile (extends the profile) and the differences no value fit tried explains. Exit 0 when the "
                    "fitted rules explain every case, 1 when differences are left, 2 on usage errors, 3 when "
                    "the fitted profile does not validate (a bug here), 4 when the implementation could not start "
                    "or broke the protocol on every case (no profile written), 129/130/143 when stopped by "
                    "SIGHUP/SIGINT/SIGTERM.")
    parser.add_argument("--profile", required=True, metavar="P", help="the profile to start from ('name' or 'name+option')")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="processes of each side run in parallel")
    parser.add_argument("--output", type=Path, metavar="FILE.yaml", help="write the fitted house profile here")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help=f"seconds to wait for each reply (default 10, at most {MAX_TIMEOUT})")
    parser.add_argument("--report", type=Path, metavar="FILE.json",
                        help="write what no value fit tried explains as a JSON report of the shape of thousand verify --report "
                             "(thousand fuzz --known reads it)")
    parser.add_argument("-k", action="append", default=[], dest="include", metavar="GLOB",
                        help="only case ids matching this glob; repeatable")
    parser.add_argument("--cases", action="append", type=Path, default=[], metavar="DIR",
                        help="transcript folder (default: conformance/cases and conformance/generated)")
    parser.add_argument("--save-questions", type=Path, metavar="DIR",
                        help="keep the questions put to the implementation (one-deal transcripts that tell apart two "
                             "values the corpus cannot) in this folder")
    parser.add_argument("--no-ask", action="store_true",
                        help="do not ask the implementation where the corpus cannot tell values apart")
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
    if not 1 <= args.jobs <= 256 or not math.isfinite(args.timeout) or not MIN_TIMEOUT <= args.timeout <= MAX_TIMEOUT:
        print(f"thousand {tool}: --jobs must be a whole number from 1 to 256 and --timeout from {MIN_TIMEOUT:g} to "
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
    and validating the whole corpus would cost more than a fit of one profile. The others
    are loaded through the corpus cache, as ``verify`` loads them (seconds of validation
    otherwise)."""
    found = []
    for root in roots or [CASES_DIR, GENERATED_DIR]:
        def listing(case_id: str, root: Path = root) -> bool:
            if include and not any(fnmatch.fnmatchcase(case_id, p) for p in include):
                return False  # left out by its id alone: not read (a transcript's id is its path)
            listed = _listed_profiles(root / f"{case_id}.yaml")
            return listed is None or bool(names & listed)

        for case in discover([root], select=listing):
            if (isinstance(case, Transcript) and names & set(case.profiles)
                    and (not include or any(fnmatch.fnmatchcase(case.id, p) for p in include))):
                found.append(case)
    return found


def _listed_profiles(path: Path) -> frozenset[str] | None:
    """The profiles of a transcript's one-line ``profiles: [...]``, or None when not written so."""
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("profiles:"):
                    return _profiles_line(line)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return None


@functools.lru_cache(maxsize=1024)
def _profiles_line(line: str) -> frozenset[str] | None:
    """The profiles a ``profiles:`` line lists. Kept by line: the corpus's 1,200 files write a few
    dozen such lines, and PyYAML takes about a millisecond for each (a second of every fit)."""
    value = yaml.safe_load(line)
    listed = value.get("profiles") if isinstance(value, dict) else None
    return frozenset(str(p) for p in listed) if isinstance(listed, list) else None


def main(args: argparse.Namespace) -> int:
    """``thousand fit``; SIGINT, SIGTERM and SIGHUP stop it with one line (no fitted profile)."""
    observe.collect_rarely()
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
        return ExitCode.USAGE
    name = args.output.stem if args.output else "fitted"
    if args.output and (args.output.suffix != ".yaml" or not _valid_name(name)):
        print("thousand fit: --output must be NAME.yaml, NAME of lowercase letters, digits and hyphens", file=sys.stderr)
        return ExitCode.USAGE
    for option, path in (("--output", args.output), ("--report", args.report)):
        problem = outputs.output_problem(path) if path else None
        if problem:  # said before a run of minutes, not after it
            print(f"thousand fit: {option} {problem}", file=sys.stderr)
            return ExitCode.USAGE
    profile = resolved_option(args.profile, "fit", "--profile")
    if profile is None:
        return ExitCode.USAGE
    cases = cases_for({profile.name}, args.cases, args.include)
    if not cases:
        print(f"thousand fit: no case lists profile {profile.name!r}", file=sys.stderr)
        return ExitCode.USAGE
    progress = terminal_progress("fit", every=PROGRESS_EVERY)
    fitter = Fitter(profile.name, cases, command, args.jobs, args.timeout, progress)
    try:
        with process.supervised():
            try:
                fitter.observe_implementation()
            except process.CannotStart as exc:
                clear_progress()
                print(f"thousand fit: the implementation could not start: {printable(str(exc))}; "
                      "no fitted profile written", file=sys.stderr)
                return ExitCode.CANNOT_START
            observed = [r for r in fitter.impl_records.values() if not r.broken]
            if not observed:
                clear_progress()
                first = next(iter(fitter.impl_records.values())).ended
                print(f"thousand fit: the implementation broke the protocol on every case ({printable(first)[:500]}); "
                      "no fitted profile written", file=sys.stderr)
                return ExitCode.CANNOT_START
            result = fitter.run()
            if not args.no_ask:
                result = answered(fitter, profile, result, args.save_questions)
            found = fitter.causes(result)
    finally:
        fitter.close()
        clear_progress()
    implementation = _implementation_name(fitter)
    text = house_yaml(profile, result.rules, result.accepted, name, implementation, result.equivalents,
                      result.in_its_place, result.asked)
    problem = _invalid_fitted(text, name)
    if problem:  # a bug here, never the implementation's: said, and nothing written
        print(f"thousand fit: the fitted profile does not validate ({problem}); not written", file=sys.stderr)
        return ExitCode.INTERNAL
    print(report(result, text, found))
    broken = [r for case_id, r in fitter.impl_records.items() if r.broken and case_id in result.weighed]
    code = ExitCode.FAILED if result.residual or result.answers_missed or broken else ExitCode.PASSED
    try:
        if args.output:
            outputs.write_atomically(args.output, text)
        if args.report:
            titles = {case.id: case.title for case in cases}
            document = residual.report(result.weighed, titles, result.exercised, profile.name, command,
                                       fitter.start_reply, code)
            reports.write_json(args.report, document)
    except OSError as exc:  # an OutputError names the file
        print(f"thousand fit: {printable(str(exc))}", file=sys.stderr)
        return ExitCode.USAGE
    if args.output:
        print(steps.hunt_step(str(args.output), str(args.report) if args.report else None, command))
    return code


def answered(fitter: Fitter, profile: variants.ResolvedProfile, result: FitResult, save_to: Path | None) -> FitResult:
    """``result`` with every untold alternative asked of the implementation (``asking``). The
    questions it played are evidence as the corpus is: where the rules its answers keep do not
    play every answer (a knob no question was about comes first there) and some such answer's
    first difference is none of the residual's causes (``asking.known_first``), the search runs again
    over the corpus and the questions, and its rules are asked in turn, up to
    ``Policy.rounds`` searches while that plays more of the answers. The result's residual is
    weighed over the corpus (the questions are not scored there); the answers the final rules
    do not play are ``answers_missed``."""
    corpus = list(result.weighed)
    deadline = time.monotonic() + fitter.policy.seconds
    asked: list[asking.Asked] = []
    questions: list[str] = []
    with tempfile.TemporaryDirectory(prefix="thousand-questions-") as scratch:
        def text(rules: Rules) -> str:
            return house_yaml(profile, rules, [], "asked", "the implementation")

        for round_ in range(1, fitter.policy.rounds + 1):
            rules, found, played = asking.ask(fitter, result, text, Path(scratch), deadline)
            asked += found
            questions += played
            missed = {q: len(e.missed) for q, e in fitter.weigh(rules, questions).items() if e.missed}
            known: dict[str, str] = {}  # the residual's causes are worked out only when some answer is missed
            if missed:
                known = asking.known_first(fitter, rules, asking.known_residual(fitter, rules, corpus), list(missed))
            # an answer whose first difference is a residual cause's is that cause again: no
            # knob value the search could find plays it
            if set(missed) <= set(known) or round_ == fitter.policy.rounds:
                break
            fitter.progress("searching again, the implementation's answers among the cases")
            again = fitter.run(replace(result, rules=rules), focus=[q for q in missed if q not in known])
            told = [*corpus, *questions]
            if asking.missed_over(fitter, again.rules, told) >= asking.missed_over(fitter, rules, told):
                break
            result = replace(again, searched_with=tuple(questions))
        if save_to is not None:
            asking.keep_questions([*(a.question for a in asked if a.question), *missed], Path(scratch), save_to)
    weighed = fitter.weigh(rules, corpus)
    residual_now = {case_id: e.differing for case_id, e in weighed.items() if e.differs}
    # what was asked about a value the final rules no longer hold is history, not a ruling
    asked = [a for a in asked if Change(a.knob, _value_in(rules, a.knob)).text() in (a.kept() or a.fitted).split(" with ")]
    asked_knobs = {a.knob for a in asked if a.answer != "untold"}
    return replace(result, rules=rules, cases=len(corpus), weighed=weighed, residual=residual_now, asked=asked,
                   answers_missed=missed, answers_known=known,
                   exercised={case_id: fitter.by_id[case_id].knobs for case_id in residual_now},
                   equivalents={k: v for k, v in result.equivalents.items() if k not in asked_knobs},
                   in_its_place={k: v for k, v in result.in_its_place.items() if k not in asked_knobs})


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


def _moved(result: FitResult) -> list[tuple[Accepted, tuple[Change, ...]]]:
    """Each kept change record with the changes the fitted rules hold, at the value they hold:
    a knob a record moved that the rules reported have at the profile's value (put back, or
    an equal value kept instead) is no change, and a record left with none is not listed."""
    try:
        start = variants.resolve(result.profile)
    except variants.ProfileError:  # a profile fit could not have started from: every record as it is
        return [(record, record.changes) for record in result.accepted]
    changed, listed = set(changed_knobs(start, result.rules)), set[str]()
    kept = []
    for record in result.accepted:
        # the value the rules hold (an equal one may stand for the record's), each knob once
        changes = tuple(Change(ch.knob, _value_in(result.rules, ch.knob)) for ch in record.changes
                        if ch.knob in changed and ch.knob not in listed)
        listed.update(ch.knob for ch in changes)
        if changes:
            kept.append((record, changes))
    return kept


PROGRESS_EVERY = 10.0  # seconds between two progress lines when stderr is no terminal (a log, a pipe)


def report(result: FitResult, text: str, found: Sequence[RootCause] = ()) -> str:
    checked = sum(e.checked for e in result.weighed.values())
    lines = [f"# thousand fit: {result.cases} cases of {result.profile}, {checked} observations compared "
             f"({result.unchecked} step(s) unchecked: skipped, errored or unsupported), {result.evaluations} "
             f"reference replays, {result.seconds:.1f} s"]
    if result.absent:  # never compared: no value of a knob only they show is evidence
        lines.append(f"# unchecked: the state fields {', '.join(sorted(result.absent))}, which the implementation "
                     "declares absent (never compared)")
    if result.events_derived:
        lines.append("# events: derived from the states on both sides (the implementation sends none)")
    moved = _moved(result)
    if moved:
        for record, held in moved:
            lines.append(f"# changed {', '.join(ch.text() for ch in held)}: reproduces "
                         f"{record.observations_fixed} more observation(s) ({record.cases_fixed} whole case(s)), "
                         f"e.g. {record.example}")
    else:
        lines.append("# no knob change reproduces more observations")
    if result.searched_with:
        lines.append(f"# searched again with the implementation's answers to {len(result.searched_with)} question(s) "
                     "among the cases: the rules its first answers kept did not play them all")
    for asked in result.asked:
        lines.append(f"# asked {asked.text()}")
    for question_id, count in result.answers_missed.items():
        cause = result.answers_known.get(question_id)
        first = f", first {cause}, the residual's cause below" if cause else ""
        lines.append(f"# not played by these rules: the implementation's answer to {question_id} "
                     f"({count} observation(s) missed{first}; --save-questions keeps it)")
    for knob, values in result.equivalents.items():
        lines.append(f"# {knob}: {', '.join(json.dumps(v) for v in values)} play the same on these cases")
    for knob, changes in result.in_its_place.items():
        lines.append(f"# {knob} at the profile's value with {' or '.join(c.text() for c in changes)} "
                     "plays the same on these cases")
    lines.append(text.rstrip())
    if result.residual:
        missed = sum(len(e.missed - e.reordered) for e in result.weighed.values())
        aside = sum(len(e.set_aside) for e in result.weighed.values())
        tried = "that no value fit tried of their deciding knobs reproduces"
        if aside:  # the two kinds apart: a knob could not be found, or no rules play it at all
            parts = [f"{missed} {tried}"] if missed else []
            parts.append(f"{aside} where the implementation contradicts itself (no rules play that)")
            lines.append(f"# residual: {missed + aside} observation(s) in {len(result.residual)} case(s): "
                         f"{' and '.join(parts)}:")
        else:
            lines.append(f"# residual: {missed} observation(s) in {len(result.residual)} case(s) {tried}:")
        lines += ["# " + line for line in residual.describe(found)]
    elif result.answers_missed:
        lines.append(f"# residual: none on the corpus, but these rules do not play the implementation's answers "
                     f"to {len(result.answers_missed)} question(s) (above)")
    else:
        lines.append("# residual: none: the reference under these rules plays like the implementation on every case")
    return "\n".join(lines)
