"""Evidence for ``thousand fit``: two observation records weighed observation by observation.

An observation is one thing the implementation showed at one step of a case: the legal set
before the action, the reply to it (acceptance or refusal with class and reason, and its
events) or one field of the state after it. A rule set is scored by the implementation's
observations that the reference, playing the same actions under those rules, does not
reproduce; a case is only a unit for reporting. What the implementation did not show (a
``skipped`` or ``errored`` reply, the rest of a case after an action it declares
unsupported) is no evidence: it is counted apart as unchecked. Nor is an observation where the
implementation contradicts itself (``self_contradictions``: it accepts an action its own legal
set left out, refuses one it offered, leaves nobody to act in a phase where someone must, or
counts more card points than the deck holds; and, across cases, ``residual.inconsistent``:
it answers one situation two ways): the
reference never does so under any rules, so no knob value can reproduce it, and a value that
seems to (a maximum raised to 260 so that a contract of 260 is accepted, while every legal
set of the engine stops at 250) would be a bug written down as a rule. Such an observation is
set aside: it stays among the differences for the residual to call a bug, and no score counts it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

from conformance.harness import diagnosis
from conformance.harness.runner import equal
from conformance.harness.session import Declarations
from conformance.oracle import observe
from conformance.harness.findings import Finding, Observed
from spec.vocabulary import Observation

Key = tuple[int, int, str]  # (deal, step, what): what is Observation.LEGAL, Observation.REPLY or "state.FIELD" (``state_key``)
DECK_POINTS = 120  # the card points of the whole deck: no trick pile holds more
# the phases in which some player is to act: a state of one of them naming nobody leaves the
# game where no rule can (deal_over and match_over name nobody)
ACTING_PHASES = frozenset({"claim", "auction", "exchange", "contract", "play"})


@dataclass(frozen=True)
class Partial:
    """What an implementation's ``start`` reply declares it does not support."""

    actions: frozenset[str] = frozenset()
    state_fields: frozenset[str] = frozenset()
    declared: Declarations | None = None  # the whole start reply, read: events derived, or sent

    @classmethod
    def read(cls, value: Any, declared: Declarations | None = None) -> Partial:
        if not isinstance(value, dict):
            return cls(declared=declared)

        def words(key: str) -> frozenset[str]:
            found = value.get(key)
            return frozenset(str(w) for w in found) if isinstance(found, list) else frozenset()

        return cls(words("actions"), words("state_fields"), declared)

    def unsupported(self, action: str | None) -> bool:
        words = (action or "").split()
        return bool(words) and (words[0] in self.actions or words[-1] in self.actions)


@dataclass(frozen=True)
class Evidence:
    """One case under one rule set: the implementation's observations compared."""

    case_id: str
    checked: int  # observations of the implementation compared with the reference's
    unchecked: int  # transcript steps the implementation did not show (skipped, errored, unsupported)
    differing: tuple[Finding, ...]  # the differences on checked observations, in order
    missed: frozenset[Key]  # the observations that differ and some rule could reproduce
    # the observations that differ where the implementation contradicts itself: no score counts them
    set_aside: frozenset[Key] = frozenset()
    # (deal, step) where the reference left the transcript downstream of a difference
    # (``left_apart``): what the implementation showed after it compares with nothing
    left: tuple[int, int] | None = None
    # (deal, step) of the steps whose player to act holds the same hand on both sides while
    # another player's hand differs (``own_hand_kept``): what that player's action shows does
    # not follow from the other hands
    own_hand_kept: frozenset[tuple[int, int]] = frozenset()
    # replies refused for a reason the reference lists beside the one it names first
    # (``observe.Reply.agrees``): both are right, so no difference the residual reports, but
    # counted among ``missed`` for the search, since rules whose checks come in the engine's
    # order play it more closely (a bid of 100 refused as too low under an opening of 110 from
    # at least, where a forced opening of 110 names the fixed opening first)
    reordered: frozenset[Key] = frozenset()

    @property
    def matches(self) -> bool:
        """Whether every observation some rule could reproduce is reproduced."""
        return not self.missed

    @property
    def differs(self) -> bool:
        """Whether anything differs, set-aside observations included (what the residual reports);
        a refusal for another reason that applies differs in nothing."""
        return bool(self.missed - self.reordered or self.set_aside)

    # What fit reads of one evidence again for every change it weighs against it, worked out once

    @functools.cached_property
    def apart(self) -> int:
        """Plain values apart in the differences (``apart``): what breaks ties between scores."""
        return sum(apart(d) for d in self.differing if key_of(d) not in self.set_aside)

    @functools.cached_property
    def deciding(self) -> tuple[tuple[Finding, tuple[str, ...]], ...]:
        """The first difference of each differing observation (``first_differences``) with its
        deciding knobs (``deciding_knobs``)."""
        return tuple((d, deciding_knobs(d)) for d in first_differences(self) if key_of(d) not in self.set_aside)

    @functools.cached_property
    def clean(self) -> frozenset[Key]:
        """What the case can tell two rule sets apart by: the missed observations up to the
        first step a reply or state field differs, that step's included (all its fields: the
        first to differ), and past it what ``downstream`` does not hold. Past a difference no
        rule reproduces (a card the declarer keeps that it should have given) the hands
        differ, and a contract ceiling that happens to match the wrong hand's marriages is
        no evidence against one that does not."""
        first = min((_position(key) for key in (*self.missed, *self.set_aside) if key[2] != Observation.LEGAL), default=None)
        # past it, an observation is told too when only a bolt counted at its step, or only
        # another player's hand, differs before it (``downstream``)
        return frozenset(key for key in self.missed if first is None or _position(key) <= first
                         or not downstream(key, self))

    @functools.cached_property
    def decided_by(self) -> frozenset[str]:
        """Every knob that decides one of those first differences."""
        return frozenset(knob for _d, knobs in self.deciding for knob in knobs)


