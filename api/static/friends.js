// Playing friends: the lobby's seat editor ("a friend", "friends and bots": 2 to 6 seats in any mix), the links
// that bring a friend to a seat (the seat's token in the link's fragment, which browsers never send to the
// server) or a spectator to the game, the table of seats with those links, and the invitation a friend sees
// before joining. Reading what the form says is here too; sending anything is app.js's business.

import { $, $$, h } from "./dom.js";
import { rulesName } from "./rules.js";
import { botName } from "./board.js";

export const MAX_SEATS = 6;
/** The kinds of a seat other than the player's own: a friend with a link, a friend on this device, a bot. */
export const INVITE = "invite";
export const HERE = "here";
const botKind = (id) => `bot:${id}`;
const botOf = (kind) => (kind.startsWith("bot:") ? kind.slice(4) : null);

/** The seats after the player's own that a mode starts with: one friend for "friend", a friend and a bot for "friends". */
export function defaultRows(mode, bots) {
  const first = { kind: INVITE, name: "" };
  return mode === "friend" ? [first] : [first, { kind: botKind(bots[0] || "greedy"), name: "" }];
}

// ------------------------------------------------------------------ the seat editor

/**
 * The seats after the player's own (`rows`: [{kind, name}]) as editable rows. "friend": one row, a friend with a
 * link or on this device; "friends": 1 to 5 rows, friends and bots (`bots`: the ids available) in any mix.
 */
export function renderSeatEditor({ t, mode, rows, bots, me, onChange }) {
  const friends = mode === "friends";
  const kinds = [INVITE, HERE, ...(friends ? bots.map(botKind) : [])];
  const change = () => onChange(readSeatRows());
  const row = (r, i) => {
    const n = i + 2;
    const bot = botOf(r.kind);
    return h("div.seat-row", { "data-testid": "seat-row" },
      h("span.seat-n", t.t("lobby.seat.n", { n })),
      h("select", { "data-testid": "seat-kind", "aria-label": t.t("lobby.seat.kind", { n }), onchange: change },
        kinds.map((k) => h("option", { value: k, selected: k === r.kind }, kindText(t, k)))),
      h("input", { type: "text", maxlength: "40", autocomplete: "off", "data-testid": "seat-name", hidden: !!bot,
        "aria-label": t.t("lobby.seat.name", { n }), placeholder: t.t("lobby.seat.defaultName", { n }), value: r.name || "",
        onchange: change }),
      friends && rows.length > 1 ? h("button.ghost.small", { type: "button", "data-testid": "remove-seat",
        "aria-label": t.t("lobby.seat.remove", { n }), onclick: () => onChange(readSeatRows().filter((_, j) => j !== i)) }, "✕") : null);
  };
  $("#seats-editor").replaceChildren(...present(
    h("p.seat-row.me", h("span.seat-n", t.t("lobby.seat.n", { n: 1 })), h("span", t.t("lobby.seat.you", { name: me }))),
    ...rows.map(row),
    friends && rows.length < MAX_SEATS - 1 ? h("button.ghost", { type: "button", "data-testid": "add-seat",
      onclick: () => onChange([...readSeatRows(), { kind: INVITE, name: "" }]) }, t.t("lobby.seat.add")) : null));
}

/** The elements of a list that are there (replaceChildren would write a null as the text "null"). */
const present = (...items) => items.filter((x) => x !== null && x !== undefined);

function kindText(t, kind) {
  const bot = botOf(kind);
  return bot ? t.t("lobby.seat.kind.bot", { name: botName(t, bot) }) : t.t(`lobby.seat.kind.${kind}`);
}

/** The rows of the seat editor as they stand: [{kind, name}]. */
export function readSeatRows() {
  return $$("#seats-editor [data-testid=seat-row]").map((row) => ({
    kind: $("[data-testid=seat-kind]", row).value,
    name: $("[data-testid=seat-name]", row).value.trim(),
  }));
}

/**
 * What to ask the server for: {seats (POST /v1/games), here (the seats this device plays), invites (the seats
 * that get a link)}. Seat 0 is the player (`me`); a friend left unnamed is "Friend n".
 */
export function seatsToCreate(t, me, rows) {
  const seats = [{ type: "human", name: me }];
  const here = [0];
  const invites = [];
  rows.forEach((r, i) => {
    const bot = botOf(r.kind);
    if (bot) return seats.push({ type: "bot", bot });
    (r.kind === HERE ? here : invites).push(seats.length);
    return seats.push({ type: "human", name: r.name || t.t("lobby.seat.defaultName", { n: i + 2 }) });
  });
  return { seats, here, invites };
}

