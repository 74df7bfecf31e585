"""The values ``thousand fit`` tries for a knob: its whole enum, both booleans, and for a
number what the implementation itself showed.

A search that only tries numbers near the profile's value and the bundled profiles' values
never reaches a maximum bid of 300 that no bundled profile uses, though the implementation
offered bids up to 300 on every deal. So the readings come first: the highest and lowest
bid or contract each legal set offered, the steps between offered amounts, the points each
marriage added, the numbers of the states and events that differ and the distances between
the reference's numbers and the implementation's (a deal's deltas, a score stopped at a
line). Structured knobs take values built from the same readings (the marriage values the
events showed; a redeal rule at the line of card points the redealt hands show; no redeal
rule, each rule left out or turned over).
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence, TypeGuard

import variants
from conformance.harness.findings import Finding, Observed
from conformance.oracle import knobs as case_knobs
from conformance.oracle import evidence, observe
from conformance.oracle.policy import POLICY, Policy
from spec.vocabulary import CARD_POINTS, SUITS, Phase
from variants.schema import fit_roles, item_fit_roles, knob_entry

# The number knobs' roles come from the schema (``x-fit-role``, ``x-fit-event``): a new number
# knob names its role there and fit reads it without an edit here.
ROLES = fit_roles()


def _with_role(role: str) -> frozenset[str]:
    return frozenset(knob for knob, (roles, _event) in ROLES.items() if role in roles)


def _events_of(role: str) -> dict[str, str]:
    return {knob: event for knob, (roles, event) in ROLES.items() if role in roles and event is not None}


def _the_one(role: str) -> str:
    (knob,) = _with_role(role)
    return knob


# Integer knobs whose values are bid or contract amounts: read from the legal sets.
AMOUNT_KNOBS = _with_role("amount")
STEP_KNOBS = _with_role("step")
AMOUNT_WORDS = ("bid", "contract")
CONTRACT_STEP = 5  # the next amount above a contract read as a line (the finest grid any profile uses)
CEILING_REFUSAL = "bid_above_ceiling"  # the reason a bid over a holder's ceiling is refused
# Score lines: the knob, and the event that shows a player's score reached it. The barrel
# begins at barrel.threshold and the match ends at match_end.target; a line no bundled
# profile uses (1645) shows nowhere but in the scores around those events
SCORE_LINES = _events_of("score_line")
RESETS = ("dump", "score_reset")  # events that set a player's score back in the reply that shows a line reached
# A bid line: the talon is shown from a winning bid of talon.shown_from_bid. It lies above the
# highest winning bid whose auction ended without the talon shown and at or below the lowest
# with it shown: a line of 240 shows nowhere else on a grid of 10 (no bid offered or refused)
TALON_LINE = _the_one("bid_line")
# A trick line: a marriage may be declared on the lead of tricks up to marriages.last_trick. It
# lies at or above the latest trick on whose lead a holder was offered a declaration, and below
# the earliest on whose lead a holder was not: a line of 3 shows only as leads of the fourth
# trick and later with a king and queen of a suit in hand and no declaration offered
MARRIAGE_LINE = _the_one("trick_line")
TRICKS = 8  # the tricks of a deal: a hand leads trick 9 - (cards left)
Held = tuple[tuple[str, ...], int, int]  # a bidder's marriages (suits), highest bid offered, step between bids
# Count knobs: the event whose ``count`` shows the count they start or stop at. Defenders
# paid from the fifth give-up show only as the give-up of count 5 scored apart, among many
# score numbers that crowd a 5 out of the readings
COUNT_KNOBS = _events_of("count")
# Numbers inside the items of a list knob (``x-fit-role`` on an item field): a redeal when a
# hand holds under 18 card points is a rule no bundled profile has at 18, and shows only as
# the hands of the players its ``redeal`` events name. list knob -> item field -> its event
HAND_LINES = {knob: {name: event for name, (roles, event) in fields.items() if "hand_points" in roles and event}
              for knob, fields in item_fit_roles().items()}


@dataclass
class Readings:
    """Numbers the implementation showed, each counted by how often it showed it."""

    policy: Policy = POLICY  # how many readings are tried (``readings``, ``edges``, ...)

    amounts: collections.Counter[int] = field(default_factory=collections.Counter)  # tops and bottoms of legal sets
    steps: collections.Counter[int] = field(default_factory=collections.Counter)
    marriages: dict[str, collections.Counter[int]] = field(default_factory=dict)  # suit -> points added
    numbers: collections.Counter[int] = field(default_factory=collections.Counter)  # in differing values, and their distances
    # the same, by knob deciding the differing observation: on an engine with many differences
    # the commonest numbers overall are score deltas, and a bolt penalty of 100 never makes them
    decided: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # reference's number -> the implementation's numbers in its place: where the reference
    # showed a knob's own value (a bolt penalty of 120), what the engine showed instead
    replaced: dict[int, collections.Counter[int]] = field(default_factory=dict)
    # by knob deciding a differing state or event: the implementation's numbers where they stand
    # in place of other numbers of the reference's. A defender capped by an 800 rule moved to
    # 395 ends the deal on 395 where the reference scores 420, and 395 is the line; among all
    # the numbers of those observations (every score, every delta) it is rarely the commonest
    shifted: dict[str, collections.Counter[int]] = field(default_factory=dict)
    aces: collections.Counter[int] = field(default_factory=collections.Counter)  # points four aces added
    # by knob deciding a differing legal set: the lowest and highest amount the implementation
    # offered there and the edges of the amounts only one side offered. A least bid on the
    # barrel of 260 shows only in the few legal sets of a player on the barrel, never among
    # the commonest amounts overall (the opening bid and the maximum)
    edges: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # by other integer knob deciding a differing legal set: the distances between the two sides'
    # highest and lowest amounts there. Four aces worth 30 raise a ceiling of 495 to 525: the
    # engine stops a holder's bids 30 above the reference's, and 30 is shown nowhere else
    gaps: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # by amount knob deciding a differing state or event: the contract of the deal there and
    # the next amount above it. A least contract of 380 to win from the barrel shows only as a
    # barrel player's made contract of 120 that does not win: some amount above 120 is the line
    contracts: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # by amount knob deciding a refusal that differs: the amount of the bid or contract and the
    # one a step below it. Bidding a step at a time, a maximum of 305 shows in no legal set,
    # only where a bid of 310 is refused as above the ceiling rather than as a jump
    refused: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # by score-line knob: the scores at which the implementation's line was reached (the
    # score of a player as it entered the barrel or won), and the highest score it played on
    # past without reaching it (a player off the barrel, a match with no winner): the line
    # lies above the one and at or below the other
    reached: dict[str, collections.Counter[int]] = field(default_factory=dict)
    passed: dict[str, int] = field(default_factory=dict)
    # the scores a player won the match with in the reference's replies where the
    # implementation's showed no win: the target lies above them. A jump to 1040 the engine
    # caps on the barrel at 880 shows 880 only, and a target of 1920 nowhere else
    overshot: collections.Counter[int] = field(default_factory=collections.Counter)
    # ``MARRIAGE_LINE``: the tricks a marriage holder leading was offered a declaration on, and not
    declared_on: set[int] = field(default_factory=set)
    undeclared_on: set[int] = field(default_factory=set)
    # leads of a holder offered no declaration, who led another card: they show the line only
    # where the implementation offers declarations at all (``offered``), not where leading the
    # king or queen declares by itself
    unoffered_on: set[int] = field(default_factory=set)
    offered: bool = False
    # the marriage condition under a marriage ceiling, by the highest amount a marriage holder
    # was offered less what the marriages held are worth under the rules read against: a
    # condition of 165 shows nowhere on a grid of 25 (150 and 175 are offered or not either
    # way) but as a clubs holder's bids up to 225
    conditions: collections.Counter[int] = field(default_factory=collections.Counter)
    # by amount knob deciding a differing legal set: ``above_all`` (tried first)
    above: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # by amount knob deciding a differing legal set: the highest ``raised_to`` read. A maximum
    # of 570 shows only as the highest bids of the few hands whose marriages reach past 410,
    # among the many amounts of the other hands' edges
    raised: dict[str, int] = field(default_factory=dict)
    # the step knobs deciding a differing legal set whose amounts the two sides offered at
    # other steps: a bid step of 10 shows in every auction, yet a wide group's search takes
    # only the knobs its sample's cases exercise, and those cases were written for other rules
    stepped: set[str] = field(default_factory=set)
    # the knobs named for each event type only one side sent, where they are few: an engine's
    # extra ``dump`` event names the dump section's three knobs, where the score beside it is
    # decided by some forty, and the cases of a wide group's sample were written for others
    named: set[str] = field(default_factory=set)
    worths: dict[str, int] = field(default_factory=dict)  # suit -> a marriage's points under those rules
    # the marriages a bidder held (suits), the highest bid the implementation offered it and
    # the step between its bids. Under a marriage ceiling each shows the worth of the
    # marriages held to within a step: a clubs marriage worth 40 shows as a clubs holder's
    # bids stopping at the condition plus 40, though no deal declares one (``marriage_tables``)
    held: collections.Counter[Held] = field(default_factory=collections.Counter)
    # per marriages held (suits, four aces left out): the highest bid the implementation ever
    # offered such a bidder, a single bid included, and the least it refused as above the
    # ceiling. A stop at 180 ends every holder's legal set at 180 until the high bid reaches
    # it: a hearts holder then offered 190 alone and refused 200 shows its worth over the
    # condition to within the step, where every ``held`` line shows only the stop
    reached_by: dict[tuple[str, ...], int] = field(default_factory=dict)
    refused_to: dict[tuple[str, ...], int] = field(default_factory=dict)
    condition: int | None = None  # the marriage condition under the rules read against
    # the stop under those rules: a holder's highest bid there, with the auction below it, is
    # the stop's and bounds the ceiling from below only (``marriage_tables``)
    stop: int | None = None
    # by count knob deciding a differing state or event: the counts its event showed there
    counts: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # by knob deciding a differing state or event: the distances between the two sides'
    # numbers there (``_moved_by_distances``). A give-up penalty of 255 from the third
    # give-up shows only inside a declarer's delta that also holds the bid lost, 135 below
    # the reference's under a penalty of 120
    distances: dict[str, collections.Counter[int]] = field(default_factory=dict)
    # ``HAND_LINES``: by event type and its reason, the card points of the hands of the players
    # the events named (a line above each), and the fewest card points of a hand in a deal no
    # such event ended at its start (a line at or below it)
    named_hands: dict[tuple[str, str], collections.Counter[int]] = field(default_factory=dict)
    kept_hands: dict[str, int] = field(default_factory=dict)

    def add_record(self, record: observe.CaseRecord) -> None:
        before: dict[str, Any] = {}
        for step in record.steps:
            self._add_lines(step)
            self._add_hands(step)
            self._add_talon_line(step.reply.events)
            if step.legal:
                self._add_legal(step.legal)
                self._add_held(before, step.legal)
                self._add_raise(before, step.legal)
            self._add_bounds(before, step)
            self._add_marriage_line(before, step)
            before = step.state if isinstance(step.state, dict) else {}
            if step.action is not None and step.reply.accepted and step.action.split(" ", 1)[0] in AMOUNT_WORDS:
                amount = _amount(step.action)
                if amount is not None:
                    self.amounts[amount] += 1
            for event in step.reply.events:
                if isinstance(event, dict) and event.get("type") == "aces_declared" and _integer(event.get("points")):
                    self.aces[event["points"]] += 1
                if isinstance(event, dict) and event.get("type") == "marriage_declared":
                    suit, points = event.get("suit"), event.get("points")
                    if isinstance(suit, str) and isinstance(points, int) and not isinstance(points, bool):
                        self.marriages.setdefault(suit, collections.Counter())[points] += 1

    def _add_lines(self, step: observe.StepRecord) -> None:
        scores = step.state.get("scores") if isinstance(step.state, dict) else None
        if not isinstance(scores, list) or len(scores) != 3:
            return
        for knob, word in SCORE_LINES.items():
            for event in step.reply.events:
                player = event.get("player") if isinstance(event, dict) and event.get("type") == word else None
                if isinstance(player, int) and _integer(player) and 0 <= player < 3:
                    score = _arrival(scores[player], player, step.reply.events)
                    if score is not None:
                        self.reached.setdefault(knob, collections.Counter())[score] += 1
        barrel, winner = step.state.get("barrel"), step.state.get("winner", 0)
        # a winner's score is past both lines whether or not it sat on the barrel
        unwon = [s for s in scores if _integer(s)] if winner is None else []
        below = [s for p, s in enumerate(scores) if _integer(s) and isinstance(barrel, list) and len(barrel) == 3
                 and isinstance(barrel[p], dict) and barrel[p].get("on") is False] if winner is None else []
        for knob, shown in (("barrel.threshold", below), ("match_end.target", unwon)):
            if shown:
                self.passed[knob] = max(self.passed.get(knob, max(shown)), max(shown))

    def _add_hands(self, step: observe.StepRecord) -> None:
        """The card points of the hands the ``HAND_LINES`` events name (``named_hands``), and
        at a deal's start that none ends, its weakest hand (``kept_hands``)."""
        hands = step.state.get("hands") if isinstance(step.state, dict) else None
        if not isinstance(hands, list) or len(hands) != 3 or not all(isinstance(h, list) for h in hands):
            return
        points = [_card_points(hand) for hand in hands]
        for word in {event for fields in HAND_LINES.values() for event in fields.values()}:
            named = [e for e in step.reply.events if isinstance(e, dict) and e.get("type") == word]
            for event in named:
                player, reason = event.get("player"), event.get("reason")
                held = points[player] if _integer(player) and 0 <= player < 3 else None
                if isinstance(reason, str) and held is not None:
                    self.named_hands.setdefault((word, reason), collections.Counter())[held] += 1
            shown = [p for p in points if p is not None]
            if step.step == 0 and not named and len(shown) == 3:
                self.kept_hands[word] = min(self.kept_hands.get(word, min(shown)), min(shown))

    def hand_lines(self, event: str, reason: str) -> list[int]:
        """The lines of a hand's card points the events show for ``reason``: a step above the
        strongest hand they named (the least line every named hand is under), and the weakest
        hand of a deal none ended (the greatest line no other hand is under) where above it."""
        named = self.named_hands.get((event, reason))
        if not named:
            return []
        least = max(named) + 1
        kept = self.kept_hands.get(event)
        return [least] + ([kept] if kept is not None and kept > least else [])

    def list_values(self, knob: str, current: list[Any]) -> list[list[Any]]:
        """For a list knob whose items hold a hand line (``HAND_LINES``): the list with an item
        for each reason its events showed at each line read (``hand_lines``), added to the
        current items and alone, for the reasons whose current or bundled items hold that number.
        The item's other fields come from those items, and else each field's first enum value (a
        rule no bundled profile has: a redeal by itself before the bidding)."""
        fields = HAND_LINES.get(knob)
        if not fields:
            return []
        items = value_schema(knob).get("items", {})
        props = items.get("properties", {})
        found: list[list[Any]] = []
        for name, event in fields.items():
            reasons = {reason for (word, reason) in self.named_hands if word == event}
            for reason in sorted(reasons):
                keys = [key for key, spec in props.items() if reason in spec.get("enum", ())]
                if not keys:
                    continue
                key = keys[0]
                known = [item for rules in (current, *bundled().get(knob, ())) if isinstance(rules, list)
                         for item in rules if isinstance(item, dict) and item.get(key) == reason]
                if not any(name in item for item in known):
                    continue  # a reason whose items hold no such number (four nines named by a redeal)
                plain = {other: spec["enum"][0] for other, spec in props.items() if other not in (key, name) and spec.get("enum")}
                templates: list[dict[str, Any]] = []
                for item in [*known, {key: reason, **plain}]:
                    template = {k: v for k, v in item.items() if k != name}
                    if template not in templates:
                        templates.append(template)
                others = [item for item in current if not (isinstance(item, dict) and item.get(key) == reason)]
                low, high = integer_range(props.get(name, {}))
                for line in [n for n in self.hand_lines(event, reason) if low <= n <= high]:
                    for template in templates:
                        made = {k: v for k, v in sorted({**template, name: line}.items(), key=lambda kv: list(props).index(kv[0])
                                                                if kv[0] in props else len(props))}
                        for rules in (others + [made], [made]):
                            if rules not in found:
                                found.append(rules)
        return found

    def _add_talon_line(self, events: Sequence[Any]) -> None:
        """The winning bid of an auction that ends in this step, as reaching the talon line or not."""
        won = [e.get("bid") for e in events if isinstance(e, dict) and e.get("type") == "auction_won"]
        bid = won[0] if len(won) == 1 else None
        if not _integer(bid):
            return
        if any(isinstance(e, dict) and e.get("type") == "talon_revealed" for e in events):
            self.reached.setdefault(TALON_LINE, collections.Counter())[bid] += 1
        else:
            self.passed[TALON_LINE] = max(self.passed.get(TALON_LINE, bid), bid)

    def _add_marriage_line(self, before: dict[str, Any], step: observe.StepRecord) -> None:
        """A lead by a holder of a king and queen of one suit, as a trick a declaration was
        offered or made on, or not (the first trick left out: ``marriages.first_trick`` decides
        it). Where declarations are automatic none is ever offered: a lead of a king or queen
        of the pair shows the line by whether it declared."""
        held = _hand_to_act(before)
        if before.get("phase") != Phase.PLAY or before.get("trick") or held is None or not step.legal:
            return
        trick = TRICKS + 1 - len(held)
        pairs = _marriages_held(held)
        if trick == 1 or not pairs:
            return
        if any(str(action).endswith(" marriage") for action in step.legal):
            self.offered = True
            self.declared_on.add(trick)
        elif step.action in [f"play {rank}{suit}" for suit in pairs for rank in "KQ"]:
            declared = any(isinstance(e, dict) and e.get("type") == "marriage_declared" for e in step.reply.events)
            (self.declared_on if declared else self.undeclared_on).add(trick)
        else:
            self.unoffered_on.add(trick)

    def _add_condition(self, d: Finding) -> None:
        """The marriage condition a holder's highest offered amount shows (``conditions``)."""
        held = _hand_to_act(d.before if isinstance(d.before, dict) else {})
        if not self.worths or held is None:
            return
        worth = sum(self.worths.get(suit, 0) for suit in _marriages_held(held))
        if not worth:
            return
        for word in AMOUNT_WORDS:
            offered = _offered(d.actual, word)
            if offered and max(offered) - worth > 0:
                self.conditions[max(offered) - worth] += 1

    def _add_raise(self, before: dict[str, Any], legal: Sequence[Any]) -> None:
        """The step from the high bid to the least bid offered over it: where a bid may only
        be raised by one step, each legal set offers one amount and shows no step within it."""
        offered, high = _offered(legal, "bid"), before.get("high_bid")
        if before.get("phase") == Phase.AUCTION and offered and _integer(high) and min(offered) > high:
            self.steps[min(offered) - high] += 1

    def _add_held(self, before: dict[str, Any], legal: Sequence[Any]) -> None:
        """The marriages the bidder held and the highest bid it was offered (``held``)."""
        pairs = _bidder_marriages(before)
        offered = sorted(_offered(legal, "bid"))
        if pairs is None or len(offered) < 2:
            return
        self.held[(pairs, offered[-1], min(_steps(offered)))] += 1

    def _add_bounds(self, before: dict[str, Any], step: observe.StepRecord) -> None:
        """The highest bid a holder was offered and the least refused above its ceiling
        (``reached_by``, ``refused_to``)."""
        pairs = _bidder_marriages(before)
        if pairs is None:
            return
        offered = _offered(step.legal or (), "bid")
        if offered:
            self.reached_by[pairs] = max(self.reached_by.get(pairs, 0), max(offered))
        refused = step.reply.refusal
        amount = _amount(step.action) if step.action and step.action.startswith("bid ") else None
        if refused is not None and refused[1] == CEILING_REFUSAL and amount is not None:
            self.refused_to[pairs] = min(self.refused_to.get(pairs, amount), amount)

    def bounded_table(self, shown: dict[str, Any], condition: int) -> dict[str, Any] | None:
        """The table nearest ``shown`` under which, over ``condition``, every holder of one
        marriage reaches the highest bid it was offered and stays below the least it was
        refused as above the ceiling (on a grid of 5); None where that moves no suit or no
        worth fits. A worth the declarations showed stays as shown. Where every holder was
        offered the highest bid anyone was, that bid is the maximum's and shows no ceiling
        (a table 470 above every suit would stand in for no ceiling at all); a refusal above
        it may be the maximum's too."""
        top = max(self.amounts, default=0)
        holders = [reached for pairs, reached in self.reached_by.items() if pairs]
        capped = bool(holders) and min(holders) >= top
        declared = self.declared()
        table = {**shown, **declared}
        for suit in SUITS:
            worth = table.get(suit)
            if not _integer(worth):
                return None
            low = 0 if capped else self.reached_by.get((suit,), 0) - condition
            refused = self.refused_to.get((suit,))
            high = refused - condition - 1 if refused is not None and refused <= top else None
            if suit not in declared and worth < low:
                worth = low + (-low) % CONTRACT_STEP
            if suit not in declared and high is not None and worth > high:
                worth = high - high % CONTRACT_STEP
            if worth < low or (high is not None and worth > high):
                return None
            table[suit] = worth
        return table if table != shown else None

    def lines(self, knob: str) -> list[int]:
        """The values a score line can take by the scores shown: the lowest score that reached
        it, and a step above the highest that played on past it; for the marriage line, the
        latest trick a declaration was offered on, and the trick before the earliest after it
        with none offered (one before it is refused by another rule: a defender's lead)."""
        if knob == MARRIAGE_LINE:
            latest = max(self.declared_on, default=1)
            undeclared = self.undeclared_on | (self.unoffered_on if self.offered else set())
            after = [trick for trick in undeclared if trick > latest]
            return sorted({*([min(after) - 1] if after else []), *([latest] if self.declared_on else [])})
        found = [min(self.reached[knob])] if self.reached.get(knob) else []
        if knob in self.passed and self.passed[knob] + CONTRACT_STEP not in found:
            found.append(self.passed[knob] + CONTRACT_STEP)
        if knob == "match_end.target" and self.overshot and max(self.overshot) + CONTRACT_STEP not in found:
            found.append(max(self.overshot) + CONTRACT_STEP)
        return found

    def _add_legal(self, legal: Sequence[str]) -> None:
        for word in AMOUNT_WORDS:
            amounts = sorted(_offered(legal, word))
            if amounts:
                self.amounts[amounts[0]] += 1
                self.amounts[amounts[-1]] += 1
                self.steps.update(_steps(amounts))

    def _add_overshot(self, d: Finding) -> None:
        """The score the reference's reply won the match with where the implementation's
        showed no win (``overshot``)."""
        wanted = (d.expected or {}).get("events") if isinstance(d.expected, dict) else None
        sent = (d.actual or {}).get("events") if isinstance(d.actual, dict) else None
        if not isinstance(wanted, list) or not isinstance(sent, list):
            return
        if any(isinstance(e, dict) and e.get("type") == "match_won" for e in sent):
            return
        won = [e.get("player") for e in wanted if isinstance(e, dict) and e.get("type") == "match_won"]
        scores = [e.get("scores") for e in wanted if isinstance(e, dict) and e.get("type") == "deal_scored"]
        if len(won) == 1 and _integer(won[0]) and scores and isinstance(scores[-1], list) \
                and 0 <= won[0] < len(scores[-1]) and _integer(scores[-1][won[0]]):
            self.overshot[scores[-1][won[0]]] += 1

    def add_difference(self, d: Finding) -> None:
        if d.kind is Observed.EVENT:
            self._add_overshot(d)
        if d.kind is Observed.LEGAL and isinstance(d.expected, list) and isinstance(d.actual, list):
            read, apart, above = edges(d.expected, d.actual), _gaps(d.expected, d.actual), above_all(d.expected, d.actual)
            raised = raised_to(d.expected, d.actual)
            for knob in evidence.deciding_knobs(d):
                if knob in AMOUNT_KNOBS:
                    self.edges.setdefault(knob, collections.Counter()).update(read)
                    self.above.setdefault(knob, collections.Counter()).update(above)
                    if raised:
                        self.raised[knob] = max(self.raised.get(knob, 0), *raised)
                elif knob not in STEP_KNOBS:
                    self.gaps.setdefault(knob, collections.Counter()).update(apart)
            if "auction.marriage_needed_above" in evidence.deciding_knobs(d):
                self._add_condition(d)
            if steps_apart(d.expected, d.actual):
                self.stepped.update(k for k in evidence.deciding_knobs(d) if k in STEP_KNOBS)
        for named in evidence.named_knobs(d):
            if len(named) <= self.policy.named:
                self.named.update(named)
        amount = _amount(d.action) if d.kind is Observed.REFUSAL and d.action and d.action.split(" ", 1)[0] in AMOUNT_WORDS else None
        if amount is not None:
            for knob in evidence.deciding_knobs(d):
                if knob in AMOUNT_KNOBS:
                    self.refused.setdefault(knob, collections.Counter()).update((amount, amount - CONTRACT_STEP))
        if d.kind in (Observed.STATE, Observed.EVENT):
            contract = d.before.get("contract") if isinstance(d.before, dict) else None
            if isinstance(contract, int) and not isinstance(contract, bool):
                for knob in evidence.deciding_knobs(d):
                    if knob in AMOUNT_KNOBS:
                        self.contracts.setdefault(knob, collections.Counter()).update((contract, contract + CONTRACT_STEP))
            read, shown, apart = collections.Counter(_numbers(d.actual)), collections.Counter[int](), collections.Counter[int]()
            for a, b in _paired(d.expected, d.actual):
                if a != b:
                    apart[abs(a - b)] += 1
                    shown[a] += 1
                    self.replaced.setdefault(b, collections.Counter())[a] += 1
            read.update(apart)  # the numbers shown, and how far each stands from the reference's
            self.numbers.update(read)
            for knob in evidence.deciding_knobs(d):
                self.decided.setdefault(knob, collections.Counter()).update(read)
                self.shifted.setdefault(knob, collections.Counter()).update(shown)
                self.distances.setdefault(knob, collections.Counter()).update(apart)
                if knob in COUNT_KNOBS:
                    self.counts.setdefault(knob, collections.Counter()).update(_counts(d.actual, COUNT_KNOBS[knob]))

    def for_knob(self, knob: str, current: Any = None) -> list[int]:
        if knob in AMOUNT_KNOBS:
            found = self.amounts
        elif knob in STEP_KNOBS:
            found = self.steps
        elif knob == "marriages.four_aces" and self.aces:
            found = self.aces
        else:  # what stood in the knob's own value's place, what the observations it decides
            # showed, its own value moved by their distances, then the commonest overall. The
            # moved values come after those shown: the first readings are the ones a switch
            # completing a change carries (a lock on the defenders from 115)
            ranked: list[int] = self.lines(knob)
            for counter in (self.counts.get(knob), self.gaps.get(knob), self._moved_by_gaps(knob, current),
                            self.replaced.get(current) if _integer(current) else None,
                            self._taken_instead(current), self.shifted.get(knob), self.decided.get(knob),
                            self._moved_by_distances(knob, current), self.numbers):
                ranked += [n for n, _count in (counter or collections.Counter()).most_common(self.policy.readings) if n not in ranked]
            return ranked
        # a marriage condition read from the holders' highest bids first: the commonest amounts
        # are the opening bid and the maximum; the talon's line where the auctions showed it
        ranked = [n for n, _count in self.conditions.most_common(self.policy.edges)] if knob == "auction.marriage_needed_above" else []
        ranked += self.lines(knob) if knob == TALON_LINE else []
        ranked += [n for n, _count in self.above.get(knob, collections.Counter()).most_common(self.policy.edges) if n not in ranked]
        if knob in self.raised and self.raised[knob] not in ranked:
            ranked.append(self.raised[knob])
        ranked += [n for n, _count in found.most_common(self.policy.readings) if n not in ranked]
        for shown in (self.edges.get(knob, collections.Counter()), self.contracts.get(knob, collections.Counter()),
                      self.refused.get(knob, collections.Counter())):
            ranked += [n for n, _count in shown.most_common() if n not in ranked][:self.policy.edges]
        return ranked

    def _moved_by_gaps(self, knob: str, current: Any) -> collections.Counter[int] | None:
        """The knob's value moved up by each gap its legal sets showed: four aces counted as
        a marriage of 10 offer bids up to 110 where the engine's, worth 45, offer 140; the gap
        of 30 is a value too, but 40 is the one that plays as 45."""
        gaps = self.gaps.get(knob)
        if not gaps or not _integer(current):
            return None
        return collections.Counter({current + gap: count for gap, count in gaps.items()})

    def _moved_by_distances(self, knob: str, current: Any) -> collections.Counter[int] | None:
        """The knob's value moved up and down by the commonest distances between the two
        sides' numbers in the observations it decides: a number a delta holds beside others
        (the bid a declarer loses on giving up, with the penalty from the third give-up)
        shows only as the delta moved by the difference between the two values."""
        moved = self.distances.get(knob)
        if not moved or not _integer(current):
            return None
        found = collections.Counter[int]()
        for distance, count in moved.most_common(self.policy.edges):
            found.update({current + distance: count, current - distance: count})
        return found

    def _taken_instead(self, current: Any) -> collections.Counter[int] | None:
        """What the implementation took off a score where the reference took the knob's own
        value: a give-up penalty of 120 shows only as a delta of -120, and an engine's 165 as
        -165 in its place (the scores apart by 45, a number no knob has)."""
        shown = self.replaced.get(-current) if _integer(current) and current > 0 else None
        return collections.Counter({-n: count for n, count in shown.items() if n < 0}) if shown else None

    def fresh(self, marriage_values: dict[str, Any] | None = None, condition: Any = None, stop: Any = None) -> None:
        """Forget all that was read from differences: what is read next is read against the
        rules now. A gap is measured from the rules the reference played under (one read
        before the marriage condition moved from 120 to 495, 375, says nothing about the four
        aces now), and a maximum of 575 that two legal sets still show is otherwise crowded
        out of the few edges tried by the amounts read under earlier rules.
        ``marriage_values``, ``condition`` and ``stop``: the marriages' points, the marriage
        condition and the stop under the rules now (for ``conditions`` and ``held``)."""
        for by_knob in (self.gaps, self.edges, self.above, self.raised, self.contracts, self.refused, self.decided,
                        self.shifted, self.replaced, self.counts, self.distances, self.overshot):
            by_knob.clear()
        self.stepped.clear()
        self.named.clear()
        self.conditions.clear()
        self.numbers.clear()
        self.worths = {suit: points for suit, points in (marriage_values or {}).items() if _integer(points)}
        self.condition = condition if _integer(condition) else None
        self.stop = stop if _integer(stop) else None

    def declared(self) -> dict[str, int]:
        """Per suit the events declared a marriage of, its commonest points."""
        return {suit: points.most_common(1)[0][0] for suit, points in self.marriages.items()}

    def marriage_values(self, current: dict[str, Any]) -> list[dict[str, Any]]:
        """The marriage table the events showed (the commonest points per suit), over
        ``current``, then the tables the holders' highest amounts show (``marriage_tables``)."""
        shown = {**current, **self.declared()}
        tables = [shown] if shown != current else []
        return tables + [t for t in self.marriage_tables(shown) if t != current and t not in tables]

    def marriage_tables(self, shown: dict[str, Any]) -> list[dict[str, Any]]:
        """The marriage tables under which every holder's highest bid in ``held`` is the
        marriage condition plus its marriages' worth, to the step below: a holder of clubs
        alone offered bids up to 490 over a condition of 460, in tens, holds 30 to 39, and
        with diamonds (30 to 39 alone) up to 530, 70 to 79: both 35 on a grid of 5. A suit no
        holder held alone keeps its value in ``shown``, the table the events showed. Under a
        stop, also the tables with a highest bid at the stop read as the stop's
        (``_past_stop``). Where no
        table agrees with every holder (a bid capped by another rule), the tables within the
        holders' bounds (``bounded_table``); where none is read either, the first worth each
        holder of one marriage allows over the first condition."""
        # the highest bid anyone was offered is the maximum's, not the ceiling's
        ceilings = [(pairs, top, step) for pairs, top, step in self.held if top < max(self.amounts, default=0)]
        conditions = self._shown_conditions(shown, ceilings)
        tables: list[dict[str, Any]] = []
        for condition in conditions:
            tables += [t for t in self._tables(shown, condition, ceilings) if t not in tables]
        if self.stop is not None:
            below, stopped = self._past_stop(ceilings)
            for condition in conditions:
                tables += [t for t in self._tables(shown, condition, below, stopped) if t not in tables]
        bounded = [t for t in (self.bounded_table(shown, c) for c in conditions) if t is not None and t not in tables]
        if tables or not conditions:
            return tables + bounded
        if bounded:
            return bounded
        choices = self._worths(shown, conditions[0], ceilings)
        return [{**shown, **{suit: worths[0] for suit, worths in choices.items()}}] if choices else []

    def _past_stop(self, ceilings: list[Held]) -> tuple[list[Held], list[Held]]:
        """``ceilings`` split at the rules' stop: a holder's highest bid there may be the
        stop's (no bid passes a stop at 350 until the auction stands at it), its ceiling at
        or above it. A stop the search tried may stand in for the ceilings of the holders
        it meets, so the tables that read those as ceilings are tried too."""
        return ([held for held in ceilings if held[1] != self.stop],
                [held for held in ceilings if held[1] == self.stop and held[0]])

    def _shown_conditions(self, shown: dict[str, Any], ceilings: list[Held]) -> list[int]:
        """The marriage conditions to read the worths over: the highest bid of bidders with no
        marriage (their commonest, to the step below on a grid of 5), the rules' condition, and
        the one under which the most holders of one marriage show its worth in ``shown``. A
        condition of 160 over an opening of 205 leaves a bidder with no marriage no bid, and
        holders alone show only the condition plus their worth: read over the rules' 120, a
        table 40 above every value stands in for the condition."""
        found: list[int] = []
        plain = collections.Counter((top, step) for pairs, top, step in ceilings if not pairs)
        if plain:
            # bids up to 200 in tens show a condition of 200 to 209: 205 shows only in the
            # sums a holder of two marriages is offered
            (top, step), _count = plain.most_common(1)[0]
            found += list(range(top + (-top) % CONTRACT_STEP, top + max(step, 1), CONTRACT_STEP))
        if self.condition is not None:
            found.append(self.condition)
        kept = collections.Counter(top - shown[pairs[0]] for pairs, top, _step in ceilings
                                   if len(pairs) == 1 and _integer(shown.get(pairs[0])))
        found += [condition for condition, _count in kept.most_common(1)]
        return list(dict.fromkeys(found))

    def _worths(self, shown: dict[str, Any], condition: int,
                ceilings: list[Held]) -> dict[str, list[int]]:
        """Per suit a holder of it alone shows, the worths its highest bid allows over
        ``condition`` on a grid of 5, the worth in ``shown`` first."""
        choices: dict[str, list[int]] = {}
        for pairs, top, step in ceilings:
            if len(pairs) == 1 and pairs[0] not in choices and top > condition:
                low, suit = top - condition, pairs[0]
                worths = range(low + (-low) % CONTRACT_STEP, low + step, CONTRACT_STEP)
                choices[suit] = sorted(worths, key=lambda worth: worth != shown.get(suit))
        return {suit: worths for suit, worths in choices.items() if worths}

    def _tables(self, shown: dict[str, Any], condition: int, ceilings: list[Held],
                stopped: Sequence[Held] = ()) -> list[dict[str, Any]]:
        """The tables over ``condition`` every holder in ``ceilings`` agrees with, and under
        which every holder in ``stopped`` reaches the stop."""
        choices = self._worths(shown, condition, ceilings)
        suits = [suit for suit in SUITS if suit in choices]
        if not suits or not all(_integer(shown.get(suit)) for suit in SUITS):
            return []
        tables: list[dict[str, Any]] = []
        for combination in itertools.islice(itertools.product(*(choices[suit] for suit in suits)), self.policy.marriage_tables):
            table = {**shown, **dict(zip(suits, combination))}
            if all(top <= condition + sum(table[suit] for suit in pairs) < top + step
                   for pairs, top, step in ceilings if pairs) \
                    and all(condition + sum(table[suit] for suit in pairs) >= top for pairs, top, _step in stopped):
                tables.append(table)
        return tables[:self.policy.edges]


