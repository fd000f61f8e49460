// fairdice in-browser verification: every check of SPEC.md §7, with the same check ids and the
// same verdict as the reference verifier `fairdice-verify` (verifier/replay.py), with Web Crypto
// (HMAC-SHA256, SHA-256, Ed25519).
//
// The replay follows the true game, as the reference does: turn order, roll numbers, holds, every
// die re-derived from the seeds, every box legal and re-scored, the end of the game, the totals and
// the winner, the bots' decisions (greedy and ev; optimal only by `fairdice-verify`), both
// signatures and the key. A die that does not re-derive is reported and the derived value is used
// from then on; a failure that leaves no game to follow stops the replay there.
//
// Both log format versions are read, by their "version": 1 as SPEC promises legacy logs keep verifying,
// and 2 with its commitments to the client seeds of two or more humans (client_seed.commit), its rules of
// who may abandon and why (game.abandon), and the server's signed move receipts (receipt.chain, any version).
//
// This module has no DOM code and no dependency: the page imports it to check a game, and the
// tests (tests/node/) import it under Node to hold it to the SPEC vectors and the forged corpus.
//
// Its answers are machine-readable, so that the page can word them in the player's language:
//
// - Input that is not a log at all (SPEC §7, exit 2 of fairdice-verify) gets {ok: false, error, reason}:
//   `error` is an English sentence for a technical detail, `reason` a stable code (UNUSABLE_REASONS):
//     empty               no JSON at all: an empty file, or only white space
//     not_utf8            bytes that are not UTF-8 text (an image, UTF-16, an overlong or CESU-8 encoding)
//     too_large           a file over 16 MiB
//     not_json            not JSON (a syntax error, a byte order mark, a raw control character in a string, a
//                         comment, trailing data, a value that JSON cannot hold)
//     nan_or_infinity     NaN, Infinity or -Infinity, which are not JSON numbers
//     duplicate_key       one key twice in an object (parsers differ on which value counts)
//     number_out_of_range a number of magnitude 2^53 or more, or written with more than 20 digits
//     nesting_too_deep    arrays and objects nested deeper than 64
//     lone_surrogate      a \ud800-\udfff escape that is not half of a pair
//     not_an_object       JSON, but not an object (an array, a string, a number, true, false or null)
//     bad_receipt         the receipt given with the log is not a usable receipt (SPEC §5.5)
//     bad_move_receipts   the move receipts given with the log are not a JSON array of move receipts
//     bad_trusted_key     a trusted key that is not 64 hex digits
//   (the strict JSON reasons are those of the reference, verifier/strictjson.py, with four more of its own).
// - A failed check is {check, event, field, expected, found}: `expected` and `found` are values of the log
//   (numbers, hex, ids, arrays of them) or, where the verifier says what it wanted in words, a Phrase: a
//   stable code with parameters (PHRASES: the codes and their English), never an English string. The
//   `checks[].detail` lines stay English, as the reference's.

export const SCHEME = "fairdice/v1";
/** The check ids of SPEC §7, in the reference's order: receipt.match (§5.5), and those of log format
 * version 2 (client seed commitments, abandon rules, move receipts). */
export const CHECKS = Object.freeze([
  "log.format", "log.key", "sig.commitment", "sig.final", "seed.revealed", "seed.commitment",
  "client_seed.valid", "start.first", "turn.order", "roll.count", "roll.hold", "roll.dice",
  "score.category", "score.points", "game.complete", "final.totals", "final.winner",
  "bot.identity", "bot.decision", "receipt.match", "client_seed.commit", "game.abandon", "receipt.chain",
]);
/** The log format versions read (SPEC §5): 2 adds client seed commitments, abandon reasons and the timeout. */
export const VERSIONS = Object.freeze([1, 2]);
const MAX_LISTED = 10; // failures listed per check; the rest are counted (as the reference does)
export const MAX_BYTES = 16 * 1024 * 1024;
export const MAX_DEPTH = 64;
const DICE = 5;
const enc = new TextEncoder();
const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

function subtle() {
  const s = globalThis.crypto && globalThis.crypto.subtle;
  if (!s) {
    throw new Error("Web Crypto is not available here (the page must be served over HTTPS or from localhost)");
  }
  return s;
}

