"""The candidate values fit tries: numbers read from what the implementation offered, refused
and scored (conformance/oracle/candidates.py), on observation records built here."""

from __future__ import annotations

import collections
from typing import Any

from conformance.harness.findings import Observed
from conformance.oracle import candidates, evidence, observe
from tests.support.observations import step_record


def test_numbers_come_from_what_the_implementation_offered() -> None:
    read = candidates.Readings()
    read.add_record(observe.CaseRecord("c", (step_record(1, "bid 110", tuple(f"bid {n}" for n in range(110, 305, 5)) + ("pass",)),)))
    assert 300 in candidates.values("auction.max_bid", 400, read)  # no bundled profile caps at 300
    assert 5 in candidates.values("auction.bid_step", 10, read)
    assert set(candidates.values("auction.ceiling", "none")) >= {"marriages_held"}
    assert None in candidates.values("auction.marriage_needed_above", 120)


def _deal_end(step: int, scores: list[float], on: list[bool], events: tuple[object, ...] = (),
              winner: int | None = None) -> observe.StepRecord:
    state = {"phase": "deal_over", "scores": scores, "barrel": [{"on": o} for o in on], "winner": winner}
    return observe.StepRecord(1, step, "play QS", None, observe.Reply(True, events), state)


def test_a_score_line_is_read_from_where_play_went_on_and_where_it_stopped() -> None:
    read = candidates.Readings()
    read.add_record(observe.CaseRecord("c", (
        _deal_end(1, [1600, 1200, 40], [False] * 3),  # played on past 1600: the barrel is above it
        _deal_end(2, [1645, 1230, 60], [True, False, False], ({"type": "barrel_entered", "player": 0},)),
        _deal_end(3, [2115, 1230, 60], [False] * 3, ({"type": "match_won", "player": 0},), winner=0))))
    # no bundled profile puts the barrel at 1645 or the target at 2115, and no number of a
    # differing observation need show them: the scores around the line do
    assert candidates.values("barrel.threshold", 880, read)[:2] == [1645, 1605]
    assert candidates.values("match_end.target", 1000, read)[:2] == [2115, 1650]


def test_a_barrel_line_is_read_from_an_arrival_that_fell_back_or_scored_a_half() -> None:
    """Seed 45 v18, a secret barrel of 135 under skill-games, whose defenders score halves:
    one arrival shows 137.5, one at 135 falls back at once by 120 (its state shows 15), and
    one is dumped to 0 in the reply that shows it arrive. The line is read as 135: the
    fallen-back arrival with its penalty added again, the half rounded down to the line it
    reached (137), and the dumped score, which shows nothing of the line, left out."""
    fell = ({"type": "barrel_entered", "player": 1},
            {"type": "barrel_left", "player": 1, "reason": "fell_back", "penalty": 120})
    read = candidates.Readings()
    read.add_record(observe.CaseRecord("c", (
        _deal_end(1, [-115, 137.5, 57.5], [False, True, False], ({"type": "barrel_entered", "player": 1},)),
        _deal_end(2, [65, 15, -160], [False] * 3, fell),
        _deal_end(3, [100, 0, 0], [False] * 3, ({"type": "barrel_entered", "player": 1}, {"type": "dump", "player": 1})))))
    assert read.reached["barrel.threshold"] == collections.Counter({137: 1, 135: 1})
    assert candidates.values("barrel.threshold", 880, read)[0] == 135
    # an engine's reply is not trusted: a penalty of infinity (JSON's Infinity) adds nothing
    # and reads the score as it stands, where it raised OverflowError and ended the fit
    odd = ({"type": "barrel_entered", "player": 1},
           {"type": "barrel_left", "player": 1, "reason": "fell_back", "penalty": float("inf")})
    read.add_record(observe.CaseRecord("d", (_deal_end(1, [65, 15, -160], [False] * 3, odd),)))
    assert read.reached["barrel.threshold"][15] == 1


