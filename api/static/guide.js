// The guide, "How to play & tips" (issue 22): the rules of each rule set with an example hand per box, drawn as the
// board draws its dice; the tips; the questions (those a provably fair site owes its players too); the glossary.
// A dialog of its own, opened by `openGuide(section)`: the page loads this module when the header's button (test id
// `open-guide`, named by the page's own catalogues) is first pressed, so that the first load does without it.
//
// It knows the rest of the page only through the DOM, so that the screens can change without it: the language is
// <html lang> (set by the app), a game is on when the game screen shows its hint button, and asking the hint is
// pressing that button. Words: i18n/guide.en.js and i18n/guide.zh.js; facts: guide_data.js; box and rule set names:
// the page's catalogues (rules.js). Importing it does nothing.

import { $, h } from "./dom.js";
import { translator } from "./i18n.js";
import { boxLabel, RULES, rulesName } from "./rules.js";
import { drawnDie } from "./board.js";
import en from "./i18n/guide.en.js";
import zh from "./i18n/guide.zh.js";
import { HANDS, JOKER_CASES, QUESTIONS, SECTIONS, TERMS, THREE_OF_EACH, TIPS } from "./guide_data.js";

const CATALOGUES = { en, zh };
const own = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
/** An answer's line that is only this placeholder is shown as a command, not a paragraph. */
const COMMAND_LINE = "{cmd}";
/** ... and this one as the link to the fair-dice page (ui/dice.html), worded by the question's own "link". */
const DICE_LINE = "{dice}";

/** The page's language as the app declared it on <html lang> ("zh-CN" is "zh"). */
export function pageLanguage() {
  return document.documentElement.lang.toLowerCase().startsWith("zh") ? "zh" : "en";
}

/** The guide's words in `lang` (English where a key is missing), with the page's translator `t` for the names of
 * boxes, rule sets and buttons, so that the guide calls everything what the board calls it. */
export function guideWords(lang) {
  const t = translator(lang);
  const catalogue = CATALOGUES[t.lang] || en;
  const raw = (key) => (own(catalogue, key) ? catalogue[key] : en[key]);
  const fill = (text, params) => String(text).replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name) => {
    if (!own(params, name)) return whole;
    return typeof params[name] === "number" ? t.number(params[name]) : String(params[name]);
  });
  const has = (key) => raw(key) !== undefined;
  return {
    t,
    has,
    say: (key, params = {}) => (has(key) ? fill(raw(key), params) : key),
    lines: (key, params = {}) => [].concat(raw(key) ?? []).map((line) => fill(line, params)),
    /** The rule set's own key when it has one, else the generic one (a box described alike everywhere). */
    pick: (specific, generic) => (has(specific) ? specific : generic),
  };
}

// ------------------------------------------------------------------ pictures

/** Five dice and what they score: the board's dice, the points beside them (a 0 in the seeds' grey-red). */
function handPicture(w, dice, score, bonus = 0) {
  const points = w.say("rules.score", { score }) + (bonus ? ` +${w.t.number(bonus)}` : "");
  return h("span.hand",
    h("span.hand-dice", { role: "img", "aria-label": w.say("rules.hand", { dice: dice.join(" "), score }) }, dice.map(drawnDie)),
    h("span.hand-score", { class: score ? "" : "zero", "aria-hidden": "true" }, points));
}

/** A roll with the dice to keep raised and marked, as the board shows held dice. */
function holdPicture(w, tip) {
  const dice = tip.hold.dice.map((face, i) => {
    const die = drawnDie(face);
    if (tip.hold.keep.includes(i)) {
      die.classList.add("held");
      die.dataset.held = w.t.t("dice.held");
    }
    return die;
  });
  return h("figure.guide-hold", h("div.hand-dice", { "aria-hidden": "true" }, dice),
    h("figcaption", w.say(`tip.${tip.id}.picture`)));
}

// ------------------------------------------------------------------ the rules

function boxRule(w, rulesId, c) {
  if (c.section === "upper") return w.say("box.upper", { face: c.face });
  return w.say(w.pick(`box.${rulesId}.${c.id}`, `box.${c.id}`));
}

