// Sequence: the board, your hand, the teams, the score sheet and one line per event.
// Rulings Q1–Q13 are shared/rules/sequence.md; the shapes are Sequence* in openapi.yaml.
// The page is a client of the public API: which cells a card can go on comes from `you.plays`
// (the service's own answer, Q6/Q10/Q11), never from rules re-implemented here.
import { CANCELLED, lifecycleLine, takenOverText } from "../seats.js";
import { h, plural } from "../ui.js";

export const title = "Sequence";

/** Whether the view's seat is the one to move now. */
export const yourTurn = (view) => view.status === "playing" && Boolean(view.you?.your_turn);

const SIZE = 10;
const COLUMNS = "ABCDEFGHIJ";
const CORNER = "XX";
const RANKS = {
  A: "Ace", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven",
  8: "Eight", 9: "Nine", 10: "Ten", J: "Jack", Q: "Queen", K: "King",
};
const SUITS = {
  S: { name: "spades", symbol: "♠", red: false },
  H: { name: "hearts", symbol: "♥", red: true },
  D: { name: "diamonds", symbol: "♦", red: true },
  C: { name: "clubs", symbol: "♣", red: false },
};
// Q3: two-eyed jacks are wild, one-eyed jacks remove a chip.
const TWO_EYED = new Set(["JD", "JC"]);
const ONE_EYED = new Set(["JH", "JS"]);

// Team colours come with a letter and a shape (disc, square, diamond): never colour alone.
const TEAMS = [
  { name: "Blue", letter: "B", shape: "disc" },
  { name: "Green", letter: "G", shape: "square" },
  { name: "Red", letter: "R", shape: "diamond" },
];

// --- names ------------------------------------------------------------------------------------

function parseCard(code) {
  const match = /^(A|[2-9]|10|J|Q|K)([SHDC])$/.exec(code || "");
  return match ? { rank: match[1], suit: match[2] } : null;
}

/** "AH" → "Ace of hearts", "JD" → "Jack of diamonds (two-eyed)", "XX" → "Corner". */
export function cardName(code) {
  if (code === CORNER) return "Corner";
  const card = parseCard(code);
  if (!card) return String(code);
  const name = `${RANKS[card.rank]} of ${SUITS[card.suit].name}`;
  if (TWO_EYED.has(code)) return `${name} (two-eyed)`;
  if (ONE_EYED.has(code)) return `${name} (one-eyed)`;
  return name;
}

/** "AH" → "A♥": the short label drawn on the board and on the cards. */
function cardShort(code) {
  if (code === CORNER) return "★";
  const card = parseCard(code);
  return card ? `${card.rank}${SUITS[card.suit].symbol}` : String(code);
}

const isRed = (code) => Boolean(SUITS[parseCard(code)?.suit]?.red);

/** [3, 5] → "F4": column letter A–J from the left, row number 1–10 from the top (Q1). */
export function cellName(cell) {
  if (!Array.isArray(cell) || cell.length < 2) return "?";
  return `${COLUMNS[cell[1]] ?? cell[1]}${cell[0] + 1}`;
}

function teamName(team) {
  return `team ${TEAMS[team]?.name ?? team + 1}`;
}

const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function seatName(view, seat) {
  const s = view?.seats?.[seat];
  return s?.name || `Seat ${seat + 1}`;
}

function teamOf(view, seat) {
  const s = view?.seats?.[seat];
  if (s && Number.isInteger(s.team)) return s.team;
  const teams = view?.rules?.teams || 2;
  return seat % teams; // Q4
}

function chipMark(team, extra = "") {
  return h("span", { class: `sq-chip sq-team-${team} sq-${TEAMS[team]?.shape ?? "disc"}${extra}`, "aria-hidden": "true" },
    h("span", { class: "sq-chip-letter" }, TEAMS[team]?.letter ?? String(team + 1)));
}

// --- the game in words ------------------------------------------------------------------------

export function describeGame(view) {
  const rules = view.rules || {};
  const players = rules.players ?? view.seats?.length ?? 0;
  const teams = rules.teams ?? view.teams?.length ?? 2;
  const bits = [plural(players, "player")];
  bits.push(players > teams ? `${teams} teams of ${players / teams}` : `${teams} teams`);
  const toWin = view.to_win || (teams === 3 ? 1 : 2); // Q12
  bits.push(`first to ${plural(toWin, "sequence")} wins`);
  bits.push(rules.advanced_jacks ? "advanced jacks" : "standard jacks");
  return bits.join(" · ");
}

