// verifyLog's answer: the verdict, every check with a detail line (English, as the reference's), the failures as
// values and Phrases, and what the page shows of the game (its seeds, roll-off, rolls and boxes, each marked).

import { CHECKS, failureText } from "./checks.js";
import { isObject } from "./json.js";

/** What a check that passed showed, in English (or why it was not checked here). */
function passDetail(v, id) {
  const details = { ...PASS_DETAILS, ...seedsAndEndDetails(v), ...movesDetails(v) };
  return v.checks.notes[id] || details[id];
}

/** The detail lines of the checks that pass with nothing to count. */
const PASS_DETAILS = {
  "log.format": "the fields and types of SPEC §5",
  "sig.commitment": "the header (commitment, rules, seats, bots) was signed before any client seed",
  "sig.final": "the whole log is signed",
  "seed.commitment": "SHA-256(server seed) equals the commitment",
  "turn.order": "every roll and box belongs to the seat and turn whose move it was",
  "roll.count": "one to three rolls a turn, numbered 1, 2, 3; every box after a roll",
  "roll.hold": "every hold names valid positions, none on a first roll",
  "score.category": "every box was open and legal for its dice (joker and house rule included)",
  "final.totals": "every part of every seat's totals recomputes",
  "final.winner": "the winner and the draw recompute",
  "receipt.match": "the log is the game of your receipt: game id, commitment and your client seed",
};

/** The detail lines of the seeds, the start and the end of the game, and of the receipts and signatures. */
function seedsAndEndDetails(v) {
  const g = v.game;
  const first = v.doc.events.find((e) => isObject(e) && e.type === "start");
  return {
    "seed.revealed": `server seed ${v.doc.final && v.doc.final.server_seed}`,
    "client_seed.valid": `${v.view.clientSeeds.length} client seed(s), each valid, before the start`,
    "start.first": g && g.h.first === "random" ? `the roll-off re-derives: seat ${first && first.first} plays first`
      : `seat ${first && first.first} plays first, as the header promised`,
    "game.complete": v.info.status === "abandoned" ? "the game ends with its abandon event" : "every box of every seat is filled",
    "client_seed.commit": `${g && g.commitments.size} commitments, one per human seat before any reveal, each opened by its `
      + "client seed and salt",
    "game.abandon": abandonDetail(v.view.abandon, v.doc.header),
    "receipt.chain": `${v.moveReceipts && v.moveReceipts.length} move receipts: each signed by the server, each the `
      + "history of this log up to its event count",
    "player.signature": signedDetail(v.seatKeys),
  };
}

/** The detail lines of the moves replayed: rolls, boxes and the bots' decisions, counted. */
function movesDetails(v) {
  const g = v.game;
  const view = v.view;
  return {
    "roll.dice": `${g && g.nRolls} of ${g && g.nRolls} rolls re-derive from the seeds`,
    "score.points": `${g && g.nScores} boxes re-score from their dice (bonuses and totals too)`,
    "bot.identity": g && g.isBot.some(Boolean) ? "every bot is a published policy (id, version and hash)" : "no bot in this game",
    "bot.decision": `${view.botDecisions} bot decisions are the policy's own` + (view.botsReplayed.optimal
      ? ` (${view.botsReplayed.optimal} of the optimal bot, replayed from its table)` : ""),
  };
}

/** The report's checks: every check that says something, in the order of CHECKS, with its detail line. */
function checkEntries(v) {
  const entries = [];
  const { stopped } = v.checks;
  for (const id of CHECKS) {
    const status = v.checks.statuses[id];
    const mine = v.checks.failures.filter((f) => f.check === id);
    const more = mine.length - 3 + (v.checks.unlisted[id] || 0);
    if (status === "fail") {
      entries.push({ id, ok: false, status, detail: mine.slice(0, 3).map(failureText).join("; ") + (more > 0 ? ` (and ${more} more)` : "") });
    } else if (status === "pass") entries.push({ id, ok: true, status, detail: passDetail(v, id) });
    else if (status === "unchecked") entries.push({ id, ok: null, status, detail: v.checks.notes[id] });
    else if (v.checks.notes[id]) entries.push({ id, ok: null, status, detail: v.checks.notes[id] });
    else if (stopped && applies(v, id)) entries.push({ id, ok: null, status, detail: "not checked: the replay stopped at the failure above" });
    if (id === "seed.commitment" && v.info.seedSecret === false) {
      entries.push({ id: "seed.secret", ok: null, status: "note",
        detail: "this log's server seed was derived from a public value (fairdice simulate --seed): reproducible, not secret" });
    }
    if (id === "player.signature" && v.info.unsignedSeats && v.info.unsignedSeats.length) {
      entries.push({ id: "player.unsigned", ok: null, status: "note", detail: unsignedDetail(v.info.unsignedSeats, v.info.version) });
    }
  }
  return entries;
}

