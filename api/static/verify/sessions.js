// Session logs (SPEC §10): an app's own fair dice, checked in the browser with the check ids of SPEC §10.9 and
// the verdicts of the reference verifier (verifier/sessions.py): the notation (§10.4) by its own scanner, every
// die from its own HMAC-SHA256 stream in candidates of one or two bytes, the session chain and receipts (§10.6),
// the app's signatures (§10.7). `session.format` stops everything; the other checks all run.

import { concat, enc, field, hexToBytes, sha256, sha256Hex, u32 } from "./bytes.js";
import { canonicalJSON } from "./canonical.js";
import { has, isHex, isInt, isObject, isStr, sameKeys } from "./json.js";
import { ed25519Verify } from "./keys.js";
import { hmacKey } from "./scheme.js";
import { clientSeedValid } from "./seedrule.js";

export const SESSION_FORMAT = "fairdice-session-log";
export const SESSION_CHECKS = Object.freeze([
  "session.format", "session.key", "session.signature", "session.order", "session.commitment", "session.nonce",
  "session.notation", "session.dice", "session.total", "session.app_signature", "session.receipt",
]);
export const SESSION_LABELS = Object.freeze({
  chain: "fairdice-session-chain/v1", receipt: "fairdice-session-receipt/v1", app: "fairdice-session-app/v1",
});
const HEADER_FIELDS = ["scheme", "session_id", "commitment", "next_commitment", "key_id", "public_key"];
const EVENT_FIELDS = {
  client_seed: ["type", "pair", "client_seed", "app_key"],
  roll: ["type", "pair", "nonce", "serial", "dice", "rolls", "dropped", "total", "app_signature"],
  rotate: ["type", "pair", "server_seed", "next_commitment", "app_signature"],
};
const U32 = 2 ** 32;
const isCount = (x) => isInt(x) && x >= 0 && x < U32;
const isIntList = (x) => Array.isArray(x) && x.every(isInt);
const nullOrHex = (x, n) => x === null || isHex(x, n);

export const isSessionLog = (doc) => isObject(doc) && doc.format === SESSION_FORMAT;

/** A decimal number at text[i..] (no leading zero, at most 7 digits): [value or null, the index after it]. */
function number(text, i) {
  let j = i;
  while (j < text.length && text[j] >= "0" && text[j] <= "9") j++;
  const digits = text.slice(i, j);
  if (!digits || digits.length > 7 || (digits.length > 1 && digits[0] === "0")) return [null, j];
  return [Number(digits), j];
}

/** {count, sides, keepMode, keep, modifier} of a valid notation (SPEC §10.4), else its refusal code. */
export function parseNotation(text) {
  if (!isStr(text) || text.length > 32) return "dice_syntax";
  let i = 0;
  let count = 1;
  if (text[0] !== "d") {
    [count, i] = number(text, 0);
    if (count === null) return "dice_syntax";
  }
  if (text[i] !== "d") return "dice_syntax";
  let sides;
  [sides, i] = number(text, i + 1);
  if (sides === null) return "dice_syntax";
  let keepMode = null;
  let keep = null;
  const mode = text.slice(i, i + 2);
  if (mode === "kh" || mode === "kl") {
    keepMode = mode;
    [keep, i] = number(text, i + 2);
    if (keep === null) return "dice_syntax";
  }
  let modifier = 0;
  if (text[i] === "+" || text[i] === "-") {
    const sign = text[i];
    [modifier, i] = number(text, i + 1);
    if (modifier === null) return "dice_syntax";
    if (modifier < 1 || modifier > 100000) return "dice_modifier";
    if (sign === "-") modifier = -modifier;
  }
  if (i !== text.length) return "dice_syntax";
  if (count < 1 || count > 100) return "dice_count";
  if (sides < 2 || sides > 1000) return "dice_sides";
  if (keep !== null && (keep < 1 || keep > count)) return "dice_keep";
  return { count, sides, keepMode, keep, modifier };
}

/** msg("session-roll", nonce, index) of SPEC §10.4. */
export function dieMessage(sessionId, clientSeed, nonce, index) {
  return concat([field("fairdice/v1"), field("session-roll"), field(sessionId), u32(1), field(clientSeed),
    u32(nonce), u32(index)]);
}

/** Die `index` of the roll with `nonce`: the first accepted candidate (1 byte for M <= 256, else 2) below
 * L = 256^w - 256^w mod M, as face x mod M + 1; the stream goes on into block(1), block(2), ... */
