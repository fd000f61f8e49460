// The replay of a log's events (SPEC §2.2-§4): each event checked in order against the game as it truly stands,
// every die re-derived from the revealed seed (without one: the logged dice are taken, so that the rest can still
// be checked), every score recomputed, every bot decision replayed (botcheck.js).
//
// The replay follows the true game: a die that does not re-derive is reported and the derived value is used from
// then on. A failure that leaves no game to follow (an event out of order, a bad hold, a box that cannot be
// filled) stops the replay there (Checks.stop).

import { checkBotDecision, checkBotIdentities } from "./botcheck.js";
import { firstDifference, has, isBool, isInt, isObject, isStr, sameJSON, sameKeys } from "./json.js";
import { ABANDON_REASONS, SCORE_FIELDS, eventFields, eventFormat, eventNames, isHold } from "./logformat.js";
import { said } from "./phrases.js";
import { CATEGORIES, isUpper, legalBoxes, scoreOnCard, sumOf, upperBonus, yahtzeeBonus } from "./rules.js";
import { Deriver, seedCommitment } from "./scheme.js";
import { clientSeedValid } from "./seedrule.js";

/** The game as the replay finds it, before the first event. */
export function newGame(doc) {
  const h = doc.header;
  const n = h.seats.length;
  const cats = CATEGORIES[h.rules];
  const humans = h.seats.flatMap((s, i) => (s.type === "human" ? [i] : []));
  const version = doc.version;
  const fields = eventFields(version, humans.length);
  return {
    h, n, rules: h.rules, upperFirst: h.upper_first, nBoxes: n * cats.length, version, fields,
    committed: has(fields, "client_seed_commit"), // version 2 with two or more human seats
    commitments: new Map(), // seat -> its commitment to its client seed (committed games)
    commitKeys: new Map(), // seat -> the player key its commitment names (version 3)
    boxes: h.seats.map(() => new Map(cats.map((c) => [c, null]))), // per seat: category -> points, null while open
    bonus: h.seats.map(() => [0, 0]), // per seat: upper bonus, Yahtzee bonuses
    filled: Array(n).fill(0), total: Array(n).fill(0), upper: Array(n).fill(0),
    humans, senders: humans.length ? humans : [null], // who sends a client seed: the human seats, else the operator
    seeds: new Map(), phase: "seeds", // then "play", then "over" or "abandoned"
    cur: null, rolls: 0, dice: [0, 0, 0, 0, 0], derive: null, nRolls: 0, nScores: 0,
    isBot: h.seats.map((s) => s.type === "bot"),
    botOk: {}, // bot seat -> whether it is a published policy (bot.identity), so that its decisions can be replayed
    rollEvents: doc.events.filter((e) => isObject(e) && e.type === "roll").length,
  };
}

/** Fills box `cat` of the seat to play with `pts` and adds its bonuses to the seat's totals (the Yahtzee bonus
 * judged on the card before this box). Returns [Yahtzee bonus, upper bonus]. */
function fillBox(g, cat, pts) {
  const cur = g.cur;
  const boxes = g.boxes[cur];
  const yb = yahtzeeBonus(g.rules, boxes, g.dice);
  const ub = upperBonus(g.rules, g.upper[cur], cat, pts);
  boxes.set(cat, pts);
  if (isUpper(cat)) g.upper[cur] += pts;
  g.bonus[cur][0] += ub;
  g.bonus[cur][1] += yb;
  g.total[cur] += pts + ub + yb;
  return [yb, ub];
}

/** After a score: the next seat's turn, or the game over once every box of every seat is filled. */
function endTurn(g) {
  g.rolls = 0;
  g.filled[g.cur] += 1;
  g.nScores += 1;
  if (g.nScores === g.nBoxes) g.phase = "over";
  else g.cur = (g.cur + 1) % g.n;
}

/** Replays `doc`'s events into the game `g` (newGame), writing every verdict into `checks` and what the page
 * shows into `view`. `hmac` is the revealed seed's key, or null (then the logged dice are taken); `witness`, the
 * player's move receipts that an abandon in the player's name no signature covers must be among (players.js), or null. */
export class EventReplay {
  constructor(checks, doc, g, { hmac, view, onProgress, witness }) {
    this.checks = checks;
    this.doc = doc;
    this.g = g;
    this.hmac = hmac;
    this.view = view;
    this.onProgress = onProgress;
    this.witness = witness;
  }

