#!/usr/bin/env python3
"""An adapter for your engine on the Python kit: fill the four methods (docs/quickstart.md).

Run it with ``thousand verify --case-list conformance/starter.txt -- python my_adapter.py``.
The kit (``conformance.kit``, installed with ``thousand``) speaks protocol v1 for you; the
runner derives the events from the states you report.
"""

from __future__ import annotations

from typing import Any

from conformance import kit


class MyEngine(kit.Engine):
    name, version = "my-engine", "0.1"
    profiles = "own"  # your engine's own rules; "any" when it plays the rules document it is sent
    # What your engine lacks, if anything (docs/protocol.md, Declarations for less):
    # reasons = False                 it cannot tell why it refuses
    # absent = ("bolts", "barrel")    state fields it has no concept of
    # rotates = True                  it has no dealer: its seat 0 always opens
    # places_opening_bid = True       it bids the opener's forced bid itself as it deals
    # gives_one_card = True           its exchange lists "give X" per card

    def deal(self, deal: kit.Deal) -> None:
        """Start a deal: deal.dealer, deal.hands (three lists of 7 cards such as "10H"),
        deal.talon, deal.match (scores, bolts, give_ups, barrel: per seat) and
        deal.document (the profile's rules, every knob)."""
        raise NotImplementedError("deal: start your engine's deal from deal.hands, deal.talon and deal.match")

    def legal(self) -> list[str]:
        """The legal actions of the player to act: "bid 110", "pass", "give 9S JC",
        "contract 120", "give_up", "play QD", "play KH marriage", "redeal", "no_redeal"."""
        raise NotImplementedError("legal: list your engine's legal actions as action strings")

    def apply(self, action: kit.Action) -> None:
        """Play the action (action.kind, .amount, .cards, .declares); refuse it with
        kit.Refused("must_follow_suit") or kit.Refused() when your engine cannot tell why,
        leaving the state as it was."""
        raise NotImplementedError("apply: play the action on your engine, or raise kit.Refused")

    def state(self) -> dict[str, Any]:
        """The observable state: phase, to_act, dealer, auction, high_bid, declarer, contract,
        talon_shown, talon, trump, trick, trick_number, tricks_won, card_points, marriages,
        deal_result, scores, bolts, give_ups, barrel, winner, hands (docs/protocol.md)."""
        raise NotImplementedError("state: report your engine's state in the protocol's fields")


if __name__ == "__main__":
    kit.serve(MyEngine())
