// Verification as the page uses it: the receipt kept when the client seed is sent, a log verified against
// it (verify.js, the in-browser implementation of SPEC §7), and what to say when a file is not a log at
// all. No DOM here: report.js shows the outcome, in the player's language.
//
// The receipts are made during play; the replay itself (verify/replay.js and the modules it needs, about half
// the page's code) is loaded the first time a log is checked (`replayModule`), not with the page.

import { canonicalJSON } from "./verify/canonical.js";
import { ed25519Verify } from "./verify/keys.js";
import { parseStrictJSON } from "./verify/strictjson.js";

let replay = null;
/** verify/replay.js, loaded once, on first need (a failed load is tried again next time). */
export function replayModule() {
  if (!replay) replay = import("./verify/replay.js").catch((err) => { replay = null; throw err; });
  return replay;
}

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

export class CommitmentRejected extends Error {
  constructor() {
    super("commitment_rejected");
    this.code = "commitment_rejected";
  }
}

/**
 * The signed header of a game (SPEC §5.1), checked: signed by its own key, which is one of the server's
 * published keys, for this game and with the commitment shown. Everything the page checks later (move
 * receipts, its own hash chain) starts from it. `signed`: {header, commitment_signature} as the creation
 * answer (or the log so far) gave them.
 */
export async function checkedHeader({ signed, gameId, commitment = null, trustedKeys }) {
  const { header, commitment_signature: signature } = signed || {};
  if (!isObject(header)) throw new CommitmentRejected();
  const ok = await ed25519Verify(header.public_key, signature, new TextEncoder().encode(canonicalJSON(header)));
  if (ok === false || !trustedKeys.includes(header.public_key) || header.game_id !== gameId
      || (commitment && header.commitment !== commitment)) {
    throw new CommitmentRejected();
  }
  return header;
}

/**
 * The receipt this player keeps for a seat on sending its client seed (or its commitment to it), SPEC §5.5
 * version 2: made only after checking the header (checkedHeader). Verification at the end holds the log to
 * it: the game, the commitment seen before the seed was sent, this seed, this key, the log version and the
 * seat's own key (`playerKey`, null for a game whose seats do not sign).
 */
export async function makeReceipt({ signed, gameId, seat, commitment, trustedKeys, seed, logVersion, playerKey = null }) {
  const header = await checkedHeader({ signed, gameId, commitment, trustedKeys });
  return { format: "fairdice-receipt", version: 2, game_id: header.game_id, seat, commitment: header.commitment,
    client_seed: seed, header, commitment_signature: signed.commitment_signature, public_key: header.public_key,
    log_version: logVersion, player_key: playerKey };
}

/** The game id a text names in its header, if it is a log at all (to find the receipt kept for it). */
export function gameIdOf(text) {
  try {
    const doc = parseStrictJSON(text);
    return isObject(doc) && isObject(doc.header) && typeof doc.header.game_id === "string" ? doc.header.game_id : null;
  } catch {
    return null;
  }
}

/** Verify a log (text, bytes or object), held to `receipt` when there is one, else to the server's keys; `tables`:
 * the optimal bot's tables (tables.js tablesFor), with which its decisions are replayed too. */
export async function check(log, { receipt = null, moveReceipts = [], trustedKeys = [], tables = {} } = {}) {
  const options = receipt ? { trustedKeys: [receipt.public_key], receipt, moveReceipts, tables } : { trustedKeys, moveReceipts, tables };
  const { verifyLog } = await replayModule();
  const report = await verifyLog(log, options);
  return { report, notLog: notALog(report) };
}

/** Verify a log once for every seat this browser holds a receipt of (the seats of a pass-and-play game each
 * have their own), or once without a receipt: [{seat, report, notLog}], in seat order. */
export async function checkSeats(log, { receipts = [], moveReceipts = [], trustedKeys = [], tables = {} } = {}) {
  if (!receipts.length) return [{ seat: null, ...(await check(log, { moveReceipts, trustedKeys, tables })) }];
  const out = [];
  for (const receipt of receipts) out.push({ seat: receipt.seat, ...(await check(log, { receipt, moveReceipts, trustedKeys, tables })) });
  return out;
}

/**
 * null for a log (verified or not); else {reason, detail}: why this is not a fairdice log. The reason is
 * verify.js's code for input that is not a log at all (UNUSABLE_REASONS), or the page's own "is_receipt"
 * (the player's receipt, chosen instead of the log) or "not_a_log" (JSON, but not shaped as a log); the
 * catalogues word each as "notLog.<reason>". `detail`: verify.js's English, for a technical detail.
 */
export function notALog(report) {
  if (report.error) return { reason: report.reason || "unusable", detail: report.error };
  const doc = report.document;
  if (isObject(doc) && doc.format === "fairdice-receipt") return { reason: "is_receipt", detail: "" };
  if (!isObject(doc) || doc.format !== "fairdice-log" || !isObject(doc.header) || !Array.isArray(doc.events)) {
    return { reason: "not_a_log", detail: "" };
  }
  return null;
}

/** A file the player chose, as bytes (verify.js decides whether they are UTF-8 text). */
export async function fileBytes(file) {
  return new Uint8Array(await file.arrayBuffer());
}
