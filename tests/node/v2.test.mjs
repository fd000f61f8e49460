// Log format version 2 (SPEC §5) in verify.js: commitments to the client seeds of two or more humans
// (client_seed.commit), who may abandon and why (game.abandon), and the server's signed move receipts
// (receipt.chain). The genuine logs are the corpus's (tests/support/forge.py: played by the Python core); the forgeries
// are made here by an operator who holds the corpus's signing key and re-signs, each with the verdict and the
// failing checks the contract calls for.

import assert from "node:assert/strict";
import test from "node:test";
import {
  bytesToHex, canonicalJSON, chainDigests, moveReceiptBytes, seedCommitment, verifyLog, verifyMoveReceipts,
} from "../../api/static/verify.js";
import {
  OTHER_PRIVATE_KEY, clone, corpusIndex, corpusLog, corpusSigner, failing, moveReceipt as signedReceipt, resign, signer, vector,
} from "./helpers.mjs";

const INDEX = corpusIndex();
const THREE = corpusLog("genuine-v2-classic13-ann-bob-ev"); // ann, bob and the ev bot; abandoned by the seat to play
const TWO = corpusLog("genuine-v2-yacht-ann-vs-bob"); // ann and bob, finished
const operator = await corpusSigner("the operator's signing key");
const other = await signer(OTHER_PRIVATE_KEY);
const trustedKeys = [operator.publicKey];

const at = (doc, type) => doc.events.findIndex((e) => e.type === type);

async function verifyResigned(doc, options = {}) {
  return verifyLog(canonicalJSON(await resign(doc, operator)), { trustedKeys, ...options });
}

test("the corpus's logs are signed by the operator key this file derives", () => {
  assert.equal(operator.publicKey, INDEX.server_public_key);
  assert.equal(THREE.header.public_key, operator.publicKey);
});

test("a genuine version 2 game of two humans and a bot verifies: commitments opened, the abandon allowed", async () => {
  const r = await verifyLog(THREE, { trustedKeys });
  assert.equal(r.ok, true, JSON.stringify(r.failures));
  assert.equal(r.version, 2);
  assert.equal(r.statuses["client_seed.commit"], "pass");
  assert.equal(r.statuses["game.abandon"], "pass");
  assert.equal(r.statuses["receipt.chain"], "skip");
  const last = THREE.events[THREE.events.length - 1];
  assert.deepEqual(r.abandon, { seat: last.seat, reason: "player" });
  assert.match(r.checks.find((c) => c.id === "game.abandon").detail, new RegExp(`seat ${last.seat} abandoned`));
  assert.match(r.checks.find((c) => c.id === "client_seed.commit").detail, /^2 commitments/);
});

test("a commitment is SHA-256(salt || UTF-8(client seed)): each reveal opens the commitment the core wrote", async () => {
  for (const doc of [TWO, THREE]) {
    const commitments = new Map(doc.events.filter((e) => e.type === "client_seed_commit").map((e) => [e.seat, e.commitment]));
    const reveals = doc.events.filter((e) => e.type === "client_seed");
    assert.equal(reveals.length, 2);
    for (const e of reveals) assert.equal(await seedCommitment(e.salt, e.client_seed), commitments.get(e.seat), e.client_seed);
  }
});

// what the operator changed (then re-signed), the verdict, and exactly the checks that fail
const RESIGNED = [
  ["a reveal with another salt", (d) => { d.events[2].salt = "00".repeat(32); }, false, ["client_seed.commit"]],
  ["a commitment changed", (d) => { d.events[1].commitment = "ab".repeat(32); }, false, ["client_seed.commit"]],
  ["a commitment after the first reveal", (d) => { d.events.splice(2, 0, d.events.splice(0, 1)[0]); }, false, ["client_seed.commit"]],
  ["a second commitment of a seat", (d) => { d.events.splice(2, 0, { ...d.events[1], commitment: "cd".repeat(32) }); }, false,
    ["client_seed.commit"]],
  ["the same commitment twice", (d) => { d.events.splice(2, 0, { ...d.events[1] }); }, false, ["client_seed.commit"]],
  ["a commitment of the bot's seat", (d) => { d.events.splice(2, 0, { ...d.events[1], seat: 2 }); }, false, ["client_seed.commit"]],
  ["a reveal without a salt", (d) => { delete d.events[2].salt; }, false, ["log.format"]],
  ["a commitment in a version 1 log", (d) => { d.version = 1; delete d.header.abandon_timeout; }, false, ["log.format"]],
  ["version 3", (d) => { d.version = 3; }, false, ["log.format"]],
  ["no abandon_timeout in the header", (d) => { delete d.header.abandon_timeout; }, false, ["log.format"]],
  ["an abandon_timeout of 0 (SPEC §5.1: at least 1)", (d) => { d.header.abandon_timeout = 0; }, false, ["log.format"]],
  ["the abandon gives no reason", (d) => { delete d.events[d.events.length - 1].reason; }, false, ["log.format"]],
  ["a seat abandons for a timeout", (d) => { d.events[d.events.length - 1].reason = "timeout"; }, false, ["game.abandon"]],
  ["an abandon reason that does not exist", (d) => { d.events[d.events.length - 1].reason = "bored"; }, false, ["game.abandon"]],
  ["a seat abandons on another's turn", (d) => {
    const e = d.events[d.events.length - 1];
    e.seat = 1 - e.seat;
  }, false, ["game.abandon"]],
  ["the bot's seat abandons", (d) => { d.events[d.events.length - 1].seat = 2; }, false, ["game.abandon"]],
  ["the server abandons as a player would", (d) => { d.events[d.events.length - 1].seat = null; }, false, ["game.abandon"]],
  // no forgery: what the rules allow
  ["the server abandons on its timeout (the log has no clock)", (d) => {
    Object.assign(d.events[d.events.length - 1], { seat: null, reason: "timeout" });
  }, true, []],
  ["the commitments in the other order", (d) => { [d.events[0], d.events[1]] = [d.events[1], d.events[0]]; }, true, []],
  ["the reveals in the other order", (d) => { [d.events[2], d.events[3]] = [d.events[3], d.events[2]]; }, true, []],
  ["another abandon_timeout (nothing derives from it)", (d) => { d.header.abandon_timeout = 60; }, true, []],
];

