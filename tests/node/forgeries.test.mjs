// Logs forged from SPEC §8.4's game by an operator who holds the key and re-signs, each with the
// verdict and the check SPEC §7 calls for. (The shared corpus, tests/vectors/forged/, has more:
// corpus.test.mjs; tests/node/test_verify_js.py compares verify.js with fairdice-verify on many more.)

import assert from "node:assert/strict";
import test from "node:test";
import { Deriver, canonicalJSON, hmacKey, verifyLog } from "../../api/static/verify.js";
import { OTHER_PRIVATE_KEY, SPEC_PRIVATE_KEY, clone, failing, resign, signer, totalsAfter, vector } from "./helpers.mjs";

const GENUINE = vector("log_short.json");
const spec = await signer(SPEC_PRIVATE_KEY);
const other = await signer(OTHER_PRIVATE_KEY);
const deriver = new Deriver(await hmacKey(GENUINE.final.server_seed), GENUINE.header.game_id, ["spec example client seed"]);

/** A roll event labelled (turn, roll) whose dice do re-derive for that label: only its place is wrong. */
async function derivedRoll(turn, roll, hold = [], previous = null) {
  const dice = await deriver.roll(0, turn, roll);
  for (const p of hold) dice[p] = previous[p];
  return { type: "roll", seat: 0, turn, roll, hold, dice };
}

/** The final block of the game the events show, counted here from the score events. */
function finalOf(events, status) {
  return { status, server_seed: GENUINE.final.server_seed, totals: totalsAfter(1, events), winner: status === "finished" ? 0 : null,
    draw: false };
}

function abandonedAfter(doc, n) {
  doc.events = [...doc.events.slice(0, n), { type: "abandon", seat: null }];
  doc.final = finalOf(doc.events, "abandoned");
}

const receiptOf = (doc) => ({
  format: "fairdice-receipt", version: 1, game_id: doc.header.game_id, seat: null, commitment: doc.header.commitment,
  client_seed: "spec example client seed", header: doc.header, commitment_signature: doc.commitment_signature,
  public_key: doc.header.public_key,
});