// ---------------------------------------------------------------- bytes and hex

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error(`not a hex string: ${String(hex).slice(0, 80)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** u32(n): 4 bytes, big-endian (SPEC §1). */
export function u32(n) {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`not a u32: ${n}`);
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

/** field(s) = u32(len(utf8(s))) || utf8(s) (SPEC §1). */
export function field(text) {
  const b = enc.encode(text);
  return concat([u32(b.length), b]);
}

// ------------------------------------------------------------------ strict JSON
// Input that is not a log at all (SPEC §7, exit 2 of fairdice-verify) must be refused, not guessed
// at: JSON.parse keeps the last of duplicate keys, where another reader may keep the first.

/** Why input is not a log at all (verifyLog's `reason`), each with what it means. */
export const UNUSABLE_REASONS = Object.freeze({
  empty: "no JSON at all: an empty file, or only white space",
  not_utf8: "bytes that are not UTF-8 text",
  too_large: "a file over 16 MiB",
  not_json: "not JSON",
  nan_or_infinity: "NaN, Infinity or -Infinity, which are not JSON numbers",
  duplicate_key: "one key twice in an object",
  number_out_of_range: "a number of magnitude 2^53 or more, or of more than 20 digits",
  nesting_too_deep: "arrays and objects nested deeper than 64",
  lone_surrogate: "a \\ud800-\\udfff escape that is not half of a pair",
  not_an_object: "JSON that is not an object",
  bad_receipt: "the receipt is not a usable receipt",
  bad_move_receipts: "the move receipts are not a JSON array of move receipts",
  bad_trusted_key: "a trusted key that is not 64 hex digits",
});

/** Input that is not a log at all: verifyLog answers {ok: false, error: message, reason}. */
export class UnusableInput extends Error {
  constructor(message, reason) {
    super(message);
    if (!Object.prototype.hasOwnProperty.call(UNUSABLE_REASONS, reason)) throw new Error(`no such reason: ${reason}`);
    this.reason = reason;
  }
}

/** A JSON number written with a fraction or an exponent: not an integer, even when it is 1.0. */
export class JsonFloat {
  constructor(value) {
    this.value = value;
  }

  toJSON() {
    return this.value;
  }
}

const TWO_53 = 2 ** 53;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const PLAIN_CHARS = /[^"\\\u0000-\u001f]*/y;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

function wellFormed(s) {
  return typeof s.isWellFormed === "function" ? s.isWellFormed() : !LONE_SURROGATE.test(s);
}

/** A number of the document: integers below 2^53 in magnitude; at most 20 digits. */
function jsonNumber(text, isFloat) {
  if (text.replace(/[^0-9]/g, "").length > 20) throw new UnusableInput(`a number with more than 20 digits: ${text}`, "number_out_of_range");
  const value = Number(text);
  if (!(Math.abs(value) < TWO_53)) throw new UnusableInput(`a number of magnitude 2^53 or more: ${text}`, "number_out_of_range");
  return isFloat ? new JsonFloat(value) : value + 0; // (+ 0: -0 is the integer 0)
}

/** Set obj[key] as an own property, also for "__proto__". */
function setMember(obj, key, value) {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

class StrictParser {
  constructor(text) {
    this.s = text;
    this.i = 0;
  }

  fail(what) {
    throw new UnusableInput(`not JSON: ${what} at character ${this.i}`, "not_json");
  }

  space() {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      this.i++;
    }
  }

  document() {
    this.space();
    if (this.i === this.s.length) throw new UnusableInput("empty file", "empty");
    const doc = this.value(0);
    this.space();
    if (this.i !== this.s.length) this.fail("extra data after the document");
    return doc;
  }

  value(depth) {
    const c = this.s[this.i];
    if (c === "{") return this.object(depth + 1);
    if (c === "[") return this.array(depth + 1);
    if (c === '"') return this.string();
    for (const word of ["NaN", "Infinity", "-Infinity"]) {
      if (this.s.startsWith(word, this.i)) throw new UnusableInput(`${word} is not JSON (at character ${this.i})`, "nan_or_infinity");
    }
    if (c === "-" || (c >= "0" && c <= "9")) return this.number();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]]) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    }
    return this.fail(c === undefined ? "unexpected end" : `unexpected ${JSON.stringify(c)}`);
  }

  nested(depth) {
    if (depth > MAX_DEPTH) throw new UnusableInput(`nesting deeper than ${MAX_DEPTH} (at character ${this.i})`, "nesting_too_deep");
    this.i++;
    this.space();
  }

  object(depth) {
    this.nested(depth);
    const obj = {};
    const seen = new Set();
    if (this.s[this.i] === "}") {
      this.i++;
      return obj;
    }
    for (;;) {
      if (this.s[this.i] !== '"') this.fail("expected a key");
      const at = this.i;
      const key = this.string();
      if (seen.has(key)) throw new UnusableInput(`duplicate key ${JSON.stringify(key)} (at character ${at})`, "duplicate_key");
      seen.add(key);
      this.space();
      if (this.s[this.i] !== ":") this.fail("expected ':'");
      this.i++;
      this.space();
      setMember(obj, key, this.value(depth));
      this.space();
      const c = this.s[this.i++];
      if (c === "}") return obj;
      if (c !== ",") this.fail("expected ',' or '}'");
      this.space();
    }
  }

  array(depth) {
    this.nested(depth);
    const out = [];
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.space();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected ',' or ']'");
      this.space();
    }
  }

  string() {
    const s = this.s;
    const start = this.i;
    let out = "";
    this.i++;
    for (;;) {
      PLAIN_CHARS.lastIndex = this.i;
      PLAIN_CHARS.test(s);
      out += s.slice(this.i, PLAIN_CHARS.lastIndex);
      this.i = PLAIN_CHARS.lastIndex;
      const c = s[this.i];
      if (c === '"') break;
      if (c === undefined) this.fail("unterminated string");
      if (c !== "\\") this.fail("a control character in a string");
      const e = s[this.i + 1];
      if (e === "u") {
        const hex = s.slice(this.i + 2, this.i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("a bad \\u escape");
        out += String.fromCharCode(parseInt(hex, 16));
        this.i += 6;
      } else if (e !== undefined && has(ESCAPES, e)) {
        out += ESCAPES[e];
        this.i += 2;
      } else this.fail("a bad escape");
    }
    this.i++;
    if (!wellFormed(out)) {
      throw new UnusableInput(`a lone surrogate (a \\ud800-\\udfff escape not forming a pair) in the string at character ${start}`,
        "lone_surrogate");
    }
    return out;
  }

  number() {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail("a bad number");
    this.i = NUMBER.lastIndex;
    return jsonNumber(m[0], m[1] !== undefined || m[2] !== undefined);
  }
}

/** The text of a file given as bytes: UTF-8, or unusable (a byte order mark is kept, and refused). */
function decodeUtf8(bytes) {
  if (bytes.length > MAX_BYTES) throw new UnusableInput(`a file over ${MAX_BYTES / 1048576} MiB`, "too_large");
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new UnusableInput("not UTF-8 text", "not_utf8");
  }
}

/** Parse JSON text by the rules of "unusable input" (duplicate keys, NaN, depth, huge numbers, lone surrogates). */
export function parseStrictJSON(input) {
  let text = input;
  if (input instanceof ArrayBuffer) text = decodeUtf8(new Uint8Array(input));
  else if (ArrayBuffer.isView(input)) text = decodeUtf8(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
  else if (typeof input !== "string") throw new UnusableInput("not JSON text", "not_json");
  else if (text.length > MAX_BYTES / 3 && enc.encode(text).length > MAX_BYTES) {
    throw new UnusableInput(`a file over ${MAX_BYTES / 1048576} MiB`, "too_large");
  }
  if (!wellFormed(text)) throw new UnusableInput("a lone surrogate in the text", "lone_surrogate");
  return new StrictParser(text).document();
}

/** An already parsed value held to the same rules (the page may hand over JSON.parse's result). */
function checkParsed(value, depth = 0) {
  if (value === null || typeof value === "boolean" || value instanceof JsonFloat) return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new UnusableInput(`${value} is not JSON`, "nan_or_infinity");
    if (!(Math.abs(value) < TWO_53)) throw new UnusableInput(`a number of magnitude 2^53 or more: ${value}`, "number_out_of_range");
    return;
  }
  if (typeof value === "string") {
    if (!wellFormed(value)) throw new UnusableInput("a lone surrogate in a string", "lone_surrogate");
    return;
  }
  if (typeof value !== "object") throw new UnusableInput(`not JSON: a value of type ${typeof value}`, "not_json");
  if (depth + 1 > MAX_DEPTH) throw new UnusableInput(`nesting deeper than ${MAX_DEPTH}`, "nesting_too_deep");
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) throw new UnusableInput("not JSON: an object that is not plain", "not_json");
  for (const key of Object.keys(value)) {
    if (!wellFormed(key)) throw new UnusableInput("a lone surrogate in a key", "lone_surrogate");
    checkParsed(value[key], depth + 1);
  }
}

/** The document as a JSON value: parsed strictly from text or bytes, or checked when already parsed. */
function readJSON(input) {
  if (typeof input === "string" || input instanceof ArrayBuffer || ArrayBuffer.isView(input)) return parseStrictJSON(input);
  checkParsed(input);
  return input;
}

// --------------------------------------------------------------- canonical JSON

function escapeString(s) {
  // JSON.stringify escapes quotes, backslashes and control characters the way Python does
  // (\n, \t, ... and \u00XX in lower case); Python's ensure_ascii also escapes every
  // non-ASCII UTF-16 code unit, and DEL, as \uXXXX.
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function byCodePoint(a, b) {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

/** Python's repr() of a float (the shortest round-trip digits; exponent form below 1e-4 and from 1e16). */
export function pythonFloatRepr(x) {
  if (!Number.isFinite(x)) throw new Error(`not a finite float: ${x}`);
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mantissa, expText] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${"0".repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** Canonical JSON of SPEC §1 (Python: json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)). */
export function canonicalJSON(doc) {
  if (doc === null || typeof doc === "boolean") return String(doc);
  if (typeof doc === "number") {
    if (Number.isInteger(doc)) return String(doc);
    return pythonFloatRepr(doc);
  }
  if (doc instanceof JsonFloat) return pythonFloatRepr(doc.value);
  if (typeof doc === "string") return escapeString(doc);
  if (Array.isArray(doc)) return "[" + doc.map(canonicalJSON).join(",") + "]";
  if (typeof doc === "object") {
    return "{" + Object.keys(doc).sort(byCodePoint)
      .map((k) => escapeString(k) + ":" + canonicalJSON(doc[k])).join(",") + "}";
  }
  throw new Error(`not JSON: ${typeof doc}`);
}

// ------------------------------------------------------------------ derivation (SPEC §2.3)

/** msg(purpose, n1, n2, ...) of SPEC §2.3, without the block counter. */
export function message(purpose, gameId, clientSeeds, numbers) {
  return concat([
    field(SCHEME), field(purpose), field(gameId), u32(clientSeeds.length),
    ...clientSeeds.map(field), ...numbers.map(u32),
  ]);
}

/** An HMAC-SHA256 key made from the raw server seed (bytes or hex). */
export async function hmacKey(serverSeed) {
  const raw = typeof serverSeed === "string" ? hexToBytes(serverSeed) : serverSeed;
  return subtle().importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** block(i) = HMAC-SHA256(server_seed, msg || u32(i)). */
export async function block(key, msg, i) {
  return new Uint8Array(await subtle().sign("HMAC", key, concat([msg, u32(i)])));
}

/**
 * Draw `count` integers uniform in 0..bound-1 from the byte stream of `msg`:
 * bytes >= 256 - 256 % bound are rejected. Returns the values, every byte read
 * (rejected ones included) and the rejected bytes.
 */
export async function uniformInts(key, msg, bound, count) {
  if (!(bound >= 1 && bound <= 256)) throw new Error("bound must be 1..256");
  const limit = 256 - (256 % bound);
  const values = [];
  const read = [];
  const rejected = [];
  for (let i = 0; values.length < count; i++) {
    const b = await block(key, msg, i);
    for (const byte of b) {
      if (values.length === count) break;
      read.push(byte);
      if (byte < limit) values.push(byte % bound);
      else rejected.push(byte);
    }
  }
  return { values, bytesRead: new Uint8Array(read), rejected };
}

/** Five dice (faces 1..6) for a message. */
export async function fiveDice(key, msg) {
  const { values } = await uniformInts(key, msg, 6, DICE);
  return values.map((v) => v + 1);
}

export async function sha256Hex(bytes) {
  return bytesToHex(new Uint8Array(await subtle().digest("SHA-256", bytes)));
}

/** hex(SHA-256(server_seed)): the commitment of a seed given as hex. */
export async function commitmentOf(serverSeedHex) {
  return sha256Hex(hexToBytes(serverSeedHex));
}

/** A seat's commitment to its client seed (v2.md): hex(SHA-256(salt || UTF-8(client_seed))), the salt given as hex. */
export async function seedCommitment(saltHex, clientSeed) {
  return sha256Hex(concat([hexToBytes(saltHex), enc.encode(clientSeed)]));
}

/** The numbers of one game: its dice, roll-off dice and bot tie-breaks (SPEC §2.3). */
export class Deriver {
  constructor(key, gameId, clientSeeds) {
    this.key = key;
    this.gameId = gameId;
    this.clientSeeds = clientSeeds;
  }

  roll(seat, turn, roll) {
    return fiveDice(this.key, message("roll", this.gameId, this.clientSeeds, [seat, turn, roll]));
  }

  rolloff(round, seat) {
    return fiveDice(this.key, message("rolloff", this.gameId, this.clientSeeds, [round, seat]));
  }

  async tiebreak(seat, turn, roll, k) {
    const msg = message("tiebreak", this.gameId, this.clientSeeds, [seat, turn, roll]);
    return (await uniformInts(this.key, msg, k, 1)).values[0];
  }
}

/**
 * Everything SPEC §8.1 lists for one derivation vector, recomputed:
 * {commitment, message, block0, block1 (when the draw reads it), bytes_read, rejected, values}.
 * A roll or a roll-off draws five dice (values are faces, value + 1); a tie-break draws
 * `count` integers (one, in the game).
 */
export async function deriveVector(v) {
  const key = await hmacKey(v.server_seed);
  const msg = message(v.purpose, v.game_id, v.client_seeds, v.numbers);
  const dice = v.purpose === "roll" || v.purpose === "rolloff";
  const drawn = await uniformInts(key, msg, v.bound, v.count ?? (dice ? DICE : 1));
  const out = {
    commitment: await commitmentOf(v.server_seed),
    message: bytesToHex(msg),
    block0: bytesToHex(await block(key, msg, 0)),
    bytes_read: bytesToHex(drawn.bytesRead),
    rejected: drawn.rejected,
    values: dice ? drawn.values.map((x) => x + 1) : drawn.values,
  };
  if (drawn.bytesRead.length > 32) out.block1 = bytesToHex(await block(key, msg, 1));
  return out;
}

// ------------------------------------------------------------------ signatures (SPEC §6)

/** true / false for an Ed25519 signature, or null when this browser has no Ed25519 in Web Crypto. */
export async function ed25519Verify(publicKeyHex, signatureHex, data) {
  let key;
  try {
    key = await subtle().importKey("raw", hexToBytes(publicKeyHex), { name: "Ed25519" }, false, ["verify"]);
  } catch (err) {
    if (err && (err.name === "NotSupportedError" || /Unrecognized|not supported/i.test(err.message))) return null;
    return false;
  }
  try {
    return await subtle().verify({ name: "Ed25519" }, key, hexToBytes(signatureHex), data);
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ client seeds and names (SPEC §2.2)

/**
 * The client seed and seat name rule, independent of any Unicode version: the data of
 * tests/vectors/client_seed_rule.json (a Node test checks that this copy equals that file).
 */
export const CLIENT_SEED_RULE = Object.freeze({
  client_seed_length: [1, 256],
  seat_name_length: [1, 40],
  generic_excluded: [[0, 31], [127, 159], [55296, 57343], [57344, 63743], [64976, 65007], [983040, 1114111]],
  noncharacter_low16: [65534, 65535],
  excluded_ranges: [
    [160, 160], [173, 173], [1536, 1541], [1564, 1564], [1757, 1757], [1807, 1807], [2192, 2193],
    [2274, 2274], [5760, 5760], [6158, 6158], [8192, 8207], [8232, 8239], [8287, 8292], [8294, 8303],
    [12288, 12288], [65279, 65279], [65529, 65531], [69821, 69821], [69837, 69837], [78896, 78904],
    [113824, 113827], [119155, 119162], [917505, 917505], [917536, 917631],
  ],
});
const EXCLUDED = [...CLIENT_SEED_RULE.generic_excluded, ...CLIENT_SEED_RULE.excluded_ranges];

function codePointAllowed(cp) {
  if (CLIENT_SEED_RULE.noncharacter_low16.includes(cp & 0xffff)) return false;
  return !EXCLUDED.some(([lo, hi]) => lo <= cp && cp <= hi);
}

/** Text of lo..hi code points, none of them excluded by the rule of SPEC §2.2. */
function textAllowed(text, [lo, hi]) {
  if (typeof text !== "string") return false;
  let n = 0;
  for (const ch of text) {
    n++;
    if (n > hi || !codePointAllowed(ch.codePointAt(0))) return false;
  }
  return n >= lo;
}

export const clientSeedValid = (text) => textAllowed(text, CLIENT_SEED_RULE.client_seed_length);
export const seatNameValid = (text) => textAllowed(text, CLIENT_SEED_RULE.seat_name_length);

// ------------------------------------------------------------------ rules and scoring (SPEC §3)

const UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"];
export const CATEGORIES = Object.freeze({
  yacht: [...UPPER, "choice", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yacht"],
  yatzy: [...UPPER, "one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "small_straight",
    "large_straight", "full_house", "chance", "yatzy"],
  classic13: [...UPPER, "three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight",
    "yahtzee", "chance"],
});
const UPPER_BONUS = { yacht: 35, yatzy: 50, classic13: 35 };
const UPPER_BONUS_AT = 63;
const YAHTZEE_BONUS = 100;
const JOKER_POINTS = { full_house: 25, small_straight: 30, large_straight: 40 }; // others: the sum of the dice
const SMALL_RUNS = [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]];
const LARGE_RUNS = [[1, 2, 3, 4, 5], [2, 3, 4, 5, 6]];
const isUpper = (category) => UPPER.includes(category);

function countsOf(dice) {
  const c = [0, 0, 0, 0, 0, 0, 0];
  for (const d of dice) c[d] += 1;
  return c;
}
const sumOf = (dice) => dice.reduce((a, d) => a + d, 0);
const hasRun = (c, runs) => runs.some((run) => run.every((f) => c[f] > 0));
const shapeOf = (c) => c.filter((n) => n).sort((a, b) => a - b).join(",");
/** Yatzy's sets: `sets` different faces with at least `size` dice each, the highest faces. */
function setsOf(c, size, sets) {
  const faces = [6, 5, 4, 3, 2, 1].filter((f) => c[f] >= size);
  return faces.length < sets ? 0 : size * faces.slice(0, sets).reduce((a, f) => a + f, 0);
}

const LOWER_SCORING = {
  yacht: {
    choice: (c, total) => total,
    four_of_a_kind: (c, total) => (Math.max(...c) >= 4 ? total : 0),
    full_house: (c, total) => (["2,3", "5"].includes(shapeOf(c)) ? total : 0),
    small_straight: (c) => (hasRun(c, SMALL_RUNS) ? 15 : 0),
    large_straight: (c) => (hasRun(c, LARGE_RUNS) ? 30 : 0),
    yacht: (c) => (Math.max(...c) === 5 ? 50 : 0),
  },
  yatzy: {
    one_pair: (c) => setsOf(c, 2, 1),
    two_pairs: (c) => setsOf(c, 2, 2),
    three_of_a_kind: (c) => setsOf(c, 3, 1),
    four_of_a_kind: (c) => setsOf(c, 4, 1),
    small_straight: (c) => ([1, 2, 3, 4, 5].every((f) => c[f] === 1) ? 15 : 0),
    large_straight: (c) => ([2, 3, 4, 5, 6].every((f) => c[f] === 1) ? 20 : 0),
    full_house: (c, total) => (shapeOf(c) === "2,3" ? total : 0),
    chance: (c, total) => total,
    yatzy: (c) => (Math.max(...c) === 5 ? 50 : 0),
  },
  classic13: {
    three_of_a_kind: (c, total) => (Math.max(...c) >= 3 ? total : 0),
    four_of_a_kind: (c, total) => (Math.max(...c) >= 4 ? total : 0),
    full_house: (c) => (shapeOf(c) === "2,3" ? 25 : 0),
    small_straight: (c) => (hasRun(c, SMALL_RUNS) ? 30 : 0),
    large_straight: (c) => (hasRun(c, LARGE_RUNS) ? 40 : 0),
    yahtzee: (c) => (Math.max(...c) === 5 ? 50 : 0),
    chance: (c, total) => total,
  },
};
/** The boxes that score fixed points (greedy scores such a box at once when it is made). */
const FIXED_POINTS = {
  yacht: ["small_straight", "large_straight", "yacht"],
  yatzy: ["small_straight", "large_straight", "yatzy"],
  classic13: ["full_house", "small_straight", "large_straight", "yahtzee"],
};

/** The normal score of `category` for five dice (no joker, no card), SPEC §3.1-§3.3. */
export function scoreBox(rules, category, dice) {
  const c = countsOf(dice);
  if (isUpper(category)) return (UPPER.indexOf(category) + 1) * c[UPPER.indexOf(category) + 1];
  const rule = LOWER_SCORING[rules] && has(LOWER_SCORING[rules], category) ? LOWER_SCORING[rules][category] : null;
  if (!rule) throw new Error(`${category} is not a category of ${rules}`);
  return rule(c, sumOf(dice));
}

const HAND_POINTS = { yacht: new Map(), yatzy: new Map(), classic13: new Map() }; // per hand: points of each category

function handPoints(rules, dice) {
  let hand = 0; // the face counts as the digits of a base-6 number: one key per hand, whatever the order
  for (const d of dice) hand += 6 ** (d - 1);
  let row = HAND_POINTS[rules].get(hand);
  if (!row) HAND_POINTS[rules].set(hand, row = new Map(CATEGORIES[rules].map((c) => [c, scoreBox(rules, c, dice)])));
  return row;
}

/**
 * [points, joker] for recording the dice in `category` now, or null when that box is not legal:
 * filled, closed by upper_first (§3.4), or excluded by the forced joker (§3.3).
 * `boxes` maps every category of the rule set to its points, or null while open.
 */
function scoreOnCard(rules, boxes, dice, category, upperFirst, points = null) {
  if (boxes.get(category) !== null) return null;
  const lowerClosed = upperFirst && UPPER.some((c) => boxes.get(c) === null);
  if (lowerClosed && !isUpper(category)) return null;
  if (rules === "classic13" && boxes.get("yahtzee") !== null && dice.every((d) => d === dice[0])) {
    const faceBox = UPPER[dice[0] - 1];
    if (boxes.get(faceBox) === null) return category === faceBox ? [5 * dice[0], false] : null;
    if (!isUpper(category)) return [has(JOKER_POINTS, category) ? JOKER_POINTS[category] : sumOf(dice), true];
    const lowerOpen = !lowerClosed && CATEGORIES[rules].some((c) => !isUpper(c) && boxes.get(c) === null);
    return lowerOpen ? null : [0, false];
  }
  return [(points || handPoints(rules, dice)).get(category), false];
}

/** Every box the dice may legally go into now, in table order: Map category -> [points, joker]. */
function legalBoxes(rules, boxes, dice, upperFirst) {
  const out = new Map();
  for (const c of CATEGORIES[rules]) {
    const o = scoreOnCard(rules, boxes, dice, c, upperFirst);
    if (o) out.set(c, o);
  }
  return out;
}

/** The Yahtzee bonus that recording these dice earns (classic13, §3.3 item 2). */
function yahtzeeBonus(rules, boxes, dice) {
  return rules === "classic13" && dice.every((d) => d === dice[0]) && boxes.get("yahtzee") === 50 ? YAHTZEE_BONUS : 0;
}

/** The upper bonus earned by writing `pts` into `category` when the upper boxes held `upperBefore`. */
function upperBonus(rules, upperBefore, category, pts) {
  if (!isUpper(category)) return 0;
  return upperBefore < UPPER_BONUS_AT && UPPER_BONUS_AT <= upperBefore + pts ? UPPER_BONUS[rules] : 0;
}

function cardOf(rules, card) {
  return new Map(CATEGORIES[rules].map((c) => [c, card[c] === undefined ? null : card[c]]));
}

/**
 * The legal boxes for these dice on this card, {category: {points, yahtzee_bonus, joker}}:
 * open boxes, the house rule upper_first, and classic13's forced joker and Yahtzee bonus.
 */
export function scoreOptions(rules, card, dice, upperFirst = false) {
  const boxes = cardOf(rules, card);
  const bonus = yahtzeeBonus(rules, boxes, dice);
  const out = {};
  for (const [c, [points, joker]] of legalBoxes(rules, boxes, dice, upperFirst)) out[c] = { points, yahtzee_bonus: bonus, joker };
  return out;
}

// ------------------------------------------------------------------ bots (SPEC §4.5)
// greedy and ev, as fairdice/bots/policies.py plays them: candidates in canonical order (holds by
// position mask, then boxes in table order), ties within 1e-9 of the best broken by `tiebreak`.
// Every value is a multiple of 6^-10, so a tie is exact and no rounding can make or break one.

const TIE_TOLERANCE = 1e-9;
const FACES = [1, 2, 3, 4, 5, 6];

/** Sorted face multisets of `size` dice (combinations with replacement, lexicographic). */
function multisets(size, from = 1) {
  if (size === 0) return [[]];
  const out = [];
  for (let f = from; f <= 6; f++) for (const rest of multisets(size - 1, f)) out.push([f, ...rest]);
  return out;
}

const ROLLS = multisets(DICE);
const ROLL_INDEX = new Map(ROLLS.map((r, i) => [r.join(""), i]));
const KEEPS = [0, 1, 2, 3, 4, 5].flatMap((n) => multisets(n));
const KEEP_INDEX = new Map(KEEPS.map((k, i) => [k.join(""), i]));
let turnSpace = null;

function factorial(n) {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

/** Probability that fresh dice show exactly this multiset. */
function multisetProbability(faces) {
  let ways = factorial(faces.length);
  for (const n of countsOf(faces)) ways /= factorial(n);
  return ways / 6 ** faces.length;
}

/** Every sub-multiset of a sorted roll (the empty one and the roll itself included), as keep indices. */
function subKeeps(roll) {
  const subs = new Set();
  for (let mask = 0; mask < 32; mask++) subs.add(KEEP_INDEX.get(roll.filter((_, p) => mask >> p & 1).join("")));
  return [...subs];
}

/** TRANSITION[k]: the rolls that keeping k and rerolling the rest gives, with their probabilities. */
function space() {
  if (!turnSpace) {
    const transition = KEEPS.map((keep) => multisets(DICE - keep.length).map((fresh) => [
      ROLL_INDEX.get([...keep, ...fresh].sort().join("")), multisetProbability(fresh)]));
    turnSpace = { transition, subkeeps: ROLLS.map(subKeeps) };
  }
  return turnSpace;
}

const GAINS = new Map(); // per card: the immediate gain of every legal box for every roll
const KEEP_VALUES = new Map(); // per card: ev's value of every hold with one and with two rolls left

function cardKey(rules, boxes, upperFirst) {
  return `${rules}|${upperFirst}|${CATEGORIES[rules].map((c) => boxes.get(c)).join(",")}`;
}

/** Immediate gain (points, upper bonus reached, Yahtzee bonus) of each open box for every roll; -Infinity where illegal. */
function gainMatrix(rules, boxes, upperFirst) {
  const key = cardKey(rules, boxes, upperFirst);
  let m = GAINS.get(key);
  if (m) return m;
  let ids = CATEGORIES[rules].filter((c) => boxes.get(c) === null);
  if (upperFirst && ids.some(isUpper)) ids = ids.filter(isUpper);
  const upperSum = UPPER.reduce((a, c) => a + (boxes.get(c) || 0), 0);
  const rows = ROLLS.map((roll) => {
    const points = handPoints(rules, roll);
    const yb = yahtzeeBonus(rules, boxes, roll);
    return ids.map((c) => {
      const o = scoreOnCard(rules, boxes, roll, c, upperFirst, points);
      return o ? o[0] + yb + upperBonus(rules, upperSum, c, o[0]) : -Infinity;
    });
  });
  m = { ids, rows };
  GAINS.set(key, m);
  return m;
}

function expectation(transition, values) {
  return transition.map((row) => row.reduce((a, [r, p]) => a + p * values[r], 0));
}

/** ev: the expected best gain of every hold with one and with two rolls left in this turn. */
function keepValues(rules, boxes, upperFirst) {
  const key = cardKey(rules, boxes, upperFirst);
  let kv = KEEP_VALUES.get(key);
  if (kv) return kv;
  const { transition, subkeeps } = space();
  const last = gainMatrix(rules, boxes, upperFirst).rows.map((row) => Math.max(...row));
  const oneLeft = expectation(transition, last);
  const secondLast = last.map((v, r) => Math.max(v, ...subkeeps[r].map((k) => oneLeft[k])));
  kv = [oneLeft, expectation(transition, secondLast)];
  KEEP_VALUES.set(key, kv);
  return kv;
}

/** Every distinct hold that rerolls a die: [positions, keep index], the lowest positions showing it, by mask. */
function holdCandidates(dice) {
  const seen = new Map();
  for (let mask = 0; mask < 31; mask++) {
    const kept = dice.filter((_, p) => mask >> p & 1).sort();
    const wanted = countsOf(kept);
    const positions = [];
    dice.forEach((d, p) => {
      if (wanted[d] > 0) {
        wanted[d] -= 1;
        positions.push(p);
      }
    });
    const canonical = positions.reduce((a, p) => a | (1 << p), 0);
    if (!seen.has(canonical)) seen.set(canonical, [positions, KEEP_INDEX.get(kept.join(""))]);
  }
  return [...seen].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
}

function scoreCandidates(rules, boxes, dice, upperFirst) {
  const { ids, rows } = gainMatrix(rules, boxes, upperFirst);
  const row = rows[ROLL_INDEX.get([...dice].sort().join(""))];
  return ids.map((category, j) => ({ action: "score", category, value: row[j] })).filter((c) => c.value !== -Infinity);
}

const POLICIES = {
  greedy(rules, boxes, dice, roll, upperFirst) {
    const scores = scoreCandidates(rules, boxes, dice, upperFirst);
    if (roll === 3 || scores.some((c) => FIXED_POINTS[rules].includes(c.category) && c.value > 0)) return scores;
    const c = countsOf(dice);
    const face = FACES.reduce((best, f) => (c[f] > 0 && (c[f] > c[best] || (c[f] === c[best] && f > best)) ? f : best), dice[0]);
    const hold = dice.flatMap((d, p) => (d === face ? [p] : []));
    return hold.length === DICE ? scores : [{ action: "roll", hold, value: Infinity }];
  },
  ev(rules, boxes, dice, roll, upperFirst) {
    const scores = scoreCandidates(rules, boxes, dice, upperFirst);
    if (roll === 3) return scores;
    const values = keepValues(rules, boxes, upperFirst)[3 - roll - 1];
    return [...holdCandidates(dice).map(([hold, k]) => ({ action: "roll", hold, value: values[k] })), ...scores];
  },
};

/** The decision of bot `id` after roll `roll`: {action: "roll", hold} or {action: "score", category}. */
export async function botDecision(id, rules, boxes, dice, roll, upperFirst, tiebreak) {
  const candidates = POLICIES[id](rules, boxes, dice, roll, upperFirst);
  if (!candidates.length) throw new Error("no legal decision");
  const best = Math.max(...candidates.map((c) => c.value));
  const tied = candidates.filter((c) => c.value >= best - TIE_TOLERANCE);
  return tied[tied.length > 1 ? await tiebreak(tied.length) : 0];
}

/** The published bots: {id: {version, params}}; the hash is SHA-256 of canonical {id, version, params}. */
export const PUBLISHED_BOTS = Object.freeze({
  greedy: { version: "1", params: {} },
  ev: { version: "1", params: {} },
  optimal: {
    version: "1",
    params: {
      table_sha256: { // fairdice/bots/tables/manifest.json (a Node test checks this copy)
        classic13: "c5af1b3cc3f5220933a02df699c8d0a6bb9e80a2590e0f125a12f6f05384fab9",
        yacht: "7470ab98086c464a58f9ca4bf43a65ea1b71c631c3e20fbedc95c7cae26d07d1",
        yatzy: "2444817579155613f19f42757e2a253a9906b0ee983ecb5fe25e7969f11eff5d",
      },
    },
  },
});

let publishedHashes = null;

/** {id: hash} of the published bots. */
export async function publishedBotHashes() {
  if (!publishedHashes) {
    const entries = await Promise.all(Object.entries(PUBLISHED_BOTS).map(async ([id, { version, params }]) =>
      [id, await sha256Hex(enc.encode(canonicalJSON({ id, version, params })))]));
    publishedHashes = Object.fromEntries(entries);
  }
  return publishedHashes;
}

// ------------------------------------------------------------------ the words of a failure

/**
 * What the verifier wanted, or found, where no value of the log says it ("a valid signature of the log",
 * "an open box"): a stable code and its parameters (numbers, hex, ids and arrays of them). The English is
 * here, for the reference's detail lines; the page words each code from its catalogues ("phrase.<code>").
 */
export const PHRASES = Object.freeze({
  present: "present",
  missing: "missing",
  no_such_field: "no such field",
  one_of: "one of {values}",
  an_object: "an object",
  an_array: "an array",
  hex_or_absent: "a hex string, or no such field (unsigned)",
  object_or_null: "an object, or null while the game is in progress",
  printable_ascii: "{min} to {max} printable ASCII characters",
  seats_as_specified: "{min} to {max} seats as in SPEC §5.2",
  seat_or_random: 'a seat index or "{value}"',
  seat_or_null: "a seat index or null",
  hex_digits: "{count} lowercase hex digits",
  timeout_seconds: "whole seconds, at least 1 (the server's inactivity timeout)",
  totals_per_seat: "one object of integers {parts} per seat",
  event_field: "the type SPEC §5.3 gives this field",
  no_seed_from_seat: "no client seed from that seat",
  a_trusted_key: "a trusted key: {keys}",
  header_signature: "a valid signature of the header",
  log_signature: "a valid signature of the log",
  trusted_signature: "a signature by the trusted key",
  at_most_events: "at most the log's {count} events (the server acknowledged more)",
  game_over: "a finished or abandoned game; this one is not over, so its server seed is not revealed and its dice cannot be checked",
  box_after_third_roll: "a box after the third roll",
  roll_begins_turn: "roll (a turn begins with a roll)",
  no_hold_on_first_roll: "[] on roll 1",
  hold_positions: "sorted distinct positions 0..4",
  category_of_rules: "a category of {rules}",
  an_open_box: "an open box",
  already_filled: "{category} (already filled)",
  seeds_first: "a client seed from seat(s) {seats} first",
  a_human_seat: "a human seat: {seats}",
  no_human_seat: "null (no human seat)",
  one_seed_per_seat: "one client seed per seat",
  client_seed_rule: "1 to 256 characters, none of those SPEC §2.2 excludes",
  no_seed_after_start: "no client seed once play has started",
  commitments_before_seeds: "every commitment before any client seed",
  one_commitment_per_seat: "one commitment per seat",
  commitments_first: "a commitment from seat(s) {seats} before any client seed",
  committed_seed: "the seed committed to ({commitment})",
  seed_and_salt_hash: "a seed and salt hashing to {hash}",
  no_event_after_last_box: "no event after the last box",
  no_event_after_abandon: "no event after the abandon event",
  final_block: "the final block of a game that is over",
  shown_in_progress: "what the events show: in progress ({count} boxes still open)",
  shown_not_started: "what the events show: play never started",
  shown_abandoned: "what the events show: abandoned (an abandon event)",
  abandon_event_last: "an abandon event as the last event",
  no_events: "no events",
  start_after_seeds: "start (it follows the last client seed)",
  roll_or_score: "roll or score",
  start_before_moves: "start before any roll or score",
  null_on_timeout: "null (only the server abandons on a timeout)",
  seat_not_timeout: "a seat (the server abandons only on a timeout)",
  seat_whose_turn: "seat {seat}, whose turn it is (or any seat before play)",
  rolloff_until_winner: "rounds until one seat has the highest sum",
  a_published_policy: "a published policy: {bots}",
  optimal_upper_first: "a decision of the policy, which does not play the upper-first house rule",
  policy_failed: "a decision of the policy, which failed: {error}",
  roll_holding: "roll {hold}",
  score_in: "score {category}",
});

/** One of PHRASES with its parameters. A class of its own, so that no value of a log can pass for one. */
export class Phrase {
  constructor(code, params = {}) {
    if (!has(PHRASES, code)) throw new Error(`no such phrase: ${code}`);
    this.code = code;
    this.params = Object.freeze({ ...params });
    Object.freeze(this);
  }

  /** The English words, as the reference writes them. */
  toString() {
    return PHRASES[this.code].replace(/\{(\w+)\}/g, (_, name) => englishParam(name, this.params[name]));
  }

  toJSON() {
    return { phrase: this.code, ...this.params };
  }
}

const said = (code, params) => new Phrase(code, params);

function englishParam(name, value) {
  if (!Array.isArray(value)) return show(value);
  return name === "seats" || name === "hold" ? pyList(value) : value.map(show).join(", ");
}

// ------------------------------------------------------------------ the fields of SPEC §5

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x) && !(x instanceof JsonFloat);
const isInt = (x) => typeof x === "number" && Number.isInteger(x);
const isStr = (x) => typeof x === "string";
const isBool = (x) => typeof x === "boolean";
const isHex = (x, n) => isStr(x) && x.length === n && /^[0-9a-f]*$/.test(x);
const isDice = (x) => Array.isArray(x) && x.length === DICE && x.every((d) => isInt(d) && d >= 1 && d <= 6);
const sameKeys = (obj, names) => Object.keys(obj).length === names.length && names.every((k) => has(obj, k));
const nSeats = (h) => (Array.isArray(h.seats) ? h.seats.length : 0);
/** A hold: sorted distinct positions 0..4. */
const isHold = (hold) => hold.every((p, j) => p >= 0 && p <= 4 && (j === 0 || p > hold[j - 1]));
/** Python's str() of a list of seats, in failure texts the reference also writes. */
const pyList = (xs) => `[${xs.map((x) => (x === null ? "None" : String(x))).join(", ")}]`;
/** A move in words: a roll with its hold, or a box. */
const moveSaid = (action, hold, category) => (action === "roll" ? said("roll_holding", { hold }) : said("score_in", { category }));

function seatOk(s) {
  if (!isObject(s) || !seatNameValid(s.name)) return false;
  if (s.type === "human" && sameKeys(s, ["type", "name"])) return true;
  const bot = s.bot;
  return s.type === "bot" && sameKeys(s, ["type", "name", "bot"]) && isObject(bot) && sameKeys(bot, ["id", "version", "hash"])
    && isStr(bot.id) && isStr(bot.version) && isHex(bot.hash, 64);
}

const TOTAL_PARTS = ["upper", "upper_bonus", "lower", "yahtzee_bonus", "total"];
// name -> [what is expected, check(value, header)]
const TOP_FIELDS = {
  format: ["fairdice-log", (v) => v === "fairdice-log"],
  version: [said("one_of", { values: VERSIONS }), (v) => VERSIONS.includes(v)],
  header: [said("an_object"), isObject],
  commitment_signature: [said("hex_or_absent"), isStr],
  events: [said("an_array"), Array.isArray],
  final: [said("object_or_null"), (v) => v === null || isObject(v)],
  signature: [said("hex_or_absent"), isStr],
};
const HEADER_FIELDS = {
  scheme: [SCHEME, (v) => v === SCHEME],
  game_id: [said("printable_ascii", { min: 1, max: 64 }), (v) => isStr(v) && /^[\x20-\x7e]{1,64}$/.test(v)],
  rules: [said("one_of", { values: Object.keys(CATEGORIES) }), (v) => isStr(v) && has(CATEGORIES, v)],
  upper_first: [said("one_of", { values: [true, false] }), isBool],
  seats: [said("seats_as_specified", { min: 1, max: 6 }), (v) => Array.isArray(v) && v.length >= 1 && v.length <= 6 && v.every(seatOk)],
  first: [said("seat_or_random", { value: "random" }), (v, h) => v === "random" || (isInt(v) && v >= 0 && v < nSeats(h))],
  commitment: [said("hex_digits", { count: 64 }), (v) => isHex(v, 64)],
  seed_secret: [said("one_of", { values: [true, false] }), isBool],
  key_id: [said("hex_digits", { count: 16 }), (v) => isHex(v, 16)],
  public_key: [said("hex_digits", { count: 64 }), (v) => isHex(v, 64)],
};
// version 2 (SPEC §5.1): the server's inactivity timeout, fixed at creation and signed, an integer ≥ 1
const HEADER_FIELDS_V2 = {
  ...HEADER_FIELDS, abandon_timeout: [said("timeout_seconds"), (v) => isInt(v) && v >= 1],
};
const FINAL_FIELDS = {
  status: [said("one_of", { values: ["finished", "abandoned"] }), (v) => v === "finished" || v === "abandoned"],
  server_seed: [said("hex_digits", { count: 64 }), (v) => isHex(v, 64)],
  totals: [said("totals_per_seat", { parts: TOTAL_PARTS }),
    (v, h) => Array.isArray(v) && v.length === nSeats(h)
      && v.every((t) => isObject(t) && sameKeys(t, TOTAL_PARTS) && TOTAL_PARTS.every((k) => isInt(t[k])))],
  winner: [said("seat_or_null"), (v) => v === null || isInt(v)],
  draw: [said("one_of", { values: [true, false] }), isBool],
};
const EVENT_FIELDS = {
  client_seed: ["type", "seat", "client_seed"],
  start: ["type", "first", "rolloff"],
  roll: ["type", "seat", "turn", "roll", "hold", "dice"],
  score: ["type", "seat", "turn", "category", "points", "joker", "yahtzee_bonus", "upper_bonus", "total"],
  abandon: ["type", "seat"],
};
// version 2: every abandon says why; with two or more human seats each client seed is committed to first and
// revealed with its salt
const EVENT_FIELDS_V2 = { ...EVENT_FIELDS, abandon: ["type", "seat", "reason"] };
const EVENT_FIELDS_V2_COMMITTED = {
  ...EVENT_FIELDS_V2, client_seed_commit: ["type", "seat", "commitment"], client_seed: ["type", "seat", "client_seed", "salt"],
};
export const ABANDON_REASONS = Object.freeze(["player", "timeout"]);

/** The events of a log (type -> its fields in SPEC order) for its version and number of human seats. */
function eventFields(version, humans) {
  if (version === 1) return EVENT_FIELDS;
  return humans >= 2 ? EVENT_FIELDS_V2_COMMITTED : EVENT_FIELDS_V2;
}
const SCORE_FIELDS = ["points", "joker", "yahtzee_bonus", "upper_bonus", "total"];

/** Is `v` a good value of field `name` of an event of `kind` (SPEC §5.3) in a game of `n` seats? */
function eventFieldOk(kind, name, v, n) {
  switch (name) {
    case "seat":
      if (kind === "abandon") return v === null || (isInt(v) && v >= 0 && v < n);
      return isInt(v) || (v === null && kind === "client_seed");
    case "turn": case "roll": case "points": case "yahtzee_bonus": case "upper_bonus": case "total":
      return isInt(v);
    case "first":
      return isInt(v) && v >= 0 && v < n;
    case "hold":
      return Array.isArray(v) && v.every(isInt);
    case "dice":
      return isDice(v);
    case "joker":
      return isBool(v);
    case "commitment": case "salt":
      return isHex(v, 64);
    case "rolloff":
      return Array.isArray(v) && v.every((rnd) => Array.isArray(rnd) && rnd.every((e) =>
        isObject(e) && sameKeys(e, ["seat", "dice"]) && isInt(e.seat) && isDice(e.dice)));
    default: // client_seed, category, reason
      return isStr(v);
  }
}

/** Deep equality of JSON values, types included (1 is not true, 1.0 is not 1). */
function sameJSON(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJSON(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    return isObject(a) && isObject(b) && sameKeys(b, Object.keys(a)) && Object.keys(a).every((k) => sameJSON(a[k], b[k]));
  }
  return a === b;
}

/** [path, expected, found] at the first place two JSON values differ, or null. */
function firstDifference(expected, found, path) {
  if (Array.isArray(expected) && Array.isArray(found) && expected.length === found.length) {
    for (let i = 0; i < expected.length; i++) {
      const d = firstDifference(expected[i], found[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (isObject(expected) && isObject(found) && sameKeys(found, Object.keys(expected))) {
    for (const k of Object.keys(expected)) {
      const d = firstDifference(expected[k], found[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return sameJSON(expected, found) ? null : [path, expected, found];
}

// ------------------------------------------------------------------ receipt and keys (SPEC §5.5, §6)

const RECEIPT_REQUIRED = ["game_id", "seat", "commitment", "client_seed"];
const RECEIPT_OPTIONAL = ["format", "version", "header", "commitment_signature", "public_key"];

/** The first reason why `r` is no usable receipt (SPEC §5.5), or null. */
async function receiptProblem(r) {
  if (!isObject(r)) return "a receipt is a JSON object";
  const missing = RECEIPT_REQUIRED.find((k) => !has(r, k));
  if (missing) return `${missing}: missing`;
  const extra = Object.keys(r).filter((k) => !RECEIPT_REQUIRED.includes(k) && !RECEIPT_OPTIONAL.includes(k)).sort(byCodePoint)[0];
  if (extra !== undefined) return `${extra}: no such field in a receipt`;
  if ((has(r, "format") && r.format !== "fairdice-receipt") || (has(r, "version") && r.version !== 1)) {
    return 'format/version: expected "fairdice-receipt" version 1';
  }
  if (!isStr(r.game_id) || !r.game_id) return "game_id: expected a non-empty string";
  if (r.seat !== null && !(isInt(r.seat) && r.seat >= 0)) return "seat: expected a seat index, or null for the operator of a game without humans";
  if (!isHex(r.commitment, 64)) return "commitment: expected 64 lowercase hex digits";
  if (!isStr(r.client_seed)) return "client_seed: expected a string";
  for (const [name, n] of [["public_key", 64], ["commitment_signature", 128]]) {
    if (given(r, name) && !isHex(r[name], n)) return `${name}: expected ${n} lowercase hex digits`;
  }
  if (!given(r, "header")) return null;
  const header = r.header;
  if (!isObject(header)) return "header: expected the signed header, an object";
  for (const name of ["game_id", "commitment", "public_key"]) {
    if (has(header, name) && given(r, name) && !sameJSON(header[name], r[name])) return `header.${name}: differs from the receipt's own ${name}`;
  }
  if (!given(r, "commitment_signature")) return null;
  const key = r.public_key || header.public_key;
  if (!isHex(key, 64)) return "commitment_signature: no public key to check it with";
  const valid = await ed25519Verify(key, r.commitment_signature, enc.encode(canonicalJSON(header)));
  return valid === false ? "commitment_signature: not a valid signature of the receipt's header by its key" : null;
}

