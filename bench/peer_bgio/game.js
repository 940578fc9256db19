// A Sushi Go!-shaped game for boardgame.io 0.50: the benchmark's peer (bench/peer.py).
//
// The same shape as the game cardroom's HTTP benchmark plays (../shared/rules/sushi-go.md):
// 4 seats, the 108-card deck (S1), hands of 8 (S2), three rounds (S3); every seat picks one
// card at once and secretly (S4), and when the last seat of a turn has picked the picks are
// revealed and placed and every hand passes to the next seat (left, the default direction); a
// hand of one card is picked for its holder (S5). Rounds are scored (S10, S11 gamewright maki)
// and puddings at the end (S13, S14). Chopsticks are placed and scored 0 but never used (S6):
// the benchmark's clients pick one card at a time on both sides.
//
// Hidden picks the boardgame.io way: `playerView` shows a seat its own hand and pick only, and
// the pick move is `redact: true` (other seats' logs lose its argument) and `client: false`
// (never run on a client). `ignoreStaleStateID`: the seats pick at once, so a pick must not be
// refused because another seat's pick moved the state on.
'use strict';

const { ActivePlayers, INVALID_MOVE } = require('boardgame.io/core');

const HAND = 8; // S2, 4 players
const ROUNDS = 3;
const DECK = {
  tempura: 14, sashimi: 14, dumpling: 14, maki_2: 12, maki_3: 8, maki_1: 6,
  salmon_nigiri: 10, squid_nigiri: 5, egg_nigiri: 5, pudding: 10, wasabi: 6, chopsticks: 4,
};
const NIGIRI = { egg_nigiri: 1, salmon_nigiri: 2, squid_nigiri: 3 };
const MAKI = { maki_1: 1, maki_2: 2, maki_3: 3 };
const DUMPLINGS = [0, 1, 3, 6, 10, 15];

function deck() {
  const cards = [];
  for (const [kind, count] of Object.entries(DECK)) {
    for (let i = 0; i < count; i += 1) cards.push(kind);
  }
  return cards;
}

function seats(ctx) {
  return ctx.playOrder;
}

function deal(G, ctx) {
  for (const seat of seats(ctx)) {
    G.hands[seat] = G.deck.splice(0, HAND);
    G.picks[seat] = null;
  }
}

// S8: a nigiri goes onto its owner's oldest free wasabi.
function place(tableau, card) {
  if (card in NIGIRI) {
    const wasabi = tableau.find((slot) => slot.card === 'wasabi' && slot.on === null);
    if (wasabi) {
      wasabi.on = card;
      return;
    }
  }
  tableau.push({ card, on: null });
}

function split(points, tied) {
  return Math.floor(points / tied);
}

// S11 (gamewright): most maki icons 6 split; second 3 split, only when first was not tied.
function scoreMaki(G, ctx) {
  const icons = {};
  for (const seat of seats(ctx)) {
    icons[seat] = G.tableaus[seat].reduce((n, slot) => n + (MAKI[slot.card] || 0), 0);
  }
  const counts = [...new Set(Object.values(icons).filter((n) => n > 0))].sort((a, b) => b - a);
  if (counts.length === 0) return;
  const first = seats(ctx).filter((seat) => icons[seat] === counts[0]);
  first.forEach((seat) => { G.scores[seat] += split(6, first.length); });
  if (first.length > 1 || counts.length < 2) return;
  const second = seats(ctx).filter((seat) => icons[seat] === counts[1]);
  second.forEach((seat) => { G.scores[seat] += split(3, second.length); });
}

// S10: one seat's round.
function scoreTableau(tableau) {
  const count = (kind) => tableau.filter((slot) => slot.card === kind).length;
  let points = 5 * Math.floor(count('tempura') / 2) + 10 * Math.floor(count('sashimi') / 3);
  points += DUMPLINGS[Math.min(count('dumpling'), 5)];
  for (const slot of tableau) {
    if (slot.card in NIGIRI) points += NIGIRI[slot.card];
    if (slot.card === 'wasabi' && slot.on !== null) points += 3 * NIGIRI[slot.on];
  }
  return points;
}

