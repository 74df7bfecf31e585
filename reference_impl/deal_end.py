"""The end of a deal, in DESIGN.md's order of scoring.

1. totals and the contract (declarer), rounded and limited points (defenders);
2. bolts; 3. barrel occupants; 4. barrel arrivals and knock-offs; 5. failed-visit
reset; 6. the dump; 7. match end. Each step appends its events; ``deal_scored`` closes
the scoring with the deal's whole change (``deltas``) and the new ``scores``, and only
``match_won`` / ``match_drawn`` follow it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from spec.vocabulary import Phase

from .scoring import Number, numbers, whole, give_up_declarer_loss, give_up_defender_gain, locked_defender_gain, round_score

if TYPE_CHECKING:
    from .state import Event, MatchState


@dataclass
class DealOutcome:
    """What the steps after the first need to know about the deal."""

    kind: str  # played | given_up
    declarer: int
    contract: int  # the contract played, or the winning bid given up
    made: bool
    points: list[Number]  # raw totals: card points + declarations + bonuses
    occupants: list[int]  # on the barrel when the deal began
    barrel_winners: list[int] = field(default_factory=list)  # left the barrel with reason won


def score_played(state: MatchState, events: list[Event]) -> None:
    """Score a deal whose eight tricks are played."""
    declarer, contract = state.declarer, state.contract
    assert declarer is not None and contract is not None
    values = state.rules.marriages.values
    points: list[Number] = [0, 0, 0]
    for p in range(3):  # card points + declared marriages + four aces + bonuses
        raw = state.card_points[p] + state.aces[p] + state.bonus_points[p]
        for suit in state.marriages[p]:
            raw += values[suit]
        points[p] = raw
    scoring = state.rules.scoring
    total = round_score(points[declarer], scoring.declarer_rounding)
    made = total >= contract
    outcome = DealOutcome("played", declarer, contract, made, points, _occupants(state))
    deltas: list[Number] = [0, 0, 0]
    deltas[declarer] = _declarer_result(state, outcome, total)
    share = 0 if made else _failed_contract_share(scoring.failed_contract_points, contract)
    for p in DEFENDERS[declarer]:
        deltas[p] = _defending(state, p, round_score(points[p], scoring.defender_rounding) + share)
    _finish(state, outcome, deltas, events)


def _declarer_result(state: MatchState, outcome: DealOutcome, total: Number) -> Number:
    """+contract (or the total, per scoring.declarer_scores) when made, else -contract.

    barrel.failed_contract: stay keeps a failing occupant's score where it is.
    """
    if outcome.made:
        return total if state.rules.scoring.declarer_scores == "total" else outcome.contract
    if outcome.declarer in outcome.occupants and state.rules.barrel.failed_contract == "stay":
        return 0
    return -outcome.contract


def _failed_contract_share(kind: str, contract: int) -> Number:
    """What each defender gains from a failed contract (scoring.failed_contract_points)."""
    if kind == "split_among_defenders":
        return whole(Fraction(contract, 2))
    return contract if kind == "each_defender" else 0


def score_given_up(state: MatchState, events: list[Event]) -> None:
    """Score a deal the declarer gave up (ruling 8: a completed deal)."""
    declarer, bid = state.declarer, state.high_bid
    assert declarer is not None and bid is not None
    rules = state.rules.giving_up
    count = state.give_ups[declarer]
    outcome = DealOutcome("given_up", declarer, bid, False, [0, 0, 0], _occupants(state))
    deltas: list[Number] = [0, 0, 0]
    deltas[declarer] = -give_up_declarer_loss(rules, bid, count)
    if count >= rules.defenders_paid_from:
        gain = give_up_defender_gain(rules, bid)
        for p in DEFENDERS[declarer]:
            deltas[p] = _defending(state, p, gain)
    _finish(state, outcome, deltas, events)


DEFENDERS = ((1, 2), (2, 0), (0, 1))  # the defenders of each declarer's seat, left neighbour first


def _occupants(state: MatchState) -> list[int]:
    if not state.rules.barrel.enabled:
        return []
    return [p for p in range(3) if state.barrel[p].on]


def _defending(state: MatchState, player: int, gain: Number) -> Number:
    """Defending points after the barrel's suspension and the 800 rule."""
    barrel = state.rules.barrel
    if barrel.enabled and barrel.defender_points == "suspended" and state.barrel[player].on:
        return 0
    return locked_defender_gain(state.rules.defender_lock, state.scores[player], gain)


