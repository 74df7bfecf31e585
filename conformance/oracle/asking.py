"""fit asks the implementation: a question tells apart two values the corpus cannot.

After the search, a knob can have values that play exactly as the chosen one on every case
of the fit (``FitResult.equivalents``), or a change of another knob that does
(``FitResult.in_its_place``). The corpus cannot say which rule the implementation plays, but
the implementation is at hand. For each such pair of rule sets A (fitted) and B (the
alternative), a *question* is a one-deal transcript on which the reference under A and the
reference under B answer differently: fuzz finds it by playing the two references against
each other (the one under B stands as the implementation), and shrinks and saves it as it
saves any finding. The implementation then plays the question, and the rule set that plays
its first telling observation (the earliest where one reproduces what the implementation
showed and the other does not) is the one it plays. Where the implementation's other
differences come there or before (an observation neither rule set reproduces), the question
is untold and another is asked, up to ``Policy.questions``; a pair no question tells apart
within the budget is reported as such.

The whole decision reads the observations ``evidence.weigh`` finds missed, the same measure
the search uses; nothing here reads numbers or guesses values.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from typing import TYPE_CHECKING

import variants
from spec.vocabulary import EditableRuleValues as Rules  # the plain rules fit edits
from conformance.corpus.transcripts import Transcript, TranscriptError, load
from conformance.harness import findings
from conformance.oracle import residual
from conformance.oracle.evidence import Key
from conformance.oracle.policy import POLICY, Policy
from conformance.harness.runner import REFERENCE_COMMAND

if TYPE_CHECKING:  # fit imports this module; the fitter is only a type here
    from conformance.oracle.fit import Fitter, FitResult


@dataclass(frozen=True)
class Asked:
    """One knob's question and its answer."""

    knob: str
    fitted: str  # the fitted rule set's change, as text ("talon.shown_from_bid: 120")
    other: str  # the alternative's change(s), as text
    question: str | None  # the case id of the question that decided, or None
    answer: str  # "fitted", "other" or "untold"
    missed: tuple[int, int] = (0, 0)  # observations missed on the question under fitted / other
    budget_spent: bool = False  # not asked: asking's time (``Policy.seconds``) was spent
    contradicts: str | None = None  # an earlier question whose answer the other rules miss more of

    def kept(self) -> str:
        """The change the answer keeps, as text ("" when it keeps neither)."""
        return {"fitted": self.fitted, "other": self.other}.get(self.answer, "")

    def text(self) -> str:
        if self.budget_spent:
            return f"{self.other} against {self.fitted}: not asked, asking's time was spent"
        if self.question is None:
            return f"{self.other} against {self.fitted}: no question within the budget tells them apart"
        counts = f"{self.missed[0]} observation(s) missed under {self.fitted}, {self.missed[1]} under {self.other}"
        if self.contradicts is not None:
            return (f"{self.other} against {self.fitted}: {self.question} answers for {self.other} ({counts}), but "
                    f"{self.contradicts} answered against it: neither value plays both answers, so the rules kept stay")
        if self.answer == "untold" and self.missed == (0, 0):  # both play all it showed: the steps between them went unshown
            return (f"{self.other} against {self.fitted}: {self.question} plays them apart, but nothing the "
                    "implementation showed there tells them apart (where they part, it skipped, errored, declared the "
                    "action unsupported or contradicted itself)")
        if self.answer == "untold":
            return (f"{self.other} against {self.fitted}: {self.question} plays them apart, but where they part the "
                    f"implementation plays like neither: its other differences come there or before ({counts})")
        return f"{self.kept()}, asked by {self.question} ({counts})"