def key_of(d: Finding) -> Key:
    """The observation a difference is about."""
    where, kind = d.where, d.kind  # read once: fit asks this of every difference again and again
    if kind is Observed.LEGAL:
        return where["deal"], where["step"], Observation.LEGAL
    if kind is Observed.REFUSAL or kind is Observed.EVENT:
        return where["deal"], where["step"], Observation.REPLY
    if kind is Observed.STATE:
        return where["deal"], where["step"], state_key(d.detail.split(".")[1])
    return d.deal, d.step, kind.value


def state_key(name: str) -> str:
    """The observation of the state field ``name``: ``state.NAME``."""
    return f"{Observation.STATE}.{name}"


def observations(step: observe.StepRecord) -> list[Key]:
    keys = [(step.deal, step.step, Observation.REPLY)] + [(step.deal, step.step, state_key(name)) for name in step.state]
    return keys + ([(step.deal, step.step, Observation.LEGAL)] if step.legal is not None else [])


def _without(step: observe.StepRecord, partial: Partial) -> observe.StepRecord:
    """A step as far as a partial implementation shows it: the legal set without the actions
    it declares unsupported, the state without the fields it does not keep."""
    legal = step.legal
    if legal is not None and partial.actions:
        legal = tuple(a for a in legal if not partial.unsupported(a))
    state = {k: v for k, v in step.state.items() if k not in partial.state_fields} if partial.state_fields else step.state
    return replace(step, legal=legal, state=state) if legal is not step.legal or state is not step.state else step


def transcript_steps(case_steps: int, record: observe.CaseRecord) -> int:
    """Transcript steps (deals included) the record does not reach because it was cut short."""
    return max(0, case_steps - len(record.steps)) if record.broken else 0


def shown(record: observe.CaseRecord, partial: Partial) -> tuple[observe.CaseRecord, int]:
    """The part of the implementation's record that is evidence, and how many of its steps
    are not: a case stops being evidence at the first action declared unsupported (the
    rest of the case needs it). Each step tells which state fields changed
    (``observe.with_changes``): the record is weighed against every replay of its case."""
    steps: list[observe.StepRecord] = []
    for step in record.steps:
        if partial.unsupported(step.action):
            cut = observe.CaseRecord(record.case_id, tuple(steps), "skipped: unsupported")
            return observe.with_changes(cut), len(record.steps) - len(steps)
        steps.append(_without(step, partial))
    return observe.with_changes(observe.CaseRecord(record.case_id, tuple(steps), record.ended)), 0


