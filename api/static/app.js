// fairdice game page: the screens tied together (main.js starts it). One controller per screen, over the state
// they share (state.js pageState), so that a screen's change touches its own file:
//   lobby-screen.js   the lobby: a new game, its commitment, the seed sent; unfinished games to resume or abandon
//   game-screen.js    the table: rolls, holds, boxes, the others' moves played out, hints
//   end-screen.js     the result and the verification in this browser, the downloads
//   dialogs-screen.js the rules, how it works, "Verify a log"
//   session.js        the game this browser plays or watches: opening it, sending its commands, its receipts
// and the drawing and data modules they use:
//   api.js       HTTP (problems with stable codes, Retry-After)      store.js   what this browser keeps
//   i18n.js      the catalogues (i18n/en.js, i18n/zh.js)             rules.js   the rule sets as data
//   state.js     the board's view, pure; the shared state             board.js   drawing the game screen
//   lobby.js     drawing the lobby                                   report.js  drawing a verification
//   verification.js  receipts and checking logs (verify.js)          dialogs.js rules, how it works, yes/no
//   problems.js  the server's refusals in words
//   player.js    this browser's seats: keys, seeds, signed commands   history.js the history shown, hashed here
//   signing.js   Ed25519 keys and what a player signs (SPEC §5.7)     watch.js   hearing of other players' moves
//   friends.js   seats of friends, invite and spectator links
// What the first screen (the lobby) does not need is loaded when it is first needed, by dynamic import(): the end
// screen with the whole verification (when a game is over), the guide (its button), a log's verification (the
// "Verify a log" dialog). A slow module delays only what needs it; a failed load is tried again next time.
// Importing this module does nothing; `new App().boot()` starts the page.

import { api } from "./api.js";
import { store } from "./store.js";
import { chooseLanguage, translator } from "./i18n.js";
import { $, $$, applyTexts, on } from "./dom.js";
import { mergeRules } from "./rules.js";
import { pageState } from "./state.js";
import { problemText } from "./problems.js";
import { renderHow, renderRules } from "./dialogs.js";
import { parseLink } from "./friends.js";
import { LobbyScreen } from "./lobby-screen.js";
import { GameScreen } from "./game-screen.js";
import { DialogsScreen } from "./dialogs-screen.js";
import { Session } from "./session.js";

const SPEEDS = { normal: { step: 650, tumble: 420 }, quick: { step: 140, tumble: 90 }, off: { step: 0, tumble: 0 } };

export { problemText };
export { randomSeed } from "./lobby-screen.js";
export { describeHint } from "./game-screen.js";

export class App {
  constructor() {
    this.st = pageState(translator("en"), mergeRules(null));
    this.session = new Session(this);
    this.lobby = new LobbyScreen(this);
    this.game = new GameScreen(this);
    this.end = null; // (end-screen.js, loaded when a game is first over: endScreen())
    this.dialogs = new DialogsScreen(this);
  }

  /** The translator of the language spoken now. */
  get t() {
    return this.st.t;
  }

  // ---------------------------------------------------------------- start

  async boot() {
    this.setLanguage(chooseLanguage(navigator.languages, store.prefs().lang), false);
    this.wire();
    const [rules, bots, keys] = await Promise.allSettled([api.rules(), api.bots(), api.keys()]);
    if (rules.status === "fulfilled") this.st.rules = mergeRules(rules.value);
    if (bots.status === "fulfilled") this.st.bots = bots.value.bots || [];
    if (keys.status === "fulfilled") this.st.trustedKeys = (keys.value.keys || []).map((k) => k.public_key);
    if (rules.status === "rejected") this.toast(this.st.t.t("toast.offline"));
    const link = parseLink(location.hash);
    if (link) {
      window.history.replaceState(null, "", location.pathname + location.search); // a seat's token leaves the address bar
      await this.session.openLink(link);
      if (document.body.dataset.screen !== "loading") return;
    }
    const current = store.current();
    if (current) {
      await this.session.openGame(current);
      if (document.body.dataset.screen !== "loading") return;
    }
    this.lobby.showLobby();
  }

