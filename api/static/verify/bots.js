// The published bots of SPEC §4.5: their identities (id, version and the hash of their parameters) and the
// decisions of greedy and ev, as fairdice/bots/policies.py plays them: candidates in canonical order (holds by
// position mask, then boxes in table order), ties within 1e-9 of the best broken by `tiebreak`. Every value is a
// multiple of 6^-10, so a tie is exact and no rounding can make or break one. (optimal is optimal.js: it needs
// its table, which the page fetches and holds to the published digest.)

import { enc, sha256Hex } from "./bytes.js";
import { canonicalJSON } from "./canonical.js";
import { CATEGORIES, DICE, UPPER, countsOf, handPoints, isUpper, scoreOnCard, upperBonus, yahtzeeBonus } from "./rules.js";

/** The boxes that score fixed points (greedy scores such a box at once when it is made). */
const FIXED_POINTS = {
  yacht: ["small_straight", "large_straight", "yacht"],
  yatzy: ["small_straight", "large_straight", "yatzy"],
  classic13: ["full_house", "small_straight", "large_straight", "yahtzee"],
};

const TIE_TOLERANCE = 1e-9;
const FACES = [1, 2, 3, 4, 5, 6];

/** Sorted face multisets of `size` dice (combinations with replacement, lexicographic). */
function multisets(size, from = 1) {
  if (size === 0) return [[]];
  const out = [];
  for (let f = from; f <= 6; f++) for (const rest of multisets(size - 1, f)) out.push([f, ...rest]);
  return out;
}

/** The 252 rolls and the 462 keeps (sorted faces; keeps by size, then lexicographic), and their indices by joined faces. */
export const ROLLS = multisets(DICE);
export const ROLL_INDEX = new Map(ROLLS.map((r, i) => [r.join(""), i]));
export const KEEPS = [0, 1, 2, 3, 4, 5].flatMap((n) => multisets(n));
export const KEEP_INDEX = new Map(KEEPS.map((k, i) => [k.join(""), i]));
let turnSpace = null;