def self_contradictions(record: observe.CaseRecord) -> list[tuple[tuple[Key, ...], str]]:
    """Where an implementation's record contradicts itself or reaches an impossible state: the
    observations concerned, and what is wrong. The reference's legal set and its replies come
    from one rule, and its tricks from one deck, so none of these is a rule another knob value
    plays. A reply at odds with the legal set takes the state after it along (a contract the
    engine should have refused is fixed in its state)."""
    found: list[tuple[tuple[Key, ...], str]] = []
    for step in record.steps:
        if step.action is not None and step.legal is not None:
            refusal = step.reply.refusal
            offered = step.action in step.legal
            what = ("refused an action its own legal set offered" if refusal is not None and refusal[0] != "unsupported" and offered
                    else "left nobody to act (no legal action) and then accepted one" if step.reply.accepted and not step.legal
                    else "accepted an action its own legal set left out" if step.reply.accepted and not offered else "")
            if what:
                found.append((((step.deal, step.step, Observation.REPLY),
                               *((step.deal, step.step, state_key(name)) for name in step.state)), what))
        phase = step.state.get("phase")
        if phase in ACTING_PHASES and "to_act" in step.state and step.state["to_act"] is None:
            found.append((((step.deal, step.step, state_key("to_act")),), f"left nobody to act in phase {phase}"))
        points = step.state.get("card_points")
        if isinstance(points, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in points) \
                and sum(points) > DECK_POINTS:
            found.append((((step.deal, step.step, state_key("card_points")),),
                          f"card points {points} sum to {sum(points)}, more than the deck's {DECK_POINTS}"))
    return found


def contradicted(record: observe.CaseRecord) -> frozenset[Key]:
    """What is set aside of a record: the observations of its first self-contradiction and
    every observation after it. Once the engine has taken a contract its own legal set left
    out, the rest of the case plays from a state its own rules cannot reach, so no rule is
    shown by it either."""
    found = self_contradictions(record)
    if not found:
        return frozenset()
    first = found[0][0]
    at = _position(first[0])
    later = [key for step in record.steps if (step.deal, step.step) > at[:2] for key in observations(step)]
    return frozenset((*first, *later))


def weigh(reference: observe.CaseRecord, implementation: observe.CaseRecord, partial: Partial = Partial(),
          unreached: int = 0, contradicted: frozenset[Key] = frozenset()) -> Evidence:
    """The implementation's observations the reference reproduces and those it does not.

    ``implementation`` is the record as ``shown`` cuts it; ``unreached`` its unchecked steps;
    ``contradicted`` the observations where it contradicts itself (``self_contradictions``),
    set aside when they differ.
    Where the implementation's record was cut short (skipped, errored, unsupported) the
    reference's is compared only as far; where the reference left the transcript earlier,
    every observation the implementation showed after that point differs."""
    impl_steps = implementation.steps
    ref = reference
    if partial.declared is not None and partial.declared.events_derived:
        ref = observe.shown_record(reference, partial.declared)  # its events read off its states, as the implementation's
    if partial.actions or partial.state_fields:
        ref = replace(ref, steps=tuple(_without(s, partial) for s in ref.steps))
    if implementation.broken:
        ref = replace(ref, steps=ref.steps[:len(impl_steps)], ended=implementation.ended)
    differing = [d for d in observe.compare(ref, implementation) if d.kind is not Observed.RECORD or len(ref.steps) < len(impl_steps)]
    missed = {key_of(d) for d in differing if d.kind is not Observed.RECORD}
    for step in impl_steps[len(ref.steps):]:
        missed.update(observations(step))
    checked = sum(1 + len(step.state) + (step.legal is not None) for step in impl_steps)  # len(observations(step))
    aside = missed & contradicted
    left = left_apart(ref, len(impl_steps), missed)
    reordered = _reordered(ref, implementation) - missed - contradicted
    return Evidence(implementation.case_id, checked, unreached, tuple(differing), frozenset(missed - aside) | reordered,
                    frozenset(aside), left, _own_hand_kept(differing, implementation), reordered)


def _reordered(reference: observe.CaseRecord, implementation: observe.CaseRecord) -> frozenset[Key]:
    """The replies whose refusals agree only for a reason the reference names after its first
    (``Evidence.reordered``)."""
    return frozenset((got.deal, got.step, Observation.REPLY) for want, got in zip(reference.steps, implementation.steps)
                     if got.reply.refusal is not None and want.reply.refusal is not None
                     and want.reply.refusal[1] != got.reply.refusal[1] and want.reply.agrees(got.reply))


