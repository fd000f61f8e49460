// The page's dialogs, worded from the catalogue: the rules, how provably fair dice work, and a yes/no question.

import { $, $$, h } from "./dom.js";
import { boxLabel, ruleKeys, rulesName } from "./rules.js";

/** Fill the rules dialog for `t` with the tab of rule set `which` selected (call again on a language change). */
export function renderRules(t, allRules, which) {
  const ids = Object.keys(allRules);
  const tabs = $("#rules-tabs");
  const selected = allRules[which] ? which : ids[0];
  const body = $("#rules-body");
  const pick = (id) => {
    const r = allRules[id];
    const keys = ruleKeys(t, id);
    $$("button", tabs).forEach((b) => {
      const on = b.dataset.id === id;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.tabIndex = on ? 0 : -1;
    });
    body.setAttribute("aria-labelledby", `rules-tab-${id}`);
    body.dataset.rules = id;
    const when = (c) => (c.section === "upper" ? t.t("when.upper") : t.t(keys.when(c.id)));
    const score = (c) => (c.section === "upper" ? t.t("score.upper", { face: c.face }) : t.t(keys.score(c.id)));
    body.replaceChildren(
      h("p", t.t(`rules.${id}.blurb`)),
      h("table.rules-table",
        h("thead", h("tr", h("th", { scope: "col" }, t.t("rules.col.box")), h("th", { scope: "col" }, t.t("rules.col.when")),
          h("th", { scope: "col" }, t.t("rules.col.score")))),
        h("tbody", r.categories.map((c) => h("tr", h("th", { scope: "row" }, boxLabel(t, r, c.id)), h("td", when(c)), h("td", score(c)))))),
      h("p", h("strong", t.t("rules.upperBonus", { bonus: r.upper_bonus, threshold: r.upper_threshold }))),
      h("ul", t.lines(`rules.${id}.notes`).map((n) => h("li", n))));
  };
  tabs.replaceChildren(...ids.map((id) => h("button", {
    type: "button", role: "tab", id: `rules-tab-${id}`, "aria-controls": "rules-body", "data-id": id,
    onclick: () => pick(id), onkeydown: (e) => moveTab(e, ids, id, pick),
  }, rulesName(t, allRules[id], id))));
  $("#rules-general").replaceChildren(...t.lines("rules.general").map((line) => h("li", line)));
  pick(selected);
}

function moveTab(e, ids, id, pick) {
  const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
  if (!step) return;
  const next = ids[(ids.indexOf(id) + step + ids.length) % ids.length];
  pick(next);
  document.getElementById(`rules-tab-${next}`).focus();
  e.preventDefault();
}

export function renderHow(t) {
  $("#how-steps").replaceChildren(...t.lines("how.steps").map((line) => h("li", line)));
}

/** A modal question; resolves true when confirmed (Escape or Cancel: false). */
export function askConfirm(title, text, okLabel) {
  const dlg = $("#confirm-dialog");
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = okLabel;
  dlg.returnValue = "";
  dlg.showModal();
  $("#confirm-cancel").focus();
  return new Promise((resolve) => {
    dlg.onclose = () => resolve(dlg.returnValue === "ok");
  });
}
