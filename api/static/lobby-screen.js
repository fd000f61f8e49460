// The lobby's controller: the choices of a new game, creating it (its commitment shown before anything of the
// player's goes out), the client seed sent with "Start", the optimal engine's warm-up, and a game created but
// not started taken back to that step. Drawing the lobby is lobby.js's; the state it shares is state.js's.

import { api, ApiProblem } from "./api.js";
import { store } from "./store.js";
import { $, $$, on } from "./dom.js";
import { DEFAULT_ENGINE_WAIT, Screen } from "./state.js";
import { lobbyChoices, renderChoices, renderRecords, renderUnfinished, unfinishedGames } from "./lobby.js";
import { askConfirm } from "./dialogs.js";
import { clientSeedValid, seatNameValid } from "./verify/seedrule.js";
import { AnswerRefused } from "./history.js";
import { abandonCommand, prepareSeat } from "./player.js";
import { defaultRows, renderInvitation, renderSeatEditor, seatsToCreate } from "./friends.js";

/** A fresh client seed: 16 bytes of the Web Crypto API, in hex. */
export function randomSeed() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export class LobbyScreen extends Screen {
  showLobby() {
    this.app.game.stopHintWait();
    this.app.game.stopWatch();
    store.clearCurrent();
    this.st.session = null;
    this.st.view = null;
    this.st.verified = null;
    this.st.created = null;
    this.st.header = null;
    this.st.shown = null;
    this.st.halted = null;
    $("#halted").hidden = true;
    this.app.show("lobby");
    this.renderLobby();
    this.resetLobby();
  }

  /** `keep`: keep the choices on the form (a language change), else those saved. */
  renderLobby(keep = false) {
    const saved = keep && $("input[name=rules]:checked") ? lobbyChoices() : store.lobby();
    renderChoices({ t: this.t, rules: this.st.rules, bots: this.st.bots, saved,
      onRules: () => this.app.dialogs.openRules($("input[name=rules]:checked")?.value) });
    $("#player-name").value = store.prefs().name || "";
    $("#speed").value = store.prefs().speed || "normal";
    if (!$("#client-seed").value) $("#client-seed").value = randomSeed();
    this.renderSeatEditor(keep ? lobbyChoices().rows : saved.rows);
    this.renderGameBeingSetUp();
    this.syncLobby();
    this.renderRecords();
    this.renderUnfinished();
    // on a phone the seed and the house rule wait under "Advanced", so that Create is on the first screen
    if (!keep) $("#advanced").open = matchMedia("(min-width: 901px)").matches;
  }

  /** The game being set up, where its card is shown: the table of seats, or the invitation a guest opened. */
  renderGameBeingSetUp() {
    if (!this.st.session || !this.st.header) return;
    if (!$("#lobby-table").hidden) this.app.session.renderTable($("#lobby-table"));
    if (this.st.session.guest && !$("#join-card").hidden) this.renderInvitation();
  }

  /** This browser's unfinished games, to resume or abandon (`quota`: a new game was refused for them). */
  renderUnfinished(quota = false) {
    renderUnfinished({ t: this.t, rules: this.st.rules, games: unfinishedGames(store.recent()), quota,
      onResume: (g) => this.app.session.openGame(g), onAbandon: (g) => this.abandonKept(g) });
  }

  /** Abandon one of the unfinished games from the list, once the player confirms: its seat signs the abandon as
   * it would at the table (session.js), the server reveals its seed, and the game moves to the recent games. */
  async abandonKept(entry) {
    const t = this.t;
    if (this.st.ui.busy) return;
    if (!(await askConfirm(t.t("confirm.abandonTitle"), t.t("confirm.abandonText"), t.t("confirm.abandonOk")))) return;
    this.app.setBusy(true);
    try {
      const outcome = await this.app.session.abandonKept(entry);
      this.app.toast(t.t(outcome === "over" ? "unfinished.over" : "unfinished.abandoned"), "info");
    } catch (err) {
      if (err instanceof ApiProblem && err.status === 404) store.update(entry.game_id, { result: { outcome: "gone" } });
      this.app.toastProblem(err);
    } finally {
      this.app.setBusy(false);
      this.renderRecords();
      this.renderUnfinished();
    }
  }

  /** The seats after the player's own, for "a friend" and "friends and bots" (`rows`: kept ones, else a start). */
  renderSeatEditor(rows) {
    const mode = $("input[name=opponent]:checked")?.value;
    $("#friends-field").hidden = !["friend", "friends"].includes(mode);
    if ($("#friends-field").hidden) return;
    const bots = this.st.bots ? this.st.bots.map((b) => b.id) : ["greedy", "ev"];
    const fits = rows && rows.length && (mode === "friends" || (rows.length === 1 && !rows[0].kind.startsWith("bot:")));
    renderSeatEditor({ t: this.t, mode, bots, me: this.playerName(), rows: fits ? rows : defaultRows(mode, bots),
      onChange: (next) => { this.renderSeatEditor(next); store.setLobby(lobbyChoices()); } });
  }

  renderRecords() {
    renderRecords({ t: this.t, rules: this.st.rules, records: store.records(), recent: store.recent(),
      onOpen: (g) => this.app.session.openGame(g) });
  }

  syncLobby() {
    const mode = $("input[name=opponent]:checked")?.value;
    const solo = mode === "solo";
    $("#first-field").disabled = solo || !!this.st.created;
    $("#first-field").classList.toggle("muted", solo);
    // who else may go first: the bot, the friend; among several seats, the player or a roll-off
    $("#first-other").hidden = mode === "friends";
    $("#first-other-text").textContent = this.t.t(mode === "friend" ? "lobby.first.friend" : "lobby.first.bot");
    const ok = clientSeedValid($("#client-seed").value);
    $("#seed-error").hidden = ok;
    $("#client-seed").setAttribute("aria-invalid", ok ? "false" : "true");
    $("#start-btn").disabled = !ok || this.st.ui.busy;
    $("#create-btn").disabled = this.st.ui.busy || !!this.st.waiting;
    // the optimal bot does not play the upper-first house rule (SPEC §4.5): not offered with it
    const optimal = mode === "optimal";
    $("#upper-first").disabled = optimal || !!this.st.created;
    if (optimal) $("#upper-first").checked = false;
    $("#upper-first-help").textContent = this.t.t(optimal ? "lobby.upperFirst.optimal" : "lobby.upperFirst.text");
    for (const el of $$("#unfinished button")) el.disabled = this.st.ui.busy;
  }

  playerName() {
    return ($("#player-name").value || "").trim().slice(0, 40) || this.t.t("player.defaultName");
  }

  async createGame(ev) {
    if (ev) ev.preventDefault();
    if (this.st.ui.busy) return;
    const c = lobbyChoices();
    const name = this.playerName();
    if (!seatNameValid(name)) return this.app.toast(this.t.t("problem.invalid_seats"));
    store.setPrefs({ name: ($("#player-name").value || "").trim() });
    store.setLobby(c);
    const plan = this.seatsFor(c, name);
    if (!plan.seats.every((seat) => seat.type !== "human" || seatNameValid(seat.name))) return this.app.toast(this.t.t("problem.invalid_seats"));
    const first = c.opponent === "solo" ? 0 : c.first === "me" ? 0 : c.first === "bot" && c.opponent !== "friends" ? 1 : "random";
    this.app.setBusy(true);
    try {
      this.onCreated(await api.create({ rules: c.rules, seats: plan.seats, first, upper_first: c.upper_first }), c, plan);
    } catch (err) {
      if (err instanceof ApiProblem && err.code === "engine_warming_up") this.waitForEngine(err.retryAfter);
      else if (err instanceof ApiProblem && err.code === "too_many_unfinished_games") this.showQuota(err);
      else this.app.toastProblem(err);
    } finally {
      this.app.setBusy(false);
    }
  }

  /** The server keeps no more unfinished games for this player: the list of them, said why, to resume or abandon. */
  showQuota(err) {
    this.app.toastProblem(err);
    this.renderUnfinished(true);
    if ($("#unfinished").hidden) return; // (none of them kept here: the server's words are all there is)
    $("#unfinished").scrollIntoView({ block: "nearest" });
    const first = $("#unfinished [data-testid=resume-game]");
    if (first) first.focus({ preventScroll: true });
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
    this.st.waiting = { until: Date.now() + seconds * 1000 };
    this.st.waiting.timer = setInterval(() => this.tickWaiting(), 1000);
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = true;
    $("#cancel-btn").hidden = false;
    this.showPreparing();
    this.syncLobby();
  }

  tickWaiting() {
    if (!this.st.waiting) return;
    if (Date.now() < this.st.waiting.until) return this.showPreparing();
    this.stopWaiting(false);
    this.createGame();
  }

  showPreparing() {
    const left = Math.max(0, Math.ceil((this.st.waiting.until - Date.now()) / 1000));
    $("#preparing").hidden = false;
    $("#preparing-title").textContent = this.t.t("preparing.title");
    $("#preparing-text").textContent = this.t.t("preparing.text", { seconds: left });
  }

  /** `reset`: give the form back (the player cancelled), else keep it as it is (a retry follows). */
  stopWaiting(reset = true) {
    if (this.st.waiting) clearInterval(this.st.waiting.timer);
    const was = !!this.st.waiting;
    this.st.waiting = null;
    $("#preparing").hidden = true;
    if (was && reset) this.resetLobby();
  }

  onCreated(created, choices, plan) {
    this.stopWaiting(false);
    const tokens = new Map(created.tokens.map((x) => [x.seat, x.token]));
    this.st.created = created;
    this.st.header = created.header;
    this.st.session = { game_id: created.game_id, seat: 0, rules: choices.rules, opponent: choices.opponent,
      names: this.app.session.otherNames(plan.seats, plan.here), created: Date.now(), commitment: created.commitment,
      version: created.version, seats: Object.fromEntries(plan.here.map((seat) => [seat, { token: tokens.get(seat) }])),
      invites: plan.invites.map((seat) => ({ seat, token: tokens.get(seat) })), seed_draft: $("#client-seed").value };
    this.app.session.save();
    this.showCommitment(created);
    if (plan.invites.length || plan.here.length > 1) this.app.session.renderTable($("#lobby-table"));
  }

  showCommitment(created) {
    $("#lobby-form").classList.add("committed");
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = true;
    $("#commit-card").hidden = false;
    $("#commitment").textContent = created.commitment;
    $("#commit-key").textContent = created.key_id;
    $("#create-btn").hidden = true;
    $("#start-btn").hidden = false;
    this.labelStart(this.st.session && this.st.session.guest ? "join.start" : "lobby.start");
    $("#cancel-btn").hidden = false;
    const rules = $("input[name=rules]:checked + .choice-body .choice-title");
    const opponent = $("input[name=opponent]:checked + .choice-body .choice-title");
    $("#committed-what").textContent = rules && opponent
      ? this.t.t("lobby.committedWhat", { rules: rules.firstChild.textContent, opponent: opponent.firstChild.textContent }) : "";
    $("#committed-what").hidden = !rules || !opponent || !!(this.st.session && this.st.session.guest);
    this.syncLobby();
    // the commitment and Start on one screen: the choices fold away on a phone, the page starts at its top
    window.scrollTo(0, 0);
    if ($("#advanced").open) $("#client-seed").focus({ preventScroll: true });
    else $("#start-btn").focus({ preventScroll: true });
  }

  resetLobby() {
    this.st.created = null;
    $("#lobby-form").classList.remove("committed");
    $("#lobby-form").classList.remove("joining");
    for (const el of $$("#lobby-form fieldset.setup")) el.disabled = false;
    $("#commit-card").hidden = true;
    $("#committed-what").hidden = true;
    $("#lobby-table").hidden = true;
    $("#lobby-table").replaceChildren();
    $("#join-card").hidden = true;
    $("#preparing").hidden = !this.st.waiting;
    $("#create-btn").hidden = false;
    $("#start-btn").hidden = true;
    this.labelStart("lobby.start");
    $("#cancel-btn").hidden = !this.st.waiting;
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

  /**
   * "Start" (or "Join"): every seat this browser plays gets its key, its seed (the one on the form for the first
   * seat; a seat of a friend passing this device a random one of its own) and its receipt, all kept before
   * anything goes out; then each sends its seed, or its commitment in a game of several humans. Once a seat's
   * seed is prepared, only that very seed is ever sent again: a server that refuses seeds until one suits it
   * gets the same one each time (SPEC §4.3).
   */
  async startGame() {
    const s = this.st.session;
    const held = this.app.session.held();
    if (!s || !held.length || this.st.ui.busy) return;
    const first = s.seats[held[0]];
    const draft = first.receipt ? first.receipt.client_seed : $("#client-seed").value;
    if (!clientSeedValid(draft)) return;
    this.app.setBusy(true);
    try {
      const signed = await this.app.session.signedHeader();
      for (const seat of held) {
        const seed = seat === held[0] ? draft : randomSeed();
        s.seats[seat] = await prepareSeat(s.seats[seat], { signed, gameId: s.game_id, seat, commitment: s.commitment,
          trustedKeys: this.st.trustedKeys, seed, version: s.version, header: signed.header });
      }
      this.app.session.save(); // kept before anything goes out: a reload resends these very seeds, with these keys
      $("#client-seed").readOnly = true;
      $("#new-seed").disabled = true;
      if (!this.st.shown) await this.app.session.loadGame();
      await this.app.session.advanceSeeds();
      this.app.game.syncWatch();
    } catch (err) {
      if (err instanceof AnswerRefused) this.app.game.halt(err);
      else this.app.toastProblem(err);
    } finally {
      this.app.setBusy(false);
    }
  }

  async cancel() {
    if (this.st.waiting) return this.stopWaiting();
    if (!this.st.session) return this.resetLobby();
    if (this.st.session.guest) return this.leaveInvitation();
    const seat = this.app.session.held()[0];
    try {
      if (seat !== undefined && this.st.shown) await this.app.session.send(seat, abandonCommand(seat));
      else if (seat !== undefined) await api.abandon(this.st.session.game_id, this.st.session.seats[seat].token);
    } catch {
      // nothing was played; forgetting it here is enough
    }
    store.update(this.st.session.game_id, { result: { outcome: "cancelled" } });
    store.clearCurrent();
    this.st.session = null;
    this.st.shown = null;
    this.st.header = null;
    this.resetLobby();
    this.renderRecords();
  }

  /** A game created (or an invitation opened) but whose seeds were not sent yet: back to that step of the lobby. */
  resumeCommitted(entry, st) {
    this.app.session.save();
    this.app.show("lobby");
    this.renderLobby();
    const pick = (name, value) => { const el = $(`input[name=${name}][value="${value}"]`); if (el) el.checked = true; };
    pick("rules", entry.rules);
    pick("opponent", entry.guest ? "friend" : entry.opponent);
    this.st.created = { commitment: st.commitment, key_id: st.key_id };
    $("#upper-first").checked = !!st.upper_first;
    if (entry.seed_draft) $("#client-seed").value = entry.seed_draft;
    const first = entry.seats[this.app.session.held()[0]];
    if (first && first.receipt) { // sent before, refused or unanswered: it is resent unchanged, not edited
      $("#client-seed").value = first.receipt.client_seed;
      $("#client-seed").readOnly = true;
      $("#new-seed").disabled = true;
    }
    this.showCommitment(this.st.created);
    if (entry.guest) {
      $("#lobby-form").classList.add("joining");
      this.renderInvitation();
    }
    if ((entry.invites || []).length || this.app.session.held().length > 1) this.app.session.renderTable($("#lobby-table"));
  }

  /** A friend who opened an invite link and does not join: the game is left as it is (an abandon would end it
   * for everyone), and forgotten here. */
  leaveInvitation() {
    store.update(this.st.session.game_id, { result: { outcome: "cancelled" } });
    this.showLobby();
  }

  /** What a friend who opened an invite link sees: the game, its seats and their own (friends.js). */
  renderInvitation() {
    renderInvitation({ t: this.t, box: $("#join-card"), rules: this.st.rules, header: this.st.header, seat: this.app.session.held()[0],
      onRules: () => this.app.dialogs.openRules(this.st.header.rules) });
  }

  /** The lobby's controls. */
  wire() {
    on("#lobby-form", "submit", (e) => this.createGame(e));
    on("#lobby-form", "change", (e) => {
      if (e.target.name === "opponent") this.renderSeatEditor(store.lobby().rows);
      if (["opponent", "rules", "first"].includes(e.target.name)) store.setLobby(lobbyChoices());
      this.syncLobby();
    });
    on("#client-seed", "input", () => {
      this.syncLobby();
      if (this.st.created && this.st.session) store.keep({ ...this.st.session, seed_draft: $("#client-seed").value });
    });
    on("#new-seed", "click", () => { $("#client-seed").value = randomSeed(); this.syncLobby(); });
    on("#start-btn", "click", () => this.startGame());
    on("#cancel-btn", "click", () => this.cancel());
    on("#speed", "change", (e) => store.setPrefs({ speed: e.target.value }));
    on("#player-name", "change", (e) => {
      store.setPrefs({ name: e.target.value.trim() });
      if (!$("#lobby").hidden && !this.st.created) this.renderSeatEditor(lobbyChoices().rows);
    });
  }
}
