"""The knobs of the third public engine's axes: giving up at either moment, a trump played
instead of following suit, and a raised contract capped only by the maximum bid.

One flip test per knob value: the same position plays differently under the two values.
"""

from __future__ import annotations

import pytest
from tests.support.engine import refusal
from tests.support.engine import engine, play_all

from reference_impl import MatchState
from reference_impl.cards import cards, mask_of

# Seat 0 holds the hearts marriage (ceiling 120 + 100 = 220); no other marriage in any hand.
HEARTS = ([cards("AH 10H KH QH AS 10S AC"), cards("KS JS 9S 10C KC JC 9C"), cards("QC AD 10D KD JD QS 9D")], cards("QD JH 9H"))
# No hand holds a marriage: nothing above 120 may be bid.
PLAIN = ([cards("AS 10S AC 10C AD 10D 10H"), cards("KS KC JC KD JD KH JH"), cards("QS QC 9C QD 9D QH 9H")], cards("AH 9S JS"))


def dealt(deal: tuple[list[list[object]], list[object]], **changes: dict[str, object]) -> MatchState:
    """Classic with knobs changed, dealer 2 (seat 0 opens)."""
    state = engine("classic", **changes)
    state.start_deal(2, *deal)  # type: ignore[arg-type]
    return state


# ------------------------------------------------------------------- giving_up.moment


@pytest.mark.parametrize(("moment", "in_exchange", "in_contract"), [
    ("before_exchange", True, False), ("with_contract", False, True), ("either", True, True),
])  # fmt: skip
def test_give_up_moment(moment: str, in_exchange: bool, in_contract: bool) -> None:
    state = dealt(PLAIN, giving_up={"moment": moment})
    play_all(state, ["bid 100", "pass", "pass"])
    assert state.phase == "exchange" and ("give_up" in state.legal_actions()) == in_exchange
    play_all(state, ["give 9S JS"])
    assert state.phase == "contract" and ("give_up" in state.legal_actions()) == in_contract
    if not in_contract:
        assert refusal(state, "give_up") == "give_up_not_allowed"


def test_give_up_either_moment_costs_the_same_at_both() -> None:
    """Classic: the declarer loses nothing and each defender gains 60, whenever it happens."""
    early = dealt(PLAIN, giving_up={"moment": "either"})
    play_all(early, ["bid 100", "pass", "pass", "give_up"])
    late = dealt(PLAIN, giving_up={"moment": "either"})
    play_all(late, ["bid 100", "pass", "pass", "give 9S JS", "give_up"])
    assert early.scores == late.scores == [0, 60, 60]


# ------------------------------------------------------------------ play.may_trump_instead

# Seat 0 declares hearts on trick 2 (KH, seat 0 wins it) and leads 9S on trick 3; seat 1 then
# holds JS and the trumps AH 10H JH.
TRUMP_HELD = ([cards("AS 9S KH QH AD 10D 9D"), cards("AH 10H JH 9H QS JS KD"), cards("AC 10C KC QC JC 10S KS")], cards("QD JD 9C"))
TO_TRICK_3 = ["bid 100", "pass", "pass", "give JD 9C", "contract 100", "play AS", "play QS", "play KS", "play KH marriage",
              "play 9H", "play 9C", "play 9S"]  # fmt: skip


@pytest.mark.parametrize(("instead", "legal"), [
    (False, ["play JS"]), (True, ["play 10H", "play AH", "play JH", "play JS"]),
])  # fmt: skip
def test_may_trump_instead(instead: bool, legal: list[str]) -> None:
    state = dealt(TRUMP_HELD, play={"may_trump_instead": instead})
    play_all(state, TO_TRICK_3)
    assert sorted(state.legal_actions()) == legal
    if not instead:
        assert refusal(state, "play AH") == "must_follow_suit"
    else:
        play_all(state, ["play AH"])
        assert state.trick == [(0, cards("9S")[0]), (1, cards("AH")[0])]


@pytest.mark.parametrize(("overtrump", "legal"), [
    (False, ["play 10H", "play 10S", "play 9H"]), (True, ["play 10H", "play 10S"]),
])  # fmt: skip
def test_a_trump_instead_keeps_the_duty_to_overtrump(overtrump: bool, legal: list[str]) -> None:
    """Seat 1 trumps the led 9S with JH instead of following; seat 2, given spades and two
    trumps (a hand no deal of this position reaches: the duty is read off the hand alone), may
    follow with 10S or trump instead, with a trump above JH only where must_overtrump."""
    state = dealt(TRUMP_HELD, play={"may_trump_instead": True, "must_overtrump": overtrump})
    play_all(state, TO_TRICK_3 + ["play JH"])
    state.hands[2] = mask_of(cards("10S 10H 9H AC 10C KC"))
    assert sorted(state.legal_actions()) == legal
    if overtrump:
        assert refusal(state, "play 9H") == "must_overtrump"


def test_a_trump_lead_is_followed_as_before() -> None:
    """When trumps are led, holding a trump is holding the suit led: nothing changes."""
    for instead in (False, True):
        state = dealt(TRUMP_HELD, play={"may_trump_instead": instead})
        play_all(state, ["bid 100", "pass", "pass", "give JD 9C", "contract 100", "play AS", "play QS", "play KS",
                         "play KH marriage"])
        assert sorted(state.legal_actions()) == ["play 10H", "play 9H", "play AH", "play JH"]


# ------------------------------------------------------------------ talon.contract_ceiling


@pytest.mark.parametrize(("ceiling", "top", "refused"), [("auction", 220, "contract_above_ceiling"), ("none", 400, None)])
def test_contract_ceiling_with_a_marriage(ceiling: str, top: int, refused: str | None) -> None:
    state = dealt(HEARTS, talon={"contract_ceiling": ceiling}, auction={"ceiling": "marriages_held"})
    play_all(state, ["bid 100", "pass", "pass", "give QD 9H"])
    assert state.legal_actions()[-2:] == [f"contract {top}", "give_up"]
    if refused:
        assert refusal(state, "contract 225") == refused
    else:
        play_all(state, ["contract 225"])
        assert state.contract == 225


@pytest.mark.parametrize(("ceiling", "top"), [("auction", 120), ("none", 400)])
def test_contract_ceiling_without_a_marriage(ceiling: str, top: int) -> None:
    """No marriage held: the auction's rule stops a raise at 120; under none only max_bid does."""
    state = dealt(PLAIN, talon={"contract_ceiling": ceiling})
    play_all(state, ["bid 100", "pass", "pass", "give 9S JS"])
    assert state.legal_actions()[-2:] == [f"contract {top}", "give_up"]
    assert refusal(state, "contract 405") == "contract_above_ceiling"
