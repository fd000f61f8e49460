// Ed25519 keys and the server's signatures (SPEC §6): the trusted keys, log.key, sig.commitment and sig.final.

import { enc, hexToBytes, sha256Hex, subtle } from "./bytes.js";
import { canonicalJSON } from "./canonical.js";
import { given, has } from "./json.js";
import { said } from "./phrases.js";
import { UnusableInput } from "./strictjson.js";

/** true / false for an Ed25519 signature, or null when this browser has no Ed25519 in Web Crypto. */
export async function ed25519Verify(publicKeyHex, signatureHex, data) {
  let key;
  try {
    key = await subtle().importKey("raw", hexToBytes(publicKeyHex), { name: "Ed25519" }, false, ["verify"]);
  } catch (err) {
    if (err && (err.name === "NotSupportedError" || /Unrecognized|not supported/i.test(err.message))) return null;
    return false;
  }
  try {
    return await subtle().verify({ name: "Ed25519" }, key, hexToBytes(signatureHex), data);
  } catch {
    return false;
  }
}

/** The trusted keys as lowercase hex, or null when none is given. */
export function readTrustedKeys(keys) {
  if (keys === undefined || keys === null || (Array.isArray(keys) && !keys.length)) return null;
  const list = Array.isArray(keys) ? keys : [keys];
  return list.map((k, i) => {
    if (typeof k !== "string" || !/^[0-9a-fA-F]{64}$/.test(k)) {
      throw new UnusableInput(`trustedKeys[${i}]: expected 64 hex digits (a raw Ed25519 public key), found ${String(k).slice(0, 80)}`,
        "bad_trusted_key");
    }
    return k.toLowerCase();
  });
}

/** The first 16 hex digits of SHA-256 of a raw public key: its key id (SPEC §5.1). */
async function keyId(publicKeyHex) {
  return (await sha256Hex(hexToBytes(publicKeyHex))).slice(0, 16);
}

/**
 * The trusted keys, each found by its id: one key per signature (SPEC §7). A signature is tried against the one
 * trusted key that can have made it, so no input makes the work grow as trusted keys x signatures.
 */
export class TrustedKeys {
  constructor(ids) {
    this.ids = ids; // key id -> key (hex)
  }

  static async of(keys) {
    const ids = new Map();
    for (const key of keys) {
      const id = await keyId(key);
      if (!ids.has(id)) ids.set(id, key);
    }
    return new TrustedKeys(ids);
  }

  /** The trusted key whose id is `id`, or null. */
  byId(id) {
    return this.ids.has(id) ? this.ids.get(id) : null;
  }

  /** The trusted key whose id is `id` and whose bytes are `publicKey`, or null. */
  named(id, publicKey) {
    return this.byId(id) === publicKey ? publicKey : null;
  }
}

/** true when `key` (a trusted key, or null when the signature names none) signed `data`, false when it did not or
 * none is named, null when this browser cannot tell. */
export async function signedBy(key, sig, data) {
  return key === null ? false : ed25519Verify(key, sig, data);
}

/**
 * log.key and sig.commitment. The trusted keys are those given, else the key the player's receipt says the
 * player saw when the game was created, else (with a note that says so) the log's own key. The log's signatures
 * are checked against the trusted key whose id is the header's key_id and whose bytes are its public_key.
 * Returns {keys: the TrustedKeys, signer: that key or null, trusted: whether keys were given, signed: whether the
 * log has both signatures}.
 */
export async function checkKeyAndCommitment(checks, doc, { trustedKeys, receipt, allowUnsigned }) {
  const h = doc.header;
  const kid = await keyId(h.public_key);
  checks.expect("log.key", null, "header.key_id", kid, h.key_id);
  const trusted = trustedKeys || (receipt && given(receipt, "public_key") ? [receipt.public_key] : null);
  if (trusted === null) {
    checks.notes["log.key"] = `key ${kid} is the log's own key: no trusted key was given, so who made this log was not checked`;
  } else {
    if (!trusted.includes(h.public_key)) checks.fail("log.key", null, "header.public_key", said("a_trusted_key", { keys: trusted }), h.public_key);
    checks.notes["log.key"] = `key ${kid} is the server's published key`;
  }
  checks.passed("log.key");
  const keys = await TrustedKeys.of(trusted || [h.public_key]);
  const signer = keys.named(h.key_id, h.public_key);
  const signed = has(doc, "commitment_signature") && has(doc, "signature");
  if (has(doc, "commitment_signature")) {
    await checkSignature(checks, doc, signer, "sig.commitment", "commitment_signature", canonicalJSON(h), said("header_signature"));
  } else if (!allowUnsigned) checks.fail("sig.commitment", null, "commitment_signature", said("present"), said("missing"));
  else checks.notes["sig.commitment"] = "unsigned (allowed): nothing shows that the server promised this header before the client seeds";
  return { keys, signer, trusted: trusted !== null, signed };
}

/** sig.final (checked last, over the whole document without its signature). */
export async function checkFinalSignature(checks, doc, signer, allowUnsigned) {
  if (!has(doc, "signature")) {
    if (doc.final === null) return; // a game in progress is signed once it is over
    if (!allowUnsigned) checks.fail("sig.final", null, "signature", said("present"), said("missing"));
    else checks.notes["sig.final"] = "unsigned (allowed): the dice and scores re-derive, but nothing shows that the server sent this log";
    return;
  }
  const unsigned = {};
  for (const k of Object.keys(doc)) if (k !== "signature") unsigned[k] = doc[k];
  await checkSignature(checks, doc, signer, "sig.final", "signature", canonicalJSON(unsigned), said("log_signature"));
}

async function checkSignature(checks, doc, signer, check, name, text, wanted) {
  const sig = doc[name];
  const verdict = /^[0-9a-f]{128}$/.test(sig) ? await signedBy(signer, sig, enc.encode(text)) : false;
  if (verdict === null) checks.notChecked(check, "this browser cannot check Ed25519 signatures: run fairdice-verify game.json");
  else if (!verdict) checks.fail(check, null, name, wanted, sig);
  checks.passed(check);
}