  /** Replay the events in order, re-deriving the dice from the revealed seed (without one: taking the logged dice). */
  async run() {
    const g = this.g;
    g.botOk = await checkBotIdentities(this.checks, g.h);
    for (const [i, ev] of this.doc.events.entries()) {
      const kind = isObject(ev) && has(ev, "type") ? ev.type : null;
      if (kind === "roll" && g.phase === "play") await this.onRoll(i, ev, g);
      else if (kind === "score" && g.phase === "play") await this.onScore(i, ev, g);
      else await this.onOtherEvent(i, ev, kind, g);
    }
    this.checks.passed("client_seed.valid");
    if (g.committed) this.checks.passed("client_seed.commit");
    if (g.phase === "abandoned" && g.version >= 2) this.checks.passed("game.abandon");
    if (g.phase !== "seeds") this.checks.passed("start.first");
    if (g.nRolls) this.checks.passed("turn.order", "roll.count", "roll.hold", "roll.dice");
    if (g.nScores) this.checks.passed("score.category", "score.points");
  }

  /** turn.order, the bot's decision and roll.count for a roll or a score (called only when something is to be said, or for a bot). */
  async checkMove(i, ev, g) {
    const turn = g.filled[g.cur] + 1;
    if (ev.seat !== g.cur) this.checks.stop("turn.order", i, "seat", g.cur, ev.seat);
    if (ev.turn !== turn) this.checks.stop("turn.order", i, "turn", turn, ev.turn);
    if (g.isBot[g.cur] && g.rolls > 0) await checkBotDecision(this.checks, this.view, i, ev, g, turn);
    if (ev.type === "roll" && (g.rolls === 3 || ev.roll !== g.rolls + 1)) {
      this.checks.stop("roll.count", i, "roll", g.rolls < 3 ? g.rolls + 1 : said("box_after_third_roll"), ev.roll);
    }
    if (ev.type === "score" && g.rolls === 0) this.checks.stop("roll.count", i, "type", said("roll_begins_turn"), "score");
  }

  async onRoll(i, ev, g) {
    eventFormat(this.checks, i, ev, g);
    const { seat, turn, roll, hold, dice: logged } = ev;
    const entry = { index: i, seat, turn, roll, hold, dice: logged, expected: null, ok: false, detail: "" };
    this.view.rolls.push(entry);
    if (seat !== g.cur || turn !== g.filled[g.cur] + 1 || roll !== g.rolls + 1 || roll > 3 || g.isBot[g.cur]) await this.checkMove(i, ev, g);
    if (hold.length && (roll === 1 || !isHold(hold))) {
      this.checks.stop("roll.hold", i, "hold", said(roll === 1 ? "no_hold_on_first_roll" : "hold_positions"), hold);
    }
    // roll.dice: every die re-derived; a held die keeps its value (the stream is not shifted)
    const dice = g.derive ? await g.derive.roll(seat, turn, roll) : [...logged];
    for (const p of hold) dice[p] = g.dice[p];
    entry.expected = dice;
    dice.forEach((d, p) => {
      if (d !== logged[p]) this.checks.fail("roll.dice", i, `dice[${p}]`, d, logged[p]);
    });
    g.dice = dice;
    g.rolls = roll;
    g.nRolls += 1;
    if (this.onProgress) this.onProgress(g.nRolls, g.rollEvents);
  }

  async onScore(i, ev, g) {
    if (!sameKeys(ev, eventNames(g, "score", ev)) || !isInt(ev.seat) || !isInt(ev.turn)) eventFormat(this.checks, i, ev, g);
    this.view.scores.push({ index: i, seat: ev.seat, turn: ev.turn, category: ev.category, points: ev.points, ok: false, detail: "" });
    if (ev.seat !== g.cur || ev.turn !== g.filled[g.cur] + 1 || g.rolls === 0 || g.isBot[g.cur]) await this.checkMove(i, ev, g);
    const [pts, joker] = this.checkCategory(i, ev, g);
    const [yb, ub] = fillBox(g, ev.category, pts);
    this.checkPoints(i, ev, g, [pts, joker, yb, ub, g.total[g.cur]]);
    endTurn(g);
  }

  /** score.category: a box of the rule set, open, and legal for these dice. Returns [points, joker] of filling it
   * (stops the replay otherwise: there is no true score to go on with). */
  checkCategory(i, ev, g) {
    const boxes = g.boxes[g.cur];
    const cat = ev.category;
    if (!isStr(cat)) eventFormat(this.checks, i, ev, g);
    if (!boxes.has(cat)) this.checks.stop("score.category", i, "category", said("category_of_rules", { rules: g.rules }), cat);
    if (boxes.get(cat) !== null) this.checks.stop("score.category", i, "category", said("an_open_box"), said("already_filled", { category: cat }));
    const scored = scoreOnCard(g.rules, boxes, g.dice, cat, g.upperFirst);
    if (!scored) this.checks.stop("score.category", i, "category", said("one_of", { values: [...legalBoxes(g.rules, boxes, g.dice, g.upperFirst).keys()] }), cat);
    return scored;
  }

