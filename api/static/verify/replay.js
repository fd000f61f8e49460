// verifyLog: one log checked in the order of SPEC §7: its format, the player's receipt, its key and commitment
// signature, the server's move receipts, the players' signatures, the revealed seed, then the replay of every
// event from the seed (events.js), the end of the game, and last the final signature. Each step gets what the
// earlier ones found; every verdict goes into one Checks.

import { chainDigests, checkMoveReceipts, readMoveReceipts } from "./chain.js";
import { Checks, Stop } from "./checks.js";
import { EventReplay, newGame } from "./events.js";
import { checkEnd } from "./final.js";
import { isObject } from "./json.js";
import { checkFinalSignature, checkKeyAndCommitment, readTrustedKeys } from "./keys.js";
import { checkHeaderAndFinal, checkTopFields, describeLog } from "./logformat.js";
import { said } from "./phrases.js";
import { abandonWitness, checkPlayerSignatures, seatKeys, unsignedSeats } from "./players.js";
import { readTables } from "./optimal.js";
import { checkReceipt, readReceipt } from "./receipt.js";
import { report, unusable } from "./result.js";
import { commitmentOf, hmacKey } from "./scheme.js";
import { UnusableInput, readJSON } from "./strictjson.js";

class Verification {
  constructor(doc, { trustedKeys, receipt, moveReceipts, allowUnsigned, onProgress, tables }) {
    this.doc = doc;
    this.tables = tables; // rules -> the optimal bot's table, its digest checked (optimal.js)
    this.trustedKeys = trustedKeys;
    this.receipt = receipt;
    this.moveReceipts = moveReceipts; // the server's signed receipts of the moves (SPEC §5.6), or null
    this.allowUnsigned = allowUnsigned;
    this.onProgress = onProgress;
    this.checks = new Checks();
    this.info = {
      version: null, gameId: null, rules: null, status: null, signed: false, trusted: false, seedSecret: null, unsignedSeats: null,
    };
    this.view = { clientSeeds: [], rolls: [], rolloff: [], scores: [], botDecisions: 0, botsReplayed: {}, abandon: null }; // what the page shows
    this.signer = undefined; // the trusted key the log's signatures are checked with (null: none), once known
    this.seatKeys = null; // human seat -> its player's key, or null (version 3, SPEC §5.7)
    this.witness = null; // what an abandon in the player's name that no player signed is held to
    this.hmac = null; // the HMAC key of the revealed server seed
    this.game = null; // the game as the replay found it
    this.chain = null; // the log's hash chain h_0 .. h_n, once a check needs it
  }

  async run() {
    const { checks, doc } = this;
    try {
      checkTopFields(checks, doc);
      Object.assign(this.info, describeLog(doc));
      checkHeaderAndFinal(checks, doc);
      if (this.receipt) checkReceipt(checks, doc, this.receipt);
      const { keys, signer, trusted, signed } = await checkKeyAndCommitment(checks, doc, this);
      Object.assign(this.info, { trusted, signed });
      this.signer = signer;
      this.seatKeys = seatKeys(doc, this.receipt);
      this.info.unsignedSeats = unsignedSeats(this.seatKeys);
      if (this.moveReceipts && this.moveReceipts.length) {
        const held = await checkMoveReceipts(checks, doc, this.moveReceipts, keys, () => this.digests());
        this.witness = abandonWitness(doc, this.receipt, this.seatKeys, held);
      }
      if (doc.version >= 3) await checkPlayerSignatures(checks, doc, this.seatKeys, () => this.digests());
      await this.checkSeed();
      this.game = newGame(doc);
      this.game.optimal = this.tables;
      await new EventReplay(checks, doc, this.game, this).run();
      checkEnd(checks, doc, this.game);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
    }
    if (this.signer !== undefined) await checkFinalSignature(checks, doc, this.signer, this.allowUnsigned); // last, as the reference does
  }

