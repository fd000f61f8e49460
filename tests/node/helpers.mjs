// Shared by the Node tests of api/static/verify.js: the repository's files, and a dishonest operator
// who holds a signing key and re-signs what it changes (SPEC §6), as tests/support/forge.py does in Python.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  JsonFloat, bytesToHex, canonicalJSON, chainDigests, hexToBytes, moveReceiptBytes, sha256Hex,
} from "../../api/static/verify.js";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const VECTORS = join(REPO, "tests", "vectors");
export const FORGED = join(VECTORS, "forged");

export const readJSONFile = (...parts) => JSON.parse(readFileSync(join(REPO, ...parts), "utf8"));
export const vector = (name) => readJSONFile("tests", "vectors", name);
/** A deep copy of a JSON value (a JsonFloat, which never changes, is kept as it is). */
export function clone(x) {
  if (Array.isArray(x)) return x.map(clone);
  if (x !== null && typeof x === "object" && !(x instanceof JsonFloat)) {
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, clone(v)]));
  }
  return x;
}

/** The key of SPEC §8.4, which signed log_short.json. */
export const SPEC_PRIVATE_KEY = "eb095cd08f7fa1ad79a961998982054d0f758397eb7033759059b817dc22da6e";
/** Another key, for an operator who signs with a key of its own. */
export const OTHER_PRIVATE_KEY = "11".repeat(32);

const PKCS8_ED25519_PREFIX = "302e020100300506032b657004220420"; // RFC 8410: a raw 32-byte seed follows

/** An Ed25519 signer from a raw 32-byte private key (hex): {publicKey, keyId, sign(text) -> hex, signBytes(bytes) -> hex}. */
export async function signer(privateHex) {
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey("pkcs8", hexToBytes(PKCS8_ED25519_PREFIX + privateHex), { name: "Ed25519" }, true, ["sign"]);
  const jwk = await subtle.exportKey("jwk", key);
  const publicKey = bytesToHex(Buffer.from(jwk.x, "base64url"));
  return {
    publicKey,
    keyId: (await sha256Hex(hexToBytes(publicKey))).slice(0, 16),
    sign: async (text) => bytesToHex(new Uint8Array(await subtle.sign({ name: "Ed25519" }, key, new TextEncoder().encode(text)))),
    signBytes: async (bytes) => bytesToHex(new Uint8Array(await subtle.sign({ name: "Ed25519" }, key, bytes))),
  };
}

/** The document signed again by `s`, as the server would have signed it (SPEC §6); with keyFields
 * false, the header's public_key and key_id are left as they are. */
export async function resign(doc, s, { keyFields = true } = {}) {
  const out = clone(doc);
  if (keyFields) {
    out.header.public_key = s.publicKey;
    out.header.key_id = s.keyId;
  }
  out.commitment_signature = await s.sign(canonicalJSON(out.header));
  delete out.signature;
  if (out.final !== null) out.signature = await s.sign(canonicalJSON(out));
  return out;
}

/** The ids of the failed checks of a report. */
export const failing = (report) => [...new Set(report.failures.map((f) => f.check))].sort();

// ------------------------------------------------------------------ the shared corpus (tests/support/forge.py)

export const corpusIndex = () => JSON.parse(readFileSync(join(FORGED, "index.json"), "utf8"));
export const corpusLog = (name) => JSON.parse(readFileSync(join(FORGED, `${name}.json`), "utf8"));

/** A key of tests/support/forge.py: the raw private key is SHA-256 of "fairdice forged corpus: <label>"
 * ("the operator's signing key", "player key <seat>"). */
export async function corpusSigner(label) {
  return signer(await sha256Hex(new TextEncoder().encode(`fairdice forged corpus: ${label}`)));
}

/** The move receipt of `doc`'s first n events, signed by `by`, as the server writes it (SPEC §5.6). */
export async function moveReceipt(doc, n, by) {
  const chain = (await chainDigests(doc.header, doc.events.slice(0, n)))[n];
  return { game_id: doc.header.game_id, events: n, chain: bytesToHex(chain), key_id: by.keyId,
    signature: await by.signBytes(moveReceiptBytes(doc.header.game_id, n, chain)) };
}

const UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"];

/** Every seat's totals after `events`, counted here from their score events (SPEC §5.4). */
export function totalsAfter(seats, events) {
  const totals = Array.from({ length: seats }, () => ({ upper: 0, upper_bonus: 0, lower: 0, yahtzee_bonus: 0 }));
  for (const e of events.filter((x) => x.type === "score")) {
    const t = totals[e.seat];
    t[UPPER.includes(e.category) ? "upper" : "lower"] += e.points;
    t.upper_bonus += e.upper_bonus;
    t.yahtzee_bonus += e.yahtzee_bonus;
  }
  return totals.map((t) => ({ ...t, total: t.upper + t.upper_bonus + t.lower + t.yahtzee_bonus }));
}
