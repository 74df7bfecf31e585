"""One test per knob value the profiles use: flip the knob, see the outcome change."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.engine import barrel_match, engine, fill_deal, play_all, scored, types

from reference_impl import MatchState
from reference_impl.cards import cards, mask_of
from tests.support.engine import refusal




def first_give(state: MatchState) -> str:
    return next(a for a in state.legal_actions() if a.startswith("give "))


def dealt(name: str, hands: list[str], talon_cards: str | None = None, dealer: int = 0, **changes: dict[str, Any]) -> MatchState:
    state = engine(name, **changes)
    full, rest = fill_deal(hands, talon_cards)
    state.start_deal(dealer, full, rest)
    return state


# ------------------------------------------------------------------ redeals, deal


FOUR_NINES = ["9S 9C 9D 9H", "", ""]


@pytest.mark.parametrize(("after", "next_dealer"), [("same", 0), ("next", 1)])
def test_dealer_after_redeal(after: str, next_dealer: int) -> None:
    state = dealt("skill-games", FOUR_NINES, deal={"next_dealer": "left", "dealer_after_redeal": after})
    assert state.phase == "deal_over" and state.next_dealer == next_dealer
    assert state.deal_result == {"kind": "redeal", "made": None, "points": [0, 0, 0], "deltas": [0, 0, 0]}


def test_redeal_automatic_ends_the_deal_but_a_claim_asks() -> None:
    automatic = dealt("skill-games", FOUR_NINES)
    assert automatic.phase == "deal_over"
    claim = dealt("gambler-club", FOUR_NINES)
    assert claim.phase == "claim" and claim.to_act == 0 and claim.legal_actions() == ["no_redeal", "redeal"]
    assert claim.apply("redeal") == [{"type": "redeal", "reason": "four_nines", "player": 0}]
    assert claim.phase == "deal_over" and claim.next_dealer == 0


def test_a_waived_claim_goes_on_to_the_auction() -> None:
    state = dealt("gambler-club", FOUR_NINES)
    assert refusal(state, "bid 100") == "wrong_phase"
    state.apply("no_redeal")
    assert state.phase == "auction" and state.to_act == 1


def test_hand_under_points_claim_before_bidding() -> None:
    weak = "9S 9C 9D JS JC QS KC"  # 2+2+3+4 = 11 card points
    state = dealt("gambler-club", ["", weak, ""])
    assert state.phase == "claim" and state.to_act == 1
    assert dealt("classic", ["", weak, ""]).phase == "auction"


def test_talon_under_points_claim_only_by_the_declarer_before_exchange() -> None:
    state = dealt("gambler-club", ["", "", ""], talon_cards="9S 9C JD")
    play_all(state, ["bid 100", "pass", "pass"])
    assert state.phase == "claim" and state.to_act == 1
    state.apply("no_redeal")
    assert state.phase == "exchange"
    automatic = dealt("classic+weak-talon", ["", "", ""], talon_cards="9S 9C JD")
    events = play_all(automatic, ["bid 100", "pass", "pass"])
    assert automatic.phase == "deal_over" and events[-1] == {"type": "redeal", "reason": "talon_under_points", "player": 1}


def test_four_nines_after_exchange_claim_by_a_defender() -> None:
    state = dealt("classic", ["", "AS", "9S 9C 9D"], talon_cards="9H KH QH")
    play_all(state, ["bid 100", "pass", "pass", "give 9H AS", "contract 100"])
    assert state.phase == "claim" and state.to_act == 2
    state.apply("redeal")
    assert state.deal_result is not None and state.deal_result["kind"] == "redeal"
    assert state.scores == [0, 0, 0]


# ---------------------------------------------------------------------- auction


def test_opening_forced_or_at_least() -> None:
    forced = dealt("skill-games", ["", "", ""])
    assert forced.legal_actions() == ["bid 100"]
    assert refusal(forced, "bid 110") == "opening_bid_fixed"
    at_least = dealt("classic", ["", "", ""])
    assert "bid 110" in at_least.legal_actions() and "bid 100" in at_least.legal_actions()
    assert refusal(at_least, "bid 95") == "bid_too_low"
    assert refusal(at_least, "pass") == "opener_must_bid"


@pytest.mark.parametrize(("name", "legal", "off"), [("skill-games", "bid 105", "bid 107"), ("polish", "bid 110", "bid 105")])
def test_bid_step(name: str, legal: str, off: str) -> None:
    state = dealt(name, ["", "", ""])
    state.apply("bid 100")
    assert min(state.legal_actions()[:-1], key=lambda a: int(a.split()[1])) == legal
    assert refusal(state, off) == "bid_off_step"
    assert refusal(state, "bid 100") == "bid_too_low"


def test_high_bid_step_above_high_bid_from() -> None:
    hand = ["", "", "KH QH KD QD"]
    coarse = dealt("skill-games", hand, auction={"high_bid_step": 20, "high_bid_from": 200})
    coarse.apply("bid 100")
    amounts = [int(a.split()[1]) for a in coarse.legal_actions() if a != "pass"]
    assert 205 not in amounts and 220 in amounts and 195 in amounts
    fine = dealt("skill-games", hand)
    fine.apply("bid 100")
    assert "bid 205" in fine.legal_actions()


def test_raise_one_step() -> None:
    state = dealt("skill-games", ["", "", ""], auction={"raise": "one_step"})
    state.apply("bid 100")
    assert state.legal_actions() == ["bid 105", "pass"]
    assert refusal(state, "bid 110") == "bid_jump_not_allowed"
    free = dealt("skill-games", ["", "", ""])
    free.apply("bid 100")
    assert "bid 110" in free.legal_actions()


def test_marriage_needed_above() -> None:
    state = dealt("skill-games", ["", "", ""])
    state.apply("bid 100")
    assert refusal(state, "bid 125") == "bid_needs_marriage"
    loose = dealt("skill-games", ["", "", ""], auction={"marriage_needed_above": None})
    loose.apply("bid 100")
    loose.apply("bid 125")


def test_ceiling_marriages_held_or_none() -> None:
    capped = dealt("skill-games", ["", "", "KS QS"])
    capped.apply("bid 100")
    assert refusal(capped, "bid 165") == "bid_above_ceiling"
    free = dealt("classic", ["", "", "KS QS"])
    play_all(free, ["bid 100"])
    free.apply("bid 300")


def test_max_bid() -> None:
    state = dealt("classic", ["", "", "KS QS"], auction={"max_bid": 150})
    state.apply("bid 100")
    assert refusal(state, "bid 155") == "bid_above_ceiling"
    assert max(int(a.split()[1]) for a in state.legal_actions() if a != "pass") == 150


def test_stop_at() -> None:
    state = dealt("gambler-club", ["", "", "KH QH"])
    state.apply("bid 100")
    assert refusal(state, "bid 125") == "bid_past_stop"
    state.apply("bid 120")
    state.apply("pass")
    state.apply("pass")  # seat 1 passes: seat 2 wins at 120
    assert state.declarer == 2
    again = dealt("gambler-club", ["", "", "KH QH"])
    play_all(again, ["bid 100", "bid 120", "pass", "pass"])
    assert again.declarer == 2
    third = dealt("gambler-club", ["", "KS QS", "KH QH"])
    play_all(third, ["bid 100", "bid 120", "pass", "bid 125"])  # once at 120, past it is legal
    free = dealt("skill-games", ["", "", "KH QH"])
    play_all(free, ["bid 100", "bid 125"])


def test_both_pass_makes_the_opener_declarer_at_the_opening_bid() -> None:
    state = dealt("polish", ["", "", ""])
    events = play_all(state, ["bid 100", "pass", "pass"])
    assert events[0] == {"type": "auction_won", "player": 1, "bid": 100}


# ------------------------------------------------------------------------ talon


def test_talon_shown_always_or_from_bid() -> None:
    house = dealt("polish", ["", "", ""])
    events = play_all(house, ["bid 100", "pass", "pass"])
    assert "talon_revealed" in types(events) and house.observation()["talon"] is not None
    tournament = dealt("polish-tournament", ["", "", ""])
    events = play_all(tournament, ["bid 100", "pass", "pass"])
    assert "talon_revealed" not in types(events)
    assert tournament.observation()["talon"] is None and tournament.observation()["talon_shown"] is False
    high = dealt("polish-tournament", ["", "", "KS QS"])
    events = play_all(high, ["bid 100", "bid 110", "bid 120", "pass", "bid 130", "pass"])
    assert "talon_revealed" in types(events)
    lower = dealt("polish-tournament", ["", "", "KS QS"], talon={"shown": "from_bid", "shown_from_bid": 140,
                  "contract_raise": True, "contract_ceiling_hand": "kept_hand"})  # fmt: skip
    events = play_all(lower, ["bid 100", "bid 110", "bid 120", "pass", "bid 130", "pass"])
    assert "talon_revealed" not in types(events)


def _at_contract(name: str, give: str = "", **changes: dict[str, Any]) -> MatchState:
    state = dealt(name, ["", "KH AS", ""], talon_cards="QH 9S 9C", **changes)
    play_all(state, ["bid 100", "pass", "pass", give or "give 9S 9C"])
    return state


def test_contract_raise() -> None:
    raising = _at_contract("skill-games")
    assert raising.legal_actions()[-2:] == ["contract 220", "give_up"]
    assert refusal(raising, "contract 95") == "contract_below_bid"
    assert refusal(raising, "contract 102") == "contract_off_step"
    assert refusal(raising, "contract 225") == "contract_above_ceiling"
    fixed = _at_contract("skill-games", talon={"shown": "always", "shown_from_bid": 130, "contract_raise": False,
                         "contract_ceiling_hand": "kept_hand"})  # fmt: skip
    assert fixed.legal_actions() == ["contract 100", "give_up"]
    assert refusal(fixed, "contract 105") == "contract_raise_not_allowed"


@pytest.mark.parametrize(("hand", "give", "top"), [
    ("kept_hand", "give 9S 9C", 220), ("kept_hand", "give QH 9C", 120),
    ("hand_with_talon", "give QH 9C", 220), ("auction_hand", "give 9S 9C", 120),
])  # fmt: skip
def test_contract_ceiling_hand(hand: str, give: str, top: int) -> None:
    talon = {"shown": "always", "shown_from_bid": 130, "contract_raise": True, "contract_ceiling_hand": hand}
    state = _at_contract("skill-games", give, talon=talon)
    assert max(int(a.split()[1]) for a in state.legal_actions() if a.startswith("contract")) == top


def test_a_contract_equal_to_the_bid_is_legal_without_the_marriage() -> None:
    """Ruling 3."""
    state = dealt("skill-games", ["", "KH QH", ""])
    play_all(state, ["bid 100", "bid 105", "pass", "bid 200", "pass", "give KH QH"])
    assert state.legal_actions() == ["contract 200", "give_up"]


# -------------------------------------------------------------------- giving up


def _give_up_deal(name: str, match: dict[str, Any] | None = None, **changes: dict[str, Any]) -> tuple[MatchState, list[dict[str, Any]]]:
    """Seat 1 wins at 115 and gives up at the profile's moment."""
    state = engine(name, match, **changes)
    full, talon = fill_deal(["", "KS QS", ""])
    state.start_deal(0, full, talon)
    play_all(state, ["bid 100", "bid 105", "pass", "bid 115", "pass"])
    if "give_up" not in state.legal_actions():
        state.apply(first_give(state))
    return state, state.apply("give_up")


