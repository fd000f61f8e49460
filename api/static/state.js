// What the board shows, as plain data and pure functions (no DOM, no fetch): the game as the server last
// answered it, stepped through the events of an answer so that a bot's turn is seen, not jumped over.
// Totals, options and the state after a move are the server's; between two answers the board only writes
// the numbers the events carry (points, bonuses, the new total) into the card, it never scores anything.

export const MAX_ROLLS = 3; // rule text (SPEC §3), for "roll 2 of 3": at most three rolls a turn

/** A view: the server's state with every event of the game so far (`events`, from index 0). */
export function viewOf(state, knownEvents = []) {
  const from = state.events_from || 0;
  const events = from === 0 ? [...(state.events || [])] : [...knownEvents.slice(0, from), ...(state.events || [])];
  return { ...structuredClone(state), events, events_from: 0 };
}

/** The board of a game before its first event: the same seats with empty cards, nobody to move. */
export function blankView(state) {
  const seats = state.seats.map((s) => ({
    ...structuredClone(s),
    card: Object.fromEntries(Object.keys(s.card).map((k) => [k, null])),
    yahtzee_bonus: 0,
    totals: { upper: 0, upper_bonus: 0, lower: 0, yahtzee_bonus: 0, total: 0 },
  }));
  return { ...structuredClone(state), seats, events: [], events_from: 0, event_count: 0, dice: [], rolls_made: 0,
    rolls_left: 0, options: {}, status: "playing", final: null, current_seat: null, turn: null };
}

/**
 * The events of an answer that the board has not shown yet, or null when the board missed some (the game
 * moved on elsewhere: another tab, another device), so it must be reloaded rather than played on.
 */
export function newEvents(view, answer) {
  const from = answer.events_from || 0;
  const known = view.events.length;
  if (from > known) return null;
  return (answer.events || []).slice(known - from);
}

/** The view after one event: what the event itself says, written into a copy. */
export function applyEvent(view, event, rules) {
  const v = { ...view, events: [...view.events, event], event_count: view.events.length + 1 };
  if (event.type === "start") {
    return { ...v, status: "playing", current_seat: event.first, dice: [], rolls_made: 0, options: {} };
  }
  if (event.type === "roll") {
    // rolls_left is the server's to say: the answer's own state follows the events it played out
    return { ...v, current_seat: event.seat, turn: event.turn, rolls_made: event.roll, dice: [...event.dice], options: {} };
  }
  if (event.type === "score") {
    const seats = v.seats.map((s, i) => (i === event.seat ? scored(s, event, rules) : s));
    return { ...v, seats, rolls_made: 0, dice: [], options: {} };
  }
  if (event.type === "abandon") return { ...v, status: "abandoned", options: {} };
  return v; // client seeds and their commitments change nothing on the board
}

function scored(seat, e, rules) {
  const section = (rules && rules.categories.find((c) => c.id === e.category) || {}).section;
  const t = { ...seat.totals };
  if (section === "upper") t.upper += e.points;
  else t.lower += e.points;
  t.upper_bonus += e.upper_bonus || 0;
  t.yahtzee_bonus += e.yahtzee_bonus || 0;
  t.total = e.total; // the server's number
  return { ...seat, card: { ...seat.card, [e.category]: e.points }, yahtzee_bonus: (seat.yahtzee_bonus || 0) + (e.yahtzee_bonus || 0), totals: t };
}

export const isOver = (view) => view.status === "finished" || view.status === "abandoned";

/** Whether `seat` is to move on this view. */
export const isTurnOf = (view, seat) => !!view && view.status === "playing" && view.current_seat === seat;

/** Dice on the table that a further roll can keep. */
export const canHold = (view, seat) => isTurnOf(view, seat) && view.dice.length === 5 && view.rolls_left > 0 && view.rolls_made > 0;

/** How far `seat` is: {filled, total} boxes of its card. */
export function progress(view, seat) {
  const card = view.seats[seat].card;
  const total = Object.keys(card).length;
  const filled = Object.values(card).filter((x) => x !== null).length;
  return { filled, total };
}

/** The game's turns, oldest first: {seat, turn, rolls: [roll events], score: score event or null}. */
export function turnsOf(events) {
  const turns = [];
  let cur = null;
  for (const e of events) {
    if (e.type !== "roll" && e.type !== "score") continue;
    if (!cur || cur.seat !== e.seat || cur.turn !== e.turn) {
      cur = { seat: e.seat, turn: e.turn, rolls: [], score: null };
      turns.push(cur);
    }
    if (e.type === "roll") cur.rolls.push(e);
    else cur.score = e;
  }
  return turns;
}

/** How the game ended for `seat`: {outcome: won|lost|draw|solo|abandoned, score, winner}. */
export function outcomeOf(final, seat, seats) {
  const score = final.totals[seat].total;
  if (final.status === "abandoned") return { outcome: "abandoned", score };
  if (seats === 1) return { outcome: "solo", score };
  if (final.draw) return { outcome: "draw", score };
  return { outcome: final.winner === seat ? "won" : "lost", score, winner: final.winner };
}

// ------------------------------------------------------------------ the page's shared state

/**
 * Everything the page's screens share, as plain data: one object that app.js makes and every screen's controller
 * (lobby-screen.js, game-screen.js, end-screen.js, dialogs-screen.js, and session.js for the game being played)
 * reads and writes, so that a screen's change touches its own file and none keeps a copy of another's state.
 */
export function pageState(t, rules) {
  return {
    t, // the translator of the language spoken (i18n.js)
    rules, // the rule sets as data (rules.js mergeRules)
    bots: null, // [{id, level, description}] from the server, null when unknown
    trustedKeys: [],
    hintRoute: null, // true / false / null (unknown)
    session: null, // the game this browser plays or watches: its entry in store.js (seats, keys, receipts)
    created: null, // the POST /v1/games answer while the client seed is not sent
    header: null, // the game's signed header, checked against the server's keys
    shown: null, // the history shown, hashed by this page (history.js): every answer is held to it
    halted: null, // the AnswerRefused that stopped this game: nothing more is sent or signed
    watcher: null, // watching for other players' moves (watch.js)
    view: null, // the board: the server's last answer, or a step of playing one out
    ui: { held: new Set(), busy: false, animating: false, hint: null, highlight: null },
    verified: null, // {report, log, results} of the finished game, kept to redraw in another language
    log: null, // the finished game's log, as verified (the downloads)
    newBest: false, // the finished game set this browser's best score for its rule set
    waiting: null, // the optimal engine's warm-up: {timer, until}
    hintWait: null, // the hint engine's warm-up: the timer of the next ask
    leaving: false, // the logo was pressed during a move: the lobby follows once the move is done
  };
}

/** A screen's controller: the page (`app`: its screens, show, toast, setBusy) and the state they share. */
export class Screen {
  constructor(app) {
    this.app = app;
  }

  get st() {
    return this.app.st;
  }

  /** The translator of the language spoken now. */
  get t() {
    return this.app.st.t;
  }
}

/** Seconds to wait when a warming-up answer (503 engine_warming_up) names no Retry-After: the optimal bot's
 * tables in the lobby, the hint engine's in a game. */
export const DEFAULT_ENGINE_WAIT = 15;