// name, what the operator did to the events or fields (then re-signed), the verdict, a check that must fail
const RESIGNED = [
  ["a turn relabelled (its dice derived for the new label)", async (d) => {
    const turn2 = d.events.slice(6, 10);
    d.events.splice(6, 4, ...[await derivedRoll(7, 1), await derivedRoll(7, 2), await derivedRoll(7, 3),
      { ...turn2[3], turn: 7 }]);
  }, false, "turn.order"],
  ["a fourth roll in a turn, its dice derived", async (d) => {
    d.events.splice(5, 0, await derivedRoll(1, 4));
  }, false, "roll.count"],
  ["rolls 4 to 20 in one turn, their dice derived", async (d) => {
    const extra = [];
    for (let r = 4; r <= 20; r++) extra.push(await derivedRoll(1, r));
    d.events.splice(5, 0, ...extra);
  }, false, "roll.count"],
  ["roll 2 left out (labels 1, 3)", (d) => { d.events.splice(3, 1); }, false, "roll.count"],
  ["a box filled without a roll", (d) => { d.events.splice(6, 3); }, false, "roll.count"],
  ["a roll and its score swapped", (d) => { [d.events[4], d.events[5]] = [d.events[5], d.events[4]]; }, false, "turn.order"],
  ["a hold on the first roll", (d) => { d.events[2].hold = [0]; }, false, "roll.hold"],
  ["an unsorted hold", (d) => { d.events[4].hold = [4, 2]; }, false, "roll.hold"],
  ["a hold outside 0..4", (d) => { d.events[4].hold = [2, 5]; }, false, "roll.hold"],
  ["one die changed", (d) => { d.events[3].dice[0] = d.events[3].dice[0] % 6 + 1; }, false, "roll.dice", ["roll.dice"]],
  ["points changed", (d) => { d.events[5].points += 1; }, false, "score.points", ["score.points"]],
  ["a box filled twice", (d) => { d.events[9].category = "choice"; }, false, "score.category"],
  ["a category of another rule set", (d) => { d.events[5].category = "chance"; }, false, "score.category"],
  ["a lower box while upper boxes are open (upper_first)", (d) => { d.header.upper_first = true; }, false, "score.category"],
  ["an event after the last box", async (d) => { d.events.push(await derivedRoll(13, 1)); }, false, "game.complete"],
  ["finished with a turn missing", (d) => { d.events.splice(-4); }, false, "game.complete"],
  ["an abandoned game without its abandon event", (d) => {
    abandonedAfter(d, 14);
    d.events.pop();
  }, false, "game.complete"],
  ["an event after the abandon event", async (d) => {
    abandonedAfter(d, 14);
    d.events.push(await derivedRoll(4, 1));
  }, false, "game.complete"],
  ["the winner changed", (d) => { d.final.winner = null; }, false, "final.winner"],
  ["a draw claimed", (d) => { d.final.draw = true; }, false, "final.winner"],
  ["a total changed", (d) => { d.final.totals[0].upper += 1; }, false, "final.totals", ["final.totals"]],
  ["the server seed changed", (d) => { d.final.server_seed = "00".repeat(32); }, false, "seed.commitment"],
  ["the client seed changed", (d) => { d.events[0].client_seed = "another seed"; }, false, "roll.dice"],
  ["a control character in the client seed", (d) => { d.events[0].client_seed = "tab\there"; }, false, "client_seed.valid"],
  ["a second client seed", (d) => { d.events.splice(1, 0, clone(d.events[0])); }, false, "client_seed.valid"],
  ["a client seed from a seat that has none", (d) => { d.events[0].seat = 0; }, false, "client_seed.valid"],
  ["play started before the client seed", (d) => { [d.events[0], d.events[1]] = [d.events[1], d.events[0]]; }, false, "client_seed.valid"],
  ["no start event", (d) => { d.events.splice(1, 1); }, false, "turn.order"],
  ["the first player changed", (d) => { d.events[1].first = 1; }, false, "log.format"],
  ["a roll-off for a fixed first player", (d) => { d.events[1].rolloff = [[{ seat: 0, dice: [1, 2, 3, 4, 5] }]]; }, false, "start.first"],
  ["a bot's hash changed", (d) => { d.header.seats[0].bot.hash = "00".repeat(32); }, false, "bot.identity"],
  ["a bot's version changed", (d) => { d.header.seats[0].bot.version = "2"; }, false, "bot.identity"],
  ["an unknown bot", (d) => { d.header.seats[0].bot.id = "lucky"; }, false, "bot.identity"],
  ["the key id is not the key's", (d) => {
    d.header.public_key = spec.publicKey;
    d.header.key_id = "0".repeat(16);
  }, false, "log.key", ["log.key", "sig.commitment", "sig.final"], { keyFields: false }], // (no trusted key has that id: SPEC §7)
  ["an extra field in an event", (d) => { d.events[2].note = "x"; }, false, "log.format"],
  ["an extra field in the header", (d) => { d.header.note = "x"; }, false, "log.format"],
  ["a seat name with a zero width space", (d) => { d.header.seats[0].name = "a\u200bb"; }, false, "log.format"],
  ["a game in progress (no final block, no signature)", (d) => { d.final = null; }, false, "seed.revealed"],
  // no forgery: a legal game the core would write the same way
  ["abandoned by the operator after turn 3", (d) => { abandonedAfter(d, 14); }, true, null],
  ["abandoned before the client seed", (d) => { abandonedAfter(d, 0); }, true, null],
  ["abandoned after the last client seed, before the start (SPEC §4.3)", (d) => { abandonedAfter(d, 1); }, false, "turn.order"],
  ["first: random with one seat (no roll-off: SPEC §4.2)", (d) => { d.header.first = "random"; }, true, null],
  // the optimal bot's decisions are not checked here: not fully verified, never "✓"
  ["the bot claimed to be the optimal bot", async (d) => {
    d.header.seats[0].bot = { id: "optimal", version: "1", hash: "228401d71ac12faf2b0e1ba687cdc249ac811b23fbb8d7299e73ca950988d1f0" };
  }, null, null],
];

