// The game screen's controller: the board drawn from the shared state (board.js draws), the player's rolls, holds
// and boxes sent as signed commands (player.js), the server's answers held to this page's history and played out
// event by event (a bot's turn is seen, not jumped over), other players watched, hints asked for.

import { api, ApiProblem } from "./api.js";
import { store } from "./store.js";
import { $, $$, h, on } from "./dom.js";
import { boxLabel } from "./rules.js";
import { applyEvent, canHold, DEFAULT_ENGINE_WAIT, isOver, isTurnOf, MAX_ROLLS, Screen, viewOf } from "./state.js";
import { makeDice, renderBoard, renderBoxes, renderControls, renderDice, renderMoves, speaker } from "./board.js";
import { askConfirm } from "./dialogs.js";
import { AnswerRefused } from "./history.js";
import { abandonCommand, awaitedSeats, rollCommand, scoreCommand } from "./player.js";
import { watchGame } from "./watch.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The server's hint (GET /v1/games/{id}/hint) in words: {hold?, category?, text}. */
export function describeHint(t, doc, view, rules) {
  const best = doc && (doc.best || (doc.alternatives || [])[0]);
  if (!best) return null;
  const value = typeof best.value === "number"
    ? t.t(doc.value_kind === "expected_turn_points" ? "hint.valueTurn" : "hint.valueFinal", { value: best.value }) : "";
  const withValue = (text) => (value ? `${text}\n${value}` : text); // the value on a line of its own
  if (best.action === "score") {
    return { category: best.category, text: withValue(t.t("hint.score", { box: boxLabel(t, rules, best.category), points: best.points })) };
  }
  if (!view.rolls_made) return { hold: [], text: withValue(t.t("hint.roll")) };
  const hold = Array.isArray(best.hold) ? best.hold : [];
  const dice = hold.map((p) => view.dice[p]).join(" ");
  return { hold, text: withValue(hold.length ? t.t("hint.hold", { dice }) : t.t("hint.rerollAll")) };
}

export class GameScreen extends Screen {
  enterGame(view) {
    this.stopHintWait();
    this.st.view = view;
    this.st.ui = { held: new Set(), busy: this.st.ui.busy, animating: false, hint: null, highlight: null };
    this.st.verified = null;
    $("#result").hidden = true;
    $("#fairness").hidden = true;
    $("#fair-details").open = false; // (a failure of the last game unfolded them)
    $("#play").hidden = false;
    $(".table-area").classList.remove("over");
    this.app.show("game");
    this.render();
    $("#game-title").focus({ preventScroll: true }); // focus stays in the page, at the top of the new screen
    this.probeHint();
    this.app.endScreen().catch(() => {}); // loaded while the game is played, to be at hand when it ends (tried again then)
  }

  ctx() {
    const rules = this.st.rules[this.st.view.rules] || { id: this.st.view.rules, upper_bonus: 0, yahtzee_bonus: 0, upper_threshold: 63,
      categories: Object.keys(this.st.view.seats[0].card).map((id) => ({ id, section: "lower" })) };
    const seat = this.viewSeat();
    const held = this.app.session.held();
    const awaiting = this.st.view.status === "awaiting_client_seed" && this.st.header && this.st.shown
      ? awaitedSeats(this.st.shown.events, this.st.header, this.st.session.version).filter((x) => !held.includes(x)).map((x) => this.st.view.seats[x].name)
      : [];
    return { t: this.t, rules, seat, view: this.st.view, ...this.st.ui, hintRoute: this.st.hintRoute,
      touch: matchMedia("(pointer: coarse)").matches, plays: held.includes(seat) && !this.st.halted,
      named: held.length !== 1, awaiting };
  }

  /** The seat whose boxes the board shows: the one to move when this browser plays it (several friends may pass
   * one device), else this browser's first seat; a spectator follows the seat to move. */
  viewSeat() {
    const held = this.app.session.held();
    const current = this.st.view && this.st.view.status === "playing" ? this.st.view.current_seat : null;
    if (current !== null && current !== undefined && (held.includes(current) || !held.length)) return current;
    if (held.length) return held.includes(this.st.session.seat) ? this.st.session.seat : held[0];
    return 0;
  }

