"""What no value ``thousand fit`` tried explains: root causes as ``thousand verify`` groups them,
each judged a rule the schema has no knob for or likely a bug, with the differences it hides.

A cause is "likely a bug" when the implementation contradicts itself or shows a state no
game can reach: it refuses an action its own legal set offered, accepts one its legal set
left out, leaves nobody to act where the game goes on, counts more card points in the tricks
than the deck holds (120), or answers the
same situation two ways in two cases (the same match setup, the same deals and the same
actions before it: the game is determined by them, so no rule can tell the two apart).
Otherwise the same observation differs the same way wherever it occurs, consistently with
some rule the schema cannot write down: "a rule the schema has no knob for" (once fit has
tried the cause's switches alone and in pairs on its cases: where those reproduce it, "knob
values fit did not adopt reproduce it", ``fit.Fitter.causes``; where a number or a table
decides it, of which fit tried only some values, "values fit did not try may explain it"), unless every
observation that shows it also differs as another cause's root does: then no value of its own
knobs can make one match, and the evidence says nothing of them ("tangled with another cause").
A tangled difference is written beside the cause it is tangled with, not as a cause of its
own: each line of the residual is a missing rule or a likely bug, and what that line hides
goes with it.

The root causes are written as a report of the same shape as ``thousand verify --report``
(spec/schema/report.schema.json), so that ``thousand fuzz --known`` can leave them out.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Iterator, Mapping, Sequence

from conformance.corpus.transcripts import Transcript
from conformance.harness import diagnosis, reports
from conformance.harness.findings import Finding, Observed, RootCause, signature
from conformance.harness.runner import Result
from conformance.oracle import evidence, observe
from spec.vocabulary import ResidualVerdict


def contradictions(record: observe.CaseRecord) -> list[str]:
    """Where an implementation's record contradicts itself or reaches an impossible state."""
    return [f"deal {keys[0][0]} step {keys[0][1]} ({_action(record, keys[0][0], keys[0][1])}): {what}"
            for keys, what in evidence.self_contradictions(record)]


def _action(record: observe.CaseRecord, deal: int, step: int) -> str | None:
    return next((s.action for s in record.steps if (s.deal, s.step) == (deal, step)), None)


def _situations(case: Transcript, record: observe.CaseRecord) -> Iterator[tuple[str, observe.StepRecord]]:
    """Each step of a record with the situation it answers: the case's match setup, the deals
    so far and the actions so far, as one string (what determines the game)."""
    steps = {(step.deal, step.step): step for step in record.steps}
    prefix = [json.dumps(case.match, sort_keys=True)]
    for number, deal in enumerate(case.deals, start=1):
        prefix.append(json.dumps([deal["dealer"], deal["hands"], deal["talon"]], sort_keys=True))
        for index in range(len(deal["steps"]) + 1):
            if index:
                prefix.append(str(deal["steps"][index - 1]["action"]))
            step = steps.get((number, index))
            if step is None:
                return
            yield "\n".join(prefix), step


def _answer(step: observe.StepRecord) -> dict[str, str]:
    """What the implementation said at a step, part by part, in a form that compares."""
    said = {"legal set": json.dumps(sorted(step.legal) if step.legal is not None else None),
            "reply": json.dumps([step.reply.accepted, step.reply.events, step.reply.refusal], sort_keys=True, default=str)}
    said.update({f"state field {key}": json.dumps(value, sort_keys=True, default=str) for key, value in step.state.items()})
    return said


def inconsistencies(records: Mapping[str, observe.CaseRecord], cases: Mapping[str, Transcript]) -> dict[str, list[str]]:
    """Per case, where the implementation answered a situation otherwise than in an earlier case
    that reached the same situation (the first case to reach it is the one compared with)."""
    return {case_id: [message for _at, message in found] for case_id, found in _inconsistent(records, cases).items()}


def inconsistent(records: Mapping[str, observe.CaseRecord], cases: Mapping[str, Transcript]) -> dict[str, frozenset[evidence.Key]]:
    """Per case answering a situation otherwise than another case did, what fit sets aside of
    it: every observation from the first such step on. Neither answer is a rule (no rules
    answer one situation two ways), and the game after it goes on from an answer no rules
    gave, so no value is adopted for what they show."""
    found = {}
    for case_id, where in _inconsistent(records, cases).items():
        first = min(at for at, _message in where)
        found[case_id] = frozenset(key for step in records[case_id].steps if (step.deal, step.step) >= first
                                   for key in evidence.observations(step))
    return found


