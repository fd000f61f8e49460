// fairdice game page: lobby, board, end screen with in-browser verification.
// Plain ES modules, no build step, no third-party code: works offline.

import { api, ApiProblem } from "./api.js";
import { store } from "./store.js";
import { RULES, GENERAL, BOT_INFO, mergeRules } from "./rules.js";
import { verifyLog } from "./verify.js";

// ------------------------------------------------------------------ helpers

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

/** h("div.cls#id", {attr: v, onclick: fn}, ...children): build DOM without innerHTML. */
function h(spec, attrs, ...children) {
  const [, tag = "div", rest = ""] = spec.match(/^([a-z0-9]*)(.*)$/i);
  const el = document.createElement(tag || "div");
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className += " " + v;
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function randomSeed() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function validSeed(s) {
  if (!s || [...s].length > 256) return false;
  // printable: no control, format, separator (other than the space) or unassigned characters
  return !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]|[\p{Zs}--[ ]]/v.test(s);
}

let toastTimer = null;
function toast(message, kind = "error") {
  const el = $("#toast");
  el.textContent = message;
  el.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.className = "toast"; }, 6000);
}

function problemText(err) {
  if (err instanceof ApiProblem) return err.message;
  return `Something went wrong: ${err && err.message ? err.message : err}`;
}

const SPEEDS = { normal: { step: 650, tumble: 420 }, quick: { step: 140, tumble: 90 }, off: { step: 0, tumble: 0 } };
function speed() {
  const fromUrl = new URLSearchParams(location.search).get("speed");
  return SPEEDS[fromUrl] || SPEEDS[store.prefs().speed] || SPEEDS.normal;
}

// ------------------------------------------------------------------ app state

const S = {
  rules: mergeRules(null),
  bots: null, // [{id, level, description}] from the server, null when unknown
  trustedKeys: [],
  hintRoute: null, // true / false / null (unknown)
  game: null, // {game_id, token, seat, rules, opponent, client_seed}
  created: null, // the POST /v1/games answer while the client seed is not sent
  state: null, // last state from the server
  view: null, // what the board shows (the state, or a step of an animation)
  held: new Set(),
  busy: false,
  animating: false,
  highlight: null, // {seat, category}
  hint: null,
  events: [], // every event of the game so far (as far as the board has played them out)
  verified: null, // verification report of the finished game
  log: null,
};

function show(section) {
  for (const id of ["loading", "lobby", "game"]) $("#" + id).hidden = id !== section;
  document.body.dataset.screen = section;
}

// ------------------------------------------------------------------ lobby

function renderLobby() {
  const saved = store.lobby();
  const choice = (name, value, title, sub, text, disabled = false) => h("label.choice", { class: disabled ? "disabled" : "" },
    h("input", { type: "radio", name, value, checked: saved[name] === value && !disabled, disabled }),
    h("span.choice-body", h("span.choice-title", title, sub ? h("span.badge", sub) : null), text ? h("span.choice-text", text) : null));

  const rulesBox = $("#rules-choices");
  rulesBox.replaceChildren(...Object.values(S.rules).map((r) => choice("rules", r.id, r.name,
    `${r.categories.length} boxes`, r.blurb || r.summary)));
  rulesBox.append(h("button.link", { type: "button", onclick: () => openRules($("input[name=rules]:checked")?.value) },
    "Read the full rules"));

  const available = S.bots ? S.bots.map((b) => b.id) : ["greedy", "ev"];
  const botIds = [...new Set([...Object.keys(BOT_INFO), ...available])];
  $("#opponent-choices").replaceChildren(
    ...botIds.map((id) => {
      const info = BOT_INFO[id] || { name: id, level: "", text: "" };
      const srv = S.bots && S.bots.find((b) => b.id === id);
      const missing = !available.includes(id);
      return choice("opponent", id, info.name, missing ? "soon" : (srv && srv.level) || info.level,
        missing ? "Not available on this server yet." : info.text || (srv && srv.description), missing);
    }),
    choice("opponent", "solo", "Solitaire", "solo", "Just you: beat your own best score."));
  if (!$("input[name=opponent]:checked")) $("input[name=opponent][value=ev]").checked = true;
  if (!$("input[name=rules]:checked")) $("input[name=rules][value=classic13]").checked = true;
  $$("input[name=first]").forEach((i) => { i.checked = i.value === saved.first; });
  if (!$("input[name=first]:checked")) $("input[name=first][value=me]").checked = true;
  $("#player-name").value = store.prefs().name || "You";
  $("#speed").value = store.prefs().speed || "normal";
  if (!$("#client-seed").value) $("#client-seed").value = randomSeed();
  syncLobby();
  renderRecords();
}

function syncLobby() {
  const solo = $("input[name=opponent]:checked")?.value === "solo";
  $("#first-field").disabled = solo || !!S.created;
  $("#first-field").classList.toggle("muted", solo);
  const seed = $("#client-seed").value;
  const ok = validSeed(seed);
  $("#seed-error").hidden = ok;
  $("#client-seed").setAttribute("aria-invalid", ok ? "false" : "true");
  $("#start-btn").disabled = !ok || S.busy;
}

function lobbyChoices() {
  return {
    rules: $("input[name=rules]:checked").value,
    opponent: $("input[name=opponent]:checked").value,
    first: $("input[name=first]:checked").value,
  };
}

function renderRecords() {
  const recs = store.records();
  const rows = Object.values(S.rules).map((r) => {
    const x = recs[r.id];
    return h("tr", h("th", { scope: "row" }, r.name),
      h("td", x ? String(x.games + (x.solo_games || 0)) : "0"),
      h("td", x ? `${x.wins}–${x.draws}–${x.losses}` : "–"),
      h("td", x && x.best !== null ? String(x.best) : "–"));
  });
  $("#records-body").replaceChildren(...rows);
  const recent = store.recent().slice(0, 6);
  $("#recent").hidden = !recent.length;
  $("#recent-list").replaceChildren(...recent.map((g) => h("li",
    h("button.link", { type: "button", onclick: () => openGame(g) },
      `${S.rules[g.rules]?.name || g.rules} · ${g.opponent === "solo" ? "solo" : "vs " + g.opponent}`),
    h("span.muted", ` ${g.result || "in progress"} · ${new Date(g.created).toLocaleDateString()}`))));
}