/** Whether check `id` concerns this log (those of receipts only when given, those of version 2 only there). */
function applies(v, id) {
  const g = v.game;
  if (id === "receipt.match" || id === "receipt.chain") return false; // (a skipped one has been checked, or not asked for)
  if (id === "client_seed.commit") return Boolean(g && g.committed);
  if (id === "game.abandon") return v.info.version >= 2 && v.doc.events.some((e) => isObject(e) && e.type === "abandon");
  if (id === "player.signature") return v.info.version >= 3;
  return true;
}

/** Mark the page's rolls and boxes: ok when nothing failed at that event (the move receipts name the event
 * a receipt departs after, but they speak of the whole history, not of that roll or box). */
function markEvents(v) {
  const firstFailure = new Map();
  for (const f of v.checks.failures) {
    if (f.event !== null && f.check !== "receipt.chain" && !firstFailure.has(f.event)) firstFailure.set(f.event, failureText(f));
  }
  for (const e of [...v.view.rolls, ...v.view.scores]) {
    e.ok = !firstFailure.has(e.index);
    e.detail = firstFailure.get(e.index) || "";
  }
}

/** verifyLog's answer for the verification `v` (replay.js): {ok, checks, statuses, failures, ..., document}. */
export function report(v) {
  markEvents(v);
  const failed = v.checks.failures.length > 0 || Object.keys(v.checks.unlisted).length > 0;
  const unchecked = Object.values(v.checks.statuses).includes("unchecked");
  return {
    ok: failed ? false : unchecked ? null : true,
    error: null,
    reason: null,
    checks: checkEntries(v),
    statuses: { ...v.checks.statuses },
    failures: v.checks.failures,
    unlisted: { ...v.checks.unlisted },
    ...v.info,
    clientSeeds: v.view.clientSeeds,
    rolls: v.view.rolls,
    rolloff: v.view.rolloff,
    scores: v.view.scores,
    abandon: v.view.abandon,
    botsReplayed: { ...v.view.botsReplayed },
    document: v.doc,
  };
}

/** The seats whose last signature was checked, in words. */
function signedDetail(keys) {
  const signed = keys ? [...keys].filter(([, key]) => key !== null).map(([seat]) => seat) : [];
  if (!signed.length) return "no human seat signs its moves in this log";
  return `seat(s) ${signed.join(", ")}: every event signed by the seat's key, and its last signature valid over the whole `
    + "history before it";
}

/** What a verdict says of moves no player signed (SPEC §5.7). */
function unsignedDetail(seats, version) {
  const why = version >= 3 ? "sent no key" : `of a log of version ${version}`;
  return `the moves of seat(s) ${seats.join(", ")} (${why}) are not signed by their players: whoever runs the server `
    + "could have written them";
}

/** Who abandoned the game and why, in words (the log has no clock: a timeout's length is the server's word). */
function abandonDetail(abandon, header) {
  if (!abandon) return "no abandon event";
  if (abandon.seat !== null) return `seat ${abandon.seat} abandoned, before the start or on its own turn`;
  if (abandon.reason === "timeout") {
    return `the server abandoned the game on its timeout (${header.abandon_timeout} seconds without a move, by the server's `
      + "clock: the log cannot show how long it waited)";
  }
  return "the operator of a game without human seats abandoned it";
}

/** verifyLog's answer for input that is not a log at all (UnusableInput). */
export function unusable(err) {
  return {
    ok: false, error: err.message, reason: err.reason, checks: [], statuses: {}, failures: [], unlisted: {}, gameId: null, rules: null, status: null,
    version: null, signed: false, trusted: false, seedSecret: null, unsignedSeats: null, clientSeeds: [], rolls: [], rolloff: [], scores: [],
    abandon: null, botsReplayed: {},
    document: null,
  };
}
