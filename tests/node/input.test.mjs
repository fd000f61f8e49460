// Input that is not a log at all (SPEC §7, the contract's "unusable input"): verifyLog answers
// {ok: false, error} and checks nothing; numbers with a fraction are no integers, even 1.0.

import assert from "node:assert/strict";
import test from "node:test";
import { MAX_BYTES, canonicalJSON, parseStrictJSON, pythonFloatRepr, verifyLog } from "../../api/static/verify.js";
import { SPEC_PRIVATE_KEY, failing, resign, signer, vector } from "./helpers.mjs";

const LOG_TEXT = JSON.stringify(vector("log_short.json"), null, 1); // ("key": value, one a line)
const nested = (depth) => "[".repeat(depth) + "]".repeat(depth);

async function assertUnusable(input, pattern, what) {
  const r = await verifyLog(input);
  assert.equal(r.ok, false, what);
  assert.match(r.error || "", pattern, what);
  assert.deepEqual(r.checks, [], what);
}

test("a duplicate key anywhere is unusable (JSON.parse would keep the last one)", async () => {
  const forged = LOG_TEXT.replace('"final":', '"final": null, "final":');
  assert.notEqual(forged, LOG_TEXT);
  await assertUnusable(forged, /duplicate key "final"/, "top level");
  await assertUnusable(LOG_TEXT.replace('"roll": 1,', '"roll": 1, "roll": 2,'),
    /duplicate key "roll"/, "in an event");
});

test("NaN, Infinity and -Infinity are not JSON", async () => {
  for (const word of ["NaN", "Infinity", "-Infinity"]) {
    await assertUnusable(LOG_TEXT.replace('"version": 1', `"version": ${word}`), new RegExp(`${word} is not JSON`), word);
  }
});

test("nesting: 64 levels parse, 65 are unusable", async () => {
  assert.deepEqual(parseStrictJSON(nested(64)).length, 1);
  assert.throws(() => parseStrictJSON(nested(65)), /nesting deeper than 64/);
  await assertUnusable(`{"format": ${nested(64)}}`, /nesting deeper than 64/, "65 with the object");
  const sixtyFour = await verifyLog(`{"format": ${nested(63)}}`);
  assert.equal(sixtyFour.error, null);
  assert.deepEqual(failing(sixtyFour), ["log.format"]);
});

test("numbers of 2^53 or more, or of more than 20 digits, are unusable; 2^53 - 1 is a number", async () => {
  assert.equal(parseStrictJSON("[9007199254740991]")[0], 9007199254740991);
  for (const n of ["9007199254740992", "-9007199254740992", "1e16", "1e400", "123456789012345678901", "0.000000000000000000001"]) {
    assert.throws(() => parseStrictJSON(`[${n}]`), /2\^53|20 digits/, n);
  }
  await assertUnusable(LOG_TEXT.replace('"version": 1', '"version": 9007199254740993'), /2\^53/, "version");
});

test("a lone surrogate escape is unusable; an escaped pair is one character", async () => {
  assert.equal(parseStrictJSON('["\\ud83c\\udfb2"]')[0], "\u{1F3B2}");
  for (const s of ['"\\ud800"', '"\\udc00"', '"\\ud800x"', '"\\udc00\\ud800"']) {
    assert.throws(() => parseStrictJSON(`[${s}]`), /lone surrogate/, s);
  }
  await assertUnusable(LOG_TEXT.replace('"spec example client seed"', '"spec \\ud800 seed"'), /lone surrogate/, "client seed");
});

test("bytes that are not UTF-8, a byte order mark, an empty file, a file over 16 MiB are unusable", async () => {
  const bytes = new TextEncoder().encode(LOG_TEXT);
  const bad = new Uint8Array([...bytes.slice(0, 20), 0xff, ...bytes.slice(20)]);
  await assertUnusable(bad, /not UTF-8/, "0xff");
  await assertUnusable(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]), /not JSON/, "BOM");
  await assertUnusable("", /empty/, "empty");
  await assertUnusable(" \n", /empty/, "white space");
  await assertUnusable(new Uint8Array(MAX_BYTES + 1).fill(0x20), /16 MiB/, "over 16 MiB");
  await assertUnusable(LOG_TEXT + " ".repeat(MAX_BYTES), /16 MiB/, "text over 16 MiB");
});

test("JSON that is not an object, or not JSON at all, is unusable", async () => {
  for (const [text, pattern] of [["[]", /an array/], ["null", /null/], ["3", /a number/], ['"log"', /a string/],
    ["{'a': 1}", /not JSON/], ['{"a": 1,}', /not JSON/], ['{"a": 1} x', /extra data/], ['{"a": "tab\there"}', /control/],
    ['{"a": 01}', /not JSON/], ['{"a": .5}', /not JSON/], ['{"a": tru}', /not JSON/]]) {
    await assertUnusable(text, pattern, text);
  }
  await assertUnusable({ format: "fairdice-log", version: NaN }, /NaN/, "a parsed object holding NaN");
  await assertUnusable(undefined, /not JSON/, "undefined");
});

test("a bad receipt or trusted key is unusable input, not a failed check", async () => {
  const receipt = { game_id: "spec-example-1", seat: null, commitment: "ab".repeat(32), client_seed: "x" };
  for (const [bad, pattern] of [[{ ...receipt, seat: "0" }, /seat/], [{ ...receipt, commitment: "AB".repeat(32) }, /commitment/],
    [{ ...receipt, extra: 1 }, /extra: no such field/], [(({ client_seed, ...r }) => r)(receipt), /client_seed: missing/],
    ['{"game_id": "a", "game_id": "b"}', /duplicate key/], [[receipt], /JSON object/]]) {
    const r = await verifyLog(LOG_TEXT, { receipt: bad });
    assert.equal(r.ok, false);
    assert.match(r.error || "", /^receipt: /);
    assert.match(r.error, pattern);
  }
  const r = await verifyLog(LOG_TEXT, { trustedKeys: ["not a key"] });
  assert.match(r.error || "", /trustedKeys\[0\]/);
});

test("a number written with a fraction or an exponent is no integer: 1.0 fails log.format", async () => {
  const s = await signer(SPEC_PRIVATE_KEY);
  const doc = await resign(parseStrictJSON(LOG_TEXT.replace('"version": 1', '"version": 1.0')), s);
  assert.match(canonicalJSON(doc), /"version":1\.0/);
  const r = await verifyLog(canonicalJSON(doc));
  assert.deepEqual(failing(r), ["log.format"]);
  assert.deepEqual(r.failures[0].field, "version");
  const turn = await resign(parseStrictJSON(LOG_TEXT.replace('"turn": 1,', '"turn": 1e0,')), s);
  const rt = await verifyLog(canonicalJSON(turn));
  assert.deepEqual(failing(rt), ["log.format"]);
  assert.equal(rt.statuses["sig.final"], "pass", "signed over Python's canonical JSON of the float");
});

test("floats are written as Python's repr (the bytes a re-signing operator signs)", () => {
  const cases = [[1, "1.0"], [1e-5, "1e-05"], [0.0001, "0.0001"], [123.456, "123.456"], [1.5e-10, "1.5e-10"],
    [-0, "-0.0"], [1e15, "1000000000000000.0"], [9e15, "9000000000000000.0"], [0.1, "0.1"], [2.5, "2.5"],
    [12345678901234.5, "12345678901234.5"], [5e-324, "5e-324"], [1.7976931348623157e308, "1.7976931348623157e+308"]];
  for (const [x, repr] of cases) assert.equal(pythonFloatRepr(x), repr, String(x)); // (Python 3.11's repr)
});