def question(profile: str, document: dict[str, Any], fitted_text: str, other_text: str, seed: str,
             folder: Path, policy: Policy = POLICY) -> Path | None:
    """A one-deal transcript on which the reference under ``fitted_text`` (a house file's text)
    and under ``other_text`` answer differently, saved below ``folder``; None if none is found."""
    from conformance.oracle import fuzz  # here: fuzz imports fit's command line helpers, fit imports this module

    with tempfile.TemporaryDirectory(prefix="thousand-ask-") as scratch:
        other = Path(scratch) / "asked.yaml"  # a house file's name is its profile's: house_text names both "asked"
        Path(scratch, "fitted").mkdir()
        fitted = Path(scratch) / "fitted" / "asked.yaml"
        other.write_text(other_text, encoding="utf-8")
        fitted.write_text(fitted_text, encoding="utf-8")
        fitted_document = {**variants.resolve(str(fitted)).to_document(), "profile": document["profile"]}
        command = [*REFERENCE_COMMAND, "--rules", str(other)]
        # proven as any fuzz finding, by the reference under the rules kept so far (``rules``)
        outcome = fuzz.fuzz(command, profile, fitted_document, deals=policy.deals, seed=seed,
                            timeout=policy.timeout, save_to=folder, rules=str(fitted), explain=False)
    return outcome.saved if outcome.findings and outcome.saved is not None else None


def loaded(path: Path, folder: Path) -> Transcript | None:
    try:
        return load(path, folder)
    except TranscriptError:
        return None


def decide(missed_fitted: frozenset[Key], missed_other: frozenset[Key], aside: frozenset[Key] = frozenset()) -> str:
    """The rule set that plays the question's first telling observation: the earliest step
    where one rule set reproduces what the implementation showed and the other does not.
    Where an observation neither reproduces (the implementation's other difference) comes at
    that step or before it, the question is untold: the other difference may have made the
    answer (an engine that adds a bonus to the last trick scores a barrel deal as a minimum
    contract of 140 would, at the same step), as is one whose first telling step goes both ways.
    ``aside``: observations where the implementation contradicts itself (``evidence``), which
    no rules play: its other difference too, though no score counts them."""
    telling = missed_fitted ^ missed_other
    if not telling:
        return "untold"
    first = min(key[:2] for key in telling)
    if any(key[:2] <= first for key in (missed_fitted & missed_other) | aside):
        return "untold"
    there = {key for key in telling if key[:2] == first}
    if there <= missed_other:
        return "fitted"
    return "other" if there <= missed_fitted else "untold"


def keep_questions(questions: Sequence[str], folder: Path, save_to: Path) -> list[Path]:
    """Copy the questions named (case ids) to ``save_to`` (``fit --save-questions``)."""
    copied = []
    for question_id in dict.fromkeys(questions):
        source = folder / f"{question_id}.yaml"
        target = save_to / f"{question_id}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied.append(target)
    return copied