async function createGame(ev) {
  ev.preventDefault();
  if (S.busy) return;
  const c = lobbyChoices();
  const name = ($("#player-name").value || "You").trim().slice(0, 40) || "You";
  store.setPrefs({ name });
  store.setLobby(c);
  const seats = [{ type: "human", name }];
  if (c.opponent !== "solo") seats.push({ type: "bot", bot: c.opponent });
  const first = c.opponent === "solo" ? 0 : c.first === "me" ? 0 : c.first === "bot" ? 1 : "random";
  setBusy(true);
  try {
    const created = await api.create({ rules: c.rules, seats, first });
    const token = created.tokens.find((t) => t.seat === 0) || created.tokens[0];
    S.created = created;
    S.game = { game_id: created.game_id, token: token.token, seat: 0, rules: c.rules, opponent: c.opponent,
      created: Date.now(), commitment: created.commitment, seed_draft: $("#client-seed").value };
    store.setCurrent(S.game);
    store.remember(S.game);
    showCommitment(created);
  } catch (err) {
    toast(problemText(err));
  } finally {
    setBusy(false);
  }
}

function showCommitment(created) {
  $("#lobby-form").classList.add("committed");
  for (const el of $$("#lobby-form fieldset.setup")) el.disabled = true;
  $("#commit-card").hidden = false;
  $("#commitment").textContent = created.commitment;
  $("#commit-key").textContent = created.key_id;
  $("#create-btn").hidden = true;
  $("#start-btn").hidden = false;
  $("#cancel-btn").hidden = false;
  syncLobby();
  $("#commit-card").scrollIntoView({ block: "nearest", behavior: "smooth" });
  $("#client-seed").focus();
}

function resetLobby() {
  S.created = null;
  $("#lobby-form").classList.remove("committed");
  for (const el of $$("#lobby-form fieldset.setup")) el.disabled = false;
  $("#commit-card").hidden = true;
  $("#create-btn").hidden = false;
  $("#start-btn").hidden = true;
  $("#cancel-btn").hidden = true;
  $("#client-seed").value = randomSeed();
  syncLobby();
}

async function sendSeed() {
  const seed = $("#client-seed").value;
  if (!validSeed(seed) || S.busy) return;
  setBusy(true);
  try {
    const st = await api.clientSeed(S.game.game_id, S.game.token, seed);
    S.game.client_seed = seed;
    store.setCurrent(S.game);
    S.created = null;
    resetLobby();
    const before = { ...st, events: [], seats: st.seats.map((s) => ({ ...s, card: Object.fromEntries(Object.keys(s.card).map((k) => [k, null])), yahtzee_bonus: 0, totals: { upper: 0, upper_bonus: 0, lower: 0, yahtzee_bonus: 0, total: 0 } })), dice: [], rolls_made: 0, rolls_left: 0, options: {}, status: "playing", final: null, current_seat: null };
    enterGame(before);
    await applyReply(st);
  } catch (err) {
    toast(problemText(err));
  } finally {
    setBusy(false);
  }
}

async function cancelCreated() {
  if (!S.game) return resetLobby();
  try {
    await api.abandon(S.game.game_id, S.game.token);
  } catch {
    // nothing was played; forgetting it locally is enough
  }
  store.update(S.game.game_id, { result: "cancelled" });
  store.clearCurrent();
  S.game = null;
  resetLobby();
  renderRecords();
}

// ------------------------------------------------------------------ game: loading and rendering

async function openGame(entry) {
  setBusy(true);
  try {
    const st = await api.state(entry.game_id);
    S.game = { ...entry };
    if (st.status === "awaiting_client_seed") {
      store.setCurrent(S.game);
      show("lobby");
      renderLobby();
      const rulesInput = $(`input[name=rules][value="${entry.rules}"]`);
      if (rulesInput) rulesInput.checked = true;
      const opp = $(`input[name=opponent][value="${entry.opponent}"]`);
      if (opp) opp.checked = true;
      S.created = { commitment: st.commitment, key_id: st.key_id };
      if (entry.seed_draft) $("#client-seed").value = entry.seed_draft;
      showCommitment(S.created);
      return;
    }
    store.setCurrent(S.game); // until "New game": a reload shows this game again
    enterGame(st);
    if (st.final) await finishGame(st);
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 404) {
      toast("That game is not on this server any more.");
      store.update(entry.game_id, { result: "gone" });
      if (store.current()?.game_id === entry.game_id) store.clearCurrent();
      showLobbyScreen();
    } else {
      toast(problemText(err));
      if (!S.state) showLobbyScreen();
    }
  } finally {
    setBusy(false);
  }
}

function enterGame(st) {
  S.state = st;
  S.events = (st.events_from || 0) === 0 ? [...(st.events || [])] : [];
  S.view = structuredClone(st);
  S.held = new Set();
  S.hint = null;
  S.highlight = null;
  S.verified = null;
  $("#result").hidden = true;
  $("#fairness").hidden = true;
  $("#play").hidden = false;
  $(".table-area").classList.remove("over");
  show("game");
  render();
  probeHint();
}

function mySeat() {
  return S.game ? S.game.seat : 0;
}

function seatName(view, seat) {
  if (seat === mySeat()) return "You";
  const s = view.seats[seat];
  return s ? s.name : `seat ${seat}`;
}

function categoriesOf(view) {
  const r = S.rules[view.rules];
  if (r) return r.categories;
  return Object.keys(view.seats[0].card).map((id) => ({ id, label: id.replace(/_/g, " "), section: "lower" }));
}

function myTurn(view = S.view) {
  return view && view.status === "playing" && view.current_seat === mySeat() && !S.animating;
}

