// verify.js held to the SPEC §8 vectors (tests/vectors/*.json), under Node.

import assert from "node:assert/strict";
import test from "node:test";
import {
  CHAIN_LABEL, CLIENT_SEED_RULE, PUBLISHED_BOTS, bytesToHex, canonicalJSON, chainDigests, clientSeedValid, commitmentOf,
  deriveVector, ed25519Verify, field, hexToBytes, moveBytes, moveCommand, moveReceiptBytes, publishedBotHashes, scoreBox,
  scoreOptions, seatNameValid, seedCommitment, verifyLog, verifyMoveReceipts,
} from "../../api/static/verify.js";
import { SPEC_PRIVATE_KEY, failing, readJSONFile, signer, vector } from "./helpers.mjs";

test("every derivation vector of §8.1 re-derives: message, blocks, bytes read, rejections, values", async () => {
  const vectors = vector("derivation.json");
  assert.ok(vectors.length >= 9);
  for (const v of vectors) {
    const got = await deriveVector(v);
    const name = `${v.purpose} ${JSON.stringify(v.numbers)} ${v.game_id}`;
    for (const key of ["commitment", "message", "block0", "bytes_read", "rejected", "values"]) {
      assert.deepEqual(got[key], v[key], `${name}: ${key}`);
    }
    if (v.block1 !== undefined) assert.equal(got.block1, v.block1, `${name}: block1`);
  }
  assert.ok(vectors.some((v) => v.block1 !== undefined), "some vector reads block(1)");
});

test("every hand of §8.2 scores its points", () => {
  const hands = vector("scoring.json");
  for (const x of hands) assert.equal(scoreBox(x.rules, x.category, x.dice), x.points, `${x.rules} ${x.category} ${x.dice}`);
  assert.equal(hands.length, 74);
});

test("every forced-joker case of §8.3 has exactly its legal boxes, points and bonuses", () => {
  for (const x of vector("joker.json")) assert.deepEqual(scoreOptions(x.rules, x.card, x.dice, x.upper_first), x.legal, x.name);
});

test("the embedded client seed rule is tests/vectors/client_seed_rule.json, and its examples hold", () => {
  const rule = vector("client_seed_rule.json");
  for (const key of ["client_seed_length", "seat_name_length", "generic_excluded", "noncharacter_low16", "excluded_ranges"]) {
    assert.deepEqual(CLIENT_SEED_RULE[key], rule[key], key);
  }
  assert.deepEqual(Object.keys(CLIENT_SEED_RULE).sort(),
    Object.keys(rule).filter((k) => k !== "about" && !/examples|seat_names/.test(k)).sort(), "no rule field left out");
  for (const e of rule.valid_examples) assert.ok(clientSeedValid(e.text), e.why);
  for (const e of rule.invalid_examples) assert.ok(!clientSeedValid(e.text), e.why);
  for (const e of rule.valid_seat_names) assert.ok(seatNameValid(e.text), e.why);
  for (const e of [...rule.invalid_seat_names, ...rule.invalid_examples]) assert.ok(!seatNameValid(e.text), e.why);
});

test("the published bot identities are those of §8.6, and optimal's digests those of its manifest", async () => {
  const hashes = await publishedBotHashes();
  const bots = vector("bots.json");
  assert.deepEqual(Object.keys(hashes).sort(), bots.map((b) => b.id).sort());
  for (const b of bots) {
    assert.equal(canonicalJSON({ id: b.id, version: PUBLISHED_BOTS[b.id].version, params: PUBLISHED_BOTS[b.id].params }), b.canonical);
    assert.equal(hashes[b.id], b.hash, b.id);
  }
  const manifest = readJSONFile("fairdice", "bots", "tables", "manifest.json");
  const digests = Object.fromEntries(Object.entries(manifest.tables).map(([rules, t]) => [rules, t.sha256]));
  assert.deepEqual(PUBLISHED_BOTS.optimal.params.table_sha256, digests);
});

test("the public seeds of §8.7 commit to their commitments", async () => {
  for (const g of vector("public_seed.json").games) assert.equal(await commitmentOf(g.server_seed), g.commitment, g.game_id);
});

test("the log of §8.4 verifies: every check passes, every roll re-derives", async () => {
  const log = vector("log_short.json");
  const key = (await signer(SPEC_PRIVATE_KEY)).publicKey;
  for (const trustedKeys of [[], [key]]) {
    const r = await verifyLog(log, { trustedKeys });
    assert.equal(r.error, null);
    assert.equal(r.ok, true, JSON.stringify(r.failures));
    assert.equal(r.trusted, trustedKeys.length > 0);
    // (no receipt was given; the log is of version 1, without commitments, an abandon event or players' signatures)
    const unasked = ["receipt.match", "receipt.chain", "client_seed.commit", "game.abandon", "player.signature"];
    for (const [id, status] of Object.entries(r.statuses)) assert.equal(status, unasked.includes(id) ? "skip" : "pass", id);
    const rolls = log.events.filter((e) => e.type === "roll");
    assert.equal(r.rolls.length, rolls.length);
    assert.ok(r.rolls.every((x) => x.ok));
    assert.deepEqual(r.rolls.map((x) => x.expected), rolls.map((e) => e.dice));
    assert.deepEqual(r.clientSeeds, ["spec example client seed"]);
    assert.equal(r.gameId, "spec-example-1");
  }
  const other = await verifyLog(log, { trustedKeys: ["ab".repeat(32)] });
  assert.equal(other.ok, false);
  assert.deepEqual(failing(other), ["log.key", "sig.commitment", "sig.final"]);
});

