// DOM helpers: building elements without innerHTML, and filling the page's static texts from a catalogue.

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
/** Listen for `type` on the element of `sel`. */
export const on = (sel, type, fn) => $(sel).addEventListener(type, fn);

/** h("div.cls#id", {attr: v, onclick: fn}, ...children): an element; text children are text nodes. */
export function h(spec, attrs, ...children) {
  const el = elementOf(spec);
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs); // (no attributes given: the second argument is the first child)
    attrs = null;
  }
  setAttributes(el, attrs || {});
  appendChildren(el, children);
  return el;
}

/** The element of a spec "tag.cls#id" (a div when the tag is left out). */
function elementOf(spec) {
  const [, tag = "div", rest = ""] = spec.match(/^([a-z0-9]*)(.*)$/i);
  const el = document.createElement(tag || "div");
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  return el;
}

/** on…: a listener; class: added to the spec's; text: the text; true: a bare attribute; null, false: none. */
function setAttributes(el, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = `${el.className} ${v}`.trim();
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
}

/** Nodes as they are, anything else as text; nested arrays flattened; null, undefined and false left out. */
function appendChildren(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Fill every [data-i18n] element's text and every [data-i18n-attr] attribute under `root` with `t`. */
export function applyTexts(root, t) {
  for (const el of $$("[data-i18n]", root)) el.textContent = t(el.dataset.i18n);
  for (const el of $$("[data-i18n-attr]", root)) {
    for (const pair of el.dataset.i18nAttr.split(";")) {
      const [attr, key] = pair.split(":").map((s) => s.trim());
      if (attr && key) el.setAttribute(attr, t(key));
    }
  }
}