function render() {
  const v = S.view;
  if (!v) return;
  const rules = S.rules[v.rules] || { name: v.rules };
  $("#game-rules").textContent = rules.name;
  const opp = v.seats.find((s, i) => i !== mySeat());
  $("#game-opponent").textContent = opp ? `vs ${opp.name}` : "solitaire";
  const me = v.seats[mySeat()];
  const filled = Object.values(me.card).filter((x) => x !== null).length;
  const total = Object.keys(me.card).length;
  $("#game-round").textContent = v.status === "playing" ? `Turn ${Math.min(filled + 1, total)} of ${total}` : `${total} turns`;
  $("#game-commit").textContent = v.commitment.slice(0, 10) + "…";
  $("#game-commit").title = `Server commitment SHA-256(seed) = ${v.commitment}`;
  $("#abandon-btn").hidden = v.status !== "playing";
  renderDice();
  renderControls();
  renderScorecard();
  renderMoves();
}

/** The last few turns, newest first: each roll's dice (held ones shaded) and the box filled. */
function renderMoves() {
  const v = S.view;
  const groups = [];
  let cur = null;
  for (const e of S.events) {
    if (e.type !== "roll" && e.type !== "score") continue;
    if (!cur || cur.seat !== e.seat || cur.turn !== e.turn) {
      cur = { seat: e.seat, turn: e.turn, rolls: [], score: null };
      groups.push(cur);
    }
    if (e.type === "roll") cur.rolls.push(e);
    else cur.score = e;
  }
  const list = $("#moves");
  list.replaceChildren(...groups.slice(-6).reverse().map((g) => h("li", { class: g.seat === mySeat() ? "me" : "" },
    h("span.who", `${seatName(v, g.seat)} · turn ${g.turn}`),
    h("span.seq", g.rolls.map((r) => h("span.mini", (r.dice || []).map((d, p) =>
      h("span.mini-die", { class: r.hold.includes(p) ? "kept" : "" }, String(d)))))),
    g.score ? h("span.scored", `${catLabel(g.score.category)} ${g.score.points}${g.score.yahtzee_bonus ? ` +${g.score.yahtzee_bonus}` : ""}`)
      : h("span.muted", "…"))));
  $("#moves-box").hidden = !groups.length;
}

function renderDice() {
  const v = S.view;
  const hasDice = v.dice && v.dice.length === 5;
  const mine = myTurn();
  $$("#dice .die").forEach((btn, i) => {
    const face = hasDice ? v.dice[i] : 0;
    if (!btn.classList.contains("tumbling")) btn.dataset.face = String(face);
    const held = S.held.has(i);
    btn.classList.toggle("held", held);
    btn.classList.toggle("blank", !hasDice);
    btn.classList.toggle("hinted", !!(S.hint && S.hint.hold && S.hint.hold.includes(i)));
    btn.setAttribute("aria-pressed", held ? "true" : "false");
    btn.disabled = !(mine && hasDice && v.rolls_left > 0) || S.busy;
    btn.setAttribute("aria-label", hasDice ? `Die ${i + 1}: ${face}${held ? ", held" : ""}` : `Die ${i + 1}: not rolled`);
  });
}

function renderControls() {
  const v = S.view;
  const mine = myTurn();
  const roll = $("#roll-btn");
  roll.disabled = !(mine && v.rolls_left > 0) || S.busy;
  $("#rolls-left").textContent = v.status === "playing" && v.current_seat === mySeat()
    ? `${v.rolls_left} left` : "";
  const hint = $("#hint-btn");
  hint.hidden = S.hintRoute === false || v.status !== "playing";
  hint.disabled = !mine || S.busy;
  $("#hint-text").textContent = S.hint ? S.hint.text : "";
  $("#hint-text").hidden = !S.hint;
  if (!S.animating) $("#status").textContent = statusText(v);
}

function statusText(v) {
  if (v.status === "finished") return "Game over.";
  if (v.status === "abandoned") return "Game abandoned.";
  if (v.status !== "playing") return "Waiting for the game to start…";
  if (v.current_seat !== mySeat()) return `${seatName(v, v.current_seat)} is playing…`;
  if (v.rolls_made === 0) return "Your turn: roll the dice.";
  if (v.rolls_left === 0) return "Last roll: pick a box for these dice.";
  return matchMedia("(pointer: coarse)").matches ? "Tap dice to hold them and roll again, or pick a box."
    : "Hold dice (click or keys 1–5) and roll again, or pick a box.";
}

