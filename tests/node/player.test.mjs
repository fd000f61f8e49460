// The page's side of protocol 3 (api/static/signing.js, history.js, player.js) held to SPEC §8.9's vector
// (tests/vectors/players.json, made by the core): the commands the page builds from the history it shows, the
// bytes it signs and its signatures (Ed25519 is deterministic: they must be the vector's to the byte), the
// commitment over the key; its own hash chain against the server's move receipts, refusing an answer without a
// receipt, with another history, another key or a gap, and a move in its own seat's name it did not sign; a seat
// prepared once (key, salt, promise, receipt); and a command refused as stale signed again, the same command,
// over the new history.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import test from "node:test";
import { bytesToHex, chainDigests, hexToBytes, moveCommand, moveReceiptBytes } from "../../api/static/verify.js";
import { signCommand, signedBy } from "../../api/static/signing.js";
import { AnswerRefused, ShownHistory } from "../../api/static/history.js";
import { abandonCommand, awaitedSeats, prepareSeat, rollCommand, scoreCommand, seedCommand, seedStep, sendCommand }
  from "../../api/static/player.js";
import { OTHER_PRIVATE_KEY, SPEC_PRIVATE_KEY, clone, signer, vector } from "./helpers.mjs";

const V = vector("players.json");
const LOG = V.log;
const HEADER = LOG.header;
const GAME = HEADER.game_id;
const b64url = (hex) => Buffer.from(hexToBytes(hex)).toString("base64url");
/** A seat's key pair as the page keeps it (store.js): the public key and the private key as a JWK. */
const kept = (p) => ({ public_key: p.player_key, private_jwk: { kty: "OKP", crv: "Ed25519", d: b64url(p.private_key), x: b64url(p.player_key) } });
const PLAYERS = Object.fromEntries(V.players.map((p) => [p.seat, p]));

// ------------------------------------------------------------------ what is signed

test("the page signs every command of the vector to the byte", async () => {
  assert.equal(V.signed_events.length, 9);
  for (const s of V.signed_events) {
    const event = LOG.events[s.event];
    assert.deepEqual(moveCommand(event), s.command, `event ${s.event}`);
    const digest = hexToBytes(s.chain);
    assert.equal(await signCommand(kept(PLAYERS[s.seat]), GAME, s.event, digest, s.command), event.player_signature);
    assert.equal(await signedBy(PLAYERS[s.seat].player_key, event.player_signature, GAME, s.event, digest, event), true);
    // the same signature over another history, or by another seat's key, is not the seat's
    const other = V.players.find((p) => p.seat !== s.seat).player_key;
    assert.equal(await signedBy(other, event.player_signature, GAME, s.event, digest, event), false);
    assert.equal(await signedBy(PLAYERS[s.seat].player_key, event.player_signature, GAME, s.event + 1, digest, event), false);
  }
});

test("a seat is prepared once: its key, salt, promise over the key (SPEC §4.3) and receipt of version 2", async () => {
  const options = { signed: LOG, gameId: GAME, seat: 2, commitment: HEADER.commitment, trustedKeys: [V.public_key],
    seed: "bo's own seed", version: 3, header: HEADER };
  const seat = await prepareSeat({ token: "t2" }, options);
  const raw = Buffer.concat([Buffer.from(seat.salt, "hex"), Buffer.from(seat.key.public_key, "hex"), Buffer.from("bo's own seed")]);
  assert.equal(seat.seed_commitment, createHash("sha256").update(raw).digest("hex"));
  assert.deepEqual({ ...seat.receipt, header: null }, { format: "fairdice-receipt", version: 2, game_id: GAME, seat: 2,
    commitment: HEADER.commitment, client_seed: "bo's own seed", header: null, commitment_signature: LOG.commitment_signature,
    public_key: V.public_key, log_version: 3, player_key: seat.key.public_key });
  assert.equal(seat.token, "t2");
  assert.equal(await prepareSeat(seat, { ...options, seed: "another seed" }), seat, "prepared again: the same seed, key and salt");
  await assert.rejects(prepareSeat({ token: "t2" }, { ...options, trustedKeys: [PLAYERS[0].player_key] }), /commitment_rejected/);
});