/** A field of a receipt that is there and not null (null counts as absent). */
const given = (r, name) => has(r, name) && r[name] !== null;

/** The player's receipt, held to its shape and to itself; a receipt that cannot serve as evidence is unusable input. */
async function readReceipt(input) {
  if (input === undefined || input === null) return null;
  let r;
  try {
    r = readJSON(input);
  } catch (err) {
    if (err instanceof UnusableInput) throw new UnusableInput(`receipt: ${err.message}`, "bad_receipt");
    throw err;
  }
  const problem = await receiptProblem(r);
  if (problem) throw new UnusableInput(`receipt: ${problem}`, "bad_receipt");
  return r;
}

// ------------------------------------------------------------------ move receipts (v2.md: a signed hash chain)

export const CHAIN_LABEL = "fairdice-chain/v2";
export const MOVE_RECEIPT_LABEL = "fairdice-receipt/v2";
const MOVE_RECEIPT_FIELDS = ["game_id", "events", "chain", "key_id", "signature"];

const sha256 = async (bytes) => new Uint8Array(await subtle().digest("SHA-256", bytes));

/** [h_0, h_1, ..., h_n] of a log: h_0 = SHA-256(field(label) || field(game_id) || canonical(header)),
 * h_i = SHA-256(h_(i-1) || canonical(event_(i-1))). */
