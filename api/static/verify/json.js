// JSON values as the verifier sees them: what kind a value is, whether two are the same (types included), and
// where they first differ. JsonFloat marks a number written with a fraction or an exponent (strictjson.js).

/** A JSON number written with a fraction or an exponent: not an integer, even when it is 1.0. */
export class JsonFloat {
  constructor(value) {
    this.value = value;
  }

  toJSON() {
    return this.value;
  }
}

export const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
export const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x) && !(x instanceof JsonFloat);
export const isInt = (x) => typeof x === "number" && Number.isInteger(x);
export const isStr = (x) => typeof x === "string";
export const isBool = (x) => typeof x === "boolean";
/** A field that is there and not null (a receipt's null counts as absent). */
export const given = (obj, name) => has(obj, name) && obj[name] !== null;
/** `n` lowercase hex digits. */
export const isHex = (x, n) => isStr(x) && x.length === n && /^[0-9a-f]*$/.test(x);
/** Exactly these keys, in any order. */
export const sameKeys = (obj, names) => Object.keys(obj).length === names.length && names.every((k) => has(obj, k));

/** Deep equality of JSON values, types included (1 is not true, 1.0 is not 1). */
export function sameJSON(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJSON(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    return isObject(a) && isObject(b) && sameKeys(b, Object.keys(a)) && Object.keys(a).every((k) => sameJSON(a[k], b[k]));
  }
  return a === b;
}

/** [path, expected, found] at the first place two JSON values differ, or null. */
export function firstDifference(expected, found, path) {
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