def giving(**knobs: Any) -> dict[str, Any]:
    base = {"allowed": True, "local_name": "give_up", "moment": "with_contract", "declarer_loses": "winning_bid",
            "defender_gain": "half_bid", "defender_gain_amount": 60, "half_bid_rounding": "exact",
            "defenders_paid_from": 1, "penalty": 120, "penalty_from": None, "limit": None, "on_barrel": False}  # fmt: skip
    base.update(knobs)
    return base


def test_giving_up_allowed() -> None:
    state = dealt("skill-games", ["", "", ""], giving_up=giving(allowed=False))
    play_all(state, ["bid 100", "pass", "pass"])
    state.apply(first_give(state))
    assert "give_up" not in state.legal_actions()
    assert refusal(state, "give_up") == "give_up_not_allowed"


@pytest.mark.parametrize(("moment", "phase"), [("before_exchange", "exchange"), ("with_contract", "contract")])
def test_giving_up_moment(moment: str, phase: str) -> None:
    state = dealt("skill-games", ["", "", ""], giving_up=giving(moment=moment))
    play_all(state, ["bid 100", "pass", "pass"])
    assert ("give_up" in state.legal_actions()) == (phase == "exchange")
    if phase == "contract":
        assert refusal(state, "give_up") == "give_up_not_allowed"
        state.apply(first_give(state))
        assert "give_up" in state.legal_actions()
    else:
        state.apply(first_give(state))
        assert "give_up" not in state.legal_actions()