export async function chainDigests(header, events) {
  let digest = await sha256(concat([field(CHAIN_LABEL), field(header.game_id), enc.encode(canonicalJSON(header))]));
  const out = [digest];
  for (const event of events) {
    digest = await sha256(concat([digest, enc.encode(canonicalJSON(event))]));
    out.push(digest);
  }
  return out;
}

/** What a move receipt signs: field("fairdice-receipt/v2") || field(game_id) || u32(n) || h_n. */
export function moveReceiptBytes(gameId, n, digest) {
  return concat([field(MOVE_RECEIPT_LABEL), field(gameId), u32(n), digest]);
}

/** The first reason why `r` (receipts[k]) is no usable move receipt, or null. */
function moveReceiptProblem(r, k) {
  const where = `receipts[${k}]`;
  if (!isObject(r)) return `${where}: a move receipt is a JSON object`;
  if (!sameKeys(r, MOVE_RECEIPT_FIELDS)) {
    const names = (keys) => keys.sort(byCodePoint).join(", ");
    return `${where}: expected exactly the fields ${names([...MOVE_RECEIPT_FIELDS])}, found ${names(Object.keys(r))}`;
  }
  if (!isStr(r.game_id) || !isInt(r.events) || r.events < 0 || r.events >= 2 ** 32) {
    return `${where}: game_id must be a string and events a count of events`;
  }
  for (const [name, n] of [["chain", 64], ["key_id", 16], ["signature", 128]]) {
    if (!isHex(r[name], n)) return `${where}.${name}: expected ${n} lowercase hex digits`;
  }
  return null;
}

