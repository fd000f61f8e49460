// Canonical JSON of SPEC §1, the bytes every hash and signature of the protocol covers.

import { JsonFloat } from "./json.js";

function escapeString(s) {
  // JSON.stringify escapes quotes, backslashes and control characters the way Python does
  // (\n, \t, ... and \u00XX in lower case); Python's ensure_ascii also escapes every
  // non-ASCII UTF-16 code unit, and DEL, as \uXXXX.
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

/** Keys in the order of their code points (SPEC §1), not of their UTF-16 units. */
export function byCodePoint(a, b) {
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