def edges(expected: Sequence[Any], actual: Sequence[Any]) -> collections.Counter[int]:
    """The amounts at the edges of a differing legal set, per bid or contract word: the lowest
    and highest the implementation offered, and the lowest and highest only one side offered."""
    read: collections.Counter[int] = collections.Counter()
    for word in AMOUNT_WORDS:
        theirs, mine = (set(_offered(legal, word)) for legal in (expected, actual))
        for amounts in (mine, theirs ^ mine):
            if amounts:
                read.update({min(amounts), max(amounts)})

    return read


def above_all(expected: Sequence[Any], actual: Sequence[Any]) -> collections.Counter[int]:
    """Per bid or contract word the implementation offered none of where the reference offered
    some, the next amount above the reference's highest: a least bid on the barrel of 240
    over a maximum of 140 shows only as a player on the barrel offered no bid at all."""
    read: collections.Counter[int] = collections.Counter()
    for word in AMOUNT_WORDS:
        theirs, mine = (_offered(legal, word) for legal in (expected, actual))
        if theirs and not mine:
            read[max(theirs) + CONTRACT_STEP] += 1
    return read


def raised_to(expected: Sequence[Any], actual: Sequence[Any]) -> list[int]:
    """Per bid or contract word the implementation offered more of than the reference's
    highest, its own highest: a maximum lies at or above it."""
    found: list[int] = []
    for word in AMOUNT_WORDS:
        theirs, mine = (_offered(legal, word) for legal in (expected, actual))
        if theirs and mine and max(mine) > max(theirs):
            found.append(max(mine))
    return found


