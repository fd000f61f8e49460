// The game screen drawn from a view (state.js) in the player's language: dice, the player's boxes, the score
// card of every seat, the last turns and the status line. Each function takes one `ctx`:
//   {t (translator), rules, seat (the seat whose boxes are shown: the player's), view, held (Set of positions), busy,
//    animating, hint ({hold?, category?, text, preparing?}), highlight ({seat, category}), touch (coarse pointer),
//    plays (false: this browser does not play `seat`, it watches), named (true: every seat is called by its name,
//    none "You": a spectator, or several players passing one device)}
// and draws; nothing here fetches or decides.

import { $, $$, h } from "./dom.js";
import { boxLabel, rulesName } from "./rules.js";
import { canHold, isOver, isTurnOf, MAX_ROLLS, progress, turnsOf } from "./state.js";

/** {who: "me" | "bot" | "other", name} of a seat, for the catalogue's choices. */
export function speaker(ctx, i) {
  if (i === ctx.seat && !ctx.named) return { who: "me", name: ctx.t.t("seat.label", { who: "me" }) };
  const s = ctx.view.seats[i];
  if (!s) return { who: "other", name: `#${i}` };
  if (s.type === "bot") return { who: "bot", name: botName(ctx.t, s.bot) };
  return { who: "other", name: s.name };
}

export function botName(t, id) {
  return t.has(`bot.${id}.name`) ? t.t(`bot.${id}.name`) : id;
}

/** A seat as a noun: "You", "EV bot", a player's name. */
export const seatLabel = (ctx, i) => ctx.t.t("seat.label", speaker(ctx, i));

export const myTurn = (ctx) => ctx.plays !== false && isTurnOf(ctx.view, ctx.seat) && !ctx.animating;

const box = (ctx, id) => boxLabel(ctx.t, ctx.rules, id);

export function gameTitle(ctx) {
  const { t, view, rules } = ctx;
  const bot = view.seats.find((s, i) => i !== ctx.seat && s.type === "bot");
  const others = view.seats.map((s, i) => i).filter((i) => i !== ctx.seat);
  const friends = ctx.named || view.seats.filter((s) => s.type === "human").length > 1 || others.length > 1;
  // a spectator, or friends passing one device: every seat by name; else the player's opponents
  const opponent = !others.length ? "solo" : ctx.named ? "table" : friends ? "friends" : "other";
  const names = t.list((ctx.named ? view.seats.map((s, i) => i) : others).map((i) => seatLabel(ctx, i)));
  return t.t("game.title", { opponent, rules: rulesName(t, rules, view.rules), bot: bot ? botName(t, bot.bot) : "", names });
}

export function roundText(ctx) {
  const { t, view } = ctx;
  const { filled, total } = progress(view, ctx.seat);
  if (view.status === "finished") return t.t("game.round.finished", { count: total });
  if (view.status === "abandoned") return t.t("game.round.abandoned", { count: filled, total });
  if (view.status !== "playing") return t.t("game.round.waiting");
  // the turn being played (the bot's too); between two turns, the player's next one
  return t.t("game.turn", { turn: Math.min(view.turn || filled + 1, total), total });
}

export function statusText(ctx) {
  const { t, view } = ctx;
  if (view.status === "finished") return t.t("status.over");
  if (view.status === "abandoned") return t.t("status.abandoned");
  if (view.status !== "playing" || view.current_seat === null) {
    return ctx.awaiting && ctx.awaiting.length ? t.t("status.waitingJoin", { names: t.list(ctx.awaiting) }) : t.t("status.waiting");
  }
  if (view.current_seat !== ctx.seat || ctx.plays === false) {
    const who = speaker(ctx, view.current_seat);
    // another person is to move: a player waits for them, a spectator watches them play
    return who.who === "other" && ctx.plays !== false ? t.t("status.waitingFor", who) : t.t("status.othersTurn", who);
  }
  if (view.rolls_made === 0) return ctx.named ? t.t("status.passTo", speaker(ctx, ctx.seat)) : t.t("status.roll");
  if (view.rolls_left === 0) return t.t("status.lastRoll");
  return t.t("status.holdOrPick", { input: ctx.touch ? "touch" : "other" });
}

// ------------------------------------------------------------------ dice

/** The five dice buttons, made once; `onToggle(position)` holds or frees one. */
export function makeDice(container, onToggle) {
  container.replaceChildren(...[0, 1, 2, 3, 4].map((i) => h("button.die", {
    type: "button", "data-pos": String(i), "data-face": "0", "data-testid": "die", onclick: () => onToggle(i),
  }, Array.from({ length: 9 }, () => h("i", { "aria-hidden": "true" })), h("span.key", { "aria-hidden": "true" }, String(i + 1)))));
}

