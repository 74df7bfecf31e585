"""``thousand fuzz``: differential random play against the reference under the same rules.

Each trial is seeded from ``--seed`` and its number: a random match state a real match can
reach (scores near the target, the barrel, the 800 line and the dump score, two seats level,
bolts and give-ups one short of a penalty or the limit, seats on the barrel one attempt short),
then one to three deals, a third of them stacked by suit or rank (voids, long trumps, four of
a kind), played with legal actions biased to what shows a rule (low bids and contracts, the
amounts the rules name, passing, giving up, declaring, side suits led after a trump is set,
each seat's play style) and, now and then, a random illegal one. The implementation and the
reference (a subprocess, never imported) play in lockstep; after every action the legal sets, the
replies (refusal class and reason, events) and the states are compared. A trial's deal
is played by the reference alone in one request where it declares the ``playout`` extension
(its actions chosen by the rule docs/protocol.md writes out, with the same biases; a
position's plans go with the request), and the implementation then gets those actions (see
``Pair.played_out``). The first
divergence is shrunk (the shortest prefix, the fewest deals, no needless refused actions,
the simplest match state) and saved as a schema-valid transcript holding the reference's
values, which passes against the reference and fails against the implementation.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import itertools
import queue
import random
import shlex
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TypeVar

import yaml

import variants

from spec.vocabulary import DECK, ENDED, RANKS, SUITS, ExitCode, Phase
from conformance.harness import findings, outputs, process, reports, runner
from conformance.harness.findings import Finding, Observed
from conformance.harness.steps import base_name
from conformance.oracle.chances import CHANCES
from conformance.oracle import batch, house, observe, positions
from conformance.terminal import clear_progress, printable, terminal_progress
from conformance.oracle.fit import Change, Fitter, command_of, resolved_option
from conformance.harness.session import Declarations, Skipped
from conformance.harness.process import Answer, Posted, ProtocolFailure
from conformance.harness.runner import DEFAULT_MATCH_STATE, REFERENCE_COMMAND, equal
from conformance.harness.session import short as _short
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, TranscriptError, discover, load

MAX_STEPS = 120  # far above a real deal; an engine that never ends a deal diverges long before
PLAYOUT = "playout"  # the reference's extension: a deal's actions chosen and played in one request
MOST_DEALS = 3  # the most deals a random trial plays (``trial_plan``)
# seconds the reference may take per reply, whatever --timeout gives the implementation: the
# reference is trusted, and a playout (a whole deal in one reply) takes longer than a step, so
# a --timeout just above the minimum timed it out and blamed it (issue 52 row 12)
REFERENCE_TIMEOUT = 10.0


def reference_timeout(timeout: float) -> float:
    """The reference's timeout beside the implementation's: never shorter than the default."""
    return max(timeout, REFERENCE_TIMEOUT)


@dataclass(frozen=True)
class Deal:
    dealer: int
    hands: tuple[tuple[str, ...], ...]
    talon: tuple[str, ...]
    actions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """What a trial plays: the match state and the deals with their actions."""

    match: dict[str, Any]
    deals: tuple[Deal, ...]
    position: str = ""  # what a position built for one rule lays out (conformance.oracle.positions); "" for random play


@dataclass(frozen=True)
class Counterexample:
    """A scenario and the findings it shows: a trial cut at the step where the implementation
    first answered otherwise (its divergence), with what ``observe.compare`` found there."""

    scenario: Scenario  # cut right after the diverging action
    findings: tuple[Finding, ...]  # unnamed, as observe's comparison reads them (``observe.named``)

    @property
    def finding(self) -> Finding:
        """What the divergence is signed by: its first finding in the order a step is read
        (the legal set, the reply and its events in the order they happen, then the state
        fields), as verify signs the saved transcript (a missing ``barrel_left`` before the
        ``state.next_dealer`` the same deal end derives)."""
        return observe.findings(self.findings)[0]


@dataclass
class NewCause:
    """A root cause fuzz met that no known cause explains: its first finding's identity, the
    divergence that showed it first (shrunk), how often it came, and whether its transcript
    reproduces it under the command fuzz prints (``proof``: why not; "" when it does)."""

    finding: findings.Finding
    divergence: Counterexample
    trial: int
    deal: int  # the deal of the run it was first seen in, from 1
    count: int = 1
    saved: Path | None = None
    shrink_steps: int = 0
    shrunk: bool = False
    proof: str = ""
    unsaved: str = "no --save"  # why no transcript was saved (when none was)
    best: Counterexample | None = None  # while it is shrunk: the smallest divergence so far
    explained: tuple[Change, ...] = ()  # the knob values that play its transcript as the implementation did
    explain_stopped: str = ""  # why the search for them stopped before its end ("": it did not)
    saved_unfinished: Path | None = None  # saved when an interruption stopped its shrinking or proof

    @property
    def signature(self) -> str:
        return self.finding.signature

    @property
    def knobs(self) -> tuple[str, ...]:
        return self.finding.deciding


@dataclass
class Outcome:
    deals_played: int = 0
    trials: int = 0
    divergence: Counterexample | None = None  # the first finding's (as before fuzz kept hunting)
    trial: int | None = None
    saved: Path | None = None
    shrink_steps: int = 0
    seconds: float = 0.0
    error: str = ""
    notes: list[str] = field(default_factory=list)
    findings: list[NewCause] = field(default_factory=list)  # the proven ones: each reproduces
    unreproducible: list[NewCause] = field(default_factory=list)  # shrunk, and their transcript does not show them
    known: dict[str, int] = field(default_factory=dict)  # known cause -> divergences it explained
    shrinking: NewCause | None = None  # the finding being shrunk (what an interruption tells)
    # unchecked, as verify and fit count them: queries the implementation answered ``skipped``
    # (not compared; the reference decided the play), and trials a skipped action, deal or match
    # ended without a finding, by what was skipped and why
    unchecked: int = 0
    skipped_trials: dict[str, int] = field(default_factory=dict)
    skipped_before_play: int = 0  # of those, the trials that compared no action (nothing checked)

    @property
    def nothing_checked(self) -> bool:
        """Every trial ended by a skip before it compared an action (verify's exit 5)."""
        return self.trials > 0 and self.skipped_before_play == self.trials


# --- random material ---------------------------------------------------------------------

PLAY_STYLES = ("any", "low", "high", "long")  # per seat and trial: how a player picks a card


def shuffled_deal(rng: random.Random, dealer: int) -> Deal:
    if rng.random() < CHANCES.stacked_deal:
        deck = _stacked_deck(rng)
    else:
        deck = list(DECK)
        rng.shuffle(deck)
    hands = tuple(positions.in_order(deck[i * 7:(i + 1) * 7]) for i in range(3))
    return Deal(dealer, hands, positions.in_order(deck[21:]))


def _stacked_deck(rng: random.Random) -> list[str]:
    """A deck in suit blocks (long suits, voids, marriages: the duties to trump and overtrump
    show) or rank blocks (four aces, four nines, four jacks), cut at random and roughened by a
    few swaps: hands a fair shuffle deals once in hundreds of deals."""
    suits, ranks = rng.sample(SUITS, 4), rng.sample(RANKS, 6)
    if rng.random() < CHANCES.stacked_by_suit:
        deck = [rank + suit for suit in suits for rank in ranks]
    else:
        deck = [rank + suit for rank in ranks for suit in suits]
    cut = rng.randrange(24)
    deck = deck[cut:] + deck[:cut]
    for _ in range(rng.randrange(1, 10)):
        i, j = rng.randrange(24), rng.randrange(24)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def random_match_state(rng: random.Random, rules: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A match state a real match can reach, mostly near a line where a rule starts to bite:
    the target or, where there is one, the barrel's threshold (often two or three seats near it
    at once, so that a shared finish happens), the barrel (seats on it one attempt or one failed
    visit short), the 800 rule and its maximum, the dump
    score (both signs), bolts and give-ups one short of a penalty or the limit. A fifth of
    trials start from zero."""
    state = positions.copied_match(DEFAULT_MATCH_STATE)
    if rng.random() < CHANCES.start_from_zero:
        return state
    barrel, bolts = rules["barrel"], rules["bolts"]
    occupants = 0
    near_target = rng.random() < CHANCES.near_target  # two or three seats close to the target: a shared finish
    for seat in range(3):
        if barrel["enabled"] and rng.random() < CHANCES.on_the_barrel and occupants < (barrel["max_occupants"] or 3):
            occupants += 1
            state["scores"][seat] = _occupant_score(rng, rules)
            state["barrel"][seat] = {"on": True, "attempts": _one_short(rng, barrel["attempts"] or 3),
                                     "failed_visits": _one_short(rng, barrel["failed_visit_reset"] or 3)}
        elif near_target or rng.random() < CHANCES.near_a_line:
            state["scores"][seat] = _score_near_a_line(rng, rules, near_target)
        if barrel["enabled"] and not state["barrel"][seat]["on"] and barrel["failed_visit_reset"] and rng.random() < CHANCES.failed_visits_short:
            state["barrel"][seat]["failed_visits"] = _one_short(rng, barrel["failed_visit_reset"])
        if bolts["enabled"] and rng.random() < CHANCES.bolts_near_penalty:
            state["bolts"][seat] = _one_short(rng, bolts["every"])
        if rng.random() < CHANCES.give_ups_near_a_line:
            state["give_ups"][seat] = _give_ups_near_a_line(rng, rules["giving_up"])
    if rng.random() < CHANCES.level_scores:  # two seats level: the tie-breaks and the crowding rules
        first, second = rng.sample(range(3), 2)
        if state["barrel"][first]["on"] == state["barrel"][second]["on"]:
            state["scores"][second] = state["scores"][first]
    return state


def _one_short(rng: random.Random, count: int) -> int:
    """A counter below ``count``, one short of it half of the time."""
    return count - 1 if rng.random() < CHANCES.one_short else rng.randrange(count)


def _occupant_score(rng: random.Random, rules: dict[str, dict[str, Any]]) -> int:
    """An occupant's score: the threshold, or where scores on the barrel stand uncapped, up to the target."""
    threshold, target = int(rules["barrel"]["threshold"]), int(rules["match_end"]["target"])
    if rules["barrel"]["arrival_cap"] == "uncapped" and rng.random() < CHANCES.uncapped_occupant:
        return threshold + 5 * rng.randrange(max(1, (target - threshold) // 5))
    return threshold


def _score_near_a_line(rng: random.Random, rules: dict[str, dict[str, Any]], near_target: bool) -> int:
    """A score near a line where a rule bites, often one to four steps short of it (a small
    gain lands on it); never a score the rules would have changed already (at or past the
    target, on the barrel's ground, a dumped 555)."""
    barrel, lock, dump, end = rules["barrel"], rules["defender_lock"], rules["dump"], rules["match_end"]
    ceiling = barrel["threshold"] if barrel["enabled"] else end["target"]  # off the barrel, scores stay below it
    if end["over_target"] == "exact_only" and not barrel["enabled"]:
        ceiling = end["target"] + 200  # past the target the match plays on
    line = min(ceiling, end["target"])  # the barrel's threshold, else the target
    lines = [line] if near_target else [line, 0, -120]
    if not near_target:  # the lines of rules a profile switches on weigh twice
        if lock["enabled"]:
            lines += 2 * ([lock["from"]] + ([lock["defender_max"]] if lock["defender_max"] is not None else []))
        if dump["enabled"]:
            dumped = [dump["score"]] + ([-dump["score"]] if dump["negative"] else [])
            if rules["bolts"]["enabled"]:  # a bolt penalty lands on the dump score, or leaves it
                dumped += [score + rules["bolts"]["penalty"] for score in dumped]
            lines += 2 * dumped
    for _ in range(8):
        # near the target: within one big deal's gain of it, so that two seats can reach it at once
        steps = rng.randint(-16, -1) if near_target else rng.randint(-4, -1) if rng.random() < CHANCES.score_just_short else rng.randint(-24, 24)
        score = rng.choice(lines) + 5 * steps
        if score < ceiling and score != end["target"] and not (dump["enabled"] and abs(score) == dump["score"]):
            return int(score)
    return 0


def _give_ups_near_a_line(rng: random.Random, giving_up: dict[str, Any]) -> int:
    """Give-ups so far: one short of (or at) the limit, the penalty or the defenders' pay."""
    lines = [n for n in (giving_up["limit"], giving_up["penalty_from"], giving_up["defenders_paid_from"]) if n]
    if giving_up["penalty_repeats"] == "every_nth" and giving_up["penalty_from"]:
        lines.append(2 * giving_up["penalty_from"])
    count = max(0, rng.choice(lines) - rng.randint(0, 1)) if lines and rng.random() < CHANCES.give_ups_on_a_line else rng.randrange(4)
    return int(min(count, giving_up["limit"])) if giving_up["limit"] is not None else int(count)


def illegal_action(rng: random.Random, legal: Sequence[str], state: dict[str, Any]) -> str:
    """A random action outside the legal set, most often a near miss of the current phase:
    a bid equal to or next to the high bid, a contract next to a legal one, a card held but
    not playable, a marriage or aces suffix; sometimes another phase's action or garbage."""
    to_act, hands, phase = state.get("to_act"), state.get("hands"), state.get("phase")
    held = list(hands[to_act]) if isinstance(to_act, int) and isinstance(hands, list) and to_act < len(hands) else []
    amounts = [int(a.split()[1]) for a in legal if a.split()[0] in ("bid", "contract") and a.split()[1].isdigit()]
    high_bid = state.get("high_bid")
    high = high_bid if isinstance(high_bid, int) else 100
    near = [high + d for d in (-5, 0, 5, 10)] + [a + d for a in amounts[-2:] for d in (5, 10, 15)]
    by_phase: dict[str, list[str]] = {
        Phase.AUCTION: [f"bid {n}" for n in near] + ["pass"],
        Phase.CONTRACT: [f"contract {n}" for n in near] + ["give_up"],
        Phase.EXCHANGE: [f"give {rng.choice(held or list(DECK))} {rng.choice(DECK)}", "give_up"],
        Phase.PLAY: [f"play {card}" for card in held] + [f"play {card} marriage" for card in held if card[0] in "KQ"]
        + [f"play {card} aces" for card in held if card.startswith("A")],
        Phase.CLAIM: ["redeal", "no_redeal"],
    }
    anything = ["pass", "give_up", "redeal", f"play {rng.choice(DECK)}", f"bid {rng.choice(near)}", "bid", "play XX", "dance"]
    options = by_phase.get(str(phase), []) if rng.random() < CHANCES.near_miss else anything
    outside = [option for option in options if option not in legal]
    return rng.choice(outside or anything)


# --- lockstep play -----------------------------------------------------------------------

class Pair:
    """The implementation and the reference, stepped together: a turn's requests are written
    to both processes before either's replies are read, so that both work at the same time
    without a thread per side."""

    def __init__(self, implementation: Sequence[str], reference: Sequence[str], timeout: float,
                 fallbacks: Sequence[str] = ()) -> None:
        self.sides = (observe.Observer(implementation, timeout, fallbacks=fallbacks),
                      observe.Observer(reference, reference_timeout(timeout)))
        # a skipped query changes nothing in the game: it is counted unchecked and play goes on
        self.sides[0].unshown_queries = frozenset({"legal", "state"})
        self.unchecked = 0  # queries the implementation answered skipped, since the trial began
        self.unserved: set[str] = set()  # the queries it ever answered skipped: a saved transcript asks neither
        self.skipped: Skipped | None = None  # the skip that ended the last trial played, if one did

    def exchange(self, requests: Callable[[observe.Observer], list[observe.Request]]) -> tuple[list[Answer], list[Answer]]:
        """Each side's ``requests`` posted, then both sides' replies read; a reference failure
        raises ProtocolFailure (a problem here), an implementation failure
        ImplementationFailed (a finding)."""
        implementation, reference = self.sides
        for side in self.sides:  # both load at once (a CannotStart shows again at the post)
            _caught(side.launch)
        posted = [_caught(lambda: side.post(requests(side))) for side in self.sides]
        # the reference's replies first: a Skipped from the implementation leaves none unread,
        # and the implementation's lines equal to the reference's need no decoding
        try:
            want = _answers(reference, posted[1])
        except Skipped as exc:  # the reference declines what it was asked: never the implementation's doing
            self.reset()
            raise ReferenceFailed(f"the reference failed: it skipped {exc.command}: {exc}") from None
        got = _answers(implementation, posted[0], want if isinstance(want, list) else [])
        if isinstance(want, ProtocolFailure):
            self.reset()
            raise ReferenceFailed(f"the reference failed: {want}") from None
        if isinstance(got, ProtocolFailure):
            implementation.kill()  # the reference's replies were all read: its stream is sound
            raise ImplementationFailed(str(got))
        return got, want

    def start_match(self, profile: str, document: dict[str, Any], match: dict[str, Any]) -> None:
        """The ``match`` on both sides at once; a side that declares ``batch`` gets it in one,
        its document named by key (sent once per process, not read again at every trial)."""
        asked: dict[int, list[observe.Request]] = {}

        def requests(side: observe.Observer) -> list[observe.Request]:
            asked[id(side)] = [side.match_request(profile, document, match)]
            return [side.batch_request(asked[id(side)])] if side.batch else asked[id(side)]

        got, want = self.exchange(requests)
        implementation, reference = self.sides
        try:
            if reference.batch:
                reference.unbatched(asked[id(reference)], want[0])
        except (ProtocolFailure, Skipped) as exc:
            self.reset()
            raise ReferenceFailed(f"the reference failed: {exc}") from None
        try:
            if implementation.batch:
                implementation.unbatched(asked[id(implementation)], got[0])
        except ProtocolFailure as exc:
            implementation.kill()
            raise ImplementationFailed(str(exc)) from None

    def turn(self, action: str | None, deal: dict[str, Any] | None = None) -> tuple[observe.Turn, observe.Turn]:
        """The action (or the deal) on both sides: each side's reply, state and next legal set."""
        got, want = self.exchange(lambda side: observe.turn_requests(action, deal))
        theirs = observe.read_turn(want)
        same = all(one.line == other.line for one, other in zip(got, want))
        if same:
            return theirs, theirs
        mine = observe.read_turn(got)
        return self.shown(replace(mine, reply=self.sides[0].told(mine.reply)), theirs), theirs

    def shown(self, mine: observe.Turn, theirs: observe.Turn) -> observe.Turn:
        """The implementation's turn with each query it answered ``skipped`` counted unchecked
        and taken as the reference's (value and line), so that it is compared with nothing and
        play goes on from the reference's legal set."""
        if not mine.unshown:
            return mine
        self.unchecked += len(mine.unshown)
        self.unserved.update(mine.unshown)
        lines = list(mine.lines)
        state, legal = mine.state, mine.legal
        if "state" in mine.unshown:
            state, lines[1] = theirs.state, theirs.lines[1]
        if "legal" in mine.unshown:
            legal, lines[2] = theirs.legal, theirs.lines[2]
        return replace(mine, state=state, legal=legal, lines=tuple(lines), unshown=())

    def plays_out(self) -> bool:
        """The reference declares the ``playout`` extension (it has started: a match was sent)."""
        extensions = self.sides[1].start_reply.get("extensions")
        return isinstance(extensions, list) and PLAYOUT in extensions

    def played_out(self, deal: dict[str, Any], fields: dict[str, Any],
                   chosen: Callable[[str], None]) -> Iterator[tuple[str | None, observe.Turn, observe.Turn]]:
        """The deal played by the reference alone in one ``playout`` request (its actions chosen
        by the rule of docs/protocol.md), then the same actions by the implementation: in one
        ``batch`` where it declares it, else a turn at a time. Yields (action, the
        implementation's turn, the reference's) for the deal (action None) and each action;
        ``chosen`` hears each action before its turn is yielded or the implementation's
        failure at it raised (ImplementationFailed), so that a failure is cut where it came."""
        played = self.reference_deal(deal, fields)
        turns = self.followed(played, chosen)
        yield from played.agreed(chosen) if turns is None else turns

    def reference_deal(self, deal: dict[str, Any], fields: dict[str, Any], posted: Posted | None = None) -> ReferenceDeal:
        """The deal played out by the reference alone (one ``playout`` request, or the one
        ``posted`` already with it); a failure is the reference's (ReferenceFailed, the
        reference's process killed)."""
        reference = self.sides[1]
        try:
            answer = (reference.collect_trusted(posted) if posted is not None
                      else reference.trusted(PLAYOUT, deal=deal, **fields))
            return ReferenceDeal.of(deal, answer)
        except (ProtocolFailure, Skipped) as exc:
            self.sides[1].kill()  # the implementation may be following another deal meanwhile (Lookahead)
            raise ReferenceFailed(f"the reference failed: {exc}") from None

    def followed(self, played: ReferenceDeal,
                 chosen: Callable[[str], None]) -> Iterator[tuple[str | None, observe.Turn, observe.Turn]] | None:
        """The reference's played-out deal by the implementation: one ``batch`` where it
        declares it (sent now), else a turn at a time. None when its batch reply repeats the
        reference's replies byte for byte (``chosen`` told nothing): nothing to compare. Else
        the turns, as ``played_out`` yields them."""
        implementation = self.sides[0]
        if not implementation.batch:
            return self._stepped(played, chosen)
        try:
            sent = implementation.send_batch(played.requests, like=played.answer)
        except ProtocolFailure as exc:
            implementation.kill()
            return self._broken(played, chosen, [], exc)
        if batch.same_replies(sent.line, played.answer.line):
            return None
        got_replies: list[dict[str, Any]] = []
        try:
            for reply in implementation.batched(played.requests, sent):
                got_replies.append(reply)
        except ProtocolFailure as exc:
            implementation.kill()
            return self._broken(played, chosen, got_replies, exc)
        except Skipped:  # the trial ends at the skip (``play``); what the process holds is unknown
            if implementation.impl is not None:
                batch.forget(implementation.impl)
            for action in played.actions[:len(got_replies) // 3]:  # the actions sent up to the skipped reply
                chosen(action)
            raise
        return self._broken(played, chosen, got_replies, None)

    def _stepped(self, played: ReferenceDeal,
                 chosen: Callable[[str], None]) -> Iterator[tuple[str | None, observe.Turn, observe.Turn]]:
        """An implementation without ``batch``: the reference's actions a turn at a time."""
        implementation = self.sides[0]
        for index, action in enumerate((None, *played.actions)):
            if action is not None:
                chosen(action)
            posted = _caught(lambda: implementation.post(observe.turn_requests(action, None if action else played.deal)))
            got = _answers(implementation, posted)
            if isinstance(got, ProtocolFailure):
                implementation.kill()
                raise ImplementationFailed(str(got))
            mine = observe.read_turn(got)
            theirs = played.turn(index, False)
            yield action, self.shown(replace(mine, reply=implementation.told(mine.reply)), theirs), theirs

    def _broken(self, played: ReferenceDeal, chosen: Callable[[str], None], got_replies: list[dict[str, Any]],
                failure: ProtocolFailure | None) -> Iterator[tuple[str | None, observe.Turn, observe.Turn]]:
        """The turns of a batch reply that differs from the reference's (or broke off with ``failure``)."""
        implementation = self.sides[0]
        for index, action in enumerate((None, *played.actions)):
            if action is not None:
                chosen(action)
            if len(got_replies) < 3 * index + 3:
                raise ImplementationFailed(str(failure or "batch reply: fewer replies than requests"))
            mine = observe.turn_of(got_replies[3 * index:3 * index + 3])
            theirs = played.turn(index)
            yield action, self.shown(replace(mine, reply=implementation.told(mine.reply)), theirs), theirs

    def start_reference(self, profile: str, document: dict[str, Any], match: dict[str, Any],
                        first: tuple[dict[str, Any], dict[str, Any]]) -> Posted:
        """The ``match`` on the reference alone (a trial played ahead: see ``Lookahead``), and
        written with it (no round trip between them) the ``playout`` of the ``first`` deal
        (the deal and the fields), whose posting is returned for ``reference_deal``."""
        reference = self.sides[1]
        try:
            requests = [reference.match_request(profile, document, match)]
            deal, fields = first
            playout: observe.Request = (PLAYOUT, {"deal": deal, **fields})
            if reference.batch:
                posted = reference.post([reference.batch_request(requests), playout])
                reference.unbatched(requests, reference.collect(posted[:1])[0])
            else:
                posted = reference.post(requests + [playout])
                reference.collect(posted[:1])
            return posted[1]
        except (ProtocolFailure, Skipped) as exc:
            reference.kill()
            raise ReferenceFailed(f"the reference failed: {exc}") from None

    def start_implementation(self, profile: str, document: dict[str, Any], match: dict[str, Any]) -> None:
        """The ``match`` on the implementation alone (the reference's was played ahead)."""
        implementation = self.sides[0]
        try:
            requests = [implementation.match_request(profile, document, match)]
            if implementation.batch:
                implementation.unbatched(requests, implementation.collect(implementation.post([implementation.batch_request(requests)]))[0])
            else:
                implementation.collect(implementation.post(requests))
        except ProtocolFailure as exc:
            implementation.kill()
            raise ImplementationFailed(str(exc)) from None

    def reset(self) -> None:
        """Fresh processes for the next match (a failed stream cannot be trusted)."""
        for side in self.sides:
            side.kill()

    def close(self) -> None:
        for side in self.sides:
            side.close()


@dataclass(frozen=True)
class ReferenceDeal:
    """One deal as the reference played it out alone (``playout``): the deal sent, the
    answer, the actions it chose, the requests that replay them, and its state at the end.
    The replies with their states in full are only built when a comparison needs them."""

    deal: dict[str, Any]
    answer: Answer
    actions: tuple[str, ...]
    requests: tuple[observe.Request, ...]
    state: dict[str, Any]

    @classmethod
    def of(cls, deal: dict[str, Any], answer: Answer) -> ReferenceDeal:
        """The playout's answer checked: a reply to every request it stands for, none
        ``errored``, the states a full one then changes (ProtocolFailure otherwise)."""
        actions = answer.reply.get("actions")
        if not (isinstance(actions, list) and all(isinstance(a, str) for a in actions)):
            raise ProtocolFailure("playout reply: expected 'actions', a list of action strings")
        requests = observe.turn_requests(None, deal) + [r for a in actions for r in observe.turn_requests(a)]
        replies = answer.reply.get("replies")
        if not isinstance(replies, list) or not all(isinstance(reply, dict) for reply in replies):
            raise ProtocolFailure(f"{PLAYOUT} reply: expected 'replies', a list of reply objects")
        errored = next((reply["errored"] for reply in replies if "errored" in reply), None)
        if len(replies) != len(requests) or errored is not None:
            raise ProtocolFailure(f"playout: {errored if errored is not None else 'no reply'}")
        state: dict[str, Any] | None = None
        for reply in replies[1::3]:  # each turn's second reply is its state's
            if "changes" in reply:
                if state is None or not isinstance(reply["changes"], dict):
                    raise ProtocolFailure(f"{PLAYOUT} reply: 'changes' before any full state, or not an object")
                state.update(reply["changes"])
            elif isinstance(reply.get("state"), dict):
                state = dict(reply["state"])
        return cls(deal, answer, tuple(actions), tuple(requests), state or {})

    @functools.cached_property
    def replies(self) -> list[dict[str, Any]]:
        """The replies one by one, each state in full."""
        commands = [command for command, _ in self.requests]
        return [reply for _, reply in batch.unpacked(commands, self.answer.reply, PLAYOUT, False)]

    def turn(self, index: int, encoded: bool = True) -> observe.Turn:
        """The reference's turn at the deal (``index`` 0) or its ``index``-th action."""
        return observe.turn_of(self.replies[3 * index:3 * index + 3], encoded)

    def agreed(self, chosen: Callable[[str], None]) -> Iterator[tuple[str | None, observe.Turn, observe.Turn]]:
        """The turns of a deal both sides played the same: the reference's on both sides
        (``chosen`` hears each action before its turn)."""
        for index, action in enumerate((None, *self.actions)):
            if action is not None:
                chosen(action)
            same = self.turn(index, False)
            yield action, same, same


@dataclass(frozen=True)
class Ahead:
    """A random trial the reference played alone ahead of the implementation: its scenario
    and the deals it played out; ``failure``: the reference's, at the deal after those (or,
    not ``started``, at the match)."""

    scenario: Scenario
    deals: tuple[tuple[Deal, ReferenceDeal], ...]
    failure: ReferenceFailed | None = None
    started: bool = True


def played_ahead(pair: Pair, profile: str, document: dict[str, Any], seed: str, trial: int) -> Ahead:
    """The trial's match and deals by the reference alone, as ``random_trial`` would have it
    play them: the same draws from the trial's stream in the same order (each deal, then its
    playout's seed), the next deal's dealer from the state the last one ended in."""
    plan = trial_plan(document, seed, trial)
    deals: list[tuple[Deal, ReferenceDeal]] = []
    state: dict[str, Any] = {}
    posted: Posted | None = None
    while True:
        number = len(deals)
        deal = plan.scenario.deals[number] if number < len(plan.scenario.deals) else plan.extra_deals(number, state)
        if deal is None:
            break
        plain = {"dealer": deal.dealer, "hands": [list(h) for h in deal.hands], "talon": list(deal.talon)}
        fields = plan.playout.fields()
        if number == 0:  # the match and the first deal's playout written at once
            try:
                posted = pair.start_reference(profile, document, plan.scenario.match, (plain, fields))
            except ReferenceFailed as exc:
                return Ahead(plan.scenario, (), exc, started=False)
        try:
            reference_deal = pair.reference_deal(plain, fields, posted)
            posted = None
        except ReferenceFailed as exc:
            return Ahead(plan.scenario, tuple(deals), exc)
        deals.append((deal, reference_deal))
        state = reference_deal.state
        if str(state.get("phase")) == Phase.MATCH_OVER:
            break
    return Ahead(plan.scenario, tuple(deals))


class Lookahead:
    """The reference plays one pair's random trials ahead, in a thread of its own: while the
    implementation follows one trial's deals, the reference plays out the next ones, so that
    the two processes and the runner work at the same time instead of each waiting for the
    other (a deal's playout, then its batch). The trials come out in their order; ``pause``
    holds the reference still (a shrink replays on the pair's processes)."""

    DEPTH = 2  # trials played ahead: enough to keep the reference busy, few to waste at the end

    def __init__(self, pair: Pair, profile: str, document: dict[str, Any], seed: str, trials: Iterator[int]) -> None:
        self._ready: queue.Queue[tuple[int, Ahead | BaseException]] = queue.Queue(self.DEPTH)
        self._running = threading.Event()
        self._running.set()
        self._busy = threading.Lock()  # held while a trial is played ahead
        self._stopped = False
        self._timeout = pair.sides[1].timeout
        self._thread = threading.Thread(target=self._produce, args=(pair, profile, document, seed, trials), daemon=True)
        self._thread.start()

    def _produce(self, pair: Pair, profile: str, document: dict[str, Any], seed: str, trials: Iterator[int]) -> None:
        number = next(trials)
        while not self._stopped:
            self._running.wait(0.1)
            with self._busy:
                if self._stopped or not self._running.is_set():
                    continue
                item: Ahead | BaseException
                try:
                    item = played_ahead(pair, profile, document, seed, number)
                except BaseException as exc:  # a bug here: raised where the trial is taken
                    item = exc
            while not self._stopped:
                try:
                    self._ready.put((number, item), timeout=0.1)
                    break
                except queue.Full:
                    continue
            if isinstance(item, BaseException):
                return
            number = next(trials)

    def take(self, trial: int) -> Ahead:
        """The trial as the reference played it (the trials must be taken in their order)."""
        number, item = self._ready.get()
        if isinstance(item, BaseException):
            raise item
        assert number == trial, (number, trial)
        return item

    def pause(self) -> None:
        """Wait for the trial being played ahead, and play no other until ``resume``."""
        self._running.clear()
        with self._busy:
            pass

    def resume(self) -> None:
        self._running.set()

    def close(self) -> None:
        self._stopped = True
        self._running.set()
        self._thread.join(self._timeout + 1.0)


class ImplementationFailed(Exception):
    """The implementation crashed, broke the protocol or answered ``errored``."""


class ReferenceFailed(ProtocolFailure):
    """The reference refused or failed (rules it cannot play, a request it refuses): never
    blamed on the implementation."""


FAILED = "the implementation failed"  # the detail of the finding of a counterexample that is a protocol failure


def failed(divergence: Counterexample) -> bool:
    """The divergence is the implementation's protocol failure, not a different game."""
    return divergence.findings[0].detail == FAILED


Result = TypeVar("Result")


def _caught(work: Callable[[], Result]) -> Result | ProtocolFailure:
    try:
        return work()
    except ProtocolFailure as exc:
        return exc


def _answers(side: observe.Observer, posted: list[Posted] | ProtocolFailure,
             known: list[Answer] | None = None) -> list[Answer] | ProtocolFailure:
    return posted if isinstance(posted, ProtocolFailure) else _caught(lambda: side.collect(posted, known or ()))


Chooser = Callable[[tuple[str, ...], dict[str, Any]], str | None]  # (legal, state) -> action
# differences at one step -> whether play goes on past them (known legal-set differences)
Tolerate = Callable[[tuple[Finding, ...]], bool]


def play(pair: Pair, profile: str, document: dict[str, Any], scenario: Scenario,
         choose: Chooser | None = None, extra_deals: Callable[[int, dict[str, Any]], Deal | None] | None = None,
         record: list[tuple[Deal, list[observe.StepRecord]]] | None = None,
         tolerate: Tolerate | None = None, playout: Playout | None = None,
         ahead: Ahead | None = None) -> tuple[Scenario, Counterexample | None]:
    """Play a scenario in lockstep (see ``_play``); an implementation that fails diverges there.
    One that answers ``skipped`` to an action, a deal or the match ends the trial there without
    a divergence (``pair.skipped`` holds the skip): what it declines is unchecked, not wrong."""
    played: list[Deal] = []
    pair.skipped = None
    try:
        return _play(pair, profile, document, scenario, choose, extra_deals, record, played, tolerate, playout, ahead)
    except Skipped as exc:
        pair.skipped = exc
        return replace(scenario, deals=tuple(played)), None
    except ImplementationFailed as exc:
        cut = replace(scenario, deals=tuple(played))
        last = played[-1] if played else None
        failure = observe.observed("fuzz", len(played), len(last.actions) if last else 0,
                                   last.actions[-1] if last and last.actions else None, Observed.RECORD, "any",
                                   FAILED, "a reply", str(exc))
        return cut, Counterexample(cut, (failure,))


def _play(pair: Pair, profile: str, document: dict[str, Any], scenario: Scenario, choose: Chooser | None,
          extra_deals: Callable[[int, dict[str, Any]], Deal | None] | None,
          record: list[tuple[Deal, list[observe.StepRecord]]] | None, played: list[Deal],
          tolerate: Tolerate | None = None, playout: Playout | None = None,
          ahead: Ahead | None = None) -> tuple[Scenario, Counterexample | None]:
    """Play a scenario in lockstep; with ``choose``, actions are chosen as play goes (from the
    legal sets of both sides) and ``extra_deals`` adds deals. Returns what was played and the
    first divergence that ``tolerate`` does not let pass; ``played`` holds the deals so far.
    ``record`` receives the reference's step records, deal by deal. With ``playout``, and no
    ``tolerate``, a reference that declares the extension chooses each deal's actions itself
    (``Pair.played_out``: one request per deal) instead of ``choose``. With ``ahead``, the
    reference played the trial already (``Lookahead``): the implementation follows its deals,
    and the reference's failure at a deal is raised when play reaches it."""
    if ahead is None:
        pair.start_match(profile, document, scenario.match)
    elif ahead.started:
        pair.start_implementation(profile, document, scenario.match)
    elif ahead.failure is not None:  # the reference could not start the match: its failure, whatever the other's
        raise ahead.failure
    deals = list(scenario.deals)
    state: dict[str, Any] = {}
    number = 0
    while True:
        if ahead is not None:
            if number == len(ahead.deals):
                if ahead.failure is not None:
                    raise ahead.failure
                break
            deal = ahead.deals[number][0]
        elif number < len(deals):
            deal = deals[number]
        elif extra_deals is not None and (extra := extra_deals(number, state)) is not None:
            deal = extra
            deals.append(deal)
        else:
            break
        number += 1
        actions: list[str] = []
        steps: list[observe.StepRecord] = []
        if record is not None:
            record.append((deal, steps))
        plain = {"dealer": deal.dealer, "hands": [list(h) for h in deal.hands], "talon": list(deal.talon)}
        played.append(replace(deal, actions=()))  # kept current, so that a failure can be cut here

        def chosen(action: str, deal: Deal = deal, actions: list[str] = actions) -> None:
            actions.append(action)
            played[-1] = Deal(deal.dealer, deal.hands, deal.talon, tuple(actions))

        turns: Iterator[tuple[str | None, observe.Turn, observe.Turn]] | None
        if ahead is not None:
            reference_deal = ahead.deals[number - 1][1]
            turns = pair.followed(reference_deal, chosen)
            if turns is None and record is None:  # the implementation repeated the reference byte for byte
                played[-1] = replace(deal, actions=reference_deal.actions)
                state = reference_deal.state
                if str(state.get("phase")) == Phase.MATCH_OVER:
                    break
                continue
            turns = reference_deal.agreed(chosen) if turns is None else turns
        elif playout is not None and tolerate is None and pair.plays_out():
            turns = pair.played_out(plain, playout.fields(), chosen)
        else:
            turns = _lockstep(pair, plain, deal, choose, chosen)
        before: tuple[observe.Turn, observe.Turn] | None = None
        phase = "deal"
        for index, (action, got, want) in enumerate(turns):
            step = observe.StepRecord(number, index, action, None if before is None else before[1].legal,
                                      want.reply, want.state)
            steps.append(step)
            differences = _compare(step, got, want, before, phase, pair.sides[0].declarations)
            if differences and not (tolerate and tolerate(differences)):
                cut = replace(scenario, deals=tuple(played))
                return cut, Counterexample(cut, differences)
            state = want.state
            phase = str(state.get("phase"))
            before = got, want
        if str(state.get("phase")) == Phase.MATCH_OVER:
            break
    return replace(scenario, deals=tuple(played)), None


def _lockstep(pair: Pair, plain: dict[str, Any], deal: Deal, choose: Chooser | None,
              chosen: Callable[[str], None]) -> Iterator[tuple[str | None, observe.Turn, observe.Turn]]:
    """The deal and its actions a turn at a time on both sides at once: the deal's scripted
    actions, or with ``choose`` each one chosen from the turn before (up to MAX_STEPS, until
    the deal ends). Yields (action, the implementation's turn, the reference's)."""
    got, want = pair.turn(None, plain)
    yield None, got, want
    for index in range(MAX_STEPS if choose else len(deal.actions)):
        if choose is not None and str(want.state.get("phase")) in ENDED:
            break
        action = choose(_both(got.legal, want.legal), want.state) if choose is not None else deal.actions[index]
        if action is None:
            break
        chosen(action)
        got, want = pair.turn(action)
        yield action, got, want


def _both(mine: tuple[str, ...], theirs: tuple[str, ...]) -> tuple[str, ...]:
    """The actions both sides offer (after a legal-set difference let pass), else the reference's."""
    if mine == theirs:
        return theirs
    return tuple(a for a in theirs if a in set(mine)) or theirs


def _compare(step: observe.StepRecord, got: observe.Turn, want: observe.Turn,
             before: tuple[observe.Turn, observe.Turn] | None, phase: str,
             declared: Declarations | None = None) -> tuple[Finding, ...]:
    """The differences at one step (``step`` is the reference's record of it; ``before`` the
    turns whose legal sets came before the action, None for the deal). When both sides wrote
    the same bytes for the reply, the state and the legal set, they agree: no deep comparison.
    ``declared``: what the implementation declared; the reference's step is compared as an
    implementation that sends less shows it (``observe.as_shown``)."""
    if got.lines[:2] == want.lines[:2] and (before is None or before[0].lines[2] == before[1].lines[2]):
        return ()
    step = observe.as_shown(step, None if before is None else before[1].state, declared)
    legal = None if before is None else before[0].legal
    if declared is not None and declared.unsupported.actions and legal is not None and step.legal is not None:
        # the actions it declares unsupported are left out of both legal sets, as verify and fit leave them
        legal = tuple(a for a in legal if declared.unsupported.action(a) is None)
        step = replace(step, legal=tuple(a for a in step.legal if declared.unsupported.action(a) is None))
    absent = declared.unsupported.state_fields if declared is not None else frozenset()
    # a field declared absent is compared on neither side, even where an adapter still sends it
    state = {k: v for k, v in got.state.items() if k not in absent} if absent and isinstance(got.state, dict) else got.state
    mine = observe.StepRecord(step.deal, step.step, step.action, legal, got.reply, state)
    expected = observe.CaseRecord("fuzz", (step,))
    actual = observe.CaseRecord("fuzz", (mine,))
    prior = None if before is None else before[1].state  # what a legal-set difference is read against
    return tuple(replace(d, phase=phase, before=prior) for d in observe.compare(expected, actual))


@dataclass(frozen=True)
class TrialPlan:
    """What a random trial plays, drawn from its own stream: the scenario, the runner's choice
    rule and further deals (lockstep), and the playout's fields (the reference choosing)."""

    scenario: Scenario
    choose: Chooser
    extra_deals: Callable[[int, dict[str, Any]], Deal | None]
    playout: Playout


def trial_plan(document: dict[str, Any], seed: str, trial: int, most: int = MOST_DEALS) -> TrialPlan:
    """The trial's plan; it plays at most ``most`` deals (the deals a run has left), drawn as
    many as it would play anyway, so that the same seed plays the same trials."""
    rules = document["rules"]
    rng = random.Random(f"{seed}/{trial}")
    deals_wanted = min(rng.randint(1, MOST_DEALS), most)
    start = Scenario(random_match_state(rng, rules), ())
    styles = tuple(rng.choice(PLAY_STYLES) for _ in range(3))

    def free(legal: tuple[str, ...], state: dict[str, Any]) -> str | None:
        return choose_action(rng, rules, styles, legal, state)

    if rng.random() < CHANCES.position_trial:
        position = positions.random_position(rng, rules, start.match)
        styles = position.styles or styles
        laid_out = Scenario(position.match, (Deal(position.dealer, position.hands, position.talon),), position.name)
        return TrialPlan(laid_out, positions.chooser(position, free), lambda number, state: None,
                         Playout(rng, styles, favoured_amounts(rules), positions.plan_fields(position)))

    def more(number: int, state: dict[str, Any]) -> Deal | None:
        if number >= deals_wanted:
            return None
        dealer = rng.randrange(3) if number == 0 else state.get("next_dealer")
        return shuffled_deal(rng, dealer if isinstance(dealer, int) else rng.randrange(3))

    return TrialPlan(start, free, more, Playout(rng, styles, favoured_amounts(rules)))


def random_trial(pair: Pair, profile: str, document: dict[str, Any], seed: str, trial: int,
                 tolerate: Tolerate | None = None, most: int = MOST_DEALS) -> tuple[Scenario, Counterexample | None]:
    plan = trial_plan(document, seed, trial, most)
    return play(pair, profile, document, plan.scenario, plan.choose, plan.extra_deals, tolerate=tolerate,
                playout=plan.playout)


def choose_action(rng: random.Random, rules: dict[str, dict[str, Any]], styles: Sequence[str],
                  legal: Sequence[str], state: dict[str, Any]) -> str | None:
    """The trial's next action: now and then an illegal one; else a legal one biased to what
    shows a rule: passing early, bids and contracts at the amounts the rules name, giving up,
    declaring, and cards picked by the seat's style (see ``play_card``)."""
    if not legal:
        return None
    if rng.random() < CHANCES.illegal_action:
        return illegal_action(rng, legal, state)
    if "give_up" in legal and rng.random() < CHANCES.give_up:
        return "give_up"  # one action among many contract amounts: chosen on purpose
    others = [a for a in legal if a != "give_up"] or list(legal)
    amounts = {int(a.split()[1]): a for a in others if a.split()[0] in ("bid", "contract") and a.split()[1].isdigit()}
    if amounts:
        if "pass" in others and rng.random() < CHANCES.pass_on_amounts:
            return "pass"
        return amounts[_amount(rng, rules, sorted(amounts))]
    to_act, hands = state.get("to_act"), state.get("hands")
    if not (isinstance(to_act, int) and 0 <= to_act < len(styles) and isinstance(hands, list) and to_act < len(hands)):
        return rng.choice(others)
    gives = [a for a in others if a.startswith("give ")]
    if gives and rng.random() < CHANCES.give_short:
        return _give_short(gives, hands[to_act])
    declarations = [a for a in others if a.endswith((" marriage", " aces"))]
    if declarations and rng.random() < CHANCES.declaring[styles[to_act]]:
        return rng.choice(declarations)  # trumps make the duties to trump and beat show
    plays = [a for a in others if a.startswith("play ") and len(a.split()) == 2]
    if plays:
        trump = state.get("trump")
        side_suits = [a for a in plays if not a.endswith(str(trump))]
        if not state.get("trick") and trump and side_suits and rng.random() < CHANCES.side_suit_lead:
            plays = side_suits  # a side suit led: voids are trumped, and trumps overtrumped
        elif trump and not side_suits and _led_suit(state) not in (None, trump):
            return rng.choice(plays)  # trumping a side suit: any trump, so the next player may over- or undertrump
        return play_card(rng, styles[to_act], plays, hands[to_act])
    return rng.choice(others)


def _led_suit(state: dict[str, Any]) -> str | None:
    trick = state.get("trick")
    if isinstance(trick, list) and trick and isinstance(trick[0], dict):
        return str(trick[0].get("card", ""))[-1:] or None
    return None


@dataclass(frozen=True)
class Playout:
    """How a random trial's deals are chosen where the reference plays them out itself (the
    ``playout`` extension): the seats' styles, the amounts the rules name, and each deal's
    seed drawn from the trial's stream."""

    rng: random.Random
    styles: tuple[str, ...]
    favoured: tuple[int, ...]
    position: dict[str, Any] | None = None  # a position's plans (``positions.plan_fields``)

    def fields(self) -> dict[str, Any]:
        """The fields of one deal's ``playout`` request (besides the deal)."""
        fields = {"seed": self.rng.getrandbits(53), "styles": list(self.styles), "favoured": list(self.favoured),
                  "max_actions": MAX_STEPS, "states": "changes"}
        if self.position is not None:
            fields["position"] = self.position
        return fields


def favoured_amounts(rules: dict[str, dict[str, Any]]) -> tuple[int, ...]:
    """The bid and contract amounts a rule names (where a bid or contract starts or stops
    mattering), a bid step either side."""
    auction, barrel, talon = rules["auction"], rules["barrel"], rules["talon"]
    named = [auction["stop_at"], auction["marriage_needed_above"], auction["pre_talon_max"],
             auction["barrel_min_bid"], talon["shown_from_bid"], auction["high_bid_from"], barrel["min_contract"]]
    step = auction["bid_step"]
    return tuple(sorted({line + d for line in named if type(line) is int for d in (-step, 0, step)}))


def _amount(rng: random.Random, rules: dict[str, dict[str, Any]], amounts: list[int]) -> int:
    """A bid or contract amount: mostly the least one or a step or three above it (contracts
    a random play can make or just miss), else one at or next to an amount a rule names, the
    highest, or any."""
    roll = rng.random()
    if roll < CHANCES.amount_least:
        return amounts[0]
    if roll < CHANCES.amount_least + CHANCES.amount_few_steps:
        return rng.choice(amounts[1:4] or amounts)  # a step or three up: odd amounts, halves
    if roll < CHANCES.amount_least + CHANCES.amount_few_steps + CHANCES.amount_named:
        near = favoured_amounts(rules)
        return rng.choice([a for a in amounts if a in near] or amounts[-1:])
    return rng.choice(amounts)


def _give_short(gives: Sequence[str], hand: Sequence[str]) -> str:
    """The declarer gives away cards of its two shortest suits (a void: the declarer trumps
    and overtrumps early)."""
    length = positions.suit_lengths(hand)
    return min(gives, key=lambda a: (sorted(length[c[-1]] for c in a.split()[1:]), a))


def play_card(rng: random.Random, style: str, plays: Sequence[str], hand: Sequence[str]) -> str:
    """A card to play in the seat's style: ``low`` keeps points out of its tricks (zero deals,
    bolts), ``high`` takes tricks (trumps over trumps), ``long`` leads its longest suit and
    follows low (the others run out of it, so that trumping and overtrumping come up);
    ``any``, and a quarter of the time every style, picks at random."""
    if style == "any" or rng.random() < CHANCES.play_at_random:
        return rng.choice(list(plays))

    def rank_of(action: str) -> int:
        return positions.strength(action.split()[1])

    if style == "long":
        length = positions.suit_lengths(hand)
        return max(plays, key=lambda a: (length[a.split()[1][-1]], -rank_of(a)))
    return min(plays, key=rank_of) if style == "low" else max(plays, key=rank_of)


# --- shrinking ---------------------------------------------------------------------------

def shrink(pair: Pair, profile: str, document: dict[str, Any], found: Counterexample,
           tolerate: Tolerate | None = None, kept: Callable[[Counterexample], None] | None = None) -> tuple[Counterexample, int]:
    """A smaller scenario that still diverges: fewer deals, fewer refused actions, a plainer
    match state. Each attempt is one lockstep replay; returns the result and the attempts.
    ``kept`` hears each smaller divergence as it is found (what an interruption can save)."""
    best, attempts = found, 0
    wanted = found.finding.signature

    def diverges(candidate: Scenario) -> Counterexample | None:
        """The candidate's divergence when it shows the same first difference."""
        nonlocal attempts
        attempts += 1
        try:
            _, divergence = play(pair, profile, document, candidate, tolerate=tolerate)
        except ProtocolFailure:  # e.g. a shorter prefix leaves a deal unfinished: not this divergence
            return None
        if divergence is None or divergence.finding.signature != wanted:
            return None
        if kept is not None:
            kept(divergence)
        return divergence

    # fewest deals: the last deal alone, from the match state the earlier deals led to
    if len(best.scenario.deals) > 1:
        recorded: list[tuple[Deal, list[observe.StepRecord]]] = []
        play(pair, profile, document, best.scenario, record=recorded, tolerate=tolerate)
        before = recorded[-2][1][-1].state if len(recorded) >= 2 and recorded[-2][1] else {}
        if all(key in before for key in DEFAULT_MATCH_STATE):
            carried = {key: before[key] for key in DEFAULT_MATCH_STATE}
            result = diverges(replace(best.scenario, match=carried, deals=best.scenario.deals[-1:]))
            best = result or best
    # else drop earlier deals one by one while it still diverges
    index = 0
    while len(best.scenario.deals) > 1 and index < len(best.scenario.deals) - 1:
        deals = best.scenario.deals[:index] + best.scenario.deals[index + 1:]
        result = diverges(replace(best.scenario, deals=deals))
        if result is not None:
            best = result
        else:
            index += 1
    # the simplest match state: all zero, else one seat, then one field at a time
    for simpler in _simpler_states(best.scenario.match):
        result = diverges(replace(best.scenario, match=simpler))
        if result is not None:
            best = result
            if simpler == DEFAULT_MATCH_STATE:
                break
    # the shortest prefix: drop actions while the same divergence still shows
    for deal_index in range(len(best.scenario.deals)):
        position = 0
        while position < len(best.scenario.deals[deal_index].actions) - 1:
            deal = best.scenario.deals[deal_index]
            shorter = replace(deal, actions=deal.actions[:position] + deal.actions[position + 1:])
            deals = best.scenario.deals[:deal_index] + (shorter,) + best.scenario.deals[deal_index + 1:]
            result = diverges(replace(best.scenario, deals=deals))
            if result is not None and len(result.scenario.deals) == len(deals):
                best = result
            else:
                position += 1
    return best, attempts


def _simpler_states(match: dict[str, Any]) -> list[dict[str, Any]]:
    plain = DEFAULT_MATCH_STATE
    if equal(match, plain):
        return []
    found = [dict(plain)]
    for key in ("barrel", "bolts", "give_ups", "scores"):
        for seat in range(3):
            if not equal(match[key][seat], plain[key][seat]):
                simpler = {k: list(v) for k, v in match.items()}
                simpler[key][seat] = plain[key][seat]
                found.append(simpler)
    return found


# --- the saved transcript ----------------------------------------------------------------

EXPECTED_FIELDS = ("phase", "to_act", "declarer", "contract", "trump", "talon_shown", "talon", "trick",
                   "tricks_won", "card_points", "marriages", "deal_result", "scores", "bolts", "give_ups",
                   "barrel", "winner", "hands", "high_bid", "auction", "next_dealer", "trick_number", "dealer")


def transcript(pair: Pair, profile: str, document: dict[str, Any], divergence: Counterexample, seed: str,
               trial: int, case_id: str, tolerate: Tolerate | None = None) -> dict[str, Any]:
    """The scenario as a transcript with the reference's values: legal sets on every step,
    refusals as ``refused``, and the events and state in full where the divergence shows;
    without the legal sets or the states where the implementation answered those queries
    ``skipped`` (verify would skip the whole case at the first one, and show nothing)."""
    recorded: list[tuple[Deal, list[observe.StepRecord]]] = []
    first, signed = divergence.findings[0], divergence.finding
    cut = len(divergence.scenario.deals[-1].actions) if divergence.scenario.deals else 0
    if all(d.kind is Observed.EVENT and d.detail.startswith("unexpected") for d in divergence.findings):
        _played_to_the_deal_end(pair, profile, document, divergence.scenario, recorded)
    elif failed(divergence):  # the implementation broke at the last action: the reference alone records it
        alone = Pair(pair.sides[1].command, pair.sides[1].command, pair.sides[1].timeout)
        try:
            play(alone, profile, document, divergence.scenario, record=recorded)
        finally:
            alone.close()
    else:
        play(pair, profile, document, divergence.scenario, record=recorded, tolerate=tolerate)
    deals = []
    for number, (deal, steps) in enumerate(recorded, start=1):
        last_deal = number == len(recorded)
        entry: dict[str, Any] = {"dealer": deal.dealer, "hands": [list(h) for h in deal.hands], "talon": list(deal.talon)}
        if last_deal and first.step == 0:
            entry["events"] = list(steps[0].reply.events)
        entry["steps"] = []
        for index, step in enumerate(steps[1:], start=1):
            item: dict[str, Any] = {"action": step.action}
            if "legal" not in pair.unserved:
                item["legal"] = list(step.legal or ())
            if not step.reply.accepted:
                item["refused"] = step.reply.refused()
            if last_deal and (index == cut or step is steps[-1]) and step.reply.accepted and step.reply.events:
                item["events"] = list(step.reply.events)
            if last_deal and index == cut:
                item["note"] = f"thousand fuzz --seed {seed}, trial {trial}: first divergence here ({signed.signature})"
            entry["steps"].append(item)
        if "state" not in pair.unserved:
            entry["expect"] = {k: steps[-1].state[k] for k in EXPECTED_FIELDS if k in steps[-1].state}
        deals.append(entry)
    return {
        "id": case_id,
        "title": f"Fuzz divergence under {profile}: {signed.signature}"[:200],
        "description": (f"Found by thousand fuzz --seed {seed} (trial {trial}"
                        + (f", a position built for one rule: {divergence.scenario.position}" if divergence.scenario.position else "")
                        + f") and shrunk; every expected value "
                        f"is the reference's under {profile}. First divergence: {first.place}: "
                        f"reference {_short(signed.expected, 200)}, implementation {_short(signed.actual, 200)}."),
        "profiles": [profile], "knobs": [], "generated": True,
        "match": divergence.scenario.match, "deals": deals,
    }


def _played_to_the_deal_end(pair: Pair, profile: str, document: dict[str, Any], scenario: Scenario,
                            recorded: list[tuple[Deal, list[observe.StepRecord]]]) -> None:
    """Record the scenario played on by the reference alone to the end of its last deal (the
    first legal action each time). A transcript lists the events it expects as a subset, so an
    event only the implementation sends cannot fail it; the deal's score, which such an event
    (a bonus, a bolt, a dump) changes, can."""
    reference = pair.sides[1]
    alone = Pair(reference.command, reference.command, reference.timeout)
    scripted = [action for deal in scenario.deals for action in deal.actions]

    def choose(legal: tuple[str, ...], state: dict[str, Any]) -> str | None:
        return scripted.pop(0) if scripted else (sorted(legal)[0] if legal else None)

    try:
        play(alone, profile, document, scenario, choose=choose, record=recorded)
    finally:
        alone.close()


def save(data: dict[str, Any], folder: Path) -> Path:
    if not data.get("deals"):  # nothing to replay: such a file would only count as a case bug later
        raise ReferenceFailed("the divergence could not be replayed as a transcript (no deal recorded); not saved")
    path = folder / f"{data['id']}.yaml"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        outputs.write_atomically(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120,
                                                      default_flow_style=None))
    except OSError as exc:  # nothing partial is left: the file is whole or absent
        raise ReferenceFailed(f"cannot save {path}: {exc.strerror or exc}" if not isinstance(exc, outputs.OutputError)
                              else str(exc)) from None
    try:
        load(path, folder)
    except TranscriptError as exc:  # a bug here, not a finding: no invalid file is left behind
        path.unlink(missing_ok=True)
        raise ReferenceFailed(f"the shrunk transcript does not load ({exc}); not saved") from None
    return path


# --- the run -----------------------------------------------------------------------------

def fuzz(implementation: Sequence[str], profile: str, document: dict[str, Any], deals: int, seed: str,
         jobs: int = 1, timeout: float = 10.0, save_to: Path | None = None,
         reference: Sequence[str] = REFERENCE_COMMAND, progress: Callable[[str], None] | None = None,
         max_findings: int | None = 1, known: findings.Known | None = None,
         fallbacks: Sequence[str] = (), outcome: Outcome | None = None, rules: str | None = None,
         as_profile: str | None = None, explain: bool = True) -> Outcome:
    """Random trials until exactly ``deals`` deals are played or ``max_findings`` findings are
    made (None: no limit). A divergence ends its trial; its signature is a new cause (shrunk,
    then proven: its transcript replayed as ``thousand verify`` replays it, see ``prove``, and
    saved below ``save_to`` when it reproduces), one more of a cause already met, or one
    ``known`` explains (no finding; a known legal-set difference does not even end the trial:
    play goes on with the actions both sides offer). ``rules``: the house file ``profile``
    was resolved from (the printed command names it). ``fallbacks``: what a match names when
    the implementation's declared list lacks ``profile``. ``outcome``, when given, is filled
    as the run goes (what an interruption can still tell). ``explain``: each proven finding is
    also tried under other knob values (``Proof.explained``)."""
    started = time.monotonic()
    outcome = outcome if outcome is not None else Outcome()
    pairs = [Pair(implementation, reference, timeout, fallbacks) for _ in range(max(1, jobs))]
    tell = progress or (lambda text: None)
    tolerate = _tolerating(known) if known is not None else None
    lanes: dict[int, Lookahead] = {}  # by pair: the reference playing its trials ahead (playout, nothing tolerated)
    proof = Proof(implementation, reference, profile, document, rules, as_profile, timeout, seed, explain)
    try:
        trial = 0
        while outcome.deals_played < deals and (max_findings is None or len(outcome.findings) < max_findings):
            left = deals - outcome.deals_played
            # a trial plays up to MOST_DEALS deals: the last ones are played one at a time,
            # each held to the deals left, so that a run plays exactly ``deals``
            last = left < MOST_DEALS * len(pairs)
            if last:
                for lane in lanes.values():
                    lane.pause()  # the pairs' references are used here from now on
            batch = [trial] if last else list(range(trial, trial + len(pairs)))
            trial += len(batch)

            def one(number: int) -> tuple[Scenario, Counterexample | None, int, Skipped | None]:
                index = 0 if last else number % len(pairs)
                pair = pairs[index]
                pair.unchecked = 0
                if last:
                    result = random_trial(pair, profile, document, seed, number, tolerate, most=left)
                elif index in lanes:
                    ahead = lanes[index].take(number)
                    result = play(pair, profile, document, ahead.scenario, ahead=ahead)
                else:
                    result = random_trial(pair, profile, document, seed, number, tolerate)
                    if tolerate is None and pair.plays_out():  # from the next trial on, the reference plays ahead
                        lanes[index] = Lookahead(pair, profile, document, seed,
                                                 itertools.count(number + len(pairs), len(pairs)))
                return (*result, pair.unchecked, pair.skipped)

            if len(batch) == 1:
                results = [one(batch[0])]
            else:
                with concurrent.futures.ThreadPoolExecutor(max_workers=len(pairs)) as pool:
                    results = list(pool.map(one, batch))
            for number, (scenario, divergence, unchecked, skipped) in zip(batch, results):
                outcome.trials += 1
                outcome.unchecked += unchecked
                # a trial whose match was skipped played no deal; it counts one, so that a run
                # whose every match is skipped still ends after the deals asked for
                outcome.deals_played += max(len(scenario.deals), 1 if skipped is not None else 0)
                if skipped is not None:
                    reason = skipped.detail if isinstance(skipped.detail, str) else skipped.reason  # its words, unquoted
                    said = f"{_skipped_what(skipped, scenario)} skipped: {reason[:200]}"
                    outcome.skipped_trials[said] = outcome.skipped_trials.get(said, 0) + 1
                    outcome.skipped_before_play += not any(d.actions for d in scenario.deals)
                if divergence is not None and failed(divergence) and not any(d.actions for d in divergence.scenario.deals):
                    # failed before any action: nothing to shrink, no transcript could show it
                    outcome.trial = number
                    said = str(divergence.findings[0].actual)
                    raise ImplementationFailed(
                        f"the implementation could not start: {said}" if said.startswith(("cannot start", "start failed"))
                        else f"the implementation broke the protocol (trial {number}): {said}")
                if divergence is not None:
                    _sort(outcome, divergence, number, known)
                if max_findings is not None and len(outcome.findings) >= max_findings:
                    break
            tell(f"{outcome.deals_played} deals, {outcome.trials} trials, {len(outcome.findings)} findings, "
                 f"{outcome.deals_played / max(time.monotonic() - started, 1e-9):.0f} deals/s")
            for found in list(outcome.findings):
                if not found.shrunk:
                    tell(f"a new finding ({found.signature[:60]}): shrinking and replaying its transcript")
                    outcome.shrinking = found
                    if 0 in lanes and not last:
                        lanes[0].pause()  # the shrink replays on the same processes
                    try:
                        _shrunk_proven_and_saved(pairs[0], profile, document, found, seed, save_to, tolerate, proof)
                    except process.Interrupted:
                        if save_to is not None:  # the smallest divergence so far, not to be lost with the run
                            found.saved_unfinished = _saved_unfinished(pairs[0], profile, document, found, seed, save_to)
                        raise
                    if found.proof:
                        outcome.findings.remove(found)
                        outcome.unreproducible.append(found)
                    if 0 in lanes and not last:
                        lanes[0].resume()
                    outcome.shrinking = None
    except ReferenceFailed as exc:
        outcome.error = str(exc)
    except ProtocolFailure as exc:
        outcome.error = f"the implementation broke the protocol: {exc}"
    except Skipped as exc:
        outcome.error = f"the implementation skipped: {exc}"
    except ImplementationFailed as exc:
        outcome.error = str(exc) if str(exc).startswith("the implementation") else f"the implementation cannot be played: {exc}"
    finally:
        for lane in lanes.values():
            lane.close()
        for pair in pairs:
            pair.close()
    for found in outcome.findings:
        if not found.shrunk:
            found.unsaved = "the run stopped before it was shrunk"
    outcome.notes += less_notes(pairs[0].sides[0].declarations)
    if outcome.findings:
        first = outcome.findings[0]
        outcome.divergence, outcome.trial, outcome.saved = first.divergence, first.trial, first.saved
        outcome.shrink_steps = first.shrink_steps
    outcome.seconds = time.monotonic() - started
    return outcome


def _skipped_what(skipped: Skipped, scenario: Scenario) -> str:
    """What a skip that ended a trial declined: the command, and for an action its word (``apply
    give_up``), never the whole action (one count per kind, not per card or amount)."""
    last = scenario.deals[-1].actions if scenario.deals else ()
    return f"apply {last[-1].split()[0]}" if skipped.command == "apply" and last else skipped.command


def _sort(outcome: Outcome, divergence: Counterexample, trial: int, known: findings.Known | None) -> None:
    """A divergence counted: as known (its signature is a known cause's), as one more of a
    cause met already (the same signature), or as a new cause."""
    found = divergence.finding
    cause = known.cause_of(found) if known is not None else None
    if cause is not None:
        outcome.known[cause] = outcome.known.get(cause, 0) + 1
        return
    for met in (*outcome.findings, *outcome.unreproducible):
        if met.signature == found.signature:  # the same mistake, met again
            met.count += 1
            return
    deal = outcome.deals_played  # this trial's deals are counted already: it diverged in its last
    outcome.findings.append(NewCause(found, divergence, trial, deal))


def _tolerating(known: findings.Known) -> Tolerate:
    """Known legal-set differences let play go on (the replies agree, so lockstep holds)."""
    def tolerate(differences: tuple[Finding, ...]) -> bool:
        if not all(d.kind is Observed.LEGAL for d in differences):
            return False
        return all(known.cause_of(found) is not None for found in observe.findings(differences))

    return tolerate


@dataclass(frozen=True)
class Proof:
    """How a new cause's transcript is replayed before it is reported: as the command fuzz
    prints for it (``thousand verify [--rules FILE] --cases DIR -- CMD``), against the
    implementation (it must fail there) and against the reference under the same rules (it
    must pass there)."""

    implementation: Sequence[str]
    reference: Sequence[str]
    profile: str
    document: dict[str, Any]
    rules: str | None
    as_profile: str | None
    timeout: float
    seed: str
    explain: bool = True  # asking's questions are findings of a reference under other rules: nothing to explain

    def why_not(self, folder: Path) -> str:
        """Why the transcripts below ``folder`` do not prove a finding; "" when they do."""
        oracle = [*self.reference, "--rules", self.rules] if self.rules else list(self.reference)
        try:
            theirs = house.verified(folder, oracle, self.rules, reference_timeout(self.timeout))
            mine = house.verified(folder, self.implementation, self.rules, self.timeout, self.as_profile,
                                  oracle_timeout=reference_timeout(self.timeout))
        except Exception as exc:  # the replay itself broke (a reference that refuses the rules): not proven
            return f"its transcript could not be replayed: {type(exc).__name__}: {_short(str(exc), 200)}"
        if not theirs or any(r.outcome != "pass" for r in theirs):
            said = next((f"{r.outcome}: {r.message}" for r in theirs if r.outcome != "pass"), "no case ran")
            return f"its transcript does not pass against the reference ({_short(said, 200)})"
        if not any(r.outcome in reports.FAILING for r in mine):  # verify's exit 1: a fail, an error, a timeout
            said = ", ".join(sorted({r.outcome for r in mine})) or "no case ran"
            return f"its transcript does not fail against the implementation ({said})"
        return ""

    def explained(self, folder: Path) -> tuple[tuple[Change, ...], str]:
        """The knob values (one or two) under which the reference, with the rules fuzz was
        given, plays the proven transcript below ``folder`` exactly as the implementation did,
        and which the corpus's cases of those knobs do not contradict (``Fitter.explaining``):
        a rule those rules do not hold rather than a bug (none when none does), and why the
        search stopped before its end ("" when it did not)."""
        resolved = variants.resolve(self.rules) if self.rules else variants.resolve(self.profile)
        found = [c for c in discover([folder]) if isinstance(c, Transcript)]
        corpus = house.applicable(list(discover([CASES_DIR, GENERATED_DIR])), house.rules_family(resolved))
        fitter = Fitter(self.profile, found, self.implementation, timeout=self.timeout, resolved=resolved,
                        fallbacks=house.fallbacks(self.rules, self.as_profile))
        try:
            fitter.observe_implementation()
            changes = fitter.explaining(variants.thaw(resolved.rules), [c.id for c in found], corpus)
        except Exception as exc:  # the finding stands, proven; only what other values make of it is unknown
            return (), f"it failed: {type(exc).__name__}: {str(exc)[:200]}"
        finally:
            fitter.close()
        return changes or (), "its budget ran out" if fitter.explain_spent else ""


def _shrunk_proven_and_saved(pair: Pair, profile: str, document: dict[str, Any], found: NewCause, seed: str,
                             save_to: Path | None, tolerate: Tolerate | None, proof: Proof) -> None:
    """The cause's divergence shrunk, written as a transcript and replayed by ``proof``; saved
    below ``save_to`` only when it reproduces (``found.proof`` says why not otherwise)."""
    found.best = found.divergence

    def kept(smaller: Counterexample) -> None:
        found.best = smaller

    small, steps = shrink(pair, profile, document, found.divergence, tolerate, kept)
    found.divergence, found.shrink_steps, found.shrunk = small, steps, True
    case_id = f"{base_name(profile)}/fuzz-{_slug(seed)}-{found.trial}"
    try:
        data = transcript(pair, profile, document, small, seed, found.trial, case_id, tolerate)
        # written where it is asked for first, so that a failing write names the user's file;
        # proven from a folder of its own, as the printed command replays that file alone
        saved = save(data, save_to) if save_to is not None else None
        if not failed(found.divergence):  # a protocol break is the implementation's, however it replays
            with tempfile.TemporaryDirectory(prefix="thousand-fuzz-") as scratch:
                save(data, Path(scratch))
                found.proof = proof.why_not(Path(scratch))
                if not found.proof and proof.explain:
                    found.explained, found.explain_stopped = proof.explained(Path(scratch))
        said = _explained_in_a_sentence(found) if proof.explain else ""  # "" for an unproven finding
        if said and save_to is not None and saved is not None:  # the file says what it is, as the summary does
            data["description"] += " " + said
            saved = save(data, save_to)
        if found.proof:
            found.unsaved = "not reproducible"
            if saved is not None:
                saved.unlink(missing_ok=True)  # never left behind as a bug
        else:
            found.saved = saved
    except ReferenceFailed as exc:  # the run stops on it (exit 3); the finding's line says why it has no file
        found.unsaved = str(exc)
        raise


def _saved_unfinished(pair: Pair, profile: str, document: dict[str, Any], found: NewCause, seed: str,
                      folder: Path) -> Path | None:
    """An interrupted shrink's (or proof's) smallest divergence so far, saved as its transcript
    (the reference's values) and said to be neither shrunk to the end nor proven; None when it
    cannot be (the run is stopping: nothing is raised). The pair's processes may be mid-reply,
    so the reference alone records it, in a fresh process (further signals are ignored by now)."""
    divergence = found.divergence if found.shrunk else (found.best or found.divergence)
    reference = pair.sides[1]
    alone = Pair(reference.command, reference.command, reference.timeout)
    alone.unserved = set(pair.unserved)  # what the implementation skipped, the transcript does not ask
    try:
        data = transcript(alone, profile, document, divergence, seed, found.trial,
                          f"{base_name(profile)}/fuzz-{_slug(seed)}-{found.trial}")
        data["description"] += (" The run was interrupted: this transcript was not shrunk to the end"
                                if not found.shrunk else " The run was interrupted") + " and is not proven."
        return save(data, folder)
    except (ProtocolFailure, OSError, ImplementationFailed, Skipped):  # best effort: the interruption's line comes first
        return None
    finally:
        alone.close()


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-") or "seed"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fuzz", help="differential random play against the reference under the same rules",
        description="Random match states, deals and actions, played in lockstep by an implementation and "
                    "the reference. Each divergence is signed as thousand verify signs a failed check; a new "
                    "signature is shrunk and saved as a transcript, then the hunt goes on with the next deal "
                    "until the deal budget or --max-findings. A finding is reported only when its transcript, replayed "
                    "as the printed thousand verify command replays it, fails against the implementation and passes "
                    "against the reference; others are listed apart as not reproducible. Exit 1 when there is a new "
                    "finding (or one not reproducible), 0 when none, "
                    "2 on usage errors, 3 when the reference failed or a transcript could not be saved, 4 when the "
                    "implementation could not start or broke the protocol, 5 when every trial ended on a skip before "
                    "its first action (nothing was compared; a skip is otherwise unchecked, counted in the summary, "
                    "and the hunt goes on), 129/130/143 when stopped by SIGHUP/SIGINT/SIGTERM.")
    rules = parser.add_mutually_exclusive_group(required=True)
    rules.add_argument("--profile", metavar="P", help="the rules: a bundled profile, or 'name+option'")
    rules.add_argument("--rules", metavar="FILE.yaml", help="the rules: a house profile file (or FILE.yaml+option)")
    parser.add_argument("--deals", type=int, default=200, metavar="N", help="deals to play (default 200)")
    parser.add_argument("--seed", default="0", metavar="S", help="the seed (any text; default 0): runs are reproducible")
    parser.add_argument("--save", type=Path, metavar="DIR", help="save each finding, shrunk, as a transcript below DIR")
    parser.add_argument("--max-findings", type=int, metavar="N", help="stop after N findings (default: play every deal)")
    parser.add_argument("--known", type=Path, metavar="REPORT.json",
                        help="a report of thousand verify, fit or fuzz --report: a divergence whose signature is one "
                             "of its root causes' is no finding")
    parser.add_argument("--as", dest="as_profile", metavar="P",
                        help="with --rules, the profile a match names to an implementation that declares a list "
                             "without the house profile (default: the profile the file extends)")
    parser.add_argument("--report", type=Path, metavar="FILE.json",
                        help="write the findings as a report of thousand verify --report's shape (valid as --known of "
                             "verify, fit and fuzz)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="pairs of processes run in parallel")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="seconds to wait for each reply of the implementation (the reference, trusted, waits "
                             f"at least {REFERENCE_TIMEOUT:g})")
    parser.add_argument("impl_command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="the implementation (after --)")
    parser.set_defaults(func=main)


MAX_DEALS = 10_000_000


def main(args: argparse.Namespace) -> int:
    """``thousand fuzz``; SIGINT, SIGTERM and SIGHUP stop it with one line, which gives the
    seed and trial of a finding being shrunk (so that it is not lost)."""
    observe.collect_rarely()
    saved = process.trap_signals()
    outcome = Outcome()
    try:
        return _fuzz(args, outcome)
    except process.Interrupted as exc:
        clear_progress()
        shrinking = outcome.shrinking
        found = (f"; the divergence of trial {shrinking.trial} (seed {args.seed}) was being shrunk: run again with "
                 f"--seed {args.seed} to find it" if shrinking is not None else "")
        print(f"thousand fuzz: stopped by {exc.name} after {outcome.deals_played} deals{found}", file=sys.stderr)
        if shrinking is not None:  # the divergence as first met, unshrunk: what the interruption cannot lose
            first = shrinking.divergence.findings[0]
            print(printable(f"unshrunk divergence of trial {shrinking.trial}: {shrinking.signature} at {first.place}: "
                            f"reference {_short(first.expected, 150)}, implementation {_short(first.actual, 150)}"
                            [:2000]))
            if shrinking.saved_unfinished is not None:
                how = "shrunk" if shrinking.shrunk else "the smallest divergence so far, not shrunk to the end"
                print(printable(f"saved {shrinking.saved_unfinished}: {how} and not proven (the run was interrupted "
                                "before its transcript was replayed)"[:2000]))
        return 128 + exc.signum
    finally:
        process.restore_signals(saved)


def _save_problem(folder: Path | None) -> str | None:
    """Why a transcript could not be saved below ``folder`` (checked, and the folder made, before the run)."""
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".thousand-fuzz-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return f"--save {folder}: cannot write there: {exc.strerror or exc}"
    return None


def _fuzz(args: argparse.Namespace, outcome: Outcome) -> int:
    command = command_of(args, "fuzz")
    if command is None:
        return ExitCode.USAGE
    if not 1 <= args.deals <= MAX_DEALS or (args.max_findings is not None and args.max_findings < 1):
        print(f"thousand fuzz: --deals must be from 1 to {MAX_DEALS} and --max-findings at least 1", file=sys.stderr)
        return ExitCode.USAGE
    resolved = resolved_option(args.profile or args.rules, "fuzz", "--profile" if args.profile else "--rules")
    if resolved is None:
        return ExitCode.USAGE
    try:
        known = findings.Known.read(args.known) if args.known else None
    except findings.KnownError as exc:
        print(f"thousand fuzz: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    problem = _save_problem(args.save)
    if args.report is not None and not args.report.parent.is_dir():  # known before the run, as verify's
        problem = f"--report {args.report}: the folder {args.report.parent} does not exist"
    if problem:
        print(f"thousand fuzz: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    progress = terminal_progress("fuzz")
    with process.supervised():
        fuzz(command, resolved.name, resolved.to_document(), args.deals, str(args.seed), args.jobs,
             args.timeout, args.save, progress=progress, max_findings=args.max_findings, known=known,
             fallbacks=house.fallbacks(args.rules, args.as_profile), outcome=outcome, rules=args.rules,
             as_profile=args.as_profile)
    clear_progress()
    for line in summary(outcome, resolved.name, str(args.seed), known):
        print(printable(line[:2000]))
    if args.report is not None:
        problem = write_report(args.report, outcome, resolved.name, command, str(args.seed))
        if problem:
            print(f"thousand fuzz: {problem}", file=sys.stderr)
            return ExitCode.INTERNAL
    if outcome.error:
        return error_exit_code(outcome.error)
    if outcome.nothing_checked:
        print("thousand fuzz: nothing was checked: every trial ended on a skip before its first action", file=sys.stderr)
        return ExitCode.NOTHING_CHECKED
    if outcome.findings and args.save:
        rules = f"--rules {shlex.quote(args.rules)}" if args.rules else ""
        print(f"next: replay the findings: thousand verify {rules + ' ' if rules else ''}--cases {shlex.quote(str(args.save))} "
              f"-- {shlex.join(command)}")
    if any(failed(found.divergence) for found in outcome.findings):
        return ExitCode.CANNOT_START  # it broke the protocol mid-run: shrunk and saved, and not a rule
    return ExitCode.FAILED if outcome.findings or outcome.unreproducible else ExitCode.PASSED


def exit_code(outcome: Outcome) -> ExitCode:
    """The exit code of a run that ended, by verify's rule: a finding (or a transcript that
    does not reproduce) is 1; else nothing checked (every trial ended on a skip before its
    first action) is 5; else 0, unchecked observations and skips stated in the summary, as
    verify passes a run whose cases were partly skipped."""
    if outcome.error:
        return error_exit_code(outcome.error)
    if any(failed(found.divergence) for found in outcome.findings):
        return ExitCode.CANNOT_START
    if outcome.findings or outcome.unreproducible:
        return ExitCode.FAILED
    return ExitCode.NOTHING_CHECKED if outcome.nothing_checked else ExitCode.PASSED


def error_exit_code(error: str) -> ExitCode:
    """The exit code of a run its error stopped, as verify's: the implementation skipped what
    it was asked (nothing was checked: 5); it failed to start or broke the protocol, which
    stops the comparison (4); the reference's or the saving's failure is a problem here (3)."""
    if error.startswith("the implementation skipped"):
        return ExitCode.NOTHING_CHECKED
    return ExitCode.CANNOT_START if error.startswith("the implementation") else ExitCode.INTERNAL


def write_report(path: Path, outcome: Outcome, profile: str, command: Sequence[str], seed: str) -> str | None:
    """The new causes as a report of ``thousand verify --report``'s shape (one failing case per
    cause, its finding as the case's mismatch), which ``--known`` of verify, fit and fuzz
    reads; the problem when it cannot be written."""
    found = [runner.Result(f"{base_name(profile)}/fuzz-{_slug(seed)}-{cause.trial}", f"fuzz --seed {seed}, trial {cause.trial}",
                    profile, "fail", (cause.finding.message or cause.signature)
                    + (f"; played as the implementation does with {_changes(cause.explained)}" if cause.explained else ""),
                    findings=[cause.finding])
             for cause in outcome.findings]
    verdict = reports.judge(found, None, [r.case_id for r in found])
    info = reports.RunInfo(list(command), [profile], exit_code=exit_code(outcome),
                           fuzz={"deals": outcome.deals_played, "trials": outcome.trials,
                                 "unchecked_observations": outcome.unchecked,
                                 "trials_ended_by_skip": sum(outcome.skipped_trials.values()),
                                 "skipped_by_reason": dict(outcome.skipped_trials)})
    try:
        reports.write_json(path, reports.json_report(found, verdict, info))
    except OSError as exc:
        return f"cannot write the report: {exc.filename or path}: {exc.strerror or exc}"
    return None


def less_notes(declared: Declarations | None) -> list[str]:
    """What the comparison leaves out for an implementation that sends less."""
    notes = []
    if declared is not None and declared.unsupported.actions:
        notes.append(f"unchecked: the actions {', '.join(sorted(declared.unsupported.actions))}, which the implementation "
                     "declares unsupported (left out of the legal sets compared; a trial that takes one ends there)")
    if declared is not None and declared.unsupported.state_fields:
        notes.append(f"unchecked: the state fields {', '.join(sorted(declared.unsupported.state_fields))}, "
                     "which the implementation declares absent (never compared)")
    if declared is not None and declared.events_derived:
        notes.append("events: derived from the states on both sides (the implementation sends none)")
    return notes


def skip_lines(outcome: Outcome) -> list[str]:
    """What the implementation declined (``skipped``): unchecked, never counted as a finding."""
    lines = []
    if outcome.unchecked:
        lines.append(f"unchecked: {outcome.unchecked} observation{'s' if outcome.unchecked != 1 else ''} the "
                     "implementation answered skipped (a legal set or a state: not compared; the reference's decided the play)")
    ended = sum(outcome.skipped_trials.values())
    if ended:
        lines.append(f"unchecked: {ended} of {outcome.trials} trials ended on a skip, without a finding "
                     "(nothing after the skipped request was compared):")
        lines += [f"  {count} x {said}" for said, count in sorted(outcome.skipped_trials.items(), key=lambda kv: -kv[1])[:10]]
    return lines


def _changes(changes: Sequence[Change]) -> str:
    return ", ".join(change.text() for change in changes)


def _explained_in_a_sentence(found: NewCause) -> str:
    """What other knob values say of a proven finding (``Proof.explained``), as the summary and
    its saved transcript tell it; "" when nothing was tried."""
    if found.explained:
        return (f"A rule, not a bug: with {_changes(found.explained)} the reference plays it as the implementation did, "
                "and no corpus case of those knobs contradicts it (write them in the rules file, or fit again).")
    if found.explain_stopped:
        return f"Other knob values: the search for one that plays it stopped before its end ({found.explain_stopped})."
    if found.proof or not found.shrunk or failed(found.divergence):
        return ""
    return ("No knob value tried (each alone, and pairs built on those that came nearer) plays it: "
            "a bug, or a rule no knob writes.")


def summary(outcome: Outcome, profile: str, seed: str, known: findings.Known | None) -> list[str]:
    """The hunt in a few lines: each finding with its count, the deal it was first seen in and its transcript."""
    rate = outcome.deals_played / max(outcome.seconds, 1e-9)
    played = (f"{outcome.deals_played} deals ({outcome.trials} trials, seed {seed}, {rate:.0f} deals/s) "
              f"under {profile}")
    lines = []
    if outcome.error:
        lines.append(f"thousand fuzz: after {outcome.deals_played} deals, {outcome.error}")
    if not outcome.findings:
        lines.append(("no new divergence" if not outcome.unreproducible else "no reproducible finding") + f" in {played}"
                     if not outcome.error else "")
    else:
        lines.append(f"{len(outcome.findings)} finding{'s' if len(outcome.findings) > 1 else ''} in {played}:")
    for number, found in enumerate(outcome.findings, start=1):
        first = found.divergence.findings[0]
        lines.append(f"  {number}. {found.signature}: {found.count} divergence{'s' if found.count > 1 else ''}, "
                     f"first in deal {found.deal} (trial {found.trial}); shrunk in {found.shrink_steps} replays to "
                     f"{len(found.divergence.scenario.deals)} deal(s)")
        signed = found.divergence.finding  # the values the signature reads, as the transcript shows them
        if failed(found.divergence):
            lines.append(f"     the implementation broke the protocol at {first.at}: {first.actual}")
        else:
            lines.append(f"     reference {_short(signed.expected, 150)}, implementation {_short(signed.actual, 150)}")
        if found.knobs:
            lines.append(f"     knobs: {', '.join(found.knobs[:5])}" + (f", ... ({len(found.knobs)} knobs)" if len(found.knobs) > 5 else ""))
        explained = _explained_in_a_sentence(found)
        lines += [f"     {explained}"] if explained else []
        if found.divergence.scenario.position:
            lines.append(f"     in a position built for one rule: {found.divergence.scenario.position}")
        lines.append(f"     saved {found.saved}" if found.saved else f"     at {first.place} (not saved: {found.unsaved})")
    if outcome.unreproducible:
        lines.append(f"{len(outcome.unreproducible)} not reproducible (seen in play, but the shrunk transcript does not "
                     "show it when replayed as thousand verify replays it; not saved, not counted as findings):")
    for found in outcome.unreproducible:
        lines.append(f"  - {found.signature}: {found.count} divergence{'s' if found.count > 1 else ''}, first in trial "
                     f"{found.trial} (seed {seed}): {found.proof}")
    lines += outcome.notes
    lines += skip_lines(outcome)
    if known is not None:
        met = sum(outcome.known.values())
        lines.append(f"known root causes ({known.source}): {met} trial{'s' if met != 1 else ''} ended on one, "
                     "no finding" + (":" if met else ""))
        lines += [f"  {count} x {cause}" for cause, count in sorted(outcome.known.items(), key=lambda kv: -kv[1])]
    return [line for line in lines if line]
