// An adapter kit for protocol v1 (docs/protocol.md): one file, Node 18 or later, no npm package.
//
// Copy it beside your adapter and write four functions; the kit does the rest.
//
//   const kit = require("./kit.js");
//   kit.serve({
//     implementation: { name: "my-engine", version: "1.0", language: "JavaScript", homepage: "" },
//     profiles: "own",                // "any", "own" or a list of profile names (docs/protocol.md, Declarations)
//     start(deal) { ... },            // a new deal: { dealer, hands, talon, match, document } -> your game object
//     legal(game) { ... },            // the legal actions of the player to act: strings or action objects
//     apply(game, action) { ... },    // do it, or return false / throw new kit.Refused(reason, message)
//     state(game) { ... },            // phase, hands and the other fields your engine knows (the kit fills the rest)
//   });
//
// Optional settings:
//   seats: "opener"        your engine's seat 0 always opens the auction (it has no dealer): the
//                          kit turns every seat, per-seat list and hand through the rotation
//   opensItself: true      your engine places the opener's forced bid itself when it deals: the
//                          kit shows the auction one bid behind it until `bid N` arrives
//   cards: kit.cardNames({ S: "♠", C: "♣", D: "♦", H: "♥" })   your engine's card names
//   unsupported: { actions, state_fields, events }   what your engine has no concept of
//   dealEvents(game)       events of the deal itself (an automatic redeal), in your engine's seats
//
// An action object is { word, amount, cards, card, declare } with word one of bid, pass, give,
// contract, give_up, play, redeal, no_redeal; `give` has cards [to the left, to the right];
// `play` has card and declare ("marriage", "aces" or null). Seats, hands and cards the kit hands
// you are in your engine's terms; so are those you give back. Throw new kit.Skip(reason) for a
// rule your engine does not have: the case counts as skipped. Events come from comparing the
// states before and after each action (deriveEvents below); return an array from `apply` to add
// events the states cannot show (bolts, barrel, bonuses).
"use strict";

const readline = require("node:readline");

const RANKS = ["A", "10", "K", "Q", "J", "9"];
const SUITS = ["S", "C", "D", "H"];
const CARDS = new Set(SUITS.flatMap((suit) => RANKS.map((rank) => rank + suit)));
const AMOUNT = /^(0|[1-9][0-9]*)$/;
// The phases each action word belongs to; give_up is refused later by the engine where its
// profile forbids it in one of the two.
const PHASES = { bid: ["auction"], pass: ["auction"], give: ["exchange"], contract: ["contract"],
  give_up: ["exchange", "contract"], play: ["play"], redeal: ["claim"], no_redeal: ["claim"] };
const SEAT_FIELDS = ["to_act", "declarer", "winner"];
const PER_SEAT = ["tricks_won", "card_points", "marriages", "scores", "bolts", "give_ups", "barrel", "hands"];
const MATCH_FIELDS = ["scores", "bolts", "give_ups", "barrel"];

class Refused extends Error {
  // reason: a reason code of docs/protocol.md, or null when the engine cannot tell why.
  constructor(reason, message, malformed = false) {
    super(message || `refused (${reason || "no reason given"})`);
    this.refusal = { class: malformed ? "malformed" : "illegal", ...(reason ? { reason } : {}), message: this.message };
  }
}

class Skip extends Error {}

// Card names of an engine that writes suits (and perhaps ranks) its own way.
function cardNames(suits, ranks = {}) {
  const suitBack = Object.fromEntries(Object.entries(suits).map(([ours, theirs]) => [theirs, ours]));
  const rankBack = Object.fromEntries(Object.entries(ranks).map(([ours, theirs]) => [theirs, ours]));
  return {
    toEngine: (card) => (ranks[card.slice(0, -1)] ?? card.slice(0, -1)) + suits[card.slice(-1)],
    fromEngine: (card) => {
      const suit = Object.keys(suitBack).find((s) => card.endsWith(s));
      const rank = card.slice(0, card.length - suit.length);
      return (rankBack[rank] ?? rank) + suitBack[suit];
    },
  };
}

const SAME = { toEngine: (card) => card, fromEngine: (card) => card };