def _inconsistent(records: Mapping[str, observe.CaseRecord],
                  cases: Mapping[str, Transcript]) -> dict[str, list[tuple[tuple[int, int], str]]]:
    """``inconsistencies`` with the step (deal, step) of each."""
    first: dict[str, tuple[str, str, tuple[int, int], dict[str, str]]] = {}
    found: dict[str, list[tuple[tuple[int, int], str]]] = {}
    for case_id, record in records.items():
        if case_id not in cases:
            continue
        for situation, step in _situations(cases[case_id], record):
            where = f"deal {step.deal} step {step.step} ({step.action})"
            said = _answer(step)
            earlier = first.setdefault(situation, (case_id, where, (step.deal, step.step), said))
            if earlier[0] == case_id:
                continue
            parts = sorted(part for part in said.keys() | earlier[3].keys() if said.get(part) != earlier[3].get(part))
            if parts:
                message = (f"{where}: the same situation as {earlier[0]} {earlier[1]} answered otherwise "
                           f"({', '.join(parts[:3])})")
                found.setdefault(case_id, []).append(((step.deal, step.step), message))
                found.setdefault(earlier[0], []).append((earlier[2], f"{earlier[1]}: answered otherwise in {case_id} {where}"))
    return found


def failures(weighed: Mapping[str, evidence.Evidence], exercised: Mapping[str, tuple[str, ...]],
             profile: str) -> list[diagnosis.Failure]:
    return [diagnosis.Failure(f"{case_id}@{profile}", observe.findings(_impossible_first(e)),
                              exercised=exercised.get(case_id, ()))
            for case_id, e in weighed.items() if e.differs]


def _impossible_first(found: evidence.Evidence) -> list[Finding]:
    """A case's differences, an impossible state at the step of its first difference moved
    first: there it is the root, and the reply before it only its sign. An engine that counts
    the last trick's bonus among the card points (130 where the deck holds 120) also drops a
    player from the barrel with another penalty at that step; grouped by that penalty, the
    case would be a barrel cause beside the bonus's."""
    differing = list(found.differing)
    if not differing or not found.set_aside:
        return differing
    step = differing[0].deal, differing[0].step
    impossible = [d for d in differing if (d.deal, d.step) == step and evidence.key_of(d) in found.set_aside]
    return impossible + [d for d in differing if d not in impossible]


def causes(weighed: Mapping[str, evidence.Evidence], records: Mapping[str, observe.CaseRecord],
           exercised: Mapping[str, tuple[str, ...]], profile: str,
           tried: Mapping[str, int] | None = None, cases: Mapping[str, Transcript] | None = None) -> list[RootCause]:
    """The residual's root causes (those of ``diagnosis.groups``), each with its verdict.
    ``tried`` counts the values fit's last single-change check tried per knob, each alone over
    every case: the "why" claims that and no more (fit's joint search reaches only some of
    the joint values of a group's knobs, so "no joint value reproduces it" is not known).
    With ``cases`` (the transcripts by id), a situation answered two ways is a contradiction too."""
    found = []
    hosts: dict[int, int] = {}  # a tangled cause's index: that of the cause it is tangled with
    twice = inconsistencies(records, cases) if cases else {}
    grouped = diagnosis.groups(failures(weighed, exercised, profile))
    roots = [diagnosis.checks_of(group) for group in grouped]
    for number, group in enumerate(grouped):
        case_ids = tuple(run.rsplit("@", 1)[0] for run in group["cases"])
        shown = [(c, contradictions(records[c]) + twice.get(c, [])) for c in case_ids if c in records]
        odd = next(((c, said) for c, said in shown if said), None)
        others = {check: at for at, other in enumerate(roots, start=1) if at != number + 1 for check in other}
        if odd is not None:
            verdict, why = ResidualVerdict.BUG, f"{odd[0]} {odd[1][0]}"
        elif (tangled := _tangled_with([weighed[c] for c in case_ids], others)) is not None:
            hosts[number] = tangled[1] - 1
            verdict = ResidualVerdict.TANGLED
            why = (f"in each of its {len(case_ids)} case(s) the observation that shows it also differs "
                   f"as {tangled[0]}: no value of its knobs can make that "
                   "observation match while the other difference stays, so the evidence cannot "
                   "say whether a knob explains it; set that difference right first")
        else:
            verdict, why = ResidualVerdict.NO_KNOB, f"the same difference in {len(case_ids)} case(s); {_tried(group['knobs'], tried or {})}"
        count = sum(len((weighed[c].missed - weighed[c].reordered) | weighed[c].set_aside) for c in case_ids)
        found.append(RootCause(str(group["signature"]), tuple(group["knobs"]), case_ids,
                               frozenset(roots[number]), verdict, count,
                               str(group["example"]), why))
    return _folded(found, hosts)