function renderScorecard() {
  const v = S.view;
  const rules = S.rules[v.rules] || { upper_bonus: 35, yahtzee_bonus: 0 };
  const cats = categoriesOf(v);
  const me = mySeat();
  const order = [me, ...v.seats.map((_, i) => i).filter((i) => i !== me)];
  const options = myTurn() && v.rolls_made > 0 ? v.options || {} : {};
  const anyPositive = Object.values(options).some((o) => o.points + (o.yahtzee_bonus || 0) > 0);
  const table = $("#scorecard");
  const head = h("thead", h("tr", h("th", { scope: "col" }, h("span.sr", "Box")),
    order.map((i) => h("th", { scope: "col", class: v.current_seat === i && v.status === "playing" ? "turn" : "" },
      i === me ? "You" : v.seats[i].name))));
  const body = h("tbody");
  const row = (c) => {
    const tr = h("tr.cat", { "data-category": c.id });
    tr.append(h("th", { scope: "row", title: c.when ? `${c.when} → ${c.score}` : "" }, c.label,
      c.when ? h("span.cat-rule", c.score) : null));
    for (const i of order) {
      const val = v.seats[i].card[c.id];
      const td = h("td");
      const flash = S.highlight && S.highlight.seat === i && S.highlight.category === c.id;
      if (val !== null && val !== undefined) {
        td.textContent = String(val);
        td.className = "filled" + (val === 0 ? " zero" : "") + (flash ? " flash" : "");
      } else if (i === me && options[c.id]) {
        const o = options[c.id];
        const pts = o.points + (o.yahtzee_bonus || 0);
        const hinted = S.hint && S.hint.category === c.id;
        td.append(h("button.pick", {
          type: "button", class: (pts > 0 ? "pos" : "zero") + (hinted ? " hinted" : ""),
          "aria-label": `Score ${o.points}${o.yahtzee_bonus ? ` plus ${o.yahtzee_bonus} bonus` : ""} in ${c.label}`,
          disabled: S.busy, onclick: () => pick(c.id),
        }, String(o.points), o.yahtzee_bonus ? h("small", ` +${o.yahtzee_bonus}`) : null, o.joker ? h("small.joker", " joker") : null));
        tr.classList.add("pickable");
        if (pts === 0 && anyPositive) tr.classList.add("scratch");
      } else {
        td.className = "open";
        if (i === me && myTurn() && v.rolls_made > 0) td.append(h("span.muted", { title: "not allowed for these dice" }, "–"));
      }
      tr.append(td);
    }
    if (tr.classList.contains("pickable")) tr.addEventListener("click", (e) => { if (!e.target.closest("button")) pick(c.id); });
    return tr;
  };
  const sumRow = (label, fn, cls = "") => h("tr.sum", { class: cls }, h("th", { scope: "row" }, label),
    order.map((i) => h("td", fn(v.seats[i], i))));
  for (const c of cats.filter((c) => c.section === "upper")) body.append(row(c));
  body.append(sumRow("Upper", (s) => {
    const up = s.totals.upper;
    const bar = h("span.bar", h("span"));
    bar.firstChild.style.width = `${Math.min(100, (up / 63) * 100)}%`;
    if (up >= 63) bar.classList.add("done");
    return [h("span.upper-val", `${up}`, h("small", " / 63")), bar];
  }, "upper-sum"));
  body.append(sumRow(`Bonus +${rules.upper_bonus}`, (s) => {
    if (s.totals.upper_bonus) return h("span.good", `+${s.totals.upper_bonus}`);
    const upperOpen = cats.filter((c) => c.section === "upper").some((c) => s.card[c.id] === null);
    return upperOpen ? h("small.muted", `${Math.max(0, 63 - s.totals.upper)} to go`) : h("span.muted", "0");
  }));
  for (const c of cats.filter((c) => c.section !== "upper")) body.append(row(c));
  if (rules.yahtzee_bonus) body.append(sumRow("Yahtzee bonus", (s) => String(s.totals.yahtzee_bonus || s.yahtzee_bonus || 0)));
  body.append(sumRow("Lower", (s) => String(s.totals.lower)));
  const foot = h("tfoot", h("tr.total", h("th", { scope: "row" }, "Total"),
    order.map((i) => h("td", String(v.seats[i].totals.total)))));
  table.replaceChildren(h("caption.sr", "Score cards"), head, body, foot);
}

// ------------------------------------------------------------------ playing

function setBusy(b) {
  S.busy = b;
  document.body.classList.toggle("busy", b);
  if (S.view && $("#game").hidden === false) {
    renderDice();
    renderControls();
    $$("#scorecard button.pick").forEach((x) => { x.disabled = b; });
  }
  if ($("#lobby").hidden === false) {
    $("#create-btn").disabled = b;
    syncLobby();
  }
}

function toggleHold(i) {
  const v = S.view;
  if (!myTurn() || S.busy || !v.dice || v.dice.length !== 5 || v.rolls_left === 0) return;
  if (S.held.has(i)) S.held.delete(i);
  else S.held.add(i);
  renderDice();
}

async function doRoll() {
  const v = S.view;
  if (!myTurn() || S.busy || v.rolls_left <= 0) return;
  const hold = v.rolls_made === 0 ? [] : [...S.held].sort();
  if (v.rolls_made === 0) S.held.clear();
  S.hint = null;
  S.highlight = null;
  await move(() => api.roll(S.game.game_id, S.game.token, hold));
}

/** Send one move and show its reply; a refused or lost move shows why and reloads the game as stored. */
async function move(send) {
  setBusy(true);
  try {
    await applyReply(await send());
  } catch (err) {
    toast(problemText(err));
    await resync();
  } finally {
    setBusy(false);
  }
}

function pick(category) {
  const v = S.view;
  if (!myTurn() || S.busy) return;
  const opts = v.options || {};
  const o = opts[category];
  if (!o) return;
  const pts = o.points + (o.yahtzee_bonus || 0);
  const better = Object.entries(opts).filter(([, x]) => x.points + (x.yahtzee_bonus || 0) > 0)
    .sort((a, b) => b[1].points - a[1].points);
  if (pts === 0 && better.length) {
    const text = `These dice would score ${better[0][1].points} in ${catLabel(better[0][0])}` +
      (better.length > 1 ? ` (and points in ${better.length - 1} other box${better.length > 2 ? "es" : ""})` : "") + ".";
    askConfirm(`Record 0 in ${catLabel(category)}?`, text, "Record 0").then((yes) => { if (yes) doScore(category); });
    return;
  }
  doScore(category);
}

/** A modal question; resolves true when confirmed (Escape or Cancel: false). */
function askConfirm(title, text, okLabel) {
  const dlg = $("#confirm-dialog");
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text;
  $("#confirm-zero").textContent = okLabel;
  dlg.returnValue = "";
  dlg.showModal();
  $("#confirm-cancel").focus();
  return new Promise((resolve) => {
    dlg.onclose = () => resolve(dlg.returnValue === "ok");
  });
}

async function doScore(category) {
  if (!myTurn() || S.busy) return;
  S.hint = null;
  await move(async () => {
    const st = await api.score(S.game.game_id, S.game.token, category);
    S.held.clear();
    return st;
  });
}

async function resync() {
  if (!S.game) return;
  try {
    const st = await api.state(S.game.game_id);
    S.state = st;
    S.view = structuredClone(st);
    render();
  } catch {
    // keep what is shown
  }
}