def _own_hand_kept(differing: Sequence[Finding], record: observe.CaseRecord) -> frozenset[tuple[int, int]]:
    """The steps whose player to act (``to_act`` before the step) holds the same hand on both
    sides while the hands differ after the step before, in other seats only. A legal set,
    reply or state that follows from that player's action and hand is no more apart than
    before: under a mistake in the give, the defenders hold each other's card and the
    declarer's contract still shows the ceiling of the hand the declarer kept."""
    apart = {(d.deal, d.step): _seats_apart(d.expected, d.actual)
             for d in differing if d.kind is Observed.STATE and d.detail == _HANDS}
    if not apart:
        return frozenset()
    kept = set()
    for before, step in zip(record.steps, record.steps[1:]):
        seats = apart.get((before.deal, before.step))
        actor = before.state.get("to_act")
        if before.deal == step.deal and seats and isinstance(actor, int) and actor not in seats:
            kept.add((step.deal, step.step))
    return frozenset(kept)


def _seats_apart(expected: Any, actual: Any) -> frozenset[int]:
    """The seats whose hands differ between two ``hands`` fields; every seat where they cannot
    be compared seat by seat."""
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return frozenset(seat for seat, (e, a) in enumerate(zip(expected, actual)) if not equal(e, a))
    return frozenset(range(3))


def left_apart(reference: observe.CaseRecord, impl_steps: int, missed: set[Key]) -> tuple[int, int] | None:
    """The step where the reference left the transcript (refused an action the implementation
    took) when a reply or state differed before it: the refusal follows from a situation the
    rules did not reproduce, not from a rule of its own. A trick the engine gives to the wrong
    player under a mistake no knob names leaves the reference, with the right trump, refusing
    the next lead as a card not held; under a wrong trump it follows the engine by chance."""
    if not reference.steps or len(reference.steps) >= impl_steps:
        return None
    last = reference.steps[-1]
    at = (last.deal, last.step, _ORDER[Observation.REPLY])
    earlier = any(key[2] != Observation.LEGAL and _position(key) < at for key in missed)
    return (last.deal, last.step) if earlier else None


def compared(before: Evidence, after: Evidence) -> tuple[frozenset[Key], frozenset[Key]]:
    """What two replays of one case under two rule sets miss, as far as both can be compared:
    up to the step where either reference left the transcript downstream of a difference
    (``Evidence.left``). Past it one replay shows nothing to compare with, and counting the
    implementation's every later observation as missed would charge a rule for the situation
    an earlier difference made: the right trump would lose a whole case to a mistake in who
    wins the trick, which a wrong trump imitates there by chance. Both sides are cut at the
    same step, so a rule that leaves the transcript early does not hide later differences."""
    cut = min((e.left for e in (before, after) if e.left is not None), default=None)
    if cut is None:
        return before.missed, after.missed
    return _up_to(before.missed, cut), _up_to(after.missed, cut)


def _up_to(keys: frozenset[Key], cut: tuple[int, int]) -> frozenset[Key]:
    return frozenset(key for key in keys if key[:2] <= cut)


_HANDS, _BOLTS = state_key("hands"), state_key("bolts")
_ORDER: dict[str, int] = {Observation.LEGAL: 0, Observation.REPLY: 1}  # within a step: the legal set, then the reply, then the state fields (2)


def _position(key: Key) -> tuple[int, int, int]:
    return key[0], key[1], _ORDER.get(key[2], 2)


def downstream(key: Key, found: Evidence) -> bool:
    """Does ``found`` show the two games apart at or before the observation ``key``: a reply
    or state field differing (or set aside) at an earlier step, or at the same step no later
    than it? Then what ``key`` shows follows from a situation the rules under test did not
    reproduce, and matching it is no evidence for them: a declarer's total rounded to 10 can
    set right a score whose raw points (an undeclared marriage counted) are still wrong.
    Differing legal sets do not set the games apart: the same actions are played either way,
    and neither does a bolt counted at the same step (``_bolt_count_only``), nor another
    player's hand for what a player who holds the same hand does (``own_hand_kept``)."""
    at = _position(key)
    kept = key[:2] in found.own_hand_kept and key[2] != _HANDS
    return any(other != key and other[2] != Observation.LEGAL and _position(other) <= at
               and not (other[:2] == key[:2] and _bolt_count_only(other, found))
               and not (kept and other[2] == _HANDS)
               for other in (*found.missed, *found.set_aside))


