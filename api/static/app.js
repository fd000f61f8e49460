// fairdice game page: the controller that ties the parts together (main.js starts it).
//   api.js       HTTP (problems with stable codes, Retry-After)      store.js   what this browser keeps
//   i18n.js      the catalogues (i18n/en.js, i18n/zh.js)             rules.js   the rule sets as data
//   state.js     the board's view, pure                              board.js   drawing the game screen
//   lobby.js     drawing the lobby                                   report.js  drawing a verification
//   verification.js  receipts and checking logs (verify.js)          dialogs.js rules, how it works, yes/no
//   problems.js  the server's refusals in words
// Importing this module does nothing; `new App().boot()` starts the page.

import { api, ApiProblem } from "./api.js";
import { store } from "./store.js";
import { chooseLanguage, translator } from "./i18n.js";
import { $, $$, applyTexts, h } from "./dom.js";
import { boxLabel, mergeRules, rulesName } from "./rules.js";
import { applyEvent, blankView, canHold, isTurnOf, MAX_ROLLS, newEvents, outcomeOf, viewOf } from "./state.js";
import { botName, makeDice, renderBoard, renderBoxes, renderControls, renderDice, renderMoves, seatLabel, speaker } from "./board.js";
import { lobbyChoices, renderChoices, renderRecords } from "./lobby.js";
import { renderNotLog, renderReport } from "./report.js";
import { check, fileBytes, gameIdOf, makeReceipt } from "./verification.js";
import { problemText } from "./problems.js";
import { askConfirm, renderHow, renderRules } from "./dialogs.js";
import { clientSeedValid, parseStrictJSON, seatNameValid } from "./verify.js";

const SPEEDS = { normal: { step: 650, tumble: 420 }, quick: { step: 140, tumble: 90 }, off: { step: 0, tumble: 0 } };
const DEFAULT_ENGINE_WAIT = 15; // seconds, when a warming-up answer names no Retry-After
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export { problemText };

export function randomSeed() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

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

export class App {
  constructor() {
    this.t = translator("en");
    this.rules = mergeRules(null);
    this.bots = null; // [{id, level, description}] from the server, null when unknown
    this.trustedKeys = [];
    this.hintRoute = null; // true / false / null (unknown)
    this.session = null; // the game this browser plays: {game_id, token, seat, rules, opponent, created, receipt?}
    this.created = null; // the POST /v1/games answer while the client seed is not sent
    this.view = null; // the board (state.js): the server's last answer, or a step of playing one out
    this.ui = { held: new Set(), busy: false, animating: false, hint: null, highlight: null };
    this.verified = null; // {report, names, rules} of the finished game, kept to redraw in another language
    this.waiting = null; // the optimal engine's warm-up: {timer, until}
    this.hintWait = null; // the hint engine's warm-up: the timer of the next ask
  }

  // ---------------------------------------------------------------- start

  async boot() {
    this.setLanguage(chooseLanguage(navigator.languages, store.prefs().lang), false);
    this.wire();
    const [rules, bots, keys] = await Promise.allSettled([api.rules(), api.bots(), api.keys()]);
    if (rules.status === "fulfilled") this.rules = mergeRules(rules.value);
    if (bots.status === "fulfilled") this.bots = bots.value.bots || [];
    if (keys.status === "fulfilled") this.trustedKeys = (keys.value.keys || []).map((k) => k.public_key);
    if (rules.status === "rejected") this.toast(this.t.t("toast.offline"));
    const current = store.current();
    if (current) {
      await this.openGame(current);
      if (document.body.dataset.screen !== "loading") return;
    }
    this.showLobby();
  }

  /** Speak `lang` from now on: the static texts, the screen shown, open dialogs; `save`: remember it. */
  setLanguage(lang, save = true) {
    const t = (this.t = translator(lang));
    if (save) store.setPrefs({ lang: t.lang });
    document.documentElement.lang = t.tag;
    document.title = t.t("app.title");
    $("meta[name=description]").setAttribute("content", t.t("app.description"));
    applyTexts(document, t.t);
    const other = $("#nav-lang");
    other.textContent = t.t("nav.otherLanguage");
    other.lang = t.t("nav.otherLanguageTag");
    other.title = t.t("nav.otherLanguageTitle");
    $("#player-name").placeholder = t.t("prefs.namePlaceholder");
    if (document.body.dataset.screen === "lobby") this.renderLobby(true);
    if (this.ui.hint && this.ui.hint.preparing) this.ui.hint = { preparing: true, text: t.t("hint.preparing") };
    if (this.view && document.body.dataset.screen === "game") this.render();
    if (this.view && this.view.final) this.renderResult(this.view);
    if (this.verified) this.showReport(this.verified);
    if (this.waiting) this.showPreparing();
    if ($("#rules-dialog").open) renderRules(t, this.rules, $("#rules-body").dataset.rules);
    renderHow(t);
  }

