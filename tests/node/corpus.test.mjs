// verify.js held to the shared adversarial corpus, tests/vectors/forged/ (made by tests/support/forge.py):
// every case gets its verdict, and a "fail" case lists its check among the failures.
//
// The one allowance is SPEC's for the browser: the optimal bot's decisions are not checked here, so a
// log with an optimal bot is "not fully verified here" (ok null, bot.decision "unchecked"), never
// "✓" -- and a forgery that only the optimal policy could catch is not caught here either, which
// the page says by sending the player to fairdice-verify.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { verifyLog } from "../../api/static/verify.js";
import { REPO, VECTORS, failing } from "./helpers.mjs";

const DIR = join(VECTORS, "forged");
const INDEX = join(DIR, "index.json");
const FORGE = join(REPO, "tests", "support", "forge.py");

/** Does the log name an optimal bot seat? (Read leniently: the case may not be a log at all.) */
function hasOptimalBot(bytes) {
  try {
    const seats = JSON.parse(new TextDecoder().decode(bytes)).header.seats;
    return seats.some((s) => s.type === "bot" && s.bot && s.bot.id === "optimal");
  } catch {
    return false;
  }
}

async function checkCase(c) {
  const bytes = readFileSync(join(DIR, c.file));
  const r = await verifyLog(bytes, {
    trustedKeys: c.trusted_keys, receipt: c.receipt, moveReceipts: c.move_receipts ?? null, allowUnsigned: c.allow_unsigned,
  });
  const said = JSON.stringify({ error: r.error, failures: r.failures.slice(0, 4), statuses: r.statuses });
  if (c.verdict === "error") {
    assert.equal(r.ok, false, said);
    assert.ok(r.error, `an error, not a verdict: ${said}`);
    return;
  }
  assert.equal(r.error, null, said);
  const optimal = hasOptimalBot(bytes);
  if (c.verdict === "ok") {
    assert.equal(r.ok, optimal ? null : true, said);
    if (optimal) assert.equal(r.statuses["bot.decision"], "unchecked");
    return;
  }
  assert.notEqual(r.ok, true, `a forgery shown as verified: ${said}`);
  if (optimal && c.check === "bot.decision" && r.ok === null) {
    assert.equal(r.statuses["bot.decision"], "unchecked", said); // only the optimal policy can tell: fairdice-verify
    return;
  }
  assert.equal(r.ok, false, said);
  assert.ok(failing(r).includes(c.check), `${c.check} must be among the failures: ${said}`);
}

if (existsSync(INDEX)) {
  const index = JSON.parse(readFileSync(INDEX, "utf8"));
  test("the corpus has cases of every verdict", () => {
    const verdicts = new Set(index.cases.map((c) => c.verdict));
    assert.deepEqual([...verdicts].sort(), ["error", "fail", "ok"]);
  });
  // (an audit case, two logs audited together, is fairdice-verify --audit's: verify.js checks one log at a time)
  for (const c of index.cases.filter((k) => !k.audit_with)) test(`corpus ${c.verdict}: ${c.name}`, () => checkCase(c));
} else {
  // Until tests/support/forge.py exists there is no corpus to run; once it does, a missing corpus is a failure.
  test("the forged corpus tests/vectors/forged/index.json exists", { skip: existsSync(FORGE) ? false : "tests/support/forge.py is not written yet" },
    () => assert.fail("tests/vectors/forged/index.json is missing: run `python tests/support/forge.py`"));
}
