// Sushi Go!: the play view, the table (tableaux, dummy), and the score sheet.
import { CANCELLED, lifecycleLine, takenOverText } from "../seats.js";
import { h, plural } from "../ui.js";
import { FACES, NIGIRI_POINTS, art } from "./sushigo-faces.js";

const CARD_NAMES = {
  tempura: "Tempura",
  sashimi: "Sashimi",
  dumpling: "Dumpling",
  maki_1: "Maki roll (1)",
  maki_2: "Maki roll (2)",
  maki_3: "Maki roll (3)",
  egg_nigiri: "Egg nigiri",
  salmon_nigiri: "Salmon nigiri",
  squid_nigiri: "Squid nigiri",
  wasabi: "Wasabi",
  pudding: "Pudding",
  chopsticks: "Chopsticks",
};

const CATEGORY_NAMES = {
  maki: "Maki",
  tempura: "Tempura",
  sashimi: "Sashimi",
  dumpling: "Dumpling",
  nigiri: "Nigiri",
  wasabi: "Wasabi",
  pudding: "Pudding",
};

// Cards per scoring set, for the progress shown on a tableau (S10).
const SETS = { tempura: 2, sashimi: 3 };
const ORDER = ["maki_3", "maki_2", "maki_1", "tempura", "sashimi", "dumpling", "egg_nigiri", "salmon_nigiri", "squid_nigiri", "pudding", "chopsticks", "wasabi"];

// The edition's own names (the view's card_names: zoch prints mussels and tuna nigiri).
let printed = {};

/** Take the names the view's edition prints on its cards. */
function useEdition(view) {
  printed = view?.card_names || printed;
}

export const cardName = (card) => {
  const own = printed[card];
  if (own && own !== card) return own.charAt(0).toUpperCase() + own.slice(1).replace(/_/g, " ");
  return CARD_NAMES[card] || card;
};
const isNigiri = (card) => card.endsWith("_nigiri");
// The picture of the card the edition prints (zoch's tuna nigiri and mussels have their own).
const picture = (card) => art(printed[card] || card);

function face(kind, text = FACES[kind] || "") {
  return h("small", { class: "face" }, text);
}

/** A card: its face (drawn), its name, then its value and set rule. */
function card(kind, attrs = {}, extra = null, rule = undefined) {
  const { class: more, ...rest } = attrs;
  return h("span", { class: `card sg-${kind}${more ? ` ${more}` : ""}`, ...rest }, picture(kind), h("span", { class: "name" }, cardName(kind)), extra, face(kind, rule));
}

function cardList(cards) {
  if (!cards.length) return h("span", { class: "muted" }, "none");
  return h("span", { class: "cards" }, cards.map((c) => card(c)));
}

export function describeGame(view) {
  const rules = view.rules;
  const bits = [`${rules.edition === "zoch" ? "Zoch" : "Gamewright"} edition`, plural(rules.players, "player")];
  if (rules.dummy) bits.push("with the dummy");
  if (rules.pass_direction === "alternate") bits.push("hands pass left then right");
  return bits.join(" · ");
}

export const title = "Sushi Go!";

/** Whether the view's seat has a pick to make now (the tab's title says so in the background). */
export const yourTurn = (view) => view.status === "playing" && Boolean(view.you?.hand?.length && !view.you.pick);

export function phase(view) {
  if (view.status === "waiting") return "Waiting for players";
  if (view.status === "cancelled") return CANCELLED;
  if (view.status === "over") {
    const names = (view.winners || []).map((seat) => seatName(view, seat));
    return `Game over — ${names.length > 1 ? `shared win: ${names.join(" and ")}` : `${names[0]} wins`}`;
  }
  const waiting = view.seats.filter((s) => !s.picked).map((s) => s.name);
  return `Round ${view.round} of 3 · turn ${view.turn} · waiting for ${waiting.join(", ") || "the reveal"}`;
}

function seatName(view, seat) {
  if (seat === "dummy" || seat === view.rules.players) return "The dummy";
  const s = view.seats[seat];
  return s?.name || `Seat ${seat + 1}`;
}

// --- the table --------------------------------------------------------------------------------

