"""Cards, actions, rules documents, deals and the observable state of the engine."""

from __future__ import annotations

import pytest
from tests.support.engine import document, engine, fill_deal

from reference_impl import Card, DealError, IllegalActionError, MalformedActionError, MatchState, Rules, RulesError, deal_random
from reference_impl.actions import Bid, Contract, Give, GiveUp, NoRedeal, Pass, Play, Redeal, parse_action
from reference_impl.cards import DECK, card_points
from reference_impl.scoring import round_score

OBSERVATION_FIELDS = {
    "phase", "to_act", "dealer", "next_dealer", "auction", "high_bid", "declarer", "contract", "talon_shown", "talon",
    "trump", "trick", "trick_number", "tricks_won", "card_points", "marriages", "deal_result", "scores", "bolts",
    "give_ups", "barrel", "winner", "hands",
}  # fmt: skip


def test_cards_parse_and_format() -> None:
    assert str(Card.parse("10H")) == "10H" and Card.parse("10H").points == 10
    assert len(DECK) == 24 and card_points(DECK) == 120
    assert Card.parse("AS") is Card.parse("AS")
    for bad in ("TH", "1H", "10X", "as", ""):
        with pytest.raises(MalformedActionError) as caught:
            Card.parse(bad)
        assert caught.value.reason == "unknown_card"


@pytest.mark.parametrize("action", [
    Bid(110), Pass(), Give(Card.parse("9S"), Card.parse("JC")), Contract(120), GiveUp(),
    Play(Card.parse("QD")), Play(Card.parse("QD"), "marriage"), Play(Card.parse("AS"), "aces"), Redeal(), NoRedeal(),
])  # fmt: skip
def test_actions_round_trip(action: object) -> None:
    assert parse_action(str(action)) == action


def test_deal_random_is_seeded() -> None:
    hands, talon = deal_random(5)
    assert (hands, talon) == deal_random(5) and (hands, talon) != deal_random(6)
    dealt = [c for h in hands for c in h] + talon
    assert len(dealt) == 24 and set(dealt) == set(DECK)


def test_rules_errors_name_the_knob() -> None:
    doc = document("classic")
    doc["rules"]["play"]["must_beat"] = "yes"
    with pytest.raises(RulesError, match=r"rules.play.must_beat: expected true or false, got 'yes'"):
        Rules.from_document(doc)
    doc = document("classic")
    del doc["rules"]["barrel"]
    with pytest.raises(RulesError, match="rules.barrel: expected a mapping"):
        Rules.from_document(doc)
    with pytest.raises(RulesError):
        Rules.from_document({"profile": "x"})


def test_bad_deals_are_refused_with_one_clear_error() -> None:
    state = engine("classic")
    hands, talon = deal_random(1)
    with pytest.raises(DealError, match="dealer"):
        state.start_deal(3, hands, talon)
    with pytest.raises(DealError, match="hands\\[1\\]: expected 7 cards"):
        state.start_deal(0, [hands[0], hands[1][:6], hands[2]], talon)
    with pytest.raises(DealError, match="unknown card"):
        state.start_deal(0, [["ZZ"] * 7, hands[1], hands[2]], talon)
    assert state.phase == "deal_over"


def test_observation_has_exactly_the_fields_of_the_design() -> None:
    state = engine("gambler-club")
    hands, talon = fill_deal(["", "", ""])
    state.start_deal(2, hands, talon)
    obs = state.observation()
    assert set(obs) == OBSERVATION_FIELDS
    assert obs["phase"] == "auction" and obs["to_act"] == 0 and obs["talon"] is None
    assert obs["barrel"] == [{"on": False, "attempts": 0, "failed_visits": 0}] * 3


def test_refusal_message_names_action_and_position() -> None:
    state = engine("polish")
    hands, talon = fill_deal(["", "", ""])
    state.start_deal(0, hands, talon)
    before = state.to_json()
    with pytest.raises(IllegalActionError) as caught:
        state.apply("bid 110")
    assert caught.value.reason == "opening_bid_fixed" and caught.value.phase is not None
    assert "'bid 110'" in str(caught.value) and "auction" in str(caught.value)
    assert state.to_json() == before


def test_json_round_trip_mid_deal() -> None:
    state = engine("classic+four-aces", {"scores": [57.5, 880, 0], "barrel": [{"on": False}, {"on": True, "attempts": 1}, {}]})
    hands, talon = deal_random(11)
    state.start_deal(1, hands, talon)
    state.apply(state.legal_actions()[0])
    copy = MatchState.from_json(state.to_json())
    assert copy == state and copy.observation() == state.observation()


def test_rounding_arithmetic() -> None:
    assert [round_score(v, "nearest_5") for v in (21, 22, 23, 24, 25)] == [20, 20, 25, 25, 25]
    assert [round_score(v, "nearest_10") for v in (14, 15, 19, 20)] == [10, 20, 20, 20]
    assert round_score(23, "exact") == 23