def ask(fitter: Fitter, result: FitResult, house_text: Callable[[Rules], str],
        folder: Path, deadline: float) -> tuple[Rules, list[Asked], list[str]]:
    """Ask every untold alternative of ``result`` (its equivalents, the grid between them for a
    number, and the changes in its place), each against the rules kept so far; returns the rules
    the answers keep, what was asked and every question the implementation played (case ids).
    The questions played are evidence from then on, as the corpus is: an alternative that
    misses more over the corpus and them is not asked. ``house_text`` writes rules as a house
    file; questions are saved below ``folder``; what is left at ``deadline`` (``time.monotonic``)
    is reported as not asked. Every number comes from the fitter's ``Policy``."""
    from conformance.oracle.fit import Change, _value_in, set_knob

    policy = fitter.policy
    rules, found = result.rules, []
    ids = list(result.weighed)

    alternatives: list[tuple[str, list[Change]]] = []
    for knob, values in result.equivalents.items():
        for value in [*values, *grid(_value_in(rules, knob), values, policy, _domain(knob))]:
            alternatives.append((knob, [Change(knob, value)]))
    for knob, others in result.in_its_place.items():
        back = Change(knob, _value_in(fitter._profile_rules, knob))
        alternatives += [(knob, [back, other]) for other in others]
    loose = unpinned(fitter, result)
    for knob, values in {**hidden(fitter, result), **loose}.items():
        alternatives += [(knob, [Change(knob, value)]) for value in values]
    # at the cap, unpinned knobs past it were never put: as open as an untold alternative
    left_open = len(loose) >= policy.unpinned_knobs
    alternatives = _each_knob_first(alternatives)
    hidden_by_others: set[str] = set()
    answered: list[str] = []  # the questions the implementation played: evidence from then on, as the corpus is
    asked_knobs = {knob for knob, _ in alternatives}
    for number, (knob, changes) in enumerate(_then_unpinned(alternatives, lambda: rules, asked_knobs, fitter, result)):
        if time.monotonic() > deadline:
            found.append(Asked(knob, Change(knob, _value_in(rules, knob)).text(),
                               " with ".join(c.text() for c in changes), None, "untold", budget_spent=True))
            continue
        if knob in hidden_by_others:
            continue  # the implementation's other differences came first on its questions: they would again
        other_rules = set_knob(rules, changes)
        told = [*ids, *answered]
        if other_rules == rules or missed_over(fitter, other_rules, told) > missed_over(fitter, rules, told):
            continue  # the same rules, or ones the corpus or an earlier answer already tells from those kept
        fitter.progress(f"asking the implementation: {knob} ({number + 1}/{len(alternatives)})")
        fitted = Change(knob, _value_in(rules, knob)).text()
        asked = _asked(fitter, rules, other_rules, knob, fitted, " with ".join(c.text() for c in changes),
                       house_text, folder, answered)
        found.append(asked)
        if asked.answer == "other":
            rules = other_rules
        elif asked.answer == "untold" and asked.question is not None:
            hidden_by_others.add(knob)
    rules, found = _hunted(fitter, result, rules, found, house_text, folder, left_open, answered)
    return rules, found, answered


def _hunted(fitter: Fitter, result: FitResult, rules: Rules, found: list[Asked], house_text: Callable[[Rules], str],
            folder: Path, left_open: bool, answered: list[str]) -> tuple[Rules, list[Asked]]:
    """Where an alternative stays untold (no question parted the references within their deals,
    the implementation's other differences came first, or asking's time was spent) or some
    unpinned knobs were never put (``left_open``: ``Policy.unpinned_knobs`` reached), the
    implementation itself is played under the rules kept (``fuzz``, the residual's causes
    known): a finding that other knob values explain (``fuzz.Proof.explained``, checked against
    the corpus cases of those knobs) is a question the implementation has answered, whichever
    knobs it changes. Its values are kept when they miss no more over the corpus and the
    questions already answered: a knob they decided cannot move, and one they could not (1k's
    redeal under 18 points ends classic's case of a void player who must trump before the
    play) is decided by the engine's own deal."""
    from conformance.oracle import fuzz
    from conformance.oracle.fit import Change, _value_in, set_knob

    if not left_open and not any(a.answer == "untold" for a in found):
        return rules, found
    fitter.progress("asking the implementation: its own play under the rules kept")
    ids = list(result.weighed)
    known = known_residual(fitter, rules, ids)
    with tempfile.TemporaryDirectory(prefix="thousand-hunt-") as scratch:
        fitted = Path(scratch) / "asked.yaml"  # a house file is named as its profile: house_text names it "asked"
        fitted.write_text(house_text(rules), encoding="utf-8")
        document = {**variants.resolve(str(fitted)).to_document(), "profile": fitter.document["profile"]}
        outcome = fuzz.fuzz(fitter.implementation, fitter.profile_name, document, deals=fitter.policy.hunt_deals, seed="hunt",
                            timeout=fitter.timeout, save_to=folder, rules=str(fitted), max_findings=None, known=known,
                            fallbacks=fitter.fallbacks)
    for cause in outcome.findings:
        case = loaded(cause.saved, folder) if cause.explained and cause.saved is not None else None
        if case is None:
            continue
        other_rules = set_knob(rules, cause.explained)
        told = [*ids, *answered]  # the corpus, and the questions the implementation already answered
        if other_rules == rules or missed_over(fitter, other_rules, told) > missed_over(fitter, rules, told):
            continue  # nothing to change, or what the implementation showed tells its rules from these
        fitter.add_cases([case])
        answered.append(case.id)
        sets = _missed_on(fitter, case.id, rules, other_rules)
        answer, missed = decide(*sets), (len(sets[0]), len(sets[1]))
        other = " with ".join(c.text() for c in cause.explained)
        changed = {c.knob for c in cause.explained}
        found = [a for a in found if a.knob not in changed]
        found += [Asked(knob, Change(knob, _value_in(rules, knob)).text(), other, case.id, answer, missed)
                  for knob in sorted(changed)]
        if answer == "other":
            rules = other_rules
    return rules, found


