// The lobby (#/): create a game, find open games to join, games to watch and to replay.
import { accountOf, api, mySeats, rememberInvitation, rememberSeat } from "./api.js";
import { TITLES } from "./games.js";
import { h, notify, plural, replace, when } from "./ui.js";

const SEQUENCE_PLAYERS = [2, 3, 4, 6, 8, 9, 10, 12]; // Q4: teams of equal size
const CLOCKS = [[0, "No clock"], [15, "15 seconds"], [30, "30 seconds"], [60, "1 minute"], [120, "2 minutes"]];
const REFRESH_MS = 10_000; // the lists follow the games by themselves
const PAGE = 10;

/** Shows the lobby; returns what stops its refreshing. */
export async function showLobby(main) {
  const lists = [myGames(), gameList("waiting", "Open games", "Join"), gameList("playing", "Games in play", "Watch"), gameList("over", "Finished games", "Replay")].filter(Boolean);
  const account = h("div", { id: "account-slot" }); // filled by ondemand/account.js
  replace(main, h("h1", {}, "Cardroom"),
    h("p", { class: "lead" }, "Play Sushi Go! and Sequence with friends or bots, watch games live, and replay any finished game with every point explained. ",
      h("a", { href: "#/leaderboard", id: "leaderboard-link" }, "Leaderboards"), " of rated games."),
    h("div", { class: "lobby" }, createForm(), h("div", { class: "lists" }, account, lists.map((l) => l.element))));
  import("./ondemand/account.js")
    .then(({ showAccount }) => lists.push({ refresh: showAccount(account, () => lists[0]?.retitle?.()) }))
    .catch((error) => notify(error.message));
  const refresh = () => {
    if (!document.hidden) for (const l of lists) l.refresh();
  };
  const timer = setInterval(refresh, REFRESH_MS);
  document.addEventListener("visibilitychange", refresh);
  return () => {
    clearInterval(timer);
    document.removeEventListener("visibilitychange", refresh);
  };
}

// --- a new game -------------------------------------------------------------------------------

