// A verification report (verify.js) shown in the player's language: the verdict, every check by its id,
// each failure from its structured fields ({check, event, field, expected, found}, the words among them
// verify.js's Phrases, worded by the catalogue's "phrase.<code>"), the seeds, the roll-off and every roll.
// verify.js's English is used only for a check id or a phrase the catalogue does not know.

import { h } from "./dom.js";
import { boxLabel } from "./rules.js";
import { miniDice } from "./board.js";
import { Phrase } from "./verify.js";

const SHOWN_PER_CHECK = 3;
const LONGEST_VALUE = 200; // characters of a value shown in a failure (the log has it whole)

/** Characters that do not show, or show as something else: a string holding one is shown as JSON. */
// eslint-disable-next-line no-control-regex -- the control characters are what this pattern looks for
const UNSEEN = /^$|^\s|\s$|[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;

/** Whether a string shown bare could be taken for another value: "", "1", "null", "[]", " x", "a\u200bb". */
function ambiguous(s) {
  if (UNSEEN.test(s)) return true;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** A value of the log exactly: as JSON, but a plain string (an id, hex) bare; cut when long (the log has it whole). */
function value(v) {
  const text = typeof v === "string" && !ambiguous(v) ? v : JSON.stringify(v) ?? "null";
  return text.length > LONGEST_VALUE ? `${text.slice(0, LONGEST_VALUE - 1)}…` : text;
}
/** An id or a hex string in a sentence: bare. */
const bare = (v) => (typeof v === "string" ? v : value(v));

function tick(t, ok) {
  const [cls, key, mark] = ok === true ? ["ok", "pass", "✓"] : ok === false ? ["bad", "fail", "✗"] : ["na", "na", "–"];
  return h("span.tick", { role: "img", class: cls, "aria-label": t.t(`verify.tick.${key}`) }, mark);
}

const checkName = (t, id) => (t.has(`check.${id}`) ? t.t(`check.${id}`) : id);

/** A phrase's parameter: seats and a hold as "[0, 2]"; the values one_of accepts, as JSON, "1, 2, or 3"; other
 * lists "a, b, or c" (keys, bots) or "a, b, and c" (parts); ids, hex and numbers as they are. */
function phraseParam(t, name, v) {
  if (!Array.isArray(v)) return typeof v === "number" ? v : bare(v);
  if (name === "seats" || name === "hold") return `[${v.map((x) => (x === null ? t.t("phrase.operator") : bare(x))).join(", ")}]`;
  if (name === "values") return t.either(v.map(value));
  return name === "parts" ? t.list(v.map(bare)) : t.either(v.map(bare));
}

/** One of verify.js's Phrases in the player's language (its English when the catalogue does not know it). */
export function phraseText(t, phrase) {
  const key = `phrase.${phrase.code}`;
  if (!t.has(key)) return String(phrase);
  return t.t(key, Object.fromEntries(Object.entries(phrase.params).map(([k, v]) => [k, phraseParam(t, k, v)])));
}

/** What a failure expected or found: a value of the log as it is, the verifier's words in the player's language. */
const term = (t, v) => (v instanceof Phrase ? phraseText(t, v) : value(v));

export function failureText(t, f) {
  if (f.check === "seed.revealed") return t.t("failure.notOver");
  return t.t("verify.failure", { at: f.event === null ? "none" : "event", event: f.event, field: f.field,
    expected: term(t, f.expected), found: term(t, f.found) });
}

function failuresOf(t, report, id) {
  const mine = report.failures.filter((f) => f.check === id);
  const more = mine.length - SHOWN_PER_CHECK + ((report.unlisted || {})[id] || 0);
  return mine.slice(0, SHOWN_PER_CHECK).map((f) => failureText(t, f)).join("; ")
    + (more > 0 ? t.t("verify.more", { count: more }) : "");
}

/** How many bot decisions the verification replayed, every policy's together. */
const botMoves = (report) => Object.values(report.botsReplayed || {}).reduce((a, b) => a + b, 0);

function passText(t, c, report, names) {
  const doc = report.document || {};
  const header = doc.header || {};
  const start = (doc.events || []).find((e) => e && e.type === "start");
  const params = {
    "log.key": { key: header.key_id },
    "seed.revealed": { seed: doc.final && doc.final.server_seed },
    "client_seed.valid": { count: report.clientSeeds.length },
    "start.first": { random: header.first === "random" ? "yes" : "no", who: start ? names(start.first) : "" },
    "roll.dice": { count: report.rolls.length },
    "score.points": { count: report.scores.length },
    "game.complete": { status: report.status },
    "bot.identity": { bots: (header.seats || []).some((s) => s && s.type === "bot") ? "some" : "none" },
    "bot.decision": { count: botMoves(report), optimal: (report.botsReplayed || {}).optimal || 0 },
  }[c.id] || {};
  const key = c.id === "log.key" ? (report.trusted ? "pass.log.key.trusted" : "pass.log.key.own") : `pass.${c.id}`;
  return t.has(key) ? t.t(key, params) : c.detail;
}

/** SPEC §5.7: the human seats whose moves no player signed, said plainly (the operator could have written them). */
export function unsignedNote(t, report, names) {
  const seats = t.list((report.unsignedSeats || []).map((seat) => (names ? names(seat) : String(seat))));
  const why = report.version >= 3 ? t.t("note.player.unsigned.key") : t.t("note.player.unsigned.version", { version: report.version });
  return t.t("note.player.unsigned", { seats, why });
}

function checkDetail(t, c, report, names) {
  if (c.id === "seed.secret") return t.t("note.seed.secret");
  if (c.id === "player.unsigned") return unsignedNote(t, report, names);
  if (c.ok === false) return failuresOf(t, report, c.id);
  if (c.ok === true) return passText(t, c, report, names);
  if (c.status === "unchecked") {
    if (c.id === "bot.decision") return t.t("unchecked.bot.decision");
    return c.id.startsWith("sig.") ? t.t("unchecked.sig") : t.t("unchecked.other");
  }
  return report.failures.length ? t.t("verify.stopped") : t.t("unchecked.other");
}

/** The verdict line: passed, failed (which checks), or not fully checked here. */
export function summaryText(t, report) {
  const names = (ok) => t.list(report.checks.filter((c) => c.ok === ok && c.status !== "note").map((c) => checkName(t, c.id)));
  if (report.ok === true) {
    const good = report.rolls.filter((r) => r.ok).length;
    const bots = botMoves(report); // (what was replayed, said exactly: the bots' moves too)
    return t.t("verify.summary.pass", { good, count: report.rolls.length }) + (bots ? t.t("verify.summary.bots", { count: bots }) : "");
  }
  if (report.ok === false) return t.t("verify.summary.fail", { checks: names(false) });
  return t.t("verify.summary.partial", { checks: names(null) });
}

/** Why a file is not a log: the headline, the reason, and verify.js's own words as a technical detail. */
export function renderNotLog({ t, box, summaryEl, host, notLog }) {
  host.dataset.verdict = "fail";
  summaryEl.textContent = t.t("notLog.title");
  const technical = notLog.detail
    ? [h("details.technical", h("summary", t.t("verify.technical")), h("code", { lang: "en" }, notLog.detail))] : [];
  const key = t.has(`notLog.${notLog.reason}`) ? `notLog.${notLog.reason}` : "notLog.unusable";
  box.replaceChildren(h("p.bad", { "data-testid": "not-a-log", "data-reason": notLog.reason }, t.t(key)), ...technical);
}

/**
 * Show a report in `box`, its verdict in `summaryEl`, and `data-verdict` on `host` (pass, fail, partial).
 * `names(seat)`: how to call a seat; `rules`: the merged rule set of the log (for box names).
 */
export function renderReport({ t, box, summaryEl, host, report, names, rules }) {
  host.dataset.verdict = report.ok === true ? "pass" : report.ok === false ? "fail" : "partial";
  summaryEl.textContent = summaryText(t, report);
  const checks = h("ul.checks", report.checks.map((c) => h("li", { "data-check": c.id, class: c.ok === false ? "bad" : "" }, tick(t, c.ok),
    h("span", h("strong", checkName(t, c.id)), h("span.detail", checkDetail(t, c, report, names))))));
  const seeds = h("dl.seeds", h("dt", t.t("verify.clientSeeds", { count: report.clientSeeds.length })),
    h("dd", report.clientSeeds.map((s) => h("code", s))));
  const rolloff = report.rolloff.length ? rolloffBox(t, report.rolloff, names) : null;
  const good = report.rolls.filter((r) => r.ok).length;
  // the list scrolls inside its own box: a keyboard reaches it (tabindex) and a screen reader names it
  const scroller = h("div.rolls-scroll", { tabindex: "0", role: "region", "aria-label": t.t("verify.rollsRegion"), "data-testid": "rolls" },
    rollsList(t, report, names, rules));
  box.replaceChildren(...[checks, seeds, rolloff].filter(Boolean), h("details.rolls-box", { open: true },
    h("summary", t.t("verify.rolls", { good, count: report.rolls.length })), scroller));
}

/** Every turn's rolls and score, a turn marked bad when one of them failed (each with its first failure). */
function rollsList(t, report, names, rules) {
  const firstFailure = new Map();
  for (const f of report.failures) if (f.event !== null && !firstFailure.has(f.event)) firstFailure.set(f.event, failureText(t, f));
  const scores = new Map();
  report.document.events.forEach((e, i) => { if (e && e.type === "score") scores.set(`${e.seat}:${e.turn}`, { ...e, index: i }); });
  const list = h("ol.rolls");
  for (const [k, rolls] of rollsByTurn(report.rolls)) {
    const [seat, turn] = k.split(":").map(Number);
    const sc = scores.get(k);
    const scoreBad = sc && firstFailure.has(sc.index);
    list.append(h("li", { class: rolls.every((r) => r.ok) && !scoreBad ? "" : "bad" },
      h("span.who", t.t("verify.turn", { turn, who: names(seat) })),
      h("span.seq", rolls.map((r) => h("span.roll", { "data-event": String(r.index), class: r.ok ? "ok" : "bad",
        title: r.ok ? t.t("verify.rederived") : firstFailure.get(r.index) || "" }, miniDice(r), tick(t, r.ok)))),
      sc ? h("span.scored", { title: scoreBad ? firstFailure.get(sc.index) : "" },
        `${boxLabel(t, rules, sc.category)} ${t.number(sc.points)}`, scoreBad ? [" ", tick(t, false)] : null) : null));
  }
  return list;
}

/** The rolls grouped by "seat:turn", in the order of their first roll. */
function rollsByTurn(rolls) {
  const groups = new Map();
  for (const r of rolls) {
    const k = `${r.seat}:${r.turn}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  return groups;
}

/** The roll-off for the first seat: each seat's dice and sum (with its round when it took several). */
function rolloffBox(t, rolloff, names) {
  const manyRounds = rolloff.some((x) => x.round > 1);
  return h("div.rolloff", h("strong", t.t("verify.rolloff")),
    h("ul", rolloff.map((r) => h("li.roll", { class: r.ok ? "ok" : "bad" },
      h("span.who", manyRounds ? t.t("verify.rolloffRound", { round: r.round, who: names(r.seat) }) : names(r.seat)),
      miniDice({ dice: r.dice || [], hold: [] }),
      h("span.muted", `= ${t.number((r.dice || []).reduce((a, b) => a + b, 0))}`), tick(t, r.ok)))));
}
