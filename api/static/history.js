// The history this page has shown, hashed by the page itself (SPEC §5.6), never taken from the server:
//
//     h_0 = SHA-256(field("fairdice-chain/v2") || field(game_id) || canonical(header))
//     h_i = SHA-256(h_(i-1) || canonical(event_i))
//
// Every answer of the server carries its move receipt, its signature over (n, h_n): the page refuses an answer
// without one, or one whose signature is not the game's key's, or whose chain is not the h_n of the events the
// page shows (SPEC §5.6, §5.7 "The player's checks"). What the player saw and what the server signed are then
// the same. Before a seat signs over this history, every event of it in the history must carry a valid
// signature by its own key (it made them). No DOM and no fetch here.

import { bytesToHex, concat, sha256 } from "./verify/bytes.js";
import { canonicalJSON } from "./verify/canonical.js";
import { chainDigests, moveReceiptBytes } from "./verify/chain.js";
import { ed25519Verify } from "./verify/keys.js";
import { signedBy } from "./signing.js";

/**
 * Why an answer of the server is refused: `reason` one of
 *   missing    the answer carries no move receipt
 *   game       the receipt is of another game
 *   count      it covers another number of events than the answer shows
 *   chain      its chain is not the h_n of the events the page shows
 *   signature  it is not signed by the game's key
 *   forged     an event of a seat of this device does not carry that seat's valid signature
 *   gap        the answer skips events the page has not shown (the page fetches them, it is not shown)
 */
export class AnswerRefused extends Error {
  constructor(reason, detail = {}) {
    super(`answer refused: ${reason}`);
    this.code = "answer_refused";
    this.reason = reason;
    this.detail = detail;
  }
}

/** h_i from h_(i-1) and event i (chainDigests, one step at a time: the page extends its chain as events come). */
const chainStep = (digest, event) => sha256(concat([digest, new TextEncoder().encode(canonicalJSON(event))]));

export class ShownHistory {
  /** `header`: the signed header, already checked against the server's keys (verification.js checkedHeader). */
  constructor(header, digests) {
    this.header = header;
    this.gameId = header.game_id;
    this.publicKey = header.public_key;
    this.events = [];
    this.digests = digests; // [h_0, ..., h_n]
    this.checkedOwn = 0; // events whose signatures by this device's seats have been checked
  }

  static async start(header) {
    return new ShownHistory(header, await chainDigests(header, []));
  }

  get count() {
    return this.events.length;
  }

  /** h_n of the history shown so far. */
  get head() {
    return this.digests[this.digests.length - 1];
  }

  /**
   * Take in an answer of the server (a move's answer or a game state): its events beyond those shown, then its
   * move receipt held to the page's own h_n. Resolves to the new events, to be shown; throws AnswerRefused.
   */
  async accept(answer) {
    const from = answer.events_from || 0;
    if (from > this.count) throw new AnswerRefused("gap", { known: this.count, from });
    const fresh = (answer.events || []).slice(this.count - from);
    const digests = [...this.digests];
    for (const event of fresh) digests.push(await chainStep(digests[digests.length - 1], event));
    await this.checkReceipt(answer.receipt, this.count + fresh.length, digests[digests.length - 1]);
    this.events = [...this.events, ...fresh];
    this.digests = digests;
    return fresh;
  }

  async checkReceipt(receipt, n, digest) {
    if (!receipt || typeof receipt !== "object") throw new AnswerRefused("missing");
    if (receipt.game_id !== this.gameId) throw new AnswerRefused("game", { found: receipt.game_id });
    if (receipt.events !== n) throw new AnswerRefused("count", { expected: n, found: receipt.events });
    const chain = bytesToHex(digest);
    if (receipt.chain !== chain) throw new AnswerRefused("chain", { expected: chain, found: receipt.chain, n });
    const ok = await ed25519Verify(this.publicKey, receipt.signature, moveReceiptBytes(this.gameId, n, digest));
    if (ok !== true) throw new AnswerRefused("signature", { n });
  }

  /** Every event of a seat of `keys` ({seat: public key hex}) carries that key's valid signature over its
   * command and the history before it (SPEC §5.7): checked once per event, before the page signs over it. */
  async checkOwnEvents(keys) {
    for (let i = this.checkedOwn; i < this.count; i++) {
      const event = this.events[i];
      const key = event.seat !== null && event.seat !== undefined ? keys[event.seat] : undefined;
      if (key && !(await signedBy(key, event.player_signature, this.gameId, i, this.digests[i], event))) {
        throw new AnswerRefused("forged", { event: i, seat: event.seat });
      }
    }
    this.checkedOwn = this.count;
  }
}