def test_an_amount_is_read_from_the_differing_legal_sets_its_knob_decides() -> None:
    """A player on the barrel offered 260 and 265 where the reference (a least barrel bid of
    265) offers 265 only: 260 is tried for the least barrel bid, though the commonest
    amounts (an opening of 100 and a maximum of 265, shown on every other legal set) fill
    the readings."""
    read = candidates.Readings()
    for step in range(1, 10):  # the common legal sets: 100 to 265 and 105 to 265 by fives
        low = 100 + 5 * (step % 2)
        read.add_record(observe.CaseRecord("c", (step_record(step, f"bid {low}", tuple(f"bid {n}" for n in range(low, 270, 5))),)))
    for top in range(150, 265, 5):  # contracts shown once each: they crowd the six readings
        read.amounts[top] += 2
    assert 260 not in candidates.values("auction.barrel_min_bid", None, read)
    d = observe.observed("c", 1, 3, "bid 260", Observed.LEGAL, "auction", "unexpected bid",
                         ["bid 265", "pass"], ["bid 260", "bid 265", "pass"], {"phase": "auction"})
    assert "auction.barrel_min_bid" in evidence.deciding_knobs(d)
    read.add_difference(d)
    assert 260 in candidates.values("auction.barrel_min_bid", None, read)


def test_a_marriage_condition_is_read_from_a_holders_highest_bid_less_the_marriages_worth() -> None:
    """On a grid of 25 a condition of 165 shows nowhere by itself (150 is offered without a
    marriage, 175 not, under 160 or 170 alike); under a marriage ceiling a clubs holder's bids
    up to 225 show it: 225 less the 60 the clubs marriage is worth. The reference read against
    (a condition of 160 and clubs worth 60) stops at 200."""
    read = candidates.Readings()
    read.fresh({"S": 40, "C": 60, "D": 80, "H": 100})
    bids = [f"bid {n}" for n in range(125, 250, 25)]
    before = {"phase": "auction", "to_act": 1, "hands": [["AS"], ["KC", "QC", "9H"], ["AD"]]}
    d = observe.observed("c", 1, 3, "pass", Observed.LEGAL, "auction", "unexpected bid", [*bids[:-1], "pass"], [*bids, "pass"], before)
    assert "auction.marriage_needed_above" in evidence.deciding_knobs(d)
    read.add_difference(d)
    assert 165 in candidates.values("auction.marriage_needed_above", 160, read)


def test_the_stop_rule_reads_its_amounts_afresh_from_the_rules_it_checks() -> None:
    """A maximum of 575 that two legal sets still show is crowded out of the few edges tried
    by the amounts read under the search's earlier rules (among them a highest bid of 590
    offered under rules since left), unless those are forgotten first (realistic seed 3, v28:
    fit stopped at 560)."""
    def offered(top: int) -> Finding:
        return observe.observed("c", 1, 3, "pass", Observed.LEGAL, "auction", "unexpected bid",
                                [f"bid {n}" for n in range(500, 560, 5)], [f"bid {n}" for n in range(500, top + 5, 5)],
                                {"phase": "auction"})

    read = candidates.Readings()
    for top in (540, 545, 550, 590) * 3:  # read under earlier rules
        read.add_difference(offered(top))
    read.fresh()
    read.add_difference(offered(575))
    assert 575 in candidates.values("auction.max_bid", 560, read)
    stale = candidates.Readings()
    for top in (540, 545, 550, 590) * 3:
        stale.add_difference(offered(top))
    stale.add_difference(offered(575))
    assert 575 not in candidates.values("auction.max_bid", 560, stale)


def _lead(step: int, hand: list[str], legal: tuple[str, ...],
          events: tuple[dict[str, Any], ...] = ()) -> tuple[observe.StepRecord, observe.StepRecord]:
    """The state before a lead (``to_act`` 0 holding ``hand``, no card on the table), then the
    lead of ``legal[0]`` with the events of its reply."""
    before = observe.StepRecord(1, step - 1, "play 9S", None, observe.Reply(True),
                                {"phase": "play", "trick": [], "to_act": 0, "hands": [hand, [], []]})
    return before, observe.StepRecord(1, step, legal[0], legal, observe.Reply(True, events), {"phase": "play"})


