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
  const spec = scanNotation(text);
  return typeof spec === "string" ? spec : rangeRefusal(spec) || spec;
}

/** The parts of "[N]dM[khK|klK][+X|-X]" as written, or the refusal of the first part that is not well written:
 * dice_syntax, or dice_modifier for a modifier outside 1..100000. */
function scanNotation(text) {
  const dice = scanDice(text);
  if (dice === null) return "dice_syntax";
  const [count, sides, afterDice] = dice;
  const kept = scanKeep(text, afterDice);
  if (kept === null) return "dice_syntax";
  const [keepMode, keep, afterKeep] = kept;
  const signed = scanModifier(text, afterKeep);
  if (typeof signed === "string") return signed;
  const [modifier, end] = signed;
  if (end !== text.length) return "dice_syntax";
  return { count, sides, keepMode, keep, modifier };
}

/** "NdM" at the start (N left out: one die): [count, sides, the index after it], or null. */
function scanDice(text) {
  let i = 0;
  let count = 1;
  if (text[0] !== "d") {
    [count, i] = number(text, 0);
    if (count === null) return null;
  }
  if (text[i] !== "d") return null;
  const [sides, after] = number(text, i + 1);
  return sides === null ? null : [count, sides, after];
}

/** "khK" or "klK" at text[i..]: [mode, K, the index after it]; [null, null, i] when there is none; null when K is
 * not a number. */
function scanKeep(text, i) {
  const mode = text.slice(i, i + 2);
  if (mode !== "kh" && mode !== "kl") return [null, null, i];
  const [keep, after] = number(text, i + 2);
  return keep === null ? null : [mode, keep, after];
}

/** "+X" or "-X" at text[i..]: [the signed modifier, the index after it]; [0, i] when there is none; else the
 * refusal code. */
function scanModifier(text, i) {
  if (text[i] !== "+" && text[i] !== "-") return [0, i];
  const [size, after] = number(text, i + 1);
  if (size === null) return "dice_syntax";
  if (size < 1 || size > 100000) return "dice_modifier";
  return [text[i] === "-" ? -size : size, after];
}

/** The refusal of the first well-written part outside its range (SPEC §10.4), or null. */
function rangeRefusal({ count, sides, keep }) {
  if (count < 1 || count > 100) return "dice_count";
  if (sides < 2 || sides > 1000) return "dice_sides";
  if (keep !== null && (keep < 1 || keep > count)) return "dice_keep";
  return null;
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
  if (!formatHolds(ck, doc)) return { ...result, ok: false, checks: ck.checks, failures: ck.failures };
  const h = doc.header;
  result.sessionId = h.session_id;
  const digests = await chainOf(h, doc.events);
  const trusted = (options.trustedKeys || []).map((k) => k.toLowerCase());
  result.trusted = trusted.length > 0;
  const key = await checkSessionKey(ck, h, trusted);
  const note = (ok) => { // a signature this browser could not check (no Ed25519) is said, not failed
    if (ok === null) result.unverifiable = true;
    return ok !== false;
  };
  await checkSessionSignatures(ck, doc, key, note);
  await checkEvents(ck, doc, digests, options.appKey || null, result, note);
  await checkReceipts(ck, doc, digests, options.receipts || [], key, result, note);
  return { ...result, ok: ck.failures.length === 0, checks: ck.checks, failures: ck.failures };
}

/** session.format, which stops everything: whether the log holds to it. */
function formatHolds(ck, doc) {
  try {
    if (!isSessionLog(doc)) ck.stop("session.format", null, "format", SESSION_FORMAT, isObject(doc) ? doc.format : doc);
    checkFormat(ck, doc);
    return true;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return false;
  }
}

/** session.key: the header's key id is its key's, and its key one of `trusted` (when any are given). Returns the
 * key the signatures are checked with: the header's when both hold, else null (then no signature is valid). */
async function checkSessionKey(ck, h, trusted) {
  const keyId = (await sha256Hex(hexToBytes(h.public_key))).slice(0, 16);
  ck.expect("session.key", null, "header.key_id", keyId, h.key_id);
  const isTrusted = trusted.length === 0 || trusted.includes(h.public_key);
  if (!isTrusted) ck.fail("session.key", null, "header.public_key", trusted.join(" or "), h.public_key);
  ck.passed("session.key");
  return isTrusted && keyId === h.key_id ? h.public_key : null;
}

/** session.signature: the commitment signature over the header and the signature over the whole log, by `key`. */
async function checkSessionSignatures(ck, doc, key, note) {
  const unsignedDoc = Object.fromEntries(Object.entries(doc).filter(([k]) => k !== "signature"));
  for (const [name, data] of [["commitment_signature", canonicalJSON(doc.header)], ["signature", canonicalJSON(unsignedDoc)]]) {
    if (!has(doc, name)) ck.fail("session.signature", null, name, "present", "missing");
    else if (!note(await signed(key, doc[name], enc.encode(data)))) {
      ck.fail("session.signature", null, name, "a valid signature by the trusted key the header names", doc[name]);
    }
  }
  ck.passed("session.signature");
}

/** The events in order (SessionReplay), then what the whole log says: a roll never revealed, the count of pairs
 * and rolls, and the pairs the app did not sign. */
