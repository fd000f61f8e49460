// The player's receipt (SPEC §5.5): what a player keeps when it sends its client seed, so that the final log can be
// checked against what the player itself saw, not only against what the server says. A receipt that cannot serve
// as evidence (ill-formed, or inconsistent with itself) is unusable input, refused before the log is read.

import { enc } from "./bytes.js";
import { byCodePoint, canonicalJSON } from "./canonical.js";
import { firstDifference, given, has, isHex, isInt, isObject, isStr, sameJSON } from "./json.js";
import { ed25519Verify } from "./keys.js";
import { said } from "./phrases.js";
import { UnusableInput, readJSON } from "./strictjson.js";

const RECEIPT_REQUIRED = ["game_id", "seat", "commitment", "client_seed"];
const RECEIPT_OPTIONAL = ["format", "version", "header", "commitment_signature", "public_key"];
const RECEIPT_V2 = ["log_version", "player_key"]; // exactly in a receipt of version 2
const LOG_VERSIONS = [1, 2, 3];

/** The first reason why `r` is no usable receipt (SPEC §5.5), or null: its fields, version 2's, their values,
 * then the signed header it may hold and the commitment signature over that header. */
async function receiptProblem(r) {
  if (!isObject(r)) return "a receipt is a JSON object";
  const problem = fieldsProblem(r) || versionTwoProblem(r) || valuesProblem(r) || headerProblem(r);
  if (problem) return problem;
  return given(r, "header") && given(r, "commitment_signature") ? signatureProblem(r) : null;
}

/** The required fields, the format and version, no field the version does not have, and version 2's own two. */
function fieldsProblem(r) {
  const missing = RECEIPT_REQUIRED.find((k) => !has(r, k));
  if (missing) return `${missing}: missing`;
  if ((has(r, "format") && r.format !== "fairdice-receipt") || (has(r, "version") && r.version !== 1 && r.version !== 2)) {
    return 'format/version: expected "fairdice-receipt" version 1 or 2';
  }
  const v2 = r.version === 2;
  const allowed = [...RECEIPT_REQUIRED, ...RECEIPT_OPTIONAL, ...(v2 ? RECEIPT_V2 : [])];
  const extra = Object.keys(r).filter((k) => !allowed.includes(k)).sort(byCodePoint)[0];
  if (extra !== undefined) return `${extra}: no such field in a receipt of version ${v2 ? 2 : 1}`;
  const absent = v2 ? RECEIPT_V2.find((k) => !has(r, k)) : undefined;
  if (absent) return `${absent}: missing (a receipt of version 2 has it)`;
  return null;
}

/** Version 2's log version and player key (a key only in a game of log version 3: older games have none). */
function versionTwoProblem(r) {
  if (r.version !== 2) return null;
  if (!LOG_VERSIONS.includes(r.log_version)) return "log_version: expected 1, 2 or 3";
  if (r.player_key !== null && !isHex(r.player_key, 64)) return "player_key: expected 64 lowercase hex digits, or null";
  if (r.player_key !== null && r.log_version < 3) return `player_key: a game of log version ${r.log_version} has no players' keys (null)`;
  return null;
}

/** The values of the fields every receipt has, and of the keys and signature it may have. */
function valuesProblem(r) {
  if (!isStr(r.game_id) || !r.game_id) return "game_id: expected a non-empty string";
  if (r.seat !== null && !(isInt(r.seat) && r.seat >= 0)) return "seat: expected a seat index, or null for the operator of a game without humans";
  if (!isHex(r.commitment, 64)) return "commitment: expected 64 lowercase hex digits";
  if (!isStr(r.client_seed)) return "client_seed: expected a string";
  for (const [name, n] of [["public_key", 64], ["commitment_signature", 128]]) {
    if (given(r, name) && !isHex(r[name], n)) return `${name}: expected ${n} lowercase hex digits`;
  }
  return null;
}

/** The signed header a receipt may hold: an object that agrees with the receipt's own game, commitment and key. */
function headerProblem(r) {
  if (!given(r, "header")) return null;
  const header = r.header;
  if (!isObject(header)) return "header: expected the signed header, an object";
  for (const name of ["game_id", "commitment", "public_key"]) {
    if (has(header, name) && given(r, name) && !sameJSON(header[name], r[name])) return `header.${name}: differs from the receipt's own ${name}`;
  }
  return null;
}

/** The commitment signature over the receipt's header, by the receipt's key (else the header's). */
async function signatureProblem(r) {
  const key = r.public_key || r.header.public_key;
  if (!isHex(key, 64)) return "commitment_signature: no public key to check it with";
  const valid = await ed25519Verify(key, r.commitment_signature, enc.encode(canonicalJSON(r.header)));
  return valid === false ? "commitment_signature: not a valid signature of the receipt's header by its key" : null;
}

/** The player's receipt, held to its shape and to itself; a receipt that cannot serve as evidence is unusable input. */
export async function readReceipt(input) {
  if (input === undefined || input === null) return null;
  let r;
  try {
    r = readJSON(input);
  } catch (err) {
    if (err instanceof UnusableInput) throw new UnusableInput(`receipt: ${err.message}`, "bad_receipt");
    throw err;
  }
  const problem = await receiptProblem(r);
  if (problem) throw new UnusableInput(`receipt: ${problem}`, "bad_receipt");
  return r;
}

/** receipt.match: the log is the game the player joined, of the version the player saw, with the seed (and, in
 * version 3, the key) the player sent. */
export function checkReceipt(checks, doc, r) {
  const h = doc.header;
  checks.expect("receipt.match", null, "game_id", r.game_id, h.game_id);
  checks.expect("receipt.match", null, "commitment", r.commitment, h.commitment);
  if (given(r, "header") && canonicalJSON(r.header) !== canonicalJSON(h)) {
    checks.fail("receipt.match", null, ...(firstDifference(r.header, h, "header") || ["header", r.header, h]));
  }
  if (given(r, "public_key")) checks.expect("receipt.match", null, "public_key", r.public_key, h.public_key);
  const seatOf = (e) => (has(e, "seat") ? e.seat : null);
  const sent = doc.events.flatMap((e, i) => (isObject(e) && e.type === "client_seed" && seatOf(e) === r.seat ? [i] : []));
  if (!sent.length) checks.fail("receipt.match", null, "client_seed", r.client_seed, said("no_seed_from_seat"));
  for (const i of sent) {
    const e = doc.events[i];
    checks.expect("receipt.match", i, "client_seed", r.client_seed, has(e, "client_seed") ? e.client_seed : null);
  }
  if (r.version === 2) {
    checks.expect("receipt.match", null, "version", r.log_version, doc.version);
    if (doc.version >= 3) checkPlayerKey(checks, doc, r);
  }
  checks.passed("receipt.match");
}

/** Every commitment and client seed of the receipt's (human) seat names the key the player sent. */
function checkPlayerKey(checks, doc, r) {
  if (!doc.header.seats.some((s, i) => i === r.seat && isObject(s) && s.type === "human")) return;
  doc.events.forEach((e, i) => {
    if (isObject(e) && (e.type === "client_seed" || e.type === "client_seed_commit") && e.seat === r.seat) {
      checks.expect("receipt.match", i, "player_key", r.player_key, has(e, "player_key") ? e.player_key : said("missing"));
    }
  });
}
