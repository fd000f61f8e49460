// The game this browser plays or watches, whichever screen shows it: opening it (from the kept entry, an invite or
// a spectator link), its signed header checked and its history taken in (history.js), its seats' commands sent
// (player.js), its receipts kept. The screens' controllers call it; it decides which screen a game opens on.

import { api, ApiProblem } from "./api.js";
import { seatsOf, store } from "./store.js";
import { $ } from "./dom.js";
import { isOver, Screen, viewOf } from "./state.js";
import { botName } from "./board.js";
import { checkedHeader } from "./verification.js";
import { parseStrictJSON } from "./verify/strictjson.js";
import { AnswerRefused, ShownHistory } from "./history.js";
import { abandonCommand, heldSeats, seedCommand, seedStep, sendCommand } from "./player.js";
import { renderTable } from "./friends.js";

export class Session extends Screen {
  /** Keep the game as it stands (its seats' keys and receipts included), to come back to it. */
  save() {
    if (this.st.session) store.keep(this.st.session);
  }

  /** The seats of this game that this browser plays, in seat order (none for a spectator). */
  held() {
    return this.st.session ? heldSeats(this.st.session.seats || {}) : [];
  }

  /** The names of the seats this browser does not play, as the recent games list shows them. */
  otherNames(seats, here) {
    return seats.map((s, i) => (here.includes(i) ? null : s.type === "bot" ? this.t.t("seat.label", { who: "bot", name: botName(this.t, s.bot.id || s.bot) }) : s.name))
      .filter(Boolean);
  }

  /** The signed header of the game ({header, commitment_signature}): from the creation answer, a receipt this
   * browser kept, or the log so far; checked by the caller (checkedHeader). */
  async signedHeader() {
    if (this.st.created && this.st.created.header && this.st.created.game_id === this.st.session.game_id) return this.st.created;
    const kept = Object.values(this.st.session.seats || {}).find((k) => k.receipt && k.receipt.header);
    if (kept) return kept.receipt;
    return parseStrictJSON(await api.logText(this.st.session.game_id));
  }

  /**
   * The game as it stands: its header checked against the server's keys, the history so far taken in by this
   * page's own hash chain and held to the server's receipt of it (this.st.header, this.st.shown, this.st.view). Nothing
   * is drawn. Resolves to the server's state.
   */
  async loadGame() {
    const s = this.st.session;
    const st = await api.state(s.game_id);
    s.rules = s.rules || st.rules;
    s.version = s.version || st.version;
    s.commitment = s.commitment || st.commitment;
    this.st.header = await checkedHeader({ signed: await this.signedHeader(), gameId: s.game_id, commitment: s.commitment,
      trustedKeys: this.st.trustedKeys });
    if (!s.names) s.names = this.otherNames(this.st.header.seats, this.held());
    this.st.shown = await ShownHistory.start(this.st.header);
    await this.st.shown.accept(st);
    this.st.view = { ...viewOf(st), events: [...this.st.shown.events] };
    return st;
  }

  /** Send a command of `seat` (player.js): signed over the history shown, signed again if that moved on. */
  send(seat, command) {
    return sendCommand({ history: this.st.shown, seats: this.st.session.seats, seat, command, catchUp: () => this.app.game.catchUp() });
  }