test("the commands are counted from the history shown, as the server writes the events", () => {
  for (const s of V.signed_events) {
    const before = LOG.events.slice(0, s.event);
    const c = s.command;
    const seat = c.seat;
    const p = PLAYERS[seat];
    const keptSeat = { key: kept(p), salt: p.salt, seed_commitment: p.commitment, receipt: { client_seed: p.client_seed } };
    const made = {
      roll: () => rollCommand(before, seat, c.hold),
      score: () => scoreCommand(before, seat, c.category),
      abandon: () => abandonCommand(seat),
      client_seed_commit: () => seedCommand(seedStep(before, HEADER, 3, seat), seat, keptSeat),
      client_seed: () => seedCommand(seedStep(before, HEADER, 3, seat), seat, keptSeat),
    }[c.type]();
    assert.deepEqual(made, c, `event ${s.event}`);
  }
});

test("who the game waits for before play: commitments first, then the reveals", () => {
  const at = (n) => LOG.events.slice(0, n);
  assert.deepEqual(awaitedSeats(at(0), HEADER, 3), [0, 2]);
  assert.deepEqual(awaitedSeats(at(1), HEADER, 3), [0]);
  assert.equal(seedStep(at(1), HEADER, 3, 2), null, "seat 2 waits for seat 0's commitment before it reveals");
  assert.deepEqual(awaitedSeats(at(2), HEADER, 3), [0, 2]);
  assert.equal(seedStep(at(2), HEADER, 3, 2), "reveal");
  assert.deepEqual(awaitedSeats(at(3), HEADER, 3), [2]);
  assert.deepEqual(awaitedSeats(at(4), HEADER, 3), []);
  const solo = { ...HEADER, seats: [HEADER.seats[0], HEADER.seats[1]] };
  assert.equal(seedStep([], solo, 3, 0), "seed", "one human: the seed in one step, no commitment");
});

// ------------------------------------------------------------------ the history shown and the server's receipts

const server = await signer(SPEC_PRIVATE_KEY);
const operatorWithAnotherKey = await signer(OTHER_PRIVATE_KEY);
const DIGESTS = await chainDigests(HEADER, LOG.events);

async function receipt(n, events = LOG.events, by = server) {
  const digest = (await chainDigests(HEADER, events.slice(0, n)))[n];
  return { game_id: GAME, events: n, chain: bytesToHex(digest), key_id: by.keyId, signature: await by.signBytes(moveReceiptBytes(GAME, n, digest)) };
}

/** An answer of the server: the events from `from` to `to`, and the receipt of the history up to `to`. */
async function answer(from, to, { events = LOG.events, by = server, withReceipt = true } = {}) {
  return { events_from: from, events: events.slice(from, to), event_count: to, ...(withReceipt ? { receipt: await receipt(to, events, by) } : {}) };
}

async function refusal(promise) {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AnswerRefused, String(err));
    return err.reason;
  }
  return assert.fail("the answer was taken");
}

test("every answer is held to the page's own hash chain and the game's key", async () => {
  const h = await ShownHistory.start(HEADER);
  assert.equal(bytesToHex(h.head), bytesToHex(DIGESTS[0]));
  assert.deepEqual(await h.accept(await answer(0, 5)), LOG.events.slice(0, 5));
  assert.deepEqual(await h.accept(await answer(3, 8)), LOG.events.slice(5, 8), "what the page showed already is not shown twice");
  assert.equal(h.count, 8);
  assert.equal(bytesToHex(h.head), bytesToHex(DIGESTS[8]));

  assert.equal(await refusal(h.accept(await answer(8, 10, { withReceipt: false }))), "missing");
  const forged = clone(LOG.events);
  forged[8].dice = [6, 6, 6, 6, 6]; // shown one roll, signed another: the receipt is of the real history
  const shownForged = { ...(await answer(8, 10, { events: forged })), receipt: await receipt(10) };
  assert.equal(await refusal(h.accept(shownForged)), "chain");
  assert.equal(await refusal(h.accept(await answer(8, 10, { by: operatorWithAnotherKey }))), "signature");
  assert.equal(await refusal(h.accept(await answer(9, 10))), "gap");
  const miscounted = await answer(8, 10);
  miscounted.receipt = await receipt(9);
  assert.equal(await refusal(h.accept(miscounted)), "count");
  assert.equal(h.count, 8, "a refused answer changes nothing");
  assert.deepEqual(await h.accept(await answer(8, 12)), LOG.events.slice(8, 12));
});

