// The three rule sets as data: their boxes in table order, sections and bonuses (SPEC §3). Every word
// about them (names, conditions, notes) is in the message catalogues, under keys made here. The server's
// GET /v1/rules wins on the numbers; the upper threshold is rule text (SPEC §3: 63, three of each face),
// shown by the page and never used to add anything up: totals always come from the server.

const UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"];
const upper = UPPER.map((id, i) => ({ id, section: "upper", face: i + 1 }));
const lower = (...ids) => ids.map((id) => ({ id, section: "lower" }));

export const UPPER_THRESHOLD = 63;

export const RULES = {
  yacht: {
    id: "yacht", upper_bonus: 35, yahtzee_bonus: 0, upper_threshold: UPPER_THRESHOLD,
    categories: [...upper, ...lower("choice", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yacht")],
  },
  yatzy: {
    id: "yatzy", upper_bonus: 50, yahtzee_bonus: 0, upper_threshold: UPPER_THRESHOLD,
    categories: [...upper, ...lower("one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "small_straight",
      "large_straight", "full_house", "chance", "yatzy")],
  },
  classic13: {
    id: "classic13", upper_bonus: 35, yahtzee_bonus: 100, upper_threshold: UPPER_THRESHOLD,
    categories: [...upper, ...lower("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight",
      "large_straight", "yahtzee", "chance")],
  },
};

/** Bots the page knows how to describe (the server's GET /v1/bots says which it has). */
export const KNOWN_BOTS = ["greedy", "ev", "optimal"];

/** The rule sets with the server's numbers and boxes (GET /v1/rules) where it gives them. */
export function mergeRules(server) {
  const out = structuredClone(RULES);
  for (const r of (server && server.rules) || []) {
    const base = out[r.id] || { id: r.id, upper_bonus: 0, yahtzee_bonus: 0, upper_threshold: UPPER_THRESHOLD, categories: [] };
    if (Number.isInteger(r.upper_bonus)) base.upper_bonus = r.upper_bonus;
    if (Number.isInteger(r.yahtzee_bonus)) base.yahtzee_bonus = r.yahtzee_bonus;
    if (Number.isInteger(r.upper_threshold)) base.upper_threshold = r.upper_threshold;
    if (Array.isArray(r.categories) && r.categories.length) {
      const known = new Map(base.categories.map((c) => [c.id, c]));
      base.categories = r.categories.map((c) => ({ ...known.get(c.id), id: c.id, section: c.section, serverLabel: c.label }));
    }
    base.serverName = r.name;
    out[r.id] = base;
  }
  return out;
}

/** Catalogue keys of a rule set's words, with the generic key as fallback (a box named alike everywhere). */
export function ruleKeys(t, rulesId) {
  const pick = (specific, generic) => (t.has(specific) ? specific : generic);
  return {
    name: `rules.${rulesId}.name`,
    box: (id) => pick(`box.${rulesId}.${id}`, `box.${id}`),
    when: (id) => pick(`when.${rulesId}.${id}`, `when.${id}`),
    score: (id) => pick(`score.${rulesId}.${id}`, `score.${id}`),
  };
}

/** The name of a box in the player's language (the server's label for a box the catalogue does not know). */
export function boxLabel(t, rules, id) {
  const key = ruleKeys(t, rules && rules.id).box(id);
  if (t.has(key)) return t.t(key);
  const c = rules && rules.categories.find((x) => x.id === id);
  return (c && c.serverLabel) || id.replace(/_/g, " ");
}

/** The name of a rule set in the player's language. */
export function rulesName(t, rules, id) {
  const key = `rules.${id}.name`;
  if (t.has(key)) return t.t(key);
  return (rules && rules.serverName) || id;
}
