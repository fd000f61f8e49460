// What the browser keeps: the game in progress (its seats' tokens, keys and receipts), recent games, records per
// rule set and preferences. Everything lives in localStorage; a result is kept as data ({outcome, score}) and
// worded by the page in the player's language.

const PREFIX = "fairdice.";
/** The key another tab of this browser writes after each move it makes (see `onMoved`). */
const MOVED = "moved";
const RECENT = 12;
const RECENT_UNFINISHED = 40;

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

/** A result as data; results kept by older versions of the page were English text ("won · 180"). */
export function resultOf(entry) {
  const r = entry && entry.result;
  if (!r) return { outcome: "playing" };
  if (typeof r === "object") return r;
  const [word, score] = String(r).split(" · ");
  const outcome = { won: "won", lost: "lost", draw: "draw", abandoned: "abandoned", cancelled: "cancelled", gone: "gone" }[word]
    || (word.startsWith("scored") ? "solo" : "playing");
  const points = Number.parseInt(score ?? word.replace(/\D+/g, ""), 10);
  return Number.isNaN(points) ? { outcome } : { outcome, score: points };
}

/**
 * The seats this browser plays in a game: {seat: {token, key?, salt?, seed_commitment?, receipt?}}, `key` the
 * seat's Ed25519 key pair (signing.js), `salt` and `seed_commitment` its promise in a game of several humans.
 * A game kept by an older page had its one seat's token and receipt at the top of its entry.
 */
export function seatsOf(entry) {
  if (!entry) return {};
  if (entry.seats && typeof entry.seats === "object") return entry.seats;
  if (entry.token === undefined || entry.seat === undefined || entry.seat === null) return {};
  return { [entry.seat]: { token: entry.token, ...(entry.receipt ? { receipt: entry.receipt } : {}) } };
}

export const store = {
  /** the game being played: {game_id, rules, opponent, created, commitment, version, seat (the seat shown first, null
   * for a spectator), seats (seatsOf), invites?, spectator?, move_receipts?, seed_draft?} */
  current: () => read("current", null),
  setCurrent: (g) => write("current", g),
  clearCurrent: () => write("current", null),

  /** last games, newest first: [{game_id, token, seat, rules, opponent, created, result?, receipt?}] */
  recent: () => read("recent", []),
  remember(entry) {
    const list = read("recent", []).filter((g) => g.game_id !== entry.game_id);
    list.unshift(entry);
    // the last 12 games, and beyond them the unfinished ones: their seats' keys are kept nowhere else
    write("recent", list.filter((g, i) => i < RECENT || (!g.result && i < RECENT_UNFINISHED)));
  },
  update(gameId, patch) {
    const list = read("recent", []).map((g) => (g.game_id === gameId ? { ...g, ...patch } : g));
    write("recent", list);
  },
  /** The game being played, kept whole: as the current game and in the recent games (its keys go with it). */
  keep(entry) {
    write("current", entry);
    const list = read("recent", []);
    if (list.some((g) => g.game_id === entry.game_id)) write("recent", list.map((g) => (g.game_id === entry.game_id ? entry : g)));
    else this.remember(entry);
  },
  /** The kept entry of a game (the current one, or one of the recent games), or null. */
  entry(gameId) {
    const current = read("current", null);
    if (current && current.game_id === gameId) return current;
    return read("recent", []).find((g) => g.game_id === gameId) || null;
  },

  /** {rules: {games, wins, draws, losses, best, solo_games}} */
  records: () => read("records", {}),
  /** Count a finished game once; returns {newBest, counted} */
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

  /** {name, speed, lang}; name "" means "not chosen" (the page then says "You"/"你" in its language) */
  prefs: () => ({ name: "", speed: "normal", lang: null, ...read("prefs", {}) }),
  setPrefs: (patch) => write("prefs", { ...read("prefs", {}), ...patch }),

  lobby: () => read("lobby", { rules: "classic13", opponent: "ev", first: "me" }),
  setLobby: (v) => write("lobby", v),

  /** Tell the other tabs of this browser that a game moved on (they get a `storage` event). */
  moved: (gameId, eventCount) => write(MOVED, { game_id: gameId, event_count: eventCount, at: Date.now() }),
  /** Call `fn(game_id, event_count)` when another tab of this browser made a move. */
  onMoved(fn) {
    window.addEventListener("storage", (e) => {
      if (e.key !== PREFIX + MOVED || !e.newValue) return;
      try {
        const { game_id: id, event_count: n } = JSON.parse(e.newValue);
        fn(id, n);
      } catch {
        // not ours to read
      }
    });
  },
};