  /** score.points: the logged points, joker, Yahtzee bonus, upper bonus and running total against `mine`, the
   * replay's (in SCORE_FIELDS' order). */
  checkPoints(i, ev, g, mine) {
    const found = SCORE_FIELDS.map((k) => ev[k]);
    const typed = isInt(found[0]) && isBool(found[1]) && isInt(found[2]) && isInt(found[3]) && isInt(found[4]);
    if (typed && mine.every((m, k) => m === found[k])) return;
    eventFormat(this.checks, i, ev, g); // first: are these the right JSON types?
    SCORE_FIELDS.forEach((name, k) => {
      if (mine[k] !== found[k]) this.checks.fail("score.points", i, name, mine[k], found[k]);
    });
  }

  async onOtherEvent(i, ev, kind, g) {
    eventFormat(this.checks, i, ev, g);
    if (g.phase === "over" || g.phase === "abandoned") {
      this.checks.stop("game.complete", i, "type", said(g.phase === "over" ? "no_event_after_last_box" : "no_event_after_abandon"), kind);
    }
    if (g.phase === "seeds" && g.seeds.size === g.senders.length && kind !== "start" && kind !== "client_seed") {
      this.checks.stop("turn.order", i, "type", said("start_after_seeds"), kind);
    }
    if (kind === "client_seed_commit") this.onCommitment(i, ev, g);
    else if (kind === "client_seed") await this.onClientSeed(i, ev, g);
    else if (kind === "start") await this.onStart(i, ev, g);
    else if (kind === "abandon") this.onAbandon(i, ev, g);
    else this.checks.stop("turn.order", i, "type", said("start_before_moves"), kind); // a roll or a score before play began
  }

  /** The start: every seat that sends a seed has sent it; the dice stream is keyed from the seeds; start.first. */
  async onStart(i, ev, g) {
    if (g.phase !== "seeds") this.checks.stop("turn.order", i, "type", said("roll_or_score"), "start");
    const missing = g.senders.filter((s) => !g.seeds.has(s));
    if (missing.length) this.checks.fail("client_seed.valid", i, "type", said("seeds_first", { seats: missing }), "start");
    const clientSeeds = g.senders.filter((s) => g.seeds.has(s)).map((s) => g.seeds.get(s)); // in seat order (§2.2)
    this.view.clientSeeds = clientSeeds;
    if (this.hmac) g.derive = new Deriver(this.hmac, g.h.game_id, clientSeeds);
    g.cur = await this.checkStart(i, ev, g.h.first, g.derive);
    g.phase = "play";
  }

  /** An abandon: game.abandon (version 2 on: who may, and why; an abandon in the player's name among her move
   * receipts when no signature of hers covers it). */
  onAbandon(i, ev, g) {
    if (g.version >= 2) this.checkAbandon(i, ev, g.humans, g.phase === "play" ? g.cur : null);
    if (this.witness && this.witness.unacknowledged(i, ev)) {
      this.checks.fail("game.abandon", i, "seat", said("receipt_of_abandon"), said("no_receipt_of_abandon"));
    }
    this.view.abandon = { seat: ev.seat, reason: has(ev, "reason") ? ev.reason : null };
    g.phase = "abandoned";
  }

  async onClientSeed(i, ev, g) {
    const s = ev.seat;
    if (g.phase !== "seeds") this.checks.stop("client_seed.valid", i, "type", said("no_seed_after_start"), ev.type);
    if (g.committed) await this.checkReveal(i, ev, g);
    if (!g.senders.includes(s)) {
      this.checks.fail("client_seed.valid", i, "seat", g.humans.length ? said("a_human_seat", { seats: g.humans }) : said("no_human_seat"), s);
    } else if (g.seeds.has(s)) this.checks.fail("client_seed.valid", i, "seat", said("one_seed_per_seat"), s);
    else {
      if (!clientSeedValid(ev.client_seed)) {
        this.checks.fail("client_seed.valid", i, "client_seed", said("client_seed_rule"), ev.client_seed);
      }
      g.seeds.set(s, ev.client_seed);
      if (g.phase === "seeds") this.view.clientSeeds = g.senders.filter((x) => g.seeds.has(x)).map((x) => g.seeds.get(x));
    }
  }