/** The "just revealed" mark of a card (issue 29): an outline that stays until the next reveal,
 * a brief animation unless the person prefers reduced motion, and "new" in words. */
const NEW = () => h("span", { class: "new" }, "new");

function tableau(t, fresh = null) {
  // Grouped by kind, with how far the next set is. A nigiri that went onto a wasabi (S8/S9) is
  // drawn on the oldest free wasabi; which copies went on one is read from on_wasabi in order.
  // `fresh`: what the last reveal added, {plain, dipped} (kind → count; dipped: onto a wasabi).
  const plain = new Map(fresh?.plain || []);
  const dippedNew = new Map(fresh?.dipped || []);
  const take = (left, kind) => (left.get(kind) > 0 ? (left.set(kind, left.get(kind) - 1), true) : false);
  const dipped = [...t.on_wasabi];
  const free = [];
  const stacks = [];
  const counts = new Map();
  const wasabis = t.cards.filter((c) => c === "wasabi").length;
  let wasabiSeen = 0;
  const freshWasabi = plain.get("wasabi") || 0;
  for (const c of t.cards) {
    if (c === "wasabi") {
      wasabiSeen += 1;
      const mark = wasabiSeen > wasabis - freshWasabi;
      const slot = h("span", { class: "stack" }, card("wasabi", { class: mark ? "fresh" : null, dataset: { kind: "wasabi" } }, mark ? NEW() : null));
      free.push(slot);
      stacks.push(slot);
    } else if (isNigiri(c) && free.length && dipped.includes(c)) {
      dipped.splice(dipped.indexOf(c), 1);
      const points = 3 * NIGIRI_POINTS[c];
      free.shift().append(card(c, { class: "on-wasabi", title: `${cardName(c)} on a wasabi: triple points, ${points} (S8)`, dataset: { kind: c, wasabi: "on" } },
        " on wasabi", `${NIGIRI_POINTS[c]} × 3 = ${points}`));
    } else {
      counts.set(c, (counts.get(c) || 0) + 1);
    }
  }
  // Nigiri on a wasabi: the latest copies of a fresh kind are this reveal's.
  for (const slot of [...stacks].reverse()) {
    const dip = slot.querySelector(".on-wasabi");
    if (dip && take(dippedNew, dip.dataset.kind)) dip.classList.add("fresh"), dip.append(NEW());
  }
  const groups = ORDER.filter((k) => counts.has(k)).map((k) => {
    const n = counts.get(k);
    const size = SETS[k];
    const progress = size ? ` (${Math.floor(n / size) ? `${plural(Math.floor(n / size), "set")}, ` : ""}${n % size}/${size})` : "";
    const mark = take(plain, k);
    return card(k, { class: mark ? "fresh" : null, dataset: { kind: k, count: n } }, [h("span", { class: "count" }, `${n > 1 ? ` ×${n}` : ""}${progress}`), mark ? NEW() : null]);
  });
  const shown = [...groups, ...stacks];
  return shown.length ? h("div", { class: "cards" }, shown) : h("p", { class: "muted" }, "Nothing on the table");
}

function seatPanel(view, s, you, reveal) {
  const status =
    view.status !== "playing" ? null : s.picked ? h("span", { class: "badge done" }, "picked") : h("span", { class: "badge wait" }, "choosing…");
  const bot = s.bot && !(s.name || "").includes("bot") ? ` (${s.bot} bot)` : "";
  const over = takenOverText(s);
  const label = [s.name || "open seat", bot, over ? ` (${over})` : "", you?.seat === s.seat ? " — you" : ""].join("");
  return h(
    "section",
    { class: `seat${you?.seat === s.seat ? " mine" : ""}`, "aria-label": `Seat ${s.seat + 1}: ${label}`, dataset: { seat: s.seat } },
    h("header", {}, h("h3", {}, label), status),
    h("p", { class: "stats" }, `Score ${s.score} · ${plural(s.puddings, "pudding")} · ${plural(s.hand_size, "card")} in hand`),
    tableau(shownTableau(view, s.seat, s.tableau), reveal?.fresh.get(s.seat)),
    s.hand?.length ? h("p", {}, "Hand: ", cardList(s.hand)) : null,
    s.pick ? h("p", {}, "Pick: ", cardList(s.pick.cards)) : null,
  );
}

