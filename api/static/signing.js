// The player's side of protocol 3 (SPEC §5.7): every human seat this browser plays has an Ed25519 key pair made
// here with Web Crypto, kept with the game in the browser's storage (store.js), and signs every command of the
// seat over the history the page itself has shown (the chain head h_n of SPEC §5.6, history.js):
//
//     player_signature = Ed25519(field("fairdice-move/v3") || field(game_id) || u32(n) || h_n || canonical(command))
//
// The command and those bytes are verify/players.js's (moveCommand, moveBytes): the page signs exactly what its
// verifier checks. No DOM and no fetch here: keys, and the signatures they make.

import { bytesToHex } from "./verify/bytes.js";
import { ed25519Verify } from "./verify/keys.js";
import { moveBytes, moveCommand } from "./verify/players.js";

/** The first log version whose human seats sign their commands. */
export const SIGNED_VERSION = 3;
const ED25519 = { name: "Ed25519" };

export function randomHex(bytes) {
  const b = new Uint8Array(bytes);
  crypto.getRandomValues(b);
  return bytesToHex(b);
}

/** A new key pair for one seat: {public_key (64 hex: the raw 32 bytes), private_jwk (to keep in storage)}. */
export async function makePlayerKey() {
  const pair = await crypto.subtle.generateKey(ED25519, true, ["sign", "verify"]);
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  return { public_key: bytesToHex(raw), private_jwk: await crypto.subtle.exportKey("jwk", pair.privateKey) };
}

const imported = new Map(); // public key -> CryptoKey, so each kept key is imported once per page

async function privateKeyOf(kept) {
  if (!imported.has(kept.public_key)) {
    imported.set(kept.public_key, await crypto.subtle.importKey("jwk", kept.private_jwk, ED25519, false, ["sign"]));
  }
  return imported.get(kept.public_key);
}

/** The player_signature (128 hex) of `command` made after the `n` events whose chain head is `digest`. */
export async function signCommand(kept, gameId, n, digest, command) {
  const signature = await crypto.subtle.sign(ED25519, await privateKeyOf(kept), moveBytes(gameId, n, digest, command));
  return bytesToHex(new Uint8Array(signature));
}

/** Whether `signatureHex` is `publicKeyHex`'s signature of the command of `event`, made after n events with head `digest`. */
export async function signedBy(publicKeyHex, signatureHex, gameId, n, digest, event) {
  if (typeof signatureHex !== "string" || !/^[0-9a-f]{128}$/.test(signatureHex)) return false;
  return (await ed25519Verify(publicKeyHex, signatureHex, moveBytes(gameId, n, digest, moveCommand(event)))) === true;
}
