"""Root causes of failures: a signature for each failed check, the knobs that decide it, and
groups of failing runs that share a signature (issue 11).

A signature is built from the check that failed, never from the case's own labels: its kind
(``legal``, ``refusal``, ``unchanged``, ``event``, ``state``, ``to_act``, ``refused``), the
phase, and the difference normalised so that the same rule mistake met in a hundred deals
reads the same ("legal[play]: unexpected cards that follow without beating"). The knobs come
from ``spec/diagnosis.yaml``, expanded through the profile schema's rule sections.
"""

from __future__ import annotations

import functools
import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from conformance.harness.findings import Finding, Observed, broken_signature
from spec import PROTOCOL_SCHEMA_DIR, SPEC_DIR
from spec.vocabulary import RANKS, Phase
from variants.loader import read_document
from variants.schema import rule_sections

DIAGNOSIS_FILE = SPEC_DIR / "diagnosis.yaml"
AMOUNT_WORDS = ("bid", "contract")
# What each category of a play action means, in the words a signature shows.
PLAY_WORDS = {
    "lead": "leads", "marriage": "declare a marriage", "aces": "declare four aces",
    "beat": "follow and beat the card winning the trick", "no_beat": "follow without beating the card winning the trick (the duty to beat)",
    "under_trump": "follow under a winning trump", "trump": "trump", "overtrump": "overtrump",
    "undertrump": "trump under a higher trump", "off_suit_holding_suit": "leave the suit led while holding it",
    "discard_void": "discard while void in the suit led",
}


# --- knobs -----------------------------------------------------------------------------

@functools.cache
def _table() -> dict[str, Any]:
    data, _ = read_document(DIAGNOSIS_FILE)  # the project's one YAML reader
    return data if isinstance(data, dict) else {}


def expand(entries: Iterable[str]) -> tuple[str, ...]:
    """Knob names, those that decide the check first (see ``split``)."""
    direct, upstream = split(entries)
    return direct + upstream