/** A command's answer: play its events out on the board, then show the new state. */
async function applyReply(st) {
  const from = st.events_from || 0;
  let events = st.events || [];
  if (from > S.events.length) {
    // the board missed events (the game was played on in another tab): show it as it is now
    S.events = (await api.state(st.game_id)).events || [];
    events = [];
  }
  events = events.slice(Math.max(0, S.events.length - from));
  S.animating = true;
  try {
    await playEvents(events);
  } finally {
    S.animating = false;
  }
  S.state = st;
  S.view = structuredClone(st);
  if (st.current_seat === mySeat() && st.rolls_made === 0) S.held.clear();
  const focusLost = !document.activeElement || document.activeElement === document.body ||
    !document.activeElement.isConnected || document.activeElement.closest("#scorecard");
  render();
  if (focusLost && myTurn() && st.rolls_made === 0) $("#roll-btn").focus();
  if (st.final) await finishGame(st);
}

function diceText(d) {
  return d.join(" ");
}

function catLabel(id) {
  const c = categoriesOf(S.view).find((x) => x.id === id);
  return c ? c.label : id;
}

async function tumble(positions, ms) {
  const dice = $$("#dice .die");
  if (!ms || !positions.length) return;
  const reduce = matchMedia("(prefers-reduced-motion: reduce)").matches;
  for (const p of positions) dice[p].classList.add("tumbling");
  const timer = reduce ? null : setInterval(() => {
    for (const p of positions) dice[p].dataset.face = String(1 + Math.floor(Math.random() * 6)); // cosmetic only
  }, 70);
  await sleep(ms);
  clearInterval(timer);
  for (const p of positions) dice[p].classList.remove("tumbling");
}

/** Step through events on S.view so the bot's turn (and the roll-off) is seen, not jumped over. */
async function playEvents(events) {
  const sp = speed();
  const v = S.view;
  const status = $("#status");
  for (const e of events) {
    S.events.push(e);
    if (e.type === "start") {
      v.status = "playing";
      for (const [n, round] of (e.rolloff || []).entries()) {
        for (const t of round) {
          v.dice = t.dice;
          v.current_seat = t.seat;
          S.held.clear();
          status.textContent = `Roll-off${n ? ` (round ${n + 1})` : ""}: ${seatName(v, t.seat)} throws…`;
          renderDice();
          await tumble([0, 1, 2, 3, 4], sp.tumble);
          renderDice();
          status.textContent = `Roll-off${n ? ` (round ${n + 1})` : ""}: ${seatName(v, t.seat)} throws ${t.dice.reduce((a, b) => a + b, 0)} (${diceText(t.dice)})`;
          await sleep(sp.step * 1.4);
        }
      }
      v.current_seat = e.first;
      v.dice = [];
      v.rolls_made = 0;
      status.textContent = e.first === mySeat() ? "You play first." : `${seatName(v, e.first)} plays first.`;
      render();
      status.textContent = e.first === mySeat() ? "You play first." : `${seatName(v, e.first)} plays first.`;
      await sleep(sp.step);
    } else if (e.type === "roll") {
      const mine = e.seat === mySeat();
      const prevDice = v.dice && v.dice.length === 5 ? v.dice : [0, 0, 0, 0, 0];
      v.current_seat = e.seat;
      v.rolls_made = e.roll;
      v.rolls_left = 3 - e.roll;
      v.options = {};
      if (!mine) {
        S.held = new Set(e.hold);
        v.dice = prevDice;
        render();
        const who = seatName(v, e.seat);
        if (e.roll > 1) {
          status.textContent = e.hold.length
            ? `${who} holds ${e.hold.map((p) => prevDice[p]).join(" ")} and rolls (${e.roll} of 3)…`
            : `${who} rerolls all five (${e.roll} of 3)…`;
          await sleep(sp.step * 0.8);
        } else {
          status.textContent = `${who} rolls (1 of 3)…`;
        }
        $("#status").dataset.step = `${e.seat}:${e.turn}:${e.roll}`;
      }
      const rolling = [0, 1, 2, 3, 4].filter((p) => !e.hold.includes(p));
      await tumble(rolling, mine ? Math.min(sp.tumble, 260) : sp.tumble);
      v.dice = e.dice;
      renderDice();
      renderMoves();
      if (!mine) {
        status.textContent = `${seatName(v, e.seat)} rolled ${diceText(e.dice)} (${e.roll} of 3)`;
        await sleep(sp.step);
      }
    } else if (e.type === "score") {
      const s = v.seats[e.seat];
      s.card[e.category] = e.points;
      s.yahtzee_bonus = (s.yahtzee_bonus || 0) + e.yahtzee_bonus;
      const cats = categoriesOf(v);
      const upper = cats.filter((c) => c.section === "upper").reduce((a, c) => a + (s.card[c.id] || 0), 0);
      const t = s.totals;
      t.upper = upper;
      t.upper_bonus += e.upper_bonus;
      t.yahtzee_bonus += e.yahtzee_bonus;
      t.total = e.total;
      t.lower = e.total - upper - t.upper_bonus - t.yahtzee_bonus;
      S.highlight = { seat: e.seat, category: e.category };
      const mine = e.seat === mySeat();
      v.rolls_made = 0;
      v.rolls_left = 3;
      v.options = {};
      if (!mine) {
        S.held.clear();
        render();
        status.textContent = `${seatName(v, e.seat)} scores ${e.points}${e.yahtzee_bonus ? ` +${e.yahtzee_bonus}` : ""} in ${catLabel(e.category)}${e.upper_bonus ? ` and earns the upper bonus +${e.upper_bonus}` : ""}.`;
        await sleep(sp.step * 1.3);
      } else {
        S.held.clear();
        v.current_seat = null;
        render();
        await sleep(Math.min(sp.step, 250));
      }
      v.dice = [];
    } else if (e.type === "abandon") {
      v.status = "abandoned";
    }
  }
}

// ------------------------------------------------------------------ hints

async function probeHint() {
  if (S.hintRoute !== null) return;
  try {
    const doc = await api.openapi();
    const paths = Object.keys((doc && doc.paths) || {});
    if (paths.length) S.hintRoute = paths.some((p) => /\/hint$/.test(p));
  } catch {
    // unknown: the button stays, and hides itself on a 404
  }
  renderControls();
}