def test_the_last_trick_of_a_declaration_is_read_from_the_leads_of_a_marriage_holder() -> None:
    """A holder of the king and queen of hearts leads trick 3 with six cards left in hand
    (8 + 1 - 6 = 3) and is offered the declaration; leading trick 4 with five cards (8 + 1 - 5
    = 4) it is not: the line is at or above 3 and below 4, so 3. A lead of trick 2 without the
    offer (a defender's lead, say) is below the latest offer and says nothing of the line."""
    read = candidates.Readings()
    hearts = ["KH", "QH"]
    steps = (*_lead(3, hearts + ["9S", "9C", "JD", "AD"], ("play KH", "play KH marriage", "play QH")),
             *_lead(5, hearts + ["9C", "JD", "AD"], ("play KH", "play QH")),
             *_lead(7, hearts + ["9S", "9C", "JD", "AD", "10D"], ("play KH", "play QH")))
    read.add_record(observe.CaseRecord("c", steps))
    assert read.lines("marriages.last_trick") == [3]
    assert candidates.values("marriages.last_trick", None, read)[0] == 3


def test_the_last_trick_of_an_automatic_declaration_is_read_from_the_kings_and_queens_led() -> None:
    """Where leading the king or queen declares by itself, no declaration is ever offered. The
    holder of both hearts leads the king on trick 2 (seven cards: 8 + 1 - 7 = 2) and the queen
    on trick 3 (six cards) and each declares; on trick 4 (five cards) the queen is led and
    declares nothing: the line is 3. Leads of another card (the nine of spades on trick 5,
    four cards) declare nothing either way and say nothing of the line."""
    read = candidates.Readings()
    hearts, plain = ["KH", "QH"], ("play 9S", "play KH", "play QH")
    declared = ({"type": "marriage_declared", "player": 0, "suit": "H", "points": 100},)
    steps = (*_lead(3, hearts + ["9S", "9C", "JD", "AD", "10D"], ("play KH", "play 9S", "play QH"), declared),
             *_lead(5, ["QH", "KH", "9S", "9C", "JD", "AD"], ("play QH", "play 9S", "play KH"), declared),
             *_lead(7, hearts + ["9S", "9C", "JD"], ("play QH", "play 9S", "play KH")),
             *_lead(9, hearts + ["9S", "9C"], plain))
    read.add_record(observe.CaseRecord("c", steps))
    assert read.lines("marriages.last_trick") == [3]


def test_an_amount_is_read_from_a_refusal_its_knob_decides() -> None:
    """Bidding a step at a time, the legal sets offer only the next bid: a maximum of 305
    shows where a bid of 310 is refused as above the ceiling rather than as a jump, so 310
    and the amount a step below it are tried for the maximum."""
    read = candidates.Readings()
    read.add_record(observe.CaseRecord("c", (step_record(1, "bid 110", ("bid 110", "pass")),)))
    assert 305 not in candidates.values("auction.max_bid", 400, read)
    d = observe.observed("c", 1, 2, "bid 310", Observed.REFUSAL, "auction", "illegal/bid_jump_not_allowed vs illegal/bid_above_ceiling",
                         {"refused": ["illegal", "bid_jump_not_allowed"]}, {"refused": ["illegal", "bid_above_ceiling"]},
                         {"phase": "auction"})
    read.add_difference(d)
    assert {305, 310} <= set(candidates.values("auction.max_bid", 400, read))


def _bidding(hand: list[str], offered: range, action: str, refused: bool = False) -> tuple[observe.StepRecord, ...]:
    """A deal in which a bidder holding ``hand`` is offered ``offered`` and takes ``action``."""
    seen = {"phase": "auction", "to_act": 0, "hands": [hand, [], []]}
    reply = observe.Reply(False, (), ("illegal", "bid_above_ceiling")) if refused else observe.Reply(True)
    legal = (*(f"bid {n}" for n in offered), "pass")
    return (observe.StepRecord(1, 0, None, None, observe.Reply(True), seen),
            observe.StepRecord(1, 1, action, legal, reply, seen))