// ------------------------------------------------------------------ links

const base = () => `${location.origin}${location.pathname}`;

/** The link that brings a friend to `seat`: the token is in the fragment, which the browser keeps to itself. */
export function inviteLink(gameId, seat, token) {
  return `${base()}#${new URLSearchParams({ game: gameId, seat: String(seat), token })}`;
}

/** The link that shows the game to anyone, read-only. */
export function spectatorLink(gameId) {
  return `${base()}#${new URLSearchParams({ watch: gameId })}`;
}

/** What a page address's fragment asks for: {join: {game_id, seat, token}}, {watch: game_id}, or null. */
export function parseLink(hash) {
  const q = new URLSearchParams(String(hash || "").replace(/^#/, ""));
  if (q.get("watch")) return { watch: q.get("watch") };
  const seat = Number(q.get("seat"));
  if (q.get("game") && q.get("token") && Number.isInteger(seat) && seat >= 0 && q.get("seat") !== "") {
    return { join: { game_id: q.get("game"), seat, token: q.get("token") } };
  }
  return null;
}

// ------------------------------------------------------------------ the table of seats

/**
 * Every seat of the game with who plays it, whether it has joined, and the links: one per invited seat
 * (`invites`: [{seat, token}], the creator's), and the spectator link. `joined(seat)`: its seed (or its promise)
 * is in. `here`: the seats this device plays.
 */
export function renderTable({ t, box, gameId, header, here, invites, joined, onCopy }) {
  const links = new Map((invites || []).map((x) => [x.seat, inviteLink(gameId, x.seat, x.token)]));
  const role = (s, i) => {
    if (s.type === "bot") return t.t("table.bot");
    if (here.includes(i)) return here[0] === i ? t.t("table.you") : t.t("table.here");
    return links.has(i) ? t.t("table.invite") : t.t("table.friend");
  };
  const linkRow = (label, url, testid, name) => h("div.link-row",
    h("input", { type: "text", readonly: true, value: url, "data-testid": testid, "aria-label": label, onfocus: (e) => e.target.select() }),
    h("button.ghost", { type: "button", onclick: () => onCopy(url, name) }, t.t("table.copy")));
  box.replaceChildren(...present(
    h("h2", t.t("table.title")),
    links.size ? h("p.help", t.t("table.help")) : null,
    h("ol.table-seats", header.seats.map((s, i) => h("li", { "data-seat": String(i) },
      h("span.seat-line", h("strong", s.type === "bot" ? t.t("seat.label", { who: "bot", name: botName(t, s.bot.id) }) : s.name),
        h("span.badge", role(s, i)),
        s.type === "human" ? h("span", { class: `joined ${joined(i) ? "yes" : "no"}` }, t.t(joined(i) ? "table.joined" : "table.waiting")) : null),
      links.has(i) ? linkRow(t.t("table.linkLabel", { name: s.name }), links.get(i), "invite-link", s.name) : null))),
    h("p.help", t.t("table.spectatorHelp")),
    linkRow(t.t("table.spectator"), spectatorLink(gameId), "spectator-link", null)));
  box.hidden = false;
}

// ------------------------------------------------------------------ the invitation

/** What a friend who opened an invite link sees before joining: the game, the seats and their own seat. */
export function renderInvitation({ t, box, rules, header, seat, onRules }) {
  const r = rules[header.rules];
  box.replaceChildren(...present(
    h("h2", t.t("join.title", { rules: rulesName(t, r, header.rules) })),
    h("p", t.t("join.seat", { n: seat + 1, name: header.seats[seat].name })),
    t.has(`rules.${header.rules}.blurb`) ? h("p.help", t.t(`rules.${header.rules}.blurb`)) : null,
    h("button.link", { type: "button", onclick: onRules }, t.t("lobby.readRules")),
    h("h3", t.t("join.seats")),
    h("ol.table-seats", header.seats.map((s, i) => h("li", { class: i === seat ? "mine" : "" },
      s.type === "bot" ? t.t("seat.label", { who: "bot", name: botName(t, s.bot.id) }) : s.name,
      i === seat ? h("span.badge", t.t("table.you")) : null))),
    h("p.help", t.t("join.text"))));
  box.hidden = false;
}
