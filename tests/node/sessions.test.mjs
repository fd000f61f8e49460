// api/static/verify/sessions.js held to SPEC §10's vectors (tests/vectors/sessions.json) and to the adversarial
// corpus of session logs (tests/vectors/forged_sessions/, made by tests/support/forge_sessions.py), under Node.

import assert from "node:assert/strict";
import test from "node:test";
import { hmacKey } from "../../api/static/verify.js";
import { SESSION_CHECKS, parseNotation, sessionDie, verifySessionLog } from "../../api/static/verify/sessions.js";
import { readJSONFile, vector } from "./helpers.mjs";

const V = vector("sessions.json");

test("every die vector of §8.10 re-derives", async () => {
  for (const d of V.dice) {
    const key = await hmacKey(d.server_seed);
    assert.equal(await sessionDie(key, d.session_id, d.client_seed, d.nonce, d.index, d.sides), d.face, `M ${d.sides}`);
  }
});

test("the notation's examples parse, and its refusals carry the codes of §10.4", () => {
  for (const v of V.notation.valid) {
    const s = parseNotation(v.text);
    assert.deepEqual([s.count, s.sides, s.keep === null ? null : `${s.keepMode}${s.keep}`, s.modifier],
      [v.count, v.sides, v.keep, v.modifier], v.text);
  }
  for (const v of V.notation.invalid) assert.equal(parseNotation(v.text), v.code, JSON.stringify(v.text));
});

test("the spec session verifies, with its receipts, and says pair 0 was not signed by the app", async () => {
  const s = V.session;
  const r = await verifySessionLog(s.log, { trustedKeys: [s.public_key], receipts: s.receipts.map((x) => x.receipt) });
  assert.ok(r.ok, JSON.stringify(r.failures));
  assert.equal(r.checks["session.receipt"], "pass");
  assert.deepEqual(r.notes.map((n) => n.code), ["unsigned_pairs"]);
  assert.deepEqual(r.notes[0].pairs, [0]);
  const withKey = await verifySessionLog(s.log, { trustedKeys: [s.public_key], appKey: s.app_key });
  assert.deepEqual(withKey.failures.map((f) => [f.check, f.event, f.field]), [["session.app_signature", 0, "app_key"]]);
});

const INDEX = readJSONFile("tests", "vectors", "forged_sessions", "index.json");

for (const c of INDEX.cases) {
  test(`forged session ${c.name}: ${c.verdict}${c.check ? ` (${c.check})` : ""}`, async () => {
    const doc = readJSONFile("tests", "vectors", "forged_sessions", c.file);
    const r = await verifySessionLog(doc, { trustedKeys: c.trusted_keys, appKey: c.app_key, receipts: c.session_receipts });
    assert.equal(r.ok, c.verdict === "ok", `${c.what}: ${JSON.stringify(r.failures)}`);
    if (c.verdict === "fail") assert.ok(r.failures.some((f) => f.check === c.check), `${c.what}: ${JSON.stringify(r.failures)}`);
  });
}

test("the corpus exercises every session check", () => {
  assert.deepEqual(new Set(INDEX.cases.filter((c) => c.verdict === "fail").map((c) => c.check)), new Set(SESSION_CHECKS));
});