/** The move receipts (a JSON array, or its text), each held to its shape; unusable input otherwise. */
function readMoveReceipts(input) {
  if (input === undefined || input === null) return null;
  let list;
  try {
    list = readJSON(input);
  } catch (err) {
    if (err instanceof UnusableInput) throw new UnusableInput(`move receipts: ${err.message}`, "bad_move_receipts");
    throw err;
  }
  if (!Array.isArray(list)) throw new UnusableInput("move receipts: a JSON array of move receipts is expected", "bad_move_receipts");
  list.forEach((r, k) => {
    const problem = moveReceiptProblem(r, k);
    if (problem) throw new UnusableInput(`move receipts: ${problem}`, "bad_move_receipts");
  });
  return list;
}

/** The trusted keys as lowercase hex, or null when none is given. */
function readTrustedKeys(keys) {
  if (keys === undefined || keys === null || (Array.isArray(keys) && !keys.length)) return null;
  const list = Array.isArray(keys) ? keys : [keys];
  return list.map((k, i) => {
    if (typeof k !== "string" || !/^[0-9a-fA-F]{64}$/.test(k)) {
      throw new UnusableInput(`trustedKeys[${i}]: expected 64 hex digits (a raw Ed25519 public key), found ${String(k).slice(0, 80)}`,
        "bad_trusted_key");
    }
    return k.toLowerCase();
  });
}

// ------------------------------------------------------------------ the verification (SPEC §7)

/** The replay cannot meaningfully go on. */
class Stop extends Error {}

const show = (v) => (typeof v === "string" || v instanceof Phrase ? String(v) : JSON.stringify(v));

function failureText(f) {
  if (f.check === "seed.revealed") return "the game is not over: its server seed is not revealed yet, so its dice cannot be checked";
  return `event ${f.event === null ? "-" : f.event}, ${f.field}: expected ${show(f.expected)}, found ${show(f.found)}`;
}

class Verification {
  constructor(doc, { trustedKeys, receipt, moveReceipts, allowUnsigned, onProgress }) {
    this.doc = doc;
    this.trustedKeys = trustedKeys;
    this.receipt = receipt;
    this.moveReceipts = moveReceipts; // the server's signed receipts of the moves (v2.md), or null
    this.allowUnsigned = allowUnsigned;
    this.onProgress = onProgress;
    this.statuses = Object.fromEntries(CHECKS.map((c) => [c, "skip"]));
    this.failures = [];
    this.unlisted = {};
    this.notes = {}; // check -> why it was skipped or could not be checked here
    this.info = { version: null, gameId: null, rules: null, status: null, signed: false, trusted: false, seedSecret: null };
    this.view = { clientSeeds: [], rolls: [], rolloff: [], scores: [], botDecisions: 0, abandon: null }; // what the page shows
    this.signers = null; // the keys a signature may be from, once the log has the fields the signatures cover
    this.hmac = null; // the HMAC key of the revealed server seed
    this.stopped = false; // the replay stopped at a failure that leaves no game to follow
  }

  // -- bookkeeping
  fail(check, event, fieldName, expected, found) {
    this.statuses[check] = "fail";
    if (this.failures.filter((f) => f.check === check).length < MAX_LISTED) {
      this.failures.push({ check, event, field: fieldName, expected, found });
    } else this.unlisted[check] = (this.unlisted[check] || 0) + 1;
  }

  passed(...checks) {
    for (const c of checks) if (this.statuses[c] === "skip") this.statuses[c] = "pass";
  }

  /** Nothing failed here, but this browser could not check it (Ed25519, the optimal bot). */
  notChecked(check, why) {
    if (this.statuses[check] !== "fail") this.statuses[check] = "unchecked";
    this.notes[check] = why;
  }

  expect(check, event, fieldName, expected, found) {
    if (sameJSON(expected, found)) return true;
    this.fail(check, event, fieldName, expected, found);
    return false;
  }

  stop(check, event, fieldName, expected, found) {
    this.fail(check, event, fieldName, expected, found);
    this.stopped = true;
    throw new Stop();
  }

  async run() {
    try {
      this.checkFormat();
      this.checkReceipt();
      await this.checkKeyAndCommitment();
      if (this.moveReceipts && this.moveReceipts.length) await this.checkMoveReceipts();
      await this.checkSeed();
      await this.replayEvents();
      this.checkEnd();
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
    }
    if (this.signers !== null) await this.checkFinalSignature(); // last, as the reference does
  }

