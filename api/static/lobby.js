// The lobby drawn in the player's language: rule sets and opponents to choose from, the records and recent
// games this browser keeps. Reading the form and wiring its buttons is app.js's business.

import { $, $$, h } from "./dom.js";
import { KNOWN_BOTS, rulesName } from "./rules.js";
import { resultOf } from "./store.js";
import { botName } from "./board.js";
import { readSeatRows } from "./friends.js";

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
}

/** What the form says now: {rules, opponent, first, rows} (rows: the seats after the player's, friends.js). */
export function lobbyChoices() {
  const opponent = $("input[name=opponent]:checked").value;
  return {
    rules: $("input[name=rules]:checked").value,
    opponent,
    first: $("input[name=first]:checked").value,
    rows: ["friend", "friends"].includes(opponent) ? readSeatRows() : [],
  };
}

/** How the recent games list words a game: alone, against a bot, with friends, or watched. */
function recentKind(g) {
  if (g.spectator) return "watch";
  return g.opponent === "solo" ? "solo" : ["friend", "friends"].includes(g.opponent) ? "friends" : "other";
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
  const shown = recent.slice(0, 6);
  $("#recent").hidden = !shown.length;
  $("#recent-list").replaceChildren(...shown.map((g) => {
    const result = resultOf(g);
    const entry = t.t("recent.entry", { opponent: recentKind(g), rules: rulesName(t, rules[g.rules], g.rules),
      bot: botName(t, g.opponent), names: t.list(g.names || []) });
    return h("li", h("button.link", { type: "button", onclick: () => onOpen(g) }, entry),
      h("span.muted", ` ${t.t("recent.result", { outcome: result.outcome, score: result.score ?? "" })} · ${new Date(g.created).toLocaleDateString(t.tag)}`));
  }));
}
