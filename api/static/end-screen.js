// The end screen's controller: the result, the log verified in this browser against every receipt it kept (the
// optimal bot replayed from its table, fetched and held to its published digest: tables.js), the coach (coach.js:
// the points the player left on the table), the downloads for the offline verifier. Drawing a verification is
// report.js's. The page loads this module when a game is first over (app.endScreen), not with the lobby.

import { api } from "./api.js";
import { store } from "./store.js";
import { $, h, on } from "./dom.js";
import { rulesName } from "./rules.js";
import { outcomeOf, Screen } from "./state.js";
import { botName, seatLabel, speaker } from "./board.js";
import { renderReport } from "./report.js";
import { checkSeats } from "./verification.js";
import { problemText } from "./problems.js";
import { optimalRulesOf, tableSize, tablesFor } from "./tables.js";
import { coachView, fetchAnalysis } from "./coach.js";

const MIB = 2 ** 20;

/** The log's file: game-<game>.json. */
export function fileName(log) {
  const id = (log && log.header && log.header.game_id) || "game";
  return `game-${id.replace(/[^A-Za-z0-9_-]/g, "_")}.json`;
}

/** The receipt's file: receipt-<game>.json, or with several seats on this device receipt-<game>-seat<n>.json. */
export const receiptName = (log, seat = null) =>
  fileName(log).replace(/^game-/, "receipt-").replace(/\.json$/, seat === null ? ".json" : `-seat${seat}.json`);
export const movesName = (log) => fileName(log).replace(/^game-/, "moves-");

/** Who ended an abandoned game, in words (the server's abandon is named as such: SPEC §4.3), or null. */
function abandonLine(t, ctx, view) {
  const abandon = view.final.status === "abandoned" && (view.events || []).find((e) => e.type === "abandon");
  if (!abandon) return null;
  const server = abandon.reason === "timeout" ? "timeout" : "server";
  const by = abandon.seat === null ? (view.seats.some((s) => s.type === "human") ? server : "operator")
    : abandon.seat === ctx.seat && !ctx.named ? "me" : "other";
  return t.t("end.abandonedBy", { by, name: abandon.seat === null ? "" : view.seats[abandon.seat].name });
}

const RESULT_PARTS = { upper: "end.upper", upper_bonus: "end.upperBonus", lower: "end.lower",
  yahtzee_bonus: "end.yahtzeeBonus", total: "end.total" };

/** The head and body of the result's table: a row per part of the totals (the Yahtzee bonus where the rules
 * have one), a column per seat. */
function resultTable(t, ctx, view) {
  const parts = Object.keys(RESULT_PARTS).filter((p) => p !== "yahtzee_bonus" || ctx.rules.yahtzee_bonus);
  return [
    h("thead", h("tr", h("th", { scope: "col" }, h("span.sr", t.t("end.part"))), view.seats.map((s, i) => h("th", { scope: "col" }, seatLabel(ctx, i))))),
    h("tbody", parts.map((p) => h("tr", { class: p === "total" ? "total" : "" }, h("th", { scope: "row" }, t.t(RESULT_PARTS[p])),
      view.final.totals.map((x) => h("td", t.number(x[p])))))),
  ];
}

export class EndScreen extends Screen {
  async finishGame(view) {
    this.app.game.stopWatch();
    const seat = this.app.game.viewSeat();
    const result = outcomeOf(view.final, seat, view.seats.length);
    const humans = view.seats.filter((x) => x.type === "human").length;
    let newBest = false;
    // the records count a player's own games against bots (a game among friends is nobody's record here)
    if (this.app.session.held().length && humans === 1 && view.final.status === "finished") {
      newBest = store.record(view.game_id, view.rules, { solo: result.outcome === "solo", won: result.outcome === "won",
        draw: result.outcome === "draw", score: result.score }).newBest;
    }
    // (a spectator, or friends passing one device: no "won" or "lost" of this browser's own to remember)
    const own = this.app.session.held().length === 1 ? { outcome: result.outcome, score: result.score }
      : { outcome: result.outcome === "abandoned" ? "abandoned" : "over" };
    if (this.st.session) store.update(view.game_id, { result: own });
    this.st.newBest = newBest && view.final.status === "finished";
    this.renderResult(view);
    $("#result").hidden = false;
    $("#play").hidden = true;
    $(".table-area").classList.add("over");
    $("#fairness").hidden = false;
    $("#server-seed").textContent = view.final.server_seed;
    $("#fair-commitment").textContent = view.commitment;
    this.app.game.render();
    $("#result-title").focus({ preventScroll: true });
    window.scrollTo(0, 0);
    $("#coach").replaceChildren();
    const analysis = this.analysisOf(view); // (asked for now, shown once the verdict is)
    await this.runVerification(view.game_id);
    const got = await analysis;
    if (got) await this.showCoach(view, got);
  }

