// The rule book of the three games, as shown in the lobby and the rules dialog
// (the same text as SPEC.md §3; the server's GET /v1/rules names and labels win
// when they differ).

const UPPER = [
  ["ones", "Ones", 1], ["twos", "Twos", 2], ["threes", "Threes", 3],
  ["fours", "Fours", 4], ["fives", "Fives", 5], ["sixes", "Sixes", 6],
].map(([id, label, face]) => ({
  id, label, section: "upper", when: "—", score: `sum of the ${face}s`,
}));

export const RULES = {
  yacht: {
    id: "yacht",
    name: "Yacht",
    blurb: "The original: 12 boxes, generous full house and four of a kind.",
    upper_bonus: 35,
    yahtzee_bonus: 0,
    notes: ["Full house and four of a kind score all five dice.", "Five alike also count as a full house.",
      "No Yacht bonus and no joker."],
    categories: [...UPPER,
      { id: "choice", label: "Choice", section: "lower", when: "anything", score: "sum of all five dice" },
      { id: "four_of_a_kind", label: "Four of a kind", section: "lower", when: "at least four dice alike", score: "sum of all five dice (4-4-4-4-2 → 18)" },
      { id: "full_house", label: "Full house", section: "lower", when: "three of one face and two of another, or five alike", score: "sum of all five dice (5-5-5-2-2 → 19)" },
      { id: "small_straight", label: "Small straight", section: "lower", when: "1-2-3-4, 2-3-4-5 or 3-4-5-6", score: "15" },
      { id: "large_straight", label: "Large straight", section: "lower", when: "1-2-3-4-5 or 2-3-4-5-6", score: "30" },
      { id: "yacht", label: "Yacht", section: "lower", when: "five alike", score: "50" },
    ],
  },
  yatzy: {
    id: "yatzy",
    name: "Yatzy",
    blurb: "Scandinavian: 15 boxes, sets count only the matching dice, bonus 50.",
    upper_bonus: 50,
    yahtzee_bonus: 0,
    notes: ["Pairs and sets score only the matching dice.", "Straights are exact: 1-2-3-4-5 and 2-3-4-5-6.",
      "Five alike are a pair, three and four of a kind, but not two pairs or a full house.",
      "No Yatzy bonus and no joker."],
    categories: [...UPPER,
      { id: "one_pair", label: "One pair", section: "lower", when: "two dice alike", score: "the highest pair (3-3-5-5-6 → 10)" },
      { id: "two_pairs", label: "Two pairs", section: "lower", when: "two pairs of different faces", score: "those four dice (3-3-5-5-6 → 16)" },
      { id: "three_of_a_kind", label: "Three of a kind", section: "lower", when: "three dice alike", score: "those three dice (4-4-4-1-2 → 12)" },
      { id: "four_of_a_kind", label: "Four of a kind", section: "lower", when: "four dice alike", score: "those four dice (5-5-5-5-1 → 20)" },
      { id: "small_straight", label: "Small straight", section: "lower", when: "exactly 1-2-3-4-5", score: "15" },
      { id: "large_straight", label: "Large straight", section: "lower", when: "exactly 2-3-4-5-6", score: "20" },
      { id: "full_house", label: "Full house", section: "lower", when: "three of one face and two of a different face", score: "sum of all five dice" },
      { id: "chance", label: "Chance", section: "lower", when: "anything", score: "sum of all five dice" },
      { id: "yatzy", label: "Yatzy", section: "lower", when: "five alike", score: "50" },
    ],
  },
  classic13: {
    id: "classic13",
    name: "Classic 13",
    blurb: "Yahtzee-style: 13 boxes, fixed straights, +100 Yahtzee bonuses and the joker.",
    upper_bonus: 35,
    yahtzee_bonus: 100,
    notes: [
      "Yahtzee bonus: once the Yahtzee box holds 50, every further five-alike roll adds +100.",
      "Forced joker: five alike with the Yahtzee box already filled must go in the upper box of that face if it is open; otherwise any open lower box scores as a joker (full house 25, straights 30 and 40, the others the sum of the dice); otherwise a 0 in an open upper box.",
    ],
    categories: [...UPPER,
      { id: "three_of_a_kind", label: "Three of a kind", section: "lower", when: "at least three alike", score: "sum of all five dice" },
      { id: "four_of_a_kind", label: "Four of a kind", section: "lower", when: "at least four alike", score: "sum of all five dice" },
      { id: "full_house", label: "Full house", section: "lower", when: "three of one face and two of a different face", score: "25" },
      { id: "small_straight", label: "Small straight", section: "lower", when: "four consecutive faces", score: "30" },
      { id: "large_straight", label: "Large straight", section: "lower", when: "five consecutive faces", score: "40" },
      { id: "yahtzee", label: "Yahtzee", section: "lower", when: "five alike", score: "50" },
      { id: "chance", label: "Chance", section: "lower", when: "anything", score: "sum of all five dice" },
    ],
  },
};

export const GENERAL = [
  "Five six-sided dice. A turn is up to three rolls: the first throws all five; before each further roll, click dice to hold them and reroll the rest.",
  "After any roll you may stop and record the dice in one open box of your card; after the third roll you must. A box the dice do not satisfy scores 0.",
  "Upper bonus: when Ones to Sixes add up to 63 or more (three of each face), the bonus is added.",
  "The game ends when every box of every card is filled; the higher total wins, equal totals are a draw.",
];

export const BOT_INFO = {
  greedy: { name: "Greedy", level: "Easy", text: "Goes for the most common face and grabs any straight or full house it sees." },
  ev: { name: "EV", level: "Medium", text: "Weighs every hold by its exact expected score for this turn." },
  optimal: { name: "Optimal", level: "Hard", text: "Plays for the best expected final score over the whole game." },
};

/** The rule set, with labels and bonuses from the server's GET /v1/rules where given. */
export function mergeRules(server) {
  const out = structuredClone(RULES);
  for (const r of (server && server.rules) || []) {
    const base = out[r.id] || { id: r.id, name: r.name, blurb: r.summary || "", notes: [], categories: [] };
    base.name = r.name || base.name;
    base.summary = r.summary;
    if (Number.isInteger(r.upper_bonus)) base.upper_bonus = r.upper_bonus;
    if (Number.isInteger(r.yahtzee_bonus)) base.yahtzee_bonus = r.yahtzee_bonus;
    if (Array.isArray(r.categories) && r.categories.length) {
      const known = new Map(base.categories.map((c) => [c.id, c]));
      base.categories = r.categories.map((c) => ({ when: "", score: "", ...known.get(c.id), ...c }));
    }
    out[r.id] = base;
  }
  return out;
}
