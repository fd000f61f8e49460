// fairdice in-browser verification: every check of SPEC.md §7, with the same check ids and the
// same verdict as the reference verifier `fairdice-verify` (verifier/replay.py), with Web Crypto
// (HMAC-SHA256, SHA-256, Ed25519).
//
// The replay follows the true game, as the reference does: turn order, roll numbers, holds, every
// die re-derived from the seeds, every box legal and re-scored, the end of the game, the totals and
// the winner, the bots' decisions (greedy and ev; optimal given its table, `tables`), both
// signatures and the key. A die that does not re-derive is reported and the derived value is used
// from then on; a failure that leaves no game to follow stops the replay there.
//
// The three log format versions are read, by their "version": 1 as SPEC promises legacy logs keep verifying;
// 2 with its commitments to the client seeds of two or more humans (client_seed.commit), its rules of who may
// abandon and why (game.abandon), and the server's signed move receipts (receipt.chain, any version); 3 with
// the players' keys and signed commands (player.signature: one signature per human seat with a key, that of its
// last event). A verdict names the human seats whose moves no player signed (`unsignedSeats`, and a note), and
// every signature is tried against the one trusted key that can have made it, never against every key.
//
// This module is the public entry; the code is in verify/, one module per concern, as verifier/ is split:
//   json.js strictjson.js     JSON values, and input that is not a log at all (the reasons below)
//   bytes.js canonical.js     SPEC §1: hex, u32, field, SHA-256; canonical JSON
//   scheme.js                 SPEC §2: the HMAC-SHA256 derivation, the seed and client seed commitments
//   seedrule.js rules.js      SPEC §2.2 client seeds and names; SPEC §3 the rules and their scoring
//   bots.js botcheck.js       SPEC §4.5 the published bots and their decisions; bot.identity, bot.decision
//   optimal.js                SPEC §4.6 the optimal bot from its table, the table held to the published digest
//   phrases.js checks.js      the words of a failure; the check ids and Checks, where every verdict is written
//   logformat.js              SPEC §5 log.format
//   receipt.js keys.js        SPEC §5.5 the player's receipt (receipt.match); SPEC §6 keys and signatures
//   chain.js                  SPEC §5.6 move receipts (receipt.chain)
//   players.js                SPEC §5.7 players' keys and signatures (player.signature), unsigned moves
//   events.js final.js        the replay of the events; game.complete, final.totals, final.winner
//   replay.js result.js       verifyLog, the checks in the order of SPEC §7; its answer
// No DOM code and no dependency: the page imports it to check a game, and the tests (tests/node/) import it
// under Node to hold it to the SPEC vectors and the forged corpus.
//
// Its answers are machine-readable, so that the page can word them in the player's language:
//
// - Input that is not a log at all (SPEC §7, exit 2 of fairdice-verify) gets {ok: false, error, reason}:
//   `error` is an English sentence for a technical detail, `reason` a stable code (UNUSABLE_REASONS):
//     empty               no JSON at all: an empty file, or only white space
//     not_utf8            bytes that are not UTF-8 text (an image, UTF-16, an overlong or CESU-8 encoding)
//     too_large           a file over 16 MiB
//     not_json            not JSON (a syntax error, a byte order mark, a raw control character in a string, a
//                         comment, trailing data, a value that JSON cannot hold)
//     nan_or_infinity     NaN, Infinity or -Infinity, which are not JSON numbers
//     duplicate_key       one key twice in an object (parsers differ on which value counts)
//     number_out_of_range a number of magnitude 2^53 or more, or written with more than 20 digits
//     nesting_too_deep    arrays and objects nested deeper than 64
//     lone_surrogate      a \ud800-\udfff escape that is not half of a pair
//     not_an_object       JSON, but not an object (an array, a string, a number, true, false or null)
//     bad_receipt         the receipt given with the log is not a usable receipt (SPEC §5.5)
//     bad_move_receipts   the move receipts given with the log are not a JSON array of move receipts
//     bad_trusted_key     a trusted key that is not 64 hex digits
//     bad_table           an optimal table (options.tables) whose SHA-256 is not the published digest
//   (the strict JSON reasons are those of the reference, verifier/strictjson.py, with four more of its own).
// - A failed check is {check, event, field, expected, found}: `expected` and `found` are values of the log
//   (numbers, hex, ids, arrays of them) or, where the verifier says what it wanted in words, a Phrase: a
//   stable code with parameters (PHRASES: the codes and their English), never an English string. The
//   `checks[].detail` lines stay English, as the reference's.

export { bytesToHex, field, hexToBytes, sha256Hex, u32 } from "./verify/bytes.js";
export { canonicalJSON, pythonFloatRepr } from "./verify/canonical.js";
export { JsonFloat } from "./verify/json.js";
export { MAX_BYTES, MAX_DEPTH, UNUSABLE_REASONS, UnusableInput, parseStrictJSON } from "./verify/strictjson.js";
export {
  Deriver, SCHEME, block, commitmentOf, deriveVector, fiveDice, hmacKey, message, seedCommitment, uniformInts,
} from "./verify/scheme.js";
export { CLIENT_SEED_RULE, clientSeedValid, seatNameValid } from "./verify/seedrule.js";
export { CATEGORIES, scoreBox, scoreOptions } from "./verify/rules.js";
export { PUBLISHED_BOTS, botDecision, publishedBotHashes } from "./verify/bots.js";
export { OptimalTable, optimalCandidates, optimalDecision, readTables, tableHeader, tableShape } from "./verify/optimal.js";
export { PHRASES, Phrase } from "./verify/phrases.js";
export { CHECKS } from "./verify/checks.js";
export { ABANDON_REASONS, VERSIONS } from "./verify/logformat.js";
export { ed25519Verify } from "./verify/keys.js";
export { CHAIN_LABEL, MOVE_RECEIPT_LABEL, chainDigests, moveReceiptBytes } from "./verify/chain.js";
export { MOVE_LABEL, moveBytes, moveCommand } from "./verify/players.js";
export { verifyLog, verifyMoveReceipts } from "./verify/replay.js";
