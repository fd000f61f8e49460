// The optimal bot of SPEC §4.6, for the page: its table, given as the canonical bytes and held to the digest
// the published bot identity commits to (the log's header names that identity, so a server cannot pass off
// another table), and each decision solved from the table values of the states the turn can reach, in the
// same exact integers (units of 2^-29 point) the table was made in. An independent implementation, as
// verifier/optimal.py is: it shares nothing with fairdice/ but SPEC.md.
//
// Every intermediate value is an integer below 2^53, so JavaScript's numbers hold it exactly; the last step of
// a decision is the binary64 division SPEC §4.6 gives.

import { sha256Hex } from "./bytes.js";
import { KEEPS, KEEP_INDEX, ROLLS, ROLL_INDEX, holdCandidates, PUBLISHED_BOTS } from "./bots.js";
import { CATEGORIES, DICE, UPPER, isUpper, scoreOnCard, upperBonus, yahtzeeBonus } from "./rules.js";
import { UnusableInput } from "./strictjson.js";

const SCALE = 2 ** 29; // one point in table units
const THRESHOLD = 63; // upper totals are kept capped here
const OUTCOMES = 7776; // 6^5
const TIE_TOLERANCE = 1e-9;
const FIVE_ALIKE_AXIS = { classic13: "yahtzee" }; // the box whose 50 sets the table's third axis
const TURNS_KEPT = 4096; // solved turns kept per table (a game meets at most 13 × 6 × 2 states)

/** [2^boxes, 64, 2 for classic13 else 1]: the table's shape (SPEC §4.6). */
export function tableShape(rules) {
  return [2 ** CATEGORIES[rules].length, THRESHOLD + 1, FIVE_ALIKE_AXIS[rules] ? 2 : 1];
}

/** The first line of a table's canonical bytes, its line feed included. */
export function tableHeader(rules) {
  return `fairdice-optimal/1 ${rules} int64-le ${tableShape(rules).join("x")} scale=2^29\n`;
}

/** Bytes of any of the forms a caller may hold them in, as a Uint8Array (no copy). */
function asBytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null;
}

/**
 * The `tables` option of verifyLog: {rules id: the canonical bytes of its optimal table}. Each is checked
 * against the published digest (PUBLISHED_BOTS.optimal), which the log's bot identity commits to: a table
 * of another digest, or of a rule set that has none, is refused (UnusableInput "bad_table", as fairdice-verify
 * refuses it with exit 2). Resolves to {rules: OptimalTable}.
 */
export async function readTables(tables) {
  const out = {};
  if (tables === undefined || tables === null) return out;
  if (typeof tables !== "object" || Array.isArray(tables)) {
    throw new UnusableInput("the optimal tables are not given as {rules: bytes}", "bad_table");
  }
  const digests = PUBLISHED_BOTS.optimal.params.table_sha256;
  for (const [rules, data] of Object.entries(tables)) {
    const bytes = asBytes(data);
    if (!Object.prototype.hasOwnProperty.call(digests, rules)) {
      throw new UnusableInput(`an optimal table for ${rules}, which is not a rule set`, "bad_table");
    }
    if (!bytes) throw new UnusableInput(`the optimal ${rules} table is not bytes`, "bad_table");
    const found = await sha256Hex(bytes);
    if (found !== digests[rules]) {
      throw new UnusableInput(`the optimal ${rules} table given has SHA-256 ${found}, not the published ${digests[rules]} ` +
        "that the log's bot identity commits to (SPEC §4.6)", "bad_table");
    }
    out[rules] = new OptimalTable(rules, bytes); // the digest covers the header line, so its layout is the published one
  }
  return out;
}

/** One rule set's table, its digest checked: V[state] in units of 2^-29 point, and the turns solved from it. */
export class OptimalTable {
  constructor(rules, bytes) {
    const head = tableHeader(rules).length;
    this.rules = rules;
    this.view = new DataView(bytes.buffer, bytes.byteOffset + head, bytes.byteLength - head);
    this.flags = tableShape(rules)[2];
    this.turns = new Map();
  }

  /** V at (mask, upper, flag). */
  value(mask, upper, flag) {
    return Number(this.view.getBigInt64(((mask * (THRESHOLD + 1) + upper) * this.flags + flag) * 8, true));
  }

  /** (mask of filled boxes, upper total capped at 63, 1 when classic13's yahtzee box holds 50) of a card. */
  state(boxes) {
    let mask = 0;
    let upper = 0;
    CATEGORIES[this.rules].forEach((c, i) => {
      const v = boxes.get(c);
      if (v === null) return;
      mask += 2 ** i;
      if (isUpper(c)) upper += v;
    });
    const axis = FIVE_ALIKE_AXIS[this.rules];
    return [mask, Math.min(THRESHOLD, upper), axis && boxes.get(axis) === 50 ? 1 : 0];
  }

