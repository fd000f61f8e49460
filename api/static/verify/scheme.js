// The derivation of SPEC §2: every die, roll-off die and bot tie-break is HMAC-SHA256 of the revealed server seed
// over a message naming the game, its client seeds and the number's place; the server seed's commitment, and a
// seat's commitment to its client seed.

import { bytesToHex, concat, enc, field, hexToBytes, sha256Hex, subtle, u32 } from "./bytes.js";
import { DICE } from "./rules.js";

export const SCHEME = "fairdice/v1";

/** msg(purpose, n1, n2, ...) of SPEC §2.3, without the block counter. */
export function message(purpose, gameId, clientSeeds, numbers) {
  return concat([
    field(SCHEME), field(purpose), field(gameId), u32(clientSeeds.length),
    ...clientSeeds.map(field), ...numbers.map(u32),
  ]);
}

/** An HMAC-SHA256 key made from the raw server seed (bytes or hex). */
export async function hmacKey(serverSeed) {
  const raw = typeof serverSeed === "string" ? hexToBytes(serverSeed) : serverSeed;
  return subtle().importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** block(i) = HMAC-SHA256(server_seed, msg || u32(i)). */
export async function block(key, msg, i) {
  return new Uint8Array(await subtle().sign("HMAC", key, concat([msg, u32(i)])));
}

/**
 * Draw `count` integers uniform in 0..bound-1 from the byte stream of `msg`:
 * bytes >= 256 - 256 % bound are rejected. Returns the values, every byte read
 * (rejected ones included) and the rejected bytes.
 */
export async function uniformInts(key, msg, bound, count) {
  if (!(bound >= 1 && bound <= 256)) throw new Error("bound must be 1..256");
  const limit = 256 - (256 % bound);
  const values = [];
  const read = [];
  const rejected = [];
  for (let i = 0; values.length < count; i++) {
    const b = await block(key, msg, i);
    for (const byte of b) {
      if (values.length === count) break;
      read.push(byte);
      if (byte < limit) values.push(byte % bound);
      else rejected.push(byte);
    }
  }
  return { values, bytesRead: new Uint8Array(read), rejected };
}

/** Five dice (faces 1..6) for a message. */
export async function fiveDice(key, msg) {
  const { values } = await uniformInts(key, msg, 6, DICE);
  return values.map((v) => v + 1);
}

/** hex(SHA-256(server_seed)): the commitment of a seed given as hex. */
export async function commitmentOf(serverSeedHex) {
  return sha256Hex(hexToBytes(serverSeedHex));
}

/**
 * A seat's commitment to its client seed (SPEC §4.3), salt and key given as hex:
 * hex(SHA-256(salt || UTF-8(client_seed))) in version 2, hex(SHA-256(salt || player_key || UTF-8(client_seed))) in
 * version 3, where a seat without a key (null) adds no bytes.
 */
export async function seedCommitment(saltHex, clientSeed, playerKeyHex = null) {
  const key = playerKeyHex === null ? new Uint8Array(0) : hexToBytes(playerKeyHex);
  return sha256Hex(concat([hexToBytes(saltHex), key, enc.encode(clientSeed)]));
}

/** The numbers of one game: its dice, roll-off dice and bot tie-breaks (SPEC §2.3). */
export class Deriver {
  constructor(key, gameId, clientSeeds) {
    this.key = key;
    this.gameId = gameId;
    this.clientSeeds = clientSeeds;
  }

  roll(seat, turn, roll) {
    return fiveDice(this.key, message("roll", this.gameId, this.clientSeeds, [seat, turn, roll]));
  }

  rolloff(round, seat) {
    return fiveDice(this.key, message("rolloff", this.gameId, this.clientSeeds, [round, seat]));
  }

  async tiebreak(seat, turn, roll, k) {
    const msg = message("tiebreak", this.gameId, this.clientSeeds, [seat, turn, roll]);
    return (await uniformInts(this.key, msg, k, 1)).values[0];
  }
}

/**
 * Everything SPEC §8.1 lists for one derivation vector, recomputed:
 * {commitment, message, block0, block1 (when the draw reads it), bytes_read, rejected, values}.
 * A roll or a roll-off draws five dice (values are faces, value + 1); a tie-break draws
 * `count` integers (one, in the game).
 */
export async function deriveVector(v) {
  const key = await hmacKey(v.server_seed);
  const msg = message(v.purpose, v.game_id, v.client_seeds, v.numbers);
  const dice = v.purpose === "roll" || v.purpose === "rolloff";
  const drawn = await uniformInts(key, msg, v.bound, v.count ?? (dice ? DICE : 1));
  const out = {
    commitment: await commitmentOf(v.server_seed),
    message: bytesToHex(msg),
    block0: bytesToHex(await block(key, msg, 0)),
    bytes_read: bytesToHex(drawn.bytesRead),
    rejected: drawn.rejected,
    values: dice ? drawn.values.map((x) => x + 1) : drawn.values,
  };
  if (drawn.bytesRead.length > 32) out.block1 = bytesToHex(await block(key, msg, 1));
  return out;
}
