// The replay of a finished game (#/replay/<id>[/<version>]): step or scrub through every version,
// see the state at that version (GET /games/{id}/state?version=N), the moves that led there, the
// audit's verdict and, for any score, the cards, events and rule it comes from (the audit's
// provenance).
import { api, receiptsOf, seatOf } from "../api.js";
import { moduleFor } from "../games.js";
import { rulingsOf } from "../rules.js";
import { clearNotice, h, notify, replace } from "../ui.js";

const RECENT = 8;
// The event that ends a turn: a reveal (Sushi Go!), a play or a pass (Sequence).
const TURN_ENDS = new Set(["turn_revealed", "card_played", "turn_passed"]);

export async function showReplay(main, gameId, version) {
  replace(main, h("p", { class: "muted" }, "Loading the game…"));
  let view;
  try {
    view = await api("GET", `/games/${gameId}`);
  } catch (error) {
    replace(main, h("h1", {}, "Game not found"), h("p", {}, error.message), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
    return;
  }
  const m = await moduleFor(view.game);
  if (view.status !== "over") {
    replace(main, h("h1", {}, `${m.title}: replay`),
      h("p", {}, "This game is not over yet. Its replay opens once it ends, when every hand and the seed are public."),
      h("p", {}, h("a", { class: "button", href: `#/game/${gameId}` }, "Watch it live")));
    return;
  }
  const kept = receiptsOf(gameId); // checked against the history as it is recorded now
  const audit = kept.length ? api("POST", `/games/${gameId}/audit`, { body: { receipts: kept }, idempotent: false }) : api("GET", `/games/${gameId}/audit`);
  const [events, report, sheet] = await Promise.all([allEvents(gameId), audit, api("GET", `/games/${gameId}/scores`)]);
  new Replay(main, m, view, events, report, sheet).show(version || view.version);
}

async function allEvents(gameId) {
  const events = [];
  let after = 0;
  for (;;) {
    const page = await api("GET", `/games/${gameId}/events?after=${after}&limit=500`);
    events.push(...page.events);
    if (page.next_after === null || page.next_after === undefined) return events;
    after = page.next_after;
  }
}

class Replay {
  constructor(main, module, view, events, audit, sheet) {
    Object.assign(this, { main, m: module, final: view, events, audit, sheet });
    this.id = view.game_id;
    this.states = new Map(); // version → the state's view (versions never change: cache forever)
    this.version = view.version;
    this.build();
  }

  build() {
    const last = this.final.version;
    this.slider = h("input", { type: "range", id: "version", min: 1, max: last, value: last, "aria-label": "Version",
      oninput: (e) => this.show(Number(e.target.value)) });
    const step = (label, id, target, key) => h("button", { type: "button", id, class: "secondary", title: key ? `${label} (${key})` : label, onclick: () => this.show(target()) }, label);
    this.where = h("p", { class: "where", id: "where", "aria-live": "polite" });
    this.stateBox = h("div", { class: "replay-state", id: "replay-state" });
    this.recent = h("ol", { class: "recent", id: "recent" });
    this.provenance = h("div", { class: "provenance", id: "provenance", tabindex: -1 });
    replace(this.main,
      h("div", { class: "game-head" }, h("h1", {}, `${this.m.title}: replay`), h("p", { class: "muted" }, this.m.describeGame(this.final)),
        h("p", { class: "phase", id: "replay-result" }, this.m.phase(this.final))),
      h("section", { class: "panel controls", "aria-label": "Replay controls" },
        h("div", { class: "buttons" },
          step("« Start", "first", () => 1),
          step("◀◀ Turn", "prev-turn", () => this.turnBefore(this.version), "Shift+←"),
          step("◀ Event", "prev", () => this.version - 1, "←"),
          step("Event ▶", "next", () => this.version + 1, "→"),
          step("Turn ▶▶", "next-turn", () => this.turnAfter(this.version), "Shift+→"),
          step("End »", "last", () => last)),
        h("label", { class: "slider" }, h("span", {}, "Version"), this.slider),
        h("form", { class: "goto", onsubmit: (e) => { e.preventDefault(); this.show(Number(e.target.elements.goto.value)); } },
          h("label", { for: "goto" }, "Go to version "), h("input", { type: "number", id: "goto", name: "goto", min: 1, max: last, required: true }), " ",
          h("button", { type: "submit", class: "secondary" }, "Go")),
        this.jumpForm(),
        this.where));
    // The table stays in view beside the controls, the moves and the score sheet (wide screens).
    this.main.append(h("div", { class: "replay-layout" },
      h("section", { class: "panel replay-table", "aria-label": "The table at this version", tabindex: 0 }, this.stateBox),
      h("div", { class: "replay-side" },
        h("section", { class: "panel", "aria-label": "Moves up to this version" }, h("h2", {}, "Moves up to here"), this.recent),
        auditPanel(this.audit), // beside the table, not above it: the table comes first
        h("section", { class: "panel", "aria-label": "Score sheet" }, h("h2", {}, "Score sheet"),
          h("p", { class: "muted small" }, "Select a score to see where it comes from: the cards (highlighted on the table), the events that recorded them, the rule."),
          this.m.scoreSheet(this.sheet, { onScore: (round, seat, category) => this.explain(round, seat, category) }),
          this.provenance))));
    this.main.addEventListener("keydown", (e) => {
      if (e.target.matches("input[type=number], input[type=text]")) return;
      if (e.key === "ArrowLeft" && e.shiftKey) this.show(this.turnBefore(this.version));
      else if (e.key === "ArrowRight" && e.shiftKey) this.show(this.turnAfter(this.version));
      else return;
      e.preventDefault();
    });
  }

  /** Jump to "round R, turn T" (the reveal of that turn; in a game without rounds, turn T). */
  jumpForm() {
    const rounds = this.events.some((r) => typeof r.data?.round === "number");
    const number = (id, label, max) => [h("label", { for: id }, label), " ", h("input", { type: "number", id, name: id, min: 1, max, required: true, class: "short" }), " "];
    return h("form", { class: "goto", id: "jump", onsubmit: (e) => {
      e.preventDefault();
      const round = rounds ? Number(e.target.elements["jump-round"].value) : undefined;
      const turn = Number(e.target.elements["jump-turn"].value);
      const found = this.events.find((r) => TURN_ENDS.has(r.type) && r.data?.turn === turn && (!rounds || r.data?.round === round));
      if (found) this.show(found.version);
      else notify(rounds ? `Round ${round} has no turn ${turn}.` : `The game has no turn ${turn}.`);
    } },
    rounds ? number("jump-round", "Round", 3) : null, number("jump-turn", "turn", 200),
    h("button", { type: "submit", class: "secondary" }, "Go"));
  }

  // A "turn" boundary: an event the game's module describes (a reveal, a play, a deal…).
  isMilestone(record) {
    return ["turn_revealed", "card_played", "round_dealt", "round_scored", "game_ended", "turn_passed", "dead_card_discarded"].includes(record.type);
  }

  turnBefore(version) {
    const earlier = this.events.filter((r) => r.version < version && this.isMilestone(r));
    return earlier.length ? earlier[earlier.length - 1].version : 1;
  }

  turnAfter(version) {
    const later = this.events.find((r) => r.version > version && this.isMilestone(r));
    return later ? later.version : this.final.version;
  }

  async show(version) {
    clearNotice(); // a notice about the last step ("Round 3 has no turn 12") is out of date
    version = Math.min(Math.max(1, Math.round(version) || 1), this.final.version);
    this.version = version;
    this.slider.value = version;
    const record = this.events[version - 1];
    const said = record && this.m.describeEvent(this.final, record);
    this.where.textContent = `Version ${version} of ${this.final.version}: ${said || record?.type.replaceAll("_", " ") || ""}`;
    history.replaceState(null, "", `#/replay/${this.id}/${version}`);
    this.showRecent(version);
    let state = this.states.get(version);
    if (!state) {
      try {
        state = await api("GET", `/games/${this.id}/state?version=${version}`);
      } catch (error) {
        notify(error.message);
        return;
      }
      this.states.set(version, state);
    }
    if (this.version !== version) return; // the user moved on while this one loaded
    // The game's end is said once, at the top ("Game over" twice read as a stutter).
    const phase = this.m.phase(state);
    const shown = phase === this.m.phase(this.final) ? null : h("p", { class: "phase", id: "replay-phase" }, phase);
    replace(this.stateBox, h("h2", {}, `The table at version ${version}`), shown, this.m.replayView(state));
    this.highlightCards();
  }

  /** The cards of the score being explained, marked on the table (at the round's last reveal). */
  highlightCards() {
    const mark = this.marked;
    if (!mark || mark.version !== this.version) return;
    for (const kind of mark.kinds) {
      for (const el of this.stateBox.querySelectorAll(`[data-seat="${mark.seat}"] .card[data-kind="${kind}"]`)) el.classList.add("scored");
    }
  }

  showRecent(version) {
    const lines = [];
    for (let i = version - 1; i >= 0 && lines.length < RECENT; i--) {
      const record = this.events[i];
      const line = this.m.describeEvent(this.final, record);
      if (line) lines.push(h("li", { class: record.version === version ? "current" : "", dataset: { version: record.version } },
        h("button", { type: "button", class: "linklike", onclick: () => this.show(record.version) }, `v${record.version}`), " ", line));
    }
    replace(this.recent, lines.length ? lines : h("li", { class: "muted" }, "Nothing yet."));
  }

  async explain(round, seat, category) {
    const rulings = await rulingsOf(this.final.game).catch(() => new Map()); // the codes stay
    const entry = this.audit.provenance.find((p) => (round === "end" ? p.kind === "end" : p.kind === "round" && p.round === round));
    const who = entry?.seats.find((s) => s.seat === seat);
    if (!who) {
      replace(this.provenance, h("p", {}, "The audit has no provenance for this score."));
      return;
    }
    const categories = category === "total" ? who.categories : who.categories.filter((c) => c.category === category);
    // The table as it was when the round was scored: every card of that round on it.
    const scored = round !== "end" && this.events.find((r) => r.type === "round_scored" && r.data?.round === round);
    if (scored) {
      const kinds = new Set(categories.flatMap((c) => (c.cards || []).map((card) => card.card)));
      this.marked = { version: scored.version - 1, seat, kinds };
      this.show(scored.version - 1);
    }
    const where = round === "end" ? "at the end of the game" : `in round ${round}`;
    replace(this.provenance,
      h("h3", {}, `Where ${who.name}'s ${category === "total" ? "points" : category} ${where} come from`),
      categories.length ? categories.map((c) => this.explainCategory(c, rulings)) : h("p", {}, "Nothing scored here."),
      category === "total" ? h("p", {}, `Total ${who.points} points; the game recorded ${who.recorded}.`) : null);
    this.provenance.focus();
  }

  explainCategory(c, rulings) {
    const facts = [];
    for (const key of ["count", "icons", "unused_count"]) if (key in c) facts.push(`${key.replace("_", " ")} ${c[key]}`);
    const agree = c.recorded === undefined || c.recorded === c.points;
    return h("div", { class: `origin${agree ? "" : " mismatch"}`, dataset: { category: c.category } },
      h("p", {}, h("strong", {}, `${c.category}: ${c.points} point${Math.abs(c.points) === 1 ? "" : "s"}`),
        facts.length ? ` (${facts.join(", ")})` : "",
        c.rules?.length ? [" — rule ", c.rules.map((r) => h("a", { href: `#/rules/${this.final.game}/${r}`, class: "rule", title: `Rule ${r}: read the ruling` }, r)).reduce((a, b) => [a, ", ", b])] : "",
        agree ? "" : ` — the game recorded ${c.recorded}!`),
      (c.rules || []).filter((r) => rulings.has(r)).map((r) => h("p", { class: "ruling-text muted small", dataset: { rule: r } }, h("strong", {}, `${r}. `), rulings.get(r))),
      c.note_corners ? h("p", { class: "muted small" }, c.note_corners) : null,
      c.cards?.length ? h("ul", {}, c.cards.map((card) => this.explainCard(card))) : null,
      c.unused?.length ? h("p", { class: "muted small" }, "Not counted: ", c.unused.map((card) => this.m.cardName(card.card)).join(", ")) : null);
  }

  explainCard(card) {
    const jump = (label, version) => h("button", { type: "button", class: "linklike", onclick: () => {
      this.show(version);
      this.stateBox.scrollIntoView({ block: "nearest" }); // the table, wherever the page is scrolled
    } }, `${label} at version ${version}`);
    const steps = [];
    for (const [key, label] of [["picked", "picked"], ["revealed", "revealed"], ["played", "played"]]) {
      if (typeof card[key] === "number") steps.push(jump(label, card[key]));
    }
    if (typeof card.wasabi?.picked === "number") steps.push(jump("its wasabi picked", card.wasabi.picked));
    const extra = [];
    if (card.points !== undefined) extra.push(card.points === 1 ? "1 pt" : `${card.points} pts`);
    if (card.wasabi) extra.push("on a wasabi: triple points");
    if (card.declined_wasabi) extra.push("kept off a free wasabi by its owner's choice (S9)");
    if (card.cell) extra.push(`on ${this.m.cellName ? this.m.cellName(card.cell) : card.cell.join(",")}`);
    return h("li", {}, this.m.cardName(card.card), extra.length ? ` (${extra.join(", ")})` : "", steps.length ? " — " : "", steps.reduce((a, b) => (a.length ? [...a, ", ", b] : [b]), []));
  }
}

function auditPanel(audit) {
  const checks = Object.entries(audit).filter(([, v]) => v && typeof v === "object" && "ok" in v && v.ok !== null);
  const label = (name) => ({ chain: "Hash chain of the events", deals: "Every deal matches the revealed seed", replay: "Every move re-decided by the rules", points: "Every point recomputed", scores: "The recorded scores add up", signature: "The export is signed by the service", receipts: "Your receipts agree with this history" })[name] || name;
  return h("section", { class: `panel audit ${audit.ok ? "ok" : "bad"}`, id: "audit", "aria-label": "Audit" },
    h("h2", {}, audit.ok ? "✔ Audit passed" : "✘ Audit failed"),
    h("ul", {}, checks.map(([name, check]) => h("li", { class: check.ok ? "ok" : "bad" },
      `${check.ok ? "✔" : "✘"} ${label(name)}`, check.ok ? "" : ` — first bad version ${check.first_bad_version ?? "?"}${check.detail ? `: ${check.detail}` : ""}`)),
      audit.seed ? h("li", { class: audit.seed.matches_commitment ? "ok" : "bad" },
        `${audit.seed.matches_commitment ? "✔" : "✘"} The seed revealed at version ${audit.seed.version} ${audit.seed.matches_commitment ? "matches" : "does NOT match"} the commitment made at version 1`) : null),
    audit.ok ? null : h("p", {}, audit.reason || audit.error || ""),
    h("p", { class: "muted small" }, `${audit.events} events checked. Anyone can repeat this with `, h("code", {}, "cardroom audit"), " on the game's export."),
    h("p", { class: "buttons" }, h("a", { class: "button secondary", id: "download-export", href: `/games/${audit.game_id}/export`, download: `${audit.game_id}.jsonl` }, "Download the export"),
      receiptsButton(audit.game_id)));
}

// The receipts this browser kept for the game: with them, `cardroom audit --receipts` shows
// whether the export is the history the service signed while the game was played.
function receiptsButton(gameId) {
  const receipts = receiptsOf(gameId);
  if (!receipts.length) return null;
  const download = () => {
    const body = JSON.stringify({ game_id: gameId, seat: seatOf(gameId)?.seat ?? null, receipts }, null, 2);
    const link = h("a", { href: URL.createObjectURL(new Blob([body], { type: "application/json" })), download: `${gameId}-receipts.json` });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  };
  return h("button", { type: "button", class: "secondary", id: "download-receipts", onclick: download }, `Download my receipts (${receipts.length})`);
}