def _finish(state: MatchState, outcome: DealOutcome, deltas: list[Number], events: list[Event]) -> None:
    for p in range(3):
        score = state.scores[p] + deltas[p]
        state.scores[p] = score if isinstance(score, int) else whole(score)  # most scores are ints: no call
    _nines_bonus(state, events)
    _bolts(state, outcome, events)
    if state.rules.barrel.enabled:
        _barrel_occupants(state, outcome, events)
        _barrel_arrivals(state, outcome, events)
        _failed_visit_reset(state, events)
    _dump(state, events)
    points = numbers(outcome.points)
    changes = numbers(map(operator.sub, state.scores, state.start_scores))
    state.deal_result = {"kind": outcome.kind, "made": outcome.made, "points": points, "deltas": changes}
    events.append({"type": "deal_scored", "points": list(points), "deltas": list(changes), "scores": numbers(state.scores)})
    state.phase = Phase.DEAL_OVER
    state.to_act = None
    assert state.dealer is not None
    state.next_dealer = (state.dealer + 1) % 3  # deal.next_dealer: left
    _match_end(state, outcome, events)


def _nines_bonus(state: MatchState, events: list[Event]) -> None:
    """redeals.four_nines_bonus: the holder of the four nines as dealt scores it (step 1)."""
    bonus = state.rules.redeal_timing.four_nines_bonus
    holder = state.nines_holder
    if bonus is None or holder is None:
        return
    state.scores[holder] += bonus
    events.append({"type": "bonus", "player": holder, "kind": "four_nines", "points": bonus})


# ---------------------------------------------------------------- step 2: bolts


def _bolts(state: MatchState, outcome: DealOutcome, events: list[Event]) -> None:
    rules = state.rules.bolts
    if not rules.enabled or (outcome.kind == "given_up" and not rules.in_give_up_deal):
        return
    players = list(DEFENDERS[outcome.declarer])
    if rules.declarer and outcome.kind == "played":
        players.insert(0, outcome.declarer)
    for p in players:
        if p in outcome.occupants and not rules.on_barrel:
            continue
        zero = outcome.points[p] == 0 if rules.zero == "zero_points" else state.tricks_won[p] == 0
        if not zero:
            if rules.counting == "consecutive":
                state.bolts[p] = 0
            continue
        state.bolts[p] += 1
        events.append({"type": "bolt", "player": p, "count": state.bolts[p]})
        if state.bolts[p] >= rules.every:
            state.bolts[p] = 0
            state.scores[p] -= rules.penalty
            events.append({"type": "bolt_penalty", "player": p, "penalty": rules.penalty})


# ------------------------------------------------------ steps 3-5: the barrel


def _leave(state: MatchState, p: int, reason: str, penalty: int, events: list[Event]) -> None:
    seat = state.barrel[p]
    seat.on = False
    seat.attempts = 0
    if reason != "won":
        seat.failed_visits += 1
    state.scores[p] -= penalty
    events.append({"type": "barrel_left", "player": p, "reason": reason, "penalty": penalty})


def _eligible(state: MatchState, outcome: DealOutcome, p: int) -> bool:
    """May this player win the match with this deal's score?"""
    if p in outcome.barrel_winners:
        return True
    if p == outcome.declarer:
        return outcome.made
    return state.rules.match_end.defenders_can_win


def _reaches(state: MatchState, score: Number) -> bool:
    """Does the score win by its size (match_end.over_target: reach, or exactly the target)?"""
    target = state.rules.match_end.target
    return score == target if state.rules.match_end.over_target == "exact_only" else score >= target


def _capped(state: MatchState, score: Number) -> Number:
    """A score on the barrel per barrel.arrival_cap (a score at the target that did not win is capped too)."""
    barrel = state.rules.barrel
    if barrel.arrival_cap == "uncapped" and score < state.rules.match_end.target:
        return score
    return min(score, barrel.threshold)


def _wins_from_barrel(state: MatchState, outcome: DealOutcome, p: int) -> bool:
    """barrel.win_by: a made contract of at least min_contract, or any gain, reaching the target."""
    if not _reaches(state, state.scores[p]):
        return False
    barrel = state.rules.barrel
    if barrel.win_by == "any_gain":
        return True
    if p == outcome.declarer:
        return outcome.made and outcome.contract >= barrel.min_contract
    return _eligible(state, outcome, p)  # only with defender points counted


def _barrel_occupants(state: MatchState, outcome: DealOutcome, events: list[Event]) -> None:
    barrel = state.rules.barrel
    for p in outcome.occupants:
        score = state.scores[p]
        if _wins_from_barrel(state, outcome, p):
            outcome.barrel_winners.append(p)
            _leave(state, p, "won", 0, events)
            continue
        if score < barrel.threshold:
            # a failed contract (or a costly give-up) ends the visit at once; so does a
            # bolt penalty that drops a defender below the barrel (bolts.on_barrel)
            _leave(state, p, "failed_contract" if p == outcome.declarer else "dropped_below", 0, events)
            continue
        state.scores[p] = _capped(state, score)  # ruling 7
        if _counts_as_attempt(state, outcome, p):
            state.barrel[p].attempts += 1
            if barrel.attempts is not None and state.barrel[p].attempts >= barrel.attempts:
                _leave(state, p, "attempts_exhausted", barrel.attempts_penalty, events)


