"""A good transcript text with the toy corpus's hands, for tests that break it one way at a time."""

from __future__ import annotations

from tests.fake_impls.toy_corpus import HANDS, TALON


GOOD = """\
id: club/play/example
title: An example
profiles: [gambler-club]
knobs: [play.must_trump]
match:
  barrel: [{on: true, attempts: 1, failed_visits: 0}, {on: false, attempts: 0, failed_visits: 0}, {on: false, attempts: 0, failed_visits: 0}]
deals:
  - dealer: 2
    hands: [HANDS0, HANDS1, HANDS2]
    talon: TALON
    steps:
      - action: bid 100
        player: 0
        legal: [bid 100]
      - action: play 9C
        refused: must_follow_suit
    expect: {scores: [160, 57.5, 15]}
"""


def text(body: str = GOOD) -> str:
    for number, hand in enumerate(HANDS):
        body = body.replace(f"HANDS{number}", "[" + ", ".join(hand) + "]")
    return body.replace("TALON", "[" + ", ".join(TALON) + "]")
