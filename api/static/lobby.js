// The lobby drawn in the player's language: rule sets and opponents to choose from, the records and recent
// games this browser keeps, its unfinished games. Reading the form and wiring its buttons is lobby-screen.js's.

import { $, $$, h } from "./dom.js";
import { KNOWN_BOTS, rulesName } from "./rules.js";
import { resultOf, seatsOf } from "./store.js";
import { botName } from "./board.js";
import { readSeatRows } from "./friends.js";
import { heldSeats } from "./player.js";

function choice({ name, value, title, badge, text, checked, disabled = false, testid }) {
  return h("label.choice", { class: disabled ? "disabled" : "" },
    h("input", { type: "radio", name, value, checked: checked && !disabled, disabled, "data-testid": testid }),
    h("span.choice-body", h("span.choice-title", title, badge ? h("span.badge", badge) : null),
      text ? h("span.choice-text", text) : null));
}

/** The rule set and opponent choices, `saved` ({rules, opponent, first}) checked. */
export function renderChoices({ t, rules, bots, saved, onRules }) {
  $("#rules-choices").replaceChildren(...Object.values(rules).map((r) => choice({
    name: "rules", value: r.id, testid: `rules-${r.id}`, checked: saved.rules === r.id, title: rulesName(t, r, r.id),
    badge: t.t("lobby.boxes", { count: r.categories.length }), text: t.has(`rules.${r.id}.blurb`) ? t.t(`rules.${r.id}.blurb`) : "",
  })), h("button.link", { type: "button", onclick: onRules }, t.t("lobby.readRules")));

  const available = bots ? bots.map((b) => b.id) : ["greedy", "ev"];
  const ids = [...new Set([...KNOWN_BOTS, ...available])];
  $("#opponent-choices").replaceChildren(
    ...ids.map((id) => {
      const server = bots && bots.find((b) => b.id === id);
      const missing = !available.includes(id);
      const level = server && server.level;
      return choice({
        name: "opponent", value: id, testid: `bot-${id}`, checked: saved.opponent === id, disabled: missing,
        title: botName(t, id),
        badge: missing ? t.t("lobby.bot.missingBadge") : level && t.has(`level.${level}`) ? t.t(`level.${level}`) : level,
        text: missing ? t.t("lobby.bot.missing") : t.has(`bot.${id}.text`) ? t.t(`bot.${id}.text`) : t.t("bot.other.text"),
      });
    }),
    choice({ name: "opponent", value: "solo", testid: "bot-solo", checked: saved.opponent === "solo", title: t.t("lobby.solo"),
      badge: t.t("lobby.solo.badge"), text: t.t("lobby.solo.text") }),
    ...["friend", "friends"].map((mode) => choice({ name: "opponent", value: mode, testid: `opponent-${mode}`,
      checked: saved.opponent === mode, title: t.t(`lobby.${mode}`), badge: t.t(`lobby.${mode}.badge`), text: t.t(`lobby.${mode}.text`) })));
  if (!$("input[name=opponent]:checked")) $("input[name=opponent][value=ev]").checked = true;
  if (!$("input[name=rules]:checked")) ($("input[name=rules][value=classic13]") || $("input[name=rules]")).checked = true;
  $$("input[name=first]").forEach((i) => { i.checked = i.value === saved.first; });
  if (!$("input[name=first]:checked")) $("input[name=first][value=me]").checked = true;
  $("#upper-first").checked = !!saved.upper_first;
}

/** What the form says now: {rules, opponent, first, upper_first, rows} (rows: the seats after the player's,
 * friends.js; upper_first: the house rule of SPEC §3.4). */
export function lobbyChoices() {
  const opponent = $("input[name=opponent]:checked").value;
  return {
    rules: $("input[name=rules]:checked").value,
    opponent,
    first: $("input[name=first]:checked").value,
    upper_first: $("#upper-first").checked,
    rows: ["friend", "friends"].includes(opponent) ? readSeatRows() : [],
  };
}

/** How the recent games list words a game: alone, against a bot, with friends, or watched. */
function recentKind(g) {
  if (g.spectator) return "watch";
  return g.opponent === "solo" ? "solo" : ["friend", "friends"].includes(g.opponent) ? "friends" : "other";
}

/** The games of this browser that are not over (the server's quota of unfinished games counts them): those it
 * plays a seat of, as the store keeps them. */
export function unfinishedGames(recent) {
  return recent.filter((g) => !g.spectator && resultOf(g).outcome === "playing" && heldSeats(seatsOf(g)).length);
}

/** The unfinished games, each to resume (test id resume-game) or abandon (abandon-game); `quota`: the server
 * refused a new game for them, so the list says why it is shown. */
export function renderUnfinished({ t, rules, games, quota, onResume, onAbandon }) {
  $("#unfinished").hidden = !games.length;
  $("#unfinished-quota").hidden = !quota || !games.length;
  $("#unfinished-list").replaceChildren(...games.map((g) => {
    const game = recentEntry(t, rules, g);
    return h("li", { "data-game": g.game_id },
      h("button.resume", { type: "button", "data-testid": "resume-game", "aria-label": t.t("unfinished.resumeLabel", { game }),
        onclick: () => onResume(g) },
      h("span.resume-name", game), h("span.muted", t.t("unfinished.when", { date: new Date(g.created).toLocaleDateString(t.tag) }))),
      h("button.ghost.danger", { type: "button", "data-testid": "abandon-game", "aria-label": t.t("unfinished.abandonLabel", { game }),
        onclick: () => onAbandon(g) }, t.t("unfinished.abandon")));
  }));
}

/** A kept game in words: its rule set and whom it is played with. */
function recentEntry(t, rules, g) {
  return t.t("recent.entry", { opponent: recentKind(g), rules: rulesName(t, rules[g.rules], g.rules),
    bot: botName(t, g.opponent), names: t.list(g.names || []) });
}

export function renderRecords({ t, rules, records, recent, onOpen }) {
  $("#records-body").replaceChildren(...Object.values(rules).map((r) => {
    const x = records[r.id];
    const none = t.t("records.none");
    return h("tr", h("th", { scope: "row" }, rulesName(t, r, r.id)),
      h("td", t.number(x ? x.games + (x.solo_games || 0) : 0)),
      h("td", x ? `${t.number(x.wins)}–${t.number(x.draws)}–${t.number(x.losses)}` : none),
      h("td", x && x.best !== null ? t.number(x.best) : none));
  }));
  const open = new Set(unfinishedGames(recent).map((g) => g.game_id)); // (listed above, to resume)
  const shown = recent.filter((g) => !open.has(g.game_id)).slice(0, 6);
  $("#recent").hidden = !shown.length;
  $("#recent-list").replaceChildren(...shown.map((g) => {
    const result = resultOf(g);
    const entry = recentEntry(t, rules, g);
    // the coach's figure of each game (end-screen.js keeps it): the player sees it fall, game after game
    const coach = typeof g.coach_loss === "number"
      ? h("span.muted", { "data-testid": "recent-coach" }, ` · ${t.t("recent.coach", { loss: t.number(Math.round(g.coach_loss * 10) / 10) })}`) : null;
    return h("li", h("button.link", { type: "button", onclick: () => onOpen(g) }, entry),
      h("span.muted", ` ${t.t("recent.result", { outcome: result.outcome, score: result.score ?? "" })} · ${new Date(g.created).toLocaleDateString(t.tag)}`),
      coach);
  }));
}
