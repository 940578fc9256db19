// The games this page can show, by the `game` field of the API's bodies. Each module exports the
// same interface: title, describeGame, phase, turnOf, newDraft, render, replayView, scoreSheet,
// describeEvent, cardName; and, where cards sit on cells, cellName (the replay names them).
import * as sequence from "./games/sequence.js";
import * as sushigo from "./games/sushigo.js";

export const GAMES = { "sushi-go": sushigo, sequence };

export function moduleFor(game) {
  const module = GAMES[game];
  if (!module) throw new Error(`This page cannot show games of '${game}' yet; the REST API can.`);
  return module;
}