  /** The coach's analysis of a game this browser played (fetchAnalysis); none for a spectator. Under the
   * upper-first house rule there is no optimal play to judge by (SPEC §4.7): not asked, the coach says why. */
  async analysisOf(view) {
    if (!this.app.session.held().length) return null;
    if (view.upper_first) return { doc: { available: false, reason: "upper_first", seats: [] } };
    return fetchAnalysis(view.game_id);
  }

  /** The coach for the seat shown: the points left on the table and the costliest decisions (coach.js), or why it
   * cannot judge; each game's loss kept with the game in this browser's history, for the lobby's list. */
  async showCoach(view, got) {
    if (!this.st.view || this.st.view.game_id !== view.game_id) return; // (another game is shown by now)
    const ctx = this.app.game.ctx();
    const seat = ctx.seat ?? 0;
    this.st.coach = { game_id: view.game_id, got, seat };
    this.drawCoach(view);
    const mine = got.doc && got.doc.available !== false && got.doc.seats.find((s) => s.seat === seat);
    if (mine && this.st.session && this.app.session.held().includes(seat)) {
      store.update(view.game_id, { coach_loss: mine.total_expected_loss });
    }
  }

  /** The coach of the game shown, in the language spoken now (again on a change of language). */
  drawCoach(view) {
    const c = this.st.coach;
    if (!c || c.game_id !== view.game_id) return;
    $("#coach").replaceChildren(coachView({ t: this.t, ...c.got, seat: c.seat, rules: this.app.game.ctx().rules }));
  }

  /** The optimal bot's table for this log, when one of its seats is that bot (tables.js), saying what is being
   * downloaded and how big it is while it comes. {tables, problem}, as tablesFor answers. */
  async tablesOf(text) {
    let doc;
    try {
      doc = JSON.parse(text);
    } catch {
      return { tables: {}, problem: null }; // (not JSON: the verification says so)
    }
    const rules = optimalRulesOf(doc);
    if (!rules) return { tables: {}, problem: null };
    const t = this.t;
    const size = t.number(Math.round((tableSize(rules) / MIB) * 10) / 10);
    const say = (done) => t.t("verify.table", { rules: rulesName(t, this.st.rules[rules], rules), size,
      done: t.number(Math.round((done / MIB) * 10) / 10) });
    const plain = $("#verify-plain"); // (the plain sentence, on screen: the details are folded)
    const onProgress = (received) => { // (called only as bytes arrive: a table kept in this browser is not downloaded)
      plain.dataset.table = "downloading";
      plain.textContent = say(received);
    };
    try {
      return await tablesFor(doc, { onProgress });
    } finally {
      delete plain.dataset.table;
    }
  }

  /** The end of a game: its outcome, the totals in a line (and who ended an abandoned game), each seat's parts. */
  renderResult(view) {
    const t = this.t;
    const ctx = this.app.game.ctx();
    this.drawOutcome(t, ctx, view);
    const sub = [];
    if (view.seats.length > 1) sub.push(view.seats.map((s, i) => `${seatLabel(ctx, i)} ${t.number(view.final.totals[i].total)}`).join(" · "));
    if (this.st.newBest) sub.push(t.t("end.newBest", { rules: rulesName(t, ctx.rules, view.rules) }));
    const abandoned = abandonLine(t, ctx, view);
    if (abandoned) sub.push(abandoned);
    $("#result-sub").textContent = sub.join("\n");
    $("#result-table").replaceChildren(...resultTable(t, ctx, view));
    this.drawCoach(view);
  }

  /** The result's title: won, lost, a draw, or (several players on this device, or none) the winner by name. */
  drawOutcome(t, ctx, view) {
    const result = outcomeOf(view.final, ctx.seat, view.seats.length);
    // several players on this device, or none: the winner by name rather than "You win" or "You lose"
    if (ctx.named && ["won", "lost"].includes(result.outcome)) result.outcome = "other";
    const winner = result.winner !== undefined ? speaker(ctx, result.winner) : null;
    const winnerName = !winner ? "" : winner.who === "bot" ? t.t("end.winnerBot", { name: winner.name }) : winner.name;
    $("#result-title").textContent = t.t("end.title", { outcome: result.outcome, score: result.score, winner: winnerName });
    $("#result").dataset.outcome = result.outcome;
  }

  /** How to call seat `i` of a log: "You" for this browser's one seat of its own game, a bot by its name. */
  namesFor(log) {
    const seats = (log && log.header && log.header.seats) || [];
    const mine = log && log.header && this.st.session && log.header.game_id === this.st.session.game_id ? this.app.session.held() : [];
    return (i) => {
      const s = seats[i];
      if (mine.length === 1 && i === mine[0]) return this.t.t("seat.label", { who: "me" });
      if (s && s.type === "bot" && s.bot) return this.t.t("seat.label", { who: "bot", name: botName(this.t, s.bot.id) });
      return s ? s.name : `#${i}`;
    };
  }