/** One die showing `face` drawn as the board draws its dice (the pips of .die[data-face]), but not a button: a
 * picture, for the guide's example hands. */
export function drawnDie(face) {
  return h("span.die", { "data-face": String(face), "aria-hidden": "true" }, Array.from({ length: 9 }, () => h("i")));
}

export function renderDice(ctx, container) {
  const { t, view } = ctx;
  const hasDice = view.dice && view.dice.length === 5;
  const holdable = ctx.plays !== false && canHold(view, ctx.seat) && !ctx.animating;
  $$(".die", container).forEach((btn, i) => {
    const face = hasDice ? view.dice[i] : 0;
    if (!btn.classList.contains("tumbling")) btn.dataset.face = String(face);
    // held means "kept for the next roll": shown while a roll can follow, and while one is played out
    const held = ctx.held.has(i) && (holdable || ctx.animating);
    btn.classList.toggle("held", held);
    btn.classList.toggle("blank", !hasDice);
    btn.classList.toggle("hinted", !!(ctx.hint && ctx.hint.hold && ctx.hint.hold.includes(i)) && holdable);
    btn.dataset.held = t.t("dice.held");
    btn.setAttribute("aria-pressed", held ? "true" : "false");
    btn.disabled = !holdable || ctx.busy;
    btn.setAttribute("aria-label", t.t("dice.label", { state: !hasDice ? "blank" : held ? "held" : "free", n: i + 1, face }));
  });
}

export function renderControls(ctx, els) {
  const { t, view } = ctx;
  const mine = myTurn(ctx);
  els.roll.disabled = !(mine && view.rolls_left > 0) || ctx.busy;
  els.roll.dataset.rollsMade = mine ? String(view.rolls_made) : ""; // for tests and styles: where the turn is
  els.rollsLeft.textContent = view.status === "playing" && view.current_seat === ctx.seat
    ? t.t("game.rollsLeft", { count: view.rolls_left }) : "";
  els.hint.hidden = ctx.hintRoute === false || view.status !== "playing";
  els.hint.disabled = !mine || ctx.busy;
  els.hintText.textContent = ctx.hint ? ctx.hint.text : "";
  els.hintText.hidden = !ctx.hint;
  els.hintText.dataset.state = ctx.hint && ctx.hint.preparing ? "preparing" : "ready"; // (the engine warms up: it comes by itself)
}

// ------------------------------------------------------------------ the player's boxes

/** What the player may record now: the server's options, on the player's turn after a roll. */
function optionsNow(ctx) {
  return myTurn(ctx) && ctx.view.rolls_made > 0 ? ctx.view.options || {} : {};
}

/** A box's tile: a button while the box is open (choosable now or later), a plain tile once it is filled (done:
 * not a button, not focusable, read as its name and points). */
function boxTile(ctx, c, filled, onPick) {
  if (filled) {
    return h("div.box.filled", { "data-category": c.id, "data-testid": `box-${c.id}` },
      h("span.box-name", { "aria-hidden": "true" }, box(ctx, c.id)), h("span.box-value", { "aria-hidden": "true" }),
      h("span.sr.box-said"));
  }
  return h("button.box", { type: "button", "data-category": c.id, "data-testid": `box-${c.id}`, onclick: () => onPick(c.id) },
    h("span.box-name", box(ctx, c.id)), h("span.box-value"));
}

/** One tile per box of the player's card, in table order (made once per game, then updated in place; a tile
 * becomes a plain one when its box is filled). */
export function renderBoxes(ctx, container, onPick) {
  const { view, rules } = ctx;
  const me = view.seats[ctx.seat];
  const isFilled = (id) => me.card[id] !== null && me.card[id] !== undefined;
  buildBoxGrid(ctx, container, (c) => boxTile(ctx, c, isFilled(c.id), onPick));
  const options = optionsNow(ctx);
  for (const c of rules.categories) {
    let el = $(`.box[data-category="${c.id}"]`, container);
    const filled = isFilled(c.id);
    if (filled !== el.classList.contains("filled")) { // filled now (or a board gone back: a reload)
      const next = boxTile(ctx, c, filled, onPick);
      el.replaceWith(next);
      el = next;
    }
    el.className = filled ? "box filled" : "box";
    if (filled) drawFilledBox(ctx, el, c.id, me.card[c.id]);
    else if (options[c.id]) drawChoosableBox(ctx, el, c.id, options[c.id]);
    else drawUnchoosableBox(ctx, el, c.id);
    el.classList.toggle("hinted", !!(ctx.hint && ctx.hint.category === c.id));
    el.classList.toggle("flash", !!(ctx.highlight && ctx.highlight.seat === ctx.seat && ctx.highlight.category === c.id));
  }
  $(".upper-line", container).textContent = upperLine(ctx, me);
}