def known_residual(fitter: Fitter, rules: Rules, case_ids: Sequence[str]) -> findings.Known:
    """The residual's causes over the cases under ``rules``, as fuzz's ``--known`` holds them:
    a difference of one of their signatures is the same finding, wherever it shows."""
    roots = residual.causes(fitter.weigh(rules, case_ids), fitter.impl_records,
                            {c: fitter.by_id[c].knobs for c in case_ids}, fitter.profile_name)
    return findings.Known(tuple(cause for root in roots for cause in (root, *root.hidden)), "fit's residual")


def known_first(fitter: Fitter, rules: Rules, known: findings.Known, questions: Sequence[str]) -> dict[str, str]:
    """Question -> the known cause its first difference under ``rules`` has, of the questions
    whose first difference is one (an engine's bug on the last trick shows in every answer, as
    it showed in the corpus: the same finding, not a rule the answers hold)."""
    found = {}
    for question_id, weighed in fitter.weigh(rules, questions).items():
        first = findings.first_of(weighed.differing)
        cause = known.cause_of(first) if first is not None else None
        if cause is not None:
            found[question_id] = cause
    return found


def _missed_on(fitter: Fitter, case_id: str, rules: Rules,
               other_rules: Rules) -> tuple[frozenset[Key], frozenset[Key], frozenset[Key]]:
    """The implementation's observations on one question that each rule set misses, and those
    set aside under either (where it contradicts itself): ``decide``'s arguments."""
    kept, other = fitter.weigh(rules, [case_id])[case_id], fitter.weigh(other_rules, [case_id])[case_id]
    return kept.missed, other.missed, kept.set_aside | other.set_aside


def missed_over(fitter: Fitter, rules: Rules, case_ids: Sequence[str]) -> int:
    """The implementation's observations the reference under ``rules`` misses over the cases."""
    return sum(len(e.missed) for e in fitter.weigh(rules, case_ids).values())


def _each_knob_first(alternatives: list[tuple[str, list[Any]]]) -> list[tuple[str, list[Any]]]:
    """The alternatives in rounds: every knob's first before any knob's second, each knob's own
    in their order (a number's grid nearest first). ``Policy.seconds`` bounds asking, and twelve
    grid values of one line must not spend it before another knob is asked at all (1k's lock
    from 880 took the time that its uncapped defenders needed)."""
    seen: dict[str, int] = {}
    rounds = []
    for index, (knob, changes) in enumerate(alternatives):
        seen[knob] = seen.get(knob, -1) + 1
        rounds.append((seen[knob], index, (knob, changes)))
    return [item for _round, _index, item in sorted(rounds, key=lambda r: (r[0], r[1]))]


def _then_unpinned(alternatives: list[tuple[str, list[Any]]], rules_now: Callable[[], Rules], asked: set[str],
                   fitter: Fitter, result: FitResult) -> Iterator[tuple[str, list[Any]]]:
    """The alternatives, then, once an answer has changed the rules, the knobs unpinned under
    the rules kept by then that were not asked yet: a change can make a knob matter that was
    inert before (no cap on defenders lets one reach the target, where ``defenders_can_win``
    decides)."""
    from conformance.oracle.fit import Change

    yield from alternatives
    before = result.rules
    while rules_now() != before:
        before = rules_now()
        fresh = {k: v for k, v in unpinned(fitter, replace(result, rules=before)).items() if k not in asked}
        asked.update(fresh)
        for knob, values in fresh.items():
            yield from ((knob, [Change(knob, value)]) for value in values)