@pytest.mark.parametrize(("knobs", "scores"), [
    ({}, [57.5, -115, 57.5]),
    ({"declarer_loses": "nothing"}, [57.5, 0, 57.5]),
    ({"half_bid_rounding": "up_to_5"}, [60, -115, 60]),
    ({"defender_gain": "fixed"}, [60, -115, 60]),
    ({"defenders_paid_from": 2}, [0, -115, 0]),
    ({"penalty_from": 1}, [57.5, -235, 57.5]),
])  # fmt: skip
def test_giving_up_scores(knobs: dict[str, Any], scores: list[float]) -> None:
    state, events = _give_up_deal("skill-games", giving_up=giving(**knobs))
    assert state.observation()["scores"] == scores
    assert events[0] == {"type": "give_up", "player": 1, "count": 1}
    assert state.deal_result is not None and state.deal_result["kind"] == "given_up"


def test_giving_up_paid_from_the_second_and_penalty_from_the_third() -> None:
    polish = engine("polish")
    gains = []
    for _ in range(2):
        full, talon = fill_deal(["", "KS QS", ""])
        polish.start_deal(0, full, talon)
        play_all(polish, ["bid 100", "pass", "pass"])
        polish.apply(first_give(polish))
        before = polish.scores[0]
        polish.apply("give_up")
        gains.append(polish.scores[0] - before)
    assert gains == [0, 60]  # the first bomb is free