// S14 (gamewright): most puddings +6 split, fewest -6 split, nothing when all are equal.
function scorePuddings(G, ctx) {
  const counts = seats(ctx).map((seat) => G.puddings[seat]);
  const most = Math.max(...counts);
  const fewest = Math.min(...counts);
  if (most === fewest) return;
  const top = seats(ctx).filter((seat) => G.puddings[seat] === most);
  const bottom = seats(ctx).filter((seat) => G.puddings[seat] === fewest);
  top.forEach((seat) => { G.scores[seat] += split(6, top.length); });
  bottom.forEach((seat) => { G.scores[seat] -= split(6, bottom.length); });
}

function endRound(G, ctx) {
  scoreMaki(G, ctx);
  for (const seat of seats(ctx)) {
    G.scores[seat] += scoreTableau(G.tableaus[seat]);
    G.puddings[seat] += G.tableaus[seat].filter((slot) => slot.card === 'pudding').length;
    G.tableaus[seat] = []; // S3: all but puddings are discarded
  }
  if (G.round === ROUNDS) {
    scorePuddings(G, ctx); // S13
    G.over = true;
    return;
  }
  G.round += 1;
  G.turn = 1;
  deal(G, ctx);
}

// S4: every pick in, all are revealed and placed at once, and the hands pass left.
function reveal(G, ctx) {
  const order = seats(ctx);
  for (const seat of order) {
    place(G.tableaus[seat], G.picks[seat]);
    G.picks[seat] = null;
  }
  const passed = order.map((_, i) => G.hands[order[(i + order.length - 1) % order.length]]);
  order.forEach((seat, i) => { G.hands[seat] = passed[i]; });
  G.turn += 1;
  if (order.every((seat) => G.hands[seat].length === 1)) {
    // S5: the last card of the round is picked for its holder.
    order.forEach((seat) => { place(G.tableaus[seat], G.hands[seat].pop()); });
    endRound(G, ctx);
  }
}

function pick({ G, ctx, playerID }, card) {
  const hand = G.hands[playerID];
  if (G.over || G.picks[playerID] !== null || !hand) return INVALID_MOVE;
  const at = hand.indexOf(card);
  if (at < 0) return INVALID_MOVE;
  hand.splice(at, 1);
  G.picks[playerID] = card;
  if (seats(ctx).every((seat) => G.picks[seat] !== null)) reveal(G, ctx);
  return undefined;
}

const SushiGo = {
  name: 'sushi-go',
  minPlayers: 4,
  maxPlayers: 4,
  setup: ({ ctx, random }) => {
    const G = {
      deck: random.Shuffle(deck()), round: 1, turn: 1, over: false,
      hands: {}, picks: {}, tableaus: {}, scores: {}, puddings: {},
    };
    for (const seat of seats(ctx)) {
      G.tableaus[seat] = [];
      G.scores[seat] = 0;
      G.puddings[seat] = 0;
    }
    deal(G, ctx);
    return G;
  },
  // A seat sees its own hand and pick; of the others only what is on the table.
  playerView: ({ G, playerID }) => ({
    round: G.round,
    turn: G.turn,
    over: G.over,
    hand: G.hands[playerID] ?? null,
    pick: G.picks[playerID] ?? null,
    picked: Object.fromEntries(Object.entries(G.picks).map(([seat, p]) => [seat, p !== null])),
    tableaus: G.tableaus,
    scores: G.scores,
    puddings: G.puddings,
  }),
  turn: { activePlayers: ActivePlayers.ALL },
  moves: {
    pick: { move: pick, client: false, redact: true, ignoreStaleStateID: true },
  },
  endIf: ({ G }) => (G.over ? { scores: G.scores } : undefined),
};

module.exports = { SushiGo };