function factorial(n) {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

/** Probability that fresh dice show exactly this multiset. */
function multisetProbability(faces) {
  let ways = factorial(faces.length);
  for (const n of countsOf(faces)) ways /= factorial(n);
  return ways / 6 ** faces.length;
}

/** Every sub-multiset of a sorted roll (the empty one and the roll itself included), as keep indices. */
function subKeeps(roll) {
  const subs = new Set();
  for (let mask = 0; mask < 32; mask++) subs.add(KEEP_INDEX.get(roll.filter((_, p) => mask >> p & 1).join("")));
  return [...subs];
}

/** TRANSITION[k]: the rolls that keeping k and rerolling the rest gives, with their probabilities. */
function space() {
  if (!turnSpace) {
    const transition = KEEPS.map((keep) => multisets(DICE - keep.length).map((fresh) => [
      ROLL_INDEX.get([...keep, ...fresh].sort().join("")), multisetProbability(fresh)]));
    turnSpace = { transition, subkeeps: ROLLS.map(subKeeps) };
  }
  return turnSpace;
}

const GAINS = new Map(); // per card: the immediate gain of every legal box for every roll
const KEEP_VALUES = new Map(); // per card: ev's value of every hold with one and with two rolls left

function cardKey(rules, boxes, upperFirst) {
  return `${rules}|${upperFirst}|${CATEGORIES[rules].map((c) => boxes.get(c)).join(",")}`;
}

/** Immediate gain (points, upper bonus reached, Yahtzee bonus) of each open box for every roll; -Infinity where illegal. */
function gainMatrix(rules, boxes, upperFirst) {
  const key = cardKey(rules, boxes, upperFirst);
  let m = GAINS.get(key);
  if (m) return m;
  let ids = CATEGORIES[rules].filter((c) => boxes.get(c) === null);
  if (upperFirst && ids.some(isUpper)) ids = ids.filter(isUpper);
  const upperSum = UPPER.reduce((a, c) => a + (boxes.get(c) || 0), 0);
  const rows = ROLLS.map((roll) => {
    const points = handPoints(rules, roll);
    const yb = yahtzeeBonus(rules, boxes, roll);
    return ids.map((c) => {
      const o = scoreOnCard(rules, boxes, roll, c, upperFirst, points);
      return o ? o[0] + yb + upperBonus(rules, upperSum, c, o[0]) : -Infinity;
    });
  });
  m = { ids, rows };
  GAINS.set(key, m);
  return m;
}

function expectation(transition, values) {
  return transition.map((row) => row.reduce((a, [r, p]) => a + p * values[r], 0));
}

/** ev: the expected best gain of every hold with one and with two rolls left in this turn. */
function keepValues(rules, boxes, upperFirst) {
  const key = cardKey(rules, boxes, upperFirst);
  let kv = KEEP_VALUES.get(key);
  if (kv) return kv;
  const { transition, subkeeps } = space();
  const last = gainMatrix(rules, boxes, upperFirst).rows.map((row) => Math.max(...row));
  const oneLeft = expectation(transition, last);
  const secondLast = last.map((v, r) => Math.max(v, ...subkeeps[r].map((k) => oneLeft[k])));
  kv = [oneLeft, expectation(transition, secondLast)];
  KEEP_VALUES.set(key, kv);
  return kv;
}

/** Every distinct hold that rerolls a die: [positions, keep index], the lowest positions showing it, by mask. */
export function holdCandidates(dice) {
  const seen = new Map();
  for (let mask = 0; mask < 31; mask++) {
    const kept = dice.filter((_, p) => mask >> p & 1).sort();
    const wanted = countsOf(kept);
    const positions = [];
    dice.forEach((d, p) => {
      if (wanted[d] > 0) {
        wanted[d] -= 1;
        positions.push(p);
      }
    });
    const canonical = positions.reduce((a, p) => a | (1 << p), 0);
    if (!seen.has(canonical)) seen.set(canonical, [positions, KEEP_INDEX.get(kept.join(""))]);
  }
  return [...seen].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
}

function scoreCandidates(rules, boxes, dice, upperFirst) {
  const { ids, rows } = gainMatrix(rules, boxes, upperFirst);
  const row = rows[ROLL_INDEX.get([...dice].sort().join(""))];
  return ids.map((category, j) => ({ action: "score", category, value: row[j] })).filter((c) => c.value !== -Infinity);
}

const POLICIES = {
  greedy(rules, boxes, dice, roll, upperFirst) {
    const scores = scoreCandidates(rules, boxes, dice, upperFirst);
    if (roll === 3 || scores.some((c) => FIXED_POINTS[rules].includes(c.category) && c.value > 0)) return scores;
    const c = countsOf(dice);
    const face = FACES.reduce((best, f) => (c[f] > 0 && (c[f] > c[best] || (c[f] === c[best] && f > best)) ? f : best), dice[0]);
    const hold = dice.flatMap((d, p) => (d === face ? [p] : []));
    return hold.length === DICE ? scores : [{ action: "roll", hold, value: Infinity }];
  },
  ev(rules, boxes, dice, roll, upperFirst) {
    const scores = scoreCandidates(rules, boxes, dice, upperFirst);
    if (roll === 3) return scores;
    const values = keepValues(rules, boxes, upperFirst)[3 - roll - 1];
    return [...holdCandidates(dice).map(([hold, k]) => ({ action: "roll", hold, value: values[k] })), ...scores];
  },
};

/** The decision of bot `id` after roll `roll`: {action: "roll", hold} or {action: "score", category}. */
export async function botDecision(id, rules, boxes, dice, roll, upperFirst, tiebreak) {
  const candidates = POLICIES[id](rules, boxes, dice, roll, upperFirst);
  if (!candidates.length) throw new Error("no legal decision");
  const best = Math.max(...candidates.map((c) => c.value));
  const tied = candidates.filter((c) => c.value >= best - TIE_TOLERANCE);
  return tied[tied.length > 1 ? await tiebreak(tied.length) : 0];
}

/** The published bots: {id: {version, params}}; the hash is SHA-256 of canonical {id, version, params}. */
export const PUBLISHED_BOTS = Object.freeze({
  greedy: { version: "1", params: {} },
  ev: { version: "1", params: {} },
  optimal: {
    version: "1",
    params: {
      table_sha256: { // fairdice/bots/tables/manifest.json (a Node test checks this copy)
        classic13: "c5af1b3cc3f5220933a02df699c8d0a6bb9e80a2590e0f125a12f6f05384fab9",
        yacht: "7470ab98086c464a58f9ca4bf43a65ea1b71c631c3e20fbedc95c7cae26d07d1",
        yatzy: "2444817579155613f19f42757e2a253a9906b0ee983ecb5fe25e7969f11eff5d",
      },
    },
  },
});

let publishedHashes = null;

/** {id: hash} of the published bots. */
export async function publishedBotHashes() {
  if (!publishedHashes) {
    const entries = await Promise.all(Object.entries(PUBLISHED_BOTS).map(async ([id, { version, params }]) =>
      [id, await sha256Hex(enc.encode(canonicalJSON({ id, version, params })))]));
    publishedHashes = Object.fromEntries(entries);
  }
  return publishedHashes;
}