/** The grid of tiles, made again only for another game, seat, rule set or language (else kept, to update). */
function buildBoxGrid(ctx, container, tile) {
  const cats = ctx.rules.categories;
  const key = `${ctx.view.game_id}:${ctx.seat}:${cats.map((c) => c.id).join(",")}:${ctx.t.lang}`;
  if (container.dataset.key === key) return;
  container.replaceChildren(
    h("div.box-grid.upper", cats.filter((c) => c.section === "upper").map(tile)),
    h("p.upper-line"),
    h("div.box-grid.lower", cats.filter((c) => c.section !== "upper").map(tile)));
  container.dataset.key = key;
}

/** A filled box: its points, and a sentence for a screen reader. */
function drawFilledBox(ctx, el, id, points) {
  if (points === 0) el.classList.add("zero");
  $(".box-value", el).textContent = ctx.t.number(points);
  $(".box-said", el).textContent = ctx.t.t("box.filled", { box: box(ctx, id), points });
}

/** A box the player may score now: the points it would take (with a Yahtzee bonus, a joker). */
function drawChoosableBox(ctx, el, id, o) {
  const t = ctx.t;
  const pts = o.points + (o.yahtzee_bonus || 0);
  el.classList.add(pts > 0 ? "pos" : "zero");
  $(".box-value", el).textContent = t.number(o.points) + (o.yahtzee_bonus ? ` +${t.number(o.yahtzee_bonus)}` : "")
    + (o.joker ? ` ${t.t("box.joker")}` : "");
  el.disabled = ctx.busy;
  el.setAttribute("aria-label", t.t("box.pick", { box: box(ctx, id), points: o.points, bonus: o.yahtzee_bonus || 0 }));
}

/** An open box that cannot be scored now: closed on the player's turn after a roll, else just open. */
function drawUnchoosableBox(ctx, el, id) {
  const closed = myTurn(ctx) && ctx.view.rolls_made > 0;
  el.classList.add(closed ? "closed" : "open");
  $(".box-value", el).textContent = closed ? "–" : "";
  el.disabled = true;
  el.setAttribute("aria-label", ctx.t.t(closed ? "box.closed" : "box.open", { box: box(ctx, id) }));
}

function upperLine(ctx, seat) {
  const { t, rules } = ctx;
  const { upper, upper_bonus: got } = seat.totals;
  const threshold = rules.upper_threshold;
  const head = t.t("boxes.upper", { sum: upper, threshold });
  const upperOpen = !isOver(ctx.view) && rules.categories.some((c) => c.section === "upper" && seat.card[c.id] === null);
  const tail = got ? t.t("boxes.bonusGot", { bonus: got })
    : upperOpen ? t.t("boxes.bonusToGo", { bonus: rules.upper_bonus, count: Math.max(0, threshold - upper) })
      : t.t("boxes.bonusMissed");
  // the house rule of SPEC §3.4 where the upper section is counted: it decides which boxes are open now
  const rule = ctx.view.upper_first && upperOpen ? `${t.t("game.upperFirst")} · ` : "";
  return `${rule}${head} · ${tail}`;
}

// ------------------------------------------------------------------ every seat's card