def steps_apart(expected: Sequence[Any], actual: Sequence[Any]) -> bool:
    """Whether, for some bid or contract word, the two sides offered amounts at other steps."""
    for word in AMOUNT_WORDS:
        theirs, mine = (sorted(_offered(legal, word)) for legal in (expected, actual))
        if len(theirs) > 1 and len(mine) > 1 and set(_steps(theirs)) != set(_steps(mine)):
            return True
    return False


def _steps(amounts: Sequence[int]) -> list[int]:
    """The distances between consecutive amounts of a sorted list."""
    return [high - low for low, high in zip(amounts, amounts[1:])]


def _gaps(expected: Sequence[Any], actual: Sequence[Any]) -> collections.Counter[int]:
    """The distances between the two sides' highest amounts and between their lowest, per bid
    or contract word, where they differ."""
    read: collections.Counter[int] = collections.Counter()
    for word in AMOUNT_WORDS:
        theirs, mine = (set(_offered(legal, word)) for legal in (expected, actual))
        if theirs and mine:
            read.update(abs(a - b) for a, b in ((max(mine), max(theirs)), (min(mine), min(theirs))) if a != b)
    return read


def readings(records: Iterable[observe.CaseRecord], policy: Policy = POLICY) -> Readings:
    found = Readings(policy=policy)
    for record in records:
        found.add_record(record)
    return found