def test_a_marriage_table_is_bounded_by_the_highest_bid_offered_and_a_refusal_above_the_ceiling() -> None:
    """Over a condition of 100, a hearts holder offered 190 alone and refused 200 as above its
    ceiling holds 90 to 99 (95, the nearest to the rules' 100 on a grid of 5); a spades holder
    offered up to 180 holds at least 80; a diamonds holder offered 200 at least 100. Clubs,
    which no holder showed, keeps its 60."""
    read = candidates.Readings()
    for number, (hand, offered, action, refused) in enumerate([
            (["KH", "QH", "9S"], range(190, 200, 10), "bid 200", True),
            (["KS", "QS", "9H"], range(110, 190, 10), "bid 110", False),
            (["KD", "QD", "9H"], range(110, 210, 10), "bid 110", False)]):
        read.add_record(observe.CaseRecord(f"c{number}", _bidding(hand, offered, action, refused)))
    assert read.bounded_table({"S": 40, "C": 60, "D": 80, "H": 100}, 100) == {"S": 80, "C": 60, "D": 100, "H": 95}


def test_no_marriage_table_stands_in_for_no_ceiling_where_every_holder_reaches_the_maximum() -> None:
    """Every holder is offered bids up to 590, the highest anyone is offered: that is the
    maximum's cap, not a ceiling, and a table 470 above every suit would only stand in for no
    ceiling (the benchmark's seed 2, v9, took it and broke the declared points). No table is
    read, and a worth the declarations show (diamonds at 80) is never moved."""
    read = candidates.Readings()
    for number, hand in enumerate([["KS", "QS"], ["KC", "QC"], ["KD", "QD"], ["KH", "QH"]]):
        read.add_record(observe.CaseRecord(f"c{number}", _bidding(hand, range(110, 600, 10), "bid 110")))
    read.marriages["D"] = collections.Counter({80: 1})
    assert read.bounded_table({"S": 40, "C": 60, "D": 80, "H": 100}, 120) is None
    read.reached_by[("D",)] = 300  # a diamonds ceiling above 80 over 120 contradicts the declared 80
    assert read.bounded_table({"S": 40, "C": 60, "D": 80, "H": 100}, 120) is None


def test_a_marriage_table_is_read_past_a_stop_and_over_a_condition_between_two_bids() -> None:
    """Bidders with no marriage are offered bids up to 200 in tens: a condition of 200 to 209.
    Holders of one marriage are offered spades up to 250, clubs 320, diamonds 290 and hearts
    230; a holder of diamonds and hearts up to 310, so those two sum to 105 to 114 over the
    condition. Over 200 that needs 110 to 119 from diamonds (90 to 99) and hearts (30 to 39):
    no table. Over 205, diamonds 85 to 94 and hearts 25 to 34: 85 + 25 = 110. Holders of clubs
    and another marriage stop at 350 under a stop at 350, which bounds their ceilings from
    below only (120 + 45 = 165 and 120 + 85 = 205 over 205 both reach it). The table of 45,
    120, 85 and 25 over 205 is read (the benchmark's seed 37, v14, where fit took the
    condition 200 with a table 5 above). With no stop in the rules read against, 350 is read
    as a ceiling, and no table over 205 agrees with it."""
    read = candidates.Readings()
    read.held.update({((), 200, 10): 9, (("S",), 250, 10): 4, (("C",), 320, 10): 3, (("D",), 290, 10): 3,
                      (("H",), 230, 10): 3, (("D", "H"), 310, 10): 2, (("C", "D"), 350, 10): 2,
                      (("S", "C"), 350, 10): 1})
    read.amounts.update({100: 9, 430: 1})
    polish = {"S": 40, "C": 60, "D": 80, "H": 100}
    read.fresh(polish, 100, 350)
    assert {"S": 45, "C": 120, "D": 85, "H": 25} in read.marriage_tables(polish)
    read.fresh(polish, 100, None)
    assert {"S": 45, "C": 120, "D": 85, "H": 25} not in read.marriage_tables(polish)


def test_a_target_is_read_above_a_score_the_reference_won_with_and_the_engine_did_not() -> None:
    """The reference lets a declarer jump from 860 to 1040 and win; the engine caps the
    jumper on the barrel at 880 and plays on, its target being 1920. Its own scores show 880
    only, so the one place the target shows is above the 1040 the reference won with: 1045
    is tried (the benchmark's seed 36, v22, where no barrel win by a jump stood in for it)."""
    def reply(scores: list[int], won: bool) -> dict[str, object]:
        events: list[dict[str, object]] = [{"type": "deal_scored", "points": [180, 0, 0], "deltas": [180, 0, 0],
                                            "scores": scores}]
        return {"events": events + ([{"type": "match_won", "player": 0}] if won else [])}

    read = candidates.Readings()
    read.add_difference(observe.observed("c", 1, 29, "play AH", Observed.EVENT, "play", "missing match_won",
                                         reply([1040, 300, 200], True), reply([880, 300, 200], False),
                                         {"phase": "play"}))
    assert 1045 in candidates.values("match_end.target", 1000, read)