export async function sessionDie(key, sessionId, clientSeed, nonce, index, sides) {
  const msg = dieMessage(sessionId, clientSeed, nonce, index);
  const width = sides <= 256 ? 1 : 2;
  const space = width === 1 ? 256 : 65536;
  const limit = space - (space % sides);
  for (let j = 0; ; j++) {
    const block = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, concat([msg, u32(j)])));
    for (let at = 0; at < 32; at += width) {
      const x = width === 1 ? block[at] : block[at] * 256 + block[at + 1];
      if (x < limit) return (x % sides) + 1;
    }
  }
}

/** [dropped indices ascending, total] of SPEC §10.4. */
export function keptTotal(faces, spec) {
  if (spec.keepMode === null) return [[], faces.reduce((a, b) => a + b, 0) + spec.modifier];
  const order = faces.map((_, i) => i).sort((a, b) => {
    const byFace = spec.keepMode === "kh" ? faces[b] - faces[a] : faces[a] - faces[b];
    return byFace || a - b;
  });
  const dropped = order.slice(spec.keep).sort((a, b) => a - b);
  return [dropped, order.slice(0, spec.keep).reduce((a, i) => a + faces[i], spec.modifier)];
}

class Stop extends Error {}

class SessionChecks {
  constructor() {
    this.checks = Object.fromEntries(SESSION_CHECKS.map((c) => [c, "skip"]));
    this.failures = [];
  }

  fail(check, event, fieldName, expected, found) {
    this.checks[check] = "fail";
    this.failures.push({ check, event, field: fieldName, expected, found });
  }

  stop(...args) {
    this.fail(...args);
    throw new Stop();
  }

  expect(check, event, fieldName, expected, found) {
    if (canonicalJSON(expected) === canonicalJSON(found)) return true;
    this.fail(check, event, fieldName, expected, found);
    return false;
  }

  passed(...checks) {
    for (const c of checks) if (this.checks[c] === "skip") this.checks[c] = "pass";
  }
}

function checkFormat(ck, doc) {
  const top = ["format", "version", "header", "commitment_signature", "events", "signature"];
  const keys = Object.keys(doc);
  if (keys.some((k) => !top.includes(k)) || ["format", "version", "header", "events"].some((k) => !has(doc, k))) {
    ck.stop("session.format", null, "(fields)", top, keys.sort());
  }
  if (doc.version !== 1) ck.stop("session.format", null, "version", 1, doc.version);
  const h = doc.header;
  if (!isObject(h) || !sameKeys(h, HEADER_FIELDS)) ck.stop("session.format", null, "header", HEADER_FIELDS, h);
  const forms = {
    scheme: h.scheme === "fairdice/v1", session_id: isStr(h.session_id) && /^[\x20-\x7e]{1,64}$/.test(h.session_id),
    commitment: isHex(h.commitment, 64), next_commitment: isHex(h.next_commitment, 64), key_id: isHex(h.key_id, 16),
    public_key: isHex(h.public_key, 64),
  };
  for (const [name, ok] of Object.entries(forms)) {
    if (!ok) ck.stop("session.format", null, `header.${name}`, "the form of SPEC §10.2", h[name]);
  }
  for (const name of ["commitment_signature", "signature"]) {
    if (has(doc, name) && !isStr(doc[name])) ck.stop("session.format", null, name, "a hex string", doc[name]);
  }
  if (!Array.isArray(doc.events)) ck.stop("session.format", null, "events", "an array", doc.events);
  doc.events.forEach((e, i) => {
    const kind = isObject(e) && isStr(e.type) ? e.type : null;
    if (!has(EVENT_FIELDS, kind) || !sameKeys(e, EVENT_FIELDS[kind])) {
      ck.stop("session.format", i, "(fields)", "the fields of a client_seed, roll or rotate event (SPEC §10.5)", e);
    }
    const valid = {
      pair: isCount, client_seed: isStr, app_key: (x) => nullOrHex(x, 64), nonce: isCount, serial: isCount,
      dice: isStr, rolls: isIntList, dropped: isIntList, total: isInt, app_signature: (x) => nullOrHex(x, 128),
      server_seed: (x) => isHex(x, 64), next_commitment: (x) => isHex(x, 64),
    };
    for (const name of EVENT_FIELDS[kind].slice(1)) {
      if (!valid[name](e[name])) ck.stop("session.format", i, name, "the form of SPEC §10.5", e[name]);
    }
  });
  ck.passed("session.format");
}