function dummyPanel(view, reveal) {
  const d = view.dummy;
  if (!d) return null;
  const controller = d.controller === null ? "" : ` · controlled by ${seatName(view, d.controller)} this turn`;
  return h(
    "section",
    { class: "seat dummy", "aria-label": "The dummy", dataset: { seat: "dummy" } },
    h("header", {}, h("h3", {}, "Dummy")),
    h("p", { class: "muted small" }, "A card-less third player: each turn one of you, in turn, gives it a card from your hand. It scores, but cannot win (", h("a", { href: "#/rules/sushi-go/S17" }, "S17"), ")."),
    h("p", { class: "stats" }, `Score ${d.score} · ${plural(d.puddings, "pudding")} · ${d.pile_size} cards in its pile${controller}`),
    tableau(shownTableau(view, view.rules.players, d.tableau), reveal?.fresh.get(view.rules.players)),
  );
}

/** Once the game is over, its table is the one the last reveal left (last_round), not the
 * emptied one: the cards the final round scored stay in view with the ranking. */
function shownTableau(view, seat, current) {
  if (view.status !== "over" || !view.last_round) return current;
  return view.last_round.seats.find((s) => s.seat === seat)?.tableau ?? current;
}

function table(view, reveal = null) {
  return h(
    "div",
    { class: "table", id: "table" },
    view.seats.map((s) => seatPanel(view, s, view.you, reveal)),
    dummyPanel(view, reveal),
  );
}

// --- what a reveal did (issue 29) -------------------------------------------------------------

// What the page saw each reveal do, by "round:turn": per seat, the nigiri that went onto a
// wasabi and those kept off a free one (the event says what was picked, not where it went).
const REVEALS = new Map();

const counted = (cards) => cards.reduce((m, c) => m.set(c, (m.get(c) || 0) + 1), new Map());

/** What the reveal(s) between two views of one game did: per seat, the cards added ({plain,
 * dipped}: kind → count) and, if exactly one turn was revealed, which nigiri went onto a wasabi
 * (remembered for its log line). Null if nothing was revealed. */
export function revealOf(before, after) {
  if (!before || before.status !== "playing" || after.version <= before.version) return null;
  const ended = after.round !== before.round || after.status === "over";
  if (!ended && after.turn === before.turn) return null;
  const last = ended ? after.last_round : null;
  if (ended && last?.round !== before.round) return null;
  const tableauOf = (seat) =>
    ended ? last.seats.find((s) => s.seat === seat)?.tableau : seat < after.rules.players ? after.seats[seat].tableau : after.dummy?.tableau;
  const seats = [...before.seats.map((s) => [s.seat, s.tableau]), ...(before.dummy ? [[before.rules.players, before.dummy.tableau]] : [])];
  const one = ended ? true : after.turn === before.turn + 1;
  const fresh = new Map();
  const wasabi = new Map();
  for (const [seat, was] of seats) {
    const now = tableauOf(seat);
    if (!now) continue;
    const added = counted(now.cards);
    for (const [kind, n] of counted(was.cards)) added.set(kind, (added.get(kind) || 0) - n);
    const dipped = counted(now.on_wasabi.slice(was.on_wasabi.length));
    const plain = new Map([...added].filter(([, n]) => n > 0).map(([kind, n]) => [kind, n - (dipped.get(kind) || 0)]));
    fresh.set(seat, { plain, dipped });
    // The free wasabi before this turn's cards; describePick places them in the pick's order
    // (S8/S9), so two nigiri of a kind, one onto the wasabi, read as one on and one off.
    wasabi.set(seat, { free: was.cards.filter((c) => c === "wasabi").length - was.on_wasabi.length, dipped });
  }
  if (one) REVEALS.set(`${before.round}:${before.turn}`, wasabi);
  return { round: before.round, turn: before.turn, fresh };
}

// --- your hand and your pick ------------------------------------------------------------------

/** The pick being composed: cards in order (two with chopsticks), the dummy's card, wasabi. */
/** The turn a move sent from `view` answers (Sushi Go!: its round and turn): a move for a turn that is over is
 * refused (409 stale_move), never recorded in the next one. */
