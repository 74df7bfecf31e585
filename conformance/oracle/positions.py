"""Positions for ``thousand fuzz``: a deal, a match state and a plan built so that one rule bites.

Random play reaches some positions about once in thousands of deals: a defender whose only
trick is three nines (what ``bolts.zero`` decides), a trump that the next player can both
beat and undercut (``play.must_overtrump``), a defender who declares two marriages just
under the 800 rule's line (``defender_lock``), three seats a deal short of the target or the
barrel (``match_end.tie_break``, ``barrel.arrivals_over_limit``), a declarer whose made
contract lands on the dump score (``dump.negative``). Each builder here lays out
the cards of one such position, with each seat's plan: the actions, tied to a trick where
the timing matters, that lead there under any rules that allow them. Suits are permuted
and seats rotated at random, and the match state comes from the random generator with the
scores that matter moved to the line, so that no two positions are the same deal.

A plan is followed while its actions are legal. In the auction the planned declarer takes
the least bid and contract and the others pass; redeals are declined. A scripted position
then keeps its planned cards and plays the lowest other card; a free one hands play to the
ordinary random policy. Nothing here knows a profile or a mutant by name: which positions
apply, and where their lines are, is read from the rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from conformance.oracle.chances import CHANCES
from spec.vocabulary import DECK as DECK  # re-exported: fuzz and the tests read the cards here
from spec.vocabulary import RANKS as RANKS
from spec.vocabulary import SUITS as SUITS
from spec.vocabulary import RuleValues

Chooser = Callable[[tuple[str, ...], dict[str, Any]], str | None]  # (legal, state) -> action
Step = tuple[int | None, str]  # (the trick it belongs to, or None for any time; the action)


@dataclass(frozen=True)
class Position:
    """A deal laid out for one rule: who holds what, who is meant to declare, what each seat plans."""

    name: str
    match: dict[str, Any]
    dealer: int
    hands: tuple[tuple[str, ...], ...]
    talon: tuple[str, ...]
    declarer: int
    plans: tuple[tuple[Step, ...], ...]  # per seat, in order
    scripted: bool  # keep planned cards and play low; else free play after the plan
    least_contract: int = 0  # the planned declarer's contract is the least amount at or above this
    styles: tuple[str, ...] = ()  # free play: each seat's play style (see fuzz.play_card), else the trial's


# --- card helpers ------------------------------------------------------------------------

def strength(card: str) -> int:
    """A card's rank within its suit: 0 for a nine up to 5 for an ace."""
    return len(RANKS) - 1 - RANKS.index(card[:-1])


def in_order(cards: Sequence[str]) -> tuple[str, ...]:
    """Cards in deck order (suit by suit, strongest first)."""
    return tuple(sorted(cards, key=DECK.index))


def suit_lengths(hand: Sequence[str]) -> dict[str, int]:
    return {suit: sum(1 for card in hand if card.endswith(suit)) for suit in SUITS}


def _suit_map(rng: random.Random, fixed: str = "") -> dict[str, str]:
    """A random permutation of the suits; suits in ``fixed`` keep their place (their
    marriages' values matter to the position)."""
    free = [s for s in SUITS if s not in fixed]
    shuffled = rng.sample(free, len(free))
    mapping = {s: s for s in fixed}
    mapping.update(zip(free, shuffled))
    return mapping


def _recoded(text: str, suits: dict[str, str]) -> str:
    """An action or card with its suits permuted (``play KH marriage`` -> ``play KD marriage``)."""
    words = text.split()
    return " ".join(w[:-1] + suits[w[-1]] if w[:-1] in RANKS and w[-1] in SUITS else w for w in words)


