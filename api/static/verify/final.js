// The end of a game (SPEC §4.4, §5.4): game.complete, final.totals and final.winner, held to the game the replay
// followed.

import { firstDifference } from "./json.js";
import { said } from "./phrases.js";
import { isUpper } from "./rules.js";

/** A seat's totals {upper, upper_bonus, lower, yahtzee_bonus, total} from its boxes and bonuses. */
function seatTotals(g, s) {
  let upper = 0;
  let lower = 0;
  for (const [c, v] of g.boxes[s]) {
    if (v !== null) {
      if (isUpper(c)) upper += v;
      else lower += v;
    }
  }
  const [ub, yb] = g.bonus[s];
  return { upper, upper_bonus: ub, lower, yahtzee_bonus: yb, total: upper + ub + lower + yb };
}

/** game.complete, final.totals, final.winner of `doc` after its replay into the game `g`. */
export function checkEnd(checks, doc, g) {
  const fin = doc.final;
  const { phase } = g;
  const events = doc.events;
  if (fin === null) {
    if (phase === "over" || phase === "abandoned") checks.fail("game.complete", null, "final", said("final_block"), null);
    return;
  }
  if (fin.status === "finished" && phase !== "over") {
    const open = g.boxes.reduce((a, b) => a + [...b.values()].filter((v) => v === null).length, 0);
    const shown = { play: said("shown_in_progress", { count: open }), seeds: said("shown_not_started"), abandoned: said("shown_abandoned") }[phase];
    checks.fail("game.complete", null, "final.status", shown, fin.status);
  } else if (fin.status === "abandoned" && phase !== "abandoned") {
    checks.fail("game.complete", events.length ? events.length - 1 : null, "type", said("abandon_event_last"),
      events.length ? events[events.length - 1].type : said("no_events"));
  }
  checks.passed("game.complete");
  const totals = g.boxes.map((_, s) => seatTotals(g, s));
  const diff = firstDifference(totals, fin.totals, "final.totals");
  if (diff) checks.fail("final.totals", null, ...diff);
  checks.passed("final.totals");
  let winner = null;
  let draw = false;
  if (fin.status === "finished") {
    const best = Math.max(...totals.map((t) => t.total));
    const winners = totals.flatMap((t, s) => (t.total === best ? [s] : []));
    winner = winners.length === 1 ? winners[0] : null;
    draw = winners.length > 1;
  }
  checks.expect("final.winner", null, "final.winner", winner, fin.winner);
  checks.expect("final.winner", null, "final.draw", draw, fin.draw);
  checks.passed("final.winner");
}
