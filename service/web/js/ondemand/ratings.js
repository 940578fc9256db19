// Ratings on the page (issue 37, goal 5): a rated game's players' ratings at the table, each
// seat's change in the final ranking, and a pool's leaderboard (#/leaderboard/<pool>). Loaded
// only for a rated game or the leaderboard: an unrated game's page is as light as it was.
// The displayed rating is the API's `ordinal` (μ − 3σ); the exact value is kept in data-* so
// what is shown can be checked against GET /accounts/{id}/ratings.
import { api } from "../api.js";
import { h, notify, plural, replace } from "../ui.js";

export const POOLS = { "sushi-go-gamewright": "Sushi Go! (Gamewright)", "sushi-go-zoch": "Sushi Go! (Zoch)", sequence: "Sequence" };
const PAGE = 20;

const shown = (x) => x.toFixed(1);
const signed = (x) => (x >= 0.05 ? `+${shown(x)}` : x <= -0.05 ? `−${shown(-x)}` : "±0.0");

function seatName(view, seat) {
  const s = view.seats[seat];
  return s?.name || (s?.bot ? `${s.bot} bot` : `Seat ${seat + 1}`);
}

/** Each rated seat's rating in the game's pool: one GET per account at the table (≤ 12). */
export async function seatRatings(view) {
  const ids = [...new Set(view.rated_accounts.filter(Boolean))];
  const found = await Promise.all(ids.map(async (id) => {
    try {
      const answer = await api("GET", `/accounts/${encodeURIComponent(id)}/ratings`);
      return [id, answer.ratings.find((r) => r.pool === view.rating_pool) || null];
    } catch (error) {
      notify(error.message);
      return [id, undefined];
    }
  }));
  return new Map(found);
}

function describe(rating) {
  if (rating === undefined) return "unknown";
  if (!rating) return "unrated yet: this is their first rated game";
  if (rating.anchor) return `${shown(rating.ordinal)} (a fixed anchor rating)`;
  return `${shown(rating.ordinal)} (${plural(rating.games, "rated game")}${rating.provisional ? ", provisional" : ""})`;
}

/** The table's ratings panel: who plays for what, in the game's pool. */
export function ratingsPanel(view, ratings) {
  const rows = view.rated_accounts.map((account, seat) => {
    if (!account) return null;
    const rating = ratings?.get(account);
    return h("li", { dataset: { seat, account, ordinal: rating ? String(rating.ordinal) : "" } },
      h("strong", {}, seatName(view, seat)), `: ${ratings ? describe(rating) : "…"}`);
  });
  return h("section", { class: "panel", id: "ratings", "aria-labelledby": "ratings-title" },
    h("h2", { id: "ratings-title" }, "Rated game"),
    h("p", { class: "muted small" }, `It counts for the players' ratings in ${POOLS[view.rating_pool] || view.rating_pool} (the rating shown is μ − 3σ). `,
      h("a", { href: `#/leaderboard/${view.rating_pool}` }, "Leaderboard")),
    h("ul", { id: "seat-ratings" }, rows));
}

/** The final ranking's rating changes (the view's `rating_changes`, once the game is over). */
export function ratingChanges(view) {
  const changes = view.rating_changes;
  if (!changes?.length) return null;
  return h("table", { class: "sheet", id: "rating-changes" },
    h("caption", {}, "Rating changes"),
    h("thead", {}, h("tr", {}, ["Player", "Place", "Before", "After", "Change"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, changes.map((c) => {
      const delta = c.after.ordinal - c.before.ordinal;
      return h("tr", { dataset: { seat: c.seat, account: c.account_id, before: String(c.before.ordinal), after: String(c.after.ordinal) } },
        h("th", { scope: "row" }, seatName(view, c.seat)), h("td", {}, c.rank),
        h("td", {}, shown(c.before.ordinal)), h("td", {}, `→ ${shown(c.after.ordinal)}`),
        h("td", { class: "delta" }, signed(delta)));
    })));
}

// --- the leaderboard (#/leaderboard/<pool>) ---------------------------------------------------

export async function showLeaderboard(main, pool) {
  pool = POOLS[pool] ? pool : "sushi-go-gamewright";
  const body = h("tbody", {});
  const more = h("button", { type: "button", class: "secondary", id: "more-leaderboard", hidden: true }, "More");
  const empty = h("p", { class: "muted", id: "leaderboard-empty", hidden: true }, "Nobody yet: a player appears after 10 rated games of this pool, once their rating is no longer provisional.");
  let next = null;
  let rank = 0;

  async function load() {
    more.disabled = true;
    try {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (next) query.set("after", next);
      const page = await api("GET", `/leaderboards/${pool}?${query}`);
      body.append(...page.players.map((p) => h("tr", { dataset: { account: p.account_id, ordinal: String(p.ordinal) } },
        h("td", {}, ++rank), h("th", { scope: "row" }, p.name), h("td", {}, shown(p.ordinal)),
        h("td", {}, shown(p.mu)), h("td", {}, shown(p.sigma)), h("td", {}, p.games))));
      next = page.next_after;
      more.hidden = !next;
      empty.hidden = rank > 0;
    } catch (error) {
      notify(error.message);
    } finally {
      more.disabled = false;
    }
  }

  more.addEventListener("click", load);
  replace(main, h("h1", {}, "Leaderboard"),
    h("nav", { "aria-label": "Rating pools" }, h("ul", { class: "pools" }, Object.entries(POOLS).map(([id, title]) =>
      h("li", {}, h("a", { href: `#/leaderboard/${id}`, "aria-current": id === pool ? "page" : null }, title))))),
    h("p", { class: "muted small" }, "Players whose rating is no longer provisional (at least 10 rated games), the highest rating first. The rating is μ − 3σ (OpenSkill); anyone can recompute it from the games' exports. ",
      h("a", { href: "#/" }, "Back to the lobby")),
    h("section", { class: "panel" },
      h("table", { class: "sheet", id: "leaderboard" },
        h("caption", {}, POOLS[pool]),
        h("thead", {}, h("tr", {}, ["Rank", "Player", "Rating", "μ", "σ", "Rated games"].map((t) => h("th", { scope: "col" }, t)))),
        body),
      empty, more));
  await load();
}
