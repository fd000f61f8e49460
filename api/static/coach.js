// The coach on the end screen (SPEC §4.7): the analysis of a game that is over (GET /v1/games/{id}/analysis,
// the figures `fairdice analyze` prints), for one seat: the expected points left on the table against optimal
// play of its own card, then its costliest few decisions first, each as its position ("you kept 3-3; best was
// 3-3-5: −2.1") with the dice drawn as the board draws them. Nothing here decides anything: the server's
// analysis is advice, not a verdict (the verdict is verify.js's).

import { drawnDie } from "./board.js";
import { h } from "./dom.js";
import { boxLabel } from "./rules.js";

/** Decisions shown, costliest first. */
export const SHOWN = 3;
const MINUS = "\u2212";

/** The decisions of one seat's analysis that lost points, costliest first (equal losses: in the order played). */
export function costliest(seatDoc, n = SHOWN) {
  return seatDoc.decisions.filter((d) => d.loss > 0).map((d, i) => [d, i])
    .sort((a, b) => b[0].loss - a[0].loss || a[1] - b[1]).slice(0, n).map(([d]) => d);
}

/** The analysis of game `gameId`: {doc} (the server's document; doc.available false: it cannot judge), or
 * {problem: code} when there is none now ("engine_warming_up", "game_not_over", "network_error", ...). */
export async function fetchAnalysis(gameId, { base = "", fetch: fetchImpl = globalThis.fetch } = {}) {
  let resp;
  try {
    resp = await fetchImpl(`${base}v1/games/${encodeURIComponent(gameId)}/analysis`, {
      headers: { Accept: "application/json, application/problem+json" }, cache: "no-store" });
  } catch {
    return { problem: "network_error" };
  }
  let body;
  try {
    body = await resp.json();
  } catch {
    body = null;
  }
  if (resp.ok && body) return { doc: body };
  const code = body && body.code;
  if (code === "analysis_unavailable") return { doc: { available: false, reason: body.reason, seats: [] } };
  return { problem: code || `http_${resp.status}` };
}

const keepText = (keep) => keep.join("-");

/** What the seat did, in words ("you kept 3-3", "you scored 25 in Full house"). */
function madeText(t, rules, choice) {
  if (choice.action === "score") return t.t("coach.scored", { points: choice.points, box: boxLabel(t, rules, choice.category) });
  return choice.keep.length ? t.t("coach.kept", { dice: keepText(choice.keep) }) : t.t("coach.keptNone");
}

/** The best choice, in words ("best was 3-3-5", "best was 25 in Full house"; "best was to keep ..." or "best was
 * to score ..." when it is not the kind of move made). */
function bestText(t, rules, best, made) {
  const same = best.action === made.action;
  if (best.action === "score") {
    return t.t(same ? "coach.bestScore" : "coach.bestToScore", { points: best.points, box: boxLabel(t, rules, best.category) });
  }
  if (!best.keep.length) return t.t("coach.bestKeepNone");
  return t.t(same ? "coach.bestKeep" : "coach.bestToKeep", { dice: keepText(best.keep) });
}

/** One decision: where it was, the dice as the board draws them (the ones kept marked), what was done and what was best. */
function decisionItem(t, rules, d) {
  const kept = d.choice.action === "roll" ? d.choice.hold : [];
  const dice = h("span.coach-dice", d.position.dice.map((face, p) => {
    const die = drawnDie(face);
    if (kept.includes(p)) die.classList.add("kept");
    return die;
  }));
  return h("li.coach-move", { "data-testid": "coach-move", "data-loss": String(d.loss) },
    h("span.coach-where", t.t("coach.where", { turn: d.turn, roll: d.position.roll })),
    dice,
    h("span.coach-text", t.t("coach.move", { made: madeText(t, rules, d.choice), best: bestText(t, rules, d.best, d.choice) }),
      h("b.coach-loss", `${MINUS}${t.number(Math.round(d.loss * 10) / 10)}`)));
}

/**
 * The coach for `seat`, as an element: the points left on the table and the costliest SHOWN decisions, or why the
 * coach cannot judge. `doc`: the analysis; `rules`: the page's rule set (box names); `problem`: fetchAnalysis's.
 */
export function coachView({ t, doc = null, problem = null, seat, rules }) {
  const box = h("section.coach", { "data-testid": "coach", "aria-labelledby": "coach-title" },
    h("h3#coach-title", t.t("coach.title")));
  if (problem) {
    box.append(h("p.coach-note", t.t(problem === "engine_warming_up" ? "coach.preparing" : "coach.unavailable")));
    return box;
  }
  if (!doc.available) {
    box.append(h("p.coach-note", { "data-testid": "coach-cannot-judge" }, t.t("coach.cannotJudge")));
    return box;
  }
  const mine = doc.seats.find((s) => s.seat === seat);
  if (!mine) return box;
  const loss = Math.round(mine.total_expected_loss * 10) / 10;
  box.append(h("p.coach-total", { "data-testid": "coach-total", "data-loss": String(mine.total_expected_loss) },
    t.t("coach.total", { loss: t.number(loss) })));
  box.append(h("p.coach-note", t.t("coach.explain")));
  const shown = costliest(mine);
  if (!shown.length) box.append(h("p.coach-note", t.t(mine.decision_count ? "coach.perfect" : "coach.none")));
  else box.append(h("ol.coach-moves", shown.map((d) => decisionItem(t, rules, d))));
  return box;
}