function resultText(view) {
  if (view.result === "draw") return "a draw: every seat passed in a row";
  const team = view.winning_team;
  if (team === null || team === undefined) return "";
  return `${teamName(team)} wins`;
}

export function phase(view) {
  if (view.status === "cancelled") return CANCELLED;
  if (view.status === "waiting") {
    const taken = (view.seats || []).filter((s) => s.taken).length;
    return `Waiting for players · ${taken} of ${plural(view.seats?.length ?? 0, "seat")} taken`;
  }
  if (view.status === "over") return `Game over — ${resultText(view) || "finished"}`;
  const seat = view.seat_to_move;
  if (seat === null || seat === undefined) return `Turn ${view.turn}`;
  const team = teamOf(view, seat);
  if (view.you && view.you.seat === seat) return `Turn ${view.turn} · your turn (${teamName(team)})`;
  return `Turn ${view.turn} · ${seatName(view, seat)} (${teamName(team)}) to play`;
}

// --- the board --------------------------------------------------------------------------------

const key = (r, c) => `${r},${c}`;

/** Cell → the team of the completed sequence(s) it belongs to (Q9/Q10: locked chips). */
function sequenceCells(view) {
  const cells = new Map();
  for (const run of view.sequences || []) {
    for (const [r, c] of run.cells || []) cells.set(key(r, c), run.team);
  }
  return cells;
}

/**
 * The cells whose chip changed since the board was last drawn at another version (a chip placed or
 * removed by anyone): the view says where chips are, not what the last move was. One memory per
 * game and per use (the live page, the replay).
 */
const seen = new Map();

function changedCells(view, use) {
  const id = `${use}:${view.game_id ?? ""}`;
  const chips = view.chips || [];
  const before = seen.get(id);
  if (before && before.version === view.version) return before.changed;
  const changed = new Map();
  if (before && view.version > before.version) { // stepping back in a replay marks nothing
    for (let r = 0; r < SIZE; r++) {
      for (let c = 0; c < SIZE; c++) {
        const was = before.chips[r]?.[c] ?? null;
        const now = chips[r]?.[c] ?? null;
        if (was !== now) changed.set(key(r, c), now === null ? "removed" : "placed");
      }
    }
  }
  if (seen.size > 20) seen.clear();
  seen.set(id, { version: view.version, chips, changed });
  return changed;
}

/**
 * The 10×10 board as buttons. `legal` is a Set of "r,c" for the selected card (those buttons are
 * enabled and call `onCell`); `preview` marks cells a card could go on later (not your turn).
 */
function board(view, { legal = new Set(), removing = false, preview = new Set(), onCell = null, onEscape = null, yourTeam = null, changed = new Map() } = {}) {
  const layout = view.board || [];
  const chips = view.chips || [];
  const inSequence = sequenceCells(view);
  const cells = [h("span", { class: "sq-axis sq-axis-corner", "aria-hidden": "true" })];
  for (let c = 0; c < SIZE; c++) cells.push(h("span", { class: "sq-axis sq-axis-col", "aria-hidden": "true" }, COLUMNS[c]));
  for (let r = 0; r < SIZE; r++) {
    cells.push(h("span", { class: "sq-axis sq-axis-row", "aria-hidden": "true" }, String(r + 1)));
    for (let c = 0; c < SIZE; c++) {
      const code = layout[r]?.[c] ?? "";
      const chip = chips[r]?.[c] ?? null;
      const corner = code === CORNER;
      const isLegal = legal.has(key(r, c)) && Boolean(onCell);
      const seqTeam = inSequence.get(key(r, c));
      const words = [cellName([r, c])];
      if (corner) words.push("corner, free for every team (Q9)");
      else words.push(cardName(code));
      if (chip !== null) words.push(`${TEAMS[chip]?.name.toLowerCase() ?? `team ${chip + 1}`} chip${chip === yourTeam ? " (your team)" : ""}`);
      else if (!corner) words.push("empty");
      if (seqTeam !== undefined && !corner) words.push("in a completed sequence");
      const change = changed.get(key(r, c));
      if (change) words.push(change === "removed" ? "chip just removed" : "chip just placed");
      if (isLegal) words.push(removing ? "remove this chip" : "play here");
      // The spoken label starts with what the cell shows (WCAG 2.5.3: "say what you see").
      const shown = corner ? "★" : parseCard(code) ? `${parseCard(code).rank}${SUITS[parseCard(code).suit].symbol}` : code;
      const label = [shown, ...words].join(", ");
      const classes = ["sq-cell"];
      if (corner) classes.push("sq-corner");
      else if (isRed(code)) classes.push("sq-red");
      if (chip !== null) classes.push("sq-has-chip");
      if (seqTeam !== undefined) classes.push("sq-in-seq", `sq-seq-${seqTeam}`);
      if (isLegal) classes.push("legal", removing ? "sq-remove" : "sq-place");
      if (!isLegal && preview.has(key(r, c))) classes.push("sq-preview");
      if (change) classes.push("sq-recent", `sq-just-${change}`);
      const card = parseCard(code);
      cells.push(
        h("button", {
          type: "button",
          class: classes.join(" "),
          disabled: !isLegal,
          "aria-label": label,
          title: label,
          dataset: { row: r, col: c, card: code, chip: chip === null ? "" : chip },
          onclick: isLegal ? () => onCell([r, c]) : null,
        },
        h("span", { class: "sq-label", "aria-hidden": "true" },
          corner ? "★" : card ? [h("span", { class: "sq-rank" }, card.rank), h("span", { class: "sq-suit" }, SUITS[card.suit].symbol)] : code),
        chip !== null ? chipMark(chip, seqTeam !== undefined ? " sq-locked" : "") : null,
        ),
      );
    }
  }
  const grid = h("div", {
    class: `sq-board${legal.size && onCell ? " sq-choosing" : ""}`,
    id: "board",
    role: "group",
    "aria-label": "The board: columns A to J from the left, rows 1 to 10 from the top",
    onkeydown: (event) => navigate(event, onEscape),
  }, cells);
  return h("div", { class: "sq-board-wrap" }, grid);
}

