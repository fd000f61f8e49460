// Verification as the page uses it: the receipt kept when the client seed is sent, a log verified against
// it (verify.js, the in-browser implementation of SPEC §7), and what to say when a file is not a log at
// all. No DOM here: report.js shows the outcome, in the player's language.

import { canonicalJSON, ed25519Verify, parseStrictJSON, verifyLog } from "./verify.js";

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

export class CommitmentRejected extends Error {
  constructor() {
    super("commitment_rejected");
    this.code = "commitment_rejected";
  }
}

/**
 * The receipt this player keeps on sending its client seed (SPEC §5.5), made only after checking that the
 * header is signed by one of the server's published keys and carries the commitment shown. Verification at
 * the end holds the log to it: the game, the commitment seen before the seed was sent, this seed, this key.
 * `signed`: {header, commitment_signature} as the creation answer (or the log so far) gave them.
 */
export async function makeReceipt({ signed, gameId, seat, commitment, trustedKeys, seed }) {
  const { header, commitment_signature: signature } = signed || {};
  if (!isObject(header)) throw new CommitmentRejected();
  const ok = await ed25519Verify(header.public_key, signature, new TextEncoder().encode(canonicalJSON(header)));
  if (ok === false || !trustedKeys.includes(header.public_key) || header.game_id !== gameId
      || (commitment && header.commitment !== commitment)) {
    throw new CommitmentRejected();
  }
  return { format: "fairdice-receipt", version: 1, game_id: header.game_id, seat, commitment: header.commitment,
    client_seed: seed, header, commitment_signature: signature, public_key: header.public_key };
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

/** Verify a log (text, bytes or object), held to `receipt` when there is one, else to the server's keys. */
export async function check(log, { receipt = null, moveReceipts = [], trustedKeys = [] } = {}) {
  const options = receipt ? { trustedKeys: [receipt.public_key], receipt, moveReceipts } : { trustedKeys, moveReceipts };
  const report = await verifyLog(log, options);
  return { report, notLog: notALog(report) };
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