function createForm() {
  const form = h("form", { class: "panel create", id: "create", "aria-labelledby": "create-title" });
  const state = { game: "sushi-go", players: 2, edition: "gamewright" };
  const fields = h("div", { class: "fields" });

  function options() {
    const sushi = state.game === "sushi-go";
    // What the chosen game and edition allow (the rulings' editions table): zoch is for 3-5.
    const counts = !sushi ? SEQUENCE_PLAYERS : state.edition === "zoch" ? [3, 4, 5] : [2, 3, 4, 5];
    if (!counts.includes(state.players)) state.players = counts[0];
    const seats = [];
    for (let seat = 1; seat < state.players; seat++) {
      seats.push(h("label", { class: "field" }, `Seat ${seat + 1}`,
        h("select", { name: `seat-${seat}`, id: `seat-${seat}`, "aria-describedby": "bot-kinds" },
          h("option", { value: "" }, "A person"), h("option", { value: "greedy" }, "Greedy bot"), h("option", { value: "random" }, "Random bot"))));
    }
    if (seats.length) {
      seats.push(h("p", { class: "muted small", id: "bot-kinds" },
        "A person joins with the invitation link. A greedy bot takes the move worth the most points now; a random bot, any legal move at random. Bots move at once."));
    }
    const kept = [...new FormData(form)]; // what was filled in survives the re-render
    replace(fields,
      h("label", { class: "field" }, "Game",
        h("select", { name: "game", id: "game", onchange: (e) => { state.game = e.target.value; options(); } },
          Object.entries(TITLES).map(([id, title]) => h("option", { value: id, selected: id === state.game }, title)))),
      h("label", { class: "field" }, "Players",
        h("select", { name: "players", id: "players", onchange: (e) => { state.players = Number(e.target.value); options(); } },
          counts.map((n) => h("option", { value: n, selected: n === state.players }, n)))),
      sushi
        ? [
            h("label", { class: "field" }, "Edition",
              h("select", { name: "edition", id: "edition", onchange: (e) => { state.edition = e.target.value; options(); } },
                h("option", { value: "gamewright", selected: state.edition === "gamewright" }, "Gamewright (2–5 players)"),
                h("option", { value: "zoch", selected: state.edition === "zoch" }, "Zoch (3–5 players: wasabi optional, mussels and tuna nigiri)"))),
            h("label", { class: "field" }, "Passing",
              h("select", { name: "pass_direction", id: "pass_direction" }, h("option", { value: "left" }, "Always left"), h("option", { value: "alternate" }, "Left, then right, then left"))),
            state.players === 2 && state.edition === "gamewright"
              ? [h("label", { class: "check" }, h("input", { type: "checkbox", name: "dummy", id: "dummy", "aria-describedby": "dummy-help" }), " Play with the dummy"),
                  h("p", { class: "muted small", id: "dummy-help" }, "A third, card-less player: each turn one of you also picks a card for its pile from your hand. It scores like a player but cannot win (",
                    h("a", { href: "#/rules/sushi-go/S17" }, "S17"), ").")]
              : null,
          ]
        : [
            teamsField(state.players),
            h("label", { class: "check" }, h("input", { type: "checkbox", name: "advanced_jacks", id: "advanced_jacks" }), " Advanced jacks: one-eyed jacks may break a sequence (Q11)"),
          ],
      h("fieldset", { class: "seats" }, h("legend", {}, "Who plays the other seats"), h("p", { class: "muted small" }, "Seat 1 is yours."), seats),
      h("label", { class: "field" }, "Who can join",
        h("select", { name: "visibility", id: "visibility", "aria-describedby": "visibility-help" },
          h("option", { value: "public" }, "Anyone: listed in the lobby"),
          h("option", { value: "private" }, "Private: only with the invitation link"))),
      h("p", { class: "muted small", id: "visibility-help" }, "A private game is not listed; you get a link to send to the people you invite, and can revoke it."),
      h("label", { class: "field" }, "Turn clock",
        h("select", { name: "turn_seconds", id: "turn_seconds" }, CLOCKS.map(([s, label]) => h("option", { value: s }, label)))),
      h("label", { class: "field" }, "Your name",
        h("input", { name: "name", id: "name", required: true, maxlength: 64, autocomplete: "nickname", value: localStorage.getItem("cardroom.name") || "" })),
      h("button", { type: "submit", class: "primary", id: "create-game" }, "Create and sit down"),
    );
    for (const [name, value] of kept) {
      const el = form.elements[name];
      if (!el || ["game", "players", "edition"].includes(name)) continue;
      if (el.type === "checkbox") el.checked = true;
      else if (el.tagName !== "SELECT" || [...el.options].some((o) => o.value === value)) el.value = value;
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { game: state.game, players: state.players, rules: {}, bots: [] };
    if (state.game === "sushi-go") {
      body.rules.edition = data.get("edition");
      body.rules.pass_direction = data.get("pass_direction");
      if (data.get("dummy")) body.rules.dummy = true;
    } else {
      if (data.get("teams")) body.rules.teams = Number(data.get("teams"));
      if (data.get("advanced_jacks")) body.rules.advanced_jacks = true;
    }
    for (let seat = 1; seat < state.players; seat++) {
      const kind = data.get(`seat-${seat}`);
      if (kind) body.bots.push({ seat, kind });
    }
    const seconds = Number(data.get("turn_seconds"));
    if (seconds) body.turn_seconds = seconds;
    if (data.get("visibility") === "private") body.visibility = "private";
    const name = String(data.get("name")).trim();
    localStorage.setItem("cardroom.name", name);
    const button = form.querySelector("#create-game");
    button.disabled = true;
    try {
      const game = await api("POST", "/games", { body });
      const join = { name };
      if (game.invitation) {
        rememberInvitation(game.game_id, game.invitation); // shown once: this browser keeps it
        join.invitation = game.invitation.token;
      }
      const grant = await api("POST", `/games/${game.game_id}/players`, { body: join });
      rememberSeat(game.game_id, grant);
      location.hash = `#/game/${game.game_id}`;
    } catch (error) {
      notify(error.message);
      button.disabled = false;
    }
  });

  options();
  form.append(h("h2", { id: "create-title" }, "New game"), fields);
  return form;
}

function teamsField(players) {
  const teams = [2, 3].filter((t) => players % t === 0 && (players <= 3 || t !== players));
  if (teams.length < 2) return null; // one way to split: the service picks it (Q4)
  return h("label", { class: "field" }, "Teams",
    h("select", { name: "teams", id: "teams" }, teams.map((t) => h("option", { value: t }, `${t} teams`))));
}

// --- lists ------------------------------------------------------------------------------------

function myGames() {
  const seats = mySeats();
  const ids = Object.keys(seats).slice(-PAGE).reverse();
  if (!ids.length) return null;
  const list = h("ul", { class: "games", id: "my-games-list" }, h("li", { class: "muted" }, "Loading…"));
  async function refresh() {
    try {
      const page = await api("GET", `/games?${new URLSearchParams({ ids: ids.join(","), limit: String(PAGE), order: "newest" })}`);
      replace(list, page.games.length ? page.games.map((g) => myRow(g, seats[g.game_id])) : h("li", { class: "muted" }, "None any more."));
    } catch (error) {
      notify(error.message);
    }
  }
  refresh();
  // With an account its games are listed by the account panel: these are this browser's seats.
  const title = h("h2", {}, accountOf() ? "Games joined in this browser" : "Your games");
  const retitle = () => replace(title, accountOf() ? "Games joined in this browser" : "Your games");
  return { element: h("section", { class: "panel", id: "my-games" }, title, list), refresh, retitle };
}