def _bolt_count_only(key: Key, found: Evidence) -> bool:
    """Is the difference at ``key`` in the bolt count alone: ``state.bolts``, or a reply whose
    events are the same once the ``bolt`` events are left out? A bolt is counted after the
    deal's score and nothing of that step reads it (its penalty is an event of its own,
    ``bolt_penalty``, so a penalty that differs is no count only). A score set right beside
    it is evidence: seed 41 v7, whose engine counts a defender's 2 points as a bolt, shows
    a declarer's total rounded to 5 in the scores beside that extra bolt, and nowhere else."""
    if key[2] == _BOLTS:
        return True
    replies = [d for d in found.differing if key_of(d) == key]
    return bool(replies) and all(d.kind is Observed.EVENT and equal(*(_without_bolts(side) for side in (d.expected, d.actual)))
                                 for d in replies)


def _without_bolts(said: Any) -> Any:
    """A reply as a difference holds it (``{"events": [...]}``) without its ``bolt`` events."""
    events = _events(said)
    if events is None:
        return said
    return [e for e in events if not (isinstance(e, dict) and e.get("type") == "bolt")]


def clean_fixes(before: Evidence, after: Evidence) -> list[Key]:
    """The observations ``after`` reproduces that ``before`` did not, and that are not
    ``downstream`` of a difference ``after`` still shows."""
    return [key for key in before.missed - after.missed if not downstream(key, after)]


def missed(evidence: Iterable[Evidence]) -> int:
    """The score of a rule set: observations it fails to reproduce (lower is better)."""
    return sum(len(e.missed) for e in evidence)


def deciding_knobs(d: Finding) -> tuple[str, ...]:
    """The knobs spec/diagnosis.yaml says decide the observation (those of what it reads after)."""
    found = observe.named(d)  # the runner's own lookup, shared with verify
    direct, upstream = found.knobs, found.upstream
    return direct + upstream


def named_knobs(d: Finding) -> list[tuple[str, ...]]:
    """For an event list, the knobs spec/diagnosis.yaml names for each event type only one
    side sent, not those of what it reads after (``see``): an engine's extra ``dump`` event
    names the dump section's three, where the deal's score beside it, the observation's
    finding, names some forty."""
    if d.kind is not Observed.EVENT:
        return []
    wanted, sent = (_event_types(side) for side in (d.expected, d.actual))
    return [diagnosis.decided("event", kind)[0] for kind in sorted(wanted ^ sent)]


def _event_types(reply: Any) -> set[str]:
    """The types of the events of a reply as a difference holds it."""
    return {str(e.get("type")) for e in _events(reply) or () if isinstance(e, dict)}


def _events(said: Any) -> list[Any] | None:
    """The event list of a reply as a difference holds it (``{"events": [...]}``), or None
    (a refusal, or a reply without one)."""
    events = said.get("events") if isinstance(said, dict) else None
    return events if isinstance(events, list) else None


def first_differences(evidence: Evidence) -> list[Finding]:
    """One difference per differing observation, the first of each."""
    seen: set[Key] = set()
    found = []
    for d in evidence.differing:
        key = key_of(d)
        if key not in seen:
            seen.add(key)
            found.append(d)
    return found


def count_steps(deals: Sequence[dict[str, Any]]) -> int:
    """Steps of a case as a record counts them: one for each deal, one for each action."""
    return sum(1 + len(deal["steps"]) for deal in deals)


def apart(d: Finding) -> int:
    """Plain values apart in one difference; for a legal set, the actions only one side offers:
    four aces worth 30 under no ceiling offer bids up to the maximum of 530 where the engine's
    stop at 525, one bid apart, not the six of the reference's stop at 495 before."""
    if d.kind is Observed.LEGAL and isinstance(d.expected, (list, tuple)) and isinstance(d.actual, (list, tuple)):
        return len({str(a) for a in d.expected} ^ {str(a) for a in d.actual})
    return values_apart(d.expected, d.actual)


def values_apart(expected: Any, actual: Any) -> int:
    """How many plain values differ between two replies or states, field by field."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return sum(values_apart(expected.get(k), actual.get(k)) for k in set(expected) | set(actual))
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)) and len(expected) == len(actual):
        return sum(values_apart(e, a) for e, a in zip(expected, actual))
    return 0 if expected == actual else 1
