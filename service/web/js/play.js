// A game's page (#/game/<id>): join, play live, watch, see the score sheet. Everything comes from
// GET /games/{id} (the view for your seat), its event stream and GET /games/{id}/scores.
import { accountOf, api, follow, forgetSeat, invitationLink, invitationOf, rememberInvitation, rememberSeat, seatOf } from "./api.js";
import { focusKey, restoreFocus } from "./focus.js";
import { morph } from "./morph.js";
import { knownGame, moduleFor, rememberGame } from "./games.js";
import { clearNotice, clearTroubleNotice, h, notify, replace } from "./ui.js";

const LOG_LINES = 40;
const STALE_MOVE =
  "Too late: that turn was over before your move arrived (the game moved on), so it was not" +
  " recorded. Here is the current turn: choose again.";
const BURST_MS = 40; // events that arrive together (a pick and the bots' answers): one refresh
// Only these events change the score sheet (a round's or the game's end).
const SCORING = new Set(["round_scored", "game_ended"]);
// The turn sound: off unless the player turns it on (kept in this browser). Its module (the
// WebAudio chime) is loaded only then.
const SOUND = "cardroom.turnSound";
const soundOn = () => localStorage.getItem(SOUND) === "on";
const sound = () => import("./ondemand/sound.js");
// A rated game's ratings (issue 37): loaded only for a rated game.
const ratingsUi = () => import("./ondemand/ratings.js");

export async function showGame(main, gameId, invitation = null) {
  // An invitation link: keep its token, so that a reload (or a later visit) can still join.
  if (invitation) rememberInvitation(gameId, { token: invitation });
  const page = new GamePage(main, gameId);
  await page.start();
  return () => page.stop();
}

class GamePage {
  constructor(main, gameId) {
    this.main = main;
    this.id = gameId;
    this.seat = seatOf(gameId);
    this.view = null;
    this.draft = null;
    this.draftKey = null;
    this.log = [];
    this.sheet = null;
    this.busy = false;
    this.stream = null;
    this.clock = null;
    this.refreshing = null;
    this.stale = false; // an event arrived while a refresh was under way: refresh once more
    this.sheetStale = false; // an event may have changed the score sheet
    this.seen = undefined; // the last event version the log has taken in
    this.connection = undefined; // the stream's state, shown next to "You are…"
    this.announced = undefined; // the phase last said in the live region
    this.burst = null; // the timer that gathers a burst of events into one refresh
    this.focusHand = false; // after a pick, focus goes back to the hand once it is offered
    this.summary = null; // the round whose summary is shown (a round's end seen live)
    // A round or the game ended live: its outcome is brought into view once drawn (issue 39).
    this.showResults = false;
    this.confirmResign = false; // "Resign…" asks once more before it acts
    this.waitingOn = undefined; // the turn this seat was last asked to move in (null: none)
    this.onLine = () => this.reconnect();
    this.offLine = () => this.showConnection("offline");
  }

  get token() {
    return this.seat?.token;
  }

  async start() {
    // A game this browser has shown before: its module is asked for with the view.
    const hinted = knownGame(this.id);
    const early = hinted ? moduleFor(hinted).catch(() => null) : null;
    await this.refresh();
    if (!this.view) return;
    rememberGame(this.id, this.view.game);
    // The view names the game: its module, the log and the score sheet are asked for at once
    // (not one after the other: the first render waits for the slowest of them only).
    const [module, records] = await Promise.all([
      (async () => (hinted === this.view.game && (await early)) || moduleFor(this.view.game))(),
      this.fetchLog(),
      this.view.status !== "waiting" ? this.loadScores() : null,
    ]);
    this.module = module;
    this.resetDraft();
    for (const record of records) this.addLog(record);
    // The game may have moved on between the two answers (e.g. it started): the log is newer
    // than the view, and the stream follows the log, so catch the view up now.
    if (this.seen > this.view.version) {
      await this.refresh();
      if (this.view.status !== "waiting") await this.loadScores();
    }
    this.render();
    this.listen();
    window.addEventListener("online", this.onLine);
    window.addEventListener("offline", this.offLine);
    document.addEventListener("visibilitychange", this.onVisible);
    this.checkInvitation();
  }

