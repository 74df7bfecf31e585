#!/usr/bin/env node
// A protocol v1 adapter for the npm engine `1k` (0.0.11, MIT) on the JavaScript adapter kit.
// `npm ci` in this folder, then: thousand verify --profile polish -- node examples/adapters/1k/adapter.js
// The engine plays fixed rules ("own"), has no bolts, barrel counters or redeal claims (declared
// unsupported), never says why it refuses, has no dealer (its seat 0 opens) and bids the opener's 100.
"use strict";

const kit = require("../js/kit.js");
const k = require("1k");
const A = require("1k/dist/src/game.actions");
const { game: reduce } = require("1k/dist/src/game.reducer");
const { can } = require("1k/dist/src/validators/game.validators");
const { getNextTrickTurn } = require("1k/dist/src/helpers/battle.helpers");
const { getNextTurn, getWinner, getPlayerTotalPoints } = require("1k/dist/src/helpers/players.helpers");
const { getBidWinner, getHighestBid } = require("1k/dist/src/helpers/bid.helpers");
const { getPointsByCardPatterns, getTrumpPointsBySuit } = require("1k/dist/src/helpers/cards.helpers");

console.log = () => {}; // the engine prints debug lines on standard output at every trick
const P = k.Phase;
const SUIT = { S: "♠", C: "♣", D: "♦", H: "♥" };
const LETTER = Object.fromEntries(Object.entries(SUIT).map(([letter, symbol]) => [symbol, letter]));
const STOPS = new Set([P.BATTLE_RESULTS_ANNOUNCEMENT, P.BOMB_DECLARED, P.NOT_ENOUGHT_CARD_POINTS]);
const AMOUNTS = Array.from({ length: 20 }, (_, i) => 110 + 10 * i); // the engine's bids: 110 to 300 by 10
const ID = ["0", "1", "2"];

// A deal: the engine state from the given hands and match (a bomb is a null score), entered
// where the engine checks the hands' points (its automatic redeal); a listener lets it move
// on by itself until the deal is over.
function start({ hands, talon, match }) {
  const players = ID.map((id, i) => ({ id, battlePoints: [match.scores[i], ...Array(match.give_ups[i]).fill(null)] }));
  while (players[0].battlePoints.length % 3) players[0].battlePoints.push(0); // the engine's opener is then seat 0
  const game = { talon, seen: new Set(), raises: 0, contract: null, frozen: null };
  game.engine = k.initializeGame({ settings: { permitBombOnBarrel: true, maxBombs: 2, barrelPointsLimit: 880,
    shuffleAgainIfPointsCountLessThan: 18 }, phase: P.DEALING_CARDS_FINISHED, players, deck: [], stock: [...talon], bid: [],
  cards: Object.fromEntries(ID.map((id, i) => [id, [...hands[i]]])), battle: null });
  game.engine.events.addListener("phaseUpdated", (next) => game.seen.add(now(game).phase) && !STOPS.has(now(game).phase) && next());
  game.engine.init();
  return game;
}

const now = (game) => game.engine.getState();
const declarer = (s) => getBidWinner(s.bid).player;
const handPoints = (cards) => getPointsByCardPatterns(cards);
function phaseOf(game, s = now(game)) {
  if (s.phase === P.BIDDING_IN_PROGRESS) return "auction";
  if (s.phase === P.SHARE_STOCK) return "exchange";
  if (s.phase === P.TRICK_IN_PROGRESS) return game.contract === null ? "contract" : "play";
  return getWinner(s.players) ? "match_over" : "deal_over";
}
function toAct(game, s = now(game)) {
  const phase = phaseOf(game, s);
  if (phase === "auction") return getNextTurn(s.players, s.bid[0].player);
  if (phase === "play") return getNextTrickTurn(s);
  return phase === "deal_over" || phase === "match_over" ? null : declarer(s);
}

// The legal actions, found by asking the engine's own validator about each candidate.
function legal(game) {
  const s = now(game);
  const phase = phaseOf(game, s);
  const id = toAct(game, s);
  const actions = [];
  const add = (action, move) => can(s, move) && actions.push(action);
  if (phase === "auction") add({ word: "pass" }, A.bid(id, 0));
  for (const amount of AMOUNTS) {
    if (phase === "auction") add({ word: "bid", amount }, A.bid(id, amount));
    if (phase === "contract") add({ word: "contract", amount }, A.increaseBid(id, amount));
  }
  if (phase === "contract") actions.push({ word: "contract", amount: getHighestBid(s.bid).bid });
  for (const first of phase === "exchange" ? s.cards[id] : []) {
    for (const second of s.cards[id]) if (first !== second && giveMoves(s, id, [first, second]).ok) actions.push({ word: "give", cards: [first, second] });
  }
  if (phase === "exchange" || phase === "contract") add({ word: "give_up" }, A.declareBomb(id));
  if (phase === "play") for (const card of s.cards[id]) add({ word: "play", card }, A.throwCard(card, id));
  return actions;
}

