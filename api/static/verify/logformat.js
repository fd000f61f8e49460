// log.format: the fields of a log and their JSON types (SPEC §5), as tables of what is expected and a test of
// each value. A log's events are held to their fields one by one, as the replay reaches them.

import { byCodePoint } from "./canonical.js";
import { Stop } from "./checks.js";
import { has, isBool, isHex, isInt, isObject, isStr, sameKeys } from "./json.js";
import { said } from "./phrases.js";
import { CATEGORIES, DICE } from "./rules.js";
import { SCHEME } from "./scheme.js";
import { seatNameValid } from "./seedrule.js";

/** The log format versions read (SPEC §5): 2 adds client seed commitments, abandon reasons and the timeout; 3 the
 * players' keys and signatures (§5.7). */
export const VERSIONS = Object.freeze([1, 2, 3]);
export const ABANDON_REASONS = Object.freeze(["player", "timeout"]);

const isDice = (x) => Array.isArray(x) && x.length === DICE && x.every((d) => isInt(d) && d >= 1 && d <= 6);
const nSeats = (h) => (Array.isArray(h.seats) ? h.seats.length : 0);
/** A hold: sorted distinct positions 0..4. */
export const isHold = (hold) => hold.every((p, j) => p >= 0 && p <= 4 && (j === 0 || p > hold[j - 1]));

function seatOk(s) {
  if (!isObject(s) || !seatNameValid(s.name)) return false;
  if (s.type === "human" && sameKeys(s, ["type", "name"])) return true;
  const bot = s.bot;
  return s.type === "bot" && sameKeys(s, ["type", "name", "bot"]) && isObject(bot) && sameKeys(bot, ["id", "version", "hash"])
    && isStr(bot.id) && isStr(bot.version) && isHex(bot.hash, 64);
}

const TOTAL_PARTS = ["upper", "upper_bonus", "lower", "yahtzee_bonus", "total"];
// name -> [what is expected, check(value, header)]
const TOP_FIELDS = {
  format: ["fairdice-log", (v) => v === "fairdice-log"],
  version: [said("one_of", { values: VERSIONS }), (v) => VERSIONS.includes(v)],
  header: [said("an_object"), isObject],
  commitment_signature: [said("hex_or_absent"), isStr],
  events: [said("an_array"), Array.isArray],
  final: [said("object_or_null"), (v) => v === null || isObject(v)],
  signature: [said("hex_or_absent"), isStr],
};
const HEADER_FIELDS = {
  scheme: [SCHEME, (v) => v === SCHEME],
  game_id: [said("printable_ascii", { min: 1, max: 64 }), (v) => isStr(v) && /^[\x20-\x7e]{1,64}$/.test(v)],
  rules: [said("one_of", { values: Object.keys(CATEGORIES) }), (v) => isStr(v) && has(CATEGORIES, v)],
  upper_first: [said("one_of", { values: [true, false] }), isBool],
  seats: [said("seats_as_specified", { min: 1, max: 6 }), (v) => Array.isArray(v) && v.length >= 1 && v.length <= 6 && v.every(seatOk)],
  first: [said("seat_or_random", { value: "random" }), (v, h) => v === "random" || (isInt(v) && v >= 0 && v < nSeats(h))],
  commitment: [said("hex_digits", { count: 64 }), (v) => isHex(v, 64)],
  seed_secret: [said("one_of", { values: [true, false] }), isBool],
  key_id: [said("hex_digits", { count: 16 }), (v) => isHex(v, 16)],
  public_key: [said("hex_digits", { count: 64 }), (v) => isHex(v, 64)],
};
// version 2 (SPEC §5.1): the server's inactivity timeout, fixed at creation and signed, an integer ≥ 1
const HEADER_FIELDS_V2 = {
  ...HEADER_FIELDS, abandon_timeout: [said("timeout_seconds"), (v) => isInt(v) && v >= 1],
};
const FINAL_FIELDS = {
  status: [said("one_of", { values: ["finished", "abandoned"] }), (v) => v === "finished" || v === "abandoned"],
  server_seed: [said("hex_digits", { count: 64 }), (v) => isHex(v, 64)],
  totals: [said("totals_per_seat", { parts: TOTAL_PARTS }),
    (v, h) => Array.isArray(v) && v.length === nSeats(h)
      && v.every((t) => isObject(t) && sameKeys(t, TOTAL_PARTS) && TOTAL_PARTS.every((k) => isInt(t[k])))],
  winner: [said("seat_or_null"), (v) => v === null || isInt(v)],
  draw: [said("one_of", { values: [true, false] }), isBool],
};
const EVENT_FIELDS = {
  client_seed: ["type", "seat", "client_seed"],
  start: ["type", "first", "rolloff"],
  roll: ["type", "seat", "turn", "roll", "hold", "dice"],
  score: ["type", "seat", "turn", "category", "points", "joker", "yahtzee_bonus", "upper_bonus", "total"],
  abandon: ["type", "seat"],
};
// version 2: every abandon says why; with two or more human seats each client seed is committed to first and
// revealed with its salt
const EVENT_FIELDS_V2 = { ...EVENT_FIELDS, abandon: ["type", "seat", "reason"] };
const EVENT_FIELDS_V2_COMMITTED = {
  ...EVENT_FIELDS_V2, client_seed_commit: ["type", "seat", "commitment"], client_seed: ["type", "seat", "client_seed", "salt"],
};