async function chainOf(header, events) {
  let digest = await sha256(concat([field(SESSION_LABELS.chain), field(header.session_id),
    enc.encode(canonicalJSON(header))]));
  const out = [digest];
  for (const e of events) {
    digest = await sha256(concat([digest, enc.encode(canonicalJSON(e))]));
    out.push(digest);
  }
  return out;
}

/** Whether `key` (hex, or null) signed `data`; null when this browser has no Ed25519. */
const signed = async (key, sig, data) => (key === null || !isHex(sig, 128) ? false : ed25519Verify(key, sig, data));

/**
 * Verify a session log (SPEC §10.9). options: {trustedKeys: [hex], appKey: hex, receipts: [session receipts]}.
 * Answers {ok, sessionId, status, checks, failures, notes, trusted, unverifiable}: `notes` say what the verdict does
 * not cover (pairs the app did not sign), `unverifiable` that this browser could not check an Ed25519 signature.
 */
export async function verifySessionLog(doc, options = {}) {
  const ck = new SessionChecks();
  const result = { sessionId: null, status: null, notes: [], trusted: false, unverifiable: false };
  try {
    if (!isSessionLog(doc)) ck.stop("session.format", null, "format", SESSION_FORMAT, isObject(doc) ? doc.format : doc);
    checkFormat(ck, doc);
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return { ...result, ok: false, checks: ck.checks, failures: ck.failures };
  }
  const h = doc.header;
  result.sessionId = h.session_id;
  const digests = await chainOf(h, doc.events);
  const trusted = (options.trustedKeys || []).map((k) => k.toLowerCase());
  result.trusted = trusted.length > 0;
  const keyId = (await sha256Hex(hexToBytes(h.public_key))).slice(0, 16);
  ck.expect("session.key", null, "header.key_id", keyId, h.key_id);
  if (result.trusted && !trusted.includes(h.public_key)) {
    ck.fail("session.key", null, "header.public_key", trusted.join(" or "), h.public_key);
  }
  ck.passed("session.key");
  const key = result.trusted ? (trusted.includes(h.public_key) && keyId === h.key_id ? h.public_key : null)
    : (keyId === h.key_id ? h.public_key : null);
  const note = (ok) => {
    if (ok === null) result.unverifiable = true;
    return ok !== false;
  };
  const unsignedDoc = Object.fromEntries(Object.entries(doc).filter(([k]) => k !== "signature"));
  for (const [name, data] of [["commitment_signature", canonicalJSON(h)], ["signature", canonicalJSON(unsignedDoc)]]) {
    if (!has(doc, name)) ck.fail("session.signature", null, name, "present", "missing");
    else if (!note(await signed(key, doc[name], enc.encode(data)))) {
      ck.fail("session.signature", null, name, "a valid signature by the trusted key the header names", doc[name]);
    }
  }
  ck.passed("session.signature");
  await checkEvents(ck, doc, digests, options.appKey || null, result, note);
  await checkReceipts(ck, doc, digests, options.receipts || [], key, result, note);
  return { ...result, ok: ck.failures.length === 0, checks: ck.checks, failures: ck.failures };
}

