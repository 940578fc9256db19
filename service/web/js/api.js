// The public REST API and its event stream, as any third-party client uses them.

/** Messages of errors that say the service could not be reached (no answer, or a 503): once it
 * answers again, a notice showing one of them is out of date. */
export const troubles = new Set();

export class ApiError extends Error {
  constructor(status, problem) {
    super(describe(status, problem));
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code;
    if (status === 0 || status === 503) troubles.add(this.message);
  }
}

function describe(status, problem) {
  if (!problem) return `The server answered ${status}.`;
  let text = problem.detail || problem.title || `The server answered ${status}.`;
  const errors = problem.errors; // field → messages for invalid_request; other codes: facts
  if (problem.code === "invalid_request" && errors && typeof errors === "object") {
    const parts = Object.entries(errors).map(([field, msgs]) => `${field}: ${[msgs].flat().join(", ")}`);
    if (parts.length) text += ` (${parts.join("; ")})`;
  }
  return text;
}

// Sent with every keyed POST and its retries, shown in no answer: a replayed answer that holds a
// secret (a seat's token, an invitation) comes back only to this page, not to whoever learns
// its Idempotency-Key (README, "Retrying safely").
const IDEMPOTENCY_SECRET = crypto.randomUUID();

const RETRIES = 3; // after a 503 (the database is briefly away) or a lost connection
const MAX_WAIT_MS = 5000;

/**
 * A request; resolves to the JSON body (null for 204), rejects with an ApiError. A 503 or a lost
 * connection is retried a few times, after the server's Retry-After; a POST keeps its
 * Idempotency-Key across the retries, so a pick that did land is not made twice.
 */
export async function api(method, path, { body, token, idempotent = method === "POST" } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (idempotent) {
    headers["Idempotency-Key"] = crypto.randomUUID();
    headers["Idempotency-Secret"] = IDEMPOTENCY_SECRET;
  }
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
  for (let attempt = 0; ; attempt++) {
    let response;
    try {
      response = await fetch(path, init);
    } catch {
      if (attempt < RETRIES && (method === "GET" || idempotent)) {
        await pause(500 * 2 ** attempt);
        continue;
      }
      throw new ApiError(0, { detail: "The service cannot be reached. Check your connection and try again." });
    }
    if (response.status === 503 && attempt < RETRIES && (method === "GET" || idempotent)) {
      const seconds = Number(response.headers.get("Retry-After"));
      await pause(Number.isFinite(seconds) ? Math.min(seconds * 1000, MAX_WAIT_MS) : 1000);
      continue;
    }
    const data = await answer(response);
    if (data?.receipt) keepReceipt(data.receipt);
    return data;
  }
}

function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function answer(response) {
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

// --- seats: the token of each game this browser joined, kept across reloads ---------------------

const SEATS = "cardroom.seats";

function seats() {
  try {
    return JSON.parse(localStorage.getItem(SEATS)) || {};
  } catch {
    return {};
  }
}

export function seatOf(gameId) {
  return seats()[gameId] || null;
}

export function rememberSeat(gameId, grant) {
  const all = seats();
  all[gameId] = { seat: grant.seat, name: grant.name, token: grant.token };
  localStorage.setItem(SEATS, JSON.stringify(all));
}

export function forgetSeat(gameId) {
  const all = seats();
  delete all[gameId];
  localStorage.setItem(SEATS, JSON.stringify(all));
}

export function mySeats() {
  return seats();
}

// --- an account (issue 35): its personal access token, kept like the seats' tokens -------------

const ACCOUNT = "cardroom.account";

/** The account this browser acts as, `{account_id, name, token}`, or null (anonymous play). */
export function accountOf() {
  try {
    return JSON.parse(localStorage.getItem(ACCOUNT)) || null;
  } catch {
    return null;
  }
}

export function rememberAccount({ account_id, name, token }) {
  localStorage.setItem(ACCOUNT, JSON.stringify({ account_id, name, token }));
}

export function forgetAccount() {
  localStorage.removeItem(ACCOUNT);
}

// --- invitations: a private game's invitation (and, for its creator, the creator token) -------

const INVITATIONS = "cardroom.invitations";

function invitations() {
  try {
    return JSON.parse(localStorage.getItem(INVITATIONS)) || {};
  } catch {
    return {};
  }
}

/** Keeps what this browser knows of a private game's invitation: `{token, creator_token?}`. */
export function rememberInvitation(gameId, invitation) {
  const all = invitations();
  all[gameId] = { ...all[gameId], ...invitation };
  localStorage.setItem(INVITATIONS, JSON.stringify(all));
}

export function invitationOf(gameId) {
  return invitations()[gameId] || null;
}

/** The link that joins a private game (the token in the fragment: never sent to a server). */
export function invitationLink(gameId, token) {
  return `${location.origin}/#/game/${gameId}?invitation=${encodeURIComponent(token)}`;
}

// --- receipts: the service's signed receipt of every accepted command, this browser's evidence ----

const RECEIPTS = "cardroom.receipts";
const KEPT_GAMES = 200; // a game's receipts are a few kB: the oldest games' go first

function allReceipts() {
  try {
    return JSON.parse(localStorage.getItem(RECEIPTS)) || {};
  } catch {
    return {};
  }
}

export function keepReceipt(receipt) {
  const all = allReceipts();
  const kept = all[receipt.game_id] || [];
  delete all[receipt.game_id]; // re-inserted last: the most recent game
  all[receipt.game_id] = [...kept.filter((r) => r.signature !== receipt.signature), receipt];
  for (const old of Object.keys(all).slice(0, -KEPT_GAMES)) delete all[old];
  try {
    localStorage.setItem(RECEIPTS, JSON.stringify(all));
  } catch {
    // storage full or disabled: the answer itself still succeeded
  }
}

export function receiptsOf(gameId) {
  return allReceipts()[gameId] || [];
}

// --- the event stream -----------------------------------------------------------------------------

/**
 * Follows GET /games/{id}/stream (Server-Sent Events) from version `after` on, calling
 * `onEvent(record)` for each event. fetch, not EventSource: only fetch can send the seat's token,
 * and the stream redacts each event for whoever asks. Reconnects where it left off when the server
 * ends a stream; stops at 204 (nothing more will ever come) or when `stop()` is called.
 */
export function follow(gameId, { token, after = 0, onEvent, onState, onRematch }) {
  const control = new AbortController();
  let last = after;
  let stopped = false;

  async function once() {
    const headers = { Accept: "text/event-stream", "Last-Event-ID": String(last) };
    if (token) headers.Authorization = `Bearer ${token}`;
    // After the game's end the stream stays open for its rematch (a `rematch` message).
    const response = await fetch(`/games/${gameId}/stream?follow_rematch=true`, { headers, signal: control.signal });
    if (response.status === 204) return false;
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    onState?.("live");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return true;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const record = parseFrame(frame);
        if (record && /^event: ?rematch$/m.test(frame)) {
          last = `${last}r`; // the announcement's id: nothing follows it
          onRematch?.(record);
        } else if (record) {
          last = record.version;
          onEvent(record);
        }
      }
    }
  }

  (async () => {
    let delay = 500;
    while (!stopped) {
      try {
        if (!(await once())) break;
        delay = 500;
      } catch (error) {
        if (stopped) break;
        onState?.("reconnecting", error);
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 10000);
      }
    }
    if (!stopped) onState?.("ended");
  })();

  return {
    stop() {
      stopped = true;
      control.abort();
    },
  };
}

function parseFrame(frame) {
  let data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith("data:")) data += line.slice(5).trimStart();
  }
  if (!data) return null;
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}
