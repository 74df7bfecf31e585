"""fit and fuzz name differences as ``thousand verify`` names failures (one vocabulary)."""

from __future__ import annotations

from conformance.harness import diagnosis
from conformance.harness.findings import Finding, Observed
from conformance.oracle import observe

BEFORE = {"phase": "play", "to_act": 1, "trump": None, "trick": [{"player": 0, "card": "JS"}],
          "hands": [[], ["KS", "9S", "KC"], []]}


def difference(kind: str, detail: str, expected: object, actual: object, before: object = None) -> Finding:
    return observe.observed("t/case", 1, 7, "play 9S", Observed(kind), "play", detail, expected, actual, before)


def test_a_legal_set_difference_gets_the_runners_signature_and_knobs() -> None:
    found = observe.findings([difference("legal", "unexpected play", ["play KS"], ["play 9S", "play KS"], BEFORE)])
    legal = diagnosis.legal_finding("play", ["play KS"], ["play 9S", "play KS"], BEFORE)
    signature, knobs = legal.signature, legal.knobs
    assert [(f.signature, f.knobs) for f in found] == [(signature, knobs)]
    assert "duty to beat" in signature and knobs == ("play.must_beat",)


def test_refusals_events_and_state_read_like_the_runners() -> None:
    refused = difference("refusal", "accepted vs illegal/must_trump", {"events": []}, {"refused": ["illegal", "must_trump"]})
    accepted = difference("refusal", "illegal/must_beat vs accepted", {"refused": ["illegal", "must_beat"]}, {"events": []})
    event = difference("event", "missing match_won", {"events": [{"type": "match_won", "player": 2}]}, {"events": []})
    state = difference("state", "state.barrel.on", [], [])
    signatures = [f.signature for f in observe.findings([refused, accepted, event, state])]
    assert signatures == ["refused[play]: the transcript's play (must_trump)", "refusal[play]: expected must_beat, accepted",
                          "event[play] missing match_won", "state.barrel"]
    event_finding = observe.findings([event])[0]
    assert "match_end.target" in event_finding.knobs and "scoring.declarer_rounding" in event_finding.upstream


def test_one_finding_per_check_of_a_step() -> None:
    twice = [difference("legal", "missing play", ["play KS"], ["play 9S"], BEFORE),
             difference("legal", "unexpected play", ["play KS"], ["play 9S"], BEFORE)]
    assert len(observe.findings(twice)) == 1


def test_an_event_sent_twice_is_named_as_the_extra_event() -> None:
    """The implementation sends a half-marriage bonus twice where the reference sends it
    once: every event of each side equals one of the other's, and the second bonus is the
    extra one (it was read as an extra event of no type, decided by no knob)."""
    bonus = {"type": "bonus", "player": 1, "kind": "half_marriage", "points": 27}
    trick = {"type": "trick_won", "player": 1, "trick": 6, "cards": ["QD", "9D", "KD"], "points": 7}
    twice = difference("event", "unexpected bonus", {"events": [trick, bonus]}, {"events": [trick, bonus, bonus]})
    found = observe.findings([twice])[0]
    assert found.signature == "event[play] unexpected bonus"
    assert "marriages.half_capture_bonus" in found.knobs


def test_an_event_with_a_field_more_is_named_as_the_extra_event() -> None:
    """The reference's trick_won is found among the implementation's (its keys match), yet
    the implementation's has a field more: that event is the extra one."""
    trick = {"type": "trick_won", "player": 1, "trick": 6, "cards": ["QD", "9D", "KD"], "points": 7}
    wider = difference("event", "unexpected trick_won", {"events": [trick]}, {"events": [{**trick, "bonus": 5}]})
    assert observe.findings([wider])[0].signature == "event[play] unexpected trick_won"
