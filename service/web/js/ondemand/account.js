// The lobby's account panel (issue 35): create an account or use a token, kept in this browser
// like the seats' tokens; then the account's name, "Quick match" and "Your games" (its history).
// Loaded by the lobby only: a game's page does not need it. Without an account nothing else
// changes: anonymous play is as it was.
import { accountOf, api, forgetAccount, rememberAccount, rememberSeat } from "../api.js";
import { TITLES } from "../games.js";
import { h, notify, plural, replace, when } from "../ui.js";

const PAGE = 10;
const QUICK_PLAYERS = { "sushi-go": [2, 3, 4, 5], sequence: [2, 3, 4] };

/** Fills `slot` with the account panel; returns its refresh (the lobby calls it now and then). */
export function showAccount(slot, onChange) {
  let games = null;
  function render() {
    const account = accountOf();
    games = account ? accountGames(account) : null;
    replace(slot, account ? signedIn(account, games, changed) : anonymous(changed));
  }
  function changed() {
    render();
    onChange?.();
  }
  render();
  return () => games?.refresh();
}

// --- without an account -----------------------------------------------------------------------

function anonymous(changed) {
  const name = h("input", { id: "account-name", name: "name", required: true, maxlength: 64, autocomplete: "nickname", value: localStorage.getItem("cardroom.name") || "" });
  const create = h("form", { id: "create-account", onsubmit: (e) => submit(e, async () => {
    const created = await api("POST", "/accounts", { body: { name: name.value.trim() } });
    rememberAccount(created);
    notify(`Account “${created.name}” created. Its token is kept in this browser: copy it from the account panel to use it elsewhere.`, "info");
  }) },
  h("label", { for: "account-name" }, "Name"), " ", name, " ",
  h("button", { type: "submit", class: "primary" }, "Create an account"));
  const token = h("input", { id: "account-token", name: "token", type: "password", required: true, autocomplete: "off", placeholder: "cardroom_pat_…" });
  const use = h("form", { id: "use-token", onsubmit: (e) => submit(e, async () => {
    const value = token.value.trim();
    const me = await api("GET", "/accounts/me", { token: value });
    rememberAccount({ ...me, token: value });
  }) },
  h("label", { for: "account-token" }, "Token"), " ", token, " ",
  h("button", { type: "submit", class: "secondary" }, "Use a token"));

  async function submit(event, act) {
    event.preventDefault();
    const button = event.target.querySelector("button");
    button.disabled = true;
    try {
      await act();
      changed();
    } catch (error) {
      notify(error.message);
      button.disabled = false;
    }
  }

  return h("details", { class: "panel", id: "account" },
    h("summary", {}, "Account (optional)"),
    h("p", { class: "muted small" }, "An account keeps your name and lists your games, in every game you join with it. You can play without one, as before."),
    create, use);
}

// --- with an account --------------------------------------------------------------------------

function signedIn(account, games, changed) {
  const forget = () => {
    forgetAccount();
    changed();
  };
  return h("section", { class: "panel", id: "account" },
    h("h2", {}, "Your account"),
    h("p", {}, "Playing as ", h("strong", { id: "account-shown" }, account.name), " ",
      h("button", { type: "button", class: "secondary small", id: "forget-account", onclick: forget }, "Forget in this browser")),
    h("details", {}, h("summary", {}, "Token"),
      h("p", { class: "muted small" }, "Paste it in “Use a token” on another device to play as this account there. Anyone with it can play as you."),
      h("code", { id: "account-token-shown" }, account.token)),
    quickForm(account),
    games.element);
}

function quickForm(account) {
  const game = h("select", { id: "quick-game", name: "game", onchange: () => players() },
    Object.entries(TITLES).map(([id, title]) => h("option", { value: id }, title)));
  const count = h("select", { id: "quick-players", name: "players", "aria-label": "Players" });
  function players() {
    replace(count, QUICK_PLAYERS[game.value].map((n) => h("option", { value: n }, plural(n, "player"))));
  }
  players();
  const button = h("button", { type: "submit", class: "primary", id: "quick-match" }, "Quick match");
  return h("form", { id: "quick", onsubmit: async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const body = { game: game.value, players: Number(count.value) };
      const grant = await api("POST", "/games/quick", { body, token: account.token });
      rememberSeat(grant.game_id, grant);
      location.hash = `#/game/${grant.game_id}`;
    } catch (error) {
      notify(error.status === 404 || error.status === 405 ? "Quick match is not available on this server yet." : error.message);
      button.disabled = false;
    }
  } },
  h("label", { for: "quick-game" }, "Quick match"), " ", game, " ", count, " ", button,
  h("p", { class: "muted small" }, "Sits you in an open game with these rules, or opens one for others to join."));
}

function accountGames(account) {
  const list = h("ul", { class: "games", id: "account-games-list" }, h("li", { class: "muted" }, "Loading…"));
  const section = h("section", { id: "account-games" }, h("h3", {}, "Your games"), list);
  async function refresh() {
    const query = new URLSearchParams({ order: "newest", limit: String(PAGE) });
    try {
      const page = await api("GET", `/accounts/${encodeURIComponent(account.account_id)}/games?${query}`, { token: account.token });
      section.hidden = false;
      replace(list, page.games.length ? page.games.map(row) : h("li", { class: "muted" }, "None yet: join a game as your account."));
    } catch (error) {
      if (error.status === 404) section.hidden = true; // a service without histories
      else notify(error.message);
    }
  }
  refresh();
  return { element: section, refresh };
}

const STATUS = { waiting: "waiting for players", playing: "in play", over: "finished", cancelled: "cancelled" };
const RESULT = { win: "won", loss: "lost", draw: "draw" };

function row(g) {
  const target = g.status === "over" ? `#/replay/${g.game_id}` : `#/game/${g.game_id}`;
  const names = g.seats.filter((s) => s.name).map((s) => s.name).join(", ") || "nobody yet";
  return h("li", { dataset: { game: g.game_id } },
    h("a", { href: target }, `${TITLES[g.game] || g.game}: ${names}`), " ",
    h("span", { class: "badge" }, g.result ? RESULT[g.result] : STATUS[g.status] || g.status),
    h("span", { class: "muted small" }, ` · ${when(g.created_at)}`));
}