  // -- log.format: the fields and types of SPEC §5
  checkFormat() {
    const doc = this.doc;
    this.fieldsOk(doc, "", TOP_FIELDS, doc, ["commitment_signature", "signature"]);
    if (this.statuses["log.format"] === "fail") throw new Stop();
    const h = doc.header;
    this.fieldsOk(h, "header.", doc.version === 1 ? HEADER_FIELDS : HEADER_FIELDS_V2, h);
    this.info.version = doc.version;
    this.info.gameId = isStr(h.game_id) ? h.game_id : null;
    this.info.rules = HEADER_FIELDS.rules[1](h.rules) ? h.rules : null;
    this.info.seedSecret = isBool(h.seed_secret) ? h.seed_secret : null;
    if (doc.final !== null) this.fieldsOk(doc.final, "final.", FINAL_FIELDS, h);
    this.info.status = doc.final ? doc.final.status : "in progress";
    if (this.statuses["log.format"] === "fail") throw new Stop();
    this.passed("log.format");
  }

  /** Every field present (or optional) and well typed, and no other field. */
  fieldsOk(obj, prefix, fields, header, optional = []) {
    for (const [name, [wanted, good]] of Object.entries(fields)) {
      if (!has(obj, name)) {
        if (!optional.includes(name)) this.fail("log.format", null, prefix + name, said("present"), said("missing"));
      } else if (!good(obj[name], header)) this.fail("log.format", null, prefix + name, wanted, obj[name]);
    }
    for (const name of Object.keys(obj)) if (!has(fields, name)) this.fail("log.format", null, prefix + name, said("no_such_field"), obj[name]);
  }

  // -- receipt.match (SPEC §5.5): the log is the game the player joined, with the seed the player sent
  checkReceipt() {
    const r = this.receipt;
    if (!r) return;
    const h = this.doc.header;
    this.expect("receipt.match", null, "game_id", r.game_id, h.game_id);
    this.expect("receipt.match", null, "commitment", r.commitment, h.commitment);
    if (given(r, "header") && canonicalJSON(r.header) !== canonicalJSON(h)) {
      this.fail("receipt.match", null, ...(firstDifference(r.header, h, "header") || ["header", r.header, h]));
    }
    if (given(r, "public_key")) this.expect("receipt.match", null, "public_key", r.public_key, h.public_key);
    const seatOf = (e) => (has(e, "seat") ? e.seat : null);
    const sent = this.doc.events.flatMap((e, i) => (isObject(e) && e.type === "client_seed" && seatOf(e) === r.seat ? [i] : []));
    if (!sent.length) this.fail("receipt.match", null, "client_seed", r.client_seed, said("no_seed_from_seat"));
    for (const i of sent) {
      const e = this.doc.events[i];
      this.expect("receipt.match", i, "client_seed", r.client_seed, has(e, "client_seed") ? e.client_seed : null);
    }
    this.passed("receipt.match");
  }

  // -- log.key, sig.commitment (SPEC §6)
  async checkKeyAndCommitment() {
    const doc = this.doc;
    const h = doc.header;
    const kid = (await sha256Hex(hexToBytes(h.public_key))).slice(0, 16);
    this.expect("log.key", null, "header.key_id", kid, h.key_id);
    // trusted: the keys given, else the key the receipt says the player saw when the game was created
    const trusted = this.trustedKeys || (this.receipt && given(this.receipt, "public_key") ? [this.receipt.public_key] : null);
    if (trusted === null) {
      this.signers = [h.public_key];
      this.notes["log.key"] = `key ${kid} is the log's own key: no trusted key was given, so who made this log was not checked`;
    } else {
      this.info.trusted = true;
      this.signers = trusted;
      if (!trusted.includes(h.public_key)) this.fail("log.key", null, "header.public_key", said("a_trusted_key", { keys: trusted }), h.public_key);
      this.notes["log.key"] = `key ${kid} is the server's published key`;
    }
    this.passed("log.key");
    this.info.signed = has(doc, "commitment_signature") && has(doc, "signature");
    if (has(doc, "commitment_signature")) {
      await this.checkSignature("sig.commitment", "commitment_signature", canonicalJSON(h), said("header_signature"));
    } else if (!this.allowUnsigned) this.fail("sig.commitment", null, "commitment_signature", said("present"), said("missing"));
    else this.notes["sig.commitment"] = "unsigned (allowed): nothing shows that the server promised this header before the client seeds";
  }

  // -- sig.final (SPEC §6): checked last
  async checkFinalSignature() {
    const doc = this.doc;
    if (!has(doc, "signature")) {
      if (doc.final === null) return; // a game in progress is signed once it is over
      if (!this.allowUnsigned) this.fail("sig.final", null, "signature", said("present"), said("missing"));
      else this.notes["sig.final"] = "unsigned (allowed): the dice and scores re-derive, but nothing shows that the server sent this log";
      return;
    }
    const unsigned = {};
    for (const k of Object.keys(doc)) if (k !== "signature") unsigned[k] = doc[k];
    await this.checkSignature("sig.final", "signature", canonicalJSON(unsigned), said("log_signature"));
  }

  async checkSignature(check, name, text, wanted) {
    const sig = this.doc[name];
    const verdict = /^[0-9a-f]{128}$/.test(sig) ? await this.signedByATrustedKey(sig, enc.encode(text)) : false;
    if (verdict === null) this.notChecked(check, "this browser cannot check Ed25519 signatures: run fairdice-verify game.json");
    else if (!verdict) this.fail(check, null, name, wanted, sig);
    this.passed(check);
  }

  // -- receipt.chain (v2.md): every move receipt is of this game, within its history, hashing to the log's h_n,
  //    and signed by a trusted key; one failure per receipt that departs, as the reference reports them
  async checkMoveReceipts() {
    const { header: h, events } = this.doc;
    let digests = null;
    for (const [k, r] of this.moveReceipts.entries()) {
      const where = `receipts[${k}]`;
      if (r.game_id !== h.game_id) {
        this.fail("receipt.chain", null, `${where}.game_id`, h.game_id, r.game_id);
        continue;
      }
      const signed = await this.signedByATrustedKey(r.signature, moveReceiptBytes(r.game_id, r.events, hexToBytes(r.chain)));
      if (signed === false) {
        this.fail("receipt.chain", null, `${where}.signature`, said("trusted_signature"), r.signature);
        continue;
      }
      if (signed === null) this.notChecked("receipt.chain", "this browser cannot check Ed25519 signatures: run fairdice-verify --receipts");
      if (r.events > events.length) {
        this.fail("receipt.chain", null, `${where}.events`, said("at_most_events", { count: events.length }), r.events);
        continue;
      }
      digests = digests || await chainDigests(h, events);
      const mine = bytesToHex(digests[r.events]);
      if (mine !== r.chain) this.fail("receipt.chain", r.events ? r.events - 1 : null, `${where}.chain`, mine, r.chain);
    }
    this.passed("receipt.chain");
  }

  /** true when one of the signers signed `data`, false when none did, null when this browser cannot tell. */
  async signedByATrustedKey(sig, data) {
    let verdict = false;
    for (const key of this.signers) {
      const ok = await ed25519Verify(key, sig, data);
      if (ok === true) return true;
      if (ok === null) verdict = null;
    }
    return verdict;
  }

  // -- seed.revealed, seed.commitment (SPEC §2.1)
  async checkSeed() {
    const fin = this.doc.final;
    if (fin === null) {
      this.fail("seed.revealed", null, "final", said("game_over"), null);
      return;
    }
    this.passed("seed.revealed");
    this.expect("seed.commitment", null, "header.commitment", await commitmentOf(fin.server_seed), this.doc.header.commitment);
    this.passed("seed.commitment");
    this.hmac = await hmacKey(fin.server_seed);
  }

  // -- the replay (SPEC §2.2-§4)
  /** log.format for one event: its type, exactly its fields, and their JSON types. */
  eventFormat(i, ev) {
    const kind = isObject(ev) && has(ev, "type") ? ev.type : null;
    const fields = this.game.fields;
    if (!isStr(kind) || !has(fields, kind)) {
      this.stop("log.format", i, "type", said("one_of", { values: Object.keys(fields) }), isObject(ev) ? kind : ev);
    }
    const names = fields[kind];
    if (!sameKeys(ev, names)) {
      const odd = [...names.filter((k) => !has(ev, k)), ...Object.keys(ev).filter((k) => !names.includes(k))].sort(byCodePoint);
      this.stop("log.format", i, odd.join(","), names, Object.keys(ev).sort(byCodePoint));
    }
    for (const name of names.slice(1)) {
      if (!eventFieldOk(kind, name, ev[name], this.nSeats)) this.stop("log.format", i, name, said("event_field"), ev[name]);
    }
  }

  newGame() {
    const h = this.doc.header;
    const n = this.nSeats = h.seats.length;
    const cats = CATEGORIES[h.rules];
    const humans = h.seats.flatMap((s, i) => (s.type === "human" ? [i] : []));
    const version = this.doc.version;
    const fields = eventFields(version, humans.length);
    return {
      h, n, rules: h.rules, upperFirst: h.upper_first, nBoxes: n * cats.length, version, fields,
      committed: has(fields, "client_seed_commit"), // version 2 with two or more human seats
      commitments: new Map(), // seat -> its commitment to its client seed (committed games)
      boxes: h.seats.map(() => new Map(cats.map((c) => [c, null]))), // per seat: category -> points, null while open
      bonus: h.seats.map(() => [0, 0]), // per seat: upper bonus, Yahtzee bonuses
      filled: Array(n).fill(0), total: Array(n).fill(0), upper: Array(n).fill(0),
      humans, senders: humans.length ? humans : [null], // who sends a client seed: the human seats, else the operator
      seeds: new Map(), phase: "seeds", // then "play", then "over" or "abandoned"
      cur: null, rolls: 0, dice: [0, 0, 0, 0, 0], derive: null, nRolls: 0, nScores: 0,
      isBot: h.seats.map((s) => s.type === "bot"),
      rollEvents: this.doc.events.filter((e) => isObject(e) && e.type === "roll").length,
    };
  }

  /** Replay the events in order, re-deriving the dice from the revealed seed (without one: taking the logged dice). */
  async replayEvents() {
    const g = this.game = this.newGame();
    await this.checkBotIdentities();
    for (const [i, ev] of this.doc.events.entries()) {
      const kind = isObject(ev) && has(ev, "type") ? ev.type : null;
      if (kind === "roll" && g.phase === "play") await this.onRoll(i, ev, g);
      else if (kind === "score" && g.phase === "play") await this.onScore(i, ev, g);
      else await this.onOtherEvent(i, ev, kind, g);
    }
    this.passed("client_seed.valid");
    if (g.committed) this.passed("client_seed.commit");
    if (g.phase === "abandoned" && g.version >= 2) this.passed("game.abandon");
    if (g.phase !== "seeds") this.passed("start.first");
    if (g.nRolls) this.passed("turn.order", "roll.count", "roll.hold", "roll.dice");
    if (g.nScores) this.passed("score.category", "score.points");
  }

  /** turn.order, the bot's decision and roll.count for a roll or a score (called only when something is to be said, or for a bot). */
  async checkMove(i, ev, g) {
    const turn = g.filled[g.cur] + 1;
    if (ev.seat !== g.cur) this.stop("turn.order", i, "seat", g.cur, ev.seat);
    if (ev.turn !== turn) this.stop("turn.order", i, "turn", turn, ev.turn);
    if (g.isBot[g.cur] && g.rolls > 0) await this.checkBotDecision(i, ev, g, turn);
    if (ev.type === "roll" && (g.rolls === 3 || ev.roll !== g.rolls + 1)) {
      this.stop("roll.count", i, "roll", g.rolls < 3 ? g.rolls + 1 : said("box_after_third_roll"), ev.roll);
    }
    if (ev.type === "score" && g.rolls === 0) this.stop("roll.count", i, "type", said("roll_begins_turn"), "score");
  }

