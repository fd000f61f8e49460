// Log format version 3 (SPEC §5.7) in verify.js: players' keys and signed commands (player.signature), the client
// seed commitment over the key, receipts of version 2, abandons that no player signed held to the player's move
// receipts (game.abandon), and one trusted key per signature. The genuine logs are the corpus's (tests/support/forge.py:
// played by the Python core, whose player keys derive from fixed labels); the forgeries are made here by an
// operator who holds the corpus's server key and re-signs, each with the verdict and the failing checks SPEC calls
// for.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import test from "node:test";
import {
  canonicalJSON, chainDigests, ed25519Verify, moveBytes, moveCommand, seedCommitment, verifyLog,
} from "../../api/static/verify.js";
import {
  OTHER_PRIVATE_KEY, clone, corpusLog, corpusSigner, failing, moveReceipt, resign, signer, totalsAfter, vector,
} from "./helpers.mjs";

const ONE = corpusLog("genuine-v3-yacht-ann-vs-greedy"); // ann signs every move, against the greedy bot; finished
const TWO = corpusLog("genuine-v3-classic13-ann-bob-ev"); // ann and bob commit, reveal and sign; abandoned by ann
const KEYLESS = corpusLog("genuine-v3-yacht-ann-unsigned-vs-greedy"); // ann sent no key: her moves are unsigned
const V2 = corpusLog("genuine-v2-classic13-ann-bob-ev"); // a version 2 game of two humans, abandoned by a seat
const operator = await corpusSigner("the operator's signing key");
const players = [await corpusSigner("player key 0"), await corpusSigner("player key 1")];
const other = await signer(OTHER_PRIVATE_KEY);
const trustedKeys = [operator.publicKey];

const humanEvents = (doc, seat) => doc.events.flatMap((e, i) => (e.seat === seat && e.type !== "start" ? [i] : []));
const lastOf = (doc, seat) => humanEvents(doc, seat).at(-1);

async function verifyResigned(doc, options = {}) {
  return verifyLog(canonicalJSON(await resign(doc, operator)), { trustedKeys, ...options });
}

/** The player_signature of event n of `doc` by `by`, over the history before it (SPEC §5.7). */
async function playerSignature(doc, n, by) {
  const digest = (await chainDigests(doc.header, doc.events.slice(0, n)))[n];
  return by.signBytes(moveBytes(doc.header.game_id, n, digest, moveCommand(doc.events[n])));
}

/** `doc` cut after its first k events and abandoned by `abandon` (an event), its totals counted here. */
function abandonedAt(doc, k, abandon) {
  const events = [...doc.events.slice(0, k), abandon];
  return { ...clone(doc), events, final: { ...doc.final, status: "abandoned", winner: null, draw: false,
    totals: totalsAfter(doc.header.seats.length, events) } };
}

/** The index of the first event of ann's (seat 0) turn `turn`: where an abandon on her turn goes. */
const startOfTurn = (doc, turn) => doc.events.findIndex((e) => e.type === "roll" && e.seat === 0 && e.turn === turn && e.roll === 1);

/** The player's receipt of version 2 for `seat` of `doc`, as the page writes it (SPEC §5.5). */
function receiptOf(doc, seat, extra = {}) {
  const seed = doc.events.find((e) => e.type === "client_seed" && e.seat === seat);
  return { format: "fairdice-receipt", version: 2, game_id: doc.header.game_id, seat, commitment: doc.header.commitment,
    client_seed: seed.client_seed, header: doc.header, commitment_signature: doc.commitment_signature,
    public_key: doc.header.public_key, log_version: doc.version, player_key: seed.player_key, ...extra };
}

// ------------------------------------------------------------------ what the core signs

test("the corpus's players' keys are the ones this file derives", () => {
  assert.equal(ONE.events[0].player_key, players[0].publicKey);
  assert.deepEqual(TWO.events.filter((e) => e.type === "client_seed").map((e) => [e.seat, e.player_key]).sort(),
    [[0, players[0].publicKey], [1, players[1].publicKey]]);
});