function describeHint(doc) {
  // Accept the likely shapes: {action: "roll", hold: [..]} | {action: "score", category} | {hint: {...}}
  const d = doc && (doc.hint || doc.advice || doc.best || doc);
  if (!d) return null;
  const ev = d.expected ?? d.expected_score ?? d.value ?? d.ev;
  const evText = typeof ev === "number" ? ` (expected ${ev.toFixed(1)})` : "";
  let hold = Array.isArray(d.hold) ? d.hold : null;
  if (!hold && Array.isArray(d.keep)) {
    // faces to keep: the lowest positions showing each
    const dice = [...(S.view.dice || [])];
    hold = [];
    for (const face of d.keep) {
      const p = dice.findIndex((x, i) => x === face && !hold.includes(i));
      if (p >= 0) hold.push(p);
    }
    hold.sort();
  }
  const category = d.category || (d.action === "score" ? d.box : null);
  if (category && (d.action === "score" || !hold)) {
    return { category, text: `Hint: score ${catLabel(category)}${evText}.` };
  }
  if (hold) {
    const dice = S.view.dice || [];
    const text = hold.length ? `Hint: hold ${hold.map((p) => dice[p]).join(" ")} and roll${evText}.`
      : `Hint: reroll all five${evText}.`;
    return { hold, text };
  }
  if (d.action === "roll") return { hold: [], text: `Hint: roll${evText}.` };
  return { text: `Hint: ${JSON.stringify(d)}` };
}

async function doHint() {
  if (!myTurn() || S.busy) return;
  if (S.view.rolls_made === 0) {
    S.hint = { text: "Hint: roll the dice first." };
    renderControls();
    return;
  }
  setBusy(true);
  try {
    const doc = await api.hint(S.game.game_id, S.game.token);
    S.hint = describeHint(doc);
  } catch (err) {
    if (err instanceof ApiProblem && (err.status === 404 || err.status === 405 || err.status === 501)) {
      S.hintRoute = false;
      toast("Hints are not available on this server.", "info");
    } else toast(problemText(err));
  } finally {
    setBusy(false);
    render();
  }
}

async function doAbandon() {
  if (!S.game || S.busy || !S.view || S.view.status !== "playing") return;
  const yes = await askConfirm("Abandon this game?", "The game ends without a winner and the server reveals its seed, so you can still check every roll so far.", "Abandon");
  if (!yes) return;
  setBusy(true);
  try {
    const st = await api.abandon(S.game.game_id, S.game.token);
    await applyReply(st);
  } catch (err) {
    toast(problemText(err));
  } finally {
    setBusy(false);
  }
}

// ------------------------------------------------------------------ end of the game

async function finishGame(st) {
  const fin = st.final;
  const me = mySeat();
  const solo = st.seats.length === 1;
  const mine = fin.totals[me].total;
  let title;
  let result;
  if (fin.status === "abandoned") {
    title = "Game abandoned";
    result = "abandoned";
  } else if (solo) {
    title = `You scored ${mine}`;
    result = `scored ${mine}`;
  } else if (fin.draw) {
    title = `A draw at ${mine}!`;
    result = "draw";
  } else if (fin.winner === me) {
    title = "You win!";
    result = "won";
  } else {
    title = `${st.seats[fin.winner].name} wins`;
    result = "lost";
  }
  let newBest = false;
  if (S.game && fin.status === "finished") {
    newBest = store.record(st.game_id, st.rules, { solo, won: fin.winner === me, draw: fin.draw, score: mine }).newBest;
  }
  if (S.game) {
    store.update(st.game_id, { result: fin.status === "finished" ? `${result} · ${mine}` : result });
  }
  $("#result-title").textContent = title;
  $("#result").dataset.outcome = result.split(" ")[0];
  const sub = [];
  if (!solo) sub.push(st.seats.map((s, i) => `${i === me ? "You" : s.name} ${fin.totals[i].total}`).join(" · "));
  if (newBest && fin.status === "finished") sub.push(`Your best ${S.rules[st.rules]?.name || st.rules} score yet!`);
  $("#result-sub").textContent = sub.join(" — ");
  const parts = ["upper", "upper_bonus", "lower", "yahtzee_bonus", "total"];
  const names = { upper: "Upper", upper_bonus: "Upper bonus", lower: "Lower", yahtzee_bonus: "Yahtzee bonus", total: "Total" };
  const shown = parts.filter((p) => p !== "yahtzee_bonus" || (S.rules[st.rules]?.yahtzee_bonus));
  $("#result-table").replaceChildren(
    h("thead", h("tr", h("th", { scope: "col" }, h("span.sr", "Part")), st.seats.map((s, i) => h("th", { scope: "col" }, i === me ? "You" : s.name)))),
    h("tbody", shown.map((p) => h("tr", { class: p === "total" ? "total" : "" }, h("th", { scope: "row" }, names[p]),
      fin.totals.map((t) => h("td", String(t[p])))))));
  $("#result").hidden = false;
  $("#play").hidden = true;
  $(".table-area").classList.add("over");
  $("#fairness").hidden = false;
  $("#server-seed").textContent = fin.server_seed;
  $("#fair-commitment").textContent = st.commitment;
  render();
  $("#result-title").focus();
  await runVerification(st.game_id);
}

async function runVerification(gameId, tamperedLog) {
  const box = $("#verify-report");
  box.replaceChildren(h("p.muted", "Checking every die with Web Crypto…"));
  $("#verify-summary").textContent = "Verifying…";
  $("#fairness").dataset.verdict = "pending";
  let log = tamperedLog;
  try {
    if (!log) log = await api.log(gameId);
    S.log = log;
    $("#download-btn").disabled = false;
    $("#verify-cmd").textContent = `fairdice-verify ${fileName(log)}`;
    const report = await verifyLog(log, { trustedKeys: S.trustedKeys });
    S.verified = report;
    renderReport(box, report, log);
  } catch (err) {
    $("#fairness").dataset.verdict = "fail";
    $("#verify-summary").textContent = "✗ Could not verify";
    box.replaceChildren(h("p.bad", problemText(err)));
  }
}