/** Arrow keys move between the enabled cells (the nearest one that way); Escape drops the card. */
function navigate(event, onEscape) {
  const from = event.target.closest?.(".sq-cell");
  if (!from) return;
  if (event.key === "Escape" && onEscape) {
    event.preventDefault();
    onEscape();
    return;
  }
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const open = [...event.currentTarget.querySelectorAll(".sq-cell:not([disabled])")];
  let target = null;
  if (event.key === "Home") target = open[0];
  else if (event.key === "End") target = open[open.length - 1];
  else if (moves[event.key]) {
    const [dr, dc] = moves[event.key];
    const r0 = Number(from.dataset.row);
    const c0 = Number(from.dataset.col);
    let best = Infinity;
    for (const cell of open) {
      const r = Number(cell.dataset.row) - r0;
      const c = Number(cell.dataset.col) - c0;
      const along = r * dr + c * dc;
      if (along <= 0) continue;
      const across = Math.abs(dr ? c : r);
      const cost = along + 3 * across;
      if (cost < best) {
        best = cost;
        target = cell;
      }
    }
  } else return;
  event.preventDefault();
  target?.focus();
}

// --- teams and seats --------------------------------------------------------------------------

function pips(have, need) {
  const out = [];
  for (let i = 0; i < Math.max(need, have); i++) out.push(h("span", { class: `sq-pip${i < have ? " on" : ""}`, "aria-hidden": "true" }));
  return h("span", { class: "sq-pips" }, out);
}

function teamsPanel(view) {
  const toMove = view.status === "playing" ? view.seat_to_move : null;
  const winning = view.status === "over" ? view.winning_team : null;
  const yourTeam = view.you?.team;
  return h("section", { class: "panel sq-panel sq-teams", id: "teams", "aria-labelledby": "sq-teams-title" },
    h("h2", { id: "sq-teams-title" }, "Teams"),
    h("ul", { class: "sq-team-list" }, (view.teams || []).map((t) => {
      const moving = toMove !== null && toMove !== undefined && t.seats.includes(toMove);
      const names = t.seats.map((s) => seatName(view, s) + (view.you?.seat === s ? " (you)" : ""));
      return h("li", {
        class: `sq-team sq-team-row-${t.team}${moving ? " sq-to-move" : ""}${winning === t.team ? " sq-winner" : ""}`,
        dataset: { team: t.team },
      },
      h("div", { class: "sq-team-head" },
        chipMark(t.team),
        h("strong", {}, capital(teamName(t.team))),
        yourTeam === t.team ? h("span", { class: "sq-tag" }, "your team") : null,
        winning === t.team ? h("span", { class: "sq-tag sq-tag-win" }, "winner") : null),
      h("p", { class: "sq-team-score" }, pips(t.sequences, view.to_win || 0),
        ` ${t.sequences} of ${plural(view.to_win || 0, "sequence")}`),
      h("p", { class: "sq-team-names" }, names.join(", ")));
    })),
  );
}