for (const [name, edit, verdict, exactly] of RESIGNED) {
  test(`version 2, re-signed: ${name}`, async () => {
    const doc = clone(THREE);
    edit(doc);
    const r = await verifyResigned(doc);
    assert.equal(r.error, null);
    assert.equal(r.ok, verdict, JSON.stringify(r.failures.slice(0, 3)));
    assert.deepEqual(failing(r), exactly);
  });
}

test("before the start: a human seat may abandon, the bot's seat may not; a commitment after the start is out of place", async () => {
  const early = (seat) => ({ ...clone(THREE), events: [...THREE.events.slice(0, 3), { type: "abandon", seat, reason: "player" }] });
  const fin = (doc) => ({ ...doc, final: { ...doc.final, totals: doc.final.totals.map((t) => ({ ...t, upper: 0, upper_bonus: 0, lower: 0,
    yahtzee_bonus: 0, total: 0 })) } });
  const human = await verifyResigned(fin(early(1)));
  assert.equal(human.ok, true, JSON.stringify(human.failures));
  const bot = await verifyResigned(fin(early(2)));
  assert.deepEqual(bot.failures.map((f) => [f.check, f.event, f.field]), [["game.abandon", 3, "seat"]]);
  const doc = clone(THREE);
  doc.events.splice(at(doc, "start") + 1, 0, { type: "client_seed_commit", seat: 0, commitment: "ef".repeat(32) });
  const late = await verifyResigned(doc);
  assert.deepEqual(late.failures.map((f) => [f.check, f.field, f.expected.code, String(f.expected)]),
    [["client_seed.commit", "type", "commitments_before_seeds", "every commitment before any client seed"]]);
});

test("a reveal of another seed than the one committed to fails client_seed.commit, whatever else it changes", async () => {
  const doc = clone(TWO);
  doc.events[at(doc, "client_seed")].client_seed += "!";
  const r = await verifyResigned(doc);
  assert.equal(r.ok, false);
  assert.ok(failing(r).includes("client_seed.commit"), failing(r));
  const { found } = r.failures.find((f) => f.check === "client_seed.commit");
  assert.equal(found.code, "seed_and_salt_hash");
  assert.match(found.params.hash, /^[0-9a-f]{64}$/);
  assert.match(String(found), /^a seed and salt hashing to [0-9a-f]{64}$/);
});

test("a version 1 log that stops lists no version 2 check as left unchecked", async () => {
  const doc = clone(vector("log_short.json"));
  doc.events.splice(2, 1); // the first roll left out: the replay stops at roll.count
  const r = await verifyLog(canonicalJSON(doc), { allowUnsigned: true });
  assert.equal(r.ok, false);
  const listed = r.checks.map((c) => c.id);
  for (const id of ["client_seed.commit", "game.abandon", "receipt.chain", "receipt.match"]) assert.ok(!listed.includes(id), id);
});

// ------------------------------------------------------------------ move receipts

/** The move receipt of `doc`'s first n events, signed by `by` (the operator), as the server writes it. */
const moveReceipt = (doc, n, by = operator) => signedReceipt(doc, n, by);

async function receiptsOf(doc, counts, by) {
  return Promise.all(counts.map((n) => moveReceipt(doc, n, by)));
}

const EVERY_N = [...Array(THREE.events.length + 1).keys()];

test("the chain is the one the Python core signed: the corpus's move receipts are the chain of their log", async () => {
  const c = INDEX.cases.find((x) => x.name === "v2-move-receipts-bob");
  const doc = corpusLog(c.file.replace(/\.json$/, ""));
  const digests = await chainDigests(doc.header, doc.events);
  assert.ok(c.move_receipts.length > 5);
  for (const r of c.move_receipts) assert.equal(bytesToHex(digests[r.events]), r.chain, `n = ${r.events}`);
});