def _hand_to_act(state: dict[str, Any]) -> set[str] | None:
    """The card codes in the hand of the player to act in a state, if the state shows them."""
    hands, seat = state.get("hands"), state.get("to_act")
    if not isinstance(hands, list) or not isinstance(seat, int) or not 0 <= seat < len(hands) or not isinstance(hands[seat], list):
        return None
    return {str(c) for c in hands[seat]}


def _bidder_marriages(before: dict[str, Any]) -> tuple[str, ...] | None:
    """The marriages (suits) the bidder to act held in an auction state, or None where the
    state shows no bidder's hand; four aces, which may count as a marriage, leave a hand out."""
    held = _hand_to_act(before) if before.get("phase") == Phase.AUCTION else None
    if held is None or {"A" + suit for suit in SUITS} <= held:
        return None
    return _marriages_held(held)


def _marriages_held(hand: set[str]) -> tuple[str, ...]:
    """The suits whose king and queen are both in ``hand``, in ``SUITS`` order."""
    return tuple(suit for suit in SUITS if {"K" + suit, "Q" + suit} <= hand)


def _offered(legal: Sequence[Any], word: str) -> list[int]:
    """The amounts of a legal set's actions of one word ("bid" or "contract"), in its order."""
    return [a for a in (_amount(str(x)) for x in legal if str(x).startswith(word + " ")) if a is not None]