function seatsPanel(view) {
  const toMove = view.status === "playing" ? view.seat_to_move : null;
  return h("section", { class: "panel sq-panel sq-seats", id: "seats", "aria-labelledby": "sq-seats-title" },
    h("h2", { id: "sq-seats-title" }, view.status === "over" ? "Hands at the end" : "Seats in turn order"),
    h("ol", { class: "sq-seat-list" }, (view.seats || []).map((s) => {
      const mine = view.you?.seat === s.seat;
      const moving = toMove === s.seat;
      return h("li", { class: `sq-seat${moving ? " sq-to-move" : ""}${mine ? " sq-mine" : ""}`, dataset: { seat: s.seat } },
        h("div", { class: "sq-seat-head" },
          chipMark(s.team),
          h("span", { class: "sq-seat-name" }, s.name || "open seat", mine ? " (you)" : ""),
          s.bot ? h("span", { class: "sq-tag" }, `${s.bot} bot`) : null,
          takenOverText(s) ? h("span", { class: "sq-tag sq-tag-taken-over" }, takenOverText(s)) : null,
          moving ? h("span", { class: "sq-tag sq-tag-turn" }, "to play") : null),
        h("p", { class: "sq-seat-stats" }, s.taken ? plural(s.hand_size ?? 0, "card") + " in hand" : "waiting for a player"),
        Array.isArray(s.hand) ? miniCards(s.hand) : null);
    })),
  );
}

function miniCards(cards) {
  if (!cards.length) return h("p", { class: "muted" }, "no cards");
  return h("ul", { class: "sq-mini-cards", "aria-label": "Hand" }, cards.map((c) =>
    h("li", { class: `sq-mini${isRed(c) ? " sq-red" : ""}`, title: cardName(c) },
      h("span", { "aria-hidden": "true" }, cardShort(c)),
      h("span", { class: "sq-sr" }, cardName(c)))));
}

function pilesPanel(view) {
  const discard = view.discard_pile || [];
  const last = discard[discard.length - 1];
  return h("section", { class: "panel sq-panel sq-piles", "aria-label": "Cards" },
    h("p", {}, `Draw pile: ${plural(view.draw_pile_size ?? 0, "card")}`,
      ` · discard pile: ${plural(discard.length, "card")}`,
      last ? [" · last: ", h("span", { class: `sq-inline-card${isRed(last) ? " sq-red" : ""}`, title: cardName(last), "aria-hidden": "true" }, cardShort(last)), h("span", { class: "sq-sr" }, cardName(last))] : null),
    view.passes_in_a_row ? h("p", {}, `${plural(view.passes_in_a_row, "seat")} passed in a row (when every seat has, the game is a draw, Q8)`) : null,
  );
}

function helpPanel() {
  return h("details", { class: "panel sq-panel sq-help" },
    h("summary", {}, "How to play"),
    h("ul", {},
      h("li", {}, "On your turn play a card and put a chip on a free cell showing it (each card shows twice, Q1/Q6)."),
      h("li", {}, "Two-eyed jacks (♦ ♣) are wild: any free cell. One-eyed jacks (♥ ♠) remove another team's chip (Q3/Q6)."),
      h("li", {}, "A card whose two cells are both taken is dead: once per turn, before playing, you may discard it for a new one (Q7)."),
      h("li", {}, "Five in a row — across, down or diagonal — is a sequence; the ★ corners count for every team (Q9). Chips in a sequence are locked (Q10)."),
      h("li", {}, "With 2 teams, two sequences win; with 3 teams, one (Q12)."),
    ));
}

function turnBanner(view) {
  let text;
  let kind = "";
  if (view.status === "waiting") text = phase(view);
  else if (view.status === "over") return null; // the result panel above says it (not twice)
  else if (view.you?.your_turn) {
    text = "Your turn";
    kind = " sq-yours";
  } else if (view.seat_to_move !== null && view.seat_to_move !== undefined) {
    const seat = view.seat_to_move;
    const s = view.seats?.[seat];
    text = `Waiting for ${seatName(view, seat)} (${teamName(teamOf(view, seat))})${s?.bot ? `, a ${s.bot} bot,` : ""} to play…`;
  } else text = phase(view);
  return h("p", { class: `sq-banner${kind}`, id: "turn", tabindex: "-1" },
    view.status === "playing" && view.seat_to_move !== null ? chipMark(teamOf(view, view.seat_to_move)) : null,
    h("span", {}, text));
}

