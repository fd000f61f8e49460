// What the browser keeps: the game in progress (its seat token), recent games,
// records per rule set and preferences. Everything lives in localStorage.

const PREFIX = "fairdice.";

function read(name, fallback) {
  try {
    const text = localStorage.getItem(PREFIX + name);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

function write(name, value) {
  try {
    if (value === null || value === undefined) localStorage.removeItem(PREFIX + name);
    else localStorage.setItem(PREFIX + name, JSON.stringify(value));
  } catch {
    // storage full or disabled: the game still plays, it just cannot be resumed
  }
}

export const store = {
  /** {game_id, token, seat, rules, opponent, client_seed, created} of the game being played */
  current: () => read("current", null),
  setCurrent: (g) => write("current", g),
  clearCurrent: () => write("current", null),

  /** last games, newest first: [{game_id, token, seat, rules, opponent, created, result?}] */
  recent: () => read("recent", []),
  remember(entry) {
    const list = read("recent", []).filter((g) => g.game_id !== entry.game_id);
    list.unshift(entry);
    write("recent", list.slice(0, 12));
  },
  update(gameId, patch) {
    const list = read("recent", []).map((g) => (g.game_id === gameId ? { ...g, ...patch } : g));
    write("recent", list);
  },

  /** {rules: {games, wins, draws, losses, best, solo_games, solo_best}} */
  records: () => read("records", {}),
  /** Count a finished game once; returns {newBest} */
  record(gameId, rules, { solo, won, draw, score }) {
    const counted = read("counted", []);
    if (counted.includes(gameId)) return { newBest: false, counted: false };
    write("counted", [gameId, ...counted].slice(0, 200));
    const all = read("records", {});
    const r = all[rules] || { games: 0, wins: 0, draws: 0, losses: 0, best: null, solo_games: 0 };
    const newBest = r.best === null || score > r.best;
    r.best = newBest ? score : r.best;
    if (solo) r.solo_games = (r.solo_games || 0) + 1;
    else {
      r.games += 1;
      if (draw) r.draws += 1;
      else if (won) r.wins += 1;
      else r.losses += 1;
    }
    all[rules] = r;
    write("records", all);
    return { newBest, counted: true };
  },

  prefs: () => ({ name: "You", speed: "normal", ...read("prefs", {}) }),
  setPrefs: (patch) => write("prefs", { ...read("prefs", {}), ...patch }),

  lobby: () => read("lobby", { rules: "classic13", opponent: "ev", first: "me" }),
  setLobby: (v) => write("lobby", v),
};