// A canonical action string as an action object; Refused (malformed) when it is not one.
function parse(text) {
  const words = typeof text === "string" ? text.split(" ") : [];
  const bad = () => new Refused("malformed_action", `${JSON.stringify(text)} is not a canonical action`, true);
  const held = (cards) => {
    if (!cards.every((card) => CARDS.has(card))) throw new Refused("unknown_card", `${JSON.stringify(text)} names an unknown card`, true);
    return cards;
  };
  const [word, first, second] = words;
  if (words.length === 1 && ["pass", "give_up", "redeal", "no_redeal"].includes(word)) return { word };
  if (words.length === 2 && (word === "bid" || word === "contract") && AMOUNT.test(first)) return { word, amount: Number(first) };
  if (words.length === 3 && word === "give") return { word, cards: held([first, second]) };
  if (word === "play" && (words.length === 2 || (words.length === 3 && ["marriage", "aces"].includes(second)))) {
    return { word, card: held([first])[0], declare: second ?? null };
  }
  throw bad();
}

function format(action) {
  if (typeof action === "string") return action;
  if (action.word === "bid" || action.word === "contract") return `${action.word} ${action.amount}`;
  if (action.word === "give") return `give ${action.cards.join(" ")}`;
  if (action.word === "play") return `play ${action.card}${action.declare ? " " + action.declare : ""}`;
  return action.word;
}

const order = (card) => SUITS.indexOf(card.slice(-1)) * 6 + RANKS.indexOf(card.slice(0, -1));
const sorted = (cards) => [...cards].sort((a, b) => order(a) - order(b));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// One match: the author's game of the current deal, and how its seats and cards map onto ours.
class Session {
  constructor(adapter, document, match) {
    Object.assign(this, { adapter, document, game: null, opener: 0, pendingOpening: false });
    this.cards = adapter.cards ?? SAME;
    this.carried = {
      scores: match.scores ?? [0, 0, 0], bolts: match.bolts ?? [0, 0, 0], give_ups: match.give_ups ?? [0, 0, 0],
      barrel: match.barrel ?? [0, 1, 2].map(() => ({ on: false, attempts: 0, failed_visits: 0 })),
    };
  }

  // Engine seat of protocol seat p, and back: engine seat 0 is the opener under seats "opener".
  engineSeat(p) { return this.adapter.seats === "opener" ? (p - this.opener + 3) % 3 : p; }
  ourSeat(e) { return e === null || e === undefined ? null : this.adapter.seats === "opener" ? (e + this.opener) % 3 : e; }
  engineList(list) { return [0, 1, 2].map((e) => list[this.ourSeat(e)]); }
  ourList(list) { return [0, 1, 2].map((p) => list[this.engineSeat(p)]); }

  deal(dealer, hands, talon) {
    if (this.game !== null) for (const key of MATCH_FIELDS) this.carried[key] = this.state()[key];
    this.dealer = dealer;
    this.opener = (dealer + 1) % 3;
    const match = Object.fromEntries(MATCH_FIELDS.map((key) => [key, this.engineList(this.carried[key])]));
    const engineHands = this.engineList(hands).map((hand) => hand.map(this.cards.toEngine));
    this.game = this.adapter.start({ dealer, hands: engineHands, talon: talon.map(this.cards.toEngine), match, document: this.document });
    this.pendingOpening = Boolean(this.adapter.opensItself) && this.engineState().phase === "auction";
    return (this.adapter.dealEvents ? this.adapter.dealEvents(this.game) : []).map((event) => this.ourEvent(event));
  }

  openingBid() { return this.document?.rules?.auction?.opening_bid ?? 100; }

  // The author's state in protocol seats and cards, every field filled in.
  engineState() { return this.adapter.state(this.game); }

  state() {
    const raw = this.engineState();
    const s = this.complete(raw);
    for (const key of SEAT_FIELDS) s[key] = this.ourSeat(s[key]);
    for (const key of PER_SEAT) s[key] = this.ourList(s[key]);
    for (const entry of [...s.auction, ...s.trick]) entry.player = this.ourSeat(entry.player);
    if (s.deal_result) for (const key of ["points", "deltas"]) s.deal_result[key] = this.ourList(s.deal_result[key]);
    const name = this.cards.fromEngine;
    s.hands = s.hands.map((hand) => sorted(hand.map(name)));
    s.talon = s.talon && sorted(s.talon.map(name));
    s.trick = s.trick.map((entry) => ({ player: entry.player, card: name(entry.card) }));
    if (this.pendingOpening) Object.assign(s, { to_act: this.opener, auction: [], high_bid: null });
    return s;
  }

