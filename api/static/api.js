// A small client for the fairdice HTTP API (/v1, errors as application/problem+json).
// Paths are relative so the page also works behind a path prefix.

export class ApiProblem extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || null;
  }
}

function randomKey() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

async function request(method, path, { body, token, idempotent = false } = {}) {
  const headers = { Accept: "application/json, application/problem+json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  if (idempotent) headers["Idempotency-Key"] = randomKey();
  const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" };
  let resp;
  // A command carries an Idempotency-Key, so it can be sent again safely when the network drops.
  for (let attempt = 0; ; attempt++) {
    try {
      resp = await fetch(path, init);
      if (resp.status === 503 && attempt < 3) {
        await new Promise((r) => setTimeout(r, 300 * (attempt + 1)));
        continue;
      }
      break;
    } catch (err) {
      if (attempt >= (idempotent || method === "GET" ? 2 : 0)) {
        throw new ApiProblem(0, { title: "Network error", detail: "The server cannot be reached. Check your connection and try again." });
      }
      await new Promise((r) => setTimeout(r, 400 * (attempt + 1)));
    }
  }
  const text = await resp.text();
  let doc = null;
  try {
    doc = text ? JSON.parse(text) : null;
  } catch {
    doc = null;
  }
  if (!resp.ok) throw new ApiProblem(resp.status, doc || { title: resp.statusText });
  return doc;
}

const g = (id) => `v1/games/${encodeURIComponent(id)}`;

export const api = {
  rules: () => request("GET", "v1/rules"),
  bots: () => request("GET", "v1/bots"),
  keys: () => request("GET", "v1/keys"),
  openapi: () => request("GET", "openapi.json"),
  create: (body) => request("POST", "v1/games", { body }),
  state: (id, since) => request("GET", g(id) + (since ? `?since=${since}` : "")),
  log: (id) => request("GET", `${g(id)}/log`),
  hint: (id, token) => request("GET", `${g(id)}/hint`, { token }),
  clientSeed: (id, token, clientSeed) =>
    request("POST", `${g(id)}/client-seed`, { token, body: { client_seed: clientSeed }, idempotent: true }),
  roll: (id, token, hold) => request("POST", `${g(id)}/roll`, { token, body: { hold }, idempotent: true }),
  score: (id, token, category) => request("POST", `${g(id)}/score`, { token, body: { category }, idempotent: true }),
  abandon: (id, token) => request("POST", `${g(id)}/abandon`, { token, body: {}, idempotent: true }),
};