for (const [name, edit, verdict, check, exactly, signing] of RESIGNED) {
  test(`re-signed: ${name}`, async () => {
    const doc = clone(GENUINE);
    await edit(doc);
    const r = await verifyLog(canonicalJSON(await resign(doc, spec, signing)), { trustedKeys: [spec.publicKey] });
    assert.equal(r.error, null);
    assert.equal(r.ok, verdict, JSON.stringify(r.failures.slice(0, 3)));
    if (check) assert.ok(failing(r).includes(check), `${check} in ${failing(r)}`);
    if (exactly) assert.deepEqual(failing(r), exactly);
    assert.ok(!failing(r).some((c) => c.startsWith("sig.") || c === "log.key") || check === "log.key", "the signatures hold");
    if (verdict === null) {
      assert.equal(r.statuses["bot.decision"], "unchecked");
      assert.match(r.checks.find((c) => c.id === "bot.decision").detail, /fairdice-verify/);
    }
  });
}

test("a changed log with its old signatures fails sig.final, and only the signature check says so", async () => {
  const doc = clone(GENUINE);
  doc.final.totals[0].upper += 1;
  doc.final.totals[0].lower -= 1;
  const r = await verifyLog(doc, { trustedKeys: [spec.publicKey] });
  assert.deepEqual(failing(r), ["final.totals", "sig.final"]);
});

test("signatures are required unless allowUnsigned, which says what an unsigned log does not prove", async () => {
  const { signature, ...noFinal } = clone(GENUINE);
  const { commitment_signature: c, signature: s, ...neither } = clone(GENUINE);
  const noHeader = { ...clone(neither), signature: await spec.sign(canonicalJSON(neither)) };
  assert.deepEqual(failing(await verifyLog(noFinal)), ["sig.final"]);
  assert.deepEqual(failing(await verifyLog(noHeader)), ["sig.commitment"]);
  assert.deepEqual(failing(await verifyLog(neither)), ["sig.commitment", "sig.final"]);
  for (const doc of [noFinal, noHeader, neither]) {
    const r = await verifyLog(doc, { allowUnsigned: true });
    assert.equal(r.ok, true);
    assert.equal(r.signed, false);
  }
  const r = await verifyLog(neither, { allowUnsigned: true });
  assert.deepEqual([r.statuses["sig.commitment"], r.statuses["sig.final"]], ["skip", "skip"]);
  assert.match(r.checks.find((x) => x.id === "sig.final").detail, /nothing shows that the server sent this log/);
  const again = await verifyLog(await resign({ ...clone(GENUINE), events: GENUINE.events.slice(0, 10) }, spec), { allowUnsigned: true });
  assert.ok(failing(again).includes("game.complete"), "a signature that is there is still checked, and the replay too");
});

test("a log signed by another key: log.key fails against the trusted key; without one it is only self-consistent", async () => {
  const doc = await resign(GENUINE, other);
  const r = await verifyLog(doc, { trustedKeys: [spec.publicKey] });
  assert.deepEqual(failing(r), ["log.key", "sig.commitment", "sig.final"]);
  const self = await verifyLog(doc);
  assert.equal(self.ok, true);
  assert.equal(self.trusted, false);
  assert.match(self.checks.find((x) => x.id === "log.key").detail, /who made this log was not checked/);
});