// --- your hand --------------------------------------------------------------------------------

/** The move being composed: the selected card of the hand (its code and its place). */
/** The turn a move sent from `view` answers (Sequence: its turn): a move for a turn that is over is
 * refused (409 stale_move), never recorded in the next one. */
export function turnOf(view) {
  return { turn: view.turn };
}

export function newDraft() {
  return { card: null, index: null };
}

function playsOf(view) {
  const plays = new Map();
  for (const p of view.you?.plays || []) plays.set(p.card, p.cells || []);
  return plays;
}

/** Cells a non-jack card could go on later: its empty cells (for the not-your-turn preview). */
function previewCells(view, card) {
  const cells = new Set();
  if (!card || TWO_EYED.has(card) || ONE_EYED.has(card)) return cells;
  (view.board || []).forEach((row, r) => row.forEach((code, c) => {
    if (code === card && (view.chips?.[r]?.[c] ?? null) === null) cells.add(key(r, c));
  }));
  return cells;
}

function listCells(cells) {
  const names = cells.map(cellName);
  if (names.length <= 4) return names.join(", ");
  return `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`;
}

function handPanel(view, draft, { onChange, onMove }) {
  const you = view.you;
  const hand = you.hand || [];
  const plays = playsOf(view);
  const dead = new Set(you.dead_cards || []);
  const yourTurn = Boolean(you.your_turn);
  const select = (card, index) => {
    const same = draft.index === index && draft.card === card;
    draft.card = same ? null : card;
    draft.index = same ? null : index;
    onChange();
  };
  const buttons = hand.map((c, i) => {
    const chosen = draft.index === i;
    const tags = [];
    if (dead.has(c)) tags.push(h("span", { class: "sq-tag sq-tag-dead" }, "dead"));
    else if (TWO_EYED.has(c)) tags.push(h("span", { class: "sq-tag", title: "Two-eyed jack: wild, a chip on any free cell (Q3)" }, "two-eyed"));
    else if (ONE_EYED.has(c)) tags.push(h("span", { class: "sq-tag", title: "One-eyed jack: removes another team's chip (Q3)" }, "one-eyed"));
    return h("button", {
      type: "button",
      class: `sq-card${isRed(c) ? " sq-red" : ""}${dead.has(c) ? " sq-dead" : ""}${chosen ? " sq-chosen" : ""}`,
      "aria-pressed": chosen ? "true" : "false",
      dataset: { card: c, index: i },
      onclick: () => select(c, i),
    },
    h("span", { class: "sq-card-face", "aria-hidden": "true" }, cardShort(c)),
    h("span", { class: "sq-card-name" }, cardName(c).replace(/ \((one|two)-eyed\)$/, "")),
    tags);
  });

  const card = draft.card;
  const cells = card ? plays.get(card) || [] : [];
  const actions = [];
  let hint;
  if (!yourTurn) {
    hint = card
      ? previewCells(view, card).size
        ? `${cardName(card)}: its free cells are marked on the board. Wait for your turn to play it.`
        : `${cardName(card)}: ${TWO_EYED.has(card) ? "wild, any free cell" : ONE_EYED.has(card) ? "removes another team's chip" : "no free cell now"}. Wait for your turn.`
      : `Not your turn: ${seatName(view, view.seat_to_move)} (${teamName(teamOf(view, view.seat_to_move))}) is playing. You can look at your cards meanwhile.`;
  } else if (!card) {
    const deadHeld = hand.filter((c) => dead.has(c));
    hint = "Your turn: choose a card, then a highlighted cell on the board.";
    if (you.can_discard && deadHeld.length) hint += ` You hold a dead card (${[...new Set(deadHeld.map(cardName))].join(", ")}): you may discard it first and draw another (Q7).`;
  } else if (cells.length) {
    hint = ONE_EYED.has(card)
      ? `${cardName(card)}: choose another team's chip to remove (${plural(cells.length, "chip")}: ${listCells(cells)}).`
      : TWO_EYED.has(card)
        ? `${cardName(card)}: wild, choose any free cell (${plural(cells.length, "cell")}).`
        : `${cardName(card)}: choose a highlighted cell (${listCells(cells)}).`;
  } else if (dead.has(card)) {
    hint = `${cardName(card)} is dead: both its cells are taken (Q7).`;
    hint += you.can_discard ? " Discard it to draw another card." : " You have already discarded a card this turn.";
  } else if (ONE_EYED.has(card)) {
    hint = `${cardName(card)}: there is no chip it may remove now (chips in a completed sequence are locked, Q10).`;
  } else {
    hint = `${cardName(card)} cannot be played now.`;
  }

  if (yourTurn && card && dead.has(card) && you.can_discard) {
    actions.push(h("button", {
      type: "button", class: "primary", id: "discard",
      onclick: () => {
        draft.card = null;
        draft.index = null;
        refocus = { after: view.version };
        onMove({ discard: card });
      },
    }, "Discard this dead card"));
  }
  // Q8: with no legal play a seat passes. The service passes by itself for a seat that also has
  // no dead card to discard, so in practice the button shows when a discard is still possible.
  const stuck = yourTurn && Array.isArray(you.plays) && hand.every((c) => !(plays.get(c) || []).length);
  if (stuck) {
    hint = you.can_discard
      ? "None of your cards can be played. Discard a dead card to draw another (Q7), or pass your turn (Q8)."
      : "None of your cards can be played and you cannot discard: pass your turn (Q8).";
    actions.push(h("button", { type: "button", class: "primary", id: "pass", onclick: () => {
      refocus = { after: view.version };
      onMove({ pass: true });
    } }, "Pass"));
  }

  return h("section", { class: `panel sq-panel sq-hand${yourTurn ? " sq-hand-turn" : ""}`, id: "hand", "aria-labelledby": "sq-hand-title" },
    h("h2", { id: "sq-hand-title" }, "Your hand ", h("span", { class: "sq-hand-team" }, "· ", chipMark(you.team), ` ${teamName(you.team)}`)),
    hand.length
      ? h("div", { class: "sq-cards", role: "group", "aria-label": "Cards in your hand" }, buttons)
      : h("p", { class: "muted" }, "No cards left in your hand (Q8: play goes on with smaller hands)."),
    h("p", { class: "sq-hint", id: "hint", "aria-live": "polite" }, hint),
    actions.length ? h("div", { class: "sq-actions" }, actions) : null,
  );
}