def _folded(found: list[RootCause], hosts: Mapping[int, int]) -> list[RootCause]:
    """The causes with each tangled one moved beside the cause it is tangled with (``hosts``:
    its index to that cause's), following a chain of tangles to a cause that is not; a
    tangle that comes back round stays a cause of its own. Seed 41 v10: a knock-off penalty
    of 325, shown only in replies whose deal score an undeclared marriage already sets wrong,
    is no second mistake of the engine's the evidence can show; the line says so under the
    marriage's cause."""
    def host(index: int) -> int | None:
        seen = {index}
        while index in hosts:
            index = hosts[index]
            if index in seen:
                return None
            seen.add(index)
        return index

    hosted = {index: at for index in sorted(hosts) if (at := host(index)) is not None}
    beside: dict[int, list[RootCause]] = {}
    for index, at in hosted.items():
        beside.setdefault(at, []).append(found[index])
    return [dataclasses.replace(cause, hidden=tuple(beside.get(index, [])))
            for index, cause in enumerate(found) if index not in hosted]


def _tangled_with(found: Sequence[evidence.Evidence], others: Mapping[str, int]) -> tuple[str, int] | None:
    """Another cause's signature (and its number) that differs in the very observation each
    case's first difference is in, the same in every case, or None. A barrel penalty of 255
    and a deal's points counting an undeclared marriage are both in one reply: the penalty
    set right leaves the reply differing, so no evidence weighs it."""
    shared: tuple[str, int] | None = None
    for e in found:
        differing = _impossible_first(e)
        if not differing:
            return None
        key, own = evidence.key_of(differing[0]), _signature(differing[0])
        beside = [_signature(d) for d in differing[1:] if evidence.key_of(d) == key]
        other = next(((s, others[s]) for s in beside if s != own and s in others), None)
        if other is None or (shared is not None and other != shared):
            return None
        shared = other
    return shared


def _signature(d: Finding) -> str:
    """A difference's signature as a root cause names it. A reply's events differ one by one
    (``detail``), where its finding names only the first."""
    found = observe.named(d)
    return signature(Observed.EVENT, found.phase, d.detail) if d.kind is Observed.EVENT else found.signature


def _tried(knobs: Sequence[str], tried: Mapping[str, int]) -> str:
    """What was tried for the knobs deciding a cause, as a claim that holds."""
    counted = [f"{knob}: {tried[knob]}" for knob in knobs if tried.get(knob)]
    if not counted:
        return "fit tried no value of a knob that decides it (no knob decides it, or none applies under these rules)"
    return (f"fit tried each value of its knobs alone from these rules over every case ({', '.join(counted)}), "
            "and none reproduces more observations without breaking a matching case")


def describe(found: Sequence[RootCause], limit: int = 12) -> list[str]:
    lines = []
    for number, cause in enumerate(found[:limit], start=1):
        knobs = ", ".join(cause.knobs[:6]) or "no knob decides it"
        lines += [f"{number}. {cause.verdict}: {cause.signature} ({len(cause.cases)} case(s), {cause.observations} "
                  f"observation(s)); knobs looked at: {knobs}",
                  f"   why: {cause.why}", f"   first: {cause.example}"]
        for hidden in cause.hidden:
            lines += [f"   beside it, {ResidualVerdict.TANGLED}: {hidden.signature} ({len(hidden.cases)} case(s), {hidden.observations} "
                      f"observation(s)); knobs looked at: {', '.join(hidden.knobs[:6]) or 'no knob decides it'}",
                      f"     why: {hidden.why}", f"     first: {hidden.example}"]
    if len(found) > limit:
        lines.append(f"... and {len(found) - limit} more cause(s)")
    return lines


def results(weighed: Mapping[str, evidence.Evidence], titles: Mapping[str, str], exercised: Mapping[str, tuple[str, ...]],
            profile: str) -> list[Result]:
    """One verify-shaped result per case: pass, fail with the residual's findings, or skipped
    when the implementation showed nothing of the case."""
    found = []
    for case_id, e in weighed.items():
        knobs = exercised.get(case_id, ())
        if e.differs:
            findings = observe.findings(e.differing)
            found.append(Result(case_id, titles.get(case_id, ""), profile, "fail", findings[0].message, knobs,
                                findings=findings))
        elif e.checked == 0:
            found.append(Result(case_id, titles.get(case_id, ""), profile, "skipped",
                                "the implementation showed nothing of this case", knobs))
        else:
            found.append(Result(case_id, titles.get(case_id, ""), profile, "pass", "", knobs,
                                unchecked=("steps",) if e.unchecked else ()))
    return found


def report(weighed: Mapping[str, evidence.Evidence], titles: Mapping[str, str], exercised: Mapping[str, tuple[str, ...]],
           profile: str, command: Sequence[str], start_reply: dict[str, Any], exit_code: int) -> dict[str, Any]:
    """The residual as a ``thousand verify --report`` document."""
    found = results(weighed, titles, exercised, profile)
    verdict = reports.judge(found, None, [r.case_id for r in found])
    info = reports.RunInfo(list(command), [profile], start_reply or None, exit_code=exit_code)
    return reports.json_report(found, verdict, info)