def split(entries: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Knob names, as (the knobs that decide the check, those upstream of it): a ``section``
    entry stands for every knob the schema has in it, and ``see kind.key`` for the knobs of
    that other entry, upstream (an event that follows from the deal's score is decided by
    whatever decides ``state.scores`` too)."""
    sections = rule_sections()
    direct: list[str] = []
    upstream: list[str] = []
    for entry in entries:
        if entry.startswith("see "):
            upstream.extend(name for name in knobs_for(*entry[4:].split(".")) if name not in upstream)
            continue
        section, _, knob = entry.partition(".")
        names = [f"{section}.{knob}"] if knob else [f"{section}.{name}" for name in sections.get(section, [])]
        direct.extend(name for name in names if name not in direct)
    return tuple(direct), tuple(name for name in upstream if name not in direct)


def knobs_for(kind: str, *keys: str) -> tuple[str, ...]:
    """The knobs of the most specific entry ``kind.keys...`` in spec/diagnosis.yaml."""
    direct, upstream = decided(kind, *keys)
    return direct + upstream


@functools.cache  # of the table's entries, read once each (fit asks for the same ones thousands of times)
def decided(kind: str, *keys: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(direct, upstream) knobs of the most specific entry ``kind.keys...`` in spec/diagnosis.yaml."""
    table = _table()
    node: Any = table.get(kind)
    if node is None:
        return split(table.get("default") or [])
    best: Any = node.get("default", []) if isinstance(node, dict) else node
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            break
        node = node[key]
        best = node.get("default", []) if isinstance(node, dict) else node
    return split(best if isinstance(best, list) else [])


# --- signatures --------------------------------------------------------------------------

def action_phase(action: str) -> str:
    """The phase an action belongs to (DESIGN.md, Action strings)."""
    word = action.split(" ", 1)[0]
    return {"bid": Phase.AUCTION, "pass": Phase.AUCTION, "give": Phase.EXCHANGE, "contract": Phase.CONTRACT,
            "play": Phase.PLAY, "redeal": Phase.CLAIM, "no_redeal": Phase.CLAIM}.get(
        word, Phase.EXCHANGE if word == "give_up" else "unknown")


def _amount(action: str) -> int | None:
    parts = action.split()
    return int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else None


def _amount_bounds(word: str, others: Sequence[str]) -> tuple[int, int] | None:
    """The lowest and highest amount of the other side's ``word`` actions, or None when it has none."""
    amounts = [a for a in (_amount(o) for o in others if o.startswith(word + " ")) if a is not None]
    return (min(amounts), max(amounts)) if amounts else None


def _amount_category(action: str, bounds: tuple[int, int] | None) -> str:
    """``bid_above``/``bid_below``/``bid_between``: where an amount lies against the other
    side's (``bounds``, from ``_amount_bounds``)."""
    word, amount = action.split(" ", 1)[0], _amount(action)
    if amount is None or bounds is None:
        return f"{word}_above" if amount is not None else word
    low, high = bounds
    if amount > high:
        return f"{word}_above"
    if amount < low:
        return f"{word}_below"
    return f"{word}_between"


def _card(text: str) -> tuple[str, str]:
    return text[:-1], text[-1]


def _beats(card: str, best: str, led: str, trump: str | None) -> bool:
    (rank, suit), (best_rank, best_suit) = _card(card), _card(best)
    if suit == best_suit:
        return RANKS.index(rank) < RANKS.index(best_rank)
    return suit == trump or (suit == led and best_suit not in (led, trump))


def _play_category(action: str, state: Mapping[str, Any] | None) -> str:
    parts = action.split()
    if parts[-1] in ("marriage", "aces"):
        return parts[-1]
    trick = (state or {}).get("trick")
    if not isinstance(trick, list) or not trick or len(parts) < 2:
        return "lead"
    try:
        cards = [str(entry["card"]) for entry in trick]
        led, trump = cards[0][-1], state.get("trump") if state else None
        best = cards[0]
        for card in cards[1:]:
            if _beats(card, best, led, trump):
                best = card
        hand = (state or {}).get("hands", [])[int(state["to_act"])] if state else []
    except (KeyError, TypeError, ValueError, IndexError):
        return "lead"
    card = parts[1]
    suit = card[-1]
    holds_suit = isinstance(hand, list) and any(isinstance(c, str) and c.endswith(led) for c in hand)
    if suit != led and holds_suit:
        return "off_suit_holding_suit"  # a trump or a discard alike: following suit is a fixed rule
    if suit == led:
        if best[-1] != led:
            return "under_trump"
        return "beat" if _beats(card, best, led, trump) else "no_beat"
    if suit == trump:
        if best[-1] == trump:
            return "overtrump" if _beats(card, best, led, trump) else "undertrump"
        return "trump"
    return "discard_void"


def _categories(actions: Sequence[str], others: Sequence[str], state: Mapping[str, Any] | None) -> list[str]:
    """The categories of ``actions``, sorted; the other side's amounts are read once per word
    (a bid legal set holds dozens of amounts, each placed against all of them)."""
    bounds: dict[str, tuple[int, int] | None] = {}
    found: set[str] = set()
    for action in actions:
        word = action.split(" ", 1)[0]
        if word in AMOUNT_WORDS:
            if word not in bounds:
                bounds[word] = _amount_bounds(word, others)
            found.add(_amount_category(action, bounds[word]))
        else:
            found.add(_play_category(action, state) if word == "play" else word)
    return sorted(found)


def _describe_category(category: str) -> str:
    if category in PLAY_WORDS:
        return f"cards that {PLAY_WORDS[category]}" if category not in ("marriage", "aces", "lead") else PLAY_WORDS[category]
    word, _, where = category.rpartition("_")
    if word in AMOUNT_WORDS and where in ("above", "below", "between"):
        side = {"above": "above the highest", "below": "below the lowest", "between": "between the"}[where]
        return f"{word}s {side} other amounts"
    return category


def legal_finding(phase: str, expected: Sequence[str], actual: Sequence[str],
                  state: Mapping[str, Any] | None) -> Finding:
    """The finding of a legal-set difference (what and knobs), from what is missing and unexpected."""
    missing = sorted(set(expected) - set(actual))
    unexpected = sorted(set(actual) - set(expected))
    parts: list[str] = []
    categories: list[str] = []
    offered = sorted(set(actual) & set(expected))  # where a missing amount lies is seen against what was offered
    for label, actions, others in (("missing", missing, unexpected or offered or expected), ("unexpected", unexpected, expected)):
        found = _categories(actions, others, state)
        categories += found
        parts += [f"{label} {_describe_category(c)}" for c in found]
    knobs: list[str] = []
    for category in categories or ["default"]:
        # a redeal claim offered (or not) in the auction is a claim-phase rule
        where = Phase.CLAIM if category in ("redeal", "no_redeal") else phase
        knobs += [k for k in knobs_for("legal", where, category) if k not in knobs]
    return Finding(Observed.LEGAL, phase, "; ".join(parts), tuple(knobs), expected=list(expected), actual=list(actual))


def event_label(event: Any) -> str:
    """``barrel_left(failed_contract)``: the type, with its reason where it has one."""
    if not isinstance(event, dict):
        return repr(event)[:40]
    label = str(event.get("type"))
    return label + (f"({event['reason']})" if isinstance(event.get("reason"), str) else "")


@functools.cache
def _event_fields() -> dict[str, tuple[str, ...]]:
    """Each event type's fields in the order spec/schema/protocol/common.json requires them,
    which is the order they are derived in (``deal_scored``: points, then deltas, then scores)."""
    event = json.loads((PROTOCOL_SCHEMA_DIR / "common.json").read_text(encoding="utf-8"))["$defs"]["event"]
    return {branch["if"]["properties"]["type"]["const"]: tuple(branch["then"].get("required", ()))
            for branch in event.get("allOf", ()) if "const" in branch.get("if", {}).get("properties", {}).get("type", {})}


def first_field(kind: str, fields: Iterable[str]) -> str:
    """The field a difference in an event is named by: the first in the order the event's fields
    are derived, so that one mistake reads the same whether it carries on into the later fields
    or not (card points counted wrong change the deltas in one deal and not in the next, where
    rounding swallows them: both are ``deal_scored differs in points``)."""
    order = _event_fields().get(kind, ())
    # no field at all where two events differ only as wholes (the values compare equal field by field)
    return min(fields, key=lambda name: (order.index(name) if name in order else len(order), name), default="")


def event_finding(phase: str, wanted: Mapping[str, Any], actual: Sequence[Any], same: Any) -> Finding:
    """The finding (what, direct and upstream knobs) of an expected event not found: when the
    implementation sent an event of that type (and reason), the fields that differ name the
    mistake, named by the first of them (``first_field``: "trick_won differs in points"); the
    knobs are those of every field that differs. Otherwise the event is missing."""
    kind = str(wanted.get("type"))
    label = event_label(wanted)
    alike = [e for e in actual if isinstance(e, dict) and event_label(e) == label]
    for event in alike:
        fields = sorted(k for k, v in wanted.items() if k != "type" and not (k in event and same(v, event[k])))
        if fields:
            direct: list[str] = []
            upstream: list[str] = []
            for name in fields:
                own, above = decided("event", kind, name)
                direct += [k for k in own if k not in direct]
                upstream += [k for k in above if k not in upstream]
            return Finding(Observed.EVENT, phase, f"{label} differs in {first_field(kind, fields)}", tuple(direct),
                           tuple(k for k in upstream if k not in direct))
    reason = wanted.get("reason")
    return Finding(Observed.EVENT, phase, f"missing {label}", *decided("event", kind, *([reason] if isinstance(reason, str) else [])))


def refused_finding(phase: str, action: str, reason: str) -> Finding:
    """The finding (what, direct and upstream knobs) of an action the transcript plays that the
    implementation refused: looked up by the reason under ``refused``, else ``refusal``."""
    table = "refused" if knobs_for("refused", reason) else "refusal"
    return Finding(Observed.REFUSED, phase, f"the transcript's {action.split(' ', 1)[0]} ({reason})", *decided(table, reason))


def refusal_finding(phase: str, expected: str, got: str | None) -> Finding:
    """The finding (what and knobs) of a refusal the transcript expects that did not come as expected:
    the action was accepted (``got`` None) or refused for another reason. Refused for another
    reason, the rule behind that reason decides it as much as the expected one: a bid of 310
    refused as above the ceiling where the transcript refuses it as a jump shows a maximum
    bid below 310 as much as a rule on jumps. The expected reason's knobs come first."""
    direct, upstream = decided("refusal", expected)
    if got is not None and got != expected:
        own, above = decided("refusal", got)  # the rule that refuses so, as the transcript's reasons are
        direct += tuple(k for k in own if k not in direct)
        upstream = tuple(dict.fromkeys(k for k in upstream + above if k not in direct))
    return Finding(Observed.REFUSAL, phase, f"expected {expected}, {'accepted' if got is None else 'got ' + got}", direct, upstream)


def refusal_label(reply_refusal: Any) -> str:
    if isinstance(reply_refusal, dict):
        return str(reply_refusal.get("reason"))
    return "no refusal"


# --- groups ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Failure:
    """One failing run as the grouping reads it: its findings, the signature and
    message of a run that failed without one (error, timeout), and the knobs the case is
    known to exercise (its ``knobs``: those whose value changes its outcome)."""

    run: str  # case-id@profile
    findings: Sequence[Finding]
    fallback: str = ""
    message: str = ""
    exercised: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Run:
    run: str
    signature: str
    direct: tuple[str, ...]  # the knobs that decide the check
    upstream: tuple[str, ...]  # the knobs that decide what it reads
    message: str
    exercised: frozenset[str] = frozenset()

    @property
    def knobs(self) -> tuple[str, ...]:
        return self.direct + self.upstream

    @property
    def suspects(self) -> tuple[str, ...]:
        """The knobs that decide the check and that the case is known to exercise; all the
        deciding knobs when none is (a rule no knob names, or a case without that list)."""
        both = tuple(k for k in self.knobs if k in self.exercised)
        return both or self.knobs


def _first(failure: Failure) -> _Run:
    if not failure.findings:
        return _Run(failure.run, failure.fallback, (), (), failure.message)
    return _from(failure, failure.findings[0])


def _from(failure: Failure, finding: Finding) -> _Run:
    return _Run(failure.run, finding.signature, finding.knobs, finding.upstream, finding.message,
                frozenset(failure.exercised))


DOMINANT_SHARE = 0.8  # a knob that decides this share of the failing runs' checks is one rule seen through them all


def _proven(run: _Run, passed: Mapping[str, int]) -> tuple[str, ...]:
    """The knobs that decide the run's check, that its case exercises and that no passing
    run's case exercises: every case that plays them fails, a likely difference."""
    return tuple(k for k in run.knobs if k in run.exercised and not passed.get(k, 0))


def _cover(runs: Sequence[_Run], passed: Mapping[str, int]) -> list[list[_Run]]:
    """Runs that name knobs, split greedily into causes.

    The same broken rule shows through several checks (a missing ``barrel_left`` event in one
    transcript, ``state.scores`` in another that only checks scores); the knobs of those
    checks meet in the rule. So when a knob decides the checks (or what they read) of at
    least 80% of the runs, and it is no proven difference (some passing case plays it, or
    no failing case does: it is the rule a mistake sits in, not a value every case of which
    fails), it gathers every run that names it. Otherwise the runs stay apart by what their
    cases prove (issue 22): a proven knob (see ``_proven``) gathers only the runs that prove
    it, so a knob that decides many checks (the marriage values decide the ceiling, the
    scores and the marriage events) cannot swallow a second difference whose cases never
    play it; a run that proves no knob is gathered only with other such runs, by the knob
    most of them name. Ties go to the knob most of the runs' cases exercise, then the one
    that decides most of their checks directly (not only what the checks read).
    """
    pending = list(runs)
    found: list[list[_Run]] = []
    while pending:
        reach = Counter(k for r in pending for k in set(r.knobs))
        suspected = Counter(k for r in pending for k in set(r.suspects))
        direct = Counter(k for r in pending for k in set(r.direct))
        proofs = [_proven(r, passed) for r in pending]
        shown = {k for knobs in proofs for k in knobs}

        def best(counts: Counter[str]) -> str:
            return min(counts, key=lambda k: (-counts[k], -reach[k], -suspected[k], -direct[k], k))

        rule = Counter({k: n for k, n in reach.items() if k not in shown})
        if rule and reach[best(rule)] >= DOMINANT_SHARE * len(pending):
            knob = best(rule)
            taken = [knob in r.knobs for r in pending]
        else:
            gatherers = [proof or r.knobs for r, proof in zip(pending, proofs)]
            knob = best(Counter(k for knobs in gatherers for k in set(knobs)))
            proven = knob in shown
            taken = [knob in knobs and bool(proof) == proven for knobs, proof in zip(gatherers, proofs)]
        found.append([r for r, take in zip(pending, taken) if take])
        pending = [r for r, take in zip(pending, taken) if not take]
    return found


def _shared_knobs(members: Sequence[_Run], headline: str, passed: Mapping[str, int]) -> list[str]:
    """The knobs to look at, best first; a knob is listed when at least half the members
    name it. The knobs that decide a member's check come before those only upstream of it
    (what decides the points a bolt reads): the check's own rule is the likelier mistake,
    and upstream knobs are many. Within each, first the likeliest by the cases
    (spectrum-based fault localisation, the Ochiai score): a knob the failing members'
    cases exercise, among those deciding their checks, and that few passing runs exercise;
    then those that decide the headline check, then those that decide most checks
    directly. Ties keep the headline's own order."""
    reach = Counter(k for r in members for k in set(r.knobs))
    suspected = Counter(k for r in members for k in r.exercised.intersection(r.knobs))
    direct = Counter(k for r in members for k in set(r.direct))
    own = next(r.direct for r in members if r.signature == headline)
    order = {k: i for i, k in enumerate(dict.fromkeys([*own, *(k for r in members for k in r.knobs)]))}
    named = [k for k, n in reach.items() if 2 * n >= len(members)]

    def ochiai(knob: str) -> float:
        failing = suspected[knob]
        return failing / math.sqrt(len(members) * (failing + passed.get(knob, 0))) if failing else 0.0

    return sorted(named, key=lambda k: (k not in direct, -round(ochiai(k), 9), k not in own, -direct[k], -reach[k], order[k]))


def _group(members: Sequence[_Run], passed: Mapping[str, int]) -> dict[str, Any]:
    """A root cause; ``passed`` (knob -> passing runs whose case exercises it) orders its knobs."""
    checks = Counter(r.signature for r in members)
    ranked = sorted(checks, key=lambda s: (-checks[s], s))
    # the headline is the most telling of the common checks: among those seen in at least a
    # quarter of the runs, the one decided by the fewest knobs (a missing barrel_left event
    # says more than state.scores), then the commonest
    breadth = {s: min(len(r.direct) for r in members if r.signature == s) for s in checks}
    common = [s for s in ranked if 4 * checks[s] >= len(members)] or ranked[:1]
    head = min(common, key=lambda s: (breadth[s], ranked.index(s)))
    example = next(r for r in members if r.signature == head)
    knobs = _shared_knobs(members, head, passed)
    return {"signature": head, "knobs": knobs, "count": len(members), "first": checks[head],
            "checks": [{"signature": s, "count": checks[s]} for s in ranked],
            "cases": [r.run for r in members], "example": f"{example.run}: {example.message}"}


def _grouped(runs: Sequence[_Run], passed: Mapping[str, int]) -> list[dict[str, Any]]:
    with_knobs = [r for r in runs if r.knobs]
    found = [_group(members, passed) for members in _cover(with_knobs, passed)]
    by_signature: dict[str, list[_Run]] = {}
    for r in runs:
        if not r.knobs:  # a check no knob decides (an error, a fixed rule): its own cause
            by_signature.setdefault(r.signature, []).append(r)
    found += [_group(members, passed) for members in by_signature.values()]
    return sorted(found, key=lambda g: (-g["count"], g["signature"]))


def checks_of(cause: Mapping[str, Any]) -> set[str]:
    """The signatures a root cause (of ``groups``, or a report's) gathers, its own included."""
    return {str(c.get("signature")) for c in cause.get("checks") or ()} | {str(cause.get("signature"))}


def groups(failures: Iterable[Failure], passed: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Root causes of the failing runs, largest first; every run is in exactly one.

    A run is judged by its first finding, the earliest wrong answer: later ones are often
    its consequences (see ``further``). Runs whose first checks name knobs are gathered by
    a knob they name (one rule seen through several checks is one cause), but a knob that
    no passing case plays gathers only the runs whose cases play it (see ``_cover``); the
    group's ``knobs`` are those at least half its members name, the likeliest first, its
    ``checks`` the signatures it gathers, ``signature`` the most telling of them. Runs
    whose check names no knob group by signature. ``passed`` counts, per knob, the passing
    runs whose case exercises it (a knob many passing cases exercise is less likely broken).
    """
    return _grouped([_first(failure) for failure in failures], passed or {})


def further(failures: Iterable[Failure], root_causes: Sequence[Mapping[str, Any]],
            passed: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Differences after the first in the same runs that their root cause cannot explain
    (no knob in common with it): a second mistake the first one would otherwise hide."""
    cause_of = {run: set(group["knobs"]) for group in root_causes for run in group["cases"]}
    later: list[_Run] = []
    for failure in failures:
        explained = cause_of.get(failure.run, set())
        for finding in failure.findings[1:]:
            candidate = _from(failure, finding)
            if candidate.knobs and not explained.intersection(candidate.knobs):  # else a consequence of the root cause
                later.append(candidate)
                break  # the next cause after the root one; a third shows once the second is fixed
    return _grouped(later, passed or {})


outcome_signature = broken_signature  # the signature of a run with no finding (error, timeout, case bug)