  /** The log's hash chain [h_0, ..., h_n] (SPEC §5.6), computed once. */
  async digests() {
    if (!this.chain) this.chain = await chainDigests(this.doc.header, this.doc.events);
    return this.chain;
  }

  // -- seed.revealed, seed.commitment (SPEC §2.1)
  async checkSeed() {
    const fin = this.doc.final;
    if (fin === null) {
      this.checks.fail("seed.revealed", null, "final", said("game_over"), null);
      return;
    }
    this.checks.passed("seed.revealed");
    this.checks.expect("seed.commitment", null, "header.commitment", await commitmentOf(fin.server_seed), this.doc.header.commitment);
    this.checks.passed("seed.commitment");
    this.hmac = await hmacKey(fin.server_seed);
  }
}

/**
 * Verify a fairdice log (SPEC §7) in the browser or under Node.
 *
 * log: the file's text (a string), its bytes (Uint8Array / ArrayBuffer), or an already parsed object.
 * options.trustedKeys: public keys (hex) the caller trusts (e.g. from GET /v1/keys); none: the log's own key.
 * options.receipt: the player's receipt (object or JSON text): the log must be the game it promised.
 * options.moveReceipts: the server's signed move receipts the player kept (an array, or its JSON text, SPEC §5.6):
 *   the log must be the history each of them signs (check receipt.chain).
 * options.allowUnsigned: accept a log without its signatures (and say what that does not prove).
 * options.onProgress(done, total): called as rolls are checked.
 * options.tables: {rules id: the canonical bytes of its optimal table (SPEC §4.6; Uint8Array or ArrayBuffer)}, with
 *   which the optimal bot's decisions are replayed; each must have the published digest that the bot identity
 *   commits to, else the input is refused (reason "bad_table"). Without its table an optimal game's bot.decision
 *   is "unchecked".
 *
 * Resolves to {ok, error, reason, checks: [{id, ok, status, detail}], statuses: {id: "pass"|"fail"|"skip"|"unchecked"},
 * failures: [{check, event, field, expected, found}], unlisted, version, gameId, rules, status, signed, trusted,
 * seedSecret, unsignedSeats (the human seats whose moves no player signed: the operator could have written them),
 * botsReplayed ({bot id: decisions replayed}), clientSeeds, rolls, rolloff, scores, abandon ({seat, reason} or null),
 * document}.
 * ok: true when every check passed; false when one failed, or (with `error` and `reason`, one of
 * UNUSABLE_REASONS) for input that is not a log at all; null when nothing failed but something could not be
 * checked here (run fairdice-verify). A failure's expected and found are values of the log, or a Phrase.
 */
export async function verifyLog(log, options = {}) {
  let doc;
  let receipt;
  let moveReceipts;
  let trustedKeys;
  let tables;
  try {
    doc = readJSON(log);
    if (!isObject(doc)) {
      const kind = Array.isArray(doc) ? "an array" : doc === null ? "null" : typeof doc === "object" ? "a number" : `a ${typeof doc}`;
      throw new UnusableInput(`not a JSON object (the document is ${kind})`, "not_an_object");
    }
    receipt = await readReceipt(options.receipt);
    moveReceipts = readMoveReceipts(options.moveReceipts);
    trustedKeys = readTrustedKeys(options.trustedKeys);
    tables = await readTables(options.tables);
  } catch (err) {
    if (err instanceof UnusableInput) return unusable(err);
    throw err;
  }
  const v = new Verification(doc, {
    trustedKeys, receipt, moveReceipts, allowUnsigned: !!options.allowUnsigned, onProgress: options.onProgress, tables,
  });
  await v.run();
  return report(v);
}

/** verifyLog(log, {...options, moveReceipts: receipts}): the log held to the move receipts the player kept. */
export function verifyMoveReceipts(log, receipts, options = {}) {
  return verifyLog(log, { ...options, moveReceipts: receipts });
}
