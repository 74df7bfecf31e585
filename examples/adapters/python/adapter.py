#!/usr/bin/env python3
"""A toy Thousand engine that speaks protocol v1 and plays only the auction.

It is the skeleton an implementer copies: read one JSON request per line on stdin,
dispatch on ``cmd``, echo ``seq``, write one JSON reply per line on stdout. The rules
come from the resolved profile document the runner sends with ``match`` (we answer
``profiles: "any"``), so the same code plays every profile. Anything past the auction
is answered with ``skipped``: the runner then counts the case as skipped, not failed.
Standard library only; see docs/verify.md for the walk-through.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

RANKS, SUITS = ["A", "10", "K", "Q", "J", "9"], ["S", "C", "D", "H"]
CARDS = {rank + suit for rank in RANKS for suit in SUITS}
AMOUNT = re.compile(r"0|[1-9][0-9]*")  # whole number, no sign, no leading zeros


class Refused(Exception):
    """An action the rules refuse; the state is left unchanged."""

    def __init__(self, reason: str, message: str, malformed: bool = False) -> None:
        super().__init__(message)
        self.refusal = {"class": "malformed" if malformed else "illegal", "reason": reason, "message": message}


def parse(action: Any) -> tuple[str, int | None]:
    """('bid', amount), ('pass', None), ('claim', None) for a redeal claim, or ('later', None)
    for a well-formed action of a later phase."""
    words = action.split(" ") if isinstance(action, str) else []
    if words == ["pass"]:
        return "pass", None
    if len(words) == 2 and words[0] in ("bid", "contract") and AMOUNT.fullmatch(words[1]):
        return (words[0], int(words[1])) if words[0] == "bid" else ("later", None)
    if action in ("redeal", "no_redeal"):
        return "claim", None
    if action == "give_up":
        return "later", None
    if len(words) == 3 and words[0] == "give":
        cards = words[1:]
    elif words[:1] == ["play"] and len(words) in (2, 3) and words[2:] in ([], ["marriage"], ["aces"]):
        cards = words[1:2]
    else:
        raise Refused("malformed_action", f"{action!r} is not a canonical action", malformed=True)
    if any(card not in CARDS for card in cards):
        raise Refused("unknown_card", f"{action!r} names an unknown card", malformed=True)
    return "later", None


class Auction:
    """One match of the toy engine: the knobs, the match scores and the current auction."""

    def __init__(self, document: dict[str, Any], match_state: dict[str, Any]) -> None:
        rules = document["rules"]
        self.knobs, self.marriage_values = rules["auction"], rules["marriages"]["values"]
        self.four_aces = rules["marriages"].get("four_aces")  # null unless the profile scores them
        self.match_state = {key: match_state.get(key, [0, 0, 0]) for key in ("scores", "bolts", "give_ups")}
        self.match_state["barrel"] = match_state.get("barrel", [{"on": False, "attempts": 0, "failed_visits": 0}] * 3)

    def deal(self, dealer: int, hands: list[list[str]]) -> None:
        self.dealer, self.hands, self.phase = dealer, hands, "auction"
        self.to_act = (dealer + 1) % 3  # the opener is left of the dealer
        self.high_bid: int | None = None
        self.high_bidder: int | None = None  # becomes the declarer when the auction ends
        self.declarer: int | None = None
        self.history: list[dict[str, Any]] = []
        self.passed = [False, False, False]

    def marriage_limit(self, hand: list[str]) -> tuple[bool, int]:
        """Whether the 7-card hand holds a marriage (or four aces, where scored), and the
        highest bid the marriage rule and the ceiling allow it."""
        k = self.knobs
        worths = [v for suit, v in self.marriage_values.items() if "K" + suit in hand and "Q" + suit in hand]
        if self.four_aces and all("A" + suit in hand for suit in SUITS):
            worths.append(self.four_aces)
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
        held, top = self.marriage_limit(self.hands[self.to_act])
        if amount > top:
            reason = "bid_above_ceiling" if held else "bid_needs_marriage"
            raise Refused(reason, f"{amount} is above {top}, the most this hand may bid")

    def next_amount(self, amount: int) -> int:
        nxt = amount + 1
        while not self.on_grid(nxt):
            nxt += 1
        return nxt

    def legal(self) -> list[str]:
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

    def apply(self, action: Any) -> list[dict[str, Any]]:
        kind, amount = parse(action)
        if kind == "later":
            raise Refused("wrong_phase", f"{action!r} is not an action of the auction")
        if kind == "claim":
            raise Refused("redeal_not_allowed", "no redeal claim window is open")
        if kind == "pass" and self.high_bid is None:
            raise Refused("opener_must_bid", "the opener may not pass first")
        if amount is not None:
            self.check_bid(amount)
            self.high_bid, self.high_bidder = amount, self.to_act
        self.passed[self.to_act] = kind == "pass"
        self.history.append({"player": self.to_act, "action": action})
        if sum(self.passed) == 2:
            # Both others passed: the last bidder is declarer (ruling 2). A full engine would
            # now take the talon and open the before_exchange claim window.
            assert self.high_bidder is not None  # the opener always bids before anyone passes
            self.phase = "exchange"
            self.declarer = self.to_act = self.high_bidder
            return [{"type": "auction_won", "player": self.declarer, "bid": self.high_bid}]
        self.to_act = (self.to_act + 1) % 3
        while self.passed[self.to_act]:
            self.to_act = (self.to_act + 1) % 3
        return []

    def state(self) -> dict[str, Any]:
        hands = [sorted(h, key=lambda c: (SUITS.index(c[-1]), RANKS.index(c[:-1]))) for h in self.hands]
        # The fields below the first line are what a full engine tracks after the auction;
        # the toy reports their values at the start of a deal so the reply stays well-formed.
        return {"phase": self.phase, "to_act": self.to_act, "dealer": self.dealer, "auction": self.history,
                "high_bid": self.high_bid, "declarer": self.declarer, "hands": hands, **self.match_state,
                "next_dealer": None, "contract": None, "talon_shown": False, "talon": None, "trump": None,
                "trick": [], "trick_number": None, "tricks_won": [0, 0, 0], "card_points": [0, 0, 0],
                "marriages": [[], [], []], "deal_result": None, "winner": None}


def handle(request: dict[str, Any], game: Auction | None) -> tuple[dict[str, Any], Auction | None]:
    """The reply (without seq) to one request, and the game after it."""
    cmd = request.get("cmd")
    if cmd == "start":
        return {"version": 1, "profiles": "any", "implementation": {
            "name": "toy-auction-python", "version": "1.0", "language": "Python", "homepage": ""}}, game
    if cmd == "match":
        return {"ok": True}, Auction(request["document"], request.get("state", {}))
    if cmd == "stop":
        return {"ok": True}, game
    if game is None:
        return {"errored": {"message": f"{cmd!r} before 'match'"}}, game
    if cmd == "deal":
        game.deal(request["dealer"], request["hands"])
        return {"ok": True, "events": []}, game
    if cmd == "state":
        return {"state": game.state()}, game
    if game.phase != "auction":
        return {"skipped": {"reason": "this toy engine plays only the auction"}}, game
    if cmd == "legal":
        return {"actions": game.legal()}, game
    if cmd == "apply":
        try:
            return {"ok": True, "events": game.apply(request.get("action"))}, game
        except Refused as refused:
            return {"ok": False, "refusal": refused.refusal}, game
    return {"errored": {"message": f"unknown cmd {cmd!r}"}}, game


def main() -> None:
    game: Auction | None = None
    for line in sys.stdin:
        request: Any = None
        try:
            request = json.loads(line)
            reply, game = handle(request, game)
        except Exception as exc:  # bad input gets an `errored` reply, never a dead process
            reply = {"errored": {"message": f"{type(exc).__name__}: {exc}"}}
        request = request if isinstance(request, dict) else {}
        print(json.dumps({"seq": request.get("seq"), **reply}), flush=True)  # flush: the runner waits
        if request.get("cmd") == "stop":
            return


if __name__ == "__main__":
    main()