def test_a_number_is_read_moved_by_the_gap_its_legal_sets_showed() -> None:
    """Four aces worth 10 under a condition of 100 let their holder bid up to 110; the engine,
    with four aces worth 45, offers bids up to 140 in tens. The gap between the two highest
    bids, 30, is read as a value, and so is the rules' 10 moved up by it: 40, which plays as 45
    (bids up to 140) where 30 does not (130)."""
    read = candidates.Readings()
    offered = [f"bid {amount}" for amount in range(100, 150, 10)]
    read.gaps["marriages.four_aces"] = candidates._gaps(offered[:2], offered)
    tried = read.for_knob("marriages.four_aces", 10)
    assert 30 in tried and 40 in tried


def test_a_maximum_is_read_from_the_highest_bid_any_hand_was_offered() -> None:
    """Under a maximum of 410 the reference stops every hand at 410. Seven hands are offered
    bids up to 420 or 430 (their marriages reach no further), one up to 490: the maximum is 490
    or more, and 490 is tried, though the edges of the many (110, 420, 430) outnumber it."""
    read = candidates.Readings()

    def bids(top: int) -> list[str]:
        return [f"bid {n}" for n in range(110, top + 10, 10)] + ["pass"]

    for top in (430, 430, 430, 430, 420, 420, 420, 490):
        read.add_difference(observe.observed("c", 1, 2, "bid 110", Observed.LEGAL, "auction", "", bids(410), bids(top),
                                             {"phase": "auction"}))
    assert 490 in candidates.values("auction.max_bid", 410, read)


def test_a_count_tries_the_counts_next_to_the_bundled_ones() -> None:
    """A penalty from the fifth give-up shows only as a score that changes at the fifth, among
    many other numbers; a bundled profile charges it from the third, so the counts next to
    three are tried (as ``fit.knob_domain`` tries them), and none further off."""
    tried = candidates.values("giving_up.penalty_from", None)
    assert {2, 4, 5} <= set(tried)
    assert all(n <= 5 for n in tried if isinstance(n, int))


def test_marriage_values_are_built_from_the_events() -> None:
    read = candidates.Readings()
    event = {"type": "marriage_declared", "player": 0, "suit": "S", "points": 80}
    read.add_record(observe.CaseRecord("c", (observe.StepRecord(1, 9, "play KS marriage", (), observe.Reply(True, (event,)), {}),)))
    table = {"S": 40, "C": 60, "D": 80, "H": 100}
    assert {**table, "S": 80} in candidates.values("marriages.values", table, read)


def test_a_distance_between_the_highest_bids_is_read_for_the_knobs_deciding_them() -> None:
    """The reference stops a four aces hand at 495, the engine at 525: 30 is tried for four
    aces, which decide the bid ceiling (spec/diagnosis.yaml); a distance read under rules
    since moved is forgotten."""
    read = candidates.Readings()
    d = observe.observed("c", 1, 1, "bid 100", Observed.LEGAL, "auction", "missing bid",
                         [f"bid {n}" for n in range(100, 500, 5)], [f"bid {n}" for n in range(100, 530, 5)],
                         {"phase": "auction"})
    assert "marriages.four_aces" in evidence.deciding_knobs(d)
    read.add_difference(d)
    assert candidates.values("marriages.four_aces", None, read)[0] == 30
    read.fresh()
    assert 30 not in candidates.values("marriages.four_aces", None, read)


def test_a_line_on_the_contract_is_read_from_the_deal_it_changes() -> None:
    """A barrel player's made contract of 120 wins for the reference and not for the engine:
    the least contract that wins from the barrel is some amount above 120, never shown in a
    legal set."""
    read = candidates.Readings()
    d = observe.observed("c", 1, 29, "play AS", Observed.EVENT, "play", "missing match_won",
                         {"events": [{"type": "match_won", "player": 0}]}, {"events": []},
                         {"phase": "play", "contract": 120})
    assert "barrel.min_contract" in evidence.deciding_knobs(d)
    read.add_difference(d)
    assert 125 in candidates.values("barrel.min_contract", 120, read)


