// fairdice game page: the controller that ties the parts together (main.js starts it).
//   api.js       HTTP (problems with stable codes, Retry-After)      store.js   what this browser keeps
//   i18n.js      the catalogues (i18n/en.js, i18n/zh.js)             rules.js   the rule sets as data
//   state.js     the board's view, pure                              board.js   drawing the game screen
//   lobby.js     drawing the lobby                                   report.js  drawing a verification
//   verification.js  receipts and checking logs (verify.js)          dialogs.js rules, how it works, yes/no
//   problems.js  the server's refusals in words
//   player.js    this browser's seats: keys, seeds, signed commands   history.js the history shown, hashed here
//   signing.js   Ed25519 keys and what a player signs (SPEC §5.7)     watch.js   hearing of other players' moves
//   friends.js   seats of friends, invite and spectator links
// Importing this module does nothing; `new App().boot()` starts the page.

import { api, ApiProblem } from "./api.js";
import { seatsOf, store } from "./store.js";
import { chooseLanguage, translator } from "./i18n.js";
import { $, $$, applyTexts, h } from "./dom.js";
import { boxLabel, mergeRules, rulesName } from "./rules.js";
import { applyEvent, canHold, isOver, isTurnOf, MAX_ROLLS, outcomeOf, viewOf } from "./state.js";
import { botName, makeDice, renderBoard, renderBoxes, renderControls, renderDice, renderMoves, seatLabel, speaker } from "./board.js";
import { lobbyChoices, renderChoices, renderRecords } from "./lobby.js";
import { renderNotLog, renderReport } from "./report.js";
import { checkedHeader, checkSeats, fileBytes, gameIdOf } from "./verification.js";
import { problemText } from "./problems.js";
import { askConfirm, renderHow, renderRules } from "./dialogs.js";
import { clientSeedValid, parseStrictJSON, seatNameValid } from "./verify.js";
import { AnswerRefused, ShownHistory } from "./history.js";
import { abandonCommand, awaitedSeats, heldSeats, prepareSeat, rollCommand, scoreCommand, seedCommand, seedStep,
  sendCommand } from "./player.js";
