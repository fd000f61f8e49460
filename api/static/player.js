// This browser's seats in one game, and the commands they send (SPEC §4.3, §5.5, §5.7). A seat is kept as
// {token, key?, salt?, seed_commitment?, receipt?} (store.js seatsOf): its key pair, its salt and promise in a
// game of several humans, and its receipt, all made once, kept before anything is sent, and sent unchanged
// however often the server refuses (a server that could make a player choose again would choose the dice).
//
// Every command is the event the server will write, restricted to what the player chose (signing.js
// commandOf): the turn and roll numbers are counted from the history this page shows, never taken from the
// server. A seat with a key signs it over that history (history.js), after checking that each event of this
// browser's seats in it carries their valid signature; a refusal because the history moved on meanwhile
// (409 stale_history) is met by showing the new events and signing the same command again.

import { api, ApiProblem } from "./api.js";
import { seedCommitment } from "./verify/scheme.js";
import { makePlayerKey, randomHex, signCommand, SIGNED_VERSION } from "./signing.js";
import { makeReceipt } from "./verification.js";

const SALT_BYTES = 32;
/** How often one command is signed again over a history that moved on before the player's command arrived. */
const STALE_RETRIES = 3;

const ROUTES = { client_seed_commit: "client-seed", client_seed: "client-seed", roll: "roll", score: "score", abandon: "abandon" };

/** The seats of `seats` ({seat: kept}) this browser plays, in seat order. */
export const heldSeats = (seats) => Object.keys(seats).map(Number).filter((s) => seats[s] && seats[s].token).sort((a, b) => a - b);

/** {seat: public key hex} of the seats that sign. */
export function publicKeys(seats) {
  return Object.fromEntries(Object.entries(seats).filter(([, k]) => k && k.key).map(([s, k]) => [s, k.key.public_key]));
}

/** The human seats of a header. */
export const humanSeats = (header) => header.seats.map((s, i) => (s.type === "human" ? i : null)).filter((i) => i !== null);

/** Whether a game takes commitments to its client seeds first (version 2 on, two or more humans: SPEC §4.3). */
export const commitsSeeds = (version, header) => version >= 2 && humanSeats(header).length >= 2;

/**
 * What `seat` sends next before play, from the events shown: "commit", "reveal", "seed", or null (sent, or
 * waiting for the other humans' commitments).
 */
export function seedStep(events, header, version, seat) {
  const sent = (type, s) => events.some((e) => e.type === type && e.seat === s);
  if (sent("client_seed", seat)) return null;
  if (!commitsSeeds(version, header)) return "seed";
  if (!sent("client_seed_commit", seat)) return "commit";
  return humanSeats(header).every((s) => sent("client_seed_commit", s)) ? "reveal" : null;
}

/** The human seats whose commitment or seed the game still waits for (from the events shown). */
export function awaitedSeats(events, header, version) {
  const humans = humanSeats(header);
  const lacking = (type) => humans.filter((s) => !events.some((e) => e.type === type && e.seat === s));
  const uncommitted = commitsSeeds(version, header) ? lacking("client_seed_commit") : [];
  return uncommitted.length ? uncommitted : lacking("client_seed");
}

// ------------------------------------------------------------------ commands

const turnOf = (events, seat) => 1 + events.filter((e) => e.type === "score" && e.seat === seat).length;

export function rollCommand(events, seat, hold) {
  const turn = turnOf(events, seat);
  const roll = 1 + events.filter((e) => e.type === "roll" && e.seat === seat && e.turn === turn).length;
  return { type: "roll", seat, turn, roll, hold };
}

export const scoreCommand = (events, seat, category) => ({ type: "score", seat, turn: turnOf(events, seat), category });

export const abandonCommand = (seat) => ({ type: "abandon", seat, reason: "player" });

/** A seat's commitment, reveal or client seed (`step` of seedStep), from what was kept for it. */
export function seedCommand(step, seat, kept) {
  const key = kept.key ? { player_key: kept.key.public_key } : {};
  if (step === "commit") return { type: "client_seed_commit", seat, commitment: kept.seed_commitment, ...key };
  const salt = step === "reveal" ? { salt: kept.salt } : {};
  return { type: "client_seed", seat, client_seed: kept.receipt.client_seed, ...key, ...salt };
}

/** The request body of a command: what the server needs to write its event (it adds what it computes). */
function requestBody(command) {
  const { type, seat, turn, roll, reason, ...rest } = command; // (the seat, turn, roll and reason the server knows)
  return rest;
}

// ------------------------------------------------------------------ a seat's seed, key and receipt

/**
 * A seat ready to send its client seed (or its commitment): its key pair (version 3), its salt and promise (a
 * game of several humans), and its receipt, made after checking the signed header. Made once: a seat already
 * prepared is returned as it is, so the very same seed, key and salt go again.
 */
export async function prepareSeat(kept, { signed, gameId, seat, commitment, trustedKeys, seed, version, header }) {
  if (kept.receipt) return kept;
  const key = version >= SIGNED_VERSION ? await makePlayerKey() : null;
  const receipt = await makeReceipt({ signed, gameId, seat, commitment, trustedKeys, seed, logVersion: version,
    playerKey: key ? key.public_key : null });
  const out = { ...kept, receipt, ...(key ? { key } : {}) };
  if (!commitsSeeds(version, header)) return out;
  const salt = randomHex(SALT_BYTES);
  return { ...out, salt, seed_commitment: await seedCommitment(salt, seed, key ? key.public_key : null) };
}

// ------------------------------------------------------------------ sending

/** Whether `seat` signs `command`: it has a key, and the command brings it (its first) or the server has it. */
function signs(history, seats, seat, command) {
  const key = seats[seat].key;
  return !!key && (command.player_key === key.public_key || history.events.some((e) => e.seat === seat && e.player_key === key.public_key));
}

/**
 * Send `command` for `seat` ({token, key?}) over the history the page shows; resolves to the server's answer.
 * `seats`: every seat this browser plays (their events are checked before signing). `catchUp()`: fetch, check
 * and show the events the page missed, after a 409 stale_history (then the same command is signed again).
 */
export async function sendCommand({ history, seats, seat, command, catchUp }) {
  const kept = seats[seat];
  for (let attempt = 1; ; attempt++) {
    const body = requestBody(command);
    if (signs(history, seats, seat, command)) {
      await history.checkOwnEvents(publicKeys(seats));
      const n = history.count;
      body.player_signature = await signCommand(kept.key, history.gameId, n, history.head, command);
      body.event_count = n;
    }
    try {
      return await api.move(history.gameId, kept.token, ROUTES[command.type], body);
    } catch (err) {
      if (!(err instanceof ApiProblem && err.code === "stale_history") || attempt >= STALE_RETRIES) throw err;
      await catchUp();
    }
  }
}