def test_giving_up_limit() -> None:
    state, _ = _give_up_deal("skill-games", giving_up=giving(limit=1))
    full, talon = fill_deal(["", "KS QS", ""])
    state.start_deal(0, full, talon)
    play_all(state, ["bid 100", "pass", "pass"])
    state.apply(first_give(state))
    assert "give_up" not in state.legal_actions()
    assert refusal(state, "give_up") == "give_up_limit_reached"


@pytest.mark.parametrize("on_barrel", [False, True])
def test_giving_up_on_barrel(on_barrel: bool) -> None:
    state = engine("skill-games", barrel_match([0, 880, 0], [False, True, False]), giving_up=giving(on_barrel=on_barrel))
    full, talon = fill_deal(["", "KS QS", ""])
    state.start_deal(0, full, talon)
    play_all(state, ["bid 100", "pass", "pass"])
    state.apply(first_give(state))
    assert ("give_up" in state.legal_actions()) == on_barrel
    if not on_barrel:
        assert refusal(state, "give_up") == "give_up_on_barrel"


# ------------------------------------------------------------------------- play


def mid_trick(name: str, hand: str, trick: list[str], trump: str | None, **changes: dict[str, Any]) -> list[str]:
    """The legal plays of seat 2 holding ``hand`` after seats 0 and 1 played ``trick``."""
    state = engine(name, **changes)
    state.phase, state.dealer, state.declarer, state.contract, state.high_bid = "play", 2, 0, 100, 100
    state.trick_number = 2
    state.hands = [0, 0, mask_of(cards(hand))]
    state.trick = [(i, c) for i, c in enumerate(cards(" ".join(trick)))]
    state.trump = trump
    state.to_act = 2
    return state.legal_actions()


def test_must_follow_suit_and_must_trump() -> None:
    assert mid_trick("classic", "9S AD 9H", ["KC", "QC"], "H") == ["play 9H"]
    assert mid_trick("classic", "9S AD 9H", ["KC", "QC"], "H", play={"first_lead": "declarer", "must_trump": False,
                     "must_beat": False, "must_overtrump": False}) == ["play 9H", "play 9S", "play AD"]  # fmt: skip
    assert mid_trick("classic", "9C AD 9H", ["KC", "QC"], "H") == ["play 9C"]


def test_must_beat() -> None:
    assert mid_trick("polish", "AC 9C 9H", ["KC", "QC"], None) == ["play AC"]
    assert mid_trick("classic", "AC 9C 9H", ["KC", "QC"], None) == ["play 9C", "play AC"]
    assert mid_trick("polish", "9C 10C", ["AC", "QC"], None) == ["play 10C", "play 9C"]  # cannot beat
    # a trump of another suit is winning: following suit is enough
    assert mid_trick("polish", "AC 9C", ["KC", "9H"], "H") == ["play 9C", "play AC"]
    # ruling 4: trumps led, must beat in trumps
    assert mid_trick("polish", "AH 9H", ["KH", "QC"], "H") == ["play AH"]


def test_must_overtrump() -> None:
    assert mid_trick("polish", "AH 9H 9S", ["KC", "KH"], "H") == ["play AH"]
    assert mid_trick("classic", "AH 9H 9S", ["KC", "KH"], "H") == ["play 9H", "play AH"]
    assert mid_trick("polish", "QH 9H", ["KC", "KH"], "H") == ["play 9H", "play QH"]


def _on_lead(name: str, hand: str, trick_number: int = 2, **changes: dict[str, Any]) -> MatchState:
    state = engine(name, **changes)
    state.phase, state.dealer, state.declarer, state.contract, state.high_bid = "play", 2, 0, 100, 100
    state.trick_number = trick_number
    rest = [c for c in cards("JS 10C AD 9H JC 10D 9S JD 10H 9C JH 10S AC 9D KS KC QS QC") if c.code not in hand.split()]
    size = len(hand.split())
    state.hands = [mask_of(cards(hand)), mask_of(rest[:size]), mask_of(rest[size:2 * size])]
    state.to_act = 0
    return state


