// The page's languages: one message catalogue per language (i18n/en.js, i18n/zh.js), a choice made from
// the browser's languages (or the player's own, remembered), and `t(key, params)` to say things.
//
// A message is a string with {placeholders}, or a choice between forms: {$: "param", one: ..., other: ...}
// picks by the plural category of a number (Intl.PluralRules: "one", "other"; "=0" for an exact number
// first), or by the value of a string param (e.g. {$: "who", me: "You win!", other: "{name} wins"});
// "other" is the fallback. Numbers in placeholders are written by Intl.NumberFormat of the language.
// No DOM work here: the page applies the texts (app.js), tests call these functions directly.

import en from "./i18n/en.js";
import zh from "./i18n/zh.js";

export const LANGUAGES = Object.freeze({
  en: { tag: "en", catalogue: en },
  zh: { tag: "zh-CN", catalogue: zh },
});
export const DEFAULT_LANGUAGE = "en";
const own = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

/** The first of the browser's languages (BCP 47 tags, best first) that the page speaks, else English. */
export function chooseLanguage(browserLanguages, saved = null) {
  if (saved && own(LANGUAGES, saved)) return saved;
  for (const tag of browserLanguages || []) {
    const primary = String(tag).toLowerCase().split(/[-_]/)[0];
    if (own(LANGUAGES, primary)) return primary;
  }
  return DEFAULT_LANGUAGE;
}

function lookup(catalogue, key) {
  return own(catalogue, key) ? catalogue[key] : undefined;
}

/** A translator for one language: {lang, tag, t, lines, has, number, list, either}. Missing keys fall back to English. */
export function translator(lang) {
  const { tag, catalogue } = LANGUAGES[lang] || LANGUAGES[DEFAULT_LANGUAGE];
  const plurals = new Intl.PluralRules(tag);
  const numbers = new Intl.NumberFormat(tag, { maximumFractionDigits: 1 });
  const lists = new Intl.ListFormat(tag, { style: "long", type: "conjunction" });
  const choices = new Intl.ListFormat(tag, { style: "long", type: "disjunction" });

  function choose(message, params) {
    while (message && typeof message === "object") {
      const value = params[message.$];
      let form;
      if (typeof value === "number") form = message[`=${value}`] ?? message[plurals.select(value)];
      else if (value !== undefined && value !== null) form = message[String(value)];
      message = form ?? message.other;
    }
    return message;
  }

  function format(template, params) {
    return template.replace(/\{([A-Za-z0-9_]+)\}/g, (whole, name) => {
      if (!own(params, name)) return whole;
      const value = params[name];
      return typeof value === "number" ? numbers.format(value) : String(value);
    });
  }

  function raw(key) {
    const message = lookup(catalogue, key);
    return message === undefined ? lookup(en, key) : message;
  }

  function t(key, params = {}) {
    const message = raw(key);
    if (message === undefined) return key; // a missing key shows itself (the tests compare the catalogues)
    return format(String(choose(message, params) ?? ""), params);
  }

  /** A message that is a list of strings (paragraphs, rule notes), each formatted. */
  function lines(key, params = {}) {
    const message = raw(key);
    return Array.isArray(message) ? message.map((m) => format(String(choose(m, params) ?? ""), params)) : [];
  }

  return {
    lang: LANGUAGES[lang] ? lang : DEFAULT_LANGUAGE,
    tag,
    t,
    lines,
    has: (key) => raw(key) !== undefined,
    number: (x) => numbers.format(x),
    list: (items) => lists.format(items.map(String)),
    /** "a, b, or c": one of them */
    either: (items) => choices.format(items.map(String)),
  };
}

/** Every placeholder name a message uses, in all its forms (for the catalogue tests). */
export function placeholders(message) {
  const names = new Set();
  const walk = (m) => {
    if (m && typeof m === "object") Object.entries(m).forEach(([k, v]) => k !== "$" && walk(v));
    else for (const match of String(m).matchAll(/\{([A-Za-z0-9_]+)\}/g)) names.add(match[1]);
  };
  walk(message);
  return [...names].sort();
}