  /** Open a game this browser plays (or watches): resume it where it stands, or go back to the step before its
   * seeds went out. `entry`: as kept in store.js. */
  async openGame(entry) {
    this.app.setBusy(true);
    try {
      this.st.session = { ...entry, seats: seatsOf(entry) };
      delete this.st.session.token; // (an older page's single seat: now in `seats`)
      delete this.st.session.receipt;
      const st = await this.loadGame();
      if (this.seatTaken()) return this.openGame({ ...this.st.session, seats: {}, spectator: true, seat: null });
      // before play, back to the seed step while a seat of this browser has nothing out yet (or no seed chosen)
      const s = this.st.session;
      const sent = this.held().some((seat) => this.st.shown.events.some((e) => e.seat === seat));
      const unprepared = this.held().some((seat) => !s.seats[seat].receipt);
      if (st.status === "awaiting_client_seed" && !s.spectator && (!sent || unprepared)) return this.app.lobby.resumeCommitted(s, st);
      this.save(); // until "New game": a reload shows this game again
      this.app.game.enterGame(this.st.view);
      if (st.final) await (await this.app.endScreen()).finishGame(this.st.view);
      else {
        await this.advanceSeeds();
        this.app.game.syncWatch();
      }
    } catch (err) {
      if (err instanceof ApiProblem && err.status === 404) {
        this.app.toast(this.t.t("toast.gone"));
        store.update(entry.game_id, { result: { outcome: "gone" } });
        if (store.current()?.game_id === entry.game_id) store.clearCurrent();
        this.app.lobby.showLobby();
      } else if (err instanceof AnswerRefused) {
        this.app.game.halt(err);
      } else {
        this.app.toastProblem(err);
        if (!this.st.view) this.app.lobby.showLobby();
      }
    } finally {
      this.app.setBusy(false);
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

  /** A seat of this browser (opened from its link) whose key the server already has from another device: this
   * browser cannot sign for it, so it watches. */
  seatTaken() {
    const s = this.st.session;
    const taken = this.held().filter((seat) => !s.seats[seat].key && this.st.view.seats[seat] && this.st.view.seats[seat].player_key);
    if (!taken.length) return false;
    this.app.toast(this.t.t("join.taken"), "info");
    return true;
  }

  /**
   * Send what this browser's seats owe before play, as far as the game allows now: a seed, or in a game of
   * several humans a commitment, then (once every human has committed) the reveal. The first answer takes the
   * player from the lobby to the table, where the others are waited for.
   */
  async advanceSeeds() {
    const s = this.st.session;
    for (let sends = 0; sends < 2 * this.held().length; sends++) { // (a commitment and a reveal per seat at most)
      const seat = this.held().find((x) => s.seats[x].receipt && seedStep(this.st.shown.events, this.st.header, s.version, x));
      if (seat === undefined || this.st.halted) return;
      const step = seedStep(this.st.shown.events, this.st.header, s.version, seat);
      const answer = await this.send(seat, seedCommand(step, seat, s.seats[seat]));
      if ($("#game").hidden) {
        this.app.lobby.resetLobby();
        this.app.game.enterGame(this.st.view);
      }
      await this.app.game.applyAnswer(answer);
    }
  }

  /** Every answer carries the server's signature over the history so far, checked by then (applyAnswer): kept,
   * so that a final log that departs from any answer the player saw fails (`receipt.chain`). */
  keepMoveReceipt(answer) {
    const s = this.st.session;
    if (!s || !answer || !answer.receipt || answer.receipt.game_id !== s.game_id) return;
    const kept = s.move_receipts || [];
    if (kept.length && kept[kept.length - 1].events >= answer.receipt.events) return; // (nothing new since)
    s.move_receipts = [...kept, answer.receipt];
    this.save();
  }

  /** The receipts kept for this game, one per seat this browser played (the game being played, or one of the
   * recent games), in seat order. */
  receiptsFor(gameId) {
    const entry = this.st.session && this.st.session.game_id === gameId ? this.st.session : store.entry(gameId);
    const seats = seatsOf(entry);
    return heldSeats(seats).map((seat) => seats[seat].receipt).filter(Boolean);
  }

  /** The server's signed receipts of the moves of this game (SPEC §5.6), as kept from its answers. */
  moveReceiptsFor(gameId) {
    const entry = this.st.session && this.st.session.game_id === gameId ? this.st.session : store.entry(gameId);
    return (entry && entry.move_receipts) || [];
  }

  /** The seats of the game, who has joined, and the links to share (friends.js); in the lobby or at the table. */
  renderTable(box) {
    const s = this.st.session;
    const events = this.st.shown ? this.st.shown.events : [];
    renderTable({ t: this.t, box, gameId: s.game_id, header: this.st.header, here: this.held(), invites: s.invites,
      joined: (seat) => events.some((e) => e.seat === seat && (e.type === "client_seed_commit" || e.type === "client_seed")),
      onCopy: (url, name) => this.copyLink(url, name) });
  }

  async copyLink(url, name) {
    try {
      await navigator.clipboard.writeText(url);
      this.app.toast(name ? this.t.t("table.copied", { name }) : this.t.t("table.copiedWatch"), "info");
    } catch {
      this.app.toast(this.t.t("table.copyFailed"), "info");
    }
  }

  /**
   * Abandon a game this browser keeps, from the lobby's list, without showing it: loaded as any game is (its
   * header checked, its history taken in), the abandon signed by its seat as at the table, the answer held to
   * that history; the screens' state is as it was before. Resolves to what became of it: "abandoned", or "over"
   * when it had ended already (finished, or abandoned elsewhere).
   */
  async abandonKept(entry) {
    const before = { session: this.st.session, header: this.st.header, shown: this.st.shown, view: this.st.view,
      halted: this.st.halted };
    try {
      this.st.session = { ...entry, seats: seatsOf(entry) };
      this.st.halted = null;
      await this.loadGame();
      const s = this.st.session;
      if (this.st.view.final || isOver(this.st.view)) {
        store.update(s.game_id, { result: { outcome: "over" } });
        return "over";
      }
      const seat = this.held()[0];
      const catchUp = async () => { await this.st.shown.accept(await api.state(s.game_id, this.st.shown.count)); };
      const answer = await sendCommand({ history: this.st.shown, seats: s.seats, seat, command: abandonCommand(seat), catchUp });
      await this.st.shown.accept(answer);
      const receipts = answer.receipt && answer.receipt.game_id === s.game_id ? [...(s.move_receipts || []), answer.receipt] : s.move_receipts;
      store.update(s.game_id, { ...s, move_receipts: receipts, result: { outcome: "abandoned" } });
      return "abandoned";
    } finally {
      Object.assign(this.st, before);
    }
  }
}