test("every signature the core wrote is its player's over field(label), the game id, n, h_n and the command", async () => {
  let checked = 0;
  for (const doc of [ONE, TWO]) {
    const digests = await chainDigests(doc.header, doc.events);
    for (const [n, e] of doc.events.entries()) {
      if (!("player_signature" in e)) continue;
      const data = moveBytes(doc.header.game_id, n, digests[n], moveCommand(e));
      assert.equal(await ed25519Verify(players[e.seat].publicKey, e.player_signature, data), true, `event ${n} (${e.type})`);
      checked += 1;
    }
  }
  assert.ok(checked > 50, checked);
  const reveal = TWO.events.find((e) => e.type === "client_seed");
  assert.deepEqual(Object.keys(moveCommand(reveal)).sort(), ["client_seed", "player_key", "salt", "seat", "type"]);
  const roll = ONE.events.find((e) => e.type === "roll");
  assert.deepEqual(Object.keys(moveCommand(roll)).sort(), ["hold", "roll", "seat", "turn", "type"], "not the dice");
});

test("a version 3 commitment is SHA-256(salt || player key || seed): each reveal opens the one the core wrote", async () => {
  const committed = new Map(TWO.events.filter((e) => e.type === "client_seed_commit").map((e) => [e.seat, e.commitment]));
  for (const e of TWO.events.filter((x) => x.type === "client_seed")) {
    assert.equal(await seedCommitment(e.salt, e.client_seed, e.player_key), committed.get(e.seat));
    assert.notEqual(await seedCommitment(e.salt, e.client_seed), committed.get(e.seat), "the key is inside the commitment");
  }
});

// ------------------------------------------------------------------ genuine logs

test("genuine version 3 logs verify: one signature per seat with a key, and nothing said to be unsigned", async () => {
  for (const doc of [ONE, TWO]) {
    const r = await verifyLog(doc, { trustedKeys });
    assert.equal(r.ok, true, JSON.stringify(r.failures.slice(0, 3)));
    assert.equal(r.version, 3);
    assert.equal(r.statuses["player.signature"], "pass");
    assert.deepEqual(r.unsignedSeats, []);
    assert.ok(!r.checks.some((c) => c.id === "player.unsigned"));
  }
  const r = await verifyLog(TWO, { trustedKeys });
  assert.match(r.checks.find((c) => c.id === "player.signature").detail, /^seat\(s\) 0, 1: /);
});

test("moves no player signed are said to be unsigned: a seat without a key, and every human seat of versions 1 and 2", async () => {
  for (const [doc, seats, why] of [[KEYLESS, [0], /sent no key/], [V2, [0, 1], /version 2/], [vector("log_short.json"), [], null]]) {
    const r = await verifyLog(doc, doc === KEYLESS || doc === V2 ? { trustedKeys } : {});
    assert.equal(r.ok, true, JSON.stringify(r.failures.slice(0, 3)));
    const note = r.checks.find((c) => c.id === "player.unsigned");
    if (!seats.length) {
      assert.equal(note, undefined, "a game without human seats has no human move");
      continue;
    }
    assert.deepEqual(r.unsignedSeats, seats);
    assert.equal(note.status, "note");
    assert.match(note.detail, new RegExp(`seat\\(s\\) ${seats.join(", ")} .* could have written them`));
    assert.match(note.detail, why);
  }
  assert.equal((await verifyLog(KEYLESS, { trustedKeys })).statuses["player.signature"], "pass");
});

// ------------------------------------------------------------------ the operator's forgeries, re-signed

const ANN_TURN = startOfTurn(ONE, 5); // ann is to roll: where an operator cuts a game and abandons it in her name
const annAbandons = (signature) => ({ type: "abandon", seat: 0, reason: "player", player_signature: signature });

