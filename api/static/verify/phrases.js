// The words of a failure: what the verifier wanted, or found, where no value of the log says it. The page words
// each code from its catalogues ("phrase.<code>"); the English here is for the reference's detail lines.

import { has } from "./json.js";

/**
 * What the verifier wanted, or found, where no value of the log says it ("a valid signature of the log",
 * "an open box"): a stable code and its parameters (numbers, hex, ids and arrays of them). The English is
 * here, for the reference's detail lines; the page words each code from its catalogues ("phrase.<code>").
 */
export const PHRASES = Object.freeze({
  present: "present",
  missing: "missing",
  no_such_field: "no such field",
  one_of: "one of {values}",
  an_object: "an object",
  an_array: "an array",
  hex_or_absent: "a hex string, or no such field (unsigned)",
  object_or_null: "an object, or null while the game is in progress",
  printable_ascii: "{min} to {max} printable ASCII characters",
  seats_as_specified: "{min} to {max} seats as in SPEC §5.2",
  seat_or_random: 'a seat index or "{value}"',
  seat_or_null: "a seat index or null",
  hex_digits: "{count} lowercase hex digits",
  timeout_seconds: "whole seconds, at least 1 (the server's inactivity timeout)",
  totals_per_seat: "one object of integers {parts} per seat",
  event_field: "the type SPEC §5.3 gives this field",
  no_seed_from_seat: "no client seed from that seat",
  a_trusted_key: "a trusted key: {keys}",
  header_signature: "a valid signature of the header",
  log_signature: "a valid signature of the log",
  trusted_signature: "a signature by the trusted key",
  at_most_events: "at most the log's {count} events (the server acknowledged more)",
  game_over: "a finished or abandoned game; this one is not over, so its server seed is not revealed and its dice cannot be checked",
  box_after_third_roll: "a box after the third roll",
  roll_begins_turn: "roll (a turn begins with a roll)",
  no_hold_on_first_roll: "[] on roll 1",
  hold_positions: "sorted distinct positions 0..4",
  category_of_rules: "a category of {rules}",
  an_open_box: "an open box",
  already_filled: "{category} (already filled)",
  seeds_first: "a client seed from seat(s) {seats} first",
  a_human_seat: "a human seat: {seats}",
  no_human_seat: "null (no human seat)",
  one_seed_per_seat: "one client seed per seat",
  client_seed_rule: "1 to 256 characters, none of those SPEC §2.2 excludes",
  no_seed_after_start: "no client seed once play has started",
  commitments_before_seeds: "every commitment before any client seed",
  one_commitment_per_seat: "one commitment per seat",
  commitments_first: "a commitment from seat(s) {seats} before any client seed",
  committed_seed: "the seed committed to ({commitment})",
  seed_and_salt_hash: "a seed and salt hashing to {hash}",
  no_event_after_last_box: "no event after the last box",
  no_event_after_abandon: "no event after the abandon event",
  final_block: "the final block of a game that is over",
  shown_in_progress: "what the events show: in progress ({count} boxes still open)",
  shown_not_started: "what the events show: play never started",
  shown_abandoned: "what the events show: abandoned (an abandon event)",
  abandon_event_last: "an abandon event as the last event",
  no_events: "no events",
  start_after_seeds: "start (it follows the last client seed)",
  roll_or_score: "roll or score",
  start_before_moves: "start before any roll or score",
  null_on_timeout: "null (only the server abandons on a timeout)",
  seat_not_timeout: "a seat (the server abandons only on a timeout)",
  seat_whose_turn: "seat {seat}, whose turn it is (or any seat before play)",
  rolloff_until_winner: "rounds until one seat has the highest sum",
  a_published_policy: "a published policy: {bots}",
  optimal_upper_first: "a decision of the policy, which does not play the upper-first house rule",
  policy_failed: "a decision of the policy, which failed: {error}",
  player_signature: "a valid signature by seat {seat}'s key",
  receipt_of_abandon: "a move receipt that counts this abandon",
  no_receipt_of_abandon: "you hold no receipt of this abandon",
  roll_holding: "roll {hold}",
  score_in: "score {category}",
});

/** One of PHRASES with its parameters. A class of its own, so that no value of a log can pass for one. */
export class Phrase {
  constructor(code, params = {}) {
    if (!has(PHRASES, code)) throw new Error(`no such phrase: ${code}`);
    this.code = code;
    this.params = Object.freeze({ ...params });
    Object.freeze(this);
  }

  /** The English words, as the reference writes them. */
  toString() {
    return PHRASES[this.code].replace(/\{(\w+)\}/g, (_, name) => englishParam(name, this.params[name]));
  }

  toJSON() {
    return { phrase: this.code, ...this.params };
  }
}

/** One phrase: said("an_open_box"), said("one_of", {values}). */
export const said = (code, params) => new Phrase(code, params);

function englishParam(name, value) {
  if (!Array.isArray(value)) return show(value);
  return name === "seats" || name === "hold" ? pyList(value) : value.map(show).join(", ");
}

/** A value in a detail line: a string or a phrase as it reads, any other value as JSON. */
export const show = (v) => (typeof v === "string" || v instanceof Phrase ? String(v) : JSON.stringify(v));
/** Python's str() of a list of seats, in failure texts the reference also writes. */
const pyList = (xs) => `[${xs.map((x) => (x === null ? "None" : String(x))).join(", ")}]`;
/** A move in words: a roll with its hold, or a box. */
export const moveSaid = (action, hold, category) => (action === "roll" ? said("roll_holding", { hold }) : said("score_in", { category }));