/** One rule set: its boxes by section, each with its rule and example hands, the upper bonus, and the joker. */
function rulesPanel(w, id) {
  const rules = RULES[id];
  const item = (c) => h("li.guide-box", { "data-category": c.id },
    h("p", h("strong", boxLabel(w.t, rules, c.id)), " ", boxRule(w, id, c)),
    h("div.guide-hands", (HANDS[id][c.id] || []).map((x) => handPicture(w, x.dice, x.score))));
  const section = (name) => rules.categories.filter((c) => (c.section === "upper") === (name === "upper"));
  const threes = THREE_OF_EACH.map((face) => 3 * face);
  const sum = `${threes.map((n) => w.t.number(n)).join(" + ")} = ${w.t.number(threes.reduce((a, b) => a + b, 0))}`;
  return [
    h("p.guide-set", w.say(`rules.set.${id}`, { bonus: rules.upper_bonus, yahtzeeBonus: rules.yahtzee_bonus })),
    h("h5", w.say("rules.upper")),
    h("ul.guide-boxes", section("upper").map(item)),
    h("p.guide-bonus", w.say("rules.upperBonus", { threshold: rules.upper_threshold, bonus: rules.upper_bonus, sum })),
    h("h5", w.say("rules.lower")),
    h("ul.guide-boxes", section("lower").map(item)),
    rules.yahtzee_bonus ? jokerPart(w, rules) : null,
  ];
}

/** classic13's forced joker and Yahtzee bonus, with the cases of guide_data.js drawn. */
function jokerPart(w, rules) {
  const name = (id) => boxLabel(w.t, rules, id);
  return h("div.guide-joker",
    h("h5", w.say("joker.title")),
    h("p", w.say("joker.intro", { yahtzeeBonus: rules.yahtzee_bonus })),
    h("ul.guide-boxes", JOKER_CASES.map((c) => h("li.guide-box", { "data-joker": c.id },
      h("p", w.say(`joker.${c.id}`, { face: c.dice[0], box: name(c.box), score: c.score, bonus: c.bonus,
        filled: w.t.list(Object.keys(c.filled).filter((id) => id !== "yahtzee").map(name)) })),
      h("div.guide-hands", handPicture(w, c.dice, c.score, c.bonus))))));
}

/** The rule set shown first: the one chosen in the lobby (the game's, during one). */
function chosenRules() {
  const checked = document.querySelector("input[name=rules]:checked");
  return checked && own(RULES, checked.value) ? checked.value : Object.keys(RULES)[0];
}

/** A step of the turn: its name (the words before the first colon) in bold. */
function step(line) {
  const at = line.search(/[:：]/);
  return at > 0 ? h("li", h("strong", line.slice(0, at + 1)), line.slice(at + 1)) : h("li", line);
}

function rulesPart(w) {
  const ids = Object.keys(RULES);
  const panel = h("div.guide-panel", { "aria-live": "polite" });
  const picker = h("div.guide-pick", { role: "group", "aria-label": w.say("rules.pick") });
  const show = (id) => {
    for (const b of picker.children) b.setAttribute("aria-pressed", b.dataset.rules === id ? "true" : "false");
    panel.dataset.rules = id;
    panel.replaceChildren(...rulesPanel(w, id));
  };
  picker.append(...ids.map((id) => h("button", { type: "button", "data-rules": id, onclick: () => show(id) },
    rulesName(w.t, RULES[id], id))));
  show(chosenRules());
  return [
    h("h4", w.say("rules.turn")),
    h("ol.guide-steps", w.lines("rules.steps").map(step)),
    h("h4", w.say("rules.sets")),
    picker,
    panel,
  ];
}

// ------------------------------------------------------------------ tips, questions, terms

/** The live hint, where a game is on: the game screen's own hint button, pressed for the player. */
function askHint(w, close) {
  const button = $("#hint-btn");
  if (document.body.dataset.screen !== "game" || !button || button.hidden) return null;
  return h("div.guide-ask",
    h("button.ghost", { type: "button", "data-testid": "tip-hint", disabled: button.disabled, onclick: () => {
      close();
      button.click();
    } }, w.say("tip.askHint")),
    button.disabled ? h("span.muted", w.say("tip.hintLater")) : null);
}