// --- the live game ----------------------------------------------------------------------------

export function render(view, draft, { onChange, onMove }) {
  const you = view.you;
  const playing = view.status === "playing";
  const hand = you?.hand || [];
  // A selection is valid only for the card still at that place in the hand.
  if (draft.card !== null && (draft.index === null || hand[draft.index] !== draft.card)) {
    const again = hand.indexOf(draft.card);
    draft.index = again >= 0 ? again : null;
    if (again < 0) draft.card = null;
  }
  const yourTurn = Boolean(playing && you?.your_turn);
  const cells = yourTurn && draft.card ? (playsOf(view).get(draft.card) || []) : [];
  const legal = new Set(cells.map(([r, c]) => key(r, c)));
  const clear = () => {
    draft.card = null;
    draft.index = null;
    onChange();
  };
  const grid = board(view, {
    legal,
    removing: ONE_EYED.has(draft.card),
    preview: playing && you && !yourTurn ? previewCells(view, draft.card) : new Set(),
    yourTeam: you?.team ?? null,
    changed: changedCells(view, "play"),
    onCell: yourTurn
      ? (cell) => {
          const card = draft.card;
          draft.card = null;
          draft.index = null;
          refocus = { after: view.version };
          onMove({ card, cell });
        }
      : null,
    onEscape: draft.card ? () => {
      refocus = { now: true, index: draft.index };
      clear();
    } : null,
  });
  const root = h("div", { class: "sq-game", dataset: { status: view.status } },
    turnBanner(view),
    h("div", { class: "sq-layout" },
      h("div", { class: "sq-main" }, grid),
      h("div", { class: "sq-side" },
        you && playing ? handPanel(view, draft, { onChange, onMove }) : null,
        teamsPanel(view),
        seatsPanel(view),
        view.status !== "waiting" ? pilesPanel(view) : null,
        helpPanel())));
  restoreFocus(root, view);
  return root;
}

/**
 * The board cell that had the focus is disabled once a move is made (or the card dropped): the
 * focus would fall to the page. It goes to your hand instead (or the turn line), once the view
 * after the move is drawn, and only if nothing else has it by then.
 */