  els() {
    return { game: $("#game"), title: $("#game-title"), round: $("#game-round"), commit: $("#game-commit"), abandon: $("#abandon-btn"),
      dice: $("#dice"), roll: $("#roll-btn"), rollsLeft: $("#rolls-left"), hint: $("#hint-btn"), hintText: $("#hint-text"),
      boxes: $("#boxes"), card: $("#scorecard"), strip: $("#scores-strip"), moves: $("#moves"), movesBox: $("#moves-box"),
      status: $("#status") };
  }

  render() {
    if (!this.st.view) return;
    const ctx = this.ctx();
    renderBoard(ctx, this.els(), (id) => this.pick(id));
    $("#keys-help").textContent = this.t.t("game.keys");
    $("#game-house").hidden = !this.st.view.upper_first; // the house rule of SPEC §3.4, said while it binds
    const watching = !this.app.session.held().length;
    $("#game-watching").hidden = !watching;
    // a seat abandons before play, or on its own turn (SPEC §4.3): not while another player is to move
    const othersTurn = this.st.view.status === "playing" && !this.app.session.held().includes(this.st.view.current_seat);
    if (watching || this.st.halted || othersTurn) $("#abandon-btn").hidden = true;
    $("#roll-btn").hidden = watching;
    this.renderTablePanel();
  }

  /** At the table before play: who has joined, who is awaited, and the links to share. */
  renderTablePanel() {
    const box = $("#table-panel");
    const waiting = this.st.view.status === "awaiting_client_seed" && !!this.st.header;
    if (!waiting) {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    this.app.session.renderTable(box);
  }

  renderPlayControls() {
    const ctx = this.ctx();
    renderDice(ctx, $("#dice"));
    renderControls(ctx, this.els());
    renderBoxes(ctx, $("#boxes"), (id) => this.pick(id));
  }

  /** At the start of the player's turn, focus that was lost (to the page, a box just filled) goes to Roll. */
  settleFocus() {
    const focus = document.activeElement;
    const lost = !focus || focus === document.body || !focus.isConnected || focus.disabled || focus.id === "game-title";
    if (lost && this.st.view && !$("#game").hidden && this.mine() && this.st.view.rolls_made === 0 && !this.st.ui.busy) {
      $("#roll-btn").focus();
    }
  }

  /** Whether a seat of this browser is to move now (and the game goes on). */
  mine() {
    const seat = this.viewSeat();
    return !this.st.halted && this.app.session.held().includes(seat) && isTurnOf(this.st.view, seat) && !this.st.ui.animating;
  }

  toggleHold(i) {
    if (!this.mine() || this.st.ui.busy || !canHold(this.st.view, this.viewSeat())) return;
    if (this.st.ui.held.has(i)) this.st.ui.held.delete(i);
    else this.st.ui.held.add(i);
    renderDice(this.ctx(), $("#dice"));
  }

  async doRoll() {
    const v = this.st.view;
    if (!this.mine() || this.st.ui.busy || v.rolls_left <= 0) return;
    const hold = v.rolls_made === 0 ? [] : [...this.st.ui.held].sort((a, b) => a - b);
    this.stopHintWait();
    this.st.ui.hint = null;
    this.st.ui.highlight = null;
    await this.move(() => rollCommand(this.st.shown.events, this.viewSeat(), hold));
  }

  pick(category) {
    const v = this.st.view;
    if (!this.mine() || this.st.ui.busy) return;
    const opts = v.options || {};
    const o = opts[category];
    if (!o) return;
    const worth = (x) => x.points + (x.yahtzee_bonus || 0);
    const better = Object.entries(opts).filter(([, x]) => worth(x) > 0).sort((a, b) => worth(b[1]) - worth(a[1]));
    if (worth(o) > 0 || !better.length) return this.doScore(category);
    const t = this.t;
    const rules = this.ctx().rules;
    askConfirm(t.t("confirm.zeroTitle", { box: boxLabel(t, rules, category) }),
      t.t("confirm.zeroText", { points: better[0][1].points, best: boxLabel(t, rules, better[0][0]), others: better.length - 1 }),
      t.t("confirm.zeroOk")).then((yes) => { if (yes) this.doScore(category); });
  }

  async doScore(category) {
    if (!this.mine() || this.st.ui.busy) return;
    this.stopHintWait();
    this.st.ui.hint = null;
    await this.move(() => scoreCommand(this.st.shown.events, this.viewSeat(), category));
  }

  /**
   * Send one move (`command()`: the command of the seat to move, player.js) and show its answer. First the
   * board is checked against the server: a move made on an outdated board (the game moved on in another tab or
   * device) is not sent, and the board catches up. A refused or lost move says why and reloads the game as
   * stored; an answer that does not match what the server signed stops the game (halt).
   */
  async move(command) {
    this.app.setBusy(true);
    try {
      if (!(await this.boardIsCurrent())) {
        this.app.toast(this.t.t("toast.stale"), "info");
        await this.catchUp();
        return;
      }
      const c = command();
      await this.applyAnswer(await this.app.session.send(c.seat, c));
      this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) return this.halt(err);
      this.app.toastProblem(err);
      await this.reload();
    } finally {
      this.app.setBusy(false);
    }
  }

