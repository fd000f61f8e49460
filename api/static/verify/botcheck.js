// bot.identity and bot.decision (SPEC §4.5): every bot seat names a published policy, and every decision it made
// is the policy's own, replayed from the same dice and tie-breaks. The server knows every future die, so only a
// replay of the policy shows a bot that chose with that knowledge.

import { PUBLISHED_BOTS, botDecision, publishedBotHashes } from "./bots.js";
import { has } from "./json.js";
import { optimalDecision } from "./optimal.js";
import { moveSaid, said } from "./phrases.js";

/** bot.identity for every bot seat of the header; returns {seat: true} for the seats whose policy is the published one. */
export async function checkBotIdentities(checks, header) {
  const hashes = await publishedBotHashes();
  const botOk = {};
  header.seats.forEach((seat, s) => {
    if (seat.type !== "bot") return;
    const { id, version, hash } = seat.bot;
    let problem = null;
    if (!has(PUBLISHED_BOTS, id)) problem = ["id", said("a_published_policy", { bots: Object.keys(PUBLISHED_BOTS).sort() }), id];
    else if (PUBLISHED_BOTS[id].version !== version) problem = ["version", PUBLISHED_BOTS[id].version, version];
    else if (hashes[id] !== hash) problem = ["hash", hashes[id], hash];
    if (problem) checks.fail("bot.identity", null, `header.seats[${s}].bot.${problem[0]}`, problem[1], problem[2]);
    botOk[s] = !problem;
  });
  checks.passed("bot.identity");
  return botOk;
}

/** bot.decision for event i, the move of the bot whose turn it is in the game `g` (view.botDecisions counts the
 * replayed ones, view.botsReplayed per policy). The optimal bot is replayed from g.optimal[rules], its table (the
 * digest checked, optimal.js); without it its decisions are not checked here. */
export async function checkBotDecision(checks, view, i, ev, g, turn) {
  const seat = g.cur;
  if (!g.botOk[seat] || !g.derive) return;
  const id = g.h.seats[seat].bot.id;
  let decision;
  const table = id === "optimal" && g.optimal ? g.optimal[g.rules] : null;
  if (id === "optimal" && !g.upperFirst && !table) {
    checks.notChecked("bot.decision", "the optimal bot's decisions are not checked: this verification was not given " +
      `its ${g.rules} table (verifyLog's tables option); run \`fairdice-verify game.json\``);
    return;
  }
  if (id === "optimal" && g.upperFirst) {
    checks.fail("bot.decision", i, "type", said("optimal_upper_first"), ev.type);
    return;
  }
  const tiebreak = (k) => g.derive.tiebreak(seat, turn, g.rolls, k);
  try {
    decision = table ? await optimalDecision(table, g.boxes[seat], g.dice, g.rolls, tiebreak)
      : await botDecision(id, g.rules, g.boxes[seat], g.dice, g.rolls, g.upperFirst, tiebreak);
  } catch (err) {
    checks.fail("bot.decision", i, "type", said("policy_failed", { error: err.message }), ev.type);
    return;
  }
  view.botDecisions += 1;
  view.botsReplayed[id] = (view.botsReplayed[id] || 0) + 1;
  if (decision.action !== ev.type) {
    checks.fail("bot.decision", i, "type", moveSaid(decision.action, decision.hold, decision.category), moveSaid(ev.type, ev.hold, ev.category));
  } else if (decision.action === "roll") checks.expect("bot.decision", i, "hold", decision.hold, ev.hold);
  else checks.expect("bot.decision", i, "category", decision.category, ev.category);
  checks.passed("bot.decision");
}