def _scored(deltas: list[int], scores: list[int]) -> dict[str, object]:
    return {"events": [{"type": "deal_scored", "deltas": deltas, "scores": scores}]}


def test_a_line_is_read_where_the_implementation_stops_a_score_short_of_the_reference() -> None:
    """An 800 rule moved to 395 shows only where a defender on 380 ends the deal on 395, capped,
    where the reference gives the full 40 (420). Every other number of those deal scores
    (the declarer's 120, the other defender's points, the deltas) is commoner, so 395 is tried
    because it stands in place of the reference's 420, not because it is common."""
    read = candidates.Readings()
    for case in range(8):  # deals that differ elsewhere in the score: they crowd the readings
        d = observe.observed(f"c{case}", 1, 29, "play AS", Observed.EVENT, "play", "deal_scored differs",
                             _scored([120, 40, 20], [120 + case, 40, 20]), _scored([120, 30, 20], [120 + case, 30, 20]),
                             {"phase": "play"})
        read.add_difference(d)
    d = observe.observed("lock", 1, 29, "play AS", Observed.EVENT, "play", "deal_scored differs",
                         _scored([120, 40, 10], [600, 420, 10]), _scored([120, 15, 10], [600, 395, 10]), {"phase": "play"})
    assert "defender_lock.from" in evidence.deciding_knobs(d)
    read.add_difference(d)
    assert 395 in candidates.values("defender_lock.from", 800, read)


def test_a_penalty_is_read_from_the_loss_that_stands_in_place_of_the_references() -> None:
    """A give-up penalty of 165 where classic charges 120 shows only as the third give-up's
    delta: the reference takes 120 off the declarer (-120), the implementation 165 (-165).
    The scores are 45 apart, and 45 is no penalty; 165 is read from the loss in the place of
    the knob's own value, negated."""
    read = candidates.Readings()
    d = observe.observed("third", 1, 3, "give_up", Observed.EVENT, "exchange", "deal_scored differs",
                         _scored([-120, 60, 60], [-120, 60, 60]), _scored([-165, 60, 60], [-165, 60, 60]),
                         {"phase": "exchange"})
    read.add_difference(d)
    assert 165 in candidates.values("giving_up.penalty", 120, read)
    assert -165 not in candidates.values("giving_up.penalty", 120, read)


def test_a_penalty_beside_the_bid_lost_is_read_from_how_far_the_delta_moved() -> None:
    """A give-up penalty of 255 where the declarer also loses the winning bid (100) shows only
    inside the declarer's delta: the reference's -220 under a penalty of 120, the
    implementation's -355. Neither number is a penalty, nor stands in place of -120; the
    delta moved by 135, and 120 + 135 = 255 is tried. The other defender's 60 (in both) is
    no distance."""
    read = candidates.Readings()
    d = observe.observed("third", 1, 3, "give_up", Observed.EVENT, "exchange", "deal_scored differs",
                         _scored([-220, 60, 60], [-220, 60, 60]), _scored([-355, 60, 60], [-355, 60, 60]),
                         {"phase": "exchange"})
    read.add_difference(d)
    found = candidates.values("giving_up.penalty", 120, read)
    assert 255 in found
    assert 120 - 135 not in found  # below the schema's least penalty


def test_a_least_bid_above_every_bid_is_read_where_none_is_offered() -> None:
    """A least bid on the barrel of 240 over a maximum of 140 shows only as a player on the
    barrel offered no bid at all: the amount above the reference's highest is tried."""
    read = candidates.Readings()
    d = observe.observed("c", 1, 2, "pass", Observed.LEGAL, "auction", "missing bid",
                         [f"bid {n}" for n in range(105, 145, 5)] + ["pass"], ["pass"], {"phase": "auction"})
    assert "auction.barrel_min_bid" in evidence.deciding_knobs(d)
    read.add_difference(d)
    assert candidates.values("auction.barrel_min_bid", None, read)[0] == 145
