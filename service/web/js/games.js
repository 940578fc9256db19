// The games this page can show, by the `game` field of the API's bodies. A game's module is
// loaded only when a page shows that game. Each exports the same interface: title,
// describeGame, phase, yourTurn, turnOf, newDraft, render, replayView, scoreSheet,
// describeEvent, cardName; and, where cards sit on cells, cellName (the replay names them).

export const TITLES = { "sushi-go": "Sushi Go!", sequence: "Sequence" };

const LOADERS = {
  "sushi-go": () => import("./games/sushigo.js"),
  sequence: () => import("./games/sequence.js"),
};

export async function moduleFor(game) {
  const load = LOADERS[game];
  if (!load) throw new Error(`This page cannot show games of '${game}' yet; the REST API can.`);
  return load();
}

// Which game each game id this browser has shown is (the last KNOWN_MAX of them): on a return
// visit (a reload, a game of yours reopened) its module is asked for together with the view,
// not after it. A first visit learns it from the view.
const KNOWN = "cardroom.gameKinds";
const KNOWN_MAX = 200;

function known() {
  try {
    return JSON.parse(localStorage.getItem(KNOWN)) || {};
  } catch {
    return {};
  }
}

export const knownGame = (gameId) => known()[gameId] ?? null;

export function rememberGame(gameId, game) {
  const all = known();
  if (all[gameId] === game) return;
  delete all[gameId]; // most recent last: the oldest go first when there are too many
  all[gameId] = game;
  const ids = Object.keys(all);
  for (const old of ids.slice(0, Math.max(0, ids.length - KNOWN_MAX))) delete all[old];
  localStorage.setItem(KNOWN, JSON.stringify(all));
}
