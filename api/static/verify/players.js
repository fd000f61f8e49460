// Players' signatures (SPEC §5.7, log version 3): every command of a human seat is signed by a key only its player
// holds, over the game id, the history the player was shown (n, h_n of SPEC §5.6) and the command. A signature
// vouches for the whole history before it, so player.signature checks one signature per human seat with a key:
// that of its last event. Moves no player signed (versions 1 and 2, a seat without a key) are said to be unsigned,
// and an abandon in the player's name among them must be one the player's move receipts acknowledge.

import { concat, enc, field, u32 } from "./bytes.js";
import { canonicalJSON } from "./canonical.js";
import { has, isObject, isStr } from "./json.js";
import { ed25519Verify } from "./keys.js";
import { said } from "./phrases.js";

export const MOVE_LABEL = "fairdice-move/v3";
/** The fields of an event that are its player's command (the rest the server computes), SPEC §5.7. */
const COMMAND_FIELDS = {
  client_seed_commit: ["type", "seat", "commitment", "player_key"],
  client_seed: ["type", "seat", "client_seed", "player_key", "salt"],
  roll: ["type", "seat", "turn", "roll", "hold"],
  score: ["type", "seat", "turn", "category"],
  abandon: ["type", "seat", "reason"],
};

/** The command a player signed for an event: the event restricted to the fields the player chose. */
export function moveCommand(event) {
  return Object.fromEntries(COMMAND_FIELDS[event.type].filter((name) => has(event, name)).map((name) => [name, event[name]]));
}

/** What a player signs: field("fairdice-move/v3") || field(game_id) || u32(n) || h_n || canonical(command). */
export function moveBytes(gameId, n, digest, command) {
  return concat([field(MOVE_LABEL), field(gameId), u32(n), digest, enc.encode(canonicalJSON(command))]);
}

const humanSeats = (header) => header.seats.flatMap((s, i) => (s.type === "human" ? [i] : []));

/** The indices of each human seat's events (those a player commands), by seat. */
function eventsBySeat(doc) {
  const bySeat = new Map(humanSeats(doc.header).map((s) => [s, []]));
  doc.events.forEach((e, i) => {
    if (isObject(e) && has(COMMAND_FIELDS, e.type) && bySeat.has(e.seat)) bySeat.get(e.seat).push(i);
  });
  return bySeat;
}

/** A player's receipt that names its seat's key (version 2 of the receipt, SPEC §5.5). */
const namesAKey = (receipt) => Boolean(receipt) && has(receipt, "player_key");

/**
 * Each human seat's key in a version 3 log (SPEC §5.7), by seat: the player_key of its first event, or the
 * receipt's when the player's receipt names one for that seat (receipt.match says whether they agree); null for
 * a seat without a key. In versions 1 and 2 no seat has a key.
 */
export function seatKeys(doc, receipt) {
  const keys = new Map();
  for (const [seat, indices] of eventsBySeat(doc)) {
    const first = doc.events[indices[0]]; // (undefined when the seat has no event)
    if (doc.version < 3) keys.set(seat, null);
    else if (namesAKey(receipt) && receipt.seat === seat) keys.set(seat, receipt.player_key);
    else keys.set(seat, first && has(first, "player_key") ? first.player_key : null);
  }
  return keys;
}

/** The human seats whose moves no player signed: whoever runs the server could have written them. */
export const unsignedSeats = (keys) => [...keys].filter(([, key]) => key === null).map(([seat]) => seat);

/** An event's player_signature, null when it has none (the missing field is log.format's to report). */
const signatureOf = (e) => (has(e, "player_signature") ? e.player_signature : null);

/**
 * player.signature (version 3): every event of a human seat carries a signature exactly when the seat has a key,
 * and the signature of the seat's last event is valid by that key over its history and command (one Ed25519
 * verification per seat with a key). `digests()` gives the log's hash chain. It never stops the replay.
 */
export async function checkPlayerSignatures(checks, doc, keys, digests) {
  for (const [seat, indices] of eventsBySeat(doc)) {
    const key = keys.get(seat);
    const wanted = key === null ? null : said("player_signature", { seat });
    for (const i of indices) {
      const found = signatureOf(doc.events[i]);
      if (key === null ? found !== null : !isStr(found)) checks.fail("player.signature", i, "player_signature", wanted, found);
    }
    const last = indices[indices.length - 1];
    if (key === null || last === undefined || !isStr(signatureOf(doc.events[last]))) continue;
    const event = doc.events[last];
    const data = moveBytes(doc.header.game_id, last, (await digests())[last], moveCommand(event));
    const signed = await ed25519Verify(key, event.player_signature, data);
    if (signed === null) checks.notChecked("player.signature", "this browser cannot check Ed25519 signatures: run fairdice-verify game.json");
    else if (!signed) checks.fail("player.signature", last, "player_signature", wanted, event.player_signature);
  }
  checks.passed("player.signature");
}

/**
 * What an abandon in the player's name that no player signed is held to (SPEC §5.7): the player's move receipts
 * that held (receipt.chain), when they were given; null when there is nothing to hold it to. The player is the
 * seat of the player's receipt, or the only human seat when no receipt is given. Its abandon (event i) is
 * acknowledged by a receipt whose event count counts it (more than i events): `unacknowledged(i, event)` says
 * when none does.
 */
export function abandonWitness(doc, receipt, keys, heldReceipts) {
  if (!heldReceipts) return null;
  const humans = humanSeats(doc.header);
  const seat = receipt ? receipt.seat : humans.length === 1 ? humans[0] : undefined;
  if (seat === undefined || (seat !== null && keys.get(seat) !== null)) return null; // (a signed abandon is the player's own)
  const covered = heldReceipts.reduce((most, r) => Math.max(most, r.events), 0); // events the receipts count
  const inPlayersName = (ev) => ev.seat === seat && (seat !== null || ev.reason === "player");
  return { unacknowledged: (i, ev) => inPlayersName(ev) && covered <= i };
}
