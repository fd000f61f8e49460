// The dialogs' controller: the rules, how provably fair dice work, and "Verify a log" (a pasted or chosen file,
// held to the receipts this browser kept for its game). Drawing them is dialogs.js's and report.js's; report.js
// and the verification come with the end screen's module (app.endScreen), loaded when a log is first checked.

import { $, h, on } from "./dom.js";
import { Screen } from "./state.js";
import { checkSeats, fileBytes, gameIdOf } from "./verification.js";
import { problemText } from "./problems.js";
import { renderRules } from "./dialogs.js";

function decodeText(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

export class DialogsScreen extends Screen {
  openRules(which) {
    renderRules(this.t, this.st.rules, which || (this.st.view && this.st.view.rules));
    $("#rules-dialog").showModal();
  }

  openVerifyDialog() {
    $("#verify-paste").value = "";
    $("#verify-out").replaceChildren();
    $("#verify-dialog-summary").textContent = "";
    delete $("#verify-dialog").dataset.verdict;
    $("#verify-dialog").showModal();
  }

  /** Verify what the player pasted or chose (text or a file's bytes), held to a receipt this browser kept. */
  async verifyInput(input) {
    const out = $("#verify-out");
    const summaryEl = $("#verify-dialog-summary");
    const host = $("#verify-dialog");
    const t = this.t;
    if (typeof input === "string" && !input.trim()) {
      summaryEl.textContent = t.t("verifyDialog.empty");
      return;
    }
    try {
      // held to every receipt this browser kept for the game: its seats' seed receipts and the move receipts
      const text = typeof input === "string" ? input : decodeText(input);
      const gameId = text === null ? null : gameIdOf(text);
      const [{ renderNotLog, renderReport }, end] = await Promise.all([import("./report.js"), this.app.endScreen()]);
      const results = await checkSeats(input, { receipts: gameId === null ? [] : this.app.session.receiptsFor(gameId),
        moveReceipts: gameId === null ? [] : this.app.session.moveReceiptsFor(gameId), trustedKeys: this.st.trustedKeys });
      const { report, notLog } = results.find((r) => r.notLog || r.report.ok === false) || results[0];
      if (notLog) return renderNotLog({ t, box: out, summaryEl, host, notLog });
      renderReport({ t, box: out, summaryEl, host, report, names: end.namesFor(report.document),
        rules: this.st.rules[report.document.header.rules] });
    } catch (err) {
      host.dataset.verdict = "fail";
      summaryEl.textContent = t.t("notLog.title");
      out.replaceChildren(h("p.bad", problemText(t, err)));
    }
  }

  async verifyFile(file) {
    const bytes = await fileBytes(file);
    const text = decodeText(bytes);
    $("#verify-paste").value = text !== null && text.length < 200_000 ? text : "";
    await this.verifyInput(bytes);
  }

  /** The commitment of the game played (the chip at the table): its whole fingerprint, what it is for, its key. */
  openCommitment(view) {
    $("#commit-dialog-hash").textContent = view.commitment;
    $("#commit-dialog-key").textContent = view.key_id ? this.t.t("commitDialog.key", { key: view.key_id }) : "";
    $("#commit-dialog").showModal();
  }

  /** The guide (guide.js, loaded on first use) at `section`. */
  async openGuide(section) {
    try {
      (await import("./guide.js")).openGuide(section);
    } catch (err) {
      this.app.toastProblem(err);
    }
  }

  /** What opens a dialog, and "Verify a log"'s own controls. */
  wire() {
    on("#open-guide", "click", () => this.openGuide());
    on("#nav-rules", "click", () => this.openRules($("input[name=rules]:checked")?.value));
    on("#nav-verify", "click", () => this.openVerifyDialog());
    for (const id of ["#how-link", "#how-link-end"]) on(id, "click", () => $("#how-dialog").showModal());
    on("#verify-run", "click", () => this.verifyInput($("#verify-paste").value));
    on("#verify-file", "change", (e) => { const f = e.target.files[0]; if (f) this.verifyFile(f); });
  }
}