function fileName(log) {
  const id = (log && log.header && log.header.game_id) || "game";
  return `game-${id.replace(/[^A-Za-z0-9_-]/g, "_")}.json`;
}

const CHECK_NAMES = {
  "log.format": "Log format",
  "log.key": "Server key",
  "sig.commitment": "Commitment signed before play",
  "sig.final": "Log signed by the server",
  "seed.revealed": "Server seed revealed",
  "seed.commitment": "Seed matches the commitment",
  "seed.secret": "Seed was secret",
  "client_seed.valid": "Your seed was used",
  "start.first": "First player",
  "turn.order": "Turns in order",
  "roll.count": "At most three rolls a turn",
  "roll.hold": "Holds",
  "roll.dice": "Every die re-derived",
  "score.category": "Every box legal",
  "score.points": "Every box re-scored",
  "game.complete": "Game complete",
  "final.totals": "Totals",
  "final.winner": "Result",
  "bot.identity": "Published bots",
  "bot.decision": "Bot moves replayed",
  "receipt.match": "Your receipt",
};

function tick(ok) {
  return h("span.tick", { role: "img", class: ok === true ? "ok" : ok === false ? "bad" : "na", "aria-label": ok === true ? "passed" : ok === false ? "failed" : "not checked" },
    ok === true ? "✓" : ok === false ? "✗" : "–");
}

