// The rules of SPEC §3: the three rule sets' boxes and scoring, the upper bonus, classic13's forced joker and
// Yahtzee bonus, and the house rule upper_first. A card is a Map category -> points, null while the box is open.

import { has } from "./json.js";

export const DICE = 5;

export const UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"];
export const CATEGORIES = Object.freeze({
  yacht: [...UPPER, "choice", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yacht"],
  yatzy: [...UPPER, "one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "small_straight",
    "large_straight", "full_house", "chance", "yatzy"],
  classic13: [...UPPER, "three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight",
    "yahtzee", "chance"],
});
const UPPER_BONUS = { yacht: 35, yatzy: 50, classic13: 35 };
const UPPER_BONUS_AT = 63;
const YAHTZEE_BONUS = 100;
const JOKER_POINTS = { full_house: 25, small_straight: 30, large_straight: 40 }; // others: the sum of the dice
const SMALL_RUNS = [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]];
const LARGE_RUNS = [[1, 2, 3, 4, 5], [2, 3, 4, 5, 6]];
export const isUpper = (category) => UPPER.includes(category);

export function countsOf(dice) {
  const c = [0, 0, 0, 0, 0, 0, 0];
  for (const d of dice) c[d] += 1;
  return c;
}
export const sumOf = (dice) => dice.reduce((a, d) => a + d, 0);
const hasRun = (c, runs) => runs.some((run) => run.every((f) => c[f] > 0));
const shapeOf = (c) => c.filter((n) => n).sort((a, b) => a - b).join(",");
/** Yatzy's sets: `sets` different faces with at least `size` dice each, the highest faces. */
function setsOf(c, size, sets) {
  const faces = [6, 5, 4, 3, 2, 1].filter((f) => c[f] >= size);
  return faces.length < sets ? 0 : size * faces.slice(0, sets).reduce((a, f) => a + f, 0);
}

const LOWER_SCORING = {
  yacht: {
    choice: (c, total) => total,
    four_of_a_kind: (c, total) => (Math.max(...c) >= 4 ? total : 0),
    full_house: (c, total) => (["2,3", "5"].includes(shapeOf(c)) ? total : 0),
    small_straight: (c) => (hasRun(c, SMALL_RUNS) ? 15 : 0),
    large_straight: (c) => (hasRun(c, LARGE_RUNS) ? 30 : 0),
    yacht: (c) => (Math.max(...c) === 5 ? 50 : 0),
  },
  yatzy: {
    one_pair: (c) => setsOf(c, 2, 1),
    two_pairs: (c) => setsOf(c, 2, 2),
    three_of_a_kind: (c) => setsOf(c, 3, 1),
    four_of_a_kind: (c) => setsOf(c, 4, 1),
    small_straight: (c) => ([1, 2, 3, 4, 5].every((f) => c[f] === 1) ? 15 : 0),
    large_straight: (c) => ([2, 3, 4, 5, 6].every((f) => c[f] === 1) ? 20 : 0),
    full_house: (c, total) => (shapeOf(c) === "2,3" ? total : 0),
    chance: (c, total) => total,
    yatzy: (c) => (Math.max(...c) === 5 ? 50 : 0),
  },
  classic13: {
    three_of_a_kind: (c, total) => (Math.max(...c) >= 3 ? total : 0),
    four_of_a_kind: (c, total) => (Math.max(...c) >= 4 ? total : 0),
    full_house: (c) => (shapeOf(c) === "2,3" ? 25 : 0),
    small_straight: (c) => (hasRun(c, SMALL_RUNS) ? 30 : 0),
    large_straight: (c) => (hasRun(c, LARGE_RUNS) ? 40 : 0),
    yahtzee: (c) => (Math.max(...c) === 5 ? 50 : 0),
    chance: (c, total) => total,
  },
};

/** The normal score of `category` for five dice (no joker, no card), SPEC §3.1-§3.3. */
export function scoreBox(rules, category, dice) {
  const c = countsOf(dice);
  if (isUpper(category)) return (UPPER.indexOf(category) + 1) * c[UPPER.indexOf(category) + 1];
  const rule = LOWER_SCORING[rules] && has(LOWER_SCORING[rules], category) ? LOWER_SCORING[rules][category] : null;
  if (!rule) throw new Error(`${category} is not a category of ${rules}`);
  return rule(c, sumOf(dice));
}

