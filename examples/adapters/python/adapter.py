#!/usr/bin/env python3
"""A toy Thousand engine on the Python adapter kit: it plays only the auction.

The kit (``conformance.kit``, installed with ``thousand``) speaks protocol v1; this file
is the engine and the four methods an author writes: ``deal``, ``legal``, ``apply`` and
``state``. The rules come from the resolved profile document (``profiles = "any"``), so
the same code plays every profile. Past the auction it raises ``kit.Skip``: the runner
counts the case as skipped, not failed. The events are derived by the runner from the
states. See docs/quickstart.md.
"""

from __future__ import annotations

from typing import Any

from conformance import kit
from conformance.kit import Refused


class Auction(kit.Engine):
    name, version, profiles = "toy-auction-python", "1.0", "any"

    # --- the engine: the auction's rules, read from the profile document ---

    def marriage_limit(self, hand: list[str]) -> tuple[bool, int]:
        """Whether the 7-card hand holds a marriage (or four aces, where scored), and the
        highest bid the marriage rule and the ceiling allow it."""
        k, values = self.knobs, self.rules["marriages"]["values"]
        worths = [v for suit, v in values.items() if "K" + suit in hand and "Q" + suit in hand]
        four_aces = self.rules["marriages"].get("four_aces")
        if four_aces and all("A" + suit in hand for suit in kit.SUITS):
            worths.append(four_aces)
        if k["marriage_needed_above"] is None:
            return bool(worths), k["max_bid"]
        if not worths:
            return False, k["marriage_needed_above"]
        if k["ceiling"] == "marriages_held":
            return True, k["marriage_needed_above"] + sum(worths)
        return True, k["max_bid"]

    def on_grid(self, amount: int) -> bool:
        k = self.knobs
        step = k["high_bid_step"] if k["high_bid_step"] and amount > k["high_bid_from"] else k["bid_step"]
        return bool(amount == k["opening_bid"] or (amount > k["opening_bid"] and amount % step == 0))

    def next_amount(self, amount: int) -> int:
        nxt = amount + 1
        while not self.on_grid(nxt):
            nxt += 1
        return nxt

    def check_bid(self, amount: int) -> None:
        """Raise Refused with the reason code of DESIGN.md, checked in the reference's order."""
        k, high = self.knobs, self.high_bid
        if high is None and k["opening"] == "forced" and amount != k["opening_bid"]:
            raise Refused("opening_bid_fixed", f"the opener's first bid is exactly {k['opening_bid']}")
        if amount < k["opening_bid"] or (high is not None and amount <= high):
            raise Refused("bid_too_low", f"{amount} does not exceed {high or k['opening_bid']}")
        if not self.on_grid(amount):
            raise Refused("bid_off_step", f"{amount} is not on the grid of legal amounts")
        if amount > k["max_bid"]:
            raise Refused("bid_above_ceiling", f"{amount} is above the maximum {k['max_bid']}")
        if k["raise"] == "one_step" and high is not None and amount != self.next_amount(high):
            raise Refused("bid_jump_not_allowed", f"the only raise is to {self.next_amount(high)}")
        if k["stop_at"] is not None and amount > k["stop_at"] and (high is None or high < k["stop_at"]):
            raise Refused("bid_past_stop", f"the auction must stand at {k['stop_at']} first")
        held, top = self.marriage_limit(self.hands[self.to_act or 0])
        if amount > top:
            raise Refused("bid_above_ceiling" if held else "bid_needs_marriage", f"{amount} is above {top}")

    # --- the four methods the kit calls ---

    def deal(self, deal: kit.Deal) -> None:
        self.rules = deal.document["rules"]
        self.knobs = self.rules["auction"]
        self.dealer, self.hands, self.match, self.phase = deal.dealer, deal.hands, deal.match, "auction"
        self.to_act: int | None = (deal.dealer + 1) % 3  # the opener is left of the dealer
        self.high_bid: int | None = None
        self.high_bidder: int | None = None  # becomes the declarer when the auction ends
        self.history: list[dict[str, Any]] = []
        self.passed = [False, False, False]

    def legal(self) -> list[str]:
        if self.phase != "auction":
            raise kit.Skip("this toy engine plays only the auction")
        actions = [] if self.high_bid is None else ["pass"]  # the opener may never pass first
        amount = self.knobs["opening_bid"] if self.high_bid is None else self.next_amount(self.high_bid)
        while amount <= self.knobs["max_bid"]:
            try:
                self.check_bid(amount)
                actions.append(f"bid {amount}")
            except Refused:
                pass
            amount = self.next_amount(amount)
        return actions

    def apply(self, action: kit.Action) -> None:
        if self.phase != "auction":
            raise kit.Skip("this toy engine plays only the auction")
        if action.kind in ("redeal", "no_redeal"):
            raise Refused("redeal_not_allowed", "no redeal claim window is open")
        if action.kind not in ("bid", "pass"):
            raise Refused("wrong_phase", f"{action.text!r} is not an action of the auction")
        if action.kind == "pass" and self.high_bid is None:
            raise Refused("opener_must_bid", "the opener may not pass first")
        if action.amount is not None:
            self.check_bid(action.amount)
            self.high_bid, self.high_bidder = action.amount, self.to_act
        assert self.to_act is not None
        self.passed[self.to_act] = action.kind == "pass"
        self.history.append({"player": self.to_act, "action": action.text})
        if sum(self.passed) == 2:  # both others passed: the last bidder is declarer (ruling 2)
            self.phase, self.to_act = "exchange", self.high_bidder
            return
        self.to_act = (self.to_act + 1) % 3
        while self.passed[self.to_act]:
            self.to_act = (self.to_act + 1) % 3

    def state(self) -> dict[str, Any]:
        # Past the first line: what a full engine tracks after the auction, at the deal's start.
        return {"phase": self.phase, "to_act": self.to_act, "dealer": self.dealer, "auction": self.history,
                "high_bid": self.high_bid, "declarer": self.high_bidder if self.phase != "auction" else None,
                "hands": [kit.sort_cards(hand) for hand in self.hands], **self.match,
                "next_dealer": None, "contract": None, "talon_shown": False, "talon": None, "trump": None,
                "trick": [], "trick_number": None, "tricks_won": [0, 0, 0], "card_points": [0, 0, 0],
                "marriages": [[], [], []], "deal_result": None, "winner": None}


if __name__ == "__main__":
    kit.serve(Auction())
