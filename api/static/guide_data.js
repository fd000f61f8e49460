// The guide's facts that are not words: an example hand for every box of every rule set (with the score the
// rule book, SPEC.md §3, gives it), the forced joker's cases, and the order of the tips, questions and terms.
// The words are in i18n/guide.en.js and i18n/guide.zh.js. tests/node/test_guide_content.py scores every hand here
// with the core (fairdice.rules), so that the guide cannot teach a wrong score.

/** rules id -> box id -> hands [{dice, score}]: the first meets the box; a second shows a case players get wrong
 * (dice that look right and score 0, or Yacht's five alike that make a full house). */
const UPPER_HANDS = {
  ones: [{ dice: [1, 1, 3, 4, 6], score: 2 }],
  twos: [{ dice: [2, 2, 2, 5, 6], score: 6 }],
  threes: [{ dice: [3, 3, 1, 5, 6], score: 6 }],
  fours: [{ dice: [4, 4, 4, 2, 6], score: 12 }],
  fives: [{ dice: [5, 5, 1, 2, 3], score: 10 }],
  sixes: [{ dice: [6, 6, 6, 6, 2], score: 24 }],
};

export const HANDS = {
  yacht: {
    ...UPPER_HANDS,
    choice: [{ dice: [6, 5, 5, 3, 1], score: 20 }],
    four_of_a_kind: [{ dice: [4, 4, 4, 4, 2], score: 18 }, { dice: [4, 4, 4, 2, 2], score: 0 }],
    full_house: [{ dice: [5, 5, 5, 2, 2], score: 19 }, { dice: [3, 3, 3, 3, 3], score: 15 }],
    small_straight: [{ dice: [1, 2, 3, 4, 6], score: 15 }],
    large_straight: [{ dice: [2, 3, 4, 5, 6], score: 30 }, { dice: [1, 2, 3, 4, 6], score: 0 }],
    yacht: [{ dice: [3, 3, 3, 3, 3], score: 50 }],
  },
  yatzy: {
    ...UPPER_HANDS,
    one_pair: [{ dice: [3, 3, 5, 5, 6], score: 10 }],
    two_pairs: [{ dice: [3, 3, 5, 5, 6], score: 16 }, { dice: [4, 4, 4, 4, 2], score: 0 }],
    three_of_a_kind: [{ dice: [4, 4, 4, 1, 2], score: 12 }],
    four_of_a_kind: [{ dice: [5, 5, 5, 5, 1], score: 20 }],
    small_straight: [{ dice: [1, 2, 3, 4, 5], score: 15 }, { dice: [1, 2, 3, 4, 6], score: 0 }],
    large_straight: [{ dice: [2, 3, 4, 5, 6], score: 20 }],
    full_house: [{ dice: [5, 5, 5, 2, 2], score: 19 }, { dice: [6, 6, 6, 6, 6], score: 0 }],
    chance: [{ dice: [6, 5, 5, 3, 1], score: 20 }],
    yatzy: [{ dice: [2, 2, 2, 2, 2], score: 50 }],
  },
  classic13: {
    ...UPPER_HANDS,
    three_of_a_kind: [{ dice: [4, 4, 4, 5, 3], score: 20 }],
    four_of_a_kind: [{ dice: [5, 5, 5, 5, 2], score: 22 }],
    full_house: [{ dice: [3, 3, 3, 6, 6], score: 25 }, { dice: [6, 6, 6, 6, 6], score: 0 }],
    small_straight: [{ dice: [6, 3, 4, 5, 6], score: 30 }],
    large_straight: [{ dice: [1, 2, 3, 4, 5], score: 40 }],
    yahtzee: [{ dice: [6, 6, 6, 6, 6], score: 50 }],
    chance: [{ dice: [6, 5, 5, 3, 1], score: 20 }],
  },
};

/** classic13's forced joker (SPEC §3.3), case by case: the boxes already filled, five alike, where they must go
 * (`allowed`: every box the rules leave open to them) and what the chosen `box` scores, with the Yahtzee bonus. */
export const JOKER_CASES = [
  { id: "upper", filled: { yahtzee: 50 }, dice: [5, 5, 5, 5, 5], allowed: ["fives"], box: "fives", score: 25, bonus: 100 },
  { id: "lower", filled: { yahtzee: 50, sixes: 18 }, dice: [6, 6, 6, 6, 6], box: "full_house", score: 25, bonus: 100,
    allowed: ["three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance"] },
  { id: "scratched", filled: { yahtzee: 0, twos: 6 }, dice: [2, 2, 2, 2, 2], box: "large_straight", score: 40, bonus: 0,
    allowed: ["three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance"] },
];

/** The upper bonus in one picture: three dice of every face reach the threshold exactly. */
export const THREE_OF_EACH = [1, 2, 3, 4, 5, 6];

/** The tips, in order; `hint`: the live hint answers the question the tip is about (which dice, which box). */
export const TIPS = [
  { id: "upper" },
  { id: "common", hint: true, hold: { dice: [3, 5, 3, 6, 3], keep: [0, 2, 4] } },
  { id: "straights" },
  { id: "sacrifice", hint: true },
  { id: "chance" },
  { id: "lead" },
];

/** The questions, in order: the seeds' own, then those a provably fair site owes its players. */
export const QUESTIONS = ["same", "rolls", "bonus", "nothing", "luck", "advance", "verified", "failed", "seed", "botThinks",
  "otherGames"];

/** The glossary: the seeds' twelve terms, then the fairness words the page uses. */
export const TERMS = ["upper", "lower", "hold", "kinds", "fullHouse", "straights", "five", "chance", "bonus", "joker",
  "scratch", "ev", "commitment", "clientSeed", "receipt"];

/** The sections of the guide, in order, with their test ids. */
export const SECTIONS = [
  { id: "rules", testid: "guide-rules" },
  { id: "tips", testid: "tips" },
  { id: "faq", testid: "faq" },
  { id: "glossary", testid: "glossary" },
];