const HAND_POINTS = { yacht: new Map(), yatzy: new Map(), classic13: new Map() }; // per hand: points of each category

export function handPoints(rules, dice) {
  let hand = 0; // the face counts as the digits of a base-6 number: one key per hand, whatever the order
  for (const d of dice) hand += 6 ** (d - 1);
  let row = HAND_POINTS[rules].get(hand);
  if (!row) HAND_POINTS[rules].set(hand, row = new Map(CATEGORIES[rules].map((c) => [c, scoreBox(rules, c, dice)])));
  return row;
}

/**
 * [points, joker] for recording the dice in `category` now, or null when that box is not legal:
 * filled, closed by upper_first (§3.4), or excluded by the forced joker (§3.3).
 * `boxes` maps every category of the rule set to its points, or null while open.
 */
export function scoreOnCard(rules, boxes, dice, category, upperFirst, points = null) {
  if (boxes.get(category) !== null) return null;
  const lowerClosed = upperFirst && UPPER.some((c) => boxes.get(c) === null);
  if (lowerClosed && !isUpper(category)) return null;
  if (rules === "classic13" && boxes.get("yahtzee") !== null && dice.every((d) => d === dice[0])) {
    return jokerScore(rules, boxes, dice, category, lowerClosed);
  }
  return [(points || handPoints(rules, dice)).get(category), false];
}

/** classic13's forced joker (§3.3), for a Yahtzee whose Yahtzee box is filled: its face's upper box while that is
 * open; else any lower box, at the joker's points; an upper box (for 0) only when no lower box is open. */
function jokerScore(rules, boxes, dice, category, lowerClosed) {
  const faceBox = UPPER[dice[0] - 1];
  if (boxes.get(faceBox) === null) return category === faceBox ? [5 * dice[0], false] : null;
  if (!isUpper(category)) return [has(JOKER_POINTS, category) ? JOKER_POINTS[category] : sumOf(dice), true];
  const lowerOpen = !lowerClosed && CATEGORIES[rules].some((c) => !isUpper(c) && boxes.get(c) === null);
  return lowerOpen ? null : [0, false];
}

/** Every box the dice may legally go into now, in table order: Map category -> [points, joker]. */
export function legalBoxes(rules, boxes, dice, upperFirst) {
  const out = new Map();
  for (const c of CATEGORIES[rules]) {
    const o = scoreOnCard(rules, boxes, dice, c, upperFirst);
    if (o) out.set(c, o);
  }
  return out;
}

/** The Yahtzee bonus that recording these dice earns (classic13, §3.3 item 2). */
export function yahtzeeBonus(rules, boxes, dice) {
  return rules === "classic13" && dice.every((d) => d === dice[0]) && boxes.get("yahtzee") === 50 ? YAHTZEE_BONUS : 0;
}

/** The upper bonus earned by writing `pts` into `category` when the upper boxes held `upperBefore`. */
export function upperBonus(rules, upperBefore, category, pts) {
  if (!isUpper(category)) return 0;
  return upperBefore < UPPER_BONUS_AT && UPPER_BONUS_AT <= upperBefore + pts ? UPPER_BONUS[rules] : 0;
}

function cardOf(rules, card) {
  return new Map(CATEGORIES[rules].map((c) => [c, card[c] === undefined ? null : card[c]]));
}

/**
 * The legal boxes for these dice on this card, {category: {points, yahtzee_bonus, joker}}:
 * open boxes, the house rule upper_first, and classic13's forced joker and Yahtzee bonus.
 */
export function scoreOptions(rules, card, dice, upperFirst = false) {
  const boxes = cardOf(rules, card);
  const bonus = yahtzeeBonus(rules, boxes, dice);
  const out = {};
  for (const [c, [points, joker]] of legalBoxes(rules, boxes, dice, upperFirst)) out[c] = { points, yahtzee_bonus: bonus, joker };
  return out;
}