function renderReport(box, report, log, summaryEl = $("#verify-summary"), host = $("#fairness")) {
  if (report.error) { // not a log at all
    host.dataset.verdict = "fail";
    summaryEl.textContent = `✗ Not a fairdice log: ${report.error}`;
    box.replaceChildren();
    return;
  }
  const rolls = report.rolls;
  const good = rolls.filter((r) => r.ok).length;
  const names = (ok) => report.checks.filter((c) => c.ok === ok && c.status !== "note").map((c) => CHECK_NAMES[c.id] || c.id).join(", ");
  // ok null: nothing failed, but something could not be checked here (the optimal bot, Ed25519)
  host.dataset.verdict = report.ok === true ? "pass" : report.ok === false ? "fail" : "partial";
  summaryEl.textContent = report.ok === true
    ? `✓ Verified in your browser: ${good} of ${rolls.length} rolls re-derived`
    : report.ok === false ? `✗ Verification failed: ${names(false)}`
      : `– Not fully verified in your browser (${names(null)}): run fairdice-verify on the downloaded log`;
  const checks = h("ul.checks", report.checks.map((c) => h("li", { "data-check": c.id, class: c.ok === false ? "bad" : "" }, tick(c.ok),
    h("span", h("strong", CHECK_NAMES[c.id] || c.id), h("span.detail", c.detail)))));
  const seeds = h("dl.seeds",
    h("dt", "Client seed" + (report.clientSeeds.length > 1 ? "s" : "")), h("dd", report.clientSeeds.map((s) => h("code", s))));
  // rolls grouped by seat turn
  const names = (log.header.seats || []).map((s, i) => (S.game && i === mySeat() && log.header.game_id === S.game.game_id ? "You" : s.name));
  const scores = new Map();
  const scoreOk = new Map((report.scores || []).map((x) => [x.index, x]));
  log.events.forEach((e, i) => { if (e.type === "score") scores.set(`${e.seat}:${e.turn}`, { ...e, check: scoreOk.get(i) }); });
  const groups = new Map();
  for (const r of rolls) {
    const k = `${r.seat}:${r.turn}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  const rulesOf = S.rules[log.header.rules];
  const label = (id) => (rulesOf && rulesOf.categories.find((c) => c.id === id)?.label) || id;
  const list = h("ol.rolls");
  for (const [k, rs] of groups) {
    const [seat, turn] = k.split(":").map(Number);
    const sc = scores.get(k);
    list.append(h("li", { class: rs.every((r) => r.ok) && (!sc || !sc.check || sc.check.ok) ? "" : "bad" },
      h("span.who", `T${turn} · ${names[seat] ?? "seat " + seat}`),
      h("span.seq", rs.map((r) => h("span.roll", { "data-event": String(r.index), class: r.ok ? "ok" : "bad", title: r.ok ? "re-derived" : r.detail },
        h("span.mini", (r.dice || []).map((d, p) => h("span.mini-die", { class: r.hold.includes(p) ? "kept" : "" }, String(d)))),
        tick(r.ok)))),
      sc ? h("span.scored", { title: sc.check && !sc.check.ok ? sc.check.detail : "" }, `${label(sc.category)} ${sc.points}`,
        sc.check && !sc.check.ok ? [" ", tick(false)] : null) : null));
  }
  const rolloff = report.rolloff.length ? h("div.rolloff", h("strong", "Roll-off for the first turn"),
    h("ul", report.rolloff.map((r) => h("li.roll", { class: r.ok ? "ok" : "bad" },
      h("span.who", `${report.rolloff.some((x) => x.round > 1) ? `round ${r.round} · ` : ""}${names[r.seat] ?? "seat " + r.seat}`),
      h("span.mini", (r.dice || []).map((d) => h("span.mini-die", String(d)))),
      h("span.muted", `= ${(r.dice || []).reduce((a, b) => a + b, 0)}`), tick(r.ok))))) : null;
  box.replaceChildren(...[checks, seeds, rolloff].filter(Boolean), h("details.rolls-box", { open: true },
    h("summary", `Every roll (${good}/${rolls.length} ✓; held dice shaded)`), list));
}

function downloadLog() {
  if (!S.log) return;
  const blob = new Blob([JSON.stringify(S.log, null, 1) + "\n"], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: fileName(S.log) });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 2000);
}

// ------------------------------------------------------------------ dialogs

function openRules(which) {
  const ids = Object.keys(S.rules);
  const tabs = $("#rules-tabs");
  const pick = (id) => {
    const r = S.rules[id];
    $$("button", tabs).forEach((b) => b.setAttribute("aria-selected", b.dataset.id === id ? "true" : "false"));
    $("#rules-body").replaceChildren(
      h("p", r.blurb || r.summary || ""),
      h("table.rules-table", h("thead", h("tr", h("th", "Box"), h("th", "Condition"), h("th", "Score"))),
        h("tbody", r.categories.map((c) => h("tr", h("th", { scope: "row" }, c.label), h("td", c.when || ""), h("td", c.score || ""))))),
      h("p", h("strong", `Upper bonus +${r.upper_bonus}`), " when Ones to Sixes reach 63."),
      h("ul", (r.notes || []).map((n) => h("li", n))));
  };
  tabs.replaceChildren(...ids.map((id) => h("button", { type: "button", role: "tab", "data-id": id, onclick: () => pick(id) }, S.rules[id].name)));
  $("#rules-general").replaceChildren(...GENERAL.map((t) => h("li", t)));
  pick(which && S.rules[which] ? which : (S.view && S.view.rules) || ids[0]);
  $("#rules-dialog").showModal();
}

function openVerifyDialog() {
  $("#verify-paste").value = "";
  $("#verify-out").replaceChildren();
  $("#verify-dialog-summary").textContent = "";
  $("#verify-dialog").showModal();
}

async function verifyPasted() {
  const out = $("#verify-out");
  try { // the text itself: verify.js parses it strictly (a duplicate key is refused, not resolved)
    const report = await verifyLog($("#verify-paste").value, { trustedKeys: S.trustedKeys });
    renderReport(out, report, report.document, $("#verify-dialog-summary"), $("#verify-dialog"));
  } catch (err) {
    $("#verify-dialog-summary").textContent = `✗ ${err.message}`;
    $("#verify-dialog").dataset.verdict = "fail";
  }
}

// ------------------------------------------------------------------ wiring

function showLobbyScreen() {
  store.clearCurrent();
  S.game = null;
  S.state = null;
  S.view = null;
  S.created = null;
  show("lobby");
  renderLobby();
  resetLobby();
}

function onKey(e) {
  if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
  if (document.querySelector("dialog[open]")) return;
  if (e.target.closest("input, textarea, select")) return;
  if ($("#game").hidden) return;
  if (e.key >= "1" && e.key <= "5") {
    toggleHold(Number(e.key) - 1);
    e.preventDefault();
  } else if (e.key === "r" || e.key === "R") {
    doRoll();
    e.preventDefault();
  } else if (e.key === "h" || e.key === "H") {
    if (!$("#hint-btn").hidden) doHint();
    e.preventDefault();
  }
}

function wire() {
  const dice = $("#dice");
  dice.replaceChildren(...[0, 1, 2, 3, 4].map((i) => h("button.die", { type: "button", "data-pos": String(i), "data-face": "0", onclick: () => toggleHold(i) },
    Array.from({ length: 9 }, () => h("i")), h("span.key", String(i + 1)))));
  $("#lobby-form").addEventListener("submit", createGame);
  $("#lobby-form").addEventListener("change", (e) => {
    if (e.target.name === "opponent" || e.target.name === "rules" || e.target.name === "first") store.setLobby(lobbyChoices());
    syncLobby();
  });
  $("#client-seed").addEventListener("input", () => {
    syncLobby();
    if (S.created && S.game) store.setCurrent({ ...S.game, seed_draft: $("#client-seed").value });
  });
  $("#new-seed").addEventListener("click", () => { $("#client-seed").value = randomSeed(); syncLobby(); });
  $("#start-btn").addEventListener("click", sendSeed);
  $("#cancel-btn").addEventListener("click", cancelCreated);
  $("#speed").addEventListener("change", (e) => store.setPrefs({ speed: e.target.value }));
  $("#player-name").addEventListener("change", (e) => store.setPrefs({ name: e.target.value.trim() || "You" }));
  $("#roll-btn").addEventListener("click", doRoll);
  $("#hint-btn").addEventListener("click", doHint);
  $("#abandon-btn").addEventListener("click", doAbandon);
  $("#new-game-btn").addEventListener("click", showLobbyScreen);
  $("#download-btn").addEventListener("click", downloadLog);
  $("#copy-cmd").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("#verify-cmd").textContent);
      toast("Command copied.", "info");
    } catch {
      toast("Copy failed: select the command and copy it by hand.", "info");
    }
  });
  $("#game-commit").addEventListener("click", () => S.view && toast(`Server commitment, SHA-256 of its secret seed: ${S.view.commitment}`, "info"));
  $("#nav-rules").addEventListener("click", () => openRules($("input[name=rules]:checked")?.value));
  $("#nav-verify").addEventListener("click", openVerifyDialog);
  $("#nav-home").addEventListener("click", (e) => {
    e.preventDefault();
    if (S.view && S.view.status === "playing") {
      toast("This game is saved: finish or abandon it first (a reload brings you back to it).", "info");
      return;
    }
    showLobbyScreen();
  });
  $("#verify-run").addEventListener("click", verifyPasted);
  $("#verify-file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    if (f) {
      $("#verify-paste").value = await f.text();
      verifyPasted();
    }
  });
  for (const d of $$("dialog")) {
    d.addEventListener("click", (e) => { if (e.target === d) d.close(); }); // click on the backdrop closes
  }
  document.addEventListener("keydown", onKey);
}

async function boot() {
  wire();
  const [rules, bots, keys] = await Promise.allSettled([api.rules(), api.bots(), api.keys()]);
  if (rules.status === "fulfilled") S.rules = mergeRules(rules.value);
  if (bots.status === "fulfilled") S.bots = bots.value.bots || [];
  if (keys.status === "fulfilled") S.trustedKeys = (keys.value.keys || []).map((k) => k.public_key);
  if (rules.status === "rejected") toast("The server cannot be reached; showing what this page knows.");
  const current = store.current();
  if (current) {
    await openGame(current);
    if (!$("#game").hidden || !$("#lobby").hidden) return;
  }
  showLobbyScreen();
}

boot().catch((err) => {
  toast(problemText(err));
  show("lobby");
});

// for tests and the curious: the page's verification module is also importable directly
export { verifyLog, RULES };