  show(section) {
    for (const id of ["loading", "lobby", "game"]) $(`#${id}`).hidden = id !== section;
    document.body.dataset.screen = section;
    window.scrollTo(0, 0); // a new screen starts at its top, wherever the last one was scrolled to
  }

  toast(message, kind = "error") {
    const el = $("#toast");
    el.textContent = message;
    el.className = `toast show ${kind}`;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { el.className = "toast"; }, 6000);
  }

  toastProblem(err) {
    this.toast(problemText(this.t, err));
  }

  speed() {
    const fromUrl = new URLSearchParams(location.search).get("speed");
    return SPEEDS[fromUrl] || SPEEDS[store.prefs().speed] || SPEEDS.normal;
  }

  // ---------------------------------------------------------------- lobby

  showLobby() {
    this.stopHintWait();
    store.clearCurrent();
    this.session = null;
    this.view = null;
    this.verified = null;
    this.created = null;
    this.show("lobby");
    this.renderLobby();
    this.resetLobby();
  }

  /** `keep`: keep the choices on the form (a language change), else those saved. */
  renderLobby(keep = false) {
    const saved = keep && $("input[name=rules]:checked") ? lobbyChoices() : store.lobby();
    renderChoices({ t: this.t, rules: this.rules, bots: this.bots, saved,
      onRules: () => this.openRules($("input[name=rules]:checked")?.value) });
    $("#player-name").value = store.prefs().name || "";
    $("#speed").value = store.prefs().speed || "normal";
    if (!$("#client-seed").value) $("#client-seed").value = randomSeed();
    this.syncLobby();
    this.renderRecords();
  }

  renderRecords() {
    renderRecords({ t: this.t, rules: this.rules, records: store.records(), recent: store.recent(),
      onOpen: (g) => this.openGame(g) });
  }

  syncLobby() {
    const solo = $("input[name=opponent]:checked")?.value === "solo";
    $("#first-field").disabled = solo || !!this.created;
    $("#first-field").classList.toggle("muted", solo);
    const ok = clientSeedValid($("#client-seed").value);
    $("#seed-error").hidden = ok;
    $("#client-seed").setAttribute("aria-invalid", ok ? "false" : "true");
    $("#start-btn").disabled = !ok || this.ui.busy;
    $("#create-btn").disabled = this.ui.busy || !!this.waiting;
  }

  playerName() {
    return ($("#player-name").value || "").trim().slice(0, 40) || this.t.t("player.defaultName");
  }

  async createGame(ev) {
    if (ev) ev.preventDefault();
    if (this.ui.busy) return;
    const c = lobbyChoices();
    const name = this.playerName();
    if (!seatNameValid(name)) return this.toast(this.t.t("problem.invalid_seats"));
    store.setPrefs({ name: ($("#player-name").value || "").trim() });
    store.setLobby(c);
    const seats = [{ type: "human", name }];
    if (c.opponent !== "solo") seats.push({ type: "bot", bot: c.opponent });
    const first = c.opponent === "solo" ? 0 : c.first === "me" ? 0 : c.first === "bot" ? 1 : "random";
    this.setBusy(true);
    try {
      this.onCreated(await api.create({ rules: c.rules, seats, first }), c);
    } catch (err) {
      if (err instanceof ApiProblem && err.code === "engine_warming_up") this.waitForEngine(err.retryAfter);
      else this.toastProblem(err);
    } finally {
      this.setBusy(false);
    }
  }

  /** The optimal bot's tables are being built: say so, and ask again when the server said to. */
  waitForEngine(retryAfter) {
    const seconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : DEFAULT_ENGINE_WAIT;
    this.stopWaiting();
    this.waiting = { until: Date.now() + seconds * 1000 };
    this.waiting.timer = setInterval(() => this.tickWaiting(), 1000);
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = true;
    $("#cancel-btn").hidden = false;
    this.showPreparing();
    this.syncLobby();
  }

  tickWaiting() {
    if (!this.waiting) return;
    if (Date.now() < this.waiting.until) return this.showPreparing();
    this.stopWaiting(false);
    this.createGame();
  }

  showPreparing() {
    const left = Math.max(0, Math.ceil((this.waiting.until - Date.now()) / 1000));
    $("#preparing").hidden = false;
    $("#preparing-title").textContent = this.t.t("preparing.title");
    $("#preparing-text").textContent = this.t.t("preparing.text", { seconds: left });
  }

  /** `reset`: give the form back (the player cancelled), else keep it as it is (a retry follows). */
  stopWaiting(reset = true) {
    if (this.waiting) clearInterval(this.waiting.timer);
    const was = !!this.waiting;
    this.waiting = null;
    $("#preparing").hidden = true;
    if (was && reset) this.resetLobby();
  }

  onCreated(created, choices) {
    this.stopWaiting(false);
    const token = created.tokens.find((x) => x.seat === 0) || created.tokens[0];
    this.created = created;
    this.session = { game_id: created.game_id, token: token.token, seat: 0, rules: choices.rules, opponent: choices.opponent,
      created: Date.now(), commitment: created.commitment, seed_draft: $("#client-seed").value };
    store.setCurrent(this.session);
    store.remember(this.session);
    this.showCommitment(created);
  }

  showCommitment(created) {
    $("#lobby-form").classList.add("committed");
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = true;
    $("#commit-card").hidden = false;
    $("#commitment").textContent = created.commitment;
    $("#commit-key").textContent = created.key_id;
    $("#create-btn").hidden = true;
    $("#start-btn").hidden = false;
    $("#cancel-btn").hidden = false;
    this.syncLobby();
    $("#commit-card").scrollIntoView({ block: "nearest" });
    $("#client-seed").focus();
  }

  resetLobby() {
    this.created = null;
    $("#lobby-form").classList.remove("committed");
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = false;
    $("#commit-card").hidden = true;
    $("#preparing").hidden = !this.waiting;
    $("#create-btn").hidden = false;
    $("#start-btn").hidden = true;
    $("#cancel-btn").hidden = !this.waiting;
    $("#client-seed").value = randomSeed();
    $("#client-seed").readOnly = false;
    $("#new-seed").disabled = false;
    this.syncLobby();
  }

  /** The signed header to keep in the receipt: from the creation answer, or from the log so far. */
  async signedHeader() {
    if (this.created && this.created.header) return this.created;
    return parseStrictJSON(await api.logText(this.session.game_id));
  }

  async sendSeed() {
    // once a seed has been sent for this game (its receipt kept), only that very seed is ever sent again: a
    // server that refuses seeds until one suits it gets the same one each time (SPEC §4.3)
    const seed = this.session && this.session.receipt ? this.session.receipt.client_seed : $("#client-seed").value;
    if (!clientSeedValid(seed) || this.ui.busy) return;
    this.setBusy(true);
    try {
      const s = this.session;
      s.receipt = await makeReceipt({ signed: await this.signedHeader(), gameId: s.game_id, seat: s.seat,
        commitment: s.commitment, trustedKeys: this.trustedKeys, seed });
      store.setCurrent(s); // kept before the seed goes out: a reload resends this very seed
      store.update(s.game_id, { receipt: s.receipt });
      $("#client-seed").readOnly = true;
      $("#new-seed").disabled = true;
      const st = await api.clientSeed(s.game_id, s.token, seed);
      s.client_seed = seed;
      store.setCurrent(s);
      this.resetLobby();
      this.enterGame(blankView(st));
      await this.applyAnswer(st);
    } catch (err) {
      this.toastProblem(err);
    } finally {
      this.setBusy(false);
    }
  }

  async cancel() {
    if (this.waiting) return this.stopWaiting();
    if (!this.session) return this.resetLobby();
    try {
      await api.abandon(this.session.game_id, this.session.token);
    } catch {
      // nothing was played; forgetting it here is enough
    }
    store.update(this.session.game_id, { result: { outcome: "cancelled" } });
    store.clearCurrent();
    this.session = null;
    this.resetLobby();
    this.renderRecords();
  }

  // ---------------------------------------------------------------- the game: loading and drawing

  async openGame(entry) {
    this.setBusy(true);
    try {
      const st = await api.state(entry.game_id);
      this.session = { ...entry };
      if (st.status === "awaiting_client_seed") return this.resumeCommitted(entry, st);
      store.setCurrent(this.session); // until "New game": a reload shows this game again
      this.enterGame(viewOf(st));
      if (st.final) await this.finishGame(this.view);
    } catch (err) {
      if (err instanceof ApiProblem && err.status === 404) {
        this.toast(this.t.t("toast.gone"));
        store.update(entry.game_id, { result: { outcome: "gone" } });
        if (store.current()?.game_id === entry.game_id) store.clearCurrent();
        this.showLobby();
      } else {
        this.toastProblem(err);
        if (!this.view) this.showLobby();
      }
    } finally {
      this.setBusy(false);
    }
  }

  /** A game created but whose seed was not sent yet: back to that step of the lobby. */
  resumeCommitted(entry, st) {
    store.setCurrent(this.session);
    this.show("lobby");
    this.renderLobby();
    const pick = (name, value) => { const el = $(`input[name=${name}][value="${value}"]`); if (el) el.checked = true; };
    pick("rules", entry.rules);
    pick("opponent", entry.opponent);
    this.created = { commitment: st.commitment, key_id: st.key_id };
    if (entry.seed_draft) $("#client-seed").value = entry.seed_draft;
    if (entry.receipt) { // sent before, refused or unanswered: it is resent unchanged, not edited
      $("#client-seed").value = entry.receipt.client_seed;
      $("#client-seed").readOnly = true;
      $("#new-seed").disabled = true;
    }
    this.showCommitment(this.created);
  }

  enterGame(view) {
    this.stopHintWait();
    this.view = view;
    this.ui = { held: new Set(), busy: this.ui.busy, animating: false, hint: null, highlight: null };
    this.verified = null;
    $("#result").hidden = true;
    $("#fairness").hidden = true;
    $("#play").hidden = false;
    $(".table-area").classList.remove("over");
    this.show("game");
    this.render();
    $("#game-title").focus({ preventScroll: true }); // focus stays in the page, at the top of the new screen
    this.probeHint();
  }

  ctx() {
    const rules = this.rules[this.view.rules] || { id: this.view.rules, upper_bonus: 0, yahtzee_bonus: 0, upper_threshold: 63,
      categories: Object.keys(this.view.seats[0].card).map((id) => ({ id, section: "lower" })) };
    return { t: this.t, rules, seat: this.session ? this.session.seat : 0, view: this.view, ...this.ui,
      hintRoute: this.hintRoute, touch: matchMedia("(pointer: coarse)").matches };
  }

  els() {
    return { game: $("#game"), title: $("#game-title"), round: $("#game-round"), commit: $("#game-commit"), abandon: $("#abandon-btn"),
      dice: $("#dice"), roll: $("#roll-btn"), rollsLeft: $("#rolls-left"), hint: $("#hint-btn"), hintText: $("#hint-text"),
      boxes: $("#boxes"), card: $("#scorecard"), strip: $("#scores-strip"), moves: $("#moves"), movesBox: $("#moves-box"),
      status: $("#status") };
  }

  render() {
    if (!this.view) return;
    renderBoard(this.ctx(), this.els(), (id) => this.pick(id));
    $("#keys-help").textContent = this.t.t("game.keys");
  }

  renderPlayControls() {
    const ctx = this.ctx();
    renderDice(ctx, $("#dice"));
    renderControls(ctx, this.els());
    renderBoxes(ctx, $("#boxes"), (id) => this.pick(id));
  }

  setBusy(b) {
    this.ui.busy = b;
    document.body.classList.toggle("busy", b);
    if (this.view && !$("#game").hidden) this.renderPlayControls();
    if (!$("#lobby").hidden) this.syncLobby();
    if (!b) this.settleFocus();
  }

  /** At the start of the player's turn, focus that was lost (to the page, a box just filled) goes to Roll. */
  settleFocus() {
    const focus = document.activeElement;
    const lost = !focus || focus === document.body || !focus.isConnected || focus.disabled || focus.id === "game-title";
    if (lost && this.view && !$("#game").hidden && this.mine() && this.view.rolls_made === 0 && !this.ui.busy) {
      $("#roll-btn").focus();
    }
  }

  // ---------------------------------------------------------------- playing

  mine() {
    return isTurnOf(this.view, this.session ? this.session.seat : 0) && !this.ui.animating;
  }

  toggleHold(i) {
    if (!this.mine() || this.ui.busy || !canHold(this.view, this.session.seat)) return;
    if (this.ui.held.has(i)) this.ui.held.delete(i);
    else this.ui.held.add(i);
    renderDice(this.ctx(), $("#dice"));
  }

  async doRoll() {
    const v = this.view;
    if (!this.mine() || this.ui.busy || v.rolls_left <= 0) return;
    const hold = v.rolls_made === 0 ? [] : [...this.ui.held].sort();
    this.stopHintWait();
    this.ui.hint = null;
    this.ui.highlight = null;
    await this.move(() => api.roll(this.session.game_id, this.session.token, hold));
  }

  pick(category) {
    const v = this.view;
    if (!this.mine() || this.ui.busy) return;
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
    if (!this.mine() || this.ui.busy) return;
    this.stopHintWait();
    this.ui.hint = null;
    await this.move(() => api.score(this.session.game_id, this.session.token, category));
  }

  /**
   * Send one move and show its answer. First the board is checked against the server: a move made on an
   * outdated board (the game moved on in another tab or device) is not sent, and the board catches up.
   * A refused or lost move says why and reloads the game as stored.
   */
  async move(send) {
    this.setBusy(true);
    try {
      if (!(await this.boardIsCurrent())) {
        this.toast(this.t.t("toast.stale"), "info");
        await this.catchUp();
        return;
      }
      await this.applyAnswer(await send());
    } catch (err) {
      this.toastProblem(err);
      await this.reload();
    } finally {
      this.setBusy(false);
    }
  }

  /** Whether the server's game has exactly the events this board has shown (a cheap request: no events). */
  async boardIsCurrent() {
    const st = await api.state(this.session.game_id, this.view.events.length, 0);
    return st.event_count === this.view.events.length;
  }

  /** Play out the events this board has not seen (made elsewhere), then show the game as it is. */
  async catchUp() {
    if (!this.session || !this.view) return;
    const st = await api.state(this.session.game_id, this.view.events.length);
    this.ui.held.clear();
    await this.applyAnswer(st);
  }

  /** The game as stored, drawn at once (after a refusal or a lost answer). */
  async reload() {
    if (!this.session) return;
    try {
      this.view = viewOf(await api.state(this.session.game_id));
      this.ui.held.clear();
      this.render();
      if (this.view.final) await this.finishGame(this.view);
    } catch {
      // keep what is shown
    }
  }

  /** Another tab of this browser moved in this game, or this tab comes back into view: catch up. */
  async onElsewhere(gameId, eventCount) {
    if (!this.session || !this.view || gameId !== this.session.game_id || this.ui.busy || this.ui.animating) return;
    if (eventCount !== undefined && eventCount === this.view.events.length) return;
    this.setBusy(true);
    try {
      if (!(await this.boardIsCurrent())) await this.catchUp();
    } catch {
      // the next move checks again
    } finally {
      this.setBusy(false);
    }
  }

  /** A command's answer: play out its events on the board, then show the new state. */
  async applyAnswer(answer) {
    this.keepMoveReceipt(answer);
    const events = newEvents(this.view, answer);
    if (events === null) return this.reload(); // the board missed events: show the game as it is now
    this.ui.animating = true;
    try {
      await this.playEvents(events);
    } finally {
      this.ui.animating = false;
    }
    this.view = viewOf(answer, this.view.events);
    const seat = this.session.seat;
    if (!canHold(this.view, seat)) this.ui.held.clear(); // nothing is held after the last roll or on a new turn
    this.render();
    this.settleFocus();
    if (events.length) store.moved(this.session.game_id, this.view.event_count);
    if (this.view.final) await this.finishGame(this.view);
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
      else this.view = applyEvent(this.view, e, this.ctx().rules);
    }
  }

  async playStart(e) {
    const sp = this.speed();
    const ctx = () => this.ctx();
    for (const [n, round] of (e.rolloff || []).entries()) {
      const stage = this.t.t("status.rolloffStage", { round: n + 1 });
      for (const th of round) {
        this.view = { ...this.view, status: "playing", dice: th.dice, current_seat: th.seat };
        this.ui.held.clear();
        this.say("status.rolloffThrowing", { stage, ...speaker(ctx(), th.seat) });
        renderDice(ctx(), $("#dice"));
        await this.tumble([0, 1, 2, 3, 4], sp.tumble);
        renderDice(ctx(), $("#dice"));
        this.say("status.rolloffThrew", { stage, ...speaker(ctx(), th.seat), sum: th.dice.reduce((a, b) => a + b, 0), dice: th.dice.join(" ") });
        await sleep(sp.step * 1.4);
      }
    }
    this.view = applyEvent(this.view, e, ctx().rules);
    this.render();
    this.say("status.first", speaker(ctx(), e.first));
    await sleep(sp.step);
  }

  async playRoll(e) {
    const sp = this.speed();
    const mine = e.seat === this.session.seat;
    const ctx = () => this.ctx();
    const before = this.view.dice.length === 5 ? this.view.dice : [0, 0, 0, 0, 0];
    if (!mine) {
      this.ui.held = new Set(e.hold);
      this.view = { ...this.view, current_seat: e.seat, turn: e.turn, dice: before, options: {} };
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
    this.view = applyEvent(this.view, e, ctx().rules);
    renderDice(ctx(), $("#dice"));
    renderMoves(ctx(), $("#moves"), $("#moves-box"));
    if (!mine) {
      this.say("status.botRolled", { ...speaker(ctx(), e.seat), dice: e.dice.join(" "), roll: e.roll, max: MAX_ROLLS });
      await sleep(sp.step);
    }
  }

  async playScore(e) {
    const sp = this.speed();
    const mine = e.seat === this.session.seat;
    const ctx = this.ctx();
    const extras = [e.yahtzee_bonus ? this.t.t("status.extraYahtzee", { bonus: e.yahtzee_bonus }) : "",
      e.upper_bonus ? this.t.t("status.extraUpper", { bonus: e.upper_bonus }) : ""].join("");
    this.view = applyEvent(this.view, e, ctx.rules);
    this.ui.highlight = { seat: e.seat, category: e.category };
    this.ui.held.clear();
    this.render();
    this.say("status.scored", { ...speaker(this.ctx(), e.seat), points: e.points, box: boxLabel(this.t, ctx.rules, e.category), extra: extras });
    await sleep(mine ? Math.min(sp.step, 250) : sp.step * 1.3);
  }

  // ---------------------------------------------------------------- hints

  async probeHint() {
    if (this.hintRoute !== null) return;
    try {
      const doc = await api.openapi();
      const paths = Object.keys((doc && doc.paths) || {});
      if (paths.length) this.hintRoute = paths.some((p) => /\/hint$/.test(p));
    } catch {
      // unknown: the button stays, and hides itself on a 404
    }
    if (this.view) renderControls(this.ctx(), this.els());
  }

  async doHint() {
    if (!this.mine() || this.ui.busy || this.hintWait) return; // (while the engine warms up, the hint comes by itself)
    if (this.view.rolls_made === 0) {
      this.ui.hint = { text: this.t.t("hint.rollFirst") };
      return renderControls(this.ctx(), this.els());
    }
    this.setBusy(true);
    try {
      await this.askHint();
    } finally {
      this.setBusy(false);
      this.render();
    }
  }

  /** Ask the server for a hint on the board as it is now; an answer that comes after the board moved on is dropped. */
  async askHint() {
    if (!this.view || !this.session) return;
    const at = this.view.events.length;
    const current = () => {
      const same = this.view && this.view.events.length === at && this.mine();
      if (!same && this.ui.hint && this.ui.hint.preparing) this.ui.hint = null; // (a hint for a board gone by)
      return same;
    };
    try {
      const doc = await api.hint(this.session.game_id, this.session.token);
      if (current()) this.ui.hint = describeHint(this.t, doc, this.view, this.ctx().rules);
    } catch (err) {
      if (!current()) return;
      if (err instanceof ApiProblem && [404, 405, 501].includes(err.status)) {
        this.hintRoute = false;
        this.toast(this.t.t("hint.unavailable"), "info");
      } else if (err instanceof ApiProblem && err.code === "engine_warming_up") this.waitForHintEngine(err.retryAfter);
      else this.toastProblem(err);
    }
  }

  /** The hint engine builds its tables (503 engine_warming_up): say so, and ask again when the server said to,
   * until it answers; a move in between makes that hint moot (stopHintWait). */
  waitForHintEngine(retryAfter) {
    const seconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : DEFAULT_ENGINE_WAIT;
    this.stopHintWait();
    this.ui.hint = { preparing: true, text: this.t.t("hint.preparing") };
    this.hintWait = setTimeout(async () => {
      this.hintWait = null;
      await this.askHint();
      if (this.view && !$("#game").hidden) this.renderPlayControls();
    }, seconds * 1000);
  }

  stopHintWait() {
    clearTimeout(this.hintWait);
    this.hintWait = null;
    if (this.ui.hint && this.ui.hint.preparing) this.ui.hint = null;
  }

  async doAbandon() {
    if (!this.session || this.ui.busy || !this.view || this.view.status !== "playing") return;
    const t = this.t;
    const yes = await askConfirm(t.t("confirm.abandonTitle"), t.t("confirm.abandonText"), t.t("confirm.abandonOk"));
    if (yes) await this.move(() => api.abandon(this.session.game_id, this.session.token));
  }

  // ---------------------------------------------------------------- the end of the game

  async finishGame(view) {
    const seat = this.session ? this.session.seat : 0;
    const result = outcomeOf(view.final, seat, view.seats.length);
    let newBest = false;
    if (this.session && view.final.status === "finished") {
      newBest = store.record(view.game_id, view.rules, { solo: result.outcome === "solo", won: result.outcome === "won",
        draw: result.outcome === "draw", score: result.score }).newBest;
    }
    if (this.session) store.update(view.game_id, { result: { outcome: result.outcome, score: result.score } });
    this.newBest = newBest && view.final.status === "finished";
    this.renderResult(view);
    $("#result").hidden = false;
    $("#play").hidden = true;
    $(".table-area").classList.add("over");
    $("#fairness").hidden = false;
    $("#server-seed").textContent = view.final.server_seed;
    $("#fair-commitment").textContent = view.commitment;
    this.render();
    $("#result-title").focus({ preventScroll: true });
    window.scrollTo(0, 0);
    await this.runVerification(view.game_id);
  }

  renderResult(view) {
    const t = this.t;
    const ctx = this.ctx();
    const seat = ctx.seat;
    const fin = view.final;
    const result = outcomeOf(fin, seat, view.seats.length);
    const winner = result.winner !== undefined ? speaker(ctx, result.winner) : null;
    const winnerName = !winner ? "" : winner.who === "bot" ? t.t("end.winnerBot", { name: winner.name }) : winner.name;
    $("#result-title").textContent = t.t("end.title", { outcome: result.outcome, score: result.score, winner: winnerName });
    $("#result").dataset.outcome = result.outcome;
    const sub = [];
    if (view.seats.length > 1) sub.push(view.seats.map((s, i) => `${seatLabel(ctx, i)} ${t.number(fin.totals[i].total)}`).join(" · "));
    if (this.newBest) sub.push(t.t("end.newBest", { rules: rulesName(t, ctx.rules, view.rules) }));
    const abandon = fin.status === "abandoned" && (view.events || []).find((e) => e.type === "abandon");
    if (abandon) { // who ended it: the server's abandon is named as such (SPEC §4.3)
      const server = abandon.reason === "timeout" ? "timeout" : "server";
      const by = abandon.seat === null ? (view.seats.some((s) => s.type === "human") ? server : "operator")
        : abandon.seat === seat ? "me" : "other";
      sub.push(t.t("end.abandonedBy", { by, name: abandon.seat === null ? "" : view.seats[abandon.seat].name }));
    }
    $("#result-sub").textContent = sub.join("\n");
    const parts = ["upper", "upper_bonus", "lower", "yahtzee_bonus", "total"]
      .filter((p) => p !== "yahtzee_bonus" || ctx.rules.yahtzee_bonus);
    const names = { upper: "end.upper", upper_bonus: "end.upperBonus", lower: "end.lower", yahtzee_bonus: "end.yahtzeeBonus", total: "end.total" };
    $("#result-table").replaceChildren(
      h("thead", h("tr", h("th", { scope: "col" }, h("span.sr", t.t("end.part"))), view.seats.map((s, i) => h("th", { scope: "col" }, seatLabel(ctx, i))))),
      h("tbody", parts.map((p) => h("tr", { class: p === "total" ? "total" : "" }, h("th", { scope: "row" }, t.t(names[p])),
        fin.totals.map((x) => h("td", t.number(x[p])))))));
  }

  /** How to call seat `i` of a log: "You" for this browser's seat of its own game, a bot by its name. */
  namesFor(log) {
    const seats = (log && log.header && log.header.seats) || [];
    const mineId = this.session && this.session.game_id;
    return (i) => {
      const s = seats[i];
      if (log && log.header && log.header.game_id === mineId && i === this.session.seat) return this.t.t("seat.label", { who: "me" });
      if (s && s.type === "bot" && s.bot) return this.t.t("seat.label", { who: "bot", name: botName(this.t, s.bot.id) });
      return s ? s.name : `#${i}`;
    };
  }

  /** The receipt kept for this game (the game being played, or one of the recent games), or null. */
  receiptFor(gameId) {
    return this.kept(gameId, "receipt") || null;
  }

  /** The server's signed receipts of the moves of this game (SPEC §5.6), as kept from its answers. */
  moveReceiptsFor(gameId) {
    return this.kept(gameId, "move_receipts") || [];
  }

  kept(gameId, what) {
    if (this.session && this.session.game_id === gameId && this.session[what]) return this.session[what];
    const entry = store.recent().find((g) => g.game_id === gameId);
    return entry && entry[what];
  }

  /** Every answer to a move carries the server's signature over the history so far: kept, so that a final
   * log that departs from any answer the player saw fails (`receipt.chain`). */
  keepMoveReceipt(answer) {
    const s = this.session;
    if (!s || !answer || !answer.receipt || answer.receipt.game_id !== s.game_id) return;
    s.move_receipts = [...(s.move_receipts || []), answer.receipt];
    store.setCurrent(s);
    store.update(s.game_id, { move_receipts: s.move_receipts });
  }

  async runVerification(gameId) {
    const t = this.t;
    $("#verify-report").replaceChildren(h("p.muted", t.t("verify.checking")));
    $("#verify-summary").textContent = t.t("verify.pending");
    $("#fairness").dataset.verdict = "pending";
    try {
      const receipt = this.receiptFor(gameId);
      const moveReceipts = this.moveReceiptsFor(gameId);
      const { report, notLog } = await check(await api.logText(gameId), { receipt, moveReceipts,
        trustedKeys: this.trustedKeys });
      if (notLog) throw new Error(t.t("verify.serverLogBroken"));
      const log = report.document;
      this.log = log;
      $("#download-btn").disabled = false;
      $("#receipt-btn").hidden = !receipt;
      $("#moves-btn").hidden = !moveReceipts.length;
      $("#verify-cmd").textContent = ["fairdice-verify", receipt ? `--receipt ${receiptName(log)}` : "",
        moveReceipts.length ? `--receipts ${movesName(log)}` : "", fileName(log)].filter(Boolean).join(" ");
      this.verified = { report, log };
      this.showReport(this.verified);
    } catch (err) {
      $("#fairness").dataset.verdict = "fail";
      $("#verify-summary").textContent = t.t("verify.couldNot");
      $("#verify-report").replaceChildren(h("p.bad", problemText(t, err)));
    }
  }

  showReport({ report, log }) {
    renderReport({ t: this.t, box: $("#verify-report"), summaryEl: $("#verify-summary"), host: $("#fairness"), report,
      names: this.namesFor(log), rules: this.rules[log.header.rules] });
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

  // ---------------------------------------------------------------- dialogs

  openRules(which) {
    renderRules(this.t, this.rules, which || (this.view && this.view.rules));
    $("#rules-dialog").showModal();
  }

  openVerifyDialog() {
    $("#verify-paste").value = "";
    $("#verify-out").replaceChildren();
    $("#verify-dialog-summary").textContent = "";
    delete $("#verify-dialog").dataset.verdict;
    $("#verify-dialog").showModal();
  }

  /** Verify what the player pasted or chose (text or a file's bytes), held to a receipt this browser kept. */
  async verifyInput(input) {
    const out = $("#verify-out");
    const summaryEl = $("#verify-dialog-summary");
    const host = $("#verify-dialog");
    const t = this.t;
    if (typeof input === "string" && !input.trim()) {
      summaryEl.textContent = t.t("verifyDialog.empty");
      return;
    }
    try {
      const text = typeof input === "string" ? input : decodeText(input);
      const receipt = text === null ? null : this.receiptFor(gameIdOf(text));
      const { report, notLog } = await check(input, { receipt, trustedKeys: this.trustedKeys });
      if (notLog) return renderNotLog({ t, box: out, summaryEl, host, notLog });
      renderReport({ t, box: out, summaryEl, host, report, names: this.namesFor(report.document),
        rules: this.rules[report.document.header.rules] });
    } catch (err) {
      host.dataset.verdict = "fail";
      summaryEl.textContent = t.t("notLog.title");
      out.replaceChildren(h("p.bad", problemText(t, err)));
    }
  }

  async verifyFile(file) {
    const bytes = await fileBytes(file);
    const text = decodeText(bytes);
    $("#verify-paste").value = text !== null && text.length < 200_000 ? text : "";
    await this.verifyInput(bytes);
  }

  // ---------------------------------------------------------------- wiring

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

  wire() {
    const on = (sel, type, fn) => $(sel).addEventListener(type, fn);
    makeDice($("#dice"), (i) => this.toggleHold(i));
    on("#lobby-form", "submit", (e) => this.createGame(e));
    on("#lobby-form", "change", (e) => {
      if (["opponent", "rules", "first"].includes(e.target.name)) store.setLobby(lobbyChoices());
      this.syncLobby();
    });
    on("#client-seed", "input", () => {
      this.syncLobby();
      if (this.created && this.session) store.setCurrent({ ...this.session, seed_draft: $("#client-seed").value });
    });
    on("#new-seed", "click", () => { $("#client-seed").value = randomSeed(); this.syncLobby(); });
    on("#start-btn", "click", () => this.sendSeed());
    on("#cancel-btn", "click", () => this.cancel());
    on("#speed", "change", (e) => store.setPrefs({ speed: e.target.value }));
    on("#player-name", "change", (e) => store.setPrefs({ name: e.target.value.trim() }));
    on("#roll-btn", "click", () => this.doRoll());
    on("#hint-btn", "click", () => this.doHint());
    on("#abandon-btn", "click", () => this.doAbandon());
    on("#new-game-btn", "click", () => this.showLobby());
    on("#download-btn", "click", () => this.log && this.download(this.log, fileName(this.log)));
    on("#receipt-btn", "click", () => {
      const receipt = this.log && this.receiptFor(this.log.header.game_id);
      if (receipt) this.download(receipt, receiptName(this.log));
    });
    on("#moves-btn", "click", () => {
      const receipts = this.log ? this.moveReceiptsFor(this.log.header.game_id) : [];
      if (receipts.length) this.download(receipts, movesName(this.log));
    });
    on("#copy-cmd", "click", async () => {
      try {
        await navigator.clipboard.writeText($("#verify-cmd").textContent);
        this.toast(this.t.t("toast.copied"), "info");
      } catch {
        this.toast(this.t.t("toast.copyFailed"), "info");
      }
    });
    on("#game-commit", "click", () => this.view && this.toast(this.t.t("game.commitTitle", { commitment: this.view.commitment }), "info"));
    on("#nav-rules", "click", () => this.openRules($("input[name=rules]:checked")?.value));
    on("#nav-verify", "click", () => this.openVerifyDialog());
    on("#nav-lang", "click", () => this.setLanguage(this.t.lang === "zh" ? "en" : "zh"));
    for (const id of ["#how-link", "#how-link-end"]) on(id, "click", () => $("#how-dialog").showModal());
    on("#nav-home", "click", (e) => {
      e.preventDefault();
      if (this.view && this.view.status === "playing") return this.toast(this.t.t("toast.saved"), "info");
      this.showLobby();
    });
    on("#verify-run", "click", () => this.verifyInput($("#verify-paste").value));
    on("#verify-file", "change", (e) => { const f = e.target.files[0]; if (f) this.verifyFile(f); });
    for (const d of $$("dialog")) d.addEventListener("click", (e) => { if (e.target === d) d.close(); }); // the backdrop
    document.addEventListener("keydown", (e) => this.onKey(e));
    store.onMoved((id, n) => this.onElsewhere(id, n));
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && this.session) this.onElsewhere(this.session.game_id);
    });
  }
}

function decodeText(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

export function fileName(log) {
  const id = (log && log.header && log.header.game_id) || "game";
  return `game-${id.replace(/[^A-Za-z0-9_-]/g, "_")}.json`;
}

export const receiptName = (log) => fileName(log).replace(/^game-/, "receipt-");
export const movesName = (log) => fileName(log).replace(/^game-/, "moves-");
