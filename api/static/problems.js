// The server's refusals (problem documents with a stable `code`), a refused commitment and this page's own
// failures, in the player's words: the catalogue's "problem.<code>", never the server's English detail, and
// when to try again where the server said so (Retry-After of a 429 or a 503). No DOM here.

import { ApiProblem } from "./api.js";
import { CommitmentRejected } from "./verification.js";

/** The catalogue key for a refusal: its own code, else one for its status (a code this page does not know yet). */
function problemKey(t, err) {
  if (err.code && t.has(`problem.${err.code}`)) return `problem.${err.code}`;
  if (err.status === 429) return "problem.too_many_requests";
  if (err.status === 503) return "problem.service_unavailable";
  if (err.status >= 500) return "problem.internal_error";
  return null;
}

/** A problem from the server (by its code), a refused commitment, or a failure of this page, in words. */
export function problemText(t, err) {
  if (err instanceof ApiProblem) {
    const key = problemKey(t, err);
    const message = key ? t.t(key) : t.t("problem.other", { code: err.code || `HTTP ${err.status}` });
    const wait = err.retryAfter;
    return (err.status === 429 || err.status === 503) && Number.isFinite(wait) && wait > 0
      ? t.t("problem.retryAfter", { message, seconds: wait }) : message;
  }
  if (err instanceof CommitmentRejected) return t.t("problem.commitment_rejected");
  return t.t("toast.unexpected", { detail: (err && err.message) || String(err) });
}