export function renderScorecard(ctx, table) {
  const { t, view, rules } = ctx;
  const me = ctx.seat;
  const order = [me, ...view.seats.map((_, i) => i).filter((i) => i !== me)];
  const head = h("thead", h("tr", h("th", { scope: "col" }, t.t("card.box")),
    order.map((i) => h("th", { scope: "col", class: view.current_seat === i && view.status === "playing" ? "turn" : "" }, seatLabel(ctx, i)))));
  const cell = (i, id) => {
    const val = view.seats[i].card[id];
    const flash = ctx.highlight && ctx.highlight.seat === i && ctx.highlight.category === id;
    if (val === null || val === undefined) return h("td.open");
    return h("td", { class: `filled${val === 0 ? " zero" : ""}${flash ? " flash" : ""}` }, t.number(val));
  };
  const row = (c) => h("tr.cat", { "data-category": c.id }, h("th", { scope: "row" }, box(ctx, c.id)), order.map((i) => cell(i, c.id)));
  const sumRow = (label, fn, cls = "") => h("tr.sum", { class: cls }, h("th", { scope: "row" }, label), order.map((i) => h("td", fn(view.seats[i]))));
  const threshold = rules.upper_threshold;
  const body = h("tbody",
    rules.categories.filter((c) => c.section === "upper").map(row),
    sumRow(t.t("card.upper"), (s) => {
      const up = s.totals.upper;
      const bar = h("span.bar", { "aria-hidden": "true" }, h("span"));
      bar.firstChild.style.width = `${Math.min(100, (up / threshold) * 100)}%`;
      if (s.totals.upper_bonus) bar.classList.add("done");
      return [h("span.upper-val", t.number(up), h("small", ` / ${t.number(threshold)}`)), bar];
    }, "upper-sum"),
    sumRow(t.t("card.bonus", { bonus: rules.upper_bonus }), (s) => {
      if (s.totals.upper_bonus) return h("span.good", `+${t.number(s.totals.upper_bonus)}`);
      const upperOpen = !isOver(view) && rules.categories.some((c) => c.section === "upper" && s.card[c.id] === null);
      return upperOpen ? h("small.muted", t.t("card.toGo", { count: Math.max(0, threshold - s.totals.upper) })) : h("span.muted", "0");
    }),
    rules.categories.filter((c) => c.section !== "upper").map(row),
    rules.yahtzee_bonus ? sumRow(t.t("card.yahtzeeBonus"), (s) => t.number(s.totals.yahtzee_bonus)) : null,
    sumRow(t.t("card.lower"), (s) => t.number(s.totals.lower)));
  const foot = h("tfoot", h("tr.total", h("th", { scope: "row" }, t.t("card.total")), order.map((i) => h("td", t.number(view.seats[i].totals.total)))));
  table.replaceChildren(h("caption.sr", t.t("card.caption")), head, body, foot);
}

/** The turn and every seat's total in one line (on a phone, where the card is further down). */
export function renderStrip(ctx, el) {
  const order = [ctx.seat, ...ctx.view.seats.map((_, i) => i).filter((i) => i !== ctx.seat)];
  el.replaceChildren(h("span.round", roundText(ctx)), ...order.map((i) => h("span", {
    class: ctx.view.current_seat === i && ctx.view.status === "playing" ? "turn" : "",
  }, ctx.t.t("strip.scores", { name: seatLabel(ctx, i), total: ctx.view.seats[i].totals.total }))));
}

// ------------------------------------------------------------------ the last turns

export function miniDice(roll) {
  return h("span.mini", (roll.dice || []).map((d, p) => h("span.mini-die", { class: roll.hold.includes(p) ? "kept" : "" }, String(d))));
}

export function renderMoves(ctx, list, boxEl) {
  const { t } = ctx;
  const turns = turnsOf(ctx.view.events);
  list.replaceChildren(...turns.slice(-6).reverse().map((g) => h("li", { class: g.seat === ctx.seat ? "me" : "" },
    h("span.who", t.t("moves.who", { who: seatLabel(ctx, g.seat), turn: g.turn })),
    h("span.seq", g.rolls.map(miniDice)),
    g.score ? h("span.scored", t.t("moves.scored", { box: box(ctx, g.score.category), points: g.score.points })
      + (g.score.yahtzee_bonus ? ` +${t.number(g.score.yahtzee_bonus)}` : ""))
      : h("span.muted", t.t("moves.pending")))));
  boxEl.hidden = !turns.length;
}

/** Every part of the game screen that depends on the view. */
export function renderBoard(ctx, els, onPick) {
  els.game.dataset.status = ctx.view.status;
  els.title.textContent = gameTitle(ctx);
  els.round.textContent = roundText(ctx);
  els.commit.textContent = ctx.t.t("game.commitChip", { short: `${ctx.view.commitment.slice(0, 8)}…` });
  els.commit.title = ctx.t.t("game.commitTitle", { commitment: ctx.view.commitment });
  els.abandon.hidden = isOver(ctx.view);
  renderDice(ctx, els.dice);
  renderControls(ctx, els);
  renderBoxes(ctx, els.boxes, onPick);
  renderScorecard(ctx, els.card);
  renderStrip(ctx, els.strip);
  renderMoves(ctx, els.moves, els.movesBox);
  if (!ctx.animating) els.status.textContent = statusText(ctx);
}

export { MAX_ROLLS };