  stop() {
    this.stream?.stop();
    clearInterval(this.clock);
    clearTimeout(this.burst);
    window.removeEventListener("online", this.onLine);
    window.removeEventListener("offline", this.offLine);
    document.removeEventListener("visibilitychange", this.onVisible);
    document.title = "Cardroom";
  }

  onVisible = () => {
    this.showTitle();
    if (!document.hidden) this.checkInvitation();
  };

  /** A link revoked or replaced from another browser is not offered (issue 39): ask first. */
  async checkInvitation() {
    const token = invitationOf(this.id)?.token;
    if (!token || this.view?.visibility !== "private" || this.view.status !== "waiting") return;
    try {
      await api("GET", `/games/${this.id}/invitation`, { token });
    } catch (error) {
      if (error.code !== "invalid_invitation") return; // unreachable now: ask again later
      rememberInvitation(this.id, { token: null });
      this.refusedInvitation = true;
      this.render();
    }
  }

  /** Back online: follow the stream again at once (not after its back-off) and catch up. */
  async reconnect() {
    this.listen();
    await this.refresh();
    this.render();
  }

  listen() {
    this.stream?.stop();
    this.stream = follow(this.id, {
      token: this.token,
      after: this.seen ?? this.view.version, // from the last event the log has seen: no gap
      onEvent: (record) => this.onEvent(record),
      onState: (state) => this.showConnection(state),
      onRematch: () => this.refresh().then(() => this.catchUp()), // the view says who proposed it
    });
  }