function myRow(g, seat) {
  const target = g.status === "over" ? `#/replay/${g.game_id}` : `#/game/${g.game_id}`;
  const yours = g.waiting_for.includes(seat.seat);
  const status = { waiting: `waiting for ${plural(g.free_seats, "player")}`, playing: yours ? "your turn" : "in play", over: "finished", cancelled: "cancelled: not enough players" }[g.status];
  return h("li", { dataset: { game: g.game_id } },
    h("a", { href: target }, `${TITLES[g.game] || g.game}: ${players(g)}`), " ",
    h("span", { class: `badge ${yours ? "wait" : "done"}` }, status),
    h("span", { class: "muted small" }, ` you are ${seat.name}`),
    g.visibility === "private" ? h("span", { class: "badge" }, "private") : null, rated(g));
}

// A rated game counts for its players' ratings (issue 37): said in words, not by colour alone.
function rated(g) {
  return g.rated ? [h("span", { class: "badge rated" }, "rated"), " "] : null;
}

// A rated game's seated players' ratings in its pool (the API's ordinal, μ − 3σ; the exact value
// in data-ordinal), as GET /games gives them: no request of its own.
function seatRatings(g) {
  const seated = g.rated ? g.seats.filter((s) => s.account_id) : [];
  if (!seated.length) return null;
  const label = (s) => s.name || `${s.bot} bot`;
  const value = (r) => (!r ? "unrated" : `${r.ordinal.toFixed(1)}${r.anchor ? " (anchor)" : r.provisional ? " (provisional)" : ""}`);
  return h("span", { class: "ratings muted small" }, " · ratings: ", seated.flatMap((s, i) => [i ? ", " : "",
    h("span", { class: "seat-rating", dataset: { seat: s.seat, account: s.account_id, ordinal: s.rating ? String(s.rating.ordinal) : "" } },
      `${label(s)} ${value(s.rating)}`)]));
}

function players(g) {
  const taken = g.seats.filter((s) => s.name);
  return taken.length ? taken.map((s) => (s.bot && !/bot/i.test(s.name) ? `${s.name} (${s.bot} bot)` : s.name)).join(", ") : "nobody yet";
}

function gameList(status, title, action) {
  const list = h("ul", { class: "games", id: `games-${status}` }, h("li", { class: "muted" }, "Loading…"));
  const more = h("button", { type: "button", class: "secondary", id: `more-${status}`, hidden: true }, "More");
  let next = null; // the cursor past the last row shown
  let shown = PAGE; // rows asked for when the list refreshes (more after "More")

  async function get(limit, after) {
    const query = new URLSearchParams({ status, limit: String(limit), order: "newest" });
    if (after) query.set("after", after);
    return api("GET", `/games?${query}`);
  }

  async function refresh() {
    try {
      // As many rows as were shown, in pages of at most 100 (the API's most): a refresh must
      // not drop the rows "More" added (it did past 100, under the reader's eyes).
      const games = [];
      let after = null;
      do {
        const page = await get(Math.min(shown - games.length, 100), after);
        games.push(...page.games);
        after = page.next_after;
      } while (after && games.length < shown);
      replace(list, games.length ? games.map((g) => row(g, status, action)) : h("li", { class: "muted" }, "None right now."));
      next = after;
      more.hidden = !next;
    } catch (error) {
      notify(error.message);
    }
  }

  async function loadMore() {
    if (!next) return; // no next page: nothing to add
    more.disabled = true;
    try {
      const page = await get(PAGE, next);
      const have = new Set([...list.children].map((li) => li.dataset.game));
      list.append(...page.games.filter((g) => !have.has(g.game_id)).map((g) => row(g, status, action)));
      shown = list.querySelectorAll("li[data-game]").length;
      next = page.next_after;
      more.hidden = !next;
    } catch (error) {
      notify(error.message);
    } finally {
      more.disabled = false;
    }
  }

  more.addEventListener("click", loadMore);
  refresh();
  return { element: h("section", { class: "panel" }, h("h2", {}, title), list, more), refresh };
}

function row(g, status, action) {
  const target = status === "over" ? `#/replay/${g.game_id}` : `#/game/${g.game_id}`;
  const name = TITLES[g.game] || g.game;
  const waiting = g.waiting_for.map((seat) => g.seats[seat]?.name).filter(Boolean);
  const state = {
    waiting: `${plural(g.free_seats, "free seat")}`,
    playing: waiting.length ? `waiting for ${waiting.join(", ")}` : "playing",
    over: "finished",
  }[status];
  return h("li", { dataset: { game: g.game_id } },
    h("a", { href: target, class: "button small", "aria-label": `${action} the ${name} game of ${players(g)}` }, action), " ",
    h("strong", {}, name), " ", rated(g), h("span", { class: "players" }, players(g)), seatRatings(g), " · ", h("span", { class: "state" }, state),
    h("span", { class: "muted small" }, ` · created ${when(g.created_at)}`));
}
