// The page's router: #/ (lobby), #/game/<id> (play or watch), #/replay/<id>[/<version>],
// #/leaderboard[/<pool>].
import { showLobby } from "./lobby.js";
import { showGame } from "./play.js";
import { showRules } from "./rules.js";
import { clearNotice, h, replace } from "./ui.js";

const main = document.getElementById("main");
let leave = null; // stops the current page's live stream and timers
let shown = null;

async function route() {
  const hash = location.hash || "#/";
  const replay = hash.match(/^#\/replay\/([0-9a-f-]{36})(?:\/(\d+))?$/i);
  // The replay rewrites its own hash as it steps: that is not a new page.
  if (replay && shown === `replay:${replay[1]}`) return;
  leave?.();
  leave = null;
  clearNotice();
  window.scrollTo(0, 0); // a new page starts at its top, not at the last page's scroll position
  // A private game's invitation link: #/game/<id>?invitation=<token>.
  const game = hash.match(/^#\/game\/([0-9a-f-]{36})(?:\?invitation=([A-Za-z0-9_%-]{1,128}))?$/i);
  const board = hash.match(/^#\/leaderboard(?:\/([a-z-]{1,40}))?$/);
  const rules = hash.match(/^#\/rules\/([a-z0-9-]{1,40})(?:\/([A-Z]\d+))?$/);
  if (rules) {
    shown = `rules:${rules[1]}`;
    await showRules(main, rules[1], rules[2]);
    if (rules[2]) return; // focus is on the ruling asked for
  } else if (game) {
    shown = `game:${game[1]}`;
    leave = await showGame(main, game[1], game[2] ? decodeURIComponent(game[2]) : null);
  } else if (replay) {
    shown = `replay:${replay[1]}`;
    // Loaded when a replay is shown (a game's page does not need it: issue 29 kept its weight).
    const { showReplay } = await import("./ondemand/replay.js");
    await showReplay(main, replay[1], replay[2] ? Number(replay[2]) : null);
  } else if (board) {
    shown = `leaderboard:${board[1]}`;
    const { showLeaderboard } = await import("./ondemand/ratings.js"); // issue 37
    await showLeaderboard(main, board[1]);
  } else if (hash === "#/" || hash === "#") {
    shown = "lobby";
    leave = await showLobby(main);
  } else {
    shown = null;
    replace(main, h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
  }
  main.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
route();