async function checkEvents(ck, doc, digests, appKeyGiven, result, note) {
  const replay = new SessionReplay(ck, doc, digests, appKeyGiven, note);
  for (const [i, e] of doc.events.entries()) await replay.onEvent(i, e);
  const { pair, rolls, pending, unsigned } = replay;
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

/** A session log's events replayed in order, pair by pair (SPEC §10.5-§10.8): a pair's client seed, its rolls
 * (session.order, nonce, notation, total and app_signature as they come), then its rotate, which opens the pair's
 * commitment and reveals the seed its rolls are re-derived from (session.commitment, session.dice). */
class SessionReplay {
  constructor(ck, doc, digests, appKeyGiven, note) {
    this.ck = ck;
    this.sid = doc.header.session_id;
    this.digests = digests;
    this.appKeyGiven = appKeyGiven; // the app key the caller knows, or null
    this.note = note;
    this.commitments = new Map([[0, doc.header.commitment], [1, doc.header.next_commitment]]); // pair -> commitment
    this.pair = 0; // the pair being played
    this.client = null; // its {seed, appKey}, once its client seed came
    this.nonce = 0; // the nonce and serial its next roll must have
    this.serial = 1;
    this.pending = []; // its rolls, [index, event, notation, client], re-derived once its seed is revealed
    this.rolls = 0;
    this.unsigned = []; // the pairs with rolls and no app key
  }

  /** The app key of the pair being played (null: the app signs nothing in it). */
  get appKey() {
    return this.client === null ? null : this.client.appKey;
  }

  async onEvent(i, e) {
    if (e.pair !== this.pair) this.ck.fail("session.order", i, "pair", this.pair, e.pair);
    if (e.type === "client_seed") this.onClientSeed(i, e);
    else if (e.type === "roll") await this.onRoll(i, e);
    else await this.onRotate(i, e);
  }

  /** A pair's client seed: one, before its rolls, valid, with the app key the caller knows (when it knows one). */
  onClientSeed(i, e) {
    const { ck, pair } = this;
    if (this.client !== null) ck.fail("session.order", i, "type", `no second client seed in pair ${pair}`, e.type);
    else if (this.nonce || this.pending.length) ck.fail("session.order", i, "type", `the client seed before pair ${pair}'s rolls`, e.type);
    if (!clientSeedValid(e.client_seed)) {
      ck.fail("session.order", i, "client_seed", "1..256 code points, none refused (SPEC §2.2)", e.client_seed);
    }
    if (this.appKeyGiven !== null && e.app_key !== this.appKeyGiven) ck.fail("session.app_signature", i, "app_key", this.appKeyGiven, e.app_key);
    if (this.client === null) this.client = { seed: e.client_seed, appKey: e.app_key };
  }

  /** A roll: after the client seed, the next nonce and serial, signed by the app, its notation and its total. */
  async onRoll(i, e) {
    const ck = this.ck;
    this.rolls++;
    if (this.client === null) ck.fail("session.order", i, "type", `a client seed before pair ${this.pair}'s first roll`, e.type);
    ck.expect("session.nonce", i, "nonce", this.nonce, e.nonce);
    ck.expect("session.nonce", i, "serial", this.serial, e.serial);
    this.nonce = e.nonce + 1;
    this.serial = e.serial + 1;
    await this.appSignature(i, e, { type: "roll", pair: e.pair, nonce: e.nonce, dice: e.dice });
    const spec = parseNotation(e.dice);
    if (typeof spec === "string") {
      ck.fail("session.notation", i, "dice", `valid notation (SPEC §10.4; refused as ${spec})`, e.dice);
      return;
    }
    if (e.rolls.length === spec.count) {
      const [dropped, total] = keptTotal(e.rolls, spec);
      ck.expect("session.total", i, "dropped", dropped, e.dropped);
      ck.expect("session.total", i, "total", total, e.total);
    }
    this.pending.push([i, e, spec, this.client]);
  }

  /** A rotate: its server seed opens the pair's commitment, it names the commitment of pair + 2, the app signs it,
   * and every roll of the pair re-derives from the seed; then the next pair begins. */
  async onRotate(i, e) {
    const appKey = this.appKey;
    const opened = await sha256Hex(hexToBytes(e.server_seed));
    if (this.commitments.has(this.pair)) this.ck.expect("session.commitment", i, "server_seed", this.commitments.get(this.pair), opened);
    this.commitments.set(this.pair + 2, e.next_commitment);
    await this.appSignature(i, e, { type: "rotate", pair: e.pair });
    await this.checkDice(await hmacKey(e.server_seed));
    if (appKey === null && (this.nonce || this.pending.length)) this.unsigned.push(this.pair);
    this.pair += 1;
    this.client = null;
    this.nonce = 0;
    this.pending = [];
  }

  /** session.dice: every roll of the pair (after a client seed) re-derived with the revealed seed's key. */
  async checkDice(key) {
    for (const [j, roll, spec, seeds] of this.pending) {
      if (seeds === null) continue;
      const derived = [];
      for (let k = 0; k < spec.count; k++) derived.push(await sessionDie(key, this.sid, seeds.seed, roll.nonce, k, spec.sides));
      this.ck.expect("session.dice", j, "rolls", derived, roll.rolls);
    }
  }

  /** session.app_signature: by the pair's app key over the chain so far and the command; none without a key. */
  async appSignature(i, e, command) {
    const appKey = this.appKey;
    if (appKey === null) {
      if (e.app_signature !== null) this.ck.fail("session.app_signature", i, "app_signature", null, e.app_signature);
      return;
    }
    const msg = concat([field(SESSION_LABELS.app), field(this.sid), u32(i), this.digests[i], enc.encode(canonicalJSON(command))]);
    if (!this.note(await signed(appKey, e.app_signature, msg))) {
      this.ck.fail("session.app_signature", i, "app_signature", `a valid signature by the app key ${appKey}`, e.app_signature);
    }
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