  /** Whether the server's game has exactly the events this board has shown (a cheap request: no events). */
  async boardIsCurrent() {
    const st = await api.state(this.st.session.game_id, this.st.shown.count, 0);
    return st.event_count === this.st.shown.count;
  }

  /** Play out the events this board has not seen (made elsewhere), then show the game as it is. */
  async catchUp() {
    if (!this.st.session || !this.st.view) return;
    const st = await api.state(this.st.session.game_id, this.st.shown.count);
    this.st.ui.held.clear();
    await this.applyAnswer(st);
  }

  /** The game as stored, drawn at once (after a refusal or a lost answer); its events held to this page's
   * history like any answer. */
  async reload() {
    if (!this.st.session || !this.st.shown) return;
    try {
      const st = await api.state(this.st.session.game_id);
      await this.st.shown.accept(st);
      this.app.session.keepMoveReceipt(st);
      this.st.view = { ...viewOf(st), events: [...this.st.shown.events] };
      this.st.ui.held.clear();
      this.render();
      if (this.st.view.final) await (await this.app.endScreen()).finishGame(this.st.view);
      else this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      // otherwise keep what is shown
    }
  }

  /** Another tab of this browser moved in this game, or this tab comes back into view: catch up. */
  async onElsewhere(gameId, eventCount) {
    if (!this.st.session || !this.st.view || !this.st.shown || gameId !== this.st.session.game_id || this.st.ui.busy || this.st.ui.animating
        || this.st.halted) return;
    if (eventCount !== undefined && eventCount === this.st.shown.count) return;
    this.app.setBusy(true);
    try {
      if (!(await this.boardIsCurrent())) await this.catchUp();
      this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      // otherwise the next move checks again
    } finally {
      this.app.setBusy(false);
    }
  }

  /**
   * An answer of the server (a move's, or the game as it stands): its events are taken into this page's own
   * history and its move receipt held to it (history.js; AnswerRefused when it does not match), then played
   * out on the board, then the new state is shown.
   */
  async applyAnswer(answer) {
    let events;
    try {
      events = await this.st.shown.accept(answer);
    } catch (err) {
      if (!(err instanceof AnswerRefused && err.reason === "gap")) throw err;
      answer = await api.state(this.st.session.game_id, this.st.shown.count); // the board missed events: fetch them too
      events = await this.st.shown.accept(answer);
    }
    this.app.session.keepMoveReceipt(answer);
    this.st.ui.animating = true;
    try {
      await this.playEvents(events);
    } finally {
      this.st.ui.animating = false;
    }
    this.st.view = { ...viewOf(answer, this.st.view.events), events: [...this.st.shown.events] };
    if (!canHold(this.st.view, this.viewSeat())) this.st.ui.held.clear(); // nothing is held after the last roll or on a new turn
    this.render();
    this.settleFocus();
    if (events.length) store.moved(this.st.session.game_id, this.st.view.event_count);
    if (this.st.view.final) await (await this.app.endScreen()).finishGame(this.st.view);
  }