export function turnOf(view) {
  return { round: view.round, turn: view.turn };
}

export function newDraft() {
  return { cards: [], chopsticks: false, dummy: null, wasabi: {} };
}

/** The live game: every seat's table, then your hand (if you have a seat and it is playing). */
export function render(view, draft, { onChange, onMove, reveal = null, revealed = null }) {
  useEdition(view);
  // The hand, then the table its picks land on; how to play, for reference, after them. With a
  // hand ("with-hand"), a laptop sets the reveal line and the player's own table beside the hand,
  // the other seats under both (style.css): the reveal's marks on the player's table stay above
  // the fold however tall it grows in a round (issue 39, item 11).
  const yours = hand(view, draft, { onChange, onMove });
  return h("div", { class: `sushigo${yours ? " with-hand" : ""}` }, yours, h("h2", { class: "visually-hidden" }, "The table"),
    revealLine(view, revealed), table(view, reveal), howToPlay(view));
}

/** The last reveal in words, above the table (`revealed`: its turn_revealed record). */
function revealLine(view, record) {
  const shown = record && view.status === "playing" && record.data.round === view.round;
  return h("p", { class: "reveal-line", id: "reveal-line", "aria-live": "polite", hidden: !shown }, shown ? describeEvent(view, record) : "");
}

/** A finished game at some version (replay): everything is public, nothing to pick. */
export function replayView(view) {
  useEdition(view);
  return table(view);
}

const rule = (code) => h("a", { href: `#/rules/sushi-go/${code}` }, code);

/** How to play, for the view's edition and variant; every rule links to its ruling. */
function howToPlay(view) {
  const zoch = view.rules.edition === "zoch";
  return h("details", { class: "panel how", id: "how-to-play" },
    h("summary", {}, "How to play"),
    h("ul", {},
      h("li", {}, "Everyone keeps one card from their hand at the same time; the cards are shown together and the rest of each hand passes on (", rule("S4"), ", ", rule("S5"), ")."),
      h("li", {}, "Chopsticks: on a later turn, take two cards instead of one; the chopsticks go back into the hand you pass (", rule("S6"), ")."),
      h("li", {}, zoch ? "Wasabi: your next nigiri may go onto it for triple points; you may also keep it off (" : "Wasabi: your next nigiri goes onto it and scores triple (", rule(zoch ? "S9" : "S8"), ")."),
      h("li", {}, "At the end of each round: maki by most icons, tempura by pairs, sashimi by threes, dumplings by how many, nigiri by kind (", rule("S10"), ", ", rule(zoch ? "S12" : "S11"), "). The values are on each card."),
      h("li", {}, "Puddings stay until the end of the third round: most and fewest score (", rule(zoch ? "S15" : "S14"), "). The highest total wins; a tie goes to the most puddings (", rule("S16"), ")."),
      view.rules.dummy ? h("li", {}, "The dummy: each turn one of you, in turn, also gives it a card from your hand. It scores like a player but cannot win (", rule("S17"), ").") : null,
      zoch ? h("li", {}, "Zoch names: mussels are dumplings, tuna nigiri are squid nigiri.") : null),
    h("p", {}, h("a", { href: "#/rules/sushi-go" }, "All the rulings")));
}