test("the same log given as text, as bytes and as a parsed object gets the same verdict", async () => {
  const text = JSON.stringify(vector("log_short.json"));
  const reports = await Promise.all([text, new TextEncoder().encode(text), JSON.parse(text)].map((x) => verifyLog(x)));
  for (const r of reports) assert.deepEqual(r.statuses, reports[0].statuses);
  assert.equal(reports[0].ok, true);
});

test("the version 2 log of §8.8 verifies: its commitments open, its chain and move receipts are the vector's", async () => {
  const v = vector("chain.json");
  assert.equal((await signer(v.private_key)).publicKey, v.public_key);
  for (const c of v.client_seeds) assert.equal(await seedCommitment(c.salt, c.client_seed), c.commitment, `seat ${c.seat}`);
  const h0Input = hexToBytes(v.h0_input);
  const head = new TextEncoder().encode(canonicalJSON(v.log.header));
  assert.equal(bytesToHex(h0Input), bytesToHex(new Uint8Array([...field(CHAIN_LABEL), ...field(v.log.header.game_id), ...head])));
  const digests = await chainDigests(v.log.header, v.log.events);
  assert.deepEqual(v.chain.map((c) => c.events), [...digests.keys()]);
  for (const c of v.chain) assert.equal(bytesToHex(digests[c.events]), c.chain, `h_${c.events}`);
  for (const { receipt, message } of v.receipts) {
    assert.equal(bytesToHex(moveReceiptBytes(receipt.game_id, receipt.events, hexToBytes(receipt.chain))), message);
  }
  const r = await verifyMoveReceipts(v.log, v.receipts.map((x) => x.receipt), { trustedKeys: [v.public_key] });
  assert.equal(r.ok, true, JSON.stringify(r.failures));
  assert.equal(r.version, 2);
  const unasked = ["receipt.match", "player.signature"]; // (no receipt given; a log of version 2 has no players' signatures)
  for (const [id, status] of Object.entries(r.statuses)) assert.equal(status, unasked.includes(id) ? "skip" : "pass", id);
  assert.deepEqual(r.abandon, { seat: 2, reason: "player" });
  const plain = await verifyLog(v.log, { trustedKeys: [v.public_key] });
  assert.equal(plain.ok, true);
  assert.equal(plain.statuses["receipt.chain"], "skip", "no move receipt given");
});

test("the version 3 log of §8.9 verifies: its keys, commitments, chain, commands, signed bytes and signatures are the vector's", async () => {
  const v = vector("players.json");
  const { log } = v;
  for (const p of v.players) {
    assert.equal((await signer(p.private_key)).publicKey, p.player_key, `seat ${p.seat}`);
    assert.equal(await seedCommitment(p.salt, p.client_seed, p.player_key), p.commitment, `seat ${p.seat}`);
  }
  const digests = await chainDigests(log.header, log.events);
  const keys = Object.fromEntries(v.players.map((p) => [p.seat, p.player_key]));
  const last = {};
  for (const s of v.signed_events) {
    const event = log.events[s.event];
    assert.equal(bytesToHex(digests[s.event]), s.chain, `h_${s.event}`);
    assert.deepEqual(moveCommand(event), s.command, `the command of event ${s.event}`);
    const message = moveBytes(log.header.game_id, s.event, digests[s.event], s.command);
    assert.equal(bytesToHex(message), s.message, `the bytes of event ${s.event}`);
    assert.equal(event.player_signature, s.player_signature);
    assert.equal(await ed25519Verify(keys[s.seat], s.player_signature, message), true, `the signature of event ${s.event}`);
    last[s.seat] = s.event;
  }
  assert.deepEqual(v.signed_events.filter((s) => s.checked).map((s) => s.event), Object.values(last).sort((a, b) => a - b),
    "the one signature a verifier checks per seat: that of its last event");
  const r = await verifyLog(log, { trustedKeys: [v.public_key] });
  assert.equal(r.ok, true, JSON.stringify(r.failures));
  assert.equal(r.version, 3);
  assert.equal(r.statuses["player.signature"], "pass");
  assert.equal(r.statuses["client_seed.commit"], "pass");
  assert.equal(r.statuses["game.abandon"], "pass");
  assert.deepEqual(r.unsignedSeats, []);
});