def _laid_out(name: str, match: dict[str, Any], declarer: int, held: dict[str, Sequence[str]],
              talon: Sequence[str], plans: dict[str, Sequence[Step]],
              suits: dict[str, str], scripted: bool = True, least_contract: int = 0,
              styles: tuple[str, ...] = ()) -> Position:
    """A position from hands named relative to the declarer: ``own`` (7 cards), ``left`` (the
    next seat, who gets the first card given) and ``right``; plans are keyed the same way."""
    seats = {"own": declarer, "left": (declarer + 1) % 3, "right": (declarer + 2) % 3}
    hands: list[tuple[str, ...]] = [(), (), ()]
    for where, cards in held.items():
        hands[seats[where]] = in_order([_recoded(c, suits) for c in cards])
    seat_plans: list[tuple[Step, ...]] = [(), (), ()]
    for where, steps in plans.items():
        seat_plans[seats[where]] = tuple((trick, _recoded(action, suits)) for trick, action in steps)
    dealer = (declarer - 1) % 3  # the declarer opens the auction
    return Position(name, match, dealer, tuple(hands), in_order([_recoded(c, suits) for c in talon]),
                    declarer, tuple(seat_plans), scripted, least_contract, styles)


# --- the positions -----------------------------------------------------------------------

def nines_trick(rng: random.Random, rules: RuleValues, match: dict[str, Any]) -> Position | None:
    """A defender's only trick is the declarer's low spade, trumped with the nine of trumps,
    with the other defender's nine of diamonds: 0 points (or 2, led with the jack). A bolt
    counts points or tricks (``bolts.zero``), and a points limit shows too.

    Trick 1 the declarer's ace of spades strips the defenders' spades; trick 2 the hearts
    marriage makes trumps and strips the winner-to-be down to the nine of trumps; trick 3 the
    low spade. The winner-to-be holds the lowest clubs and diamonds, so it never wins again."""
    if not rules["bolts"]["enabled"]:
        return None
    led, followed = ("JS", "9S") if rng.random() < CHANCES.either_way else ("9S", "JS")
    declarer = rng.randrange(3)
    winner, other = ("left", "right") if rng.random() < CHANCES.either_way else ("right", "left")
    given = {winner: "JD", other: "AC"}
    match = _with_counter_near(rng, match, rules, (declarer + (1 if winner == "left" else 2)) % 3)
    return _laid_out(
        "a defender's only trick is worth at most 2 points", match, declarer,
        {"own": ("KH", "QH", "AS", "10S", "KS", led, "JD"), winner: ("JH", "9H", "QS", "9C", "JC", "QD", "KD"),
         other: (followed, "9D", "10C", "KC", "QC", "AD", "10D")}, talon=("AH", "10H", "AC"),
        plans={"own": ((None, f"give {given['left']} {given['right']}"), (1, "play AS"), (2, "play KH marriage"),
                       (3, f"play {led}")),
               winner: ((2, "play JH"), (3, "play 9H")), other: ((3, "play 9D"),)},
        suits=_suit_map(rng))


