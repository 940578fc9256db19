// The rulings a game is played by (#/rules/<game>[/<code>]), as GET /rules/{game} serves them
// from docs/rules: the text behind every rule code the replay and the score sheet cite.
import { api } from "./api.js";
import { TITLES } from "./games.js";
import { h, replace } from "./ui.js";

const loaded = new Map(); // game → the rulings (they change only with a new release)

/** The game's rulings as a map code → text (fetched once per page load). */
export async function rulingsOf(game) {
  if (!loaded.has(game)) {
    loaded.set(game, api("GET", `/rules/${encodeURIComponent(game)}`).then((body) => new Map(body.rulings.map((r) => [r.code, r.text]))));
  }
  return loaded.get(game);
}

export async function showRules(main, game, code) {
  let rulings;
  try {
    rulings = await rulingsOf(game);
  } catch (error) {
    loaded.delete(game);
    replace(main, h("h1", {}, "Rules not found"), h("p", {}, error.message), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
    return;
  }
  replace(main,
    h("h1", {}, `${TITLES[game] || game}: the rulings`),
    h("p", { class: "lead" }, "Where the rulebooks leave a question open, these answers are the service's. Scores, the audit and the replay cite them by code."),
    h("p", {}, h("button", { type: "button", class: "linklike", id: "rules-back", onclick: () => history.back() }, "← Back")),
    h("ol", { class: "rulings", id: "rulings" }, [...rulings].map(([c, text]) =>
      h("li", { id: `rule-${c}`, class: c === code ? "target" : "", tabindex: -1 }, h("strong", {}, `${c}. `), text))));
  const target = code && document.getElementById(`rule-${code}`);
  if (target) {
    target.scrollIntoView({ block: "center" });
    target.focus({ preventScroll: true });
  }
}
