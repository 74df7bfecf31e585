"""Every worked example of the seeds, with the seed's own numbers.

Each worked example of a seed source (spec/sources.yaml) becomes a transcript; this lists them.
Scoring examples drive the end-of-deal scoring with the seed's card points; play and
auction examples play real deals.
"""

from __future__ import annotations

from fractions import Fraction

from tests.support.engine import barrel_match, engine, fill_deal, play_all, scored, to_play

from reference_impl import deal_end
from reference_impl.cards import cards
from reference_impl.scoring import round_score

def first_give(state: object) -> str:
    """The first legal way of giving two cards."""
    from reference_impl import MatchState

    assert isinstance(state, MatchState)
    return next(a for a in state.legal_actions() if a.startswith("give "))


# seats of the examples: dealer 0, so the opener (left of the dealer) is seat 1


def test_seed_000_worked_score_contract_160_made_with_diamonds() -> None:
    """seed 000 §08 Worked score: 84 + 80 = 164 >= 160: +160; defenders 23 -> 25, 13 -> 15."""
    state, events = scored("gambler-club", 1, 160, [13, 84, 23], [[], ["D"], []])
    assert state.observation()["scores"] == [15, 160, 25]
    assert state.deal_result == {"kind": "played", "made": True, "points": [13, 164, 23], "deltas": [15, 160, 25]}
    assert events[-1]["type"] == "deal_scored"


def test_seed_000_worked_score_without_the_marriage_fails() -> None:
    """seed 000 §08 Worked score: without declaring the marriage 84 < 160: -160."""
    state, _ = scored("gambler-club", 1, 160, [13, 84, 23])
    assert state.observation()["scores"] == [15, -160, 25]
    assert state.deal_result is not None and state.deal_result["made"] is False


def test_seed_000_made_120_from_880_wins() -> None:
    """seed 000 §08: from 880 on the barrel, a fulfilled 120 contract reaches 1000 and wins."""
    match = barrel_match([880, 300, 200], [True, False, False])
    state, events = scored("gambler-club", 0, 120, [100, 10, 10], [["S"], [], []], match=match)
    assert state.observation()["scores"][0] == 1000
    assert state.winner == 0 and state.phase == "match_over"
    assert {"type": "match_won", "player": 0} in events
    assert {"type": "barrel_left", "player": 0, "reason": "won", "penalty": 0} in events


def test_seed_000_defender_on_880_gets_nothing_and_spends_attempts() -> None:
    """seed 000 §08: a defender at 880 scores nothing and uses an attempt; three take 880 to 760."""
    state = engine("gambler-club", barrel_match([880, 300, 200], [True, False, False]))
    for deal in range(3):
        state.phase = "deal_over"
        state._clear_deal(0)
        state.dealer, state.declarer, state.high_bid, state.contract = 0, 1, 100, 100
        state.card_points, state.tricks_won = [40, 60, 20], [2, 4, 2]
        state.phase, state.trick_number = "play", 8
        events: list[dict[str, object]] = []
        deal_end.score_played(state, events)
        assert state.deal_result is not None and state.deal_result["deltas"][0] == (0 if deal < 2 else -120)
    assert state.observation()["scores"][0] == 760
    assert state.observation()["barrel"][0] == {"on": False, "attempts": 0, "failed_visits": 1}
    assert {"type": "barrel_left", "player": 0, "reason": "attempts_exhausted", "penalty": 120} in events


def test_seed_001_scoring_example_anna_150() -> None:
    """seed 001 Scoring a hand: Anna 74 + 80 = 154: +150; Ben 32 -> 30; Carla 14 + 40 = 54 -> 55."""
    anna, ben, carla = 1, 2, 0
    points = [0, 0, 0]
    points[anna], points[ben], points[carla] = 74, 32, 14
    marriages: list[list[str]] = [[], [], []]
    marriages[anna], marriages[carla] = ["D"], ["S"]
    state, _ = scored("classic", anna, 150, points, marriages)
    scores = state.observation()["scores"]
    assert (scores[anna], scores[ben], scores[carla]) == (150, 30, 55)


def test_seed_001_scoring_example_had_anna_taken_62() -> None:
    """seed 001 Scoring a hand: had Anna taken only 62, 142 < 150: -150."""
    state, _ = scored("classic", 1, 150, [14, 62, 44], [["S"], ["D"], []])
    assert state.observation()["scores"][1] == -150


def test_seed_001_marriage_example_anna_leads_queen_of_diamonds() -> None:
    """seed 001 Marriages and trump: Anna wins with AS, declares diamonds with QD; Ben discards 9C."""
    anna, ben = 1, 2
    hands = [cards("10C KC QC JC AD 10D JD"), cards("AS KD QD AH 10H KH QH"), cards("9C 10S KS QS JS 9S AC")]
    state = engine("classic")
    to_play(state, hands, cards("9D 9H JH"), give="give 9H 9D")
    events = play_all(state, ["play AS", "play 9S", "play JC"])
    assert events[-1]["type"] == "trick_won" and events[-1]["player"] == anna
    events = state.apply("play QD marriage")
    assert events == [
        {"type": "marriage_declared", "player": anna, "suit": "D", "points": 80},
        {"type": "trump_changed", "suit": "D"},
    ]
    assert state.to_act == ben and state.observation()["trump"] == "D"
    assert "play 9C" in state.legal_actions()  # void in diamonds, and diamonds are the trumps
    state.apply("play 9C")
    assert state.observation()["trick"][1] == {"player": ben, "card": "9C"}


