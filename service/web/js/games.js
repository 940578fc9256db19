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