async function checkEvents(ck, doc, digests, appKeyGiven, result, note) {
  const sid = doc.header.session_id;
  const commitments = new Map([[0, doc.header.commitment], [1, doc.header.next_commitment]]);
  let pair = 0;
  let client = null;
  let nonce = 0;
  let serial = 1;
  let pending = [];
  let rolls = 0;
  const unsigned = [];
  const appSignature = async (i, e, appKey, command) => {
    if (appKey === null) {
      if (e.app_signature !== null) ck.fail("session.app_signature", i, "app_signature", null, e.app_signature);
      return;
    }
    const msg = concat([field(SESSION_LABELS.app), field(sid), u32(i), digests[i], enc.encode(canonicalJSON(command))]);
    if (!note(await signed(appKey, e.app_signature, msg))) {
      ck.fail("session.app_signature", i, "app_signature", `a valid signature by the app key ${appKey}`, e.app_signature);
    }
  };
  for (const [i, e] of doc.events.entries()) {
    if (e.pair !== pair) ck.fail("session.order", i, "pair", pair, e.pair);
    if (e.type === "client_seed") {
      if (client !== null) ck.fail("session.order", i, "type", `no second client seed in pair ${pair}`, e.type);
      else if (nonce || pending.length) ck.fail("session.order", i, "type", `the client seed before pair ${pair}'s rolls`, e.type);
      if (!clientSeedValid(e.client_seed)) {
        ck.fail("session.order", i, "client_seed", "1..256 code points, none refused (SPEC §2.2)", e.client_seed);
      }
      if (appKeyGiven !== null && e.app_key !== appKeyGiven) ck.fail("session.app_signature", i, "app_key", appKeyGiven, e.app_key);
      if (client === null) client = { seed: e.client_seed, appKey: e.app_key };
      continue;
    }
    const appKey = client === null ? null : client.appKey;
    if (e.type === "roll") {
      rolls++;
      if (client === null) ck.fail("session.order", i, "type", `a client seed before pair ${pair}'s first roll`, e.type);
      ck.expect("session.nonce", i, "nonce", nonce, e.nonce);
      ck.expect("session.nonce", i, "serial", serial, e.serial);
      nonce = e.nonce + 1;
      serial = e.serial + 1;
      await appSignature(i, e, appKey, { type: "roll", pair: e.pair, nonce: e.nonce, dice: e.dice });
      const spec = parseNotation(e.dice);
      if (typeof spec === "string") {
        ck.fail("session.notation", i, "dice", `valid notation (SPEC §10.4; refused as ${spec})`, e.dice);
      } else {
        if (e.rolls.length === spec.count) {
          const [dropped, total] = keptTotal(e.rolls, spec);
          ck.expect("session.total", i, "dropped", dropped, e.dropped);
          ck.expect("session.total", i, "total", total, e.total);
        }
        pending.push([i, e, spec, client]);
      }
    } else {
      const opened = await sha256Hex(hexToBytes(e.server_seed));
      if (commitments.has(pair)) ck.expect("session.commitment", i, "server_seed", commitments.get(pair), opened);
      commitments.set(pair + 2, e.next_commitment);
      await appSignature(i, e, appKey, { type: "rotate", pair: e.pair });
      const key = await hmacKey(e.server_seed);
      for (const [j, roll, spec, seeds] of pending) {
        if (seeds === null) continue;
        const derived = [];
        for (let k = 0; k < spec.count; k++) derived.push(await sessionDie(key, sid, seeds.seed, roll.nonce, k, spec.sides));
        ck.expect("session.dice", j, "rolls", derived, roll.rolls);
      }
      if (appKey === null && (nonce || pending.length)) unsigned.push(pair);
      pair += 1;
      client = null;
      nonce = 0;
      pending = [];
    }
  }
  if (pending.length) {
    ck.fail("session.order", pending[0][0], "type", "a rotate event revealing the seed of every roll in the log (SPEC §10.8)",
      "a roll of a pair that is not revealed");
  }
  ck.passed("session.order", "session.commitment", "session.nonce", "session.notation", "session.dice", "session.total",
    "session.app_signature");
  result.status = `${pair} revealed pair${pair === 1 ? "" : "s"}, ${rolls} rolls`;
  result.revealedPairs = pair;
  result.rolls = rolls;
  if (unsigned.length) {
    result.notes.push({ code: "unsigned_pairs", pairs: unsigned,
      text: `the app did not sign the rolls of pair${unsigned.length > 1 ? "s" : ""} ${unsigned.join(", ")} (no app key): ` +
        "there, the operator could have added or dropped rolls between the receipts the app holds" });
  }
}

async function checkReceipts(ck, doc, digests, receipts, key, result, note) {
  const sid = doc.header.session_id;
  for (const [k, rc] of receipts.entries()) {
    const where = `receipts[${k}]`;
    if (!isObject(rc) || !isHex(rc.chain, 64) || !isCount(rc.events) || !isStr(rc.signature)) {
      ck.fail("session.receipt", null, where, "a session receipt (SPEC §10.6)", rc);
      continue;
    }
    if (rc.session_id !== sid) {
      ck.fail("session.receipt", null, `${where}.session_id`, sid, rc.session_id);
      continue;
    }
    if (rc.events >= digests.length) {
      result.notes.push({ code: "receipt_ahead", text: `${where} covers ${rc.events} events, past the log's ${digests.length - 1}` });
      continue;
    }
    ck.expect("session.receipt", rc.events ? rc.events - 1 : null, `${where}.chain`, [...digests[rc.events]]
      .map((b) => b.toString(16).padStart(2, "0")).join(""), rc.chain);
    const msg = concat([field(SESSION_LABELS.receipt), field(sid), u32(rc.events), hexToBytes(rc.chain)]);
    const keyId = key === null ? null : (await sha256Hex(hexToBytes(key))).slice(0, 16);
    if (keyId !== rc.key_id || !note(await signed(key, rc.signature, msg))) {
      ck.fail("session.receipt", null, `${where}.signature`, "a valid signature by a trusted key", rc.signature);
    }
  }
  if (receipts.length) ck.passed("session.receipt");
}