  /** Watch for other players' moves while the game waits for one of them (or for a spectator, all along). */
  syncWatch() {
    const v = this.st.view;
    const held = this.app.session.held();
    const waits = !!v && !!this.st.shown && !this.st.halted && !v.final && !isOver(v)
      && (v.status === "awaiting_client_seed" || !held.includes(v.current_seat));
    if (!waits) return this.stopWatch();
    const gameId = this.st.session.game_id;
    if (this.st.watcher && this.st.watcher.gameId === gameId) return;
    this.stopWatch();
    this.st.watcher = { gameId, ...watchGame(gameId, { since: () => this.st.shown.count, onMoves: (state) => this.onMoves(gameId, state) }) };
  }

  stopWatch() {
    if (this.st.watcher) this.st.watcher.stop();
    this.st.watcher = null;
  }

  /** Another player moved: show it, send what is due now (a reveal, once every friend has committed). */
  async onMoves(gameId, state) {
    if (!this.st.session || this.st.session.game_id !== gameId || this.st.ui.busy || this.st.ui.animating || this.st.halted) return;
    this.app.setBusy(true);
    try {
      await this.applyAnswer(state);
      if (!this.st.view.final) await this.app.session.advanceSeeds();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      else this.app.toastProblem(err);
    } finally {
      this.app.setBusy(false);
    }
    this.syncWatch();
  }

  /** The server's answer does not match what it signed (or signs a move of this browser's seats it did not
   * make): the game stops here, nothing more is sent or signed, and the player is told why. */
  halt(err) {
    this.st.halted = err;
    this.stopWatch();
    this.stopHintWait();
    if (!this.st.view) {
      this.app.lobby.showLobby();
      this.app.toast(this.haltText());
      return;
    }
    if ($("#game").hidden) {
      this.app.lobby.resetLobby();
      this.enterGame(this.st.view);
    }
    this.showHalt();
    this.render();
  }

  haltText() {
    const d = this.st.halted.detail || {};
    return this.t.t("halt.text", { reason: this.st.halted.reason, event: d.event ?? d.n ?? "", n: d.n ?? "" });
  }

  showHalt() {
    $("#halted").replaceChildren(h("h2", this.t.t("halt.title")), h("p", this.haltText()));
    $("#halted").hidden = false;
    $("#halted").scrollIntoView({ block: "nearest" });
  }

  async tumble(positions, ms) {
    if (!ms || !positions.length || matchMedia("(prefers-reduced-motion: reduce)").matches) return; // no motion at all
    const dice = $$("#dice .die");
    for (const p of positions) dice[p].classList.add("tumbling");
    const timer = setInterval(() => {
      for (const p of positions) dice[p].dataset.face = String(1 + Math.floor(Math.random() * 6)); // cosmetic only
    }, 70);
    await sleep(ms);
    clearInterval(timer);
    for (const p of positions) dice[p].classList.remove("tumbling");
  }

  say(key, params) {
    $("#status").textContent = this.t.t(key, params);
  }