  /** The end screen's controller (end-screen.js and the verification it runs), loaded and wired on first need. */
  endScreen() {
    if (!this.endLoading) {
      this.endLoading = import("./end-screen.js").then(({ EndScreen }) => {
        this.end = new EndScreen(this);
        this.end.wire();
        return this.end;
      }, (err) => {
        this.endLoading = null;
        throw err;
      });
    }
    return this.endLoading;
  }

  /** Speak `lang` from now on: the static texts, the screen shown, open dialogs; `save`: remember it. */
  setLanguage(lang, save = true) {
    const t = (this.st.t = translator(lang));
    if (save) store.setPrefs({ lang: t.lang });
    this.speakStatic(t);
    this.speakShown(t);
  }

  /** The texts of the page itself: its language, title, description, labels and the language switch. */
  speakStatic(t) {
    document.documentElement.lang = t.tag;
    document.title = t.t("app.title");
    $("meta[name=description]").setAttribute("content", t.t("app.description"));
    applyTexts(document, t.t);
    const other = $("#nav-lang");
    other.textContent = t.t("nav.otherLanguage");
    other.lang = t.t("nav.otherLanguageTag");
    other.title = t.t("nav.otherLanguageTitle");
    $("#player-name").placeholder = t.t("prefs.namePlaceholder");
  }

  /** What is on screen now, drawn again in `t`'s words: the screen, its result and report, open dialogs. */
  speakShown(t) {
    if (document.body.dataset.screen === "lobby") this.lobby.renderLobby(true);
    if (this.st.ui.hint && this.st.ui.hint.preparing) this.st.ui.hint = { preparing: true, text: t.t("hint.preparing") };
    if (this.st.view && document.body.dataset.screen === "game") this.game.render();
    if (this.st.halted) this.game.showHalt();
    if (this.end && this.st.view && this.st.view.final) this.end.renderResult(this.st.view);
    if (this.end && this.st.verified) this.end.showReport(this.st.verified);
    if (this.st.waiting) this.lobby.showPreparing();
    if ($("#rules-dialog").open) renderRules(t, this.st.rules, $("#rules-body").dataset.rules);
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
    this.toast(problemText(this.st.t, err));
  }

  speed() {
    const fromUrl = new URLSearchParams(location.search).get("speed");
    return SPEEDS[fromUrl] || SPEEDS[store.prefs().speed] || SPEEDS.normal;
  }

  setBusy(b) {
    this.st.ui.busy = b;
    document.body.classList.toggle("busy", b);
    if (this.st.view && !$("#game").hidden) this.game.renderPlayControls();
    if (!$("#lobby").hidden) this.lobby.syncLobby();
    if (!b && this.st.leaving) {
      this.st.leaving = false;
      return this.lobby.showLobby();
    }
    if (!b) this.game.settleFocus();
  }

  /** What belongs to no one screen: the language switch, the logo, the browser's own events (other tabs, the tab
   * shown again, an invite link opened here, a dialog's backdrop); each screen wires its own controls. */
  wire() {
    for (const screen of [this.lobby, this.game, this.dialogs]) screen.wire();
    on("#nav-lang", "click", () => this.setLanguage(this.st.t.lang === "zh" ? "en" : "zh"));
    on("#nav-home", "click", (e) => { // the lobby, mid-game too: the game stays kept, to resume from the lobby's list
      e.preventDefault();
      if (this.st.ui.busy) this.st.leaving = true; // (once the move under way is answered and played out)
      else this.lobby.showLobby();
    });
    for (const d of $$("dialog")) d.addEventListener("click", (e) => { if (e.target === d) d.close(); }); // the backdrop
    store.onMoved((id, n) => this.game.onElsewhere(id, n));
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && this.st.session) this.game.onElsewhere(this.st.session.game_id);
    });
    window.addEventListener("hashchange", async () => { // an invite or spectator link opened in this very tab
      const link = parseLink(location.hash);
      if (!link) return;
      window.history.replaceState(null, "", location.pathname + location.search);
      this.game.stopWatch();
      await this.session.openLink(link);
    });
  }
}