function tipsPart(w, close) {
  return h("ol.guide-tips", TIPS.map((tip) => h("li", { "data-tip": tip.id },
    h("h4", w.say(`tip.${tip.id}.title`)),
    h("p", w.say(`tip.${tip.id}.text`, { hint: w.t.t("game.hint") })),
    tip.hold ? holdPicture(w, tip) : null,
    tip.hint ? askHint(w, close) : null)));
}

function faqPart(w) {
  // the end screen's downloads, by the names their buttons carry
  const names = { download: w.t.t("fair.download"), receipt: w.t.t("fair.receipt"), moves: w.t.t("fair.moves") };
  return h("div.guide-faq", QUESTIONS.map((id) => h("details", { "data-question": id },
    h("summary", w.say(`faq.${id}.q`)),
    w.lines(`faq.${id}.a`, names).map((line) => (line === COMMAND_LINE
      ? h("pre.guide-cmd", h("code", w.say(`faq.${id}.cmd`)))
      : line === DICE_LINE ? h("p", h("a", { href: "ui/dice.html", "data-testid": "guide-dice-page" }, w.say(`faq.${id}.link`)))
        : h("p", line))))));
}

function glossaryPart(w) {
  return h("dl.guide-terms", TERMS.map((id) => h("div", { "data-term": id },
    h("dt", w.say(`term.${id}.name`)), h("dd", w.say(`term.${id}.text`)))));
}

// ------------------------------------------------------------------ the dialog

let dialog = null;

function parts(w, close) {
  return { rules: rulesPart(w), tips: tipsPart(w, close), faq: faqPart(w), glossary: glossaryPart(w) };
}

/** Draw the whole guide in the page's language (again on a change of language). */
function render() {
  const w = guideWords(pageLanguage());
  const close = () => dialog.close();
  const go = (id) => dialog.querySelector(`[data-section="${id}"]`).scrollIntoView({ block: "start" });
  const content = parts(w, close);
  dialog.replaceChildren(
    h("div.guide-head",
      h("div.guide-top",
        h("h2#guide-title", w.say("title")),
        h("button.ghost.close", { type: "button", "aria-label": w.say("close"), onclick: close }, "✕")),
      h("nav.guide-nav", { "aria-label": w.say("nav.label") }, SECTIONS.map((s) => h("button.ghost", {
        type: "button", "data-go": s.id, onclick: () => go(s.id) }, w.say(`nav.${s.id}`))))),
    h("div.guide-body",
      h("p.guide-intro", w.say("intro")),
      SECTIONS.map((s) => h("section.guide-part", {
        "data-section": s.id, "data-testid": s.testid, "aria-labelledby": `guide-${s.id}-title`,
      }, h("h3", { id: `guide-${s.id}-title` }, w.say(`${s.id}.title`)), content[s.id]))));
}

function makeDialog() {
  dialog = h("dialog.guide#guide-dialog", { "data-testid": "guide", "aria-labelledby": "guide-title" });
  dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); }); // the backdrop
  document.body.append(dialog);
  followLanguage();
}

/** Open the guide at `section` ("rules", "tips", "faq" or "glossary"), drawn for the page as it is now. */
export function openGuide(section = "rules") {
  if (!dialog) makeDialog();
  render();
  if (!dialog.open) dialog.showModal();
  const target = dialog.querySelector(`[data-section="${section}"]`);
  if (target && section !== SECTIONS[0].id) target.scrollIntoView({ block: "start" });
  else dialog.scrollTop = 0;
}

/** A guide that is open follows the page's language (the app sets <html lang>). */
function followLanguage() {
  new MutationObserver(() => {
    if (dialog && dialog.open) {
      const at = dialog.scrollTop;
      render();
      dialog.scrollTop = at;
    }
  }).observe(document.documentElement, { attributes: true, attributeFilter: ["lang"] });
}