const RESIGNED = [
  ["an abandon in ann's name on her turn, unsigned", () => abandonedAt(ONE, ANN_TURN, annAbandons(null)), ["player.signature"]],
  ["an abandon in ann's name with a made-up signature", () => abandonedAt(ONE, ANN_TURN, annAbandons("ab".repeat(64))),
    ["player.signature"]],
  ["an abandon in ann's name with her previous signature", () => abandonedAt(ONE, ANN_TURN,
    annAbandons(ONE.events[lastOf({ events: ONE.events.slice(0, ANN_TURN) }, 0)].player_signature)), ["player.signature"]],
  ["an abandon in ann's name signed by the operator's own key", async () => {
    const doc = abandonedAt(ONE, ANN_TURN, annAbandons(null));
    doc.events[ANN_TURN].player_signature = await playerSignature(doc, ANN_TURN, other);
    return doc;
  }, ["player.signature"]],
  ["ann's last move carries the signature of her move before", () => {
    const doc = clone(ONE);
    const [before, last] = humanEvents(doc, 0).slice(-2);
    doc.events[last].player_signature = doc.events[before].player_signature;
    return doc;
  }, ["player.signature"]],
  ["an earlier signature of ann's changed (her last one signs the history it was in)", () => {
    const doc = clone(ONE);
    doc.events[humanEvents(doc, 0)[3]].player_signature = "cd".repeat(64);
    return doc;
  }, ["player.signature"]],
  ["a signature of ann's left out (null) though she has a key", () => {
    const doc = clone(ONE);
    doc.events[humanEvents(doc, 0)[2]].player_signature = null;
    return doc;
  }, ["player.signature"]],
  ["a signature on a move of a seat that sent no key", () => {
    const doc = clone(KEYLESS);
    doc.events[humanEvents(doc, 0)[1]].player_signature = "ef".repeat(64);
    return doc;
  }, ["player.signature"]],
  ["bob's reveal names another key than his commitment", () => {
    const doc = clone(TWO);
    doc.events.find((e) => e.type === "client_seed" && e.seat === 1).player_key = other.publicKey;
    return doc;
  }, ["client_seed.commit", "player.signature"]],
  ["a player_signature in upper case", () => {
    const doc = clone(ONE);
    const e = doc.events[humanEvents(doc, 0)[1]];
    e.player_signature = e.player_signature.toUpperCase();
    return doc;
  }, ["log.format", "player.signature"]],
  // (after ann's last move, so that her signature still holds: only the form is wrong)
  ["a signature field on the bot's last move", () => {
    const doc = clone(ONE);
    doc.events.at(-1).player_signature = null;
    return doc;
  }, ["log.format"]],
  ["a player_key on ann's last move, a score (which her command does not cover)", () => {
    const doc = clone(ONE);
    doc.events[lastOf(doc, 0)].player_key = players[0].publicKey;
    return doc;
  }, ["log.format"]],
  ["a version 2 log labelled version 3", () => ({ ...clone(V2), version: 3 }), ["log.format"]],
  ["a version 3 log labelled version 2 (its players' fields kept)", () => ({ ...clone(ONE), version: 2 }), ["log.format"]],
  // no forgery: what the rules allow
  ["the server abandons on its timeout while ann leads", () => abandonedAt(ONE, ANN_TURN,
    { type: "abandon", seat: null, reason: "timeout" }), []],
];

for (const [name, make, exactly] of RESIGNED) {
  test(`version 3, re-signed: ${name}`, async () => {
    const r = await verifyResigned(await make());
    assert.equal(r.error, null);
    assert.equal(r.ok, exactly.length ? false : true, JSON.stringify(r.failures.slice(0, 3)));
    assert.deepEqual(failing(r), exactly);
  });
}

test("a failed player's signature is reported at the seat's last event, field player_signature", async () => {
  const r = await verifyResigned(abandonedAt(ONE, ANN_TURN, annAbandons("ab".repeat(64))));
  const f = r.failures.find((x) => x.check === "player.signature");
  assert.deepEqual([f.event, f.field, f.expected.code, String(f.expected)],
    [ANN_TURN, "player_signature", "player_signature", "a valid signature by seat 0's key"]);
  assert.equal(r.statuses["game.abandon"], "pass", "the rules allow ann to abandon on her turn: only her signature is missing");
});

/** `doc` with `seat`'s key replaced by `by`'s and each of the seat's events signed again by it, in order. */
async function withPlayerKey(doc, seat, by) {
  const out = clone(doc);
  for (const n of humanEvents(out, seat)) {
    if ("player_key" in out.events[n]) out.events[n].player_key = by.publicKey;
    out.events[n].player_signature = await playerSignature(out, n, by);
  }
  return out;
}

test("a player key replaced, every move signed again by the operator: only ann's receipt shows it", async () => {
  const replaced = await withPlayerKey(ONE, 0, other);
  const alone = await verifyResigned(replaced);
  assert.equal(alone.ok, true, "without her receipt nothing shows it (SPEC §5.7)");
  const r = await verifyResigned(replaced, { receipt: receiptOf(ONE, 0) });
  assert.deepEqual(failing(r), ["player.signature", "receipt.match"]);
  assert.deepEqual(r.failures.filter((f) => f.check === "receipt.match").map((f) => [f.event, f.field, f.expected, f.found]),
    [[0, "player_key", players[0].publicKey, other.publicKey]]);
});