def test_marriage_declaration_optional_or_automatic() -> None:
    optional = _on_lead("classic", "KH QH AS")
    assert "play KH marriage" in optional.legal_actions() and "play KH" in optional.legal_actions()
    assert optional.apply("play KH") == []
    automatic = _on_lead("skill-games", "KH QH AS")
    assert "play KH marriage" not in automatic.legal_actions()
    assert refusal(automatic, "play KH marriage") == "marriage_declaration_automatic"
    assert types(automatic.apply("play KH")) == ["marriage_declared", "trump_changed"]


def test_marriage_refusals() -> None:
    state = _on_lead("classic", "KH AS QS")
    assert refusal(state, "play KH marriage") == "marriage_not_held"
    assert refusal(state, "play AS marriage") == "marriage_not_held"
    assert refusal(state, "play KD marriage") == "card_not_held"


def test_marriage_first_trick() -> None:
    banned = _on_lead("classic", "KH QH AS", trick_number=1)
    assert refusal(banned, "play KH marriage") == "marriage_on_first_trick"
    allowed = _on_lead("classic", "KH QH AS", trick_number=1, marriages={"values": {"S": 40, "C": 60, "D": 80, "H": 100},
                       "declaration": "optional", "first_trick": True, "trump_from": "this_trick", "four_aces": None})  # fmt: skip
    assert "play KH marriage" in allowed.legal_actions()


def test_trump_from_this_trick_or_next() -> None:
    marriages = {"values": {"S": 40, "C": 60, "D": 80, "H": 100}, "declaration": "optional", "first_trick": False,
                 "trump_from": "next_trick", "four_aces": None}  # fmt: skip
    later = _on_lead("classic", "KH QH AS", marriages=marriages)
    assert types(later.apply("play KH marriage")) == ["marriage_declared"]
    assert later.trump is None
    now = _on_lead("classic", "KH QH AS")
    now.apply("play KH marriage")
    assert now.trump == "H"


def test_a_later_marriage_replaces_the_trump() -> None:
    state = _on_lead("classic", "KH QH KD QD")
    state.trump = "S"
    state.apply("play QD marriage")
    assert state.trump == "D"


def test_four_aces() -> None:
    scored_aces = _on_lead("classic+four-aces", "AS AC AD AH")
    assert "play AS aces" in scored_aces.legal_actions()
    assert scored_aces.apply("play AS aces") == [{"type": "aces_declared", "player": 0, "points": 200}]
    assert scored_aces.trump is None
    plain = _on_lead("classic", "AS AC AD AH")
    assert refusal(plain, "play AS aces") == "aces_not_held"
    # four aces count as a marriage for bidding above 120
    bidding = dealt("classic+four-aces", ["", "AS AC AD AH", ""])
    bidding.apply("bid 300")
    assert refusal(dealt("classic", ["", "AS AC AD AH", ""]), "bid 125") == "bid_needs_marriage"


def test_wrong_phase_and_malformed() -> None:
    state = dealt("classic", ["", "", ""])
    assert refusal(state, "play AS") == "wrong_phase"
    assert refusal(state, "contract 100") == "wrong_phase"
    # A claim with no window open has its own code, like give_up outside its moment.
    assert refusal(state, "redeal") == "redeal_not_allowed"
    assert refusal(state, "no_redeal") == "redeal_not_allowed"
    from reference_impl import MalformedActionError

    for text in ("bid  100", "bid 0100", "play 1S", "give AS", "Pass", "bid -5"):
        with pytest.raises(MalformedActionError):
            state.apply(text)


# ---------------------------------------------------------------------- scoring


def test_declarer_rounding() -> None:
    exact, _ = scored("classic", 1, 120, [2, 116, 2])
    assert exact.observation()["scores"][1] == -120
    rounded, _ = scored("classic", 1, 120, [2, 116, 2], scoring={"declarer_rounding": "nearest_10", "defender_rounding": "nearest_5"})
    assert rounded.observation()["scores"][1] == 120


@pytest.mark.parametrize(("rounding", "gains"), [("nearest_5", [25, 20]), ("nearest_10", [20, 20]), ("exact", [23, 22])])
def test_defender_rounding(rounding: str, gains: list[int]) -> None:
    state, _ = scored("classic", 1, 100, [23, 75, 22], [[], ["S"], []], scoring={"declarer_rounding": "exact", "defender_rounding": rounding})
    scores = state.observation()["scores"]
    assert [scores[0], scores[2]] == gains


def test_nearest_10_rounds_5_up() -> None:
    state, _ = scored("polish", 1, 100, [25, 80, 15], [[], ["S"], []])
    assert state.observation()["scores"] == [30, 100, 20]


# ------------------------------------------------------------------------ bolts