def _counts_as_attempt(state: MatchState, outcome: DealOutcome, p: int) -> bool:
    barrel = state.rules.barrel
    if outcome.kind == "given_up" and not barrel.give_up_deal_counts:
        return False
    return barrel.attempt_counts == "every_deal" or p == outcome.declarer


def _barrel_arrivals(state: MatchState, outcome: DealOutcome, events: list[Event]) -> None:
    """Scores at or past the threshold are capped and arrive; ruling 6 for crowding."""
    barrel = state.rules.barrel
    arrivals = []
    totals = {}
    for p in range(3):
        if p in outcome.occupants or state.scores[p] < barrel.threshold:
            continue
        if _reaches(state, state.scores[p]) and barrel.jump_over_wins and _eligible(state, outcome, p):
            continue  # jumps over the barrel and wins at step 7
        totals[p] = state.scores[p]
        state.scores[p] = _capped(state, state.scores[p])
        arrivals.append(p)
    if not arrivals:
        return
    staying = [p for p in range(3) if state.barrel[p].on]
    for p in arrivals:
        state.barrel[p].on = True
        state.barrel[p].attempts = 0
        events.append({"type": "barrel_entered", "player": p})
    limit = barrel.max_occupants
    if limit is None or len(arrivals) + len(staying) <= limit:
        return
    crowding = barrel.crowding
    if crowding != "arrivals_fall_back":
        for p in staying:
            _leave(state, p, "knocked_off", barrel.knock_off_penalty, events)
        staying = []
    places = 0 if crowding == "all_fall" else max(0, limit - len(staying))
    for p in _falling_back(arrivals, totals, places, barrel.arrivals_over_limit):
        _leave(state, p, "fell_back", barrel.knock_off_penalty, events)


def _falling_back(arrivals: list[int], totals: dict[int, Number], places: int, rule: str) -> list[int]:
    """The arrivals that do not fit in ``places`` (barrel.arrivals_over_limit)."""
    if len(arrivals) <= places:
        return []
    if rule == "all_fall_back" or places == 0:
        return arrivals
    ranked = sorted(arrivals, key=lambda p: -totals[p])
    cut = totals[ranked[places - 1]]
    if totals[ranked[places]] == cut:  # a tie across the last place: the tied all fall back
        return [p for p in arrivals if totals[p] <= cut]
    return [p for p in arrivals if totals[p] < cut]


def _failed_visit_reset(state: MatchState, events: list[Event]) -> None:
    reset = state.rules.barrel.failed_visit_reset
    if reset is None:
        return
    for p in range(3):
        if state.barrel[p].failed_visits >= reset:
            state.barrel[p].failed_visits = 0
            state.scores[p] = 0
            events.append({"type": "score_reset", "player": p})


# ------------------------------------------------------------ steps 6-7


def _dump(state: MatchState, events: list[Event]) -> None:
    dump = state.rules.dump
    if not dump.enabled:
        return
    for p in range(3):
        score = state.scores[p]
        if score == dump.score or (dump.negative and score == -dump.score):
            state.scores[p] = 0
            events.append({"type": "dump", "player": p})


def _match_end(state: MatchState, outcome: DealOutcome, events: list[Event]) -> None:
    """Ruling 10 (match_end.tie_break) among the players who reach the target."""
    if max(state.scores) < state.rules.match_end.target:
        return  # nobody reaches it (whether over_target is reach or exact_only): most deals
    reached = [p for p in range(3) if _reaches(state, state.scores[p]) and _eligible(state, outcome, p)]
    if not reached:
        return
    rule = state.rules.match_end.tie_break
    top = max(state.scores[p] for p in reached)
    best = [p for p in reached if state.scores[p] == top]
    if len(reached) == 1:
        winner: int | None = reached[0]
    elif rule in ("declarer_then_highest", "declarer_then_highest_then_play_on") and outcome.declarer in reached:
        winner = outcome.declarer
    elif rule != "draw" and len(best) == 1:
        winner = best[0]
    elif rule in ("highest_then_play_on", "declarer_then_highest_then_play_on"):
        return  # equal highest: nobody wins, the match goes on
    else:
        state.phase = Phase.MATCH_OVER
        state.next_dealer = None
        events.append({"type": "match_drawn", "players": reached if rule == "draw" else best})
        return
    state.phase = Phase.MATCH_OVER
    state.next_dealer = None
    state.winner = winner
    events.append({"type": "match_won", "player": winner})

