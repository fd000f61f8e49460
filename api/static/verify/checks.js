// The check ids of SPEC §7 and `Checks`, the one place every check writes its verdict through: a status per id,
// the failures (each {check, event, field, expected, found}), and why a check was skipped or not checked here.

import { sameJSON } from "./json.js";
import { show } from "./phrases.js";

/** The check ids of SPEC §7, in the order of its table: receipt.match (§5.5), those of log format version 2
 * (client seed commitments, abandon rules, move receipts) and of version 3 (the players' signatures). */
export const CHECKS = Object.freeze([
  "log.format", "log.key", "sig.commitment", "sig.final", "seed.revealed", "seed.commitment",
  "client_seed.valid", "start.first", "turn.order", "roll.count", "roll.hold", "roll.dice",
  "score.category", "score.points", "game.complete", "final.totals", "final.winner",
  "bot.identity", "bot.decision", "receipt.match", "client_seed.commit", "game.abandon", "receipt.chain",
  "player.signature",
]);
const MAX_LISTED = 10; // failures listed per check; the rest are counted (as the reference does)

/** The replay cannot meaningfully go on. */
export class Stop extends Error {}

/** A failure in English, as the reference's detail lines write it. */
export function failureText(f) {
  if (f.check === "seed.revealed") return "the game is not over: its server seed is not revealed yet, so its dice cannot be checked";
  return `event ${f.event === null ? "-" : f.event}, ${f.field}: expected ${show(f.expected)}, found ${show(f.found)}`;
}

export class Checks {
  constructor() {
    this.statuses = Object.fromEntries(CHECKS.map((c) => [c, "skip"]));
    this.failures = [];
    this.unlisted = {};
    this.notes = {}; // check -> why it was skipped or could not be checked here
    this.stopped = false; // the replay stopped at a failure that leaves no game to follow
  }

  fail(check, event, fieldName, expected, found) {
    this.statuses[check] = "fail";
    if (this.failures.filter((f) => f.check === check).length < MAX_LISTED) {
      this.failures.push({ check, event, field: fieldName, expected, found });
    } else this.unlisted[check] = (this.unlisted[check] || 0) + 1;
  }

  passed(...checks) {
    for (const c of checks) if (this.statuses[c] === "skip") this.statuses[c] = "pass";
  }

  /** Nothing failed here, but this browser could not check it (Ed25519, the optimal bot). */
  notChecked(check, why) {
    if (this.statuses[check] !== "fail") this.statuses[check] = "unchecked";
    this.notes[check] = why;
  }

  expect(check, event, fieldName, expected, found) {
    if (sameJSON(expected, found)) return true;
    this.fail(check, event, fieldName, expected, found);
    return false;
  }

  /** A failure that leaves no game to follow: the replay stops here. */
  stop(check, event, fieldName, expected, found) {
    this.fail(check, event, fieldName, expected, found);
    this.stopped = true;
    throw new Stop();
  }

  failed(check) {
    return this.statuses[check] === "fail";
  }
}