def trump_over_trump(rng: random.Random, rules: RuleValues, match: dict[str, Any]) -> Position:
    """A side suit is trumped and the next player, void in it too, holds a trump above and one
    below: the duty to overtrump (or to undertrump, and whom it is owed against) decides the
    legal set. Half of the time the declarer trumps and a defender is to play; else a defender
    trumps and the declarer is to play.

    The declarer trumps: trick 1 the declarer's ace of diamonds; trick 2 the hearts marriage,
    won by the left defender's ten; trick 3 the left defender leads the nine of clubs and the
    right one wins it with the ace; trick 4 the right defender leads the ace of spades, the
    declarer trumps with the queen, and the left defender holds the ace and the nine.

    A defender trumps: trick 1 the declarer's ace of diamonds; trick 2 the hearts marriage,
    which the declarer wins; trick 3 the declarer's nine of clubs to the left defender's ace;
    trick 4 the left defender leads the ace of spades, the right one trumps with the ten, and
    the declarer holds the ace and the queen."""
    name = "a trump over a trump: the next player can beat it and undercut it"
    declarer = rng.randrange(3)
    if rng.random() < CHANCES.either_way:
        return _laid_out(
            name, match, declarer,
            {"own": ("KH", "QH", "JC", "10D", "10C", "KC", "QC"), "left": ("AH", "10H", "9H", "9C", "QD", "JD", "9D"),
             "right": ("AS", "10S", "KS", "QS", "JS", "JH", "AC")}, talon=("AD", "KD", "9S"),
            plans={"own": ((None, "give QC 9S"), (1, "play AD"), (2, "play KH marriage"), (3, "play JC")),
                   "left": ((2, "play 10H"), (3, "play 9C")),
                   "right": ((2, "play JH"), (3, "play AC"), (4, "play AS"))},
            suits=_suit_map(rng))
    return _laid_out(
        name, match, declarer,
        {"own": ("AH", "KH", "QH", "QD", "JD", "9S", "JC"), "left": ("AS", "10S", "KS", "QS", "JS", "JH", "AC"),
         "right": ("10H", "9H", "10D", "9D", "10C", "KC", "QC")}, talon=("AD", "KD", "9C"),
        plans={"own": ((None, "give 9S JC"), (1, "play AD"), (2, "play KH marriage"), (3, "play 9C")),
               "left": ((2, "play JH"), (3, "play AC"), (4, "play AS")),
               "right": ((2, "play 9H"), (4, "play 10H"))},
        suits=_suit_map(rng))


def rich_defender(rng: random.Random, rules: RuleValues, match: dict[str, Any]) -> Position | None:
    """A defender a few points under a line (the 800 rule, its maximum, the barrel, the
    target where defenders may win) takes four tricks and declares the hearts and diamonds
    marriages: a gain of about 230 in one deal, past whatever cap the line sets. Where a
    defender may win, the declarer half of the time sits one contract short of the target
    (on the barrel, at its least winning contract) and makes it with the clubs marriage:
    two seats reach the target in one deal, the defender higher.

    Trick 1 the declarer leads the nine of spades to the defender's ace; the defender then
    leads the hearts marriage, the ace and ten of hearts (not when the declarer must make
    its contract), and the diamonds marriage, which the declarer's ten wins; the declarer
    declares the clubs marriage on its next lead."""
    line = _defender_line(rng, rules)
    if line is None:
        return None
    declarer = rng.randrange(3)
    rich, poor = ("left", "right") if rng.random() < CHANCES.either_way else ("right", "left")
    seat = (declarer + (1 if rich == "left" else 2)) % 3
    scores = {seat: line - 5 * rng.randint(1, 6)}
    least = 0
    finish = _declarer_finish(rules)
    if finish is not None and rng.random() < CHANCES.shared_finish:
        scores[seat], (scores[declarer], least) = int(rules["match_end"]["target"]) - 150, finish
    match = _with_scores(rules, match, scores, on_barrel={declarer} if least and rules["barrel"]["enabled"] else set())
    given = {rich: "JD", poor: "9C"}
    # with the declarer finishing too, the defender leaves it the hearts tricks' points: it needs them
    tricks: tuple[Step, ...] = () if least else ((3, "play AH"), (4, "play 10H"))
    return _laid_out(
        "a defender declares two marriages a deal short of a line", match, declarer,
        {"own": ("AC", "10C", "KC", "QC", "AD", "10D", "9S"), rich: ("AS", "AH", "10H", "KH", "QH", "KD", "QD"),
         poor: ("10S", "KS", "QS", "JS", "JH", "9H", "9D")}, talon=("JC", "9C", "JD"),
        plans={"own": ((None, f"give {given['left']} {given['right']}"), (1, "play 9S"), (None, "play KC marriage")),
               rich: ((1, "play AS"), (2, "play KH marriage"), *tricks, (len(tricks) + 3, "play KD marriage"))},
        suits={s: s for s in SUITS}, least_contract=least)  # the marriages' values make the gains