  // -- client_seed.commit (version 2, two or more human seats): each human seat commits once, then every seat reveals
  onCommitment(i, ev, g) {
    if (g.phase !== "seeds" || g.seeds.size) this.checks.stop("client_seed.commit", i, "type", said("commitments_before_seeds"), ev.type);
    const s = ev.seat;
    if (!g.humans.includes(s)) this.checks.stop("client_seed.commit", i, "seat", said("a_human_seat", { seats: g.humans }), s);
    if (g.commitments.has(s)) this.checks.stop("client_seed.commit", i, "seat", said("one_commitment_per_seat"), s);
    g.commitments.set(s, ev.commitment);
    if (g.version >= 3) g.commitKeys.set(s, ev.player_key);
  }

  /** A reveal opens its seat's commitment, once every human seat committed: SHA-256(salt || UTF-8(client seed)), in
   * version 3 SHA-256(salt || player key || UTF-8(client seed)) with the key the commitment names, which the reveal
   * names again. */
  async checkReveal(i, ev, g) {
    const missing = g.humans.filter((s) => !g.commitments.has(s));
    if (missing.length) {
      this.checks.stop("client_seed.commit", i, "type", said("commitments_first", { seats: missing }), ev.type);
    }
    const { client_seed: seed, seat: s } = ev;
    if (!clientSeedValid(seed) || !g.commitments.has(s)) return; // client_seed.valid says what is wrong with it
    const committed = g.commitments.get(s);
    const key = g.version >= 3 ? g.commitKeys.get(s) : null;
    if (g.version >= 3 && !this.checks.expect("client_seed.commit", i, "player_key", key, ev.player_key)) return;
    const opened = await seedCommitment(ev.salt, seed, key);
    if (opened !== committed) {
      this.checks.fail("client_seed.commit", i, "client_seed", said("committed_seed", { commitment: committed }),
        said("seed_and_salt_hash", { hash: opened }));
    }
  }

  // -- game.abandon (version 2): who may abandon, when, and why
  checkAbandon(i, ev, humans, current) {
    const { seat, reason } = ev;
    if (!ABANDON_REASONS.includes(reason)) this.checks.fail("game.abandon", i, "reason", said("one_of", { values: ABANDON_REASONS }), reason);
    else if (reason === "timeout" && seat !== null) this.checks.fail("game.abandon", i, "seat", said("null_on_timeout"), seat);
    else if (reason === "player" && seat === null && humans.length) {
      this.checks.fail("game.abandon", i, "seat", said("seat_not_timeout"), seat);
    } else if (reason === "player" && seat !== null && !humans.includes(seat)) {
      this.checks.fail("game.abandon", i, "seat", said("a_human_seat", { seats: humans }), seat);
    } else if (reason === "player" && seat !== null && current !== null && seat !== current) {
      this.checks.fail("game.abandon", i, "seat", said("seat_whose_turn", { seat: current }), seat);
    }
  }

  /** start.first: the fixed first seat, or the roll-off re-derived. Returns the true first seat. */
  async checkStart(i, ev, first, derive) {
    if (first !== "random") {
      this.checks.expect("start.first", i, "first", first, ev.first);
      this.checks.expect("start.first", i, "rolloff", [], ev.rolloff);
      return first;
    }
    const logged = new Map();
    ev.rolloff.forEach((rnd, r) => rnd.forEach((e) => logged.set(`${r + 1},${e.seat}`, e.dice)));
    const rounds = [];
    let alive = [...Array(this.g.n).keys()];
    for (let r = 1; alive.length > 1 && r <= 1000; r++) {
      if (!derive && r > ev.rolloff.length) break; // no seed: check that the logged roll-off is consistent
      const rnd = [];
      for (const seat of alive) rnd.push({ seat, dice: derive ? await derive.rolloff(r, seat) : logged.get(`${r},${seat}`) ?? null });
      rounds.push(rnd);
      for (const e of rnd) {
        const dice = logged.get(`${r},${e.seat}`) ?? null;
        this.view.rolloff.push({ round: r, seat: e.seat, dice, expected: e.dice, ok: sameJSON(dice, e.dice) });
      }
      if (rnd.some((e) => e.dice === null)) break;
      const best = Math.max(...rnd.map((e) => sumOf(e.dice)));
      alive = rnd.filter((e) => sumOf(e.dice) === best).map((e) => e.seat);
    }
    const diff = firstDifference(rounds, ev.rolloff, "rolloff");
    if (diff) this.checks.fail("start.first", i, ...diff);
    if (alive.length === 1) {
      this.checks.expect("start.first", i, "first", alive[0], ev.first);
      return alive[0];
    }
    this.checks.fail("start.first", i, "rolloff", said("rolloff_until_winner"), ev.rolloff);
    return ev.first;
  }
}
