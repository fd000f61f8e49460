// Strict JSON: input that is not a log at all (SPEC §7, exit 2 of fairdice-verify) must be refused, not guessed
// at: JSON.parse keeps the last of duplicate keys, where another reader may keep the first. The reasons are those
// of the reference (verifier/strictjson.py), each a stable code the page words in the player's language.

import { enc } from "./bytes.js";
import { JsonFloat, has } from "./json.js";

export const MAX_BYTES = 16 * 1024 * 1024;
export const MAX_DEPTH = 64;

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
  bad_table: "an optimal table that is not the published one (its SHA-256 is not the digest the bot identity commits to)",
});

/** Input that is not a log at all: verifyLog answers {ok: false, error: message, reason}. */
export class UnusableInput extends Error {
  constructor(message, reason) {
    super(message);
    if (!Object.prototype.hasOwnProperty.call(UNUSABLE_REASONS, reason)) throw new Error(`no such reason: ${reason}`);
    this.reason = reason;
  }
}

const TWO_53 = 2 ** 53;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in a string (RFC 8259 §7)
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
  if (typeof value === "number") checkParsedNumber(value);
  else if (typeof value === "string") {
    if (!wellFormed(value)) throw new UnusableInput("a lone surrogate in a string", "lone_surrogate");
  } else checkParsedContainer(value, depth);
}

/** A number the document could hold: finite, below 2^53 in magnitude. */
function checkParsedNumber(value) {
  if (!Number.isFinite(value)) throw new UnusableInput(`${value} is not JSON`, "nan_or_infinity");
  if (!(Math.abs(value) < TWO_53)) throw new UnusableInput(`a number of magnitude 2^53 or more: ${value}`, "number_out_of_range");
}

/** An array or a plain object (no other type, nothing deeper than MAX_DEPTH), its keys and values held in turn. */
function checkParsedContainer(value, depth) {
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
export function readJSON(input) {
  if (typeof input === "string" || input instanceof ArrayBuffer || ArrayBuffer.isView(input)) return parseStrictJSON(input);
  checkParsed(input);
  return input;
}