  async onRoll(i, ev, g) {
    this.eventFormat(i, ev);
    const { seat, turn, roll, hold, dice: logged } = ev;
    const entry = { index: i, seat, turn, roll, hold, dice: logged, expected: null, ok: false, detail: "" };
    this.view.rolls.push(entry);
    if (seat !== g.cur || turn !== g.filled[g.cur] + 1 || roll !== g.rolls + 1 || roll > 3 || g.isBot[g.cur]) await this.checkMove(i, ev, g);
    if (hold.length && (roll === 1 || !isHold(hold))) {
      this.stop("roll.hold", i, "hold", said(roll === 1 ? "no_hold_on_first_roll" : "hold_positions"), hold);
    }
    // roll.dice: every die re-derived; a held die keeps its value (the stream is not shifted)
    const dice = g.derive ? await g.derive.roll(seat, turn, roll) : [...logged];
    for (const p of hold) dice[p] = g.dice[p];
    entry.expected = dice;
    dice.forEach((d, p) => {
      if (d !== logged[p]) this.fail("roll.dice", i, `dice[${p}]`, d, logged[p]);
    });
    g.dice = dice;
    g.rolls = roll;
    g.nRolls += 1;
    if (this.onProgress) this.onProgress(g.nRolls, g.rollEvents);
  }

  async onScore(i, ev, g) {
    if (!sameKeys(ev, EVENT_FIELDS.score) || !isInt(ev.seat) || !isInt(ev.turn)) this.eventFormat(i, ev);
    const entry = { index: i, seat: ev.seat, turn: ev.turn, category: ev.category, points: ev.points, ok: false, detail: "" };
    this.view.scores.push(entry);
    if (ev.seat !== g.cur || ev.turn !== g.filled[g.cur] + 1 || g.rolls === 0 || g.isBot[g.cur]) await this.checkMove(i, ev, g);
    // score.category: a box of the rule set, open, and legal for these dice
    const cur = g.cur;
    const boxes = g.boxes[cur];
    const cat = ev.category;
    if (!isStr(cat)) this.eventFormat(i, ev);
    if (!boxes.has(cat)) this.stop("score.category", i, "category", said("category_of_rules", { rules: g.rules }), cat);
    if (boxes.get(cat) !== null) this.stop("score.category", i, "category", said("an_open_box"), said("already_filled", { category: cat }));
    const scored = scoreOnCard(g.rules, boxes, g.dice, cat, g.upperFirst);
    if (!scored) this.stop("score.category", i, "category", said("one_of", { values: [...legalBoxes(g.rules, boxes, g.dice, g.upperFirst).keys()] }), cat);
    // score.points: points, joker, Yahtzee bonus, upper bonus and running total
    const [pts, joker] = scored;
    const yb = yahtzeeBonus(g.rules, boxes, g.dice);
    const ub = upperBonus(g.rules, g.upper[cur], cat, pts);
    boxes.set(cat, pts);
    if (isUpper(cat)) g.upper[cur] += pts;
    g.bonus[cur][0] += ub;
    g.bonus[cur][1] += yb;
    g.total[cur] += pts + ub + yb;
    const mine = [pts, joker, yb, ub, g.total[cur]];
    const found = SCORE_FIELDS.map((k) => ev[k]);
    const typed = isInt(found[0]) && isBool(found[1]) && isInt(found[2]) && isInt(found[3]) && isInt(found[4]);
    if (!typed || mine.some((m, k) => m !== found[k])) {
      this.eventFormat(i, ev); // first: are these the right JSON types?
      SCORE_FIELDS.forEach((name, k) => {
        if (mine[k] !== found[k]) this.fail("score.points", i, name, mine[k], found[k]);
      });
    }
    g.rolls = 0;
    g.filled[cur] += 1;
    g.nScores += 1;
    if (g.nScores === g.nBoxes) g.phase = "over";
    else g.cur = (cur + 1) % g.n;
  }

  async onOtherEvent(i, ev, kind, g) {
    this.eventFormat(i, ev);
    if (g.phase === "over" || g.phase === "abandoned") {
      this.stop("game.complete", i, "type", said(g.phase === "over" ? "no_event_after_last_box" : "no_event_after_abandon"), kind);
    }
    if (g.phase === "seeds" && g.seeds.size === g.senders.length && kind !== "start" && kind !== "client_seed") {
      this.stop("turn.order", i, "type", said("start_after_seeds"), kind);
    }
    if (kind === "client_seed_commit") {
      if (g.phase !== "seeds" || g.seeds.size) this.stop("client_seed.commit", i, "type", said("commitments_before_seeds"), kind);
      this.onCommitment(i, ev, g);
    } else if (kind === "client_seed") await this.onClientSeed(i, ev, g);
    else if (kind === "start") {
      if (g.phase !== "seeds") this.stop("turn.order", i, "type", said("roll_or_score"), kind);
      const missing = g.senders.filter((s) => !g.seeds.has(s));
      if (missing.length) this.fail("client_seed.valid", i, "type", said("seeds_first", { seats: missing }), kind);
      const clientSeeds = g.senders.filter((s) => g.seeds.has(s)).map((s) => g.seeds.get(s)); // in seat order (§2.2)
      this.view.clientSeeds = clientSeeds;
      if (this.hmac) g.derive = new Deriver(this.hmac, g.h.game_id, clientSeeds);
      g.cur = await this.checkStart(i, ev, g.h.first, g.derive);
      g.phase = "play";
    } else if (kind === "abandon") {
      if (g.version >= 2) this.checkAbandon(i, ev, g.humans, g.phase === "play" ? g.cur : null);
      this.view.abandon = { seat: ev.seat, reason: has(ev, "reason") ? ev.reason : null };
      g.phase = "abandoned";
    } else this.stop("turn.order", i, "type", said("start_before_moves"), kind); // a roll or a score before play began
  }

  async onClientSeed(i, ev, g) {
    const s = ev.seat;
    if (g.phase !== "seeds") this.stop("client_seed.valid", i, "type", said("no_seed_after_start"), ev.type);
    if (g.committed) await this.checkReveal(i, ev, g);
    if (!g.senders.includes(s)) {
      this.fail("client_seed.valid", i, "seat", g.humans.length ? said("a_human_seat", { seats: g.humans }) : said("no_human_seat"), s);
    } else if (g.seeds.has(s)) this.fail("client_seed.valid", i, "seat", said("one_seed_per_seat"), s);
    else {
      if (!clientSeedValid(ev.client_seed)) {
        this.fail("client_seed.valid", i, "client_seed", said("client_seed_rule"), ev.client_seed);
      }
      g.seeds.set(s, ev.client_seed);
      if (g.phase === "seeds") this.view.clientSeeds = g.senders.filter((x) => g.seeds.has(x)).map((x) => g.seeds.get(x));
    }
  }

  // -- client_seed.commit (version 2, two or more human seats): each human seat commits once, then every seat reveals
  onCommitment(i, ev, g) {
    const s = ev.seat;
    if (!g.humans.includes(s)) this.stop("client_seed.commit", i, "seat", said("a_human_seat", { seats: g.humans }), s);
    if (g.commitments.has(s)) this.stop("client_seed.commit", i, "seat", said("one_commitment_per_seat"), s);
    g.commitments.set(s, ev.commitment);
  }

  /** A reveal opens its seat's commitment: SHA-256(salt || UTF-8(client seed)), once every human seat committed. */
  async checkReveal(i, ev, g) {
    const missing = g.humans.filter((s) => !g.commitments.has(s));
    if (missing.length) {
      this.stop("client_seed.commit", i, "type", said("commitments_first", { seats: missing }), ev.type);
    }
    const { client_seed: seed, seat: s } = ev;
    if (!clientSeedValid(seed) || !g.commitments.has(s)) return; // client_seed.valid says what is wrong with it
    const committed = g.commitments.get(s);
    const opened = await seedCommitment(ev.salt, seed);
    if (opened !== committed) {
      this.fail("client_seed.commit", i, "client_seed", said("committed_seed", { commitment: committed }),
        said("seed_and_salt_hash", { hash: opened }));
    }
  }

  // -- game.abandon (version 2): who may abandon, when, and why
  checkAbandon(i, ev, humans, current) {
    const { seat, reason } = ev;
    if (!ABANDON_REASONS.includes(reason)) this.fail("game.abandon", i, "reason", said("one_of", { values: ABANDON_REASONS }), reason);
    else if (reason === "timeout" && seat !== null) this.fail("game.abandon", i, "seat", said("null_on_timeout"), seat);
    else if (reason === "player" && seat === null && humans.length) {
      this.fail("game.abandon", i, "seat", said("seat_not_timeout"), seat);
    } else if (reason === "player" && seat !== null && !humans.includes(seat)) {
      this.fail("game.abandon", i, "seat", said("a_human_seat", { seats: humans }), seat);
    } else if (reason === "player" && seat !== null && current !== null && seat !== current) {
      this.fail("game.abandon", i, "seat", said("seat_whose_turn", { seat: current }), seat);
    }
  }

  /** start.first: the fixed first seat, or the roll-off re-derived. Returns the true first seat. */
  async checkStart(i, ev, first, derive) {
    if (first !== "random") {
      this.expect("start.first", i, "first", first, ev.first);
      this.expect("start.first", i, "rolloff", [], ev.rolloff);
      return first;
    }
    const logged = new Map();
    ev.rolloff.forEach((rnd, r) => rnd.forEach((e) => logged.set(`${r + 1},${e.seat}`, e.dice)));
    const rounds = [];
    let alive = [...Array(this.nSeats).keys()];
    for (let r = 1; alive.length > 1 && r <= 1000; r++) {
      if (!derive && r > ev.rolloff.length) break; // no seed: check that the logged roll-off is consistent
      const rnd = [];
      for (const seat of alive) rnd.push({ seat, dice: derive ? await derive.rolloff(r, seat) : logged.get(`${r},${seat}`) ?? null });
      rounds.push(rnd);
      for (const e of rnd) {
        const dice = logged.get(`${r},${e.seat}`) ?? null;
        this.view.rolloff.push({ round: r, seat: e.seat, dice, expected: e.dice, ok: sameJSON(dice, e.dice) });
      }
      if (rnd.some((e) => e.dice === null)) break;
      const best = Math.max(...rnd.map((e) => sumOf(e.dice)));
      alive = rnd.filter((e) => sumOf(e.dice) === best).map((e) => e.seat);
    }
    const diff = firstDifference(rounds, ev.rolloff, "rolloff");
    if (diff) this.fail("start.first", i, ...diff);
    if (alive.length === 1) {
      this.expect("start.first", i, "first", alive[0], ev.first);
      return alive[0];
    }
    this.fail("start.first", i, "rolloff", said("rolloff_until_winner"), ev.rolloff);
    return ev.first;
  }

  seatTotals(s) {
    const g = this.game;
    let upper = 0;
    let lower = 0;
    for (const [c, v] of g.boxes[s]) {
      if (v !== null) {
        if (isUpper(c)) upper += v;
        else lower += v;
      }
    }
    const [ub, yb] = g.bonus[s];
    return { upper, upper_bonus: ub, lower, yahtzee_bonus: yb, total: upper + ub + lower + yb };
  }