def test_seed_003_defender_rounding_23_and_22() -> None:
    """seed 003 Scoring: 23 counts 25, 22 counts 20."""
    assert round_score(23, "nearest_5") == 25 and round_score(22, "nearest_5") == 20
    state, _ = scored("skill-games", 1, 100, [23, 75, 22], [[], ["S"], []])
    assert state.observation()["scores"] == [25, 100, 20]


def test_seed_003_concede_half_of_115_rounds_up_to_60() -> None:
    """seed 003 Conceding (ruling: half of 115 is 57.5, rounded up to 5 gives 60)."""
    state = engine("skill-games")
    hands, talon = fill_deal(["KS QS", "KH QH", ""])
    state.start_deal(0, hands, talon)
    play_all(state, ["bid 100", "bid 105", "pass", "bid 115", "pass"])
    play_all(state, [first_give(state), "give_up"])
    assert state.observation()["scores"] == [60, -115, 60]


def test_seed_000_rospis_pays_exact_halves() -> None:
    """seed 000 §03: rospis subtracts the bid and credits half to each defender, halves kept."""
    state = engine("gambler-club")
    hands, talon = fill_deal(["AS 10S AC 10C", "KH QH AH 10H", "KD QD AD 10D"])
    state.start_deal(0, hands, talon)
    play_all(state, ["bid 100", "bid 115", "pass", "pass", "give_up"])
    assert state.observation()["scores"] == [57.5, 57.5, -115]
    assert state.scores[0] == Fraction(115, 2)


def test_seed_001_give_up_first_two_free_third_costs_120() -> None:
    """seed 001 The widow: each opponent +60; the first two give-ups free, the third -120."""
    state = engine("classic")
    expected_declarer = [0, 0, -120]
    for deal in range(3):
        hands, talon = fill_deal(["AS 10S AC 10C", "KH QH AH 10H", "KD QD AD 10D"])
        before = list(state.scores)
        state.start_deal(0, hands, talon)
        play_all(state, ["bid 100", "pass", "pass"])
        play_all(state, [first_give(state), "give_up"])
        assert state.scores[1] - before[1] == expected_declarer[deal]
        assert state.scores[0] - before[0] == 60 and state.scores[2] - before[2] == 60


def test_seed_004_auction_example_ann_plays_for_120() -> None:
    """seed 004 Bidding: Cara deals; Ann 100 forced, Ben 110, Cara pass, Ann 120, Ben pass."""
    ann, ben, cara = 0, 1, 2
    state = engine("polish")
    hands, talon = fill_deal(["AS 10S KS", "AC 10C KC", ""])
    state.start_deal(cara, hands, talon)
    assert state.to_act == ann and state.legal_actions() == ["bid 100"]
    events = play_all(state, ["bid 100", "bid 110", "pass", "bid 120", "pass"])
    assert events[0] == {"type": "auction_won", "player": ann, "bid": 120}
    assert state.observation()["auction"] == [
        {"player": ann, "action": "bid 100"},
        {"player": ben, "action": "bid 110"},
        {"player": cara, "action": "pass"},
        {"player": ann, "action": "bid 120"},
        {"player": ben, "action": "pass"},
    ]


def _highest_bid(hand: str) -> int:
    state = engine("polish")
    hands, talon = fill_deal(["", "", hand])
    state.start_deal(0, hands, talon)
    state.apply("bid 100")  # the opener, seat 1
    return max(int(a.split()[1]) for a in state.legal_actions() if a.startswith("bid"))


def test_seed_004_ceilings_of_the_marriages_held() -> None:
    """seed 004 Bidding: spades 160, clubs 180, diamonds 200, hearts 220, hearts and diamonds 300."""
    assert _highest_bid("KS QS") == 160
    assert _highest_bid("KC QC") == 180
    assert _highest_bid("KD QD") == 200
    assert _highest_bid("KH QH") == 220
    assert _highest_bid("KH QH KD QD") == 300
    assert _highest_bid("AS AC AD AH") == 120  # no marriage: nothing above 120


def test_seed_004_house_800_rule_780_plus_40_is_820() -> None:
    """seed 004 End of the game (house rules): below 800 defending counts in full."""
    state, _ = scored("polish", 1, 100, [40, 80, 0], match={"scores": [780, 0, 0]})
    assert state.observation()["scores"][0] == 820
    state, _ = scored("polish", 1, 100, [40, 80, 0], match={"scores": [820, 0, 0]})
    assert state.observation()["scores"][0] == 820  # from 800 on, defending adds nothing


def test_seed_004_tournament_800_rule_780_plus_40_is_800() -> None:
    """seed 004 End of the game (tournament rules): defending never lifts a score past 800."""
    state, _ = scored("polish-tournament", 1, 100, [40, 80, 0], match={"scores": [780, 0, 0]})
    assert state.observation()["scores"][0] == 800


def test_seed_004_a_defender_stops_at_990() -> None:
    """seed 004 End of the game (house rules): a defender stops at 990 and cannot finish."""
    state, _ = scored("polish", 1, 100, [100, 20, 0], [["H", "D"], [], []], match={"scores": [790, 0, 0]})
    assert state.observation()["scores"][0] == 990
    assert state.winner is None and state.phase == "deal_over"