test("a version 3 game re-signed as version 2 or 1, its signatures dropped: the receipt records the version", async () => {
  const strip = (doc, version) => ({ ...clone(doc), version,
    events: doc.events.map(({ player_key: _k, player_signature: _s, ...e }) => (version === 1 && e.type === "abandon" ? { type: e.type, seat: e.seat } : e)) });
  const v1 = strip(ONE, 1);
  delete v1.header.abandon_timeout;
  for (const doc of [strip(ONE, 2), v1]) {
    const alone = await verifyResigned(doc);
    assert.equal(alone.ok, true, JSON.stringify(alone.failures.slice(0, 3)));
    assert.deepEqual(alone.unsignedSeats, [0]);
    const receipt = receiptOf(ONE, 0, doc.version === 1 ? { header: doc.header } : {});
    const r = await verifyResigned(doc, { receipt: { ...receipt, commitment_signature: null } });
    assert.deepEqual(failing(r), ["receipt.match"]);
    assert.deepEqual(r.failures.map((f) => [f.field, f.expected, f.found]), [["version", 3, doc.version]]);
  }
});

// ------------------------------------------------------------------ receipts of version 2

test("a receipt of version 2 matches its game: the version, the key, and that key is the seat's", async () => {
  for (const seat of [0, 1]) {
    const r = await verifyLog(TWO, { trustedKeys, receipt: receiptOf(TWO, seat) });
    assert.equal(r.ok, true, JSON.stringify(r.failures.slice(0, 3)));
    assert.equal(r.statuses["receipt.match"], "pass");
  }
  const older = await verifyLog(TWO, { trustedKeys, receipt: receiptOf(TWO, 1, { log_version: 2, player_key: null }) });
  assert.deepEqual(failing(older), ["player.signature", "receipt.match"], "(a game of version 2 has no key: bob's is then null)");
  assert.deepEqual(older.failures.filter((f) => f.check === "receipt.match").map((f) => f.field), ["version", "player_key", "player_key"]);
  const otherKey = await verifyLog(TWO, { trustedKeys, receipt: receiptOf(TWO, 1, { player_key: other.publicKey }) });
  assert.deepEqual(failing(otherKey), ["player.signature", "receipt.match"], "the receipt's key is the one bob's signature is checked with");
  const none = await verifyLog(TWO, { trustedKeys, receipt: receiptOf(TWO, 1, { player_key: null }) });
  assert.deepEqual(failing(none), ["player.signature", "receipt.match"]);
  const v1 = await verifyLog(TWO, { trustedKeys, receipt: (({ log_version: _v, player_key: _k, ...r }) => ({ ...r, version: 1 }))(receiptOf(TWO, 1)) });
  assert.equal(v1.ok, true, "a receipt of version 1 names no key: the log's is used");
});

