"""Evidence per observation (conformance/oracle/evidence.py): each legal set, reply and state
field one observation; what the reference never reached, what follows a difference and what
contradicts itself set apart. On observation records built here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.harness.findings import Finding, Observed
from conformance.oracle import evidence, observe
from tests.support.observations import step_record


def test_each_legal_set_reply_and_state_field_is_one_observation() -> None:
    ref = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110", "pass"), state={"phase": "auction", "high_bid": 110})))
    impl = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110", "bid 120", "pass"), state={"phase": "auction", "high_bid": 110})))
    weighed = evidence.weigh(ref, impl)
    # the deal: reply + phase = 2; the bid: reply, legal, phase, high_bid = 4
    assert weighed.checked == 6
    assert weighed.missed == {(1, 1, "legal")}
    assert weighed.unchecked == 0


def test_a_skipped_step_is_unchecked_not_a_difference() -> None:
    ref = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110",)), step_record(2, "pass", ("pass",))))
    impl = observe.CaseRecord("c", (step_record(0, None, None),), "skipped: no auction here")
    cut, after = evidence.shown(impl, evidence.Partial())
    weighed = evidence.weigh(ref, cut, evidence.Partial(), evidence.transcript_steps(3, cut))
    assert weighed.matches and weighed.unchecked == 2 and weighed.checked == 2


def test_an_unsupported_action_ends_the_evidence_and_leaves_the_legal_sets() -> None:
    partial = evidence.Partial.read({"actions": ["give_up"]})
    impl = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110",)), step_record(2, "give_up", ("give_up",))))
    cut, after = evidence.shown(impl, partial)
    assert len(cut.steps) == 2 and after == 1
    ref = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110", "give_up")), step_record(2, "give_up", ("give_up",))))
    assert evidence.weigh(ref, cut, partial, after).matches  # give_up is not in the implementation's legal set: no difference


def test_observations_the_reference_never_reached_all_differ() -> None:
    ref = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("pass",), accepted=False)), "left_transcript")
    impl = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110", "pass")), step_record(2, "pass", ("pass",))))
    weighed = evidence.weigh(ref, impl)
    assert (1, 1, "reply") in weighed.missed and (1, 1, "legal") in weighed.missed
    assert {(1, 2, "reply"), (1, 2, "legal"), (1, 2, "state.phase")} <= weighed.missed


def _apart_then_refused() -> tuple[observe.CaseRecord, observe.CaseRecord]:
    """An implementation that plays on, and a reference whose state already differs at the
    first bid (a high bid of 120, not 110) and that then refuses the second."""
    impl = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110", "pass"), state={"phase": "auction", "high_bid": 110}),
                                    step_record(2, "bid 120", ("bid 120", "pass")), step_record(3, "pass", ("pass",)), step_record(4, "pass", ("pass",))))
    ref = observe.CaseRecord("c", (step_record(0, None, None), step_record(1, "bid 110", ("bid 110", "pass"), state={"phase": "auction", "high_bid": 120}),
                                   step_record(2, "bid 120", ("bid 130", "pass"), accepted=False)), "left_transcript")
    return ref, impl


def test_a_refusal_downstream_of_a_difference_marks_where_the_reference_left() -> None:
    ref, impl = _apart_then_refused()
    assert evidence.weigh(ref, impl).left == (1, 2)
    refused_first = replace(ref, steps=(ref.steps[0], step_record(1, "bid 110", ("pass",), accepted=False)))
    assert evidence.weigh(refused_first, impl).left is None  # the refusal is the first difference: a rule's own


def test_two_replays_compare_only_as_far_as_both_reach() -> None:
    """Before: one legal set differs at step 3 and the rest matches. After: the state differs
    at step 1 and the reference refuses step 2. As far as both compare (steps up to 2), before
    misses nothing and after misses the state, the refusal and its legal set; the steps after
    count for neither, so the change is charged three observations, not the whole case."""
    ref_after, impl = _apart_then_refused()
    ref_before = replace(impl, steps=impl.steps[:3] + (step_record(3, "pass", ("pass", "bid 130")),) + impl.steps[4:])
    before, after = evidence.weigh(ref_before, impl), evidence.weigh(ref_after, impl)
    # after: the high bid at step 1, the legal set and reply at step 2, then the reply, phase
    # and legal set of each of the two steps it never reached: 1 + 2 + 2 * 3 = 9
    assert before.missed == {(1, 3, "legal")} and len(after.missed) == 9
    missed_before, missed_after = evidence.compared(before, after)
    assert missed_before == frozenset()
    assert missed_after == {(1, 1, "state.high_bid"), (1, 2, "legal"), (1, 2, "reply")}



def test_a_reply_at_odds_with_its_own_legal_set_is_set_aside_with_the_state_after_it() -> None:
    """An engine lists contracts up to 250 and still takes a contract of 260: no rules play
    that (the reference's legal set and replies come from one rule), so the reply and the state
    after it are set aside, shown in the residual, and counted by no score."""
    legal = ("contract 240", "contract 250")
    ref = observe.CaseRecord("c", (step_record(0, None, None), observe.StepRecord(
        1, 1, "contract 260", legal, observe.Reply(False, (), ("illegal", "contract_above_ceiling")), {"phase": "contract"})))
    impl = observe.CaseRecord("c", (step_record(0, None, None), observe.StepRecord(
        1, 1, "contract 260", legal, observe.Reply(True), {"phase": "play"})), "left_transcript")
    contradicted = frozenset(key for keys, _what in evidence.self_contradictions(impl) for key in keys)
    assert contradicted == {(1, 1, "reply"), (1, 1, "state.phase")}
    weighed = evidence.weigh(ref, impl, contradicted=contradicted)
    assert weighed.matches and weighed.differs
    assert weighed.set_aside == contradicted
    assert evidence.missed([weighed]) == 0


def test_an_observation_that_follows_a_difference_left_is_downstream() -> None:
    """A score set right while the raw points of the same step still differ follows from them;
    a legal set differing before it does not set the games apart."""
    differing = evidence.Evidence("c", 10, 0, (), frozenset({(1, 30, "state.deal_result"), (1, 2, "legal")}))
    assert evidence.downstream((1, 30, "state.scores"), differing)
    assert evidence.downstream((2, 3, "legal"), differing)
    assert not evidence.downstream((1, 29, "state.scores"), differing)
    assert not evidence.downstream((1, 30, "reply"), differing)  # the reply comes before the state after it
    before = evidence.Evidence("c", 10, 0, (), frozenset({(1, 30, "state.scores"), (1, 20, "reply")}))
    after = evidence.Evidence("c", 10, 0, (), frozenset({(1, 30, "state.deal_result")}))
    assert evidence.clean_fixes(before, after) == [(1, 20, "reply")]


def test_a_score_set_right_beside_a_bolt_counted_at_the_same_step_is_evidence() -> None:
    """Seed 41 v7: the engine counts a defender's 2 points as a bolt and rounds a declarer's
    total to 5. With the rounding put right, the last card's reply still differs by that extra
    bolt, and so does the bolt count after it; the scores and the deal's result beside them
    read neither (a bolt's penalty is an event of its own), so setting them right is evidence.
    A reply that still differs in the deal's score, or in a bolt's penalty, holds them
    downstream as before, and so does a bolt that differed at an earlier step."""
    trick = {"type": "trick_won", "player": 1, "trick": 8, "cards": ["9H", "JH", "9C"], "points": 2}
    scored = {"type": "deal_scored", "points": [118, 2, 0], "deltas": [120, 0, 0], "scores": [120, 0, 0]}
    bolt = {"type": "bolt", "player": 1, "count": 1}

    def reply(expected: list[Any], actual: list[Any], step: int = 29) -> Finding:
        return observe.observed("c", 1, step, "play 9C", Observed.EVENT, "play", "unexpected bolt",
                                {"events": expected}, {"events": actual})

    bolts = observe.observed("c", 1, 29, "play 9C", Observed.STATE, "play", "state.bolts", [0, 0, 0], [0, 1, 0])
    scores, result = (1, 29, "state.scores"), (1, 29, "state.deal_result")

    def left(*differing: Finding) -> evidence.Evidence:
        return evidence.Evidence("c", 60, 0, differing, frozenset(evidence.key_of(d) for d in differing))

    only_bolt = left(reply([trick, scored], [trick, bolt, scored]), bolts)
    assert not evidence.downstream(scores, only_bolt) and not evidence.downstream(result, only_bolt)
    before = left(reply([trick, scored], [trick, bolt, {**scored, "scores": [115, 0, 0]}]), bolts)
    before = replace(before, missed=before.missed | {scores, result})
    assert set(evidence.clean_fixes(before, only_bolt)) == {scores, result}
    # told at the first step that differs: a rule set that still misses the scores there is
    # told apart from one that does not
    assert scores in replace(only_bolt, missed=only_bolt.missed | {scores}).clean
    # the deal's score still differs beside the bolt: the scores follow from it
    with_score = left(reply([trick, scored], [trick, bolt, {**scored, "points": [120, 2, 0]}]), bolts)
    assert evidence.downstream(scores, with_score)
    assert scores not in replace(with_score, missed=with_score.missed | {scores}).clean
    # a penalty the bolt brought is no count only
    penalty = {"type": "bolt_penalty", "player": 1, "penalty": 120}
    assert evidence.downstream(scores, left(reply([trick, scored], [trick, bolt, penalty, scored])))
    # a bolt that differed at an earlier step sets the games apart for what follows it
    earlier = left(replace(bolts, where={**bolts.where, "step": 20}))
    assert evidence.downstream(scores, earlier)


def test_two_rule_sets_that_differ_only_downstream_of_a_difference_play_the_same_for_fit() -> None:
    """A card given to the wrong player (a mistake no knob names) sets the hands apart at step 4;
    what the contract's legal sets show after it follows from the wrong hand. Two marriage lines
    that differ only there cannot be told apart: their clean observations are the same, and fit
    lists the other as equally consistent instead of claiming one."""
    hands = (1, 4, "state.hands")
    one = evidence.Evidence("c", 40, 0, (), frozenset({hands, (1, 5, "legal"), (1, 6, "legal")}))
    other = evidence.Evidence("c", 40, 0, (), frozenset({hands, (1, 5, "legal"), (1, 7, "reply")}))
    assert one.clean == other.clean == {hands}
    earlier = evidence.Evidence("c", 40, 0, (), frozenset({hands, (1, 2, "legal")}))
    assert earlier.clean == {hands, (1, 2, "legal")}  # a legal set before it tells them apart
    both = evidence.Evidence("c", 40, 0, (), frozenset({hands, (1, 4, "state.trump"), (1, 9, "reply")}))
    assert both.clean == {hands, (1, 4, "state.trump")}  # the fields of the first step that differs
    assert evidence.Evidence("c", 40, 0, (), frozenset({(1, 4, "reply"), (1, 4, "state.phase")})).clean == {(1, 4, "reply")}


def _given(hands: list[list[str]], contract_legal: tuple[str, ...]) -> observe.CaseRecord:
    """A deal whose declarer (seat 0) gives a card to each defender at step 4, then is asked
    for the contract at step 5 (legal set) and fixes it (state)."""
    return observe.CaseRecord("c", (
        step_record(0, None, None),
        step_record(4, "give JS 9S", ("give JS 9S",), state={"phase": "contract", "to_act": 0, "hands": hands}),
        step_record(5, "contract 130", contract_legal, state={"phase": "play", "to_act": 0, "hands": hands, "contract": 130})))


def test_another_player_s_hand_apart_leaves_the_player_to_act_s_next_observations_evidence() -> None:
    """Under a give to the wrong defender, the defenders hold each other's card from step 4;
    the declarer kept the same hand, so the contract's legal set at step 5 is still told
    apart by the rules (a ceiling on the hand the declarer kept): it is clean, and setting it
    right is a clean fix. A difference in the declarer's own hand holds it downstream as
    before. The hands stay apart at step 5 (a difference of their own) and are no fix."""
    sent = [["AS", "10S"], ["JS", "AC"], ["9S", "KC"]]
    swapped = [["AS", "10S"], ["9S", "AC"], ["JS", "KC"]]
    engine = _given(swapped, ("contract 130", "contract 135"))
    wrong_ceiling, right_ceiling = (_given(sent, legal) for legal in (("contract 130",), ("contract 130", "contract 135")))
    before, after = evidence.weigh(wrong_ceiling, engine), evidence.weigh(right_ceiling, engine)
    assert (1, 5, "legal") in before.clean and not evidence.downstream((1, 5, "legal"), before)
    assert evidence.clean_fixes(before, after) == [(1, 5, "legal")]
    assert before.own_hand_kept == {(1, 5)}
    assert (1, 5, "state.hands") in before.missed and evidence.downstream((1, 5, "state.hands"), before)

    own = [["AS", "JS"], ["10S", "AC"], ["9S", "KC"]]  # the declarer kept a card given away
    engine = _given(own, ("contract 130", "contract 135"))
    before, after = evidence.weigh(wrong_ceiling, engine), evidence.weigh(right_ceiling, engine)
    assert not before.own_hand_kept and (1, 5, "legal") not in before.clean
    assert evidence.clean_fixes(before, after) == []


def test_what_follows_a_self_contradiction_is_set_aside_too() -> None:
    """After a contract the engine's own legal set left out, the case plays on from a state
    its rules cannot reach: every later observation is set aside with it."""
    legal = ("contract 240", "contract 250")
    impl = observe.CaseRecord("c", (
        step_record(0, None, None),
        observe.StepRecord(1, 1, "contract 260", legal, observe.Reply(True), {"phase": "play"}),
        observe.StepRecord(1, 2, "play AS", ("play AS",), observe.Reply(True), {"phase": "play", "trick_number": 1})))
    assert evidence.contradicted(impl) == {(1, 1, "reply"), (1, 1, "state.phase"),
                                           (1, 2, "reply"), (1, 2, "legal"), (1, 2, "state.phase"), (1, 2, "state.trick_number")}
    assert evidence.contradicted(observe.CaseRecord("c", (step_record(0, None, None),))) == frozenset()