def bolts(**knobs: Any) -> dict[str, Any]:
    base = {"enabled": True, "zero": "zero_points", "every": 3, "penalty": 120, "counting": "cumulative",
            "on_barrel": False, "in_give_up_deal": False}  # fmt: skip
    base.update(knobs)
    return base


def test_bolts_enabled() -> None:
    on, events = scored("classic", 1, 100, [0, 100, 20], [[], ["S"], []])
    assert {"type": "bolt", "player": 0, "count": 1} in events and on.bolts == [1, 0, 0]
    off, events = scored("classic+no-zero-penalty", 1, 100, [0, 100, 20], [[], ["S"], []])
    assert "bolt" not in types(events) and off.bolts == [0, 0, 0]


def test_bolt_zero_points_or_no_tricks() -> None:
    # a trick of three nines: one trick won, zero points
    by_points, _ = scored("classic", 1, 100, [0, 100, 20], [[], ["S"], []], tricks=[1, 5, 2])
    assert by_points.bolts == [1, 0, 0]
    by_tricks, _ = scored("classic", 1, 100, [0, 100, 20], [[], ["S"], []], tricks=[1, 5, 2], bolts=bolts(zero="no_tricks"))
    assert by_tricks.bolts == [0, 0, 0]


@pytest.mark.parametrize(("every", "score"), [(3, -120), (4, 0)])
def test_bolt_every_and_penalty(every: int, score: int) -> None:
    state, events = scored("classic", 1, 100, [0, 100, 20], [[], ["S"], []], match={"bolts": [2, 0, 0]}, bolts=bolts(every=every))
    assert state.observation()["scores"][0] == score
    if every == 3:
        assert {"type": "bolt_penalty", "player": 0, "penalty": 120} in events and state.bolts[0] == 0
    penalty, _ = scored("classic", 1, 100, [0, 100, 20], [[], ["S"], []], match={"bolts": [2, 0, 0]}, bolts=bolts(penalty=100))
    assert penalty.observation()["scores"][0] == -100


@pytest.mark.parametrize(("counting", "left"), [("cumulative", 2), ("consecutive", 0)])
def test_bolt_counting(counting: str, left: int) -> None:
    state, _ = scored("classic", 1, 100, [20, 100, 0], [[], ["S"], []], match={"bolts": [2, 0, 0]}, bolts=bolts(counting=counting))
    assert state.bolts[0] == left


@pytest.mark.parametrize("on_barrel", [False, True])
def test_bolt_on_barrel(on_barrel: bool) -> None:
    state, _ = scored("classic", 1, 100, [0, 100, 20], [[], ["S"], []], match=barrel_match([880, 0, 0], [True, False, False]),
                      bolts=bolts(on_barrel=on_barrel))  # fmt: skip
    assert state.bolts[0] == (1 if on_barrel else 0)


@pytest.mark.parametrize("in_give_up", [False, True])
def test_bolt_in_give_up_deal(in_give_up: bool) -> None:
    state, _ = _give_up_deal("skill-games", bolts=bolts(in_give_up_deal=in_give_up))
    assert state.bolts == ([1, 0, 1] if in_give_up else [0, 0, 0])


# ----------------------------------------------------------------------- barrel


def barrel(**knobs: Any) -> dict[str, Any]:
    base = {"enabled": True, "threshold": 880, "jump_over_wins": False, "attempts": 3, "attempts_penalty": 120,
            "attempt_counts": "every_deal", "give_up_deal_counts": True, "min_contract": 120,
            "defender_points": "suspended", "max_occupants": None, "knock_off_penalty": 120, "failed_visit_reset": None}  # fmt: skip
    base.update(knobs)
    return base


def test_barrel_enabled_caps_at_the_threshold() -> None:
    on, events = scored("skill-games", 1, 100, [20, 100, 0], [[], ["S"], []], match={"scores": [0, 800, 0]})
    assert on.observation()["scores"][1] == 880 and on.barrel[1].on and {"type": "barrel_entered", "player": 1} in events
    off, _ = scored("skill-games+no-barrel", 1, 100, [20, 100, 0], [[], ["S"], []], match={"scores": [0, 800, 0]})
    assert off.observation()["scores"][1] == 900 and not off.barrel[1].on


@pytest.mark.parametrize(("threshold", "on"), [(880, False), (850, True)])
def test_barrel_threshold(threshold: int, on: bool) -> None:
    state, _ = scored("classic", 1, 100, [20, 100, 0], [[], ["S"], []], match={"scores": [0, 760, 0]}, barrel=barrel(threshold=threshold))
    assert state.barrel[1].on == on and state.observation()["scores"][1] == (850 if on else 860)