  /** The log held to every receipt this browser kept: once per seat it played (its seed receipt), with every
   * move receipt; a spectator's against the server's keys and the move receipts of what it watched. */
  async runVerification(gameId) {
    const t = this.t;
    $("#verify-report").replaceChildren(h("p.muted", t.t("verify.checking")));
    $("#verify-summary").textContent = t.t("verify.pending");
    $("#verify-seats").hidden = true;
    document.getElementById("bad-table")?.remove();
    $("#fairness").dataset.verdict = "pending";
    this.sayPlainly("pending");
    try {
      const receipts = this.app.session.receiptsFor(gameId);
      const moveReceipts = this.app.session.moveReceiptsFor(gameId);
      const text = await api.logText(gameId);
      const { tables, problem } = await this.tablesOf(text);
      const results = await checkSeats(text, { receipts, moveReceipts, trustedKeys: this.st.trustedKeys, tables });
      if (results.some((r) => r.notLog)) throw new Error(t.t("verify.serverLogBroken"));
      const log = results[0].report.document;
      this.st.log = log;
      $("#download-btn").disabled = false;
      $("#receipt-btn").hidden = !receipts.length;
      $("#moves-btn").hidden = !moveReceipts.length;
      $("#verify-cmd").textContent = ["fairdice-verify", ...receipts.map((r) => `--receipt ${receiptName(log, receipts.length > 1 ? r.seat : null)}`),
        moveReceipts.length ? `--receipts ${movesName(log)}` : "", fileName(log)].filter(Boolean).join(" ");
      this.st.verified = { report: (results.find((r) => r.report.ok === false) || results[0]).report, log, results,
        tableProblem: problem && problem.reason };
      this.showReport(this.st.verified);
    } catch (err) {
      $("#fairness").dataset.verdict = "fail";
      $("#verify-summary").textContent = t.t("verify.couldNot");
      $("#verify-report").replaceChildren(h("p.bad", problemText(t, err)));
      this.sayPlainly("fail");
    }
  }

  showReport({ report, log, results = [], tableProblem = null }) {
    const names = this.namesFor(log);
    renderReport({ t: this.t, box: $("#verify-report"), summaryEl: $("#verify-summary"), host: $("#fairness"), report,
      names, rules: this.st.rules[log.header.rules] });
    // a table the server altered: refused (the optimal bot then stays unchecked), and said under the plain verdict,
    // for it is the server's doing
    document.getElementById("bad-table")?.remove();
    if (tableProblem === "bad_table") {
      $("#verify-plain").after(h("p.bad#bad-table", { "data-testid": "bad-table" }, this.t.t("notLog.bad_table")));
    }
    // several seats of this device: each held the log to its own receipt
    const verdict = (ok) => (ok === true ? "pass" : ok === false ? "fail" : "partial");
    $("#verify-seats").replaceChildren(...results.filter((r) => r.seat !== null).map((r) => h("li", { class: verdict(r.report.ok) },
      this.t.t("verify.seat", { verdict: verdict(r.report.ok), name: names(r.seat) }))));
    $("#verify-seats").hidden = results.length < 2;
    this.sayPlainly($("#fairness").dataset.verdict);
  }

  /** The verdict in one plain sentence, before the downloads and the folded details (which a failure unfolds:
   * what failed is then the first thing to read). */
  sayPlainly(verdict) {
    $("#verify-plain").textContent = this.t.t("fair.plain", { verdict });
    if (verdict === "fail") $("#fair-details").open = true;
  }

  download(doc, name) {
    const blob = new Blob([JSON.stringify(doc, null, 1) + "\n"], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const a = h("a", { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 2000);
  }

  /** The end screen's controls: a new game, the downloads, the verifier's command copied. */
  wire() {
    on("#new-game-btn", "click", () => this.app.lobby.showLobby());
    on("#download-btn", "click", () => this.st.log && this.download(this.st.log, fileName(this.st.log)));
    on("#receipt-btn", "click", () => {
      const receipts = this.st.log ? this.app.session.receiptsFor(this.st.log.header.game_id) : [];
      for (const r of receipts) this.download(r, receiptName(this.st.log, receipts.length > 1 ? r.seat : null));
    });
    on("#moves-btn", "click", () => {
      const receipts = this.st.log ? this.app.session.moveReceiptsFor(this.st.log.header.game_id) : [];
      if (receipts.length) this.download(receipts, movesName(this.st.log));
    });
    on("#copy-cmd", "click", async () => {
      try {
        await navigator.clipboard.writeText($("#verify-cmd").textContent);
        this.app.toast(this.t.t("toast.copied"), "info");
      } catch {
        this.app.toast(this.t.t("toast.copyFailed"), "info");
      }
    });
  }
}
