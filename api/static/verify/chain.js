// Move receipts (SPEC §5.6): the server's signed word, given with every answer to a move, that the game's history
// had n events hashing to h_n. A final log that departs from any receipt the player kept fails receipt.chain: the
// operator cannot rewrite a move once it has answered it.
//
//     h_0 = SHA-256(field("fairdice-chain/v2") || field(game_id) || canonical(header))
//     h_i = SHA-256(h_(i-1) || canonical(event_(i-1)))

import { bytesToHex, concat, enc, field, hexToBytes, sha256, u32 } from "./bytes.js";
import { byCodePoint, canonicalJSON } from "./canonical.js";
import { isHex, isInt, isObject, isStr, sameKeys } from "./json.js";
import { signedBy } from "./keys.js";
import { said } from "./phrases.js";
import { UnusableInput, readJSON } from "./strictjson.js";

export const CHAIN_LABEL = "fairdice-chain/v2";
export const MOVE_RECEIPT_LABEL = "fairdice-receipt/v2";
const MOVE_RECEIPT_FIELDS = ["game_id", "events", "chain", "key_id", "signature"];

/** [h_0, h_1, ..., h_n] of a log: h_0 = SHA-256(field(label) || field(game_id) || canonical(header)),
 * h_i = SHA-256(h_(i-1) || canonical(event_(i-1))). */
export async function chainDigests(header, events) {
  let digest = await sha256(concat([field(CHAIN_LABEL), field(header.game_id), enc.encode(canonicalJSON(header))]));
  const out = [digest];
  for (const event of events) {
    digest = await sha256(concat([digest, enc.encode(canonicalJSON(event))]));
    out.push(digest);
  }
  return out;
}

/** What a move receipt signs: field("fairdice-receipt/v2") || field(game_id) || u32(n) || h_n. */
export function moveReceiptBytes(gameId, n, digest) {
  return concat([field(MOVE_RECEIPT_LABEL), field(gameId), u32(n), digest]);
}

/** The first reason why `r` (receipts[k]) is no usable move receipt, or null. */
function moveReceiptProblem(r, k) {
  const where = `receipts[${k}]`;
  if (!isObject(r)) return `${where}: a move receipt is a JSON object`;
  if (!sameKeys(r, MOVE_RECEIPT_FIELDS)) {
    const names = (keys) => keys.sort(byCodePoint).join(", ");
    return `${where}: expected exactly the fields ${names([...MOVE_RECEIPT_FIELDS])}, found ${names(Object.keys(r))}`;
  }
  if (!isStr(r.game_id) || !isInt(r.events) || r.events < 0 || r.events >= 2 ** 32) {
    return `${where}: game_id must be a string and events a count of events`;
  }
  for (const [name, n] of [["chain", 64], ["key_id", 16], ["signature", 128]]) {
    if (!isHex(r[name], n)) return `${where}.${name}: expected ${n} lowercase hex digits`;
  }
  return null;
}

/** The move receipts (a JSON array, or its text), each held to its shape; unusable input otherwise. */
export function readMoveReceipts(input) {
  if (input === undefined || input === null) return null;
  let list;
  try {
    list = readJSON(input);
  } catch (err) {
    if (err instanceof UnusableInput) throw new UnusableInput(`move receipts: ${err.message}`, "bad_move_receipts");
    throw err;
  }
  if (!Array.isArray(list)) throw new UnusableInput("move receipts: a JSON array of move receipts is expected", "bad_move_receipts");
  list.forEach((r, k) => {
    const problem = moveReceiptProblem(r, k);
    if (problem) throw new UnusableInput(`move receipts: ${problem}`, "bad_move_receipts");
  });
  return list;
}

/**
 * receipt.chain: every move receipt is of this game, within its history, hashing to the log's h_n, and signed by
 * the trusted key its key_id names (TrustedKeys: one verification per receipt at most, none for a receipt that
 * names no trusted key); one failure per receipt that departs, as the reference reports them. `digests()` gives
 * the log's chain (computed once, when a receipt needs it). Returns the receipts that hold.
 */
export async function checkMoveReceipts(checks, doc, receipts, keys, digests) {
  const { header: h, events } = doc;
  const held = [];
  for (const [k, r] of receipts.entries()) {
    const where = `receipts[${k}]`;
    if (r.game_id !== h.game_id) {
      checks.fail("receipt.chain", null, `${where}.game_id`, h.game_id, r.game_id);
      continue;
    }
    const signed = await signedBy(keys.byId(r.key_id), r.signature, moveReceiptBytes(r.game_id, r.events, hexToBytes(r.chain)));
    if (signed === false) {
      checks.fail("receipt.chain", null, `${where}.signature`, said("trusted_signature"), r.signature);
      continue;
    }
    if (signed === null) checks.notChecked("receipt.chain", "this browser cannot check Ed25519 signatures: run fairdice-verify --receipts");
    if (r.events > events.length) {
      checks.fail("receipt.chain", null, `${where}.events`, said("at_most_events", { count: events.length }), r.events);
      continue;
    }
    const mine = bytesToHex((await digests())[r.events]);
    if (mine !== r.chain) checks.fail("receipt.chain", r.events ? r.events - 1 : null, `${where}.chain`, mine, r.chain);
    else held.push(r);
  }
  checks.passed("receipt.chain");
  return held;
}