let refocus = null;

function restoreFocus(root, view) {
  const want = refocus;
  if (!want || (!want.now && view.version === want.after)) return;
  refocus = null;
  requestAnimationFrame(() => {
    // The view may have been drawn again before this frame (the move's answer and the stream's
    // update can come within one, on a busy machine): the request holds for the page as it is now.
    const live = root.isConnected ? root : document.querySelector(".sq-game:not(.sq-replay)");
    if (!live) return;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected && !active.disabled) return;
    const target = (Number.isInteger(want.index) && live.querySelector(`#hand [data-index="${want.index}"]`))
      || live.querySelector("#hand button:not([disabled])")
      || live.querySelector("#turn");
    target?.focus();
  });
}

// --- replays ----------------------------------------------------------------------------------

export function replayView(view) {
  return h("div", { class: "sq-game sq-replay", dataset: { status: view.status } },
    h("div", { class: "sq-layout" },
      h("div", { class: "sq-main" }, board(view, { changed: changedCells(view, "replay") })),
      h("div", { class: "sq-side" },
        teamsPanel({ ...view, you: undefined }),
        seatsPanel({ ...view, you: undefined }),
        view.status !== "waiting" ? pilesPanel(view) : null)));
}

// --- the score sheet --------------------------------------------------------------------------

/** [[0,9],…,[4,9]] → "J1–J5 (column J)". */
function describeRun(run) {
  const cells = run.cells || [];
  if (!cells.length) return "";
  const first = cells[0];
  const last = cells[cells.length - 1];
  let where = "diagonal";
  if (first[0] === last[0]) where = `row ${first[0] + 1}`;
  else if (first[1] === last[1]) where = `column ${COLUMNS[first[1]]}`;
  const text = `${cellName(first)}–${cellName(last)} (${where}${cells.length > 5 ? `, ${cells.length} cells` : ""})`;
  return run.count > 1 ? `${text}: counts as ${run.count} sequences (Q10)` : text;
}

function sheetResult(sheet) {
  if (sheet.result === "draw") return "A draw: every seat passed in a row (Q8).";
  if (sheet.result === "win" && sheet.winning_team !== null && sheet.winning_team !== undefined) {
    const team = (sheet.teams || []).find((t) => t.team === sheet.winning_team);
    const count = team ? ` with ${plural(team.sequences, "sequence")}` : "";
    return `${capital(teamName(sheet.winning_team))} wins${count} (Q12).`;
  }
  return `In progress: the first team to ${plural(sheet.to_win || 0, "sequence")} wins (Q12).`;
}

/** The game's end in words, at the top of a finished game: the result, then each team's
 * sequences, the winners first. */
export function finalSummary(sheet, view) {
  const teams = [...(sheet.teams || [])].sort((a, b) => (b.team === sheet.winning_team) - (a.team === sheet.winning_team) || b.sequences - a.sequences);
  const mine = view.you && sheet.result === "win" && view.you.team === sheet.winning_team ? " Your team won!" : "";
  return [h("h2", { id: "final-title" }, "Result"),
    h("p", { id: "verdict", class: "summary" }, sheetResult(sheet), mine),
    h("ol", { class: "ranking", id: "ranking" }, teams.map((t) => h("li", { class: t.team === sheet.winning_team ? "winner" : "", dataset: { team: t.team } },
      `${capital(teamName(t.team))} (${(t.names || []).filter(Boolean).join(", ")}): ${plural(t.sequences, "sequence")}`)))];
}

