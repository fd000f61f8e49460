// The optimal bot's tables for the page's verdict (SPEC §4.6): fetched from the server (GET /v1/tables/{rules}),
// held to the published digest (the one the log's bot identity commits to, so an untrusted server cannot pass
// off another table), and kept in the browser (Cache Storage; in memory where there is none), so that a table
// is downloaded once per browser. verify.js checks the digest again when it is given the bytes.
// No DOM here: the page says what is being downloaded (tableSize, onProgress) and shows the verdict.

import { PUBLISHED_BOTS, sha256Hex, tableHeader, tableShape } from "./verify.js";

const CACHE_NAME = "fairdice-optimal-tables-v1";
const memory = new Map(); // digest -> bytes, where Cache Storage is not available (or refuses)

/** The rule set whose optimal table a log needs to replay its bots, or null: an optimal bot seat, no upper_first. */
export function optimalRulesOf(doc) {
  const h = doc && doc.header;
  if (!h || h.upper_first !== false || !Array.isArray(h.seats)) return null;
  const digests = PUBLISHED_BOTS.optimal.params.table_sha256;
  const optimal = h.seats.some((s) => s && s.type === "bot" && s.bot && s.bot.id === "optimal");
  return optimal && Object.prototype.hasOwnProperty.call(digests, h.rules) ? h.rules : null;
}

/** The size in bytes of a rule set's table (its canonical bytes, as the browser holds them once unpacked). */
export function tableSize(rules) {
  return tableHeader(rules).length + 8 * tableShape(rules).reduce((a, b) => a * b, 1);
}

/** A table that could not be had: `reason` "unavailable" (the server did not send it) or "bad_table" (it sent
 * bytes whose SHA-256 is not the published digest: refused). */
export class TableProblem extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
}

async function cached(digest) {
  if (memory.has(digest)) return memory.get(digest);
  try {
    const cache = globalThis.caches && await globalThis.caches.open(CACHE_NAME);
    const hit = cache && await cache.match(`/tables/${digest}`);
    return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
  } catch {
    return null;
  }
}

async function keep(digest, bytes) {
  try {
    const cache = globalThis.caches && await globalThis.caches.open(CACHE_NAME);
    if (cache) {
      await cache.put(`/tables/${digest}`, new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } }));
      return;
    }
  } catch {
    // (a private window may refuse storage: the table is kept in memory instead)
  }
  memory.set(digest, bytes);
}

/** The body of `resp`, read as it arrives: onProgress(bytes so far, bytes expected). */
async function readBody(resp, expected, onProgress) {
  if (!resp.body || !resp.body.getReader) return new Uint8Array(await resp.arrayBuffer());
  const reader = resp.body.getReader();
  const parts = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    received += value.length;
    if (onProgress) onProgress(received, expected);
  }
  const out = new Uint8Array(received);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The canonical bytes of `rules`'s optimal table, from this browser's cache or the server, its SHA-256 checked
 * against the published digest. options.base: the server's URL (default: this page's); options.fetch; options
 * .onProgress(received, expected): as the table arrives (expected: tableSize, the unpacked size). Throws a
 * TableProblem when the server does not send it ("unavailable") or sends another table ("bad_table").
 */
export async function optimalTable(rules, { base = "", fetch: fetchImpl = globalThis.fetch, onProgress = null } = {}) {
  const digest = PUBLISHED_BOTS.optimal.params.table_sha256[rules];
  const hit = await cached(digest);
  if (hit && await sha256Hex(hit) === digest) return hit;
  let resp;
  try {
    resp = await fetchImpl(`${base}/v1/tables/${encodeURIComponent(rules)}`);
  } catch (err) {
    throw new TableProblem("unavailable", `the ${rules} table could not be fetched: ${err.message}`);
  }
  if (!resp.ok) throw new TableProblem("unavailable", `the server answered ${resp.status} for the ${rules} table`);
  const bytes = await readBody(resp, tableSize(rules), onProgress);
  const found = await sha256Hex(bytes);
  if (found !== digest) {
    throw new TableProblem("bad_table", `the ${rules} table the server sent has SHA-256 ${found}, not the published ${digest}`);
  }
  await keep(digest, bytes);
  return bytes;
}

/**
 * What verifyLog's `tables` option needs for this log: {tables: {rules: bytes}} (empty when no optimal bot
 * plays), and `problem`: null, or the TableProblem that left the optimal bot unchecked (the verdict then says
 * "not checked", never ✓; a "bad_table" is the server's doing and worth saying).
 */
export async function tablesFor(doc, options = {}) {
  const rules = optimalRulesOf(doc);
  if (!rules) return { tables: {}, problem: null };
  try {
    return { tables: { [rules]: await optimalTable(rules, options) }, problem: null };
  } catch (err) {
    if (err instanceof TableProblem) return { tables: {}, problem: err };
    throw err;
  }
}