@pytest.mark.parametrize(("jump", "winner"), [(True, 1), (False, None)])
def test_barrel_jump_over_wins(jump: bool, winner: int | None) -> None:
    state, _ = scored("classic", 1, 150, [0, 100, 20], [[], ["H"], []], match={"scores": [0, 860, 0]}, barrel=barrel(jump_over_wins=jump))
    assert state.winner == winner
    assert state.observation()["scores"][1] == (1010 if jump else 880)


def _defend_on_barrel(attempts_before: int, **changes: dict[str, Any]) -> tuple[MatchState, list[dict[str, Any]]]:
    match = barrel_match([880, 0, 0], [True, False, False], attempts=[attempts_before, 0, 0])
    return scored("classic", 1, 100, [20, 100, 0], [[], ["S"], []], match=match, **changes)


@pytest.mark.parametrize(("attempts", "score"), [(3, 760), (4, 880)])
def test_barrel_attempts(attempts: int, score: int) -> None:
    state, _ = _defend_on_barrel(2, barrel=barrel(attempts=attempts))
    assert state.observation()["scores"][0] == score
    assert state.barrel[0].on == (attempts == 4)


def test_barrel_attempts_penalty() -> None:
    state, _ = _defend_on_barrel(2, barrel=barrel(attempts_penalty=80))
    assert state.observation()["scores"][0] == 800


@pytest.mark.parametrize(("counts", "attempts"), [("every_deal", 1), ("as_declarer", 0)])
def test_barrel_attempt_counts(counts: str, attempts: int) -> None:
    state, _ = _defend_on_barrel(0, barrel=barrel(attempt_counts=counts))
    assert state.barrel[0].attempts == attempts


@pytest.mark.parametrize(("counts", "attempts"), [(True, 1), (False, 0)])
def test_barrel_give_up_deal_counts(counts: bool, attempts: int) -> None:
    state, _ = _give_up_deal("skill-games", barrel_match([880, 0, 0], [True, False, False]), barrel=barrel(give_up_deal_counts=counts))
    assert state.barrel[0].attempts == attempts


@pytest.mark.parametrize(("minimum", "winner"), [(120, 0), (150, None)])
def test_barrel_min_contract(minimum: int, winner: int | None) -> None:
    state, _ = scored("classic", 0, 120, [100, 10, 10], [["S"], [], []], match=barrel_match([880, 0, 0], [True, False, False]),
                      barrel=barrel(min_contract=minimum))  # fmt: skip
    assert state.winner == winner
    if winner is None:  # ruling 7: stays on the barrel, capped, an attempt used
        assert state.observation()["scores"][0] == 880 and state.barrel[0].on and state.barrel[0].attempts == 1


def test_barrel_failed_contract_ends_the_visit() -> None:
    state, events = scored("classic", 0, 120, [100, 10, 10], match=barrel_match([880, 0, 0], [True, False, False]))
    assert state.observation()["scores"][0] == 760 and not state.barrel[0].on
    assert {"type": "barrel_left", "player": 0, "reason": "failed_contract", "penalty": 0} in events


@pytest.mark.parametrize(("points", "attempts"), [("suspended", 1), ("counted", 1)])
def test_barrel_defender_points_are_capped_at_the_threshold(points: str, attempts: int) -> None:
    state, _ = _defend_on_barrel(0, barrel=barrel(defender_points=points))
    assert state.observation()["scores"][0] == 880 and state.barrel[0].attempts == attempts


def test_barrel_defender_points_counted_can_win_where_defenders_can() -> None:
    match = barrel_match([880, 0, 0], [True, False, False])
    state, _ = scored("classic", 1, 100, [100, 20, 0], [["H"], [], []], match=match, barrel=barrel(defender_points="counted"))
    assert state.winner == 0
    suspended, _ = scored("classic", 1, 100, [100, 20, 0], [["H"], [], []], match=match)
    assert suspended.winner is None and suspended.observation()["scores"][0] == 880


@pytest.mark.parametrize(("limit", "knocked"), [(1, True), (2, False), (None, False)])
def test_barrel_max_occupants_knock_off(limit: int | None, knocked: bool) -> None:
    match = barrel_match([880, 800, 0], [True, False, False])
    state, events = scored("classic", 1, 100, [20, 100, 0], [[], ["S"], []], match=match, barrel=barrel(max_occupants=limit))
    assert state.barrel[1].on
    assert state.barrel[0].on != knocked
    if knocked:
        assert {"type": "barrel_left", "player": 0, "reason": "knocked_off", "penalty": 120} in events
        assert state.observation()["scores"][0] == 760 and state.barrel[0].failed_visits == 1