def near_a_line(rng: random.Random, rules: RuleValues, match: dict[str, Any]) -> Position:
    """All three seats a deal short of a line: the barrel's threshold (too many arrivals at
    once), or the target (a shared finish; with a barrel, from seats sitting on it). The
    declarer gets the hearts marriage and an ace and, half of the time, sits one contract
    short of the line so that making it lands there while the defenders may pass it by more
    (who wins a shared finish). Play after the auction is free."""
    barrel, end = rules["barrel"], rules["match_end"]
    target, threshold = int(end["target"]), int(barrel["threshold"])
    declarer = rng.randrange(3)
    seats = [declarer] + [seat for seat in range(3) if seat != declarer]
    least = _least_contract(rules)
    room = 8
    on_barrel: set[int] = set()
    if not barrel["enabled"] or rng.random() < CHANCES.at_the_barrel:
        line = threshold if barrel["enabled"] else target  # arrivals on the barrel, or a finish without one
        if barrel["enabled"] and barrel["max_occupants"] and rng.random() < CHANCES.occupant_waiting:
            on_barrel = {seats[2]}  # a defender sits on it already: two arrivals are one too many
    else:  # a finish from the barrel: as many occupants as it holds, the declarer first
        line, least = target, max(least, int(barrel["min_contract"]))
        room = min(room, (target - threshold) // 5)
        on_barrel = set(seats[:barrel["max_occupants"] or 3])
    if line == threshold and barrel["enabled"]:
        room = 3  # every defender's few points count: all three arrive at once
    gaps = {seat: 5 * rng.randint(1, room) for seat in range(3)}
    contract = _contract(rng, rules, least)
    if rng.random() < CHANCES.declarer_on_the_line and (line - contract >= threshold or declarer not in on_barrel):
        gaps[declarer] = contract - 5 * rng.randint(0, 2)  # the declarer lands on the line and is not the highest
    scores = {seat: line - gap for seat, gap in gaps.items()}
    if barrel["enabled"]:  # occupants sit between the threshold and the target, the others under it
        scores = {seat: (max(score, threshold) if seat in on_barrel else min(score, threshold - 5))
                  for seat, score in scores.items()}
    match = _with_scores(rules, match, scores, off_barrel=True, on_barrel=on_barrel)
    return _marriage_deal(rng, "three seats a deal short of a line", match, declarer, contract)


def onto_the_dump(rng: random.Random, rules: RuleValues, match: dict[str, Any]) -> Position | None:
    """The declarer one contract short of the dump score (of either sign, where both are
    dumped): the made contract lands on it. Play after the auction is free."""
    dump, barrel = rules["dump"], rules["barrel"]
    if not dump["enabled"]:
        return None
    line = rng.choice([dump["score"], -dump["score"]] if dump["negative"] else [dump["score"]])
    declarer = rng.randrange(3)
    contract = _contract(rng, rules, _least_contract(rules))
    score = int(line) - contract
    if barrel["enabled"] and score >= barrel["threshold"]:
        return None
    return _marriage_deal(rng, "the declarer a contract short of the dump score",
                          _with_scores(rules, match, {declarer: score}), declarer, contract)


def _marriage_deal(rng: random.Random, name: str, match: dict[str, Any], declarer: int, contract: int) -> Position:
    """A free deal where the declarer most often makes its contract, a few steps above the
    least, and now and then exactly: the ace of spades takes the lead and the hearts marriage
    (100) is declared on the next. The other card points are left to the defenders, each of
    whom holds an ace, so that each takes a trick (and reaches a line a few points away)."""
    rest = [card for card in DECK if card not in ("AS", "KH", "QH", "AC", "AD")]
    rng.shuffle(rest)
    own, left, right = ["AS", "KH", "QH", *rest[:4]], ["AC", *rest[4:10]], ["AD", *rest[10:16]]
    return _laid_out(name, match, declarer, {"own": own, "left": left, "right": right}, rest[16:],
                     {"own": ((1, "play AS"), (None, "play KH marriage"))}, _suit_map(rng, fixed="H"), scripted=False,
                     least_contract=contract, styles=("high", "high", "high"))


BUILDERS: tuple[Callable[[random.Random, RuleValues, dict[str, Any]], Position | None], ...] = (
    nines_trick, trump_over_trump, rich_defender, near_a_line, onto_the_dump)


def random_position(rng: random.Random, rules: RuleValues, match: dict[str, Any]) -> Position:
    """One of the positions these rules have, at random."""
    while True:
        position = rng.choice(BUILDERS)(rng, rules, match)
        if position is not None:
            return position


# --- lines and match states --------------------------------------------------------------

def _least_contract(rules: RuleValues) -> int:
    return int(rules["auction"]["opening_bid"])


def _contract(rng: random.Random, rules: RuleValues, least: int) -> int:
    """A contract up to three bid steps above the least: the marriage and a trick or two
    make it, sometimes to the point (a total equal to the contract is made)."""
    return least + int(rules["auction"]["bid_step"]) * rng.randint(0, 3)


def _defender_line(rng: random.Random, rules: RuleValues) -> int | None:
    """A score a defender's big gain crosses where a rule caps or ends it."""
    lock, barrel, end = rules["defender_lock"], rules["barrel"], rules["match_end"]
    lines: list[int] = []
    if lock["enabled"]:
        lines.append(int(lock["from"]))
        if lock["defender_max"] is not None:
            lines.append(int(lock["defender_max"]) - 200)  # under the lock, a gain past the maximum
    if barrel["enabled"]:
        lines.append(int(barrel["threshold"]))
    if end["defenders_can_win"] and not barrel["enabled"]:
        lines.append(int(end["target"]) - 150)
    return rng.choice(lines) if lines else None


def _declarer_finish(rules: RuleValues) -> tuple[int, int] | None:
    """Where a defender 150 short of the target can reach it (defenders may win; over a
    barrel only by jumping it), the declarer's score one contract short of the target and
    that contract (on the barrel: its least winning contract, the seat sitting on it)."""
    barrel, end = rules["barrel"], rules["match_end"]
    target = int(end["target"])
    if not end["defenders_can_win"] or (barrel["enabled"] and not barrel["jump_over_wins"]):
        return None
    if target - 150 >= (barrel["threshold"] if barrel["enabled"] else target):
        return None
    contract = max(_least_contract(rules), int(barrel["min_contract"]) if barrel["enabled"] else 0)
    if barrel["enabled"] and not barrel["threshold"] <= target - contract:
        return None
    return target - contract, contract


def copied_match(match: dict[str, Any]) -> dict[str, Any]:
    """A match state that can be changed without changing ``match`` (its lists and seats copied)."""
    return {key: [dict(v) if isinstance(v, dict) else v for v in value] for key, value in match.items()}


def _with_scores(rules: RuleValues, match: dict[str, Any], scores: dict[int, int], off_barrel: bool = False,
                 on_barrel: frozenset[int] | set[int] = frozenset()) -> dict[str, Any]:
    """The match state with these seats' scores; a seat moved is off the barrel (its score is
    under the threshold) unless named in ``on_barrel`` (first attempt; other occupants are
    moved off to make room); a score the dump would already have cleared moves 5 down."""
    state = copied_match(match)
    dump, barrel = rules["dump"], rules["barrel"]
    for seat in range(3):
        if off_barrel or seat in scores or on_barrel:
            state["barrel"][seat] = {**state["barrel"][seat], "on": seat in on_barrel, "attempts": 0}
            moved_off = barrel["enabled"] and seat not in on_barrel and seat not in scores
            if moved_off and state["scores"][seat] >= barrel["threshold"]:
                state["scores"][seat] = int(barrel["threshold"]) - 5  # an occupant moved off sits under it
    for seat, score in scores.items():
        if dump["enabled"] and abs(score) == dump["score"]:
            score -= 5
        state["scores"][seat] = score
    return state


def _with_counter_near(rng: random.Random, match: dict[str, Any], rules: RuleValues, seat: int) -> dict[str, Any]:
    """The match state with the seat's bolts one short of the penalty half of the time."""
    state = copied_match(match)
    if rng.random() < CHANCES.bolts_one_short:
        state["bolts"][seat] = int(rules["bolts"]["every"]) - 1
    return state


# --- playing a position ------------------------------------------------------------------

def chooser(position: Position, fallback: Chooser) -> Chooser:
    """Actions for a position: the seat's next planned action when it is legal (at its trick);
    in the auction the planned declarer takes the least amount and the others pass; redeals
    are declined; then a scripted position keeps its planned cards and plays its lowest other
    card, and a free one asks ``fallback``."""
    plans = [list(plan) for plan in position.plans]

    def choose(legal: tuple[str, ...], state: dict[str, Any]) -> str | None:
        seat = state.get("to_act")
        if not legal or not isinstance(seat, int) or not 0 <= seat < 3:
            return fallback(legal, state)
        trick = state.get("trick_number")
        for index, (when, action) in enumerate(plans[seat]):
            if (when is None or when == trick) and action in legal:
                del plans[seat][index]
                return action
        planned = _auction_action(legal, seat == position.declarer, position.least_contract)
        if planned is not None:
            return planned
        if position.scripted:
            return _lowest_kept_back(legal, [action for _, action in plans[seat]])
        # giving up would end the position, and a planned card played early spoils the plan
        kept = _held_for(action for _, action in plans[seat])
        return fallback(tuple(a for a in legal if a != "give_up" and not kept.intersection(a.split()[1:]))
                        or tuple(a for a in legal if a != "give_up") or legal, state)

    return choose


def plan_fields(position: Position) -> dict[str, Any]:
    """The position's plans as a ``playout`` request's ``position`` (docs/protocol.md): the
    reference follows them as ``chooser`` does, its own choice rule playing the free part."""
    return {"declarer": position.declarer, "plans": [[[when, action] for when, action in plan] for plan in position.plans],
            "scripted": position.scripted, "least_contract": position.least_contract}


def _auction_action(legal: Sequence[str], declarer: bool, least_contract: int) -> str | None:
    """The planned declarer's least bid, its least contract (at or above ``least_contract``
    when it can), another seat's pass; no redeal."""
    if "no_redeal" in legal:
        return "no_redeal"
    amounts = sorted((int(a.split()[1]), a) for a in legal
                     if a.split()[0] in ("bid", "contract") and len(a.split()) == 2 and a.split()[1].isdigit())
    if declarer and amounts:
        if amounts[0][1].startswith("contract"):
            return next((a for amount, a in amounts if amount >= least_contract), amounts[-1][1])
        return amounts[0][1]
    if "pass" in legal:
        return "pass"
    return amounts[0][1] if amounts else None


def _lowest_kept_back(legal: Sequence[str], planned: Sequence[str]) -> str:
    """The lowest plain card to play that no plan still needs (else the lowest plain card)."""
    plays = [a for a in legal if a.startswith("play ") and len(a.split()) == 2]
    if not plays:
        return legal[0]
    needed = _held_for(planned)
    free = [a for a in plays if a.split()[1] not in needed] or plays
    return min(free, key=lambda a: (strength(a.split()[1]), DECK.index(a.split()[1])))


def _held_for(planned: Iterable[str]) -> set[str]:
    """The cards planned plays need kept: each card, and for a marriage its partner too."""
    held: set[str] = set()
    for action in planned:
        if action.startswith("play "):
            words = action.split()
            card = words[1]
            held.add(card)
            if words[-1] == "marriage":
                held.add(("Q" if card[:-1] == "K" else "K") + card[-1])
    return held
