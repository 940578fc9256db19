// The benchmark's peer server: boardgame.io 0.50's Server with bgio-postgres (bench/peer.py).
//
// Environment: DATABASE_URL (a scratch database; bgio-postgres creates its "Games" table), PORT
// (served on 127.0.0.1 only).
//
// What a client uses: boardgame.io's own Lobby REST API (POST /games/sushi-go/create, POST
// /games/sushi-go/:id/join) and, for moves and a seat's view, two routes added here. boardgame.io
// 0.50 has no HTTP move endpoint (a browser client sends moves over its socket.io transport), so
// the move route does what the socket's 'update' handler does (SocketIO.init in 0.50's
// server.js): a Master with the same transport API (sendAll publishes to the transport's pubSub,
// where socket subscribers of the match would get it) runs onUpdate in the match's own queue
// (one action at a time per match). The route answers once onUpdate has returned, i.e. after
// bgio-postgres has written the state (the socket sends the update before the write): like
// cardroom's POST /games/{id}/moves, with the acting seat's view as the socket would filter it.
// The view route is the socket's sync without the log: the stored state, the seat's
// credentials checked, filtered by the game's playerView.
//
// package.json pins koa-compose to 4.1.0 (an npm override): with 4.2.0, which copies the
// middleware list when composing, the server answers 404 to every route, because koa-socket-2
// composes the app's middleware when Server() attaches it, before run() adds the router.
'use strict';

const { Server, Origins } = require('boardgame.io/server');
const { Master } = require('boardgame.io/master');
const { getFilterPlayerView } = require('boardgame.io/internal');
const { PostgresStore } = require('bgio-postgres');
const koaBody = require('koa-body');
const { SushiGo } = require('./game');

const db = new PostgresStore(process.env.DATABASE_URL, { logging: false });
const server = Server({ games: [SushiGo], db, origins: [Origins.LOCALHOST] });
const filter = getFilterPlayerView(SushiGo);

function refuse(ctx, status, error) {
  ctx.status = status;
  ctx.body = { error };
}

server.router.post('/games/sushi-go/:id/move', koaBody(), async (ctx) => {
  const matchID = ctx.params.id;
  const { playerID, credentials, card, stateID } = ctx.request.body;
  let update;
  const transport = {
    send: () => {},
    sendAll: (payload) => {
      update = payload;
      server.transport.pubSub.publish(`MATCH-${matchID}`, payload);
    },
  };
  const master = new Master(SushiGo, db, transport, server.auth);
  const action = {
    type: 'MAKE_MOVE',
    payload: { type: 'pick', args: [card], playerID, credentials },
  };
  const queue = server.transport.getMatchQueue(matchID);
  const refused = await queue.add(() => master.onUpdate(action, stateID, matchID, playerID));
  if (update === undefined) {
    refuse(ctx, refused && refused.error === 'unauthorized action' ? 403 : 409,
      (refused && refused.error) || 'move not processed');
    return;
  }
  const [, state, log] = filter(playerID, update).args;
  if (!log || log.length === 0) {
    // INVALID_MOVE: boardgame.io still sends the unchanged state, with nothing in its log.
    refuse(ctx, 409, 'invalid move');
    return;
  }
  ctx.body = { matchID, state, log };
});

server.router.get('/games/sushi-go/:id/view', async (ctx) => {
  const matchID = ctx.params.id;
  const { playerID, credentials } = ctx.query;
  const { state, metadata } = await db.fetch(matchID, { state: true, metadata: true });
  if (state === undefined || metadata === undefined) {
    refuse(ctx, 404, 'match not found');
    return;
  }
  if (!(await server.auth.authenticateCredentials({ playerID, credentials, metadata }))) {
    refuse(ctx, 403, 'unauthorized');
    return;
  }
  const [, filtered] = filter(playerID, { type: 'update', args: [matchID, state] }).args;
  ctx.body = { matchID, state: filtered };
});

// Loopback only: Server.run listens on every address, so its app is told where.
const listen = server.app.listen.bind(server.app);
server.app.listen = (port, callback) => listen(port, '127.0.0.1', callback);

server.run(Number(process.env.PORT || 8000));