  async refresh() {
    // One request at a time; events that arrive meanwhile ask for one more afterwards.
    if (this.refreshing) {
      this.stale = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.stale = false;
        try {
          this.setView(await api("GET", `/games/${this.id}`, { token: this.token }));
          clearTroubleNotice(); // the service answers again
        } catch (error) {
          if (error.status === 401 && this.seat) {
            forgetSeat(this.id); // a token this game does not know: watch instead
            this.seat = null;
            notify("This browser's seat in the game is no longer valid; you are watching.");
            this.stale = true;
          } else if (!this.view) {
            replace(this.main, h("h1", {}, "Game not found"), h("p", {}, error.message), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
            return;
          } else {
            notify(error.message);
          }
        }
      } while (this.stale);
    })();
    try {
      await this.refreshing;
    } finally {
      this.refreshing = null;
    }
    return undefined;
  }

  setView(view) {
    if (this.view && view.version < this.view.version) return; // an older answer arrived late
    // The game ended in this view: the score sheet on screen is not the final one yet.
    if (this.view && this.view.status !== "over" && view.status === "over") {
      this.sheetStale = true;
      this.showResults = true;
    }
    // A round ended since the last view (its last_round is new): its outcome stays on screen,
    // beside the table its last reveal left (the view's own tableaux are the next round's).
    const ended = view.last_round?.round;
    if (this.view && ended && ended !== this.view.last_round?.round) {
      this.sheetStale = true;
      this.showSummary(ended);
    }
    // What the reveal(s) since the last view added to each seat's table: marked until the next.
    this.reveal = (this.view && this.module?.revealOf?.(this.view, view)) || this.reveal;
    this.view = view;
    if (this.module) this.resetDraft();
  }

  resetDraft() {
    const view = this.view;
    const you = view.you;
    const key = JSON.stringify([view.round, view.turn, you?.hand, you?.pick, you?.your_turn, you?.can_discard]);
    if (key !== this.draftKey) {
      this.draftKey = key;
      this.draft = this.module.newDraft();
    }
  }

  /** The latest events, for the log (its lines need the game's module: added by the caller). */
  async fetchLog() {
    const after = Math.max(0, this.view.version - 60);
    try {
      return (await api("GET", `/games/${this.id}/events?after=${after}&limit=100`, { token: this.token })).events;
    } catch (error) {
      notify(error.message);
      return [];
    }
  }

  async loadScores() {
    try {
      this.sheet = await api("GET", `/games/${this.id}/scores`, { token: this.token });
    } catch (error) {
      if (error.status !== 409) notify(error.message);
    }
  }

  addLog(record) {
    if (record.version <= (this.seen ?? 0)) return;
    this.seen = record.version;
    // The line is written when shown: a reveal's says where its nigiri went once the page knows.
    if (this.module.describeEvent(this.view, record)) this.log.unshift({ version: record.version, record });
    this.log.length = Math.min(this.log.length, LOG_LINES);
  }

  onEvent(record) {
    this.addLog(record);
    // (Not when the view already holds it: the move's answer came first and loaded the sheet.)
    if (SCORING.has(record.type) && record.version > this.view.version) this.sheetStale = true;
    // One refresh per burst: the events of one append arrive together.
    clearTimeout(this.burst);
    this.burst = setTimeout(() => this.catchUp(), BURST_MS);
  }

  async catchUp() {
    if (this.busy) {
      // This page's move is under way: its answer is the view after it, which may hold these.
      this.burst = setTimeout(() => this.catchUp(), BURST_MS);
      return;
    }
    if (this.seen > this.view.version) await this.refresh();
    if (this.sheetStale && this.view.status !== "waiting") {
      this.sheetStale = false;
      await this.loadScores();
    }
    this.render();
  }

  /** A round's outcome stays on screen until the player goes on (Continue, or their next
   * pick): it once hid itself after 15 s, while being read (issue 39, item 9). */
  showSummary(round) {
    this.summary = round;
    this.showResults = true;
  }

  /** Continue: the summary goes, and focus goes where play goes on (the hand when it offers
   * cards, else the phase line), brought into view: not to the page's body (issue 39, item 11). */
  hideSummary() {
    this.summary = null;
    this.render();
    const next = this.main.querySelector("#hand button.pickable") || this.main.querySelector("#phase");
    next?.focus();
  }

  /** A round or the game ended live: the player may be far below (a phone, after scrolling to
   * Pick), so its outcome comes into view once drawn (the final ranking, else the round's
   * summary, whose Continue takes focus: one key goes on). Not before its score sheet came. */
  bringResultsIntoView() {
    if (!this.showResults) return;
    const over = this.view.status === "over";
    const panel = over ? this.main.querySelector("#final") : this.main.querySelector("#round-summary");
    if (!panel || (over && !panel.querySelector("#ranking"))) return;
    this.showResults = false;
    this.focusHand = false;
    panel.scrollIntoView({ block: "start" });
    (over ? panel : panel.querySelector("#round-summary-continue")).focus({ preventScroll: true });
  }

  summaryPanel() {
    const content = this.summary && this.sheet && this.module.roundSummary?.(this.sheet, this.summary, this.view);
    if (!content) return null;
    return h("section", { class: "panel round-summary", id: "round-summary", dataset: { round: this.summary }, "aria-live": "polite" },
      content, h("button", { type: "button", class: "primary", id: "round-summary-continue", onclick: () => this.hideSummary() }, "Continue"));
  }

  /** The outcome first: a finished game's ranking and how it was decided, then Replay and the
   * table's rematch. */
  finalPanel() {
    if (this.view.status !== "over") return null;
    // Only the final sheet ranks: one read before the end (or a refresh that found the end
    // before the final sheet came) has no winners, and its totals may be tied at 0.
    const final = this.sheet?.version === this.view.version ? this.sheet : null;
    const content = final && this.module.finalSummary?.(final, this.view);
    return h("section", { class: "panel final", id: "final", "aria-labelledby": "final-title", tabindex: -1 }, content,
      content && this.rated?.ratingChanges(this.view),
      h("p", { class: "cta" },
        h("a", { class: "button primary", href: `#/replay/${this.id}`, id: "replay-link" }, "Replay this game, turn by turn"), " ",
        this.rematchControl()));
  }

  /** Rematch for the whole table (POST /games/{id}/rematch): the first to ask creates it, the
   * others see "‹name› proposes a rematch — Join", live (the stream announces it). */
  rematchControl() {
    const offer = this.view.rematch;
    const proposer = offer ? this.view.seats[offer.proposed_by]?.name || `Seat ${offer.proposed_by + 1}` : null;
    if (offer && seatOf(offer.game_id)) {
      return h("a", { class: "button secondary", id: "rematch-link", href: `#/game/${offer.game_id}` }, "Go to the rematch: you have a seat");
    }
    if (!this.seat) {
      return offer ? h("span", { id: "rematch-offer" }, `${proposer} proposed a rematch: `, h("a", { href: `#/game/${offer.game_id}`, id: "rematch-link" }, "watch it")) : null;
    }
    const button = (label) => h("button", { type: "button", class: offer ? "primary" : "secondary", id: "rematch", onclick: () => this.rematch() }, label);
    if (!offer) return button("Rematch: same game, same people and bots");
    return h("span", { id: "rematch-offer", role: "status" }, `${proposer} proposes a rematch — `, button("Join"));
  }

  /** This seat's seat in the rematch (created now if nobody proposed it yet). */
  async rematch() {
    try {
      const grant = await api("POST", `/games/${this.id}/rematch`, { token: this.token });
      rememberSeat(grant.game_id, grant);
      location.hash = `#/game/${grant.game_id}`;
    } catch (error) {
      notify(error.message);
      await this.refresh();
      this.render();
    }
  }

  showConnection(state) {
    if (state === "live" && this.connection !== "live") clearTroubleNotice(); // recovered
    this.connection = navigator.onLine === false ? "offline" : (state ?? this.connection);
    const el = document.getElementById("connection");
    if (!el) return;
    el.textContent = { live: "● live", reconnecting: "○ reconnecting…", offline: "○ offline: waiting for the network…", ended: "" }[this.connection] ?? "";
    el.className = `connection ${this.connection}`;
  }

  async move(body) {
    if (this.busy) return;
    this.busy = true;
    this.summary = null; // the next pick: the player has gone on from the last round's outcome
    this.render();
    try {
      // The move names the turn the player chose it in: once that turn is over it is refused.
      const move = { ...this.module.turnOf(this.view), ...body };
      const view = await api("POST", `/games/${this.id}/moves`, { token: this.token, body: move });
      clearNotice();
      this.setView(view);
      if (this.sheetStale) {
        // This move ended a round or the game: show it with its score sheet (the summary).
        this.sheetStale = false;
        await this.loadScores();
      }
    } catch (error) {
      notify(error.code === "stale_move" ? STALE_MOVE : error.message);
      await this.refresh();
    } finally {
      this.busy = false;
      this.render();
    }
  }

  /** Take a seat under `name`, or as the account this browser keeps (`account`: its name). */
  async join(name, account = null) {
    try {
      if (!account) localStorage.setItem("cardroom.name", name);
      const body = account ? {} : { name };
      const invitation = invitationOf(this.id)?.token;
      if (this.view.visibility === "private" && invitation) body.invitation = invitation;
      const grant = await api("POST", `/games/${this.id}/players`, { body, token: account?.token });
      rememberSeat(this.id, grant);
      this.seat = seatOf(this.id);
      clearNotice();
      await this.refresh();
      this.render();
      this.listen(); // the stream again, now with the seat's token: it shows your own cards
    } catch (error) {
      notify(error.message);
      if (error.code === "invalid_invitation") {
        // The link was revoked or replaced: it is not offered (nor shared) as valid any more.
        rememberInvitation(this.id, { token: null });
        this.refusedInvitation = true;
      }
      await this.refresh(); // e.g. the last seat went meanwhile: show the game as it is now
      this.render();
    }
  }

  /** Give the seat up before the start: it is free again, and this browser watches. */
  async leave() {
    try {
      const view = await api("POST", `/games/${this.id}/leave`, { token: this.token });
      forgetSeat(this.id);
      this.seat = null;
      clearNotice();
      this.setView(view);
      this.listen(); // the stream again, as a spectator
    } catch (error) {
      notify(error.message);
      await this.refresh();
    }
    this.render();
  }

  /** Resign after the start: the greedy bot plays the seat to the end (asked twice). */
  async resign() {
    this.confirmResign = false;
    try {
      this.setView(await api("POST", `/games/${this.id}/resign`, { token: this.token }));
      clearNotice();
    } catch (error) {
      notify(error.message);
      await this.refresh();
    }
    this.render();
  }

  // --- rendering ------------------------------------------------------------------------------

  render() {
    const view = this.view;
    if (!view) return;
    const focus = focusKey();
    const m = this.module;
    this.followRatings();
    if (!this.drawn) this.main.replaceChildren(); // the page before this one (the lobby) goes
    this.drawn = true;
    morph(this.main, [
      h("div", { class: "game-head" },
        h("h1", {}, m.title),
        h("p", { class: "muted" }, m.describeGame(view)),
        h("p", { class: "phase", id: "phase", tabindex: -1 }, m.phase(view)),
        // One line for who you are and the turn sound (a line of its own pushed the table down)
        h("p", { class: "muted small" }, h("span", { id: "connection", class: "connection" }), " ", this.whoAmI(), " ", this.soundChoice())),
      this.finalPanel(),
      this.deadline(),
      this.summaryPanel(),
      this.joinPanel(),
      // Leaving, before the start, comes first; resigning, once playing, comes after the table:
      // a panel holding only "Resign…" sat above the hand and pushed the table below a
      // laptop's fold (issue 39, item 11).
      view.status === "playing" ? null : this.seatActions(),
      view.status === "cancelled"
        ? h("p", { class: "panel cancelled", id: "cancelled" }, "This game was cancelled: its seats did not fill in time. ",
            h("a", { href: "#/" }, "Find or create another game"))
        : null,
      view.status === "waiting" ? this.invite() : null,
      h("div", { class: `game-body${this.busy ? " busy" : ""}`, id: "game", "aria-busy": this.busy ? "true" : "false",
        // drawn: how many times the page was drawn (a redraw that changes nothing leaves no
        // other trace: morph.js keeps every node).
        dataset: { version: view.version, status: view.status, drawn: (this.draws = (this.draws || 0) + 1) } },
        m.render(view, this.draft, { onChange: () => this.render(), onMove: (body) => { this.focusHand = true; return this.move(body); },
          reveal: this.reveal, revealed: this.log.find((e) => e.record.type === "turn_revealed")?.record })),
      view.status === "playing" ? this.seatActions() : null,
      view.rated && this.rated?.ratingsPanel(view, this.seatRatings),
      this.sheet && this.sheet.rounds?.length !== 0
        ? h("details", { class: "panel", open: view.status === "over" || undefined, id: "scores" },
            h("summary", {}, "Score sheet"), m.scoreSheet(this.sheet))
        : null,
      h("section", { class: "panel log", "aria-label": "What happened" },
        h("h2", {}, "What happened"),
        this.log.length
          ? h("ul", { id: "log", tabindex: 0, "aria-label": "Events, newest first" }, this.log.map((e) => h("li", { dataset: { version: e.version, key: `v${e.version}` } }, h("span", { class: "v muted small" }, `v${e.version}`), " ", m.describeEvent(view, e.record))))
          : h("p", { class: "muted" }, "Nothing yet.")),
    ].filter(Boolean));
    this.showConnection();
    restoreFocus(focus, this.main);
    this.bringResultsIntoView();
    this.returnToHand();
    this.announce(m.phase(view));
    this.showTitle();
    this.ring();
  }

  /** A rated game: its seats' ratings, asked for again when who sits or the status changes. */
  followRatings() {
    const view = this.view;
    const key = view.rated && `${view.rated_accounts}|${view.status}`;
    if (!key || key === this.ratingKey) return;
    this.ratingKey = key;
    ratingsUi().then(async (m) => {
      this.rated = m;
      const found = await m.seatRatings(view);
      if (this.ratingKey !== key) return;
      this.seatRatings = found;
      this.render();
    }, (error) => notify(error.message));
  }

  /** The turn sound's checkbox, for a seated player (off unless turned on; kept per browser). */
  soundChoice() {
    if (!this.seat || this.view.status === "over") return null;
    return h("label", { class: "check inline small" },
      h("input", { type: "checkbox", id: "turn-sound", checked: soundOn(), onchange: (e) => this.setSound(e.target.checked) }),
      " Play a sound when it becomes my turn while this page is in the background");
  }

  setSound(on) {
    if (on) localStorage.setItem(SOUND, "on");
    else localStorage.removeItem(SOUND);
    if (on) sound().then((m) => m.prime(), () => {}); // the click lets the page's audio start
  }

  /** It has just become this seat's turn (a turn it was not already asked to move in): chime,
   * if the player wants it and the page is in the background. Never for the turn on screen at
   * load, nor again for the same turn. */
  ring() {
    const turn = this.module.yourTurn(this.view) ? JSON.stringify(this.module.turnOf(this.view)) : null;
    const first = this.waitingOn === undefined;
    if (turn === this.waitingOn) return;
    this.waitingOn = turn;
    if (turn && !first && document.hidden && soundOn()) sound().then((m) => m.chime(), () => {});
  }

  /** After a pick, keyboard focus goes back to the hand as soon as it offers the next cards. */
  returnToHand() {
    if (!this.focusHand || this.busy) return;
    const card = this.main.querySelector("#hand button.pickable"); // Sequence refocuses itself
    if (!card) return;
    this.focusHand = false;
    card.focus({ preventScroll: true });
  }

  /** "Your turn" in the tab's title while the page is in the background. */
  showTitle() {
    const waiting = this.view && this.module?.yourTurn(this.view);
    document.title = waiting && document.hidden ? "▶ Your turn — Cardroom" : "Cardroom";
  }

  /** Screen readers hear the phase when it changes (one live region that outlives renders). */
  announce(text) {
    if (text === this.announced) return;
    this.announced = text;
    document.getElementById("announce").textContent = text;
  }

  whoAmI() {
    if (!this.seat) return "You are watching.";
    return `You are ${this.seat.name}, seat ${this.seat.seat + 1}.`;
  }

  deadline() {
    clearInterval(this.clock);
    const at = this.view.turn_deadline && Date.parse(this.view.turn_deadline);
    if (!at || this.view.status !== "playing") return null;
    const el = h("p", { class: "deadline", id: "deadline" });
    const tick = () => {
      const left = Math.max(0, Math.ceil((at - Date.now()) / 1000));
      el.textContent = left > 0 ? `${left} s left for this turn; then a bot moves for whoever has not.` : "Time is up: a bot is moving for whoever had not.";
    };
    tick();
    this.clock = setInterval(tick, 1000);
    return el;
  }

  joinPanel() {
    const view = this.view;
    if (this.seat || view.status !== "waiting") return null;
    const open = view.seats.filter((s) => !s.taken && !s.bot).length; // a bot's seat is kept
    if (!open) return null;
    if (view.visibility === "private" && !invitationOf(this.id)?.token) {
      return h("p", { class: "panel join", id: "join" }, this.refusedInvitation
        ? "This invitation link is no longer valid (its creator revoked or replaced it): ask whoever created the game for the new link."
        : "This game is private: to join it, ask whoever created it for the invitation link.");
    }
    const input = h("input", { id: "join-name", name: "name", required: true, maxlength: 64, autocomplete: "nickname", value: localStorage.getItem("cardroom.name") || "" });
    return h("form", { class: "panel join", id: "join", onsubmit: (e) => { e.preventDefault(); this.join(input.value.trim()); } },
      h("h2", {}, `Join this game (${open} open seat${open === 1 ? "" : "s"})`),
      h("label", { for: "join-name" }, "Your name"), " ", input, " ",
      h("button", { type: "submit", class: "primary" }, "Take a seat"),
      this.joinAsAccount());
  }

  /** With an account kept in this browser: join as it (its name; the seat is the account's). */
  joinAsAccount() {
    const account = accountOf();
    if (!account) return null;
    return h("p", {}, h("button", { type: "button", class: "secondary", id: "join-account", onclick: () => this.join(null, account) }, `Join as ${account.name}`),
      h("span", { class: "muted small" }, " (your account)"));
  }

  /** "Leave" before the start; "Resign" after it, confirmed; what became of a seat given up. */
  seatActions() {
    const view = this.view;
    if (!this.seat) return null;
    if (view.status === "waiting") {
      return h("p", { class: "panel seat-actions", id: "seat-actions" },
        h("button", { type: "button", class: "secondary", id: "leave", onclick: () => this.leave() }, "Leave this game"),
        " ", h("span", { class: "muted small" }, "Your seat becomes free for someone else."));
    }
    if (view.status !== "playing") return null;
    const mine = view.seats[this.seat.seat];
    if (mine?.taken_over) {
      const why = mine.taken_over === "resigned" ? "You resigned" : "You did not move for too long";
      return h("p", { class: "panel seat-actions", id: "seat-actions" }, `${why}: the greedy bot plays your seat until the end.`);
    }
    if (!this.confirmResign) {
      return h("p", { class: "panel seat-actions", id: "seat-actions" },
        h("button", { type: "button", class: "secondary", id: "resign", onclick: () => { this.confirmResign = true; this.render(); } }, "Resign…"));
    }
    return h("div", { class: "panel seat-actions confirm", id: "seat-actions", role: "group", "aria-labelledby": "resign-question" },
      h("p", { id: "resign-question" }, "Resign this game? The greedy bot plays your seat until the end; this cannot be undone."),
      h("button", { type: "button", class: "primary", id: "resign-confirm", onclick: () => this.resign() }, "Yes, resign"), " ",
      h("button", { type: "button", class: "secondary", id: "resign-cancel", onclick: () => { this.confirmResign = false; this.render(); } }, "Keep playing"));
  }

  invite() {
    if (this.view.visibility !== "private") {
      const url = `${location.origin}/#/game/${this.id}`;
      return h("p", { class: "panel invite" }, "Invite others with this link: ",
        h("input", { id: "invite-link", readonly: true, value: url, "aria-label": "Invitation link", onfocus: (e) => e.target.select() }));
    }
    const known = invitationOf(this.id);
    if (!known?.token && !known?.creator_token) return null; // not ours to share
    const creator = known.creator_token;
    const link = known.token ? invitationLink(this.id, known.token) : "";
    return h("div", { class: "panel invite", id: "invite" },
      h("p", {}, "This game is private. ", link ? "Only people with this link can join: " : "Its invitation is revoked: nobody else can join."),
      link ? h("input", { id: "invite-link", readonly: true, value: link, "aria-label": "Invitation link", onfocus: (e) => e.target.select() }) : null,
      link ? h("button", { type: "button", class: "secondary small", id: "copy-invite", onclick: () => this.copyInvitation(link) }, "Copy link") : null,
      creator && link ? h("button", { type: "button", class: "secondary small", id: "revoke-invite", onclick: () => this.changeInvitation("DELETE") }, "Revoke link") : null,
      creator ? h("button", { type: "button", class: "secondary small", id: "new-invite", onclick: () => this.changeInvitation("POST") }, "New link") : null);
  }

  async copyInvitation(link) {
    await this.checkInvitation();
    if (!invitationOf(this.id)?.token) return notify("This link no longer works: its invitation was revoked or replaced.");
    try {
      await navigator.clipboard.writeText(link);
      notify("The invitation link is copied.", "info");
    } catch {
      document.getElementById("invite-link")?.select(); // no clipboard access: select it
    }
  }

  /** The creator revokes the invitation (DELETE) or replaces it (POST) with the creator token. */
  async changeInvitation(method) {
    const known = invitationOf(this.id);
    try {
      const answer = await api(method, `/games/${this.id}/invitation`, { token: known.creator_token, idempotent: false });
      rememberInvitation(this.id, { token: answer ? answer.invitation.token : null });
      notify(answer ? "A new invitation link: the old one no longer works." : "The invitation link is revoked: nobody else can join with it.", "info");
    } catch (error) {
      notify(error.message);
    }
    this.render();
  }
}