  // -- game.complete, final.totals, final.winner (SPEC §4.4, §5.4)
  checkEnd() {
    const fin = this.doc.final;
    const { phase } = this.game;
    const events = this.doc.events;
    if (fin === null) {
      if (phase === "over" || phase === "abandoned") this.fail("game.complete", null, "final", said("final_block"), null);
      return;
    }
    if (fin.status === "finished" && phase !== "over") {
      const open = this.game.boxes.reduce((a, b) => a + [...b.values()].filter((v) => v === null).length, 0);
      const shown = { play: said("shown_in_progress", { count: open }), seeds: said("shown_not_started"), abandoned: said("shown_abandoned") }[phase];
      this.fail("game.complete", null, "final.status", shown, fin.status);
    } else if (fin.status === "abandoned" && phase !== "abandoned") {
      this.fail("game.complete", events.length ? events.length - 1 : null, "type", said("abandon_event_last"),
        events.length ? events[events.length - 1].type : said("no_events"));
    }
    this.passed("game.complete");
    const totals = this.game.boxes.map((_, s) => this.seatTotals(s));
    const diff = firstDifference(totals, fin.totals, "final.totals");
    if (diff) this.fail("final.totals", null, ...diff);
    this.passed("final.totals");
    let winner = null;
    let draw = false;
    if (fin.status === "finished") {
      const best = Math.max(...totals.map((t) => t.total));
      const winners = totals.flatMap((t, s) => (t.total === best ? [s] : []));
      winner = winners.length === 1 ? winners[0] : null;
      draw = winners.length > 1;
    }
    this.expect("final.winner", null, "final.winner", winner, fin.winner);
    this.expect("final.winner", null, "final.draw", draw, fin.draw);
    this.passed("final.winner");
  }

  // -- bot.identity, bot.decision
  async checkBotIdentities() {
    const hashes = await publishedBotHashes();
    this.botOk = {};
    this.game.h.seats.forEach((seat, s) => {
      if (seat.type !== "bot") return;
      const { id, version, hash } = seat.bot;
      let problem = null;
      if (!has(PUBLISHED_BOTS, id)) problem = ["id", said("a_published_policy", { bots: Object.keys(PUBLISHED_BOTS).sort() }), id];
      else if (PUBLISHED_BOTS[id].version !== version) problem = ["version", PUBLISHED_BOTS[id].version, version];
      else if (hashes[id] !== hash) problem = ["hash", hashes[id], hash];
      if (problem) this.fail("bot.identity", null, `header.seats[${s}].bot.${problem[0]}`, problem[1], problem[2]);
      this.botOk[s] = !problem;
    });
    this.passed("bot.identity");
  }

  async checkBotDecision(i, ev, g, turn) {
    const seat = g.cur;
    if (!this.botOk[seat] || !g.derive) return;
    const id = g.h.seats[seat].bot.id;
    let decision;
    if (id === "optimal" && !g.upperFirst) {
      this.notChecked("bot.decision", "the optimal bot's decisions are not checked in the browser (its tables are too large): " +
        "run `fairdice-verify game.json`");
      return;
    }
    if (id === "optimal") {
      this.fail("bot.decision", i, "type", said("optimal_upper_first"), ev.type);
      return;
    }
    try {
      decision = await botDecision(id, g.rules, g.boxes[seat], g.dice, g.rolls, g.upperFirst,
        (k) => g.derive.tiebreak(seat, turn, g.rolls, k));
    } catch (err) {
      this.fail("bot.decision", i, "type", said("policy_failed", { error: err.message }), ev.type);
      return;
    }
    this.view.botDecisions += 1;
    if (decision.action !== ev.type) {
      this.fail("bot.decision", i, "type", moveSaid(decision.action, decision.hold, decision.category), moveSaid(ev.type, ev.hold, ev.category));
    } else if (decision.action === "roll") this.expect("bot.decision", i, "hold", decision.hold, ev.hold);
    else this.expect("bot.decision", i, "category", decision.category, ev.category);
    this.passed("bot.decision");
  }

  // -- the report
  passDetail(id) {
    const v = this.view;
    const g = this.game;
    const first = this.doc.events.find((e) => isObject(e) && e.type === "start");
    const details = {
      "log.format": "the fields and types of SPEC §5",
      "sig.commitment": "the header (commitment, rules, seats, bots) was signed before any client seed",
      "sig.final": "the whole log is signed",
      "seed.revealed": `server seed ${this.doc.final && this.doc.final.server_seed}`,
      "seed.commitment": "SHA-256(server seed) equals the commitment",
      "client_seed.valid": `${v.clientSeeds.length} client seed(s), each valid, before the start`,
      "start.first": g && g.h.first === "random" ? `the roll-off re-derives: seat ${first && first.first} plays first`
        : `seat ${first && first.first} plays first, as the header promised`,
      "turn.order": "every roll and box belongs to the seat and turn whose move it was",
      "roll.count": "one to three rolls a turn, numbered 1, 2, 3; every box after a roll",
      "roll.hold": "every hold names valid positions, none on a first roll",
      "roll.dice": `${g && g.nRolls} of ${g && g.nRolls} rolls re-derive from the seeds`,
      "score.category": "every box was open and legal for its dice (joker and house rule included)",
      "score.points": `${g && g.nScores} boxes re-score from their dice (bonuses and totals too)`,
      "game.complete": this.info.status === "abandoned" ? "the game ends with its abandon event" : "every box of every seat is filled",
      "final.totals": "every part of every seat's totals recomputes",
      "final.winner": "the winner and the draw recompute",
      "bot.identity": g && g.isBot.some(Boolean) ? "every bot is a published policy (id, version and hash)" : "no bot in this game",
      "bot.decision": `${v.botDecisions} bot decisions are the policy's own`,
      "receipt.match": "the log is the game of your receipt: game id, commitment and your client seed",
      "client_seed.commit": `${g && g.commitments.size} commitments, one per human seat before any reveal, each opened by its `
        + "client seed and salt",
      "game.abandon": abandonDetail(v.abandon, this.doc.header),
      "receipt.chain": `${this.moveReceipts && this.moveReceipts.length} move receipts: each signed by the server, each the `
        + "history of this log up to its event count",
    };
    return this.notes[id] || details[id];
  }

  checkEntries() {
    const entries = [];
    const { stopped } = this;
    for (const id of CHECKS) {
      const status = this.statuses[id];
      const mine = this.failures.filter((f) => f.check === id);
      const more = mine.length - 3 + (this.unlisted[id] || 0);
      if (status === "fail") {
        entries.push({ id, ok: false, status, detail: mine.slice(0, 3).map(failureText).join("; ") + (more > 0 ? ` (and ${more} more)` : "") });
      } else if (status === "pass") entries.push({ id, ok: true, status, detail: this.passDetail(id) });
      else if (status === "unchecked") entries.push({ id, ok: null, status, detail: this.notes[id] });
      else if (this.notes[id]) entries.push({ id, ok: null, status, detail: this.notes[id] });
      else if (stopped && this.applies(id)) entries.push({ id, ok: null, status, detail: "not checked: the replay stopped at the failure above" });
      if (id === "seed.commitment" && this.info.seedSecret === false) {
        entries.push({ id: "seed.secret", ok: null, status: "note",
          detail: "this log's server seed was derived from a public value (fairdice simulate --seed): reproducible, not secret" });
      }
    }
    return entries;
  }

  /** Whether check `id` concerns this log (those of receipts only when given, those of version 2 only there). */
  applies(id) {
    const g = this.game;
    if (id === "receipt.match" || id === "receipt.chain") return false; // (a skipped one has been checked, or not asked for)
    if (id === "client_seed.commit") return Boolean(g && g.committed);
    if (id === "game.abandon") return this.info.version >= 2 && this.doc.events.some((e) => isObject(e) && e.type === "abandon");
    return true;
  }

  /** Mark the page's rolls and boxes: ok when nothing failed at that event (the move receipts name the event
   * a receipt departs after, but they speak of the whole history, not of that roll or box). */
  markEvents() {
    const firstFailure = new Map();
    for (const f of this.failures) {
      if (f.event !== null && f.check !== "receipt.chain" && !firstFailure.has(f.event)) firstFailure.set(f.event, failureText(f));
    }
    for (const e of [...this.view.rolls, ...this.view.scores]) {
      e.ok = !firstFailure.has(e.index);
      e.detail = firstFailure.get(e.index) || "";
    }
  }

  report() {
    this.markEvents();
    const failed = this.failures.length > 0 || Object.keys(this.unlisted).length > 0;
    const unchecked = Object.values(this.statuses).includes("unchecked");
    return {
      ok: failed ? false : unchecked ? null : true,
      error: null,
      reason: null,
      checks: this.checkEntries(),
      statuses: { ...this.statuses },
      failures: this.failures,
      unlisted: { ...this.unlisted },
      ...this.info,
      clientSeeds: this.view.clientSeeds,
      rolls: this.view.rolls,
      rolloff: this.view.rolloff,
      scores: this.view.scores,
      abandon: this.view.abandon,
      document: this.doc,
    };
  }
}

/** Who abandoned the game and why, in words (the log has no clock: a timeout's length is the server's word). */
function abandonDetail(abandon, header) {
  if (!abandon) return "no abandon event";
  if (abandon.seat !== null) return `seat ${abandon.seat} abandoned, before the start or on its own turn`;
  if (abandon.reason === "timeout") {
    return `the server abandoned the game on its timeout (${header.abandon_timeout} seconds without a move, by the server's `
      + "clock: the log cannot show how long it waited)";
  }
  return "the operator of a game without human seats abandoned it";
}

function unusable(err) {
  return {
    ok: false, error: err.message, reason: err.reason, checks: [], statuses: {}, failures: [], unlisted: {}, gameId: null, rules: null, status: null,
    version: null, signed: false, trusted: false, seedSecret: null, clientSeeds: [], rolls: [], rolloff: [], scores: [], abandon: null,
    document: null,
  };
}

/**
 * Verify a fairdice log (SPEC §7) in the browser or under Node.
 *
 * log: the file's text (a string), its bytes (Uint8Array / ArrayBuffer), or an already parsed object.
 * options.trustedKeys: public keys (hex) the caller trusts (e.g. from GET /v1/keys); none: the log's own key.
 * options.receipt: the player's receipt (object or JSON text): the log must be the game it promised.
 * options.moveReceipts: the server's signed move receipts the player kept (an array, or its JSON text, v2.md):
 *   the log must be the history each of them signs (check receipt.chain).
 * options.allowUnsigned: accept a log without its signatures (and say what that does not prove).
 * options.onProgress(done, total): called as rolls are checked.
 *
 * Resolves to {ok, error, reason, checks: [{id, ok, status, detail}], statuses: {id: "pass"|"fail"|"skip"|"unchecked"},
 * failures: [{check, event, field, expected, found}], unlisted, version, gameId, rules, status, signed, trusted,
 * seedSecret, clientSeeds, rolls, rolloff, scores, abandon ({seat, reason} or null), document}.
 * ok: true when every check passed; false when one failed, or (with `error` and `reason`, one of
 * UNUSABLE_REASONS) for input that is not a log at all; null when nothing failed but something could not be
 * checked here (run fairdice-verify). A failure's expected and found are values of the log, or a Phrase.
 */
export async function verifyLog(log, options = {}) {
  let doc;
  let receipt;
  let moveReceipts;
  let trustedKeys;
  try {
    doc = readJSON(log);
    if (!isObject(doc)) {
      const kind = Array.isArray(doc) ? "an array" : doc === null ? "null" : typeof doc === "object" ? "a number" : `a ${typeof doc}`;
      throw new UnusableInput(`not a JSON object (the document is ${kind})`, "not_an_object");
    }
    receipt = await readReceipt(options.receipt);
    moveReceipts = readMoveReceipts(options.moveReceipts);
    trustedKeys = readTrustedKeys(options.trustedKeys);
  } catch (err) {
    if (err instanceof UnusableInput) return unusable(err);
    throw err;
  }
  const v = new Verification(doc, {
    trustedKeys, receipt, moveReceipts, allowUnsigned: !!options.allowUnsigned, onProgress: options.onProgress,
  });
  await v.run();
  return v.report();
}

/** verifyLog(log, {...options, moveReceipts: receipts}): the log held to the move receipts the player kept. */
export function verifyMoveReceipts(log, receipts, options = {}) {
  return verifyLog(log, { ...options, moveReceipts: receipts });
}