function hand(view, draft, { onChange, onMove }) {
  const you = view.you;
  if (!you) return null;
  if (view.status !== "playing") return null;
  if (you.pick) {
    return h(
      "section",
      { class: "hand", id: "hand", "aria-label": "Your hand" },
      h("h2", {}, "Your hand"),
      h("p", { class: "waiting", id: "your-pick" }, "You picked ", cardList(you.pick.cards),
        you.pick.dummy_card ? [" and ", card(you.pick.dummy_card), " for the dummy"] : null,
        ". Waiting for the others…"),
      h("div", { class: "cards" }, you.hand.map((c) => card(c))),
    );
  }
  const max = draft.chopsticks ? 2 : 1;
  const chosen = (i) => draft.cards.indexOf(i);
  const ready = () => draft.cards.length === max && (!you.controls_dummy || draft.dummy !== null);
  const toggle = (i) => {
    const order = chosen(i);
    if (order >= 0) draft.cards.splice(order, 1);
    else if (draft.dummy === i) draft.dummy = null;
    else if (draft.cards.length < max) draft.cards.push(i);
    else if (you.controls_dummy && draft.dummy === null) draft.dummy = i;
    else draft.cards = [...draft.cards.slice(1), i];
  };
  // The keyboard: arrow keys (Home, End) move along the hand; Enter chooses a card, and Enter on
  // a chosen card picks once the choice is complete (Space only chooses, as a button does).
  const onkeydown = (event, i) => {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    const cards = [...event.currentTarget.parentElement.querySelectorAll("button.pickable")];
    if (step) {
      event.preventDefault();
      cards[(i + step + cards.length) % cards.length]?.focus();
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      cards[event.key === "Home" ? 0 : cards.length - 1]?.focus();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (chosen(i) < 0 && draft.dummy !== i) {
        toggle(i);
        onChange();
      } else if (ready()) onMove(pickBody(view, draft));
    }
  };
  const buttons = you.hand.map((c, i) => {
    const order = chosen(i);
    return h(
      "button",
      {
        type: "button",
        class: `card sg-${c} pickable${order >= 0 ? " chosen" : ""}${draft.dummy === i ? " for-dummy" : ""}`,
        "aria-pressed": order >= 0 ? "true" : "false",
        dataset: { card: c, index: i },
        onclick: () => {
          toggle(i);
          onChange();
        },
        onkeydown: (event) => onkeydown(event, i),
      },
      picture(c),
      h("span", { class: "name" }, cardName(c)),
      face(c),
      order >= 0 && max > 1 ? h("span", { class: "order" }, ` #${order + 1}`) : null,
      draft.dummy === i ? h("span", { class: "order" }, " (dummy)") : null,
    );
  });
  const options = [];
  // S6: chopsticks take two cards; the dummy's controller needs a third for the dummy (S17).
  if (you.chopsticks_available && you.hand.length >= (you.controls_dummy ? 3 : 2)) {
    options.push(
      h("label", { class: "check" },
        h("input", {
          type: "checkbox", id: "use-chopsticks", checked: draft.chopsticks,
          onchange: (e) => {
            draft.chopsticks = e.target.checked;
            if (!draft.chopsticks) draft.cards = draft.cards.slice(0, 1);
            onChange();
          },
        }),
        " Use chopsticks: take two cards this turn (the chopsticks go back into the hand you pass)"),
    );
  }
  if (you.controls_dummy) {
    options.push(
      h("label", { class: "field" }, "Card for the dummy ",
        h("select", {
          id: "dummy-card",
          onchange: (e) => {
            draft.dummy = e.target.value === "" ? null : Number(e.target.value);
            draft.cards = draft.cards.filter((i) => i !== draft.dummy);
            onChange();
          },
        },
        h("option", { value: "" }, "— choose —"),
        you.hand.map((c, i) => draft.cards.includes(i) ? null : h("option", { value: i, selected: draft.dummy === i }, cardName(c))))),
    );
  }
  if (view.rules.edition === "zoch") {
    // S9: the choice exists only when a wasabi is free: one on your table without a nigiri,
    // or one you place before this nigiri in the same pick (chopsticks).
    const own = view.seats[you.seat]?.tableau;
    let free = own ? own.cards.filter((c) => c === "wasabi").length - own.on_wasabi.length : 0;
    draft.cards.forEach((i) => {
      const c = you.hand[i];
      if (c === "wasabi") free += 1;
      if (!isNigiri(c) || free <= 0) return;
      if (draft.wasabi[i] !== false) free -= 1;
      const on = draft.wasabi[i] !== false;
      options.push(
        h("label", { class: "check" },
          h("input", { type: "checkbox", class: "use-wasabi", checked: on, dataset: { index: i },
            onchange: (e) => { draft.wasabi[i] = e.target.checked; onChange(); } }),
          ` Put the ${cardName(c)} on your free wasabi (triple points: ${3 * NIGIRI_POINTS[c]})`),
      );
    });
  }
  const summary = draft.cards.length
    ? ["Your pick: ", draft.cards.map((i) => cardName(you.hand[i])).join(" then "), draft.dummy !== null ? `; for the dummy: ${cardName(you.hand[draft.dummy])}` : ""]
    : [you.controls_dummy ? "Choose your card, then one for the dummy." : draft.chopsticks ? "Choose two cards, in the order to place them." : "Choose a card to keep."];
  return h(
    "section",
    { class: "hand", id: "hand", "aria-label": "Your hand" },
    h("h2", {}, "Your hand"),
    you.controls_dummy
      ? h("p", { class: "dummy-note", id: "dummy-note" }, `You hold ${plural(you.hand.length, "card")}: you control the dummy this turn, so the top card of its pile was added to your hand (`,
          h("a", { href: "#/rules/sushi-go/S17" }, "S17"), "). Keep one card and give another to the dummy; the rest passes on.")
      : null,
    h("div", { class: "cards", role: "group", "aria-label": "Cards in your hand (arrow keys move, Enter picks)" }, buttons),
    options.length ? h("div", { class: "options" }, options) : null,
    h("p", { class: "summary", "aria-live": "polite" }, summary),
    h("button", { type: "submit", class: "primary", id: "pick", disabled: !ready(), onclick: () => onMove(pickBody(view, draft)) }, draft.cards.length === 2 ? "Pick these cards" : "Pick this card"),
  );
}