  // The fields the author left out, as the state table of docs/protocol.md has them when the
  // engine does not track them; declared-absent fields are reported as the match set them.
  complete(raw) {
    const over = raw.phase === "deal_over" || raw.phase === "match_over";
    const redeal = raw.deal_result?.kind === "redeal";
    const after = this.document?.rules?.deal?.dealer_after_redeal === "same" || !this.document ? this.dealer : (this.dealer + 1) % 3;
    const defaults = {
      to_act: null, dealer: this.dealer, next_dealer: raw.phase === "deal_over" ? (redeal ? after : (this.dealer + 1) % 3) : null,
      auction: [], high_bid: null, declarer: null, contract: null, talon_shown: false, talon: null, trump: null, trick: [],
      trick_number: null, tricks_won: [0, 0, 0], card_points: [0, 0, 0], marriages: [[], [], []], deal_result: null,
      ...Object.fromEntries(MATCH_FIELDS.map((key) => [key, this.engineList(this.carried[key])])), winner: null,
    };
    const s = { phase: raw.phase, ...defaults };
    for (const key of Object.keys(defaults)) if (raw[key] !== undefined) s[key] = JSON.parse(JSON.stringify(raw[key]));
    s.hands = raw.hands.map((hand) => [...hand]);
    if (over) s.to_act = null;
    return s;
  }

  legal() {
    if (this.pendingOpening) return [`bid ${this.openingBid()}`];
    const name = this.cards.fromEngine;
    return this.adapter.legal(this.game).map((action) => typeof action === "string" ? action : format({
      ...action, card: action.card && name(action.card), cards: action.cards && action.cards.map(name) }));
  }

  apply(text) {
    const action = parse(text);
    const before = this.state();
    const phases = PHASES[action.word];
    if (before.phase === "match_over") throw new Refused("match_over", "the match is over");
    if (!phases.includes(before.phase)) {
      if (action.word === "redeal" || action.word === "no_redeal") throw new Refused("redeal_not_allowed", "no redeal claim window is open");
      throw new Refused("wrong_phase", `${JSON.stringify(text)} is an action of the ${phases.join(" or ")} phase, not of the ${before.phase} phase`);
    }
    if (this.pendingOpening) return this.openBid(action);
    const engineAction = { ...action, card: action.card && this.cards.toEngine(action.card),
      cards: action.cards && action.cards.map(this.cards.toEngine) };
    const done = this.adapter.apply(this.game, engineAction);
    if (done === false) throw new Refused(null, `${JSON.stringify(text)} refused by the engine`);
    const extra = Array.isArray(done) ? done.map((event) => this.ourEvent(event)) : [];
    return deriveEvents(before, this.state(), action, this.document, extra);
  }

  // The opener's forced bid, which the engine already placed: accepted without calling it.
  openBid(action) {
    if (action.word === "pass") throw new Refused("opener_must_bid", "the opener may not pass first");
    if (action.amount !== this.openingBid()) throw new Refused("opening_bid_fixed", `the opener's first bid is exactly ${this.openingBid()}`);
    this.pendingOpening = false;
    return [];
  }

  ourEvent(event) {
    const out = { ...event };
    if ("player" in out) out.player = this.ourSeat(out.player);
    for (const key of ["points", "deltas", "scores"]) if (Array.isArray(out[key])) out[key] = this.ourList(out[key]);
    if (Array.isArray(out.cards)) out.cards = out.cards.map(this.cards.fromEngine);
    return out;
  }
}