test("before signing, every event of the page's own seats carries their own valid signature", async () => {
  const keys = { 0: PLAYERS[0].player_key, 2: PLAYERS[2].player_key };
  const h = await ShownHistory.start(HEADER);
  await h.accept(await answer(0, 12));
  await h.checkOwnEvents(keys);

  const forged = clone(LOG.events);
  forged[6].hold = [0, 1, 2]; // a roll of seat 0 it did not make (the operator's, with seat 0's old signature)
  const f = await ShownHistory.start(HEADER);
  await f.accept(await answer(0, 12, { events: forged }));
  await assert.rejects(f.checkOwnEvents(keys), (err) => err.reason === "forged" && err.detail.event === 6);
  // a page that plays seat 2 only finds it too: seat 2's own signatures cover the history before them
  await assert.rejects(f.checkOwnEvents({ 2: keys[2] }), (err) => err.reason === "forged" && err.detail.event === 10);
});

// ------------------------------------------------------------------ sending: signed, and signed again when stale

/** Serve `answers` to the page's fetch in turn; returns the bodies it sent. */
function fakeServer(t, answers) {
  const sent = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    sent.push({ url, body: init.body ? JSON.parse(init.body) : null });
    const a = answers[Math.min(sent.length, answers.length) - 1];
    const type = a.status < 400 ? "application/json" : "application/problem+json";
    return new Response(JSON.stringify(a.body), { status: a.status, headers: { "Content-Type": type } });
  };
  t.after(() => { globalThis.fetch = real; });
  return sent;
}

test("a command refused as stale is signed again, the same command, over the history shown since", async (t) => {
  const seats = { 0: { token: "t0", key: kept(PLAYERS[0]) } };
  const h = await ShownHistory.start(HEADER);
  await h.accept(await answer(0, 5)); // seat 0 rolls first; suppose the page had not shown the start yet ...
  const command = rollCommand(h.events, 0, []);
  const stale = { status: 409, body: { code: "stale_history", status: 409, event_count: 5 } };
  const sent = fakeServer(t, [stale, { status: 200, body: { ok: true } }]);
  const shownBefore = h.count;
  let caughtUp = 0;
  const reply = await sendCommand({ history: h, seats, seat: 0, command, catchUp: async () => { caughtUp += 1; } });
  assert.deepEqual(reply, { ok: true });
  assert.equal(caughtUp, 1);
  assert.equal(sent.length, 2);
  assert.match(sent[0].url, /v1\/games\/spec-example-3\/roll$/);
  for (const { body } of sent) {
    assert.deepEqual(Object.keys(body).sort(), ["event_count", "hold", "player_signature"]);
    assert.equal(body.event_count, shownBefore);
    assert.equal(body.player_signature, LOG.events[5].player_signature, "the vector's own signature of this roll");
  }
});

test("a seat whose key the server does not have yet sends it with its first command, and signs it", async (t) => {
  const p = PLAYERS[2];
  const seats = { 2: { token: "t2", key: kept(p), salt: p.salt, seed_commitment: p.commitment, receipt: { client_seed: p.client_seed } } };
  const h = await ShownHistory.start(HEADER);
  const sent = fakeServer(t, [{ status: 200, body: {} }, { status: 200, body: {} }]);
  await sendCommand({ history: h, seats, seat: 2, command: seedCommand("commit", 2, seats[2]), catchUp: async () => {} });
  assert.deepEqual(sent[0].body, { commitment: p.commitment, player_key: p.player_key, player_signature: LOG.events[0].player_signature,
    event_count: 0 });
  // an abandon before the key was ever sent is not signed: the server knows no key of this seat to check it with
  await sendCommand({ history: h, seats, seat: 2, command: abandonCommand(2), catchUp: async () => {} });
  assert.deepEqual(sent[1].body, {});
});