export function scoreSheet(sheet, { onScore } = {}) {
  const winning = sheet.result === "win" ? sheet.winning_team : null;
  const rows = (sheet.teams || []).map((t) => {
    const names = (t.names || []).map((n) => n || "open seat").join(", ");
    const count = String(t.sequences);
    const countCell = onScore
      ? h("button", {
          type: "button",
          class: "linklike",
          dataset: { team: t.team, seat: t.seats[0], category: "sequence" },
          "aria-label": `${capital(teamName(t.team))}: ${plural(t.sequences, "sequence")}. Show where they come from.`,
          onclick: () => onScore("end", t.seats[0], "sequence"),
        }, count)
      : count;
    return h("tr", { class: winning === t.team ? "winner" : "", dataset: { team: t.team } },
      h("th", { scope: "row" }, h("span", { class: "sq-sheet-team" }, chipMark(t.team), capital(teamName(t.team))),
        winning === t.team ? [" ", h("span", { class: "sq-tag sq-tag-win" }, "★ winner")] : null),
      h("td", { dataset: { label: "Players" } }, names),
      h("td", { class: "sq-num", dataset: { label: "Sequences" } }, h("span", {}, countCell, h("span", { class: "muted" }, ` / ${sheet.to_win}`))),
      h("td", { dataset: { label: "Runs" } }, t.runs?.length
        ? h("ul", { class: "sq-runs" }, t.runs.map((run) => h("li", {}, describeRun(run))))
        : h("span", { class: "muted" }, "none")));
  });
  return h("div", { class: "score-sheet sq-sheet", id: "score-sheet", tabindex: 0, role: "group", "aria-label": "Score sheet" },
    h("p", { class: "sq-sheet-result", id: "result" }, sheetResult(sheet)),
    h("div", { class: "sq-table-scroll" },
      h("table", { class: "sheet totals", id: "totals" },
        h("caption", {}, "Sequences per team"),
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Team"),
          h("th", { scope: "col" }, "Players"),
          h("th", { scope: "col" }, "Sequences"),
          h("th", { scope: "col" }, "Runs on the board"))),
        h("tbody", {}, rows))),
  );
}

// --- events -----------------------------------------------------------------------------------

function who(view, seat) {
  if (!Number.isInteger(seat)) return "Someone";
  return seatName(view, seat);
}

function byWhom(data) {
  if (data?.by === "clock") return " (out of time: the service moved for them)";
  if (data?.by === "resigned" || data?.by === "stalled") return " (the greedy bot, for them)";
  return "";
}

function drewText(data) {
  return typeof data?.drawn === "string" ? ` and drew the ${cardName(data.drawn)}` : "";
}

export function describeEvent(view, record) {
  const data = record?.data || {};
  switch (record?.type) {
    case "game_created": {
      const rules = data.rules || {};
      return rules.players ? `The game was created: ${plural(rules.players, "player")} in ${rules.teams ?? 2} teams${rules.advanced_jacks ? ", advanced jacks" : ""}` : "The game was created";
    }
    case "seat_taken":
      return `${data.name || who(view, data.seat)} took seat ${Number.isInteger(data.seat) ? data.seat + 1 : "?"}${Number.isInteger(data.seat) ? ` (${teamName(teamOf(view, data.seat))})` : ""}`;
    case "game_started":
      return "The game started";
    case "cards_dealt": {
      const size = data.hand_sizes?.[0] ?? data.hands?.find((hand) => Array.isArray(hand))?.length;
      return size ? `The cards were dealt: ${plural(size, "card")} each` : "The cards were dealt";
    }
    case "card_played": {
      const name = who(view, data.seat);
      const card = data.card ? `the ${cardName(data.card)}` : "a card";
      if (data.removed) return `${name} removed the chip on ${cellName(data.removed)} with ${card}${drewText(data)}${byWhom(data)}`;
      if (data.cell) return `${name} played ${card} on ${cellName(data.cell)}${drewText(data)}${byWhom(data)}`;
      return `${name} played ${card}${byWhom(data)}`;
    }
    case "dead_card_discarded":
      return `${who(view, data.seat)} discarded a dead ${data.card ? cardName(data.card) : "card"}${drewText(data)}${byWhom(data)}`;
    case "turn_passed":
      return `${who(view, data.seat)} passed${data.auto ? " (no card could be played)" : ""}${byWhom(data)}`;
    case "sequence_completed": {
      const team = Number.isInteger(data.team) ? data.team : teamOf(view, data.seat);
      const toWin = view?.to_win;
      let total = "";
      if (Number.isInteger(data.count)) {
        total = toWin && data.count <= toWin ? ` (${data.count} of ${toWin})` : ` (${plural(data.count, "sequence")} now)`;
      }
      return `${capital(teamName(team))} completed a sequence${total}`;
    }
    case "deck_reshuffled":
      return `The discard pile${Array.isArray(data.cards) ? ` (${plural(data.cards.length, "card")})` : ""} was shuffled into a new draw pile (Q8)`;
    case "game_ended":
      if (data.result === "draw") return "The game ended in a draw: every seat passed in a row (Q8)";
      return Number.isInteger(data.team) ? `The game ended: ${teamName(data.team)} wins` : "The game ended";
    default:
      return lifecycleLine(record, (seat) => who(view, seat));
  }
}