  /** V[next(s, c, p)]: the state after writing `points` into `category`. */
  next([mask, upper, flag], category, points) {
    const bit = 2 ** CATEGORIES[this.rules].indexOf(category);
    if (isUpper(category)) return this.value(mask + bit, Math.min(THRESHOLD, upper + points), flag);
    if (category === FIVE_ALIKE_AXIS[this.rules]) return this.value(mask + bit, upper, points === 50 ? 1 : 0);
    return this.value(mask + bit, upper, flag);
  }

  /** The turn on this card, solved once per state. */
  turn(boxes) {
    const state = this.state(boxes);
    const key = state.join(",");
    let turn = this.turns.get(key);
    if (!turn) {
      if (this.turns.size >= TURNS_KEPT) this.turns.clear();
      this.turns.set(key, turn = new Turn(this, boxes, state));
    }
    return turn;
  }
}

/** gain · 2^29 + V[next] of every legal box for every roll (252 × the legal boxes), and R3: each roll's best. */
function boxValues(table, boxes, state) {
  const rules = table.rules;
  const upperSum = UPPER.reduce((a, c) => a + (boxes.get(c) || 0), 0);
  const open = CATEGORIES[rules].filter((c) => boxes.get(c) === null);
  const perRoll = ROLLS.map((roll) => {
    const bonus = yahtzeeBonus(rules, boxes, roll);
    const out = [];
    for (const c of open) {
      const o = scoreOnCard(rules, boxes, roll, c, false);
      if (!o) continue;
      const gain = o[0] + bonus + upperBonus(rules, upperSum, c, o[0]);
      out.push([c, o[0], gain * SCALE + table.next(state, c, o[0])]);
    }
    return out;
  });
  return { perRoll, best: perRoll.map((row) => Math.max(...row.map((b) => b[2]))) };
}

/** K_R for every keep (462): 6^|k| · S(k), S(r) = R(r) for a roll, S(k) = S(k ∪ {1}) + ... + S(k ∪ {6}). */
function keepSums(rollValues) {
  const s = new Array(KEEPS.length);
  for (let k = KEEPS.length - 1; k >= 0; k--) { // larger keeps come later in KEEPS
    const keep = KEEPS[k];
    if (keep.length === DICE) {
      s[k] = rollValues[ROLL_INDEX.get(keep.join(""))];
      continue;
    }
    let sum = 0;
    for (let f = 1; f <= 6; f++) sum += s[KEEP_INDEX.get([...keep, f].sort().join(""))];
    s[k] = sum;
  }
  return s.map((v, k) => v * 6 ** KEEPS[k].length);
}

/** rhe(a, b): a / b rounded to the nearest integer, a half to the even one (a, b non-negative integers < 2^53). */
function roundHalfEven(a, b) {
  let q = Math.floor(a / b);
  let r = a - q * b;
  while (r < 0) { q -= 1; r += b; }
  while (r >= b) { q += 1; r -= b; }
  if (2 * r > b || (2 * r === b && q % 2 === 1)) q += 1;
  return q;
}

/** E(R): each roll's value one roll earlier, rhe(the best keep sum inside the roll, 7776). */
function earlier(sums) {
  return ROLLS.map((roll) => {
    let best = -Infinity;
    for (let mask = 0; mask < 32; mask++) {
      const v = sums[KEEP_INDEX.get(roll.filter((_, p) => mask >> p & 1).join(""))];
      if (v > best) best = v;
    }
    return roundHalfEven(best, OUTCOMES);
  });
}

/** The optimal bot's turn on one card: every legal box of every roll with its value, and every keep's sum with
 * one roll (K_R3) and with two rolls (K_R2) to come. */
class Turn {
  constructor(table, boxes, state) {
    this.boxes = boxValues(table, boxes, state);
    const one = keepSums(this.boxes.best);
    this.holdSums = [null, one, keepSums(earlier(one))];
  }
}

/** The optimal bot's candidates after roll `roll` (1..3) with `dice`, in canonical order, each valued in points as
 * SPEC §4.6 says: [{action: "roll", hold, value} ..., {action: "score", category, value} ...]. */
export function optimalCandidates(table, boxes, dice, roll) {
  const turn = table.turn(boxes);
  const r = ROLL_INDEX.get([...dice].sort().join(""));
  const candidates = [];
  if (roll < 3) {
    const sums = turn.holdSums[3 - roll];
    for (const [hold, k] of holdCandidates(dice)) candidates.push({ action: "roll", hold, value: sums[k] / OUTCOMES / SCALE });
  }
  for (const [category, , v] of turn.boxes.perRoll[r]) candidates.push({ action: "score", category, value: v / SCALE });
  return candidates;
}

/** The optimal bot's decision after roll `roll` with `dice`: {action: "roll", hold} or {action: "score", category},
 * the best of optimalCandidates, ties within 1e-9 broken by `tiebreak` (SPEC §4.5). */
export async function optimalDecision(table, boxes, dice, roll, tiebreak) {
  const candidates = optimalCandidates(table, boxes, dice, roll);
  if (!candidates.length) throw new Error("no legal decision");
  const best = Math.max(...candidates.map((c) => c.value));
  const tied = candidates.filter((c) => c.value >= best - TIE_TOLERANCE);
  return tied[tied.length > 1 ? await tiebreak(tied.length) : 0];
}