function pickBody(view, draft) {
  const hand = view.you.hand;
  const body = { cards: draft.cards.map((i) => hand[i]) };
  if (draft.dummy !== null) body.dummy_card = hand[draft.dummy];
  // S9: only a nigiri may go onto a wasabi; the service refuses true for another card.
  if (view.rules.edition === "zoch") body.use_wasabi = draft.cards.map((i) => isNigiri(hand[i]) && draft.wasabi[i] !== false);
  return body;
}

// --- the log ----------------------------------------------------------------------------------

/** The pick's cards as placed, in its order (S8/S9): a wasabi frees one for a nigiri after it,
 * a nigiri goes onto a free wasabi unless its use_wasabi is false (zoch). "Onto" is said only as
 * many times as the table showed nigiri of that kind go onto a wasabi, "kept off" only while a
 * wasabi was free (issue 39, item 10: two salmon with chopsticks and one wasabi were both "onto"). */
function placedCards(p, seen) {
  if (!seen) return p.cards.map(cardName);
  let free = seen.free;
  const dipped = new Map(seen.dipped);
  return p.cards.map((c, i) => {
    if (c === "wasabi") free += 1;
    if (!isNigiri(c) || free <= 0) return cardName(c);
    if (p.use_wasabi?.[i] === false || !dipped.get(c)) return `${cardName(c)}, kept off the wasabi`;
    dipped.set(c, dipped.get(c) - 1);
    free -= 1;
    return `${cardName(c)} onto the wasabi (scores ${3 * NIGIRI_POINTS[c]})`;
  });
}

function describePick(view, p, seen) {
  const cards = placedCards(p, seen).join(" and ");
  const extra = p.chopsticks ? " with chopsticks" : "";
  const dummy = p.dummy_card ? `, and ${cardName(p.dummy_card)} for the dummy` : "";
  return `${seatName(view, p.seat)} took ${cards}${extra}${dummy}`;
}

/** One line for an event of the log, or null for the bookkeeping ones. */
export function describeEvent(view, record) {
  useEdition(view);
  const d = record.data || {};
  switch (record.type) {
    case "seat_taken":
      return `${d.name} sat down at seat ${d.seat + 1}`;
    case "game_started":
      return "The game started";
    case "round_dealt":
      return `Round ${d.round}: hands dealt`;
    case "card_picked":
      if (d.by === "resigned" || d.by === "stalled") return null; // the seat is the greedy bot's
      return d.by ? `${seatName(view, d.seat)}: picked by the ${d.by}` : null;
    case "turn_revealed":
      return `Turn ${d.turn} revealed — ${(d.picks || []).map((p) => describePick(view, p, REVEALS.get(`${d.round}:${d.turn}`)?.get(p.seat))).join("; ")}`;
    case "round_scored":
      return `Round ${d.round} scored — ${(d.scores || []).map((s) => `${seatName(view, s.seat)}: ${s.total}`).join(", ")}`;
    case "game_ended":
      return "The game ended";
    default:
      return lifecycleLine(record, (seat) => seatName(view, seat));
  }
}