// The events of one action, from the states before and after it (protocol seats), in the
// order of docs/protocol.md; `extra` (the engine's own: bolts, barrel, bonuses) goes before
// `deal_scored`.
function deriveEvents(before, after, action, document, extra = []) {
  const events = [];
  const rules = document?.rules ?? {};
  if (before.declarer === null && after.declarer !== null && before.phase === "auction") {
    events.push({ type: "auction_won", player: after.declarer, bid: after.high_bid });
  }
  if (!before.talon_shown && after.talon_shown) events.push({ type: "talon_revealed", cards: after.talon });
  if (action.word === "contract" && after.contract !== null) {
    events.push({ type: "contract_fixed", player: after.declarer, contract: after.contract });
  }
  const ended = before.deal_result === null && after.deal_result !== null ? after.deal_result : null;
  if (ended?.kind === "given_up") events.push({ type: "give_up", player: after.declarer, count: after.give_ups[after.declarer] });
  let declared = false;
  for (const p of [0, 1, 2]) {
    for (const suit of after.marriages[p].slice(before.marriages[p].length)) {
      declared = true;
      events.push(suit === "aces" ? { type: "aces_declared", player: p, points: rules.marriages?.four_aces ?? null }
        : { type: "marriage_declared", player: p, suit, points: rules.marriages?.values?.[suit] ?? null });
    }
  }
  const trump = after.trump !== before.trump && after.trump !== null ? { type: "trump_changed", suit: after.trump } : null;
  if (trump && declared) events.push(trump);
  const winner = [0, 1, 2].find((p) => after.tricks_won[p] > before.tricks_won[p]);
  if (winner !== undefined) {
    events.push({ type: "trick_won", player: winner, trick: before.trick_number, cards: [...before.trick.map((e) => e.card), action.card],
      points: after.card_points[winner] - before.card_points[winner] });
  }
  if (trump && !declared) events.push(trump);
  events.push(...extra);
  if (ended && ended.kind !== "redeal") events.push({ type: "deal_scored", points: ended.points, deltas: ended.deltas, scores: after.scores });
  if (before.winner === null && after.winner !== null) events.push({ type: "match_won", player: after.winner });
  return events;
}

// The reply (without seq) to one request.
function handle(adapter, request, match) {
  const cmd = request.cmd;
  if (cmd === "start") {
    const reply = { version: 1, implementation: adapter.implementation, profiles: adapter.profiles ?? "own" };
    if (adapter.unsupported) reply.unsupported = adapter.unsupported;
    return reply;
  }
  if (cmd === "match") {
    match.session = new Session(adapter, request.document ?? null, request.state ?? {});
    return { ok: true };
  }
  if (cmd === "stop") return { ok: true };
  const session = match.session;
  if (session === null) return { errored: { message: `${JSON.stringify(cmd)} before 'match'` } };
  if (cmd === "deal") return { ok: true, events: session.deal(request.dealer, request.hands, request.talon) };
  if (session.game === null) return { errored: { message: `${JSON.stringify(cmd)} before 'deal'` } };
  if (cmd === "state") return { state: session.state() };
  if (cmd === "legal") return { actions: session.legal() };
  if (cmd === "apply") {
    try {
      return { ok: true, events: session.apply(request.action) };
    } catch (error) {
      if (error instanceof Refused) return { ok: false, refusal: error.refusal };
      throw error;
    }
  }
  return { errored: { message: `unknown cmd ${JSON.stringify(cmd)}` } };
}

// Serve the protocol on standard input and output until `stop`.
function serve(adapter) {
  const match = { session: null };
  const lines = readline.createInterface({ input: process.stdin });
  let stopped = false;
  lines.on("line", (line) => {
    if (stopped) return; // lines already read after `stop` are ignored
    let request = null;
    let reply;
    try {
      request = JSON.parse(line);
      reply = handle(adapter, request, match);
    } catch (error) { // bad input, or an engine that throws, gets an answer, never a dead process
      reply = error instanceof Skip ? { skipped: { reason: error.message } }
        : { errored: { message: `${error.name}: ${error.message}` } };
    }
    if (request === null || typeof request !== "object") request = {};
    process.stdout.write(JSON.stringify({ seq: request.seq ?? null, ...reply }) + "\n");
    if (request.cmd === "stop") {
      stopped = true;
      lines.close();
      process.stdin.destroy();
    }
  });
}

module.exports = { serve, Refused, Skip, cardNames, parse, format, deriveEvents, RANKS, SUITS };