test("a receipt of version 2 that is not well formed is no evidence: unusable input", async () => {
  const good = receiptOf(ONE, 0);
  const { log_version: _v, ...noVersion } = good;
  const { player_key: _k, ...noKey } = good;
  for (const [bad, pattern] of [[{ ...good, version: 3 }, /format\/version/], [noVersion, /log_version: missing/],
    [noKey, /player_key: missing/], [{ ...noKey, log_version: undefined, version: 1, player_key: good.player_key }, /player_key: no such field/],
    [{ ...good, log_version: 4 }, /log_version: expected 1, 2 or 3/], [{ ...good, log_version: "3" }, /log_version/],
    [{ ...good, player_key: good.player_key.toUpperCase() }, /player_key: expected 64 lowercase hex/],
    [{ ...good, log_version: 2 }, /player_key: a game of log version 2 has no players' keys/]]) {
    const r = await verifyLog(ONE, { trustedKeys, receipt: JSON.parse(JSON.stringify(bad)) });
    assert.equal(r.reason, "bad_receipt", JSON.stringify(bad).slice(0, 80));
    assert.match(r.error, pattern);
  }
});

// ------------------------------------------------------------------ abandons no player signed, and move receipts

test("a version 2 abandon in the player's name needs one of the player's move receipts that counts it", async () => {
  const k = V2.events.length - 1; // the abandon, by the seat to play
  const seat = V2.events[k].seat;
  const receipt = { game_id: V2.header.game_id, seat, commitment: V2.header.commitment,
    client_seed: V2.events.find((e) => e.type === "client_seed" && e.seat === seat).client_seed };
  const before = await Promise.all([0, 4, k].map((n) => moveReceipt(V2, n, operator)));
  const r = await verifyLog(V2, { trustedKeys, receipt, moveReceipts: before });
  assert.deepEqual(failing(r), ["game.abandon"]);
  assert.deepEqual(r.failures.map((f) => [f.event, f.field, String(f.expected), String(f.found)]),
    [[k, "seat", "a move receipt that counts this abandon", "you hold no receipt of this abandon"]]);
  const acknowledged = await verifyLog(V2, { trustedKeys, receipt, moveReceipts: [...before, await moveReceipt(V2, k + 1, operator)] });
  assert.equal(acknowledged.ok, true, JSON.stringify(acknowledged.failures));
  const theOthers = await verifyLog(V2, { trustedKeys, receipt: { ...receipt, seat: 1 - seat,
    client_seed: V2.events.find((e) => e.type === "client_seed" && e.seat === 1 - seat).client_seed }, moveReceipts: before });
  assert.equal(theOthers.ok, true, "the other player's receipts: not an abandon in that player's name");
  const noReceipts = await verifyLog(V2, { trustedKeys, receipt });
  assert.equal(noReceipts.ok, true, "without move receipts there is nothing to hold it to");
});

test("so does an abandon by a version 3 seat without a key (the only human seat when no receipt is given)", async () => {
  const k = startOfTurn(KEYLESS, 6);
  const doc = await resign(abandonedAt(KEYLESS, k, annAbandons(null)), operator);
  const held = await Promise.all([1, k - 1].map((n) => moveReceipt(doc, n, operator)));
  const r = await verifyLog(doc, { trustedKeys, moveReceipts: held });
  assert.deepEqual(failing(r), ["game.abandon"]);
  const covered = await verifyLog(doc, { trustedKeys, moveReceipts: [...held, await moveReceipt(doc, k + 1, operator)] });
  assert.equal(covered.ok, true, JSON.stringify(covered.failures));
  const forged = { ...(await moveReceipt(doc, k + 1, other)), key_id: operator.keyId };
  const unheld = await verifyLog(doc, { trustedKeys, moveReceipts: [...held, forged] });
  assert.deepEqual(failing(unheld), ["game.abandon", "receipt.chain"], "a receipt that does not hold acknowledges nothing");
});

test("a signed abandon is the player's own: no move receipt needs to count it", async () => {
  const last = TWO.events.length - 1; // ann abandons, signed
  const r = await verifyLog(TWO, { trustedKeys, receipt: receiptOf(TWO, 0), moveReceipts: [await moveReceipt(TWO, 3, operator)] });
  assert.equal(TWO.events[last].type, "abandon");
  assert.equal(r.ok, true, JSON.stringify(r.failures));
});

// ------------------------------------------------------------------ one key per signature

test("12,000 trusted keys and 2,000 move receipts: one verification per receipt at most, in seconds", { timeout: 60_000 }, async () => {
  const keys = [...Array.from({ length: 11_999 }, () => randomBytes(32).toString("hex")), operator.publicKey];
  const genuine = await moveReceipt(ONE, 10, operator);
  const bogus = Array.from({ length: 2000 }, (_, k) => ({ ...genuine, signature: randomBytes(64).toString("hex"),
    key_id: k % 2 ? genuine.key_id : "0123456789abcdef" })); // half name the server's key, half no trusted key
  const started = performance.now();
  const r = await verifyLog(ONE, { trustedKeys: keys, moveReceipts: [genuine, ...bogus] });
  const seconds = (performance.now() - started) / 1000;
  assert.deepEqual(failing(r), ["receipt.chain"]);
  assert.equal(r.failures.filter((f) => f.check === "receipt.chain").length + r.unlisted["receipt.chain"], 2000);
  assert.ok(seconds < 20, `${seconds.toFixed(1)} s`);
});

test("a receipt is tried against the trusted key its key_id names, and only that one", async () => {
  const byOther = await moveReceipt(ONE, 10, other);
  const both = [operator.publicKey, other.publicKey];
  assert.equal((await verifyLog(ONE, { trustedKeys: both, moveReceipts: [byOther] })).ok, true);
  const misnamed = { ...byOther, key_id: operator.keyId };
  const r = await verifyLog(ONE, { trustedKeys: both, moveReceipts: [misnamed] });
  assert.deepEqual(r.failures.map((f) => [f.check, f.field]), [["receipt.chain", "receipts[0].signature"]]);
});

test("the log's signatures are checked with the trusted key its header names, whatever other keys are trusted", async () => {
  const byOther = await resign(ONE, other, { keyFields: false }); // the header still names the server's key
  const r = await verifyLog(byOther, { trustedKeys: [other.publicKey, operator.publicKey] });
  assert.deepEqual(failing(r), ["sig.commitment", "sig.final"]);
});