  /** A bot's turn is played where the player looks: the dice stay in view. */
  keepDiceInView() {
    const r = $("#dice").getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) $("#dice").scrollIntoView({ block: "nearest" });
  }

  /** Step through events so the bot's turn (and the roll-off) is seen, not jumped over. */
  async playEvents(events) {
    for (const e of events) {
      if (e.type === "start") await this.playStart(e);
      else if (e.type === "roll") await this.playRoll(e);
      else if (e.type === "score") await this.playScore(e);
      else this.st.view = applyEvent(this.st.view, e, this.ctx().rules);
    }
  }

  async playStart(e) {
    const sp = this.app.speed();
    const ctx = () => this.ctx();
    for (const [n, round] of (e.rolloff || []).entries()) {
      const stage = this.t.t("status.rolloffStage", { round: n + 1 });
      for (const th of round) {
        this.st.view = { ...this.st.view, status: "playing", dice: th.dice, current_seat: th.seat };
        this.st.ui.held.clear();
        this.say("status.rolloffThrowing", { stage, ...speaker(ctx(), th.seat) });
        renderDice(ctx(), $("#dice"));
        await this.tumble([0, 1, 2, 3, 4], sp.tumble);
        renderDice(ctx(), $("#dice"));
        this.say("status.rolloffThrew", { stage, ...speaker(ctx(), th.seat), sum: th.dice.reduce((a, b) => a + b, 0), dice: th.dice.join(" ") });
        await sleep(sp.step * 1.4);
      }
    }
    this.st.view = applyEvent(this.st.view, e, ctx().rules);
    this.render();
    this.say("status.first", speaker(ctx(), e.first));
    await sleep(sp.step);
  }

  async playRoll(e) {
    const sp = this.app.speed();
    const mine = this.app.session.held().includes(e.seat);
    const ctx = () => this.ctx();
    const before = this.st.view.dice.length === 5 ? this.st.view.dice : [0, 0, 0, 0, 0];
    if (!mine) {
      this.st.ui.held = new Set(e.hold);
      this.st.view = { ...this.st.view, current_seat: e.seat, turn: e.turn, dice: before, options: {} };
      this.render();
      this.keepDiceInView();
      const who = speaker(ctx(), e.seat);
      const step = { ...who, roll: e.roll, max: MAX_ROLLS };
      if (e.roll > 1) {
        this.say(e.hold.length ? "status.botHolds" : "status.botRerolls", { ...step, dice: e.hold.map((p) => before[p]).join(" ") });
        await sleep(sp.step * 0.8);
      } else this.say("status.botRolls", step);
      $("#status").dataset.step = `${e.seat}:${e.turn}:${e.roll}`;
    }
    const rolling = [0, 1, 2, 3, 4].filter((p) => !e.hold.includes(p));
    await this.tumble(rolling, mine ? Math.min(sp.tumble, 260) : sp.tumble);
    this.st.view = applyEvent(this.st.view, e, ctx().rules);
    renderDice(ctx(), $("#dice"));
    renderMoves(ctx(), $("#moves"), $("#moves-box"));
    if (!mine) {
      this.say("status.botRolled", { ...speaker(ctx(), e.seat), dice: e.dice.join(" "), roll: e.roll, max: MAX_ROLLS });
      await sleep(sp.step);
    }
  }

  async playScore(e) {
    const sp = this.app.speed();
    const mine = this.app.session.held().includes(e.seat);
    const ctx = this.ctx();
    const extras = [e.yahtzee_bonus ? this.t.t("status.extraYahtzee", { bonus: e.yahtzee_bonus }) : "",
      e.upper_bonus ? this.t.t("status.extraUpper", { bonus: e.upper_bonus }) : ""].join("");
    this.st.view = applyEvent(this.st.view, e, ctx.rules);
    this.st.ui.highlight = { seat: e.seat, category: e.category };
    this.st.ui.held.clear();
    this.render();
    this.say("status.scored", { ...speaker(this.ctx(), e.seat), points: e.points, box: boxLabel(this.t, ctx.rules, e.category), extra: extras });
    await sleep(mine ? Math.min(sp.step, 250) : sp.step * 1.3);
  }

  async probeHint() {
    if (this.st.hintRoute !== null) return;
    try {
      const doc = await api.openapi();
      const paths = Object.keys((doc && doc.paths) || {});
      if (paths.length) this.st.hintRoute = paths.some((p) => /\/hint$/.test(p));
    } catch {
      // unknown: the button stays, and hides itself on a 404
    }
    if (this.st.view) renderControls(this.ctx(), this.els());
  }

  async doHint() {
    if (!this.mine() || this.st.ui.busy || this.st.hintWait) return; // (while the engine warms up, the hint comes by itself)
    if (this.st.view.rolls_made === 0) {
      this.st.ui.hint = { text: this.t.t("hint.rollFirst") };
      return renderControls(this.ctx(), this.els());
    }
    this.app.setBusy(true);
    try {
      await this.askHint();
    } finally {
      this.app.setBusy(false);
      this.render();
    }
  }

  /** Ask the server for a hint on the board as it is now; an answer that comes after the board moved on is dropped. */
  async askHint() {
    if (!this.st.view || !this.st.session) return;
    const at = this.st.view.events.length;
    const current = () => {
      const same = this.st.view && this.st.view.events.length === at && this.mine();
      if (!same && this.st.ui.hint && this.st.ui.hint.preparing) this.st.ui.hint = null; // (a hint for a board gone by)
      return same;
    };
    try {
      const doc = await api.hint(this.st.session.game_id, (this.st.session.seats[this.viewSeat()] || {}).token);
      if (current()) this.st.ui.hint = describeHint(this.t, doc, this.st.view, this.ctx().rules);
    } catch (err) {
      if (!current()) return;
      if (err instanceof ApiProblem && [404, 405, 501].includes(err.status)) {
        this.st.hintRoute = false;
        this.app.toast(this.t.t("hint.unavailable"), "info");
      } else if (err instanceof ApiProblem && err.code === "engine_warming_up") this.waitForHintEngine(err.retryAfter);
      else this.app.toastProblem(err);
    }
  }

  /** The hint engine builds its tables (503 engine_warming_up): say so, and ask again when the server said to,
   * until it answers; a move in between makes that hint moot (stopHintWait). */
  waitForHintEngine(retryAfter) {
    const seconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : DEFAULT_ENGINE_WAIT;
    this.stopHintWait();
    this.st.ui.hint = { preparing: true, text: this.t.t("hint.preparing") };
    this.st.hintWait = setTimeout(async () => {
      this.st.hintWait = null;
      await this.askHint();
      if (this.st.view && !$("#game").hidden) this.renderPlayControls();
    }, seconds * 1000);
  }

  stopHintWait() {
    clearTimeout(this.st.hintWait);
    this.st.hintWait = null;
    if (this.st.ui.hint && this.st.ui.hint.preparing) this.st.ui.hint = null;
  }

  async doAbandon() {
    if (!this.st.session || this.st.ui.busy || !this.st.view || this.st.view.status !== "playing") return;
    const t = this.t;
    const yes = await askConfirm(t.t("confirm.abandonTitle"), t.t("confirm.abandonText"), t.t("confirm.abandonOk"));
    if (yes) await this.move(() => abandonCommand(this.viewSeat()));
  }

  onKey(e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    if (document.querySelector("dialog[open]") || e.target.closest("input, textarea, select")) return;
    if ($("#game").hidden) return;
    if (e.key >= "1" && e.key <= "5") this.toggleHold(Number(e.key) - 1);
    else if (e.key === "r" || e.key === "R") this.doRoll();
    else if ((e.key === "h" || e.key === "H") && !$("#hint-btn").hidden) this.doHint();
    else return;
    e.preventDefault();
  }

  /** The table's controls: the dice, Roll, Hint, Abandon, the commitment chip, and the keys 1-5, R and H. */
  wire() {
    makeDice($("#dice"), (i) => this.toggleHold(i));
    on("#roll-btn", "click", () => this.doRoll());
    on("#hint-btn", "click", () => this.doHint());
    on("#abandon-btn", "click", () => this.doAbandon());
    on("#game-commit", "click", () => this.st.view && this.app.dialogs.openCommitment(this.st.view));
    document.addEventListener("keydown", (e) => this.onKey(e));
  }
}
