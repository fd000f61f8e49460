// A small client for the fairdice HTTP API (/v1, errors as application/problem+json).
// Paths are relative so the page also works behind a path prefix. Refusals are thrown as ApiProblem with
// the server's stable `code`; the page words them from its catalogue, never showing the server's English.
//
// Retries: a request that is safe to send again (a read, or a move with its Idempotency-Key, the same key on
// every attempt) is sent again by itself when the network fails, and when the server answers 429 or 503 with
// a short Retry-After (busy, rate_limited, a store fault...): after exactly as long as it asked. Anything else,
// a longer wait, and the optimal engine's warm-up (which the page shows as it happens), go to the caller with
// the seconds to wait (`retryAfter`).

/** Longest wait for a Retry-After this client honours by itself (a longer one goes to the caller). */
export const MAX_SILENT_WAIT = 5;
export const ATTEMPTS = 3;
/** The statuses whose Retry-After this client honours. */
const RETRY_STATUSES = [429, 503];
/** Refusals of those statuses that the page shows to the player instead of waiting in silence. */
const SHOWN_WAITS = ["engine_warming_up"];

export class ApiProblem extends Error {
  constructor(status, problem, retryAfter = null) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || (status === 0 ? "network_error" : null);
    /** seconds the server asked to wait before trying again (Retry-After), or null */
    this.retryAfter = retryAfter;
  }
}

function randomKey() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Retry-After in seconds (delta-seconds or an HTTP date), or null. */
export function retryAfterSeconds(value, now = Date.now()) {
  if (value === null || value === undefined || value === "") return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, Math.ceil((when - now) / 1000));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function parseBody(resp) {
  const text = await resp.text();
  try {
    return { text, doc: text ? JSON.parse(text) : null };
  } catch {
    return { text, doc: null };
  }
}

/** Sends a request, again by itself while that is safe (see the top of this file); answers the body. */
async function request(method, path, { body, token, idempotent = false, raw = false, notModified = false } = {}) {
  const init = requestInit(method, { body, token, idempotent });
  const safe = idempotent || method === "GET";
  for (let attempt = 1; ; attempt++) {
    const mayRetry = safe && attempt < ATTEMPTS;
    const resp = await fetchOrNull(path, init);
    if (resp === null) {
      if (!mayRetry) throw new ApiProblem(0, { code: "network_error" });
      await sleep(400 * attempt);
      continue;
    }
    const answer = await answerOf(resp, { raw, notModified, mayRetry });
    if (!("waitSeconds" in answer)) return answer.value;
    await sleep(answer.waitSeconds * 1000);
  }
}

/** The fetch options: JSON both ways, the seat's token, and one Idempotency-Key that every attempt sends again. */
function requestInit(method, { body, token, idempotent }) {
  const headers = { Accept: "application/json, application/problem+json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  if (idempotent) headers["Idempotency-Key"] = randomKey(); // the same key on every attempt: one move, once
  return { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" };
}

/** The response, or null when none came (the network failed). */
async function fetchOrNull(path, init) {
  try {
    return await fetch(path, init);
  } catch {
    return null;
  }
}

/** What a response says: {value} to answer, {waitSeconds} before the next attempt (a short wait this client
 * honours by itself, `mayRetry` being true), or it throws the refusal as an ApiProblem. */
async function answerOf(resp, { raw, notModified, mayRetry }) {
  if (resp.ok) {
    const { text, doc } = await parseBody(resp);
    return { value: raw ? text : doc }; // raw: exactly as served (the verifier parses it strictly)
  }
  if (notModified && resp.status === 304) {
    return { value: { notModified: true, retryAfter: retryAfterSeconds(resp.headers.get("Retry-After")) } };
  }
  const { doc } = await parseBody(resp);
  const wait = retryAfterSeconds(resp.headers.get("Retry-After"));
  const problem = doc && typeof doc === "object" ? doc : { title: resp.statusText };
  if (mayRetry && waitsInSilence(resp.status, problem.code, wait)) return { waitSeconds: wait };
  throw new ApiProblem(resp.status, problem, wait);
}

/** Whether a refusal asks for a short pause this client honours by itself (the request being safe to resend). */
export function waitsInSilence(status, code, wait) {
  return RETRY_STATUSES.includes(status) && !SHOWN_WAITS.includes(code) && wait !== null && wait <= MAX_SILENT_WAIT;
}

const g = (id) => `v1/games/${encodeURIComponent(id)}`;

export const api = {
  rules: () => request("GET", "v1/rules"),
  bots: () => request("GET", "v1/bots"),
  keys: () => request("GET", "v1/keys"),
  openapi: () => request("GET", "openapi.json"),
  create: (body) => request("POST", "v1/games", { body }),
  /** the game now; `since`: only the events from that index on; `limit` 0: no events (a cheap freshness check) */
  state: (id, since = 0, limit = null) => {
    const query = [since ? `since=${since}` : "", limit !== null ? `limit=${limit}` : ""].filter(Boolean).join("&");
    return request("GET", g(id) + (query ? `?${query}` : ""));
  },
  /** the game with its events after the first `after`, as soon as it has any (within `wait` seconds: a long
   * poll), or {notModified: true, retryAfter} when none came */
  events: (id, after, wait) => request("GET", `${g(id)}/events?after=${after}&wait=${wait}`, { notModified: true }),
  log: (id) => request("GET", `${g(id)}/log`),
  /** the log's text exactly as served, for verification (JSON.parse would keep the last of two equal keys) */
  logText: (id) => request("GET", `${g(id)}/log`, { raw: true }),
  hint: (id, token) => request("GET", `${g(id)}/hint`, { token }),
  // the moves; `signed`: what a version 3 seat adds (SPEC §5.7: player_key, player_signature, event_count)
  clientSeed: (id, token, clientSeed, signed = {}) => move(id, token, "client-seed", { client_seed: clientSeed, ...signed }),
  roll: (id, token, hold, signed = {}) => move(id, token, "roll", { hold, ...signed }),
  score: (id, token, category, signed = {}) => move(id, token, "score", { category, ...signed }),
  abandon: (id, token, signed = {}) => move(id, token, "abandon", { ...signed }),
  /** any move: `route` client-seed (a seed, a commitment or a reveal), roll, score or abandon */
  move: (id, token, route, body) => move(id, token, route, body),
};

function move(id, token, route, body) {
  return request("POST", `${g(id)}/${route}`, { token, body, idempotent: true });
}