test("the receipt ties the log to what the player saw: game id, commitment, client seed, header, key", async () => {
  const ok = await verifyLog(GENUINE, { receipt: receiptOf(GENUINE) });
  assert.equal(ok.ok, true);
  assert.equal(ok.statuses["receipt.match"], "pass");
  assert.equal(ok.trusted, true, "the receipt's key is trusted");
  const minimal = { game_id: "spec-example-1", seat: null, commitment: GENUINE.header.commitment, client_seed: "spec example client seed" };
  assert.equal((await verifyLog(GENUINE, { receipt: JSON.stringify(minimal) })).ok, true, "a receipt given as text");
  for (const [what, change, fieldName] of [
    ["another client seed", { client_seed: "what I sent" }, "client_seed"],
    ["another seat", { seat: 0 }, "client_seed"],
    ["another commitment", { commitment: "ab".repeat(32) }, "commitment"],
    ["another game", { game_id: "spec-example-2" }, "game_id"],
    ["another header", { header: { ...GENUINE.header, seats: [{ ...GENUINE.header.seats[0], name: "ann" }] } }, "header.seats[0].name"],
  ]) {
    const r = await verifyLog(GENUINE, { receipt: { ...minimal, ...change } });
    assert.equal(r.ok, false, what);
    assert.deepEqual(failing(r), ["receipt.match"], what);
    assert.ok(r.failures.some((f) => f.field === fieldName), `${what}: ${JSON.stringify(r.failures)}`);
  }
  // the operator re-signs the whole game with another key: the receipt's key (the one the player saw) catches it
  const resigned = await resign(GENUINE, other);
  const r = await verifyLog(resigned, { receipt: receiptOf(GENUINE) });
  assert.ok(failing(r).includes("receipt.match") && failing(r).includes("log.key"), failing(r).join());
  // a receipt whose own signature does not hold is no evidence at all
  const bad = await verifyLog(GENUINE, { receipt: { ...receiptOf(GENUINE), commitment_signature: "00".repeat(64) } });
  assert.match(bad.error || "", /^receipt: commitment_signature/);
});

test("the page's report: every roll and box listed, the bad ones marked at their event", async () => {
  const doc = clone(GENUINE);
  doc.events[7].dice[1] = doc.events[7].dice[1] % 6 + 1; // a held die of roll 2 (turn 2): roll 3 holds it too
  const r = await verifyLog(doc);
  assert.deepEqual(r.rolls.filter((x) => !x.ok).map((x) => x.index), [7]);
  assert.match(r.rolls.find((x) => x.index === 7).detail, /dice\[1\]/);
  assert.equal(r.scores.length, 12);
  assert.ok(r.scores.every((x) => x.ok));
  let calls = 0;
  await verifyLog(GENUINE, { onProgress: (done, total) => { calls += 1; assert.ok(done <= total && total === 34); } });
  assert.equal(calls, 34);
});

test("a browser without Ed25519: nothing failed, the signatures are not checked, so the verdict is null, never true", async () => {
  const subtle = globalThis.crypto.subtle;
  const importKey = subtle.importKey;
  subtle.importKey = function (format, key, algorithm, ...rest) {
    if (algorithm && algorithm.name === "Ed25519") return Promise.reject(new DOMException("Ed25519", "NotSupportedError"));
    return importKey.call(this, format, key, algorithm, ...rest);
  };
  try {
    const r = await verifyLog(GENUINE);
    assert.equal(r.ok, null);
    assert.deepEqual([r.statuses["sig.commitment"], r.statuses["sig.final"]], ["unchecked", "unchecked"]);
    assert.match(r.checks.find((c) => c.id === "sig.final").detail, /cannot check Ed25519/);
    const forged = clone(GENUINE);
    forged.events[3].dice[0] = forged.events[3].dice[0] % 6 + 1;
    assert.equal((await verifyLog(forged)).ok, false, "the replay still fails a forgery");
  } finally {
    subtle.importKey = importKey;
  }
});