def _amount(action: str) -> int | None:
    parts = action.split()
    return int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else None


def _arrival(score: Any, player: int, events: Sequence[Any]) -> int | None:
    """The score a player reached a score line with, as a line is written: a whole number, so
    137.5 (a defender's half points) reaches a line of 137. An arrival that falls back off the
    barrel at once shows it only with the penalty it fell back by added again: a secret
    barrel of 135 shows one player at 15 after 135 less 120, at the step of both events. One
    whose score the same reply sets back to 0 (a dump) shows none."""
    if not _finite(score):
        return None
    if any(isinstance(e, dict) and e.get("type") in RESETS and e.get("player") == player for e in events):
        return None
    fell = [e.get("penalty") for e in events if isinstance(e, dict) and e.get("type") == "barrel_left"
            and e.get("player") == player and e.get("reason") == "fell_back"]
    return math.floor(score + sum(p for p in fell if _finite(p)))


def _card_points(hand: list[Any]) -> int | None:
    """The card points of a hand of card codes (``10H``), None where a code is no card."""
    total = 0
    for code in hand:
        if not isinstance(code, str) or code[:-1] not in CARD_POINTS or code[-1:] not in SUITS:
            return None
        total += CARD_POINTS[code[:-1]]
    return total


def _finite(value: Any) -> TypeGuard[float]:
    """A number a score can be (no bool, no infinity, no NaN): what an engine sends is not trusted."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _paired(expected: Any, actual: Any) -> list[tuple[int, int]]:
    """The implementation's numbers beside the reference's in their places, where the two
    values line up: number for number, or in two event lists event for event of each type (an
    engine that also sends a ``dump`` event still shows the -165 it set to 0 in its
    ``deal_scored``)."""
    if isinstance(expected, dict) and isinstance(actual, dict) and isinstance(expected.get("events"), list) \
            and isinstance(actual.get("events"), list):
        pairs: list[tuple[int, int]] = []
        sent, shown = _by_type(expected["events"]), _by_type(actual["events"])
        for kind in sent.keys() & shown.keys():
            for b, a in zip(sent[kind], shown[kind]):
                pairs += _paired(b, a)
        return pairs
    mine, theirs = list(_places(actual)), list(_places(expected))
    if len(mine) != len(theirs):
        return []
    return [(a, b) for a, b in zip(mine, theirs) if isinstance(a, int) and isinstance(b, int)]


def _counts(value: Any, event: str) -> list[int]:
    """The counts the events of type ``event`` in a differing event list show."""
    events = value.get("events") if isinstance(value, dict) else None
    return [e["count"] for e in events or () if isinstance(e, dict) and e.get("type") == event and _integer(e.get("count"))]


def _by_type(events: list[Any]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for event in events:
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            found.setdefault(event["type"], []).append(event)
    return found


def _numbers(value: Any) -> Iterable[int]:
    """The integers of a JSON value in order."""
    return (n for n in _places(value) if isinstance(n, int))


def _places(value: Any) -> Iterable[int | float]:
    """The numbers of a JSON value in order, a score's halves too: the places two values are
    paired by (a half is never a reading)."""
    if _integer(value) or isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _places(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _places(item)


@functools.cache
def bundled() -> dict[str, tuple[Any, ...]]:
    """Every value some bundled profile or option gives each knob."""
    seen: dict[str, list[Any]] = {}
    for name in variants.all_names():
        for section, knobs in variants.resolve(name).rules.items():
            for knob, value in knobs.items():
                plain = variants.thaw(value)
                if plain not in seen.setdefault(f"{section}.{knob}", []):
                    seen[f"{section}.{knob}"].append(plain)
    return {knob: tuple(values) for knob, values in seen.items()}


def value_schema(knob: str) -> dict[str, Any]:
    section, _, name = knob.partition(".")
    spec: dict[str, Any] = knob_entry(section, name)["properties"]["value"]
    return spec


def kinds(knob: str) -> list[str]:
    found = value_schema(knob).get("type", [])
    return [found] if isinstance(found, str) else list(found)


def values(knob: str, current: Any, read: Readings | None = None) -> list[Any]:
    """The values tried for a knob, the current one left out: readings first for a number."""
    spec = value_schema(knob)
    types = kinds(knob)
    seen = list(bundled().get(knob, ()))
    found: list[Any]
    if "enum" in spec:
        found = list(spec["enum"])
    elif "boolean" in types:
        found = [True, False]
    elif "integer" in types:
        found = _integers(knob, spec, current, seen, read)
    elif "object" in types and isinstance(current, dict):
        section, _, name = knob.partition(".")
        found = (read.marriage_values(current) if read and knob == "marriages.values" else []) + seen
        found += case_knobs.alternatives(section, name, current)
    elif "array" in types and isinstance(current, list):
        section, _, name = knob.partition(".")
        found = (read.list_values(knob, current) if read else []) + seen + case_knobs.alternatives(section, name, current)
    else:
        found = seen
    if "null" in types:
        found.append(None)
    unique: list[Any] = []
    for value in found:
        if value != current and value not in unique:
            unique.append(value)
    return unique


def integer_range(spec: dict[str, Any]) -> tuple[int, int]:
    """The least and greatest value a number knob's value schema allows (0 and a million
    where it names none)."""
    return spec.get("minimum", 0), spec.get("maximum", 10**6)


def _integers(knob: str, spec: dict[str, Any], current: Any, bundled: list[Any], read: Readings | None) -> list[Any]:
    low, high = integer_range(spec)
    policy = read.policy if read else POLICY
    numbers = read.for_knob(knob, current) if read else []
    numbers += [v for v in bundled if _integer(v)]
    if _integer(spec.get("default")):
        numbers.append(spec["default"])
    if _integer(current):
        numbers += [current + d for d in (policy.near_count if current <= policy.small_count else policy.near_amount)]
    # a count (a penalty from the third give-up) also tries the counts next to the bundled ones,
    # as ``fit.knob_domain`` does: the observations show a count only as a score that changes
    # from the fifth give-up on, among many other numbers
    numbers += [n + d for n in bundled if _integer(n) and 0 < n <= policy.small_count for d in policy.near_count]
    return [n for n in numbers if _integer(n) and low <= n <= high]