def hidden(fitter: Fitter, result: FitResult) -> dict[str, list[Any]]:
    """Knob -> values the corpus tells from the fitted one only in cases the residual holds: a
    value that changes what the implementation's observations show there, and misses no more
    of them over every case. In such a case another difference of the implementation comes
    first (a lone case telling a lock from 900 from one at 800 that also holds a scoring
    difference), so the search took nothing from it: the question is asked instead. The
    knobs are those the residual's cases list as deciding them, in the order of the cases."""
    from conformance.oracle.fit import Change, _value_in, knob_domain, set_knob

    told = {*result.equivalents, *result.in_its_place, *(c.knob for a in result.accepted for c in a.changes)}
    residual_ids = list(result.residual)[:fitter.policy.hidden_cases]
    knobs: list[str] = []
    for case_id in residual_ids:
        knobs += [k for k in fitter.by_id[case_id].knobs if k not in told and k not in knobs]
    now = fitter.weigh(result.rules, residual_ids)
    found: dict[str, list[Any]] = {}
    for knob in knobs[:fitter.policy.hidden_knobs]:
        for value in knob_domain(knob, _value_in(result.rules, knob), fitter.policy):
            other = set_knob(result.rules, [Change(knob, value)])
            if not fitter.consistent(other):
                continue
            then = fitter.weigh(other, residual_ids)
            moved = [c for c in residual_ids if then[c].missed != now[c].missed]
            if moved and sum(len(then[c].missed) for c in moved) <= sum(len(now[c].missed) for c in moved):
                found.setdefault(knob, []).append(value)
    return found


def unpinned(fitter: Fitter, result: FitResult) -> dict[str, list[Any]]:
    """Knob -> values no observation of the implementation tells from the fitted one, of the
    knobs that apply under the fitted rules and that some case of the fit is there to decide
    (its ``knobs`` name them): the implementation's record of each such case ends before the
    step that decides the knob, or matches there under either value; and of the knobs the
    fitted values make apply, which no case of the profile is there to decide. The npm engine 1k redeals
    a hand under 18 points, a rule fit adopts, and so ends every polish case that caps a
    defender at 990: nothing the engine showed pins ``defender_lock.defender_max``, and only a
    question can. Values of knobs fit already changed or listed are asked elsewhere."""
    from conformance.oracle.fit import Change, _value_in, applying_knobs, knob_domain, set_knob

    told = {*result.equivalents, *result.in_its_place, *(c.knob for a in result.accepted for c in a.changes)}
    applying = applying_knobs(fitter.profile, result.rules)
    deciding: dict[str, list[str]] = {}
    for case_id in result.weighed:
        for knob in fitter.by_id[case_id].knobs:
            if knob in applying and knob not in told:
                deciding.setdefault(knob, []).append(case_id)
    # only where a record was cut short: a knob whose every case the implementation played to
    # its end is pinned there, or its values play alike on those cases (spec/equivalent-values.yaml)
    cut = {case_id for case_id, record in fitter.impl_records.items() if record.ended != "complete"}
    deciding = {knob: case_ids for knob, case_ids in deciding.items() if cut.intersection(case_ids)}
    # a knob inert under the profile that the fitted values make apply (no cap on defenders
    # lets one reach the target, where ``defenders_can_win`` decides): no case of the profile
    # names it, so nothing the implementation showed can pin it
    profile_applying = set(applying_knobs(fitter.profile, fitter._profile_rules))
    for knob in applying:
        if knob not in profile_applying and knob not in told:
            deciding.setdefault(knob, [])
    # values that play as the profile's own on every deal (spec/equivalent-values.yaml) need no question
    alike = {(e.knob, json.dumps(e.value)) for e in variants.load_equivalents() if e.profile == fitter.profile.profile}
    found: dict[str, list[Any]] = {}
    for knob, case_ids in deciding.items():
        if len(found) >= fitter.policy.unpinned_knobs:
            break
        now = fitter.weigh(result.rules, case_ids)
        for value in knob_domain(knob, _value_in(result.rules, knob), fitter.policy):
            if (knob, json.dumps(value)) in alike:
                continue
            other = set_knob(result.rules, [Change(knob, value)])
            if fitter.consistent(other) and all(e.missed == now[c].missed for c, e in fitter.weigh(other, case_ids).items()):
                found.setdefault(knob, []).append(value)
    return found


