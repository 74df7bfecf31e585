#!/usr/bin/env node
// A toy Thousand engine that plays only the auction, served by the JavaScript adapter kit.
//
// It is the skeleton an implementer copies: four functions (start, legal, apply, state) and
// the kit (examples/adapters/js/kit.js) does the protocol: JSON lines, `seq`, action strings,
// the fields the toy does not track and the events. The rules come from the resolved profile
// document sent with `match` (we answer `profiles: "any"`), so the same code plays every
// profile. Anything past the auction is answered with `skipped`: the runner counts the case
// as skipped, not failed. Node 18 or later, no npm packages; see docs/verify.md.
"use strict";

const kit = require("../js/kit.js");

const Refused = kit.Refused;

// One deal's auction under the profile's knobs.
class Auction {
  constructor({ dealer, hands, document }) {
    this.knobs = document.rules.auction;
    this.marriageValues = document.rules.marriages.values;
    this.fourAces = document.rules.marriages.four_aces; // null unless the profile scores them
    Object.assign(this, { hands, phase: "auction", highBid: null, highBidder: null, declarer: null, history: [] });
    this.toAct = (dealer + 1) % 3; // the opener is left of the dealer
    this.passed = [false, false, false];
  }

  // Whether the 7-card hand holds a marriage (or four aces, where scored), and the
  // highest bid the marriage rule and the ceiling allow it.
  marriageLimit(hand) {
    const k = this.knobs;
    const worths = kit.SUITS.filter((s) => hand.includes("K" + s) && hand.includes("Q" + s)).map((s) => this.marriageValues[s]);
    if (this.fourAces && kit.SUITS.every((s) => hand.includes("A" + s))) worths.push(this.fourAces);
    if (k.marriage_needed_above === null) return [worths.length > 0, k.max_bid];
    if (worths.length === 0) return [false, k.marriage_needed_above];
    if (k.ceiling === "marriages_held") return [true, k.marriage_needed_above + worths.reduce((a, b) => a + b, 0)];
    return [true, k.max_bid];
  }

  onGrid(amount) {
    const k = this.knobs;
    const step = k.high_bid_step && amount > k.high_bid_from ? k.high_bid_step : k.bid_step;
    return amount === k.opening_bid || (amount > k.opening_bid && amount % step === 0);
  }

  nextAmount(amount) {
    let next = amount + 1;
    while (!this.onGrid(next)) next += 1;
    return next;
  }

  // Throw Refused with the reason code of DESIGN.md, checked in the reference's order.
  checkBid(amount) {
    const k = this.knobs;
    const high = this.highBid;
    if (high === null && k.opening === "forced" && amount !== k.opening_bid) {
      throw new Refused("opening_bid_fixed", `the opener's first bid is exactly ${k.opening_bid}`);
    }
    if (amount < k.opening_bid || (high !== null && amount <= high)) {
      throw new Refused("bid_too_low", `${amount} does not exceed ${high ?? k.opening_bid}`);
    }
    if (!this.onGrid(amount)) throw new Refused("bid_off_step", `${amount} is not on the grid of legal amounts`);
    if (amount > k.max_bid) throw new Refused("bid_above_ceiling", `${amount} is above the maximum ${k.max_bid}`);
    if (k.raise === "one_step" && high !== null && amount !== this.nextAmount(high)) {
      throw new Refused("bid_jump_not_allowed", `the only raise is to ${this.nextAmount(high)}`);
    }
    if (k.stop_at !== null && amount > k.stop_at && (high === null || high < k.stop_at)) {
      throw new Refused("bid_past_stop", `the auction must stand at ${k.stop_at} first`);
    }
    const [held, top] = this.marriageLimit(this.hands[this.toAct]);
    if (amount > top) {
      throw new Refused(held ? "bid_above_ceiling" : "bid_needs_marriage", `${amount} is above ${top}, the most this hand may bid`);
    }
  }

  legal() {
    if (this.phase !== "auction") throw new kit.Skip("this toy engine plays only the auction");
    const actions = this.highBid === null ? [] : ["pass"]; // the opener may never pass first
    let amount = this.highBid === null ? this.knobs.opening_bid : this.nextAmount(this.highBid);
    for (; amount <= this.knobs.max_bid; amount = this.nextAmount(amount)) {
      try {
        this.checkBid(amount);
        actions.push(`bid ${amount}`);
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
      }
    }
    return actions;
  }

  apply(action) {
    if (this.phase !== "auction") throw new kit.Skip("this toy engine plays only the auction");
    if (action.word === "pass" && this.highBid === null) throw new Refused("opener_must_bid", "the opener may not pass first");
    if (action.word === "bid") {
      this.checkBid(action.amount);
      this.highBid = action.amount;
      this.highBidder = this.toAct;
    }
    this.passed[this.toAct] = action.word === "pass";
    this.history.push({ player: this.toAct, action: kit.format(action) });
    if (this.passed.filter(Boolean).length === 2) {
      // Both others passed: the last bidder is declarer (ruling 2). A full engine would
      // now take the talon and open the before_exchange claim window.
      this.phase = "exchange";
      this.declarer = this.toAct = this.highBidder;
      return;
    }
    do this.toAct = (this.toAct + 1) % 3; while (this.passed[this.toAct]);
  }

  state() {
    return { phase: this.phase, to_act: this.toAct, auction: this.history, high_bid: this.highBid,
      declarer: this.declarer, hands: this.hands };
  }
}

kit.serve({
  implementation: { name: "toy-auction-node", version: "1.0", language: "JavaScript", homepage: "" },
  profiles: "any",
  start: (deal) => new Auction(deal),
  legal: (game) => game.legal(),
  apply: (game, action) => game.apply(action),
  state: (game) => game.state(),
});