import { defaultRows, parseLink, renderInvitation, renderSeatEditor, renderTable, seatsToCreate } from "./friends.js";
import { watchGame } from "./watch.js";

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
    this.session = null; // the game this browser plays or watches: its entry in store.js (seats, keys, receipts)
    this.created = null; // the POST /v1/games answer while the client seed is not sent
    this.header = null; // the game's signed header, checked against the server's keys
    this.shown = null; // the history shown, hashed by this page (history.js): every answer is held to it
    this.halted = null; // the AnswerRefused that stopped this game: nothing more is sent or signed
    this.watcher = null; // watching for other players' moves (watch.js)
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
    const link = parseLink(location.hash);
    if (link) {
      window.history.replaceState(null, "", location.pathname + location.search); // a seat's token leaves the address bar
      await this.openLink(link);
      if (document.body.dataset.screen !== "loading") return;
    }
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
    if (this.halted) this.showHalt();
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
    this.stopWatch();
    store.clearCurrent();
    this.session = null;
    this.view = null;
    this.verified = null;
    this.created = null;
    this.header = null;
    this.shown = null;
    this.halted = null;
    $("#halted").hidden = true;
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
    this.renderSeatEditor(keep ? lobbyChoices().rows : saved.rows);
    if (this.session && this.header && !$("#lobby-table").hidden) this.renderTable($("#lobby-table"));
    if (this.session && this.header && this.session.guest && !$("#join-card").hidden) this.renderInvitation();
    this.syncLobby();
    this.renderRecords();
  }

  /** The seats after the player's own, for "a friend" and "friends and bots" (`rows`: kept ones, else a start). */
  renderSeatEditor(rows) {
    const mode = $("input[name=opponent]:checked")?.value;
    $("#friends-field").hidden = !["friend", "friends"].includes(mode);
    if ($("#friends-field").hidden) return;
    const bots = this.bots ? this.bots.map((b) => b.id) : ["greedy", "ev"];
    const fits = rows && rows.length && (mode === "friends" || (rows.length === 1 && !rows[0].kind.startsWith("bot:")));
    renderSeatEditor({ t: this.t, mode, bots, me: this.playerName(), rows: fits ? rows : defaultRows(mode, bots),
      onChange: (next) => { this.renderSeatEditor(next); store.setLobby(lobbyChoices()); } });
  }

  renderRecords() {
    renderRecords({ t: this.t, rules: this.rules, records: store.records(), recent: store.recent(),
      onOpen: (g) => this.openGame(g) });
  }

  syncLobby() {
    const mode = $("input[name=opponent]:checked")?.value;
    const solo = mode === "solo";
    $("#first-field").disabled = solo || !!this.created;
    $("#first-field").classList.toggle("muted", solo);
    // who else may go first: the bot, the friend; among several seats, the player or a roll-off
    $("#first-other").hidden = mode === "friends";
    $("#first-other-text").textContent = this.t.t(mode === "friend" ? "lobby.first.friend" : "lobby.first.bot");
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
    const plan = this.seatsFor(c, name);
    if (!plan.seats.every((seat) => seat.type !== "human" || seatNameValid(seat.name))) return this.toast(this.t.t("problem.invalid_seats"));
    const first = c.opponent === "solo" ? 0 : c.first === "me" ? 0 : c.first === "bot" && c.opponent !== "friends" ? 1 : "random";
    this.setBusy(true);
    try {
      this.onCreated(await api.create({ rules: c.rules, seats: plan.seats, first }), c, plan);
    } catch (err) {
      if (err instanceof ApiProblem && err.code === "engine_warming_up") this.waitForEngine(err.retryAfter);
      else this.toastProblem(err);
    } finally {
      this.setBusy(false);
    }
  }

  /** The seats to create ({seats, here, invites}: friends.js seatsToCreate): the player and a bot, the player
   * alone, or the player with the friends and bots of the seat editor. */
  seatsFor(choices, name) {
    if (["friend", "friends"].includes(choices.opponent)) return seatsToCreate(this.t, name, choices.rows);
    const seats = [{ type: "human", name }];
    if (choices.opponent !== "solo") seats.push({ type: "bot", bot: choices.opponent });
    return { seats, here: [0], invites: [] };
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

  onCreated(created, choices, plan) {
    this.stopWaiting(false);
    const tokens = new Map(created.tokens.map((x) => [x.seat, x.token]));
    this.created = created;
    this.header = created.header;
    this.session = { game_id: created.game_id, seat: 0, rules: choices.rules, opponent: choices.opponent,
      names: this.otherNames(plan.seats, plan.here), created: Date.now(), commitment: created.commitment,
      version: created.version, seats: Object.fromEntries(plan.here.map((seat) => [seat, { token: tokens.get(seat) }])),
      invites: plan.invites.map((seat) => ({ seat, token: tokens.get(seat) })), seed_draft: $("#client-seed").value };
    this.save();
    this.showCommitment(created);
    if (plan.invites.length || plan.here.length > 1) this.renderTable($("#lobby-table"));
  }

  /** The names of the seats this browser does not play, as the recent games list shows them. */
  otherNames(seats, here) {
    return seats.map((s, i) => (here.includes(i) ? null : s.type === "bot" ? this.t.t("seat.label", { who: "bot", name: botName(this.t, s.bot.id || s.bot) }) : s.name))
      .filter(Boolean);
  }

  /** Keep the game as it stands (its seats' keys and receipts included), to come back to it. */
  save() {
    if (this.session) store.keep(this.session);
  }

  /** The seats of this game that this browser plays, in seat order (none for a spectator). */
  held() {
    return this.session ? heldSeats(this.session.seats || {}) : [];
  }

  showCommitment(created) {
    $("#lobby-form").classList.add("committed");
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = true;
    $("#commit-card").hidden = false;
    $("#commitment").textContent = created.commitment;
    $("#commit-key").textContent = created.key_id;
    $("#create-btn").hidden = true;
    $("#start-btn").hidden = false;
    this.labelStart(this.session && this.session.guest ? "join.start" : "lobby.start");
    $("#cancel-btn").hidden = false;
    this.syncLobby();
    $("#commit-card").scrollIntoView({ block: "nearest" });
    $("#client-seed").focus();
  }

  resetLobby() {
    this.created = null;
    $("#lobby-form").classList.remove("committed");
    $("#lobby-form").classList.remove("joining");
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = false;
    $("#commit-card").hidden = true;
    $("#lobby-table").hidden = true;
    $("#lobby-table").replaceChildren();
    $("#join-card").hidden = true;
    $("#preparing").hidden = !this.waiting;
    $("#create-btn").hidden = false;
    $("#start-btn").hidden = true;
    this.labelStart("lobby.start");
    $("#cancel-btn").hidden = !this.waiting;
    $("#client-seed").value = randomSeed();
    $("#client-seed").readOnly = false;
    $("#new-seed").disabled = false;
    this.syncLobby();
  }

  /** "Start" for the player who created the game, "Join" for a friend (kept across a change of language). */
  labelStart(key) {
    $("#start-btn").dataset.i18n = key;
    $("#start-btn").textContent = this.t.t(key);
  }

  /** The signed header of the game ({header, commitment_signature}): from the creation answer, a receipt this
   * browser kept, or the log so far; checked by the caller (checkedHeader). */
  async signedHeader() {
    if (this.created && this.created.header && this.created.game_id === this.session.game_id) return this.created;
    const kept = Object.values(this.session.seats || {}).find((k) => k.receipt && k.receipt.header);
    if (kept) return kept.receipt;
    return parseStrictJSON(await api.logText(this.session.game_id));
  }

  /**
   * "Start" (or "Join"): every seat this browser plays gets its key, its seed (the one on the form for the first
   * seat; a seat of a friend passing this device a random one of its own) and its receipt, all kept before
   * anything goes out; then each sends its seed, or its commitment in a game of several humans. Once a seat's
   * seed is prepared, only that very seed is ever sent again: a server that refuses seeds until one suits it
   * gets the same one each time (SPEC §4.3).
   */
  async startGame() {
    const s = this.session;
    const held = this.held();
    if (!s || !held.length || this.ui.busy) return;
    const first = s.seats[held[0]];
    const draft = first.receipt ? first.receipt.client_seed : $("#client-seed").value;
    if (!clientSeedValid(draft)) return;
    this.setBusy(true);
    try {
      const signed = await this.signedHeader();
      for (const seat of held) {
        const seed = seat === held[0] ? draft : randomSeed();
        s.seats[seat] = await prepareSeat(s.seats[seat], { signed, gameId: s.game_id, seat, commitment: s.commitment,
          trustedKeys: this.trustedKeys, seed, version: s.version, header: signed.header });
      }
      this.save(); // kept before anything goes out: a reload resends these very seeds, with these keys
      $("#client-seed").readOnly = true;
      $("#new-seed").disabled = true;
      if (!this.shown) await this.loadGame();
      await this.advanceSeeds();
      this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      else this.toastProblem(err);
    } finally {
      this.setBusy(false);
    }
  }

  /**
   * Send what this browser's seats owe before play, as far as the game allows now: a seed, or in a game of
   * several humans a commitment, then (once every human has committed) the reveal. The first answer takes the
   * player from the lobby to the table, where the others are waited for.
   */
  async advanceSeeds() {
    const s = this.session;
    for (let sends = 0; sends < 2 * this.held().length; sends++) { // (a commitment and a reveal per seat at most)
      const seat = this.held().find((x) => s.seats[x].receipt && seedStep(this.shown.events, this.header, s.version, x));
      if (seat === undefined || this.halted) return;
      const step = seedStep(this.shown.events, this.header, s.version, seat);
      const answer = await this.send(seat, seedCommand(step, seat, s.seats[seat]));
      if ($("#game").hidden) {
        this.resetLobby();
        this.enterGame(this.view);
      }
      await this.applyAnswer(answer);
    }
  }

  /** Send a command of `seat` (player.js): signed over the history shown, signed again if that moved on. */
  send(seat, command) {
    return sendCommand({ history: this.shown, seats: this.session.seats, seat, command, catchUp: () => this.catchUp() });
  }

  async cancel() {
    if (this.waiting) return this.stopWaiting();
    if (!this.session) return this.resetLobby();
    if (this.session.guest) return this.leaveInvitation();
    const seat = this.held()[0];
    try {
      if (seat !== undefined && this.shown) await this.send(seat, abandonCommand(seat));
      else if (seat !== undefined) await api.abandon(this.session.game_id, this.session.seats[seat].token);
    } catch {
      // nothing was played; forgetting it here is enough
    }
    store.update(this.session.game_id, { result: { outcome: "cancelled" } });
    store.clearCurrent();
    this.session = null;
    this.shown = null;
    this.header = null;
    this.resetLobby();
    this.renderRecords();
  }

  // ---------------------------------------------------------------- the game: loading and drawing

  /** Open a game this browser plays (or watches): resume it where it stands, or go back to the step before its
   * seeds went out. `entry`: as kept in store.js. */
  async openGame(entry) {
    this.setBusy(true);
    try {
      this.session = { ...entry, seats: seatsOf(entry) };
      delete this.session.token; // (an older page's single seat: now in `seats`)
      delete this.session.receipt;
      const st = await this.loadGame();
      if (this.seatTaken()) return this.openGame({ ...this.session, seats: {}, spectator: true, seat: null });
      // before play, back to the seed step while a seat of this browser has nothing out yet (or no seed chosen)
      const s = this.session;
      const sent = this.held().some((seat) => this.shown.events.some((e) => e.seat === seat));
      const unprepared = this.held().some((seat) => !s.seats[seat].receipt);
      if (st.status === "awaiting_client_seed" && !s.spectator && (!sent || unprepared)) return this.resumeCommitted(s, st);
      this.save(); // until "New game": a reload shows this game again
      this.enterGame(this.view);
      if (st.final) await this.finishGame(this.view);
      else {
        await this.advanceSeeds();
        this.syncWatch();
      }
    } catch (err) {
      if (err instanceof ApiProblem && err.status === 404) {
        this.toast(this.t.t("toast.gone"));
        store.update(entry.game_id, { result: { outcome: "gone" } });
        if (store.current()?.game_id === entry.game_id) store.clearCurrent();
        this.showLobby();
      } else if (err instanceof AnswerRefused) {
        this.halt(err);
      } else {
        this.toastProblem(err);
        if (!this.view) this.showLobby();
      }
    } finally {
      this.setBusy(false);
    }
  }

  /**
   * The game as it stands: its header checked against the server's keys, the history so far taken in by this
   * page's own hash chain and held to the server's receipt of it (this.header, this.shown, this.view). Nothing
   * is drawn. Resolves to the server's state.
   */
  async loadGame() {
    const s = this.session;
    const st = await api.state(s.game_id);
    s.rules = s.rules || st.rules;
    s.version = s.version || st.version;
    s.commitment = s.commitment || st.commitment;
    this.header = await checkedHeader({ signed: await this.signedHeader(), gameId: s.game_id, commitment: s.commitment,
      trustedKeys: this.trustedKeys });
    if (!s.names) s.names = this.otherNames(this.header.seats, this.held());
    this.shown = await ShownHistory.start(this.header);
    await this.shown.accept(st);
    this.view = { ...viewOf(st), events: [...this.shown.events] };
    return st;
  }

  /** A seat of this browser (opened from its link) whose key the server already has from another device: this
   * browser cannot sign for it, so it watches. */
  seatTaken() {
    const s = this.session;
    const taken = this.held().filter((seat) => !s.seats[seat].key && this.view.seats[seat] && this.view.seats[seat].player_key);
    if (!taken.length) return false;
    this.toast(this.t.t("join.taken"), "info");
    return true;
  }

  /** A game created (or an invitation opened) but whose seeds were not sent yet: back to that step of the lobby. */
  resumeCommitted(entry, st) {
    this.save();
    this.show("lobby");
    this.renderLobby();
    const pick = (name, value) => { const el = $(`input[name=${name}][value="${value}"]`); if (el) el.checked = true; };
    pick("rules", entry.rules);
    pick("opponent", entry.guest ? "friend" : entry.opponent);
    this.created = { commitment: st.commitment, key_id: st.key_id };
    if (entry.seed_draft) $("#client-seed").value = entry.seed_draft;
    const first = entry.seats[this.held()[0]];
    if (first && first.receipt) { // sent before, refused or unanswered: it is resent unchanged, not edited
      $("#client-seed").value = first.receipt.client_seed;
      $("#client-seed").readOnly = true;
      $("#new-seed").disabled = true;
    }
    this.showCommitment(this.created);
    if (entry.guest) {
      $("#lobby-form").classList.add("joining");
      this.renderInvitation();
    }
    if ((entry.invites || []).length || this.held().length > 1) this.renderTable($("#lobby-table"));
  }

  /** A friend who opened an invite link and does not join: the game is left as it is (an abandon would end it
   * for everyone), and forgotten here. */
  leaveInvitation() {
    store.update(this.session.game_id, { result: { outcome: "cancelled" } });
    this.showLobby();
  }

  /** What a friend who opened an invite link sees: the game, its seats and their own (friends.js). */
  renderInvitation() {
    renderInvitation({ t: this.t, box: $("#join-card"), rules: this.rules, header: this.header, seat: this.held()[0],
      onRules: () => this.openRules(this.header.rules) });
  }

  /** The seats of the game, who has joined, and the links to share (friends.js); in the lobby or at the table. */
  renderTable(box) {
    const s = this.session;
    const events = this.shown ? this.shown.events : [];
    renderTable({ t: this.t, box, gameId: s.game_id, header: this.header, here: this.held(), invites: s.invites,
      joined: (seat) => events.some((e) => e.seat === seat && (e.type === "client_seed_commit" || e.type === "client_seed")),
      onCopy: (url, name) => this.copyLink(url, name) });
  }

  async copyLink(url, name) {
    try {
      await navigator.clipboard.writeText(url);
      this.toast(name ? this.t.t("table.copied", { name }) : this.t.t("table.copiedWatch"), "info");
    } catch {
      this.toast(this.t.t("table.copyFailed"), "info");
    }
  }

  /** An invite link (its seat joins this browser) or a spectator link, from the page's address. */
  async openLink(link) {
    if (link.watch) return this.openGame({ game_id: link.watch, seat: null, seats: {}, spectator: true, created: Date.now() });
    const { game_id: gameId, seat, token } = link.join;
    const kept = store.entry(gameId);
    const seats = seatsOf(kept);
    if (kept && seats[seat] && seats[seat].token === token) return this.openGame(kept); // back from the link: its key is here
    const entry = kept && !kept.spectator
      ? { ...kept, seats: { ...seats, [seat]: { token } } }
      : { game_id: gameId, seat, seats: { [seat]: { token } }, guest: true, opponent: "friend", created: Date.now() };
    return this.openGame(entry);
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
    const seat = this.viewSeat();
    const held = this.held();
    const awaiting = this.view.status === "awaiting_client_seed" && this.header && this.shown
      ? awaitedSeats(this.shown.events, this.header, this.session.version).filter((x) => !held.includes(x)).map((x) => this.view.seats[x].name)
      : [];
    return { t: this.t, rules, seat, view: this.view, ...this.ui, hintRoute: this.hintRoute,
      touch: matchMedia("(pointer: coarse)").matches, plays: held.includes(seat) && !this.halted,
      named: held.length !== 1, awaiting };
  }

  /** The seat whose boxes the board shows: the one to move when this browser plays it (several friends may pass
   * one device), else this browser's first seat; a spectator follows the seat to move. */
  viewSeat() {
    const held = this.held();
    const current = this.view && this.view.status === "playing" ? this.view.current_seat : null;
    if (current !== null && current !== undefined && (held.includes(current) || !held.length)) return current;
    if (held.length) return held.includes(this.session.seat) ? this.session.seat : held[0];
    return 0;
  }

  els() {
    return { game: $("#game"), title: $("#game-title"), round: $("#game-round"), commit: $("#game-commit"), abandon: $("#abandon-btn"),
      dice: $("#dice"), roll: $("#roll-btn"), rollsLeft: $("#rolls-left"), hint: $("#hint-btn"), hintText: $("#hint-text"),
      boxes: $("#boxes"), card: $("#scorecard"), strip: $("#scores-strip"), moves: $("#moves"), movesBox: $("#moves-box"),
      status: $("#status") };
  }

  render() {
    if (!this.view) return;
    const ctx = this.ctx();
    renderBoard(ctx, this.els(), (id) => this.pick(id));
    $("#keys-help").textContent = this.t.t("game.keys");
    const watching = !this.held().length;
    $("#game-watching").hidden = !watching;
    // a seat abandons before play, or on its own turn (SPEC §4.3): not while another player is to move
    const othersTurn = this.view.status === "playing" && !this.held().includes(this.view.current_seat);
    if (watching || this.halted || othersTurn) $("#abandon-btn").hidden = true;
    $("#roll-btn").hidden = watching;
    this.renderTablePanel();
  }

  /** At the table before play: who has joined, who is awaited, and the links to share. */
  renderTablePanel() {
    const box = $("#table-panel");
    const waiting = this.view.status === "awaiting_client_seed" && !!this.header;
    if (!waiting) {
      box.hidden = true;
      box.replaceChildren();
      return;
    }
    this.renderTable(box);
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

  /** Whether a seat of this browser is to move now (and the game goes on). */
  mine() {
    const seat = this.viewSeat();
    return !this.halted && this.held().includes(seat) && isTurnOf(this.view, seat) && !this.ui.animating;
  }

  toggleHold(i) {
    if (!this.mine() || this.ui.busy || !canHold(this.view, this.viewSeat())) return;
    if (this.ui.held.has(i)) this.ui.held.delete(i);
    else this.ui.held.add(i);
    renderDice(this.ctx(), $("#dice"));
  }

  async doRoll() {
    const v = this.view;
    if (!this.mine() || this.ui.busy || v.rolls_left <= 0) return;
    const hold = v.rolls_made === 0 ? [] : [...this.ui.held].sort((a, b) => a - b);
    this.stopHintWait();
    this.ui.hint = null;
    this.ui.highlight = null;
    await this.move(() => rollCommand(this.shown.events, this.viewSeat(), hold));
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
    await this.move(() => scoreCommand(this.shown.events, this.viewSeat(), category));
  }

  /**
   * Send one move (`command()`: the command of the seat to move, player.js) and show its answer. First the
   * board is checked against the server: a move made on an outdated board (the game moved on in another tab or
   * device) is not sent, and the board catches up. A refused or lost move says why and reloads the game as
   * stored; an answer that does not match what the server signed stops the game (halt).
   */
  async move(command) {
    this.setBusy(true);
    try {
      if (!(await this.boardIsCurrent())) {
        this.toast(this.t.t("toast.stale"), "info");
        await this.catchUp();
        return;
      }
      const c = command();
      await this.applyAnswer(await this.send(c.seat, c));
      this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) return this.halt(err);
      this.toastProblem(err);
      await this.reload();
    } finally {
      this.setBusy(false);
    }
  }

  /** Whether the server's game has exactly the events this board has shown (a cheap request: no events). */
  async boardIsCurrent() {
    const st = await api.state(this.session.game_id, this.shown.count, 0);
    return st.event_count === this.shown.count;
  }

  /** Play out the events this board has not seen (made elsewhere), then show the game as it is. */
  async catchUp() {
    if (!this.session || !this.view) return;
    const st = await api.state(this.session.game_id, this.shown.count);
    this.ui.held.clear();
    await this.applyAnswer(st);
  }

  /** The game as stored, drawn at once (after a refusal or a lost answer); its events held to this page's
   * history like any answer. */
  async reload() {
    if (!this.session || !this.shown) return;
    try {
      const st = await api.state(this.session.game_id);
      await this.shown.accept(st);
      this.keepMoveReceipt(st);
      this.view = { ...viewOf(st), events: [...this.shown.events] };
      this.ui.held.clear();
      this.render();
      if (this.view.final) await this.finishGame(this.view);
      else this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      // otherwise keep what is shown
    }
  }

  /** Another tab of this browser moved in this game, or this tab comes back into view: catch up. */
  async onElsewhere(gameId, eventCount) {
    if (!this.session || !this.view || !this.shown || gameId !== this.session.game_id || this.ui.busy || this.ui.animating
        || this.halted) return;
    if (eventCount !== undefined && eventCount === this.shown.count) return;
    this.setBusy(true);
    try {
      if (!(await this.boardIsCurrent())) await this.catchUp();
      this.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      // otherwise the next move checks again
    } finally {
      this.setBusy(false);
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
      events = await this.shown.accept(answer);
    } catch (err) {
      if (!(err instanceof AnswerRefused && err.reason === "gap")) throw err;
      answer = await api.state(this.session.game_id, this.shown.count); // the board missed events: fetch them too
      events = await this.shown.accept(answer);
    }
    this.keepMoveReceipt(answer);
    this.ui.animating = true;
    try {
      await this.playEvents(events);
    } finally {
      this.ui.animating = false;
    }
    this.view = { ...viewOf(answer, this.view.events), events: [...this.shown.events] };
    if (!canHold(this.view, this.viewSeat())) this.ui.held.clear(); // nothing is held after the last roll or on a new turn
    this.render();
    this.settleFocus();
    if (events.length) store.moved(this.session.game_id, this.view.event_count);
    if (this.view.final) await this.finishGame(this.view);
  }

  // ---------------------------------------------------------------- other players: watching, and a refused answer

  /** Watch for other players' moves while the game waits for one of them (or for a spectator, all along). */
  syncWatch() {
    const v = this.view;
    const held = this.held();
    const waits = !!v && !!this.shown && !this.halted && !v.final && !isOver(v)
      && (v.status === "awaiting_client_seed" || !held.includes(v.current_seat));
    if (!waits) return this.stopWatch();
    const gameId = this.session.game_id;
    if (this.watcher && this.watcher.gameId === gameId) return;
    this.stopWatch();
    this.watcher = { gameId, ...watchGame(gameId, { since: () => this.shown.count, onMoves: (state) => this.onMoves(gameId, state) }) };
  }

  stopWatch() {
    if (this.watcher) this.watcher.stop();
    this.watcher = null;
  }

  /** Another player moved: show it, send what is due now (a reveal, once every friend has committed). */
  async onMoves(gameId, state) {
    if (!this.session || this.session.game_id !== gameId || this.ui.busy || this.ui.animating || this.halted) return;
    this.setBusy(true);
    try {
      await this.applyAnswer(state);
      if (!this.view.final) await this.advanceSeeds();
    } catch (err) {
      if (err instanceof AnswerRefused) this.halt(err);
      else this.toastProblem(err);
    } finally {
      this.setBusy(false);
    }
    this.syncWatch();
  }

  /** The server's answer does not match what it signed (or signs a move of this browser's seats it did not
   * make): the game stops here, nothing more is sent or signed, and the player is told why. */
  halt(err) {
    this.halted = err;
    this.stopWatch();
    this.stopHintWait();
    if (!this.view) {
      this.showLobby();
      this.toast(this.haltText());
      return;
    }
    if ($("#game").hidden) {
      this.resetLobby();
      this.enterGame(this.view);
    }
    this.showHalt();
    this.render();
  }

  haltText() {
    const d = this.halted.detail || {};
    return this.t.t("halt.text", { reason: this.halted.reason, event: d.event ?? d.n ?? "", n: d.n ?? "" });
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
    const mine = this.held().includes(e.seat);
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
    const mine = this.held().includes(e.seat);
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
      const doc = await api.hint(this.session.game_id, (this.session.seats[this.viewSeat()] || {}).token);
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
    if (yes) await this.move(() => abandonCommand(this.viewSeat()));
  }

  // ---------------------------------------------------------------- the end of the game

  async finishGame(view) {
    this.stopWatch();
    const seat = this.viewSeat();
    const result = outcomeOf(view.final, seat, view.seats.length);
    const humans = view.seats.filter((x) => x.type === "human").length;
    let newBest = false;
    // the records count a player's own games against bots (a game among friends is nobody's record here)
    if (this.held().length && humans === 1 && view.final.status === "finished") {
      newBest = store.record(view.game_id, view.rules, { solo: result.outcome === "solo", won: result.outcome === "won",
        draw: result.outcome === "draw", score: result.score }).newBest;
    }
    // (a spectator, or friends passing one device: no "won" or "lost" of this browser's own to remember)
    const own = this.held().length === 1 ? { outcome: result.outcome, score: result.score }
      : { outcome: result.outcome === "abandoned" ? "abandoned" : "over" };
    if (this.session) store.update(view.game_id, { result: own });
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
    // several players on this device, or none: the winner by name rather than "You win" or "You lose"
    if (ctx.named && ["won", "lost"].includes(result.outcome)) result.outcome = "other";
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
        : abandon.seat === seat && !ctx.named ? "me" : "other";
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

  /** How to call seat `i` of a log: "You" for this browser's one seat of its own game, a bot by its name. */
  namesFor(log) {
    const seats = (log && log.header && log.header.seats) || [];
    const mine = log && log.header && this.session && log.header.game_id === this.session.game_id ? this.held() : [];
    return (i) => {
      const s = seats[i];
      if (mine.length === 1 && i === mine[0]) return this.t.t("seat.label", { who: "me" });
      if (s && s.type === "bot" && s.bot) return this.t.t("seat.label", { who: "bot", name: botName(this.t, s.bot.id) });
      return s ? s.name : `#${i}`;
    };
  }

  /** The receipts kept for this game, one per seat this browser played (the game being played, or one of the
   * recent games), in seat order. */
  receiptsFor(gameId) {
    const entry = this.session && this.session.game_id === gameId ? this.session : store.entry(gameId);
    const seats = seatsOf(entry);
    return heldSeats(seats).map((seat) => seats[seat].receipt).filter(Boolean);
  }

  /** The server's signed receipts of the moves of this game (SPEC §5.6), as kept from its answers. */
  moveReceiptsFor(gameId) {
    const entry = this.session && this.session.game_id === gameId ? this.session : store.entry(gameId);
    return (entry && entry.move_receipts) || [];
  }

  /** Every answer carries the server's signature over the history so far, checked by then (applyAnswer): kept,
   * so that a final log that departs from any answer the player saw fails (`receipt.chain`). */
  keepMoveReceipt(answer) {
    const s = this.session;
    if (!s || !answer || !answer.receipt || answer.receipt.game_id !== s.game_id) return;
    const kept = s.move_receipts || [];
    if (kept.length && kept[kept.length - 1].events >= answer.receipt.events) return; // (nothing new since)
    s.move_receipts = [...kept, answer.receipt];
    this.save();
  }

  /** The log held to every receipt this browser kept: once per seat it played (its seed receipt), with every
   * move receipt; a spectator's against the server's keys and the move receipts of what it watched. */
  async runVerification(gameId) {
    const t = this.t;
    $("#verify-report").replaceChildren(h("p.muted", t.t("verify.checking")));
    $("#verify-summary").textContent = t.t("verify.pending");
    $("#verify-seats").hidden = true;
    $("#fairness").dataset.verdict = "pending";
    try {
      const receipts = this.receiptsFor(gameId);
      const moveReceipts = this.moveReceiptsFor(gameId);
      const results = await checkSeats(await api.logText(gameId), { receipts, moveReceipts, trustedKeys: this.trustedKeys });
      if (results.some((r) => r.notLog)) throw new Error(t.t("verify.serverLogBroken"));
      const log = results[0].report.document;
      this.log = log;
      $("#download-btn").disabled = false;
      $("#receipt-btn").hidden = !receipts.length;
      $("#moves-btn").hidden = !moveReceipts.length;
      $("#verify-cmd").textContent = ["fairdice-verify", ...receipts.map((r) => `--receipt ${receiptName(log, receipts.length > 1 ? r.seat : null)}`),
        moveReceipts.length ? `--receipts ${movesName(log)}` : "", fileName(log)].filter(Boolean).join(" ");
      this.verified = { report: (results.find((r) => r.report.ok === false) || results[0]).report, log, results };
      this.showReport(this.verified);
    } catch (err) {
      $("#fairness").dataset.verdict = "fail";
      $("#verify-summary").textContent = t.t("verify.couldNot");
      $("#verify-report").replaceChildren(h("p.bad", problemText(t, err)));
    }
  }

  showReport({ report, log, results = [] }) {
    const names = this.namesFor(log);
    renderReport({ t: this.t, box: $("#verify-report"), summaryEl: $("#verify-summary"), host: $("#fairness"), report,
      names, rules: this.rules[log.header.rules] });
    // several seats of this device: each held the log to its own receipt
    const verdict = (ok) => (ok === true ? "pass" : ok === false ? "fail" : "partial");
    $("#verify-seats").replaceChildren(...results.filter((r) => r.seat !== null).map((r) => h("li", { class: verdict(r.report.ok) },
      this.t.t("verify.seat", { verdict: verdict(r.report.ok), name: names(r.seat) }))));
    $("#verify-seats").hidden = results.length < 2;
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
      // held to every receipt this browser kept for the game: its seats' seed receipts and the move receipts
      const text = typeof input === "string" ? input : decodeText(input);
      const gameId = text === null ? null : gameIdOf(text);
      const results = await checkSeats(input, { receipts: gameId === null ? [] : this.receiptsFor(gameId),
        moveReceipts: gameId === null ? [] : this.moveReceiptsFor(gameId), trustedKeys: this.trustedKeys });
      const { report, notLog } = results.find((r) => r.notLog || r.report.ok === false) || results[0];
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
      if (e.target.name === "opponent") this.renderSeatEditor(store.lobby().rows);
      if (["opponent", "rules", "first"].includes(e.target.name)) store.setLobby(lobbyChoices());
      this.syncLobby();
    });
    on("#client-seed", "input", () => {
      this.syncLobby();
      if (this.created && this.session) store.keep({ ...this.session, seed_draft: $("#client-seed").value });
    });
    on("#new-seed", "click", () => { $("#client-seed").value = randomSeed(); this.syncLobby(); });
    on("#start-btn", "click", () => this.startGame());
    on("#cancel-btn", "click", () => this.cancel());
    on("#speed", "change", (e) => store.setPrefs({ speed: e.target.value }));
    on("#player-name", "change", (e) => {
      store.setPrefs({ name: e.target.value.trim() });
      if (!$("#lobby").hidden && !this.created) this.renderSeatEditor(lobbyChoices().rows);
    });
    on("#roll-btn", "click", () => this.doRoll());
    on("#hint-btn", "click", () => this.doHint());
    on("#abandon-btn", "click", () => this.doAbandon());
    on("#new-game-btn", "click", () => this.showLobby());
    on("#download-btn", "click", () => this.log && this.download(this.log, fileName(this.log)));
    on("#receipt-btn", "click", () => {
      const receipts = this.log ? this.receiptsFor(this.log.header.game_id) : [];
      for (const r of receipts) this.download(r, receiptName(this.log, receipts.length > 1 ? r.seat : null));
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
      if (this.view && this.view.status === "playing" && this.held().length && !this.halted) return this.toast(this.t.t("toast.saved"), "info");
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
    window.addEventListener("hashchange", async () => { // an invite or spectator link opened in this very tab
      const link = parseLink(location.hash);
      if (!link) return;
      window.history.replaceState(null, "", location.pathname + location.search);
      this.stopWatch();
      await this.openLink(link);
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

/** The receipt's file: receipt-<game>.json, or with several seats on this device receipt-<game>-seat<n>.json. */
export const receiptName = (log, seat = null) =>
  fileName(log).replace(/^game-/, "receipt-").replace(/\.json$/, seat === null ? ".json" : `-seat${seat}.json`);
export const movesName = (log) => fileName(log).replace(/^game-/, "moves-");