def grid(fitted: Any, values: Sequence[Any], policy: Policy = POLICY,
         domain: tuple[int, int] = (0, 10**6)) -> list[int]:
    """For a number, the values around the fitted one that fit did not list (it tries a few
    values of each knob, not all), below it as above it within the knob's ``domain`` (the
    schema's bounds): on the game's grid of 5 where the fitted value and its equally
    consistent ones are multiples of 5, else of 1; the nearest to the fitted value first,
    the lower of two as near, ``policy.grid`` of them."""
    numbers = [v for v in [fitted, *values] if isinstance(v, int) and not isinstance(v, bool)]
    if len(numbers) < 2 or len(numbers) != len(values) + 1:
        return []
    step = 5 if all(n % 5 == 0 for n in numbers) else 1
    low, high = domain
    found: list[int] = []
    for distance in range(step, step * (policy.grid + 1), step):
        found += [n for n in (fitted - distance, fitted + distance) if low <= n <= high and n not in numbers]
    return found[:policy.grid]


def _domain(knob: str) -> tuple[int, int]:
    """The least and greatest value a number knob's schema allows."""
    from conformance.oracle import candidates  # fit imports this module; candidates is fit's

    return candidates.integer_range(candidates.value_schema(knob))


def _asked(fitter: Fitter, rules: Rules, other_rules: Rules, knob: str, fitted: str, other: str,
           house_text: Callable[[Rules], str], folder: Path, answered: list[str]) -> Asked:
    """Up to ``Policy.questions`` questions of the pair, until one decides. A question that
    answers for the other rules where they miss more of an earlier question's answers than
    the rules kept (``answered``) decides nothing: neither value plays both answers, and the
    contradiction is reported (the search may run again over the answers, ``fit.answered``). A
    question on which both play all the implementation showed ends the asking of the pair. Each
    question played joins ``answered``."""
    last: Asked | None = None
    for attempt in range(fitter.policy.questions):
        seed = f"ask-{other}-{attempt}"
        path = question(fitter.profile_name, fitter.document, house_text(rules), house_text(other_rules), seed,
                        folder, fitter.policy)
        case = loaded(path, folder) if path is not None else None
        if case is None:
            break  # the references never parted within the budget: asking again plays the same odds
        fitter.add_cases([case])
        sets = _missed_on(fitter, case.id, rules, other_rules)
        answer, missed = decide(*sets), (len(sets[0]), len(sets[1]))
        against = _contradicted(fitter, rules, other_rules, answered) if answer == "other" else None
        answered.append(case.id)
        last = Asked(knob, fitted, other, case.id, "untold" if against else answer, missed, contradicts=against)
        # nothing it showed where they part (an action it does not support): another deal
        # parts them at the same kind of step, which it shows no more
        if last.answer != "untold" or against is not None or missed == (0, 0):
            return last
    return last or Asked(knob, fitted, other, None, "untold")


def _contradicted(fitter: Fitter, rules: Rules, other_rules: Rules, answered: Sequence[str]) -> str | None:
    """The first earlier question of which ``other_rules`` miss more observations than ``rules``."""
    now, then = fitter.weigh(rules, answered), fitter.weigh(other_rules, answered)
    return next((c for c in answered if len(then[c].missed) > len(now[c].missed)), None)
