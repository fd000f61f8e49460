// Input that is not a log at all gets a stable, machine-readable reason (verify.js's UNUSABLE_REASONS), so that
// the page can say in the player's language what the file is: every code documented at the top of verify.js,
// reached by the inputs it names, given to every "error" case of the forged corpus as its description says,
// and worded by both catalogues.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { MAX_BYTES, UNUSABLE_REASONS, verifyLog } from "../../api/static/verify.js";
import { notALog } from "../../api/static/verification.js";
import en from "../../api/static/i18n/en.js";
import zh from "../../api/static/i18n/zh.js";
import { REPO, VECTORS, vector } from "./helpers.mjs";

const LOG_TEXT = JSON.stringify(vector("log_short.json"), null, 1);
const RECEIPT = { game_id: "spec-example-1", seat: null, commitment: "ab".repeat(32), client_seed: "x" };

// What each kind of input is, from SPEC §7's list of unusable input (expected values written from that list,
// not from verify.js): [what, input, options, reason].
const INPUTS = [
  ["an empty file", "", {}, "empty"],
  ["white space only", " \n\t", {}, "empty"],
  ["bytes that are not UTF-8", new Uint8Array([0x7b, 0xff, 0x7d]), {}, "not_utf8"],
  ["a file over 16 MiB", new Uint8Array(MAX_BYTES + 1).fill(0x20), {}, "too_large"],
  ["text over 16 MiB", LOG_TEXT + " ".repeat(MAX_BYTES), {}, "too_large"],
  ["single quotes", "{'format': 1}", {}, "not_json"],
  ["a byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), {}, "not_json"],
  ["trailing data", '{"a": 1} x', {}, "not_json"],
  ["a value JSON cannot hold", { format: "fairdice-log", version: () => 1 }, {}, "not_json"],
  ["NaN", '{"a": NaN}', {}, "nan_or_infinity"],
  ["-Infinity", '{"a": -Infinity}', {}, "nan_or_infinity"],
  ["a parsed NaN", { format: "fairdice-log", version: NaN }, {}, "nan_or_infinity"],
  ["a duplicate key", '{"a": 1, "a": 2}', {}, "duplicate_key"],
  ["2^53", '{"a": 9007199254740992}', {}, "number_out_of_range"],
  ["21 digits", '{"a": 1.00000000000000000001}', {}, "number_out_of_range"],
  ["65 levels", `{"a": ${"[".repeat(64)}${"]".repeat(64)}}`, {}, "nesting_too_deep"],
  ["a lone surrogate escape", '{"a": "\\ud800"}', {}, "lone_surrogate"],
  ["an array", "[]", {}, "not_an_object"],
  ["null", "null", {}, "not_an_object"],
  ["a receipt without its commitment", LOG_TEXT, { receipt: (({ commitment, ...r }) => r)(RECEIPT) }, "bad_receipt"],
  ["a receipt with a duplicate key", LOG_TEXT, { receipt: '{"game_id": "a", "game_id": "b"}' }, "bad_receipt"],
  ["move receipts that are an object", LOG_TEXT, { moveReceipts: { receipts: [] } }, "bad_move_receipts"],
  ["a trusted key that is not hex", LOG_TEXT, { trustedKeys: ["not a key"] }, "bad_trusted_key"],
  ["an optimal table that is not the published one", LOG_TEXT, { tables: { yacht: new Uint8Array([1, 2, 3]) } }, "bad_table"],
];

test("every kind of unusable input gets its reason, with an English message and no checks", async () => {
  for (const [what, input, options, reason] of INPUTS) {
    const r = await verifyLog(input, options);
    assert.equal(r.ok, false, what);
    assert.equal(r.reason, reason, `${what}: ${r.error}`);
    assert.ok(typeof r.error === "string" && r.error.length > 3, what);
    assert.deepEqual(r.checks, [], what);
  }
  const reached = new Set(INPUTS.map((x) => x[3]));
  assert.deepEqual([...reached].sort(), Object.keys(UNUSABLE_REASONS).sort(), "an input for every reason");
});

test("a log, verified or failed, has no reason", async () => {
  const good = await verifyLog(LOG_TEXT);
  assert.equal(good.reason, null);
  const bad = await verifyLog(LOG_TEXT.replace('"format": "fairdice-log"', '"format": "fairdice-log-2"'));
  assert.equal(bad.ok, false);
  assert.equal(bad.reason, null);
  assert.equal(bad.error, null);
});

test("every reason is documented at the top of verify.js", () => {
  const source = readFileSync(join(REPO, "api", "static", "verify.js"), "utf8");
  const head = source.slice(0, source.search(/^[^/\n]/m)); // the leading comment
  for (const reason of Object.keys(UNUSABLE_REASONS)) {
    assert.match(head, new RegExp(`^//\\s+${reason}\\s+\\S`, "m"), `${reason} is not documented at the top of verify.js`);
  }
});

test("the page classifies by the reason, and both catalogues word every reason", () => {
  for (const reason of [...Object.keys(UNUSABLE_REASONS), "not_a_log", "is_receipt", "unusable"]) {
    for (const [lang, catalogue] of [["en", en], ["zh", zh]]) {
      assert.equal(typeof catalogue[`notLog.${reason}`], "string", `${lang} has no notLog.${reason}`);
    }
    assert.notEqual(en[`notLog.${reason}`], zh[`notLog.${reason}`], reason);
  }
  // the page reads the code, whatever the English says
  const report = { error: "duplicate key \"x\" (at character 3)", reason: "nesting_too_deep", document: null };
  assert.deepEqual(notALog(report), { reason: "nesting_too_deep", detail: report.error });
  assert.equal(notALog({ error: "something new", reason: undefined }).reason, "unusable");
  assert.equal(notALog({ error: null, document: { format: "fairdice-receipt" } }).reason, "is_receipt");
  assert.equal(notALog({ error: null, document: { name: "a shopping list" } }).reason, "not_a_log");
});

// The corpus's "error" cases, by name, and the reason each must get: from the case's own description of what
// the operator did ("what" in index.json). Every error case must be named here, and every rule must match.
const CORPUS_REASONS = [
  [/^receipt-/, "bad_receipt"], // "a genuine log with an unusable receipt (...)"
  [/^v2-move-receipts-/, "bad_move_receipts"], // "a genuine log with unusable move receipts (...)"
  [/^duplicate-key-/, "duplicate_key"],
  [/^not-an-object-/, "not_an_object"],
  [/^not-json-(empty|blank)$/, "empty"], // "an empty file", "white space only"
  [/^not-json-/, "not_json"], // truncated, trailing garbage, two documents, a trailing comma, single quotes, a comment
  [/^hostile-(nan|infinity|minus-infinity)$/, "nan_or_infinity"],
  [/^hostile-(1e400|two-to-the-53|minus-two-to-the-53|huge-integer|too-many-digits)$/, "number_out_of_range"],
  [/^hostile-nested-/, "nesting_too_deep"],
  [/^hostile-(lone-high-surrogate|lone-low-surrogate|reversed-surrogates)$/, "lone_surrogate"],
  [/^hostile-raw-control-character$/, "not_json"], // an unescaped U+0001 in a string
  [/^hostile-(invalid-utf8|overlong-utf8|cesu-surrogate|utf16)$/, "not_utf8"],
];

const INDEX = join(VECTORS, "forged", "index.json");

test("every error case of the forged corpus gets the reason its description gives",
  { skip: existsSync(INDEX) ? false : "tests/vectors/forged/index.json is missing (corpus.test.mjs says so)" }, async () => {
    const errors = JSON.parse(readFileSync(INDEX, "utf8")).cases.filter((c) => c.verdict === "error");
    assert.ok(errors.length >= 40, errors.length);
    const used = new Set();
    for (const c of errors) {
      const rule = CORPUS_REASONS.find(([pattern]) => pattern.test(c.name));
      assert.ok(rule, `no expected reason for the corpus case ${c.name} (${c.what}): add one here`);
      used.add(rule);
      const r = await verifyLog(readFileSync(join(VECTORS, "forged", c.file)), {
        trustedKeys: c.trusted_keys, receipt: c.receipt, moveReceipts: c.move_receipts ?? null, allowUnsigned: c.allow_unsigned,
      });
      assert.equal(r.ok, false, c.name);
      assert.equal(r.reason, rule[1], `${c.name} (${c.what}): ${r.error}`);
      assert.equal(notALog(r).reason, rule[1], c.name);
    }
    assert.equal(used.size, CORPUS_REASONS.length, "a rule that no corpus case matches");
  });