test("a receipt after every move (and at creation) holds the log to its history: receipt.chain passes", async () => {
  const receipts = await receiptsOf(THREE, EVERY_N);
  for (const input of [receipts, JSON.stringify(receipts)]) {
    const r = await verifyMoveReceipts(THREE, input, { trustedKeys });
    assert.equal(r.ok, true, JSON.stringify(r.failures));
    assert.equal(r.statuses["receipt.chain"], "pass");
    assert.match(r.checks.find((x) => x.id === "receipt.chain").detail, new RegExp(`^${EVERY_N.length} move receipts`));
  }
  const none = await verifyMoveReceipts(THREE, [], { trustedKeys });
  assert.equal(none.statuses["receipt.chain"], "skip", "no receipt: nothing checked");
  const own = await verifyMoveReceipts(THREE, receipts);
  assert.equal(own.ok, true, "without a trusted key: the log's own key");
  assert.equal(own.trusted, false);
  const rotated = await verifyMoveReceipts(THREE, await receiptsOf(THREE, [3, 9], other), { trustedKeys: [other.publicKey, operator.publicKey] });
  assert.equal(rotated.ok, true, "a receipt by another trusted key");
});

test("a history rewritten after the receipts: every receipt past the change fails, the earlier ones hold", async () => {
  const receipts = await receiptsOf(THREE, EVERY_N);
  const doc = clone(THREE);
  const k = at(doc, "roll") + 1; // the second roll of the first turn: its hold
  doc.events[k].hold = doc.events[k].hold.length ? [] : [0];
  const r = await verifyResigned(doc, { moveReceipts: receipts });
  const chain = r.failures.filter((f) => f.check === "receipt.chain");
  const past = receipts.filter((x) => x.events > k).length;
  assert.equal(chain.length + (r.unlisted["receipt.chain"] || 0), past);
  assert.deepEqual(chain.map((f) => f.field), receipts.filter((x) => x.events > k).slice(0, 10).map((x) => `receipts[${x.events}].chain`));
});

test("each forged receipt fails receipt.chain, and only it, naming the receipt and its field", async () => {
  const n = THREE.events.length;
  const good = await moveReceipt(THREE, 8);
  const beyond = await moveReceipt({ ...THREE, events: [...THREE.events, THREE.events[n - 1]] }, n + 1);
  const ofAnother = await moveReceipt(TWO, 8);
  const cases = [
    ["its chain changed", { ...good, chain: "0".repeat(64) }, "signature"], // (the signature covers the chain)
    ["its event count changed", { ...good, events: 7 }, "signature"],
    ["signed by another key", await moveReceipt(THREE, 8, other), "signature"],
    ["of another game", ofAnother, "game_id"],
    ["more events than the log has", beyond, "events"],
    ["its game id changed", { ...good, game_id: TWO.header.game_id }, "game_id"],
  ];
  for (const [what, bad, fieldName] of cases) {
    const r = await verifyMoveReceipts(THREE, [good, bad], { trustedKeys });
    assert.equal(r.ok, false, what);
    assert.deepEqual(failing(r), ["receipt.chain"], what);
    assert.deepEqual(r.failures.map((f) => f.field), [`receipts[1].${fieldName}`], what);
  }
  const forgedChain = { ...good, chain: bytesToHex((await chainDigests(TWO.header, TWO.events))[8]) };
  forgedChain.signature = await operator.signBytes(moveReceiptBytes(good.game_id, 8, (await chainDigests(TWO.header, TWO.events))[8]));
  const r = await verifyMoveReceipts(THREE, [forgedChain], { trustedKeys });
  assert.deepEqual(r.failures.map((f) => [f.field, f.event]), [["receipts[0].chain", 7]], "a signed chain of another history");
});

test("move receipts that are not receipts are unusable input, not a failed check", async () => {
  const good = await moveReceipt(THREE, 5);
  const { chain, ...noChain } = good;
  for (const [bad, pattern] of [[{ receipts: [good] }, /a JSON array/], [[good, "x"], /receipts\[1\]: a move receipt is a JSON object/],
    [[noChain], /exactly the fields/], [[{ ...good, seat: 1 }], /exactly the fields/], [[{ ...good, events: -1 }], /count of events/],
    [[{ ...good, events: 2 ** 32 }], /count of events/], [[{ ...good, events: "5" }], /count of events/],
    [[{ ...good, chain: good.chain.toUpperCase() }], /chain: expected 64 lowercase hex/],
    [[{ ...good, key_id: "" }], /key_id/], [`[{"game_id": "a", "game_id": "b"}]`, /duplicate key/]]) {
    const r = await verifyMoveReceipts(THREE, bad, { trustedKeys });
    assert.equal(r.ok, false);
    assert.match(r.error || "", /^move receipts: /);
    assert.match(r.error, pattern);
  }
});