// version 3: an event of a human seat also carries its player's signature (null for a seat without a key), and the
// seat's client seed and commitment its key (SPEC §5.3, §5.7)
const PLAYER_FIELDS = {
  client_seed_commit: ["player_key", "player_signature"], client_seed: ["player_key", "player_signature"],
  roll: ["player_signature"], score: ["player_signature"], abandon: ["player_signature"],
};

/** The events of a log (type -> its fields in SPEC order) for its version and number of human seats. */
export function eventFields(version, humans) {
  if (version === 1) return EVENT_FIELDS;
  return humans >= 2 ? EVENT_FIELDS_V2_COMMITTED : EVENT_FIELDS_V2;
}

/** The fields an event of type `kind` must have in the game `g`: in version 3, with those of its player when its
 * seat is a human seat. */
export function eventNames(g, kind, ev) {
  const names = g.fields[kind];
  return g.version >= 3 && has(PLAYER_FIELDS, kind) && g.humans.includes(ev.seat) ? [...names, ...PLAYER_FIELDS[kind]] : names;
}
export const SCORE_FIELDS = ["points", "joker", "yahtzee_bonus", "upper_bonus", "total"];

const isSeatOf = (v, n) => isInt(v) && v >= 0 && v < n;
const isRolloff = (v) => Array.isArray(v) && v.every((rnd) => Array.isArray(rnd) && rnd.every((e) =>
  isObject(e) && sameKeys(e, ["seat", "dice"]) && isInt(e.seat) && isDice(e.dice)));
// name -> test(value, kind of the event, number of seats) of a field of an event (SPEC §5.3); a field not named
// here (client_seed, category, reason) is a string
const EVENT_FIELD_TESTS = {
  // an abandon's seat is the timeout's null or a seat; a client seed's may be the operator's null
  seat: (v, kind, n) => (kind === "abandon" ? v === null || isSeatOf(v, n) : isInt(v) || (v === null && kind === "client_seed")),
  turn: isInt, roll: isInt, points: isInt, yahtzee_bonus: isInt, upper_bonus: isInt, total: isInt,
  first: (v, kind, n) => isSeatOf(v, n),
  hold: (v) => Array.isArray(v) && v.every(isInt),
  dice: isDice,
  joker: isBool,
  commitment: (v) => isHex(v, 64),
  salt: (v) => isHex(v, 64),
  player_key: (v) => v === null || isHex(v, 64),
  player_signature: (v) => v === null || isHex(v, 128),
  rolloff: isRolloff,
};

/** Is `v` a good value of field `name` of an event of `kind` (SPEC §5.3) in a game of `n` seats? */
function eventFieldOk(kind, name, v, n) {
  const test = has(EVENT_FIELD_TESTS, name) ? EVENT_FIELD_TESTS[name] : isStr;
  return test(v, kind, n);
}

/** log.format for the document's own fields: a log that fails here has nothing to replay (Stop). */
export function checkTopFields(checks, doc) {
  fieldsOk(checks, doc, "", TOP_FIELDS, doc, ["commitment_signature", "signature"]);
  if (checks.failed("log.format")) throw new Stop();
}

/** What the report says of a log whose own fields are well typed. */
export function describeLog(doc) {
  const h = doc.header;
  return {
    version: doc.version,
    gameId: isStr(h.game_id) ? h.game_id : null,
    rules: HEADER_FIELDS.rules[1](h.rules) ? h.rules : null,
    seedSecret: isBool(h.seed_secret) ? h.seed_secret : null,
    status: doc.final ? doc.final.status : "in progress",
  };
}

/** log.format for the header and the final block (Stop when they fail). */
export function checkHeaderAndFinal(checks, doc) {
  const h = doc.header;
  fieldsOk(checks, h, "header.", doc.version === 1 ? HEADER_FIELDS : HEADER_FIELDS_V2, h);
  if (doc.final !== null) fieldsOk(checks, doc.final, "final.", FINAL_FIELDS, h);
  if (checks.failed("log.format")) throw new Stop();
  checks.passed("log.format");
}

/** Every field present (or optional) and well typed, and no other field. */
function fieldsOk(checks, obj, prefix, fields, header, optional = []) {
  for (const [name, [wanted, good]] of Object.entries(fields)) {
    if (!has(obj, name)) {
      if (!optional.includes(name)) checks.fail("log.format", null, prefix + name, said("present"), said("missing"));
    } else if (!good(obj[name], header)) checks.fail("log.format", null, prefix + name, wanted, obj[name]);
  }
  for (const name of Object.keys(obj)) if (!has(fields, name)) checks.fail("log.format", null, prefix + name, said("no_such_field"), obj[name]);
}

/** log.format for event i of the game `g` (its version and seats): its type, exactly its fields, and their JSON types. */
export function eventFormat(checks, i, ev, g) {
  const kind = isObject(ev) && has(ev, "type") ? ev.type : null;
  const fields = g.fields;
  if (!isStr(kind) || !has(fields, kind)) {
    checks.stop("log.format", i, "type", said("one_of", { values: Object.keys(fields) }), isObject(ev) ? kind : ev);
  }
  const names = eventNames(g, kind, ev);
  if (!sameKeys(ev, names)) {
    const odd = [...names.filter((k) => !has(ev, k)), ...Object.keys(ev).filter((k) => !names.includes(k))].sort(byCodePoint);
    checks.stop("log.format", i, odd.join(","), names, Object.keys(ev).sort(byCodePoint));
  }
  for (const name of names.slice(1)) {
    if (!eventFieldOk(kind, name, ev[name], g.n)) checks.stop("log.format", i, name, said("event_field"), ev[name]);
  }
}
