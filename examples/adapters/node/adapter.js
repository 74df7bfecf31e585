#!/usr/bin/env node
// A toy Thousand engine that speaks protocol v1 and plays only the auction.
//
// It is the skeleton an implementer copies: read one JSON request per line on stdin,
// dispatch on `cmd`, echo `seq`, write one JSON reply per line on stdout. The rules come
// from the resolved profile document sent with `match` (we answer `profiles: "any"`), so
// the same code plays every profile. Anything past the auction is answered with `skipped`:
// the runner then counts the case as skipped, not failed. Node 20, no npm packages; see
// docs/verify.md for the walk-through. It mirrors examples/adapters/python/adapter.py.
"use strict";

const readline = require("node:readline");

const RANKS = ["A", "10", "K", "Q", "J", "9"];
const SUITS = ["S", "C", "D", "H"];
const CARDS = new Set(RANKS.flatMap((rank) => SUITS.map((suit) => rank + suit)));
const AMOUNT = /^(0|[1-9][0-9]*)$/; // whole number, no sign, no leading zeros

// An action the rules refuse; the state is left unchanged.
class Refused extends Error {
  constructor(reason, message, malformed = false) {
    super(message);
    this.refusal = { class: malformed ? "malformed" : "illegal", reason, message };
  }
}

// ["bid", amount], ["pass"], ["claim"] for a redeal claim, or ["later"] for a well-formed
// action of a later phase.
function parse(action) {
  const words = typeof action === "string" ? action.split(" ") : [];
  if (action === "pass") return ["pass"];
  if (words.length === 2 && (words[0] === "bid" || words[0] === "contract") && AMOUNT.test(words[1])) {
    return words[0] === "bid" ? ["bid", Number(words[1])] : ["later"];
  }
  if (action === "redeal" || action === "no_redeal") return ["claim"];
  if (action === "give_up") return ["later"];
  let cards;
  if (words.length === 3 && words[0] === "give") cards = words.slice(1);
  else if (words[0] === "play" && (words.length === 2 || ["marriage", "aces"].includes(words[2])) && words.length <= 3) cards = [words[1]];
  else throw new Refused("malformed_action", `${JSON.stringify(action)} is not a canonical action`, true);
  if (!cards.every((card) => CARDS.has(card))) {
    throw new Refused("unknown_card", `${JSON.stringify(action)} names an unknown card`, true);
  }
  return ["later"];
}

// One match of the toy engine: the knobs, the match scores and the current auction.
class Auction {
  constructor(document, matchState) {
    const rules = document.rules;
    this.knobs = rules.auction;
    this.marriageValues = rules.marriages.values;
    this.fourAces = rules.marriages.four_aces; // null unless the profile scores them
    this.matchState = {};
    for (const key of ["scores", "bolts", "give_ups"]) this.matchState[key] = matchState[key] ?? [0, 0, 0];
    this.matchState.barrel = matchState.barrel ?? [0, 1, 2].map(() => ({ on: false, attempts: 0, failed_visits: 0 }));
  }

  deal(dealer, hands) {
    Object.assign(this, { dealer, hands, phase: "auction", highBid: null, highBidder: null, declarer: null, history: [] });
    this.toAct = (dealer + 1) % 3; // the opener is left of the dealer
    this.passed = [false, false, false];
  }

  // Whether the 7-card hand holds a marriage (or four aces, where scored), and the
  // highest bid the marriage rule and the ceiling allow it.
  marriageLimit(hand) {
    const k = this.knobs;
    const worths = SUITS.filter((s) => hand.includes("K" + s) && hand.includes("Q" + s)).map((s) => this.marriageValues[s]);
    if (this.fourAces && SUITS.every((s) => hand.includes("A" + s))) worths.push(this.fourAces);
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
    const [kind, amount] = parse(action);
    if (kind === "later") throw new Refused("wrong_phase", `${JSON.stringify(action)} is not an action of the auction`);
    if (kind === "claim") throw new Refused("redeal_not_allowed", "no redeal claim window is open");
    if (kind === "pass" && this.highBid === null) throw new Refused("opener_must_bid", "the opener may not pass first");
    if (kind === "bid") {
      this.checkBid(amount);
      this.highBid = amount;
      this.highBidder = this.toAct;
    }
    this.passed[this.toAct] = kind === "pass";
    this.history.push({ player: this.toAct, action });
    if (this.passed.filter(Boolean).length === 2) {
      // Both others passed: the last bidder is declarer (ruling 2). A full engine would
      // now take the talon and open the before_exchange claim window.
      this.phase = "exchange";
      this.declarer = this.toAct = this.highBidder;
      return [{ type: "auction_won", player: this.declarer, bid: this.highBid }];
    }
    do this.toAct = (this.toAct + 1) % 3; while (this.passed[this.toAct]);
    return [];
  }

  state() {
    const order = (card) => SUITS.indexOf(card.slice(-1)) * 6 + RANKS.indexOf(card.slice(0, -1));
    const hands = this.hands.map((hand) => [...hand].sort((a, b) => order(a) - order(b)));
    // The fields below the first line are what a full engine tracks after the auction;
    // the toy reports their values at the start of a deal so the reply stays well-formed.
    return {
      phase: this.phase, to_act: this.toAct, dealer: this.dealer, auction: this.history, high_bid: this.highBid,
      declarer: this.declarer, hands, ...this.matchState,
      next_dealer: null, contract: null, talon_shown: false, talon: null, trump: null, trick: [], trick_number: null,
      tricks_won: [0, 0, 0], card_points: [0, 0, 0], marriages: [[], [], []], deal_result: null, winner: null,
    };
  }
}

let game = null;

// The reply (without seq) to one request.
function handle(request) {
  const cmd = request.cmd;
  if (cmd === "start") {
    const implementation = { name: "toy-auction-node", version: "1.0", language: "JavaScript", homepage: "" };
    return { version: 1, profiles: "any", implementation };
  }
  if (cmd === "match") {
    game = new Auction(request.document, request.state ?? {});
    return { ok: true };
  }
  if (cmd === "stop") return { ok: true };
  if (game === null) return { errored: { message: `${JSON.stringify(cmd)} before 'match'` } };
  if (cmd === "deal") {
    game.deal(request.dealer, request.hands);
    return { ok: true, events: [] };
  }
  if (cmd === "state") return { state: game.state() };
  if (game.phase !== "auction") return { skipped: { reason: "this toy engine plays only the auction" } };
  if (cmd === "legal") return { actions: game.legal() };
  if (cmd === "apply") {
    try {
      return { ok: true, events: game.apply(request.action) };
    } catch (error) {
      if (error instanceof Refused) return { ok: false, refusal: error.refusal };
      throw error;
    }
  }
  return { errored: { message: `unknown cmd ${JSON.stringify(cmd)}` } };
}

const lines = readline.createInterface({ input: process.stdin });
let stopped = false;
lines.on("line", (line) => {
  if (stopped) return; // lines already read after `stop` are ignored
  let request = null;
  let reply;
  try {
    request = JSON.parse(line);
    reply = handle(request);
  } catch (error) { // bad input gets an `errored` reply, never a dead process
    reply = { errored: { message: `${error.name}: ${error.message}` } };
  }
  if (request === null || typeof request !== "object") request = {};
  process.stdout.write(JSON.stringify({ seq: request.seq ?? null, ...reply }) + "\n");
  if (request.cmd === "stop") {
    stopped = true;
    lines.close();
    process.stdin.destroy(); // nothing else keeps the process alive: it exits
  }
});