// --- the score sheet --------------------------------------------------------------------------

function roundTable(r, categories, cell = (round, row, category) => h("td", {}, category === "total" ? String(row.total) : categoryCell(category, row[category]))) {
  return h("table", { class: "sheet", dataset: { round: r.round } },
    h("caption", {}, `Round ${r.round}`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Player"), categories.map((c) => h("th", { scope: "col" }, c === "dumpling" ? cardName(c) : CATEGORY_NAMES[c] || c)), h("th", { scope: "col" }, "Round total"))),
    h("tbody", {}, r.seats.map((row) => h("tr", { dataset: { seat: row.seat } }, h("th", { scope: "row" }, row.name), categories.map((c) => cell(r.round, row, c)), cell(r.round, row, "total")))),
  );
}

/** The table as the round's last reveal left it (the view's last_round): the cards each seat
 * scored with, while the view's own table is already the next round's. */
function lastReveal(view, round) {
  const last = view.last_round;
  if (!last || last.round !== round) return null;
  const name = (seat) => (seat >= view.rules.players ? "Dummy" : seatName(view, seat));
  return h("div", { class: "table last-reveal", id: "last-reveal", role: "group", "aria-label": `The table at the end of round ${round}` },
    last.seats.map((s) => h("section", { class: "seat", dataset: { seat: s.seat }, "aria-label": `${name(s.seat)} at the end of round ${round}` },
      h("header", {}, h("h3", {}, name(s.seat)), h("span", { class: "badge done" }, `+${plural(s.points, "point")}`)),
      tableau(s.tableau))));
}

/** What a round's end gave each seat (the API's score sheet), its maki standings and the
 * puddings kept so far (the view): shown before play goes on. */
export function roundSummary(sheet, round, view) {
  const r = sheet.rounds.find((x) => x.round === round);
  if (!r) return null;
  const categories = sheet.categories.filter((c) => c !== "pudding");
  const maki = [...r.seats].sort((a, b) => (b.maki?.icons ?? 0) - (a.maki?.icons ?? 0));
  const puddings = [...view.seats.map((s) => [s.name, s.puddings]), ...(view.dummy ? [["Dummy", view.dummy.puddings]] : [])];
  return [
    h("h2", {}, `Round ${round} scored`),
    lastReveal(view, round),
    h("div", { class: "score-sheet", tabindex: 0, role: "group", "aria-label": `Round ${round} points` }, roundTable(r, categories)),
    // Words, not a run of names and numbers ("greedy bot 1 8 icons → 6" read as noise).
    h("p", { class: "maki-standings" }, "Maki standings: ",
      maki.map((row) => `${row.name}: ${plural(row.maki?.icons ?? 0, "icon")}, ${plural(row.maki?.points ?? 0, "point")}`).join("; ")),
    round < 3 ? h("p", { class: "puddings-so-far" }, "Puddings kept for the end: ", puddings.map(([name, n]) => `${name}: ${n}`).join("; ")) : null,
  ];
}

/** The game's end in words: the ranking, the pudding points and how a tie was broken (S16). */
export function finalSummary(sheet, view) {
  const players = view.rules.players; // seats past these are the dummy's (it cannot win, S17)
  const puddings = new Map((sheet.puddings || []).map((p) => [p.seat, p]));
  const ranking = [...sheet.totals].sort((a, b) => b.total - a.total || (puddings.get(b.seat)?.count ?? 0) - (puddings.get(a.seat)?.count ?? 0));
  const winners = new Set(sheet.winners || []);
  const line = (t) => {
    const p = puddings.get(t.seat);
    // "(1 pudding: −3 points)", not "(puddings: 1, -3)"
    const pudding = p ? ` (${plural(p.count, "pudding")}: ${p.points > 0 ? "+" : p.points < 0 ? "−" : ""}${plural(Math.abs(p.points), "point")})` : "";
    const dummy = t.seat >= players ? " — the dummy cannot win (S17)" : "";
    return h("li", { dataset: { seat: t.seat }, class: winners.has(t.seat) ? "winner" : "" }, `${t.name}: ${plural(t.total, "point")}${pudding}${dummy}`);
  };
  return [h("h2", { id: "final-title" }, "Final ranking"), h("p", { id: "verdict", class: "summary" }, verdict(sheet, players, puddings)), h("ol", { class: "ranking", id: "ranking" }, ranking.map(line))];
}

function verdict(sheet, players, puddings) {
  const seats = sheet.totals.filter((t) => t.seat < players);
  const best = Math.max(...seats.map((t) => t.total));
  const tied = seats.filter((t) => t.total === best);
  const names = (list) => list.map((t) => t.name).join(" and ");
  const winners = seats.filter((t) => (sheet.winners || []).includes(t.seat));
  if (tied.length === 1) return `${names(winners)} wins with ${plural(best, "point")}.`;
  const count = (t) => puddings.get(t.seat)?.count ?? 0;
  if (winners.length === 1) {
    const others = tied.filter((t) => t.seat !== winners[0].seat).map(count);
    return `${names(tied)} tie on ${plural(best, "point")}; ${winners[0].name} wins on puddings, ${count(winners[0])} to ${others.join(" and ")} (S16).`;
  }
  return `${names(winners)} tie on ${plural(best, "point")} and on puddings (${count(winners[0])} each): a shared win (S16).`;
}

function categoryCell(category, entry) {
  if (!entry) return "";
  const detail = [];
  if ("icons" in entry) detail.push(plural(entry.icons, "icon"));
  else if ("count" in entry) detail.push(`${entry.count}×`);
  return `${entry.points}${detail.length ? ` (${detail.join(", ")})` : ""}`;
}

/**
 * The score sheet: one table per round (seats × categories), puddings, totals, winners.
 * `onScore(round, seat, category)` makes each number a button (the replay shows its provenance).
 */
export function scoreSheet(sheet, { onScore } = {}) {
  const categories = sheet.categories.filter((c) => c !== "pudding");
  const cell = (round, row, category) => {
    const text = category === "total" ? String(row.total) : categoryCell(category, row[category]);
    if (!onScore) return h("td", {}, text);
    return h("td", {}, h("button", { type: "button", class: "linklike", dataset: { round, seat: row.seat, category },
      onclick: () => onScore(round, row.seat, category), "aria-label": `${CATEGORY_NAMES[category] || "Total"} of ${row.name} in round ${round}: ${text}. Show where it comes from.` }, text));
  };
  const rounds = sheet.rounds.map((r) => roundTable(r, categories, cell));
  const puddings = sheet.puddings
    ? h("table", { class: "sheet puddings" },
        h("caption", {}, "Puddings (end of the game)"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Puddings"), h("th", { scope: "col" }, "Points"))),
        h("tbody", {}, sheet.puddings.map((p) => h("tr", {}, h("th", { scope: "row" }, p.name), h("td", {}, p.count),
          onScore ? h("td", {}, h("button", { type: "button", class: "linklike", onclick: () => onScore("end", p.seat, "pudding") }, String(p.points))) : h("td", {}, p.points)))))
    : null;
  const winners = new Set(sheet.winners || []);
  const totals = h("table", { class: "sheet totals", id: "totals" },
    h("caption", {}, "Totals"),
    h("tbody", {}, sheet.totals.map((t) => h("tr", { class: winners.has(t.seat) ? "winner" : "" },
      h("th", { scope: "row" }, t.name), h("td", {}, t.total), h("td", {}, winners.has(t.seat) ? "winner" : "")))));
  // It scrolls sideways on a phone: focusable, so that a keyboard can scroll it too.
  const legend = h("p", { class: "muted small legend", id: "sheet-legend" },
    "Each cell: points, then what earned them — maki: the icons; other kinds: the cards (3× = three cards). Puddings score once, at the end. The totals come first.");
  return h("div", { class: "score-sheet", id: "score-sheet", tabindex: 0, role: "group", "aria-label": "Score sheet", "aria-describedby": "sheet-legend" }, legend, totals, rounds, puddings);
}