def test_barrel_two_arrivals_fall_back() -> None:
    """skill-games (003 The barrel): two players arriving in the same deal both fall back by 120."""
    state, events = scored("skill-games", 2, 100, [40, 40, 40], [["H"], ["D"], ["S"]], match={"scores": [800, 800, 0]})
    assert state.observation()["scores"][:2] == [760, 760]
    assert [e["reason"] for e in events if e["type"] == "barrel_left"] == ["fell_back", "fell_back"]
    kept, _ = scored("gambler-club", 2, 100, [40, 40, 40], [["H"], ["D"], ["S"]], match={"scores": [800, 800, 0]})
    assert kept.barrel[0].on and kept.barrel[1].on


@pytest.mark.parametrize("penalty", [120, 50])
def test_barrel_knock_off_penalty(penalty: int) -> None:
    match = barrel_match([880, 800, 0], [True, False, False])
    state, _ = scored("classic", 1, 100, [20, 100, 0], [[], ["S"], []], match=match, barrel=barrel(max_occupants=1, knock_off_penalty=penalty))
    assert state.observation()["scores"][0] == 880 - penalty


@pytest.mark.parametrize(("reset", "score"), [(3, 0), (None, 760)])
def test_barrel_failed_visit_reset(reset: int | None, score: int) -> None:
    match = barrel_match([880, 0, 0], [True, False, False], failed=[2, 0, 0])
    state, events = scored("classic", 0, 120, [100, 10, 10], match=match, barrel=barrel(failed_visit_reset=reset))
    assert state.observation()["scores"][0] == score
    assert ("score_reset" in types(events)) == (reset is not None)


# ------------------------------------------------------------ 800 rule, dump, end


def lock(**knobs: Any) -> dict[str, Any]:
    base = {"enabled": True, "from": 800, "mode": "stop_counting", "defender_max": 990}
    base.update(knobs)
    return base


@pytest.mark.parametrize(("knobs", "start", "score"), [
    ({"enabled": False}, 780, 820), ({}, 780, 820), ({"mode": "cap"}, 780, 800), ({}, 800, 800),
    ({"from": 900}, 850, 890), ({"defender_max": None}, 790, 1070), ({}, 790, 990),
])  # fmt: skip
def test_defender_lock(knobs: dict[str, Any], start: int, score: int) -> None:
    points = [40, 80, 0] if start != 790 else [100, 20, 0]
    marriages = [[], ["S"], []] if start != 790 else [["H", "D"], [], []]
    state, _ = scored("polish", 1, 100, points, marriages, match={"scores": [start, 0, 0]}, defender_lock=lock(**knobs))
    assert state.observation()["scores"][0] == score


@pytest.mark.parametrize(("knobs", "start", "score"), [
    ({"enabled": True, "score": 555, "negative": True}, 530, 0), ({"enabled": False}, 530, 555),
    ({"enabled": True, "score": 555, "negative": True}, -580, 0), ({"enabled": True, "score": 555, "negative": False}, -580, -555),
])  # fmt: skip
def test_dump(knobs: dict[str, Any], start: int, score: int) -> None:
    state, events = scored("skill-games", 1, 100, [25, 80, 15], [[], ["S"], []], match={"scores": [start, 0, 0]}, dump=knobs)
    assert state.observation()["scores"][0] == score
    assert ("dump" in types(events)) == (score == 0)


@pytest.mark.parametrize(("can_win", "winner"), [(True, 0), (False, None)])
def test_defenders_can_win(can_win: bool, winner: int | None) -> None:
    state, _ = scored("skill-games+no-barrel", 1, 100, [60, 60, 0], [[], ["S"], []], match={"scores": [950, 0, 0]},
                      match_end={"target": 1000, "defenders_can_win": can_win, "tie_break": "declarer_then_highest"})  # fmt: skip
    assert state.winner == winner


def test_target() -> None:
    state, _ = scored("skill-games+no-barrel", 1, 100, [20, 100, 0], [[], ["S"], []], match={"scores": [0, 950, 0]},
                      match_end={"target": 1100, "defenders_can_win": True, "tie_break": "declarer_then_highest"})  # fmt: skip
    assert state.winner is None and state.phase == "deal_over"


def test_tie_break_declarer_then_highest_then_draw() -> None:
    declarer, _ = scored("skill-games+no-barrel", 1, 100, [60, 60, 0], [[], ["S"], []], match={"scores": [990, 950, 0]})
    assert declarer.winner == 1
    highest, _ = scored("skill-games+no-barrel", 1, 150, [60, 0, 60], match={"scores": [990, 0, 950]})
    assert highest.winner == 0
    drawn, events = scored("skill-games+no-barrel", 1, 150, [60, 0, 60], match={"scores": [950, 0, 950]})
    assert drawn.winner is None and drawn.phase == "match_over"
    assert events[-1] == {"type": "match_drawn", "players": [0, 2]}