// `give X Y` is two engine moves: X to the left, then Y to the right; both checked first.
function giveMoves(s, id, cards) {
  const moves = cards.map((card, i) => A.shareStock(id, card, ID[(Number(id) + 1 + i) % 3]));
  return { moves, ok: can(s, moves[0]) && can(reduce(s, moves[0]), moves[1]) };
}

function apply(game, action) {
  const s = now(game);
  const id = toAct(game, s);
  const t = game.engine;
  if (action.word === "pass") return t.pass(id);
  if (action.word === "bid") return t.bid(id, action.amount);
  if (action.word === "give") {
    const { moves, ok } = giveMoves(s, id, action.cards);
    return ok && moves.every((move) => t.shareStock(move.player, move.card, move.targetPlayer));
  }
  if (action.word === "contract") {
    const high = getHighestBid(s.bid).bid;
    if (action.amount !== high && !t.increaseBid(id, action.amount)) return false;
    game.raises += action.amount !== high ? 1 : 0;
    game.contract = action.amount;
    return true;
  }
  if (action.word === "give_up") return t.declareBomb(id) && Boolean(game.frozen = s); // the engine empties hands and auction: shown as they were
  if (action.declare === "marriage") {
    throw new kit.Refused("marriage_declaration_automatic", "leading a king or queen with its partner declares the marriage");
  }
  return action.declare !== "aces" && t.throwCard(action.card, id);
}

function state(game) {
  const s = now(game);
  const shown = game.frozen ?? s; // the hands, auction and tricks shown
  const phase = phaseOf(game, s);
  const over = phase === "deal_over" || phase === "match_over";
  const auction = [...shown.bid].reverse().slice(0, shown.bid.length - game.raises)
    .map((b) => ({ player: Number(b.player), action: b.pass ? "pass" : `bid ${b.bid}` }));
  const bids = auction.filter((b) => b.action !== "pass").map((b) => Number(b.action.slice(4)));
  const battle = shown.battle;
  const won = ID.map((id) => battle?.wonCards[id] ?? []);
  const marriages = ID.map((id) => (battle?.trumpAnnouncements ?? []).filter((a) => a.player === id).map((a) => LETTER[a.suit]).reverse());
  const kind = s.phase === P.BOMB_DECLARED ? "given_up" : s.phase === P.NOT_ENOUGHT_CARD_POINTS ? "redeal" : "played";
  const last = s.players.map((p) => (over && kind !== "redeal" ? p.battlePoints[p.battlePoints.length - 1] ?? 0 : 0));
  const points = ID.map((id, i) => (kind === "played" ? handPoints(won[i]) + marriages[i].reduce((a, m) => a + getTrumpPointsBySuit(SUIT[m]), 0) : 0));
  const lead = battle ? Number(battle.leadPlayer) : 0;
  return {
    phase, to_act: toAct(game, s), auction, high_bid: bids.length ? Math.max(...bids) : null,
    declarer: phase === "auction" || shown.bid.length === 0 ? null : Number(declarer(shown)),
    contract: kind === "played" ? game.contract : null, talon_shown: game.seen.has(P.FLIP_STOCK),
    talon: game.seen.has(P.FLIP_STOCK) ? game.talon : null,
    trump: battle?.trumpAnnouncements.length ? LETTER[battle.trumpAnnouncements[0].suit] : null,
    trick: (battle?.trickCards ?? []).map((card, i) => ({ player: (lead + i) % 3, card })),
    trick_number: battle && game.contract !== null ? Math.min(8, won.flat().length / 3 + 1) : null,
    tricks_won: won.map((cards) => cards.length / 3), card_points: won.map(handPoints), marriages,
    deal_result: over ? { kind, made: kind === "redeal" ? null : kind === "played" && last[Number(declarer(shown))] > 0, points, deltas: last } : null,
    scores: s.players.map(getPlayerTotalPoints), give_ups: s.players.map((p) => p.battlePoints.filter((x) => x === null).length),
    winner: phase === "match_over" ? Number(getWinner(s.players).id) : null, hands: ID.map((id) => shown.cards[id]),
  };
}

// The automatic redeal: the engine stops where a hand is under its 18 points.
function dealEvents(game) {
  const s = now(game);
  return s.phase !== P.NOT_ENOUGHT_CARD_POINTS ? [] : [{ type: "redeal", reason: "hand_under_points", player: ID.findIndex((id) => handPoints(s.cards[id]) < 18) }];
}

kit.serve({
  implementation: { name: "1k", version: "0.0.11", language: "JavaScript", homepage: "https://www.npmjs.com/package/1k" },
  profiles: "own", seats: "opener", opensItself: true, cards: kit.cardNames(SUIT),
  unsupported: { actions: ["redeal", "no_redeal"], state_fields: ["bolts", "barrel"], events: [] },
  start, legal, apply, state, dealEvents,
});
