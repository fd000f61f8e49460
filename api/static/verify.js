// fairdice in-browser verification: SPEC.md §2.3 derivation and a replay of a
// log's dice with Web Crypto (HMAC-SHA256, SHA-256, Ed25519 where supported).
//
// This module has no DOM code and no dependency: the page imports it to check
// a finished game, and the tests import it to run the SPEC vectors.

export const SCHEME = "fairdice/v1";
const DICE = 5;
const enc = new TextEncoder();

function subtle() {
  const s = globalThis.crypto && globalThis.crypto.subtle;
  if (!s) {
    throw new Error("Web Crypto is not available here (the page must be served over HTTPS or from localhost)");
  }
  return s;
}

// ---------------------------------------------------------------- bytes and hex

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error(`not a hex string: ${String(hex).slice(0, 80)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** u32(n): 4 bytes, big-endian (SPEC §1). */
export function u32(n) {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`not a u32: ${n}`);
  return new Uint8Array([(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
}

/** field(s) = u32(len(utf8(s))) || utf8(s) (SPEC §1). */
export function field(text) {
  const b = enc.encode(text);
  return concat([u32(b.length), b]);
}

// ------------------------------------------------------------------ derivation

/** msg(purpose, n1, n2, ...) of SPEC §2.3, without the block counter. */
export function message(purpose, gameId, clientSeeds, numbers) {
  return concat([
    field(SCHEME), field(purpose), field(gameId), u32(clientSeeds.length),
    ...clientSeeds.map(field), ...numbers.map(u32),
  ]);
}

/** An HMAC-SHA256 key made from the raw server seed (bytes or hex). */
export async function hmacKey(serverSeed) {
  const raw = typeof serverSeed === "string" ? hexToBytes(serverSeed) : serverSeed;
  return subtle().importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** block(i) = HMAC-SHA256(server_seed, msg || u32(i)). */
export async function block(key, msg, i) {
  return new Uint8Array(await subtle().sign("HMAC", key, concat([msg, u32(i)])));
}

/**
 * Draw `count` integers uniform in 0..bound-1 from the byte stream of `msg`:
 * bytes >= 256 - 256 % bound are rejected. Returns the values, every byte read
 * (rejected ones included) and the rejected bytes.
 */
export async function uniformInts(key, msg, bound, count) {
  if (!(bound >= 1 && bound <= 256)) throw new Error("bound must be 1..256");
  const limit = 256 - (256 % bound);
  const values = [];
  const read = [];
  const rejected = [];
  for (let i = 0; values.length < count; i++) {
    const b = await block(key, msg, i);
    for (const byte of b) {
      if (values.length === count) break;
      read.push(byte);
      if (byte < limit) values.push(byte % bound);
      else rejected.push(byte);
    }
  }
  return { values, bytesRead: new Uint8Array(read), rejected };
}

/** Five dice (faces 1..6) for a message. */
export async function fiveDice(key, msg) {
  const { values } = await uniformInts(key, msg, 6, DICE);
  return values.map((v) => v + 1);
}

export async function sha256Hex(bytes) {
  return bytesToHex(new Uint8Array(await subtle().digest("SHA-256", bytes)));
}

/** hex(SHA-256(server_seed)): the commitment of a seed given as hex. */
export async function commitmentOf(serverSeedHex) {
  return sha256Hex(hexToBytes(serverSeedHex));
}

/**
 * Everything SPEC §8.1 lists for one derivation vector, recomputed:
 * {commitment, message, block0, bytes_read, rejected, values}.
 * For m = 6 the values are dice (value + 1), as in the vector files.
 */
export async function deriveVector(v) {
  const key = await hmacKey(v.server_seed);
  const msg = message(v.purpose, v.game_id, v.client_seeds, v.numbers);
  const count = v.bound === 6 ? DICE : 1;
  const drawn = await uniformInts(key, msg, v.bound, count);
  return {
    commitment: await commitmentOf(v.server_seed),
    message: bytesToHex(msg),
    block0: bytesToHex(await block(key, msg, 0)),
    bytes_read: bytesToHex(drawn.bytesRead),
    rejected: drawn.rejected,
    values: v.bound === 6 ? drawn.values.map((x) => x + 1) : drawn.values,
  };
}

// --------------------------------------------------------------- canonical JSON

function escapeString(s) {
  // JSON.stringify escapes quotes, backslashes and control characters the way Python does
  // (\n, \t, ... and \u00XX in lower case); Python's ensure_ascii also escapes every
  // non-ASCII UTF-16 code unit, and DEL, as \uXXXX.
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function byCodePoint(a, b) {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

/** Canonical JSON of SPEC §1 (Python: json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)). */
export function canonicalJSON(doc) {
  if (doc === null || typeof doc === "boolean") return String(doc);
  if (typeof doc === "number") {
    if (!Number.isSafeInteger(doc)) throw new Error(`canonical JSON has integers only, not ${doc}`);
    return String(doc);
  }
  if (typeof doc === "string") return escapeString(doc);
  if (Array.isArray(doc)) return "[" + doc.map(canonicalJSON).join(",") + "]";
  if (typeof doc === "object") {
    return "{" + Object.keys(doc).sort(byCodePoint)
      .map((k) => escapeString(k) + ":" + canonicalJSON(doc[k])).join(",") + "}";
  }
  throw new Error(`not JSON: ${typeof doc}`);
}

// ------------------------------------------------------------------ signatures

/** true / false for an Ed25519 signature, or null when this browser has no Ed25519 in Web Crypto. */
export async function ed25519Verify(publicKeyHex, signatureHex, data) {
  let key;
  try {
    key = await subtle().importKey("raw", hexToBytes(publicKeyHex), { name: "Ed25519" }, false, ["verify"]);
  } catch (err) {
    if (err && (err.name === "NotSupportedError" || /Unrecognized|not supported/i.test(err.message))) return null;
    return false;
  }
  try {
    return await subtle().verify({ name: "Ed25519" }, key, hexToBytes(signatureHex), data);
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ scoring (SPEC §3)

const UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"];
const SMALL_RUNS = [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]];
const LARGE_RUNS = [[1, 2, 3, 4, 5], [2, 3, 4, 5, 6]];

function countsOf(dice) {
  const c = [0, 0, 0, 0, 0, 0, 0];
  for (const d of dice) c[d] += 1;
  return c;
}
const total = (c) => c.reduce((a, n, f) => a + n * f, 0);
const maxAlike = (c) => Math.max(...c);
const hasRun = (c, runs) => runs.some((run) => run.every((f) => c[f] > 0));
const shape = (c) => c.filter((n) => n).sort((a, b) => a - b).join(",");
const fullHouse = (c) => shape(c) === "2,3";
/** Yatzy's sets: `sets` different faces with at least `size` dice each, highest faces first. */
const setsOf = (c, size, sets) => {
  const faces = [6, 5, 4, 3, 2, 1].filter((f) => c[f] >= size);
  return faces.length < sets ? 0 : size * faces.slice(0, sets).reduce((a, f) => a + f, 0);
};
const upperScorers = Object.fromEntries(UPPER.map((id, i) => [id, (c) => (i + 1) * c[i + 1]]));

/** The three rule sets: box scoring in table order, upper bonus, the five-alike box, the Yahtzee bonus. */
export const SCORING = {
  yacht: {
    upperBonus: 35, fiveAlike: "yacht", yahtzeeBonus: 0,
    boxes: { ...upperScorers,
      choice: total,
      four_of_a_kind: (c) => (maxAlike(c) >= 4 ? total(c) : 0),
      full_house: (c) => (fullHouse(c) || maxAlike(c) === 5 ? total(c) : 0),
      small_straight: (c) => (hasRun(c, SMALL_RUNS) ? 15 : 0),
      large_straight: (c) => (hasRun(c, LARGE_RUNS) ? 30 : 0),
      yacht: (c) => (maxAlike(c) === 5 ? 50 : 0) },
  },
  yatzy: {
    upperBonus: 50, fiveAlike: "yatzy", yahtzeeBonus: 0,
    boxes: { ...upperScorers,
      one_pair: (c) => setsOf(c, 2, 1),
      two_pairs: (c) => setsOf(c, 2, 2),
      three_of_a_kind: (c) => setsOf(c, 3, 1),
      four_of_a_kind: (c) => setsOf(c, 4, 1),
      small_straight: (c) => ([1, 2, 3, 4, 5].every((f) => c[f]) ? 15 : 0),
      large_straight: (c) => ([2, 3, 4, 5, 6].every((f) => c[f]) ? 20 : 0),
      full_house: (c) => (fullHouse(c) ? total(c) : 0),
      chance: total,
      yatzy: (c) => (maxAlike(c) === 5 ? 50 : 0) },
  },
  classic13: {
    upperBonus: 35, fiveAlike: "yahtzee", yahtzeeBonus: 100,
    jokerPoints: { full_house: 25, small_straight: 30, large_straight: 40 },
    boxes: { ...upperScorers,
      three_of_a_kind: (c) => (maxAlike(c) >= 3 ? total(c) : 0),
      four_of_a_kind: (c) => (maxAlike(c) >= 4 ? total(c) : 0),
      full_house: (c) => (fullHouse(c) ? 25 : 0),
      small_straight: (c) => (hasRun(c, SMALL_RUNS) ? 30 : 0),
      large_straight: (c) => (hasRun(c, LARGE_RUNS) ? 40 : 0),
      yahtzee: (c) => (maxAlike(c) === 5 ? 50 : 0),
      chance: total },
  },
};

/** Plain score of five dice in one box (no card context). */
export function scoreBox(rules, category, dice) {
  return SCORING[rules].boxes[category](countsOf(dice));
}

/**
 * The legal boxes for these dice on this card, {category: {points, yahtzee_bonus, joker}}:
 * open boxes, the house rule upper_first, and classic13's forced joker and Yahtzee bonus.
 */
export function scoreOptions(rules, card, dice, upperFirst = false) {
  const r = SCORING[rules];
  const c = countsOf(dice);
  let open = Object.keys(r.boxes).filter((id) => card[id] === null || card[id] === undefined);
  if (upperFirst && open.some((id) => UPPER.includes(id))) open = open.filter((id) => UPPER.includes(id));
  const out = {};
  const fiveAlike = maxAlike(c) === 5;
  if (r.yahtzeeBonus && fiveAlike && card[r.fiveAlike] !== null && card[r.fiveAlike] !== undefined) {
    const face = c.indexOf(5);
    const bonus = card[r.fiveAlike] > 0 ? r.yahtzeeBonus : 0;
    const own = UPPER[face - 1];
    if (open.includes(own)) return { [own]: { points: 5 * face, yahtzee_bonus: bonus, joker: false } };
    const lower = open.filter((id) => !UPPER.includes(id));
    if (lower.length) {
      for (const id of lower) out[id] = { points: r.jokerPoints[id] ?? 5 * face, yahtzee_bonus: bonus, joker: true };
      return out;
    }
    for (const id of open) out[id] = { points: 0, yahtzee_bonus: bonus, joker: false };
    return out;
  }
  for (const id of open) out[id] = { points: r.boxes[id](c), yahtzee_bonus: 0, joker: false };
  return out;
}

/** {upper, upper_bonus, lower, yahtzee_bonus, total} of a card. */
export function cardTotals(rules, card, yahtzeeBonus = 0) {
  const r = SCORING[rules];
  let upper = 0;
  let lower = 0;
  for (const id of Object.keys(r.boxes)) {
    if (UPPER.includes(id)) upper += card[id] || 0;
    else lower += card[id] || 0;
  }
  const bonus = upper >= 63 ? r.upperBonus : 0;
  return { upper, upper_bonus: bonus, lower, yahtzee_bonus: yahtzeeBonus, total: upper + bonus + lower + yahtzeeBonus };
}

// ------------------------------------------------------------------ log replay

const HEX64 = /^[0-9a-f]{64}$/;

function isInt(x) {
  return Number.isInteger(x) && x >= 0;
}

/**
 * Replay the dice of a fairdice log (SPEC §5) from its revealed seed.
 *
 * options.trustedKeys: public keys (hex) the caller trusts (e.g. from GET /v1/keys).
 * options.onProgress(done, total): called as rolls are checked.
 *
 * Returns {ok, checks: [{id, ok, detail}], rolls: [...], rolloff: [...], clientSeeds, gameId}.
 * `ok` is null when a check could not be made (e.g. Ed25519 unsupported) and false on failure;
 * the report as a whole is ok when no check failed and the dice were replayed.
 */
export async function verifyLog(log, options = {}) {
  const checks = [];
  const add = (id, ok, detail) => checks.push({ id, ok, detail });
  const report = { ok: false, checks, rolls: [], rolloff: [], clientSeeds: [], gameId: null };
  const done = () => {
    report.ok = checks.every((c) => c.ok !== false) &&
      checks.some((c) => c.id === "roll.dice" && c.ok === true);
    return report;
  };

  // log.format
  const h = log && log.header;
  const problems = [];
  if (!log || typeof log !== "object") problems.push("not a JSON object");
  else {
    if (log.format !== "fairdice-log") problems.push(`format is ${JSON.stringify(log.format)}, not "fairdice-log"`);
    if (log.version !== 1) problems.push(`version is ${JSON.stringify(log.version)}, not 1`);
    if (!h || typeof h !== "object") problems.push("no header");
    else {
      if (h.scheme !== SCHEME) problems.push(`scheme is ${JSON.stringify(h.scheme)}, not "${SCHEME}"`);
      if (typeof h.game_id !== "string") problems.push("header.game_id is not a string");
      if (!Array.isArray(h.seats) || !h.seats.length) problems.push("header.seats is not a list of seats");
      if (!HEX64.test(h.commitment || "")) problems.push("header.commitment is not 64 hex digits");
      if (!HEX64.test(h.public_key || "")) problems.push("header.public_key is not 64 hex digits");
    }
    if (!Array.isArray(log.events)) problems.push("events is not a list");
  }
  add("log.format", !problems.length, problems.length ? problems.join("; ") : "fields and types of SPEC §5");
  if (problems.length) return done();
  report.gameId = h.game_id;

  // log.key
  const kid = (await sha256Hex(hexToBytes(h.public_key))).slice(0, 16);
  if (kid !== h.key_id) add("log.key", false, `key_id ${h.key_id} is not derived from the public key (${kid})`);
  else if (options.trustedKeys && options.trustedKeys.length) {
    const trusted = options.trustedKeys.map((k) => k.toLowerCase()).includes(h.public_key);
    add("log.key", trusted, trusted ? `key ${kid} is the server's published key`
      : `key ${kid} is not one of the server's published keys`);
  } else add("log.key", true, `key ${kid} matches its key id (no trusted key given)`);

  // signatures
  if (typeof log.commitment_signature === "string") {
    const ok = await ed25519Verify(h.public_key, log.commitment_signature, enc.encode(canonicalJSON(h)));
    add("sig.commitment", ok, ok === null ? "this browser cannot check Ed25519; use fairdice-verify"
      : ok ? "the header (commitment, rules, seats) was signed before any client seed" : "invalid signature over the header");
  } else add("sig.commitment", false, "no commitment_signature");
  if (typeof log.signature === "string") {
    const { signature, ...unsigned } = log;
    const ok = await ed25519Verify(h.public_key, signature, enc.encode(canonicalJSON(unsigned)));
    add("sig.final", ok, ok === null ? "this browser cannot check Ed25519; use fairdice-verify"
      : ok ? "the whole log is signed" : "invalid signature over the log");
  } else if (log.final) add("sig.final", null, "the log is unsigned");

  // seed.revealed / seed.commitment
  const fin = log.final;
  const seed = fin && fin.server_seed;
  if (!fin || typeof seed !== "string" || !HEX64.test(seed)) {
    add("seed.revealed", false, "the game is not over: the server seed is not revealed yet");
    return done();
  }
  add("seed.revealed", true, `server seed ${seed}`);
  if (h.seed_secret === false) {
    add("seed.secret", null, "this log's server seed was derived from a public value (fairdice simulate --seed): reproducible, not secret");
  }
  const com = await commitmentOf(seed);
  add("seed.commitment", com === h.commitment,
    com === h.commitment ? "SHA-256(server seed) equals the commitment"
      : `SHA-256(server seed) is ${com}, the commitment is ${h.commitment}`);

  // client seeds, in seat order of the human seats (or the operator's one)
  const humans = h.seats.map((s, i) => (s && s.type === "human" ? i : null)).filter((i) => i !== null);
  const got = new Map();
  const events = log.events;
  let startAt = -1;
  const seedProblems = [];
  events.forEach((e, i) => {
    if (e && e.type === "client_seed") {
      if (startAt >= 0) seedProblems.push(`event ${i}: client seed after the start`);
      if (got.has(e.seat)) seedProblems.push(`event ${i}: seat ${e.seat} sent a second client seed`);
      got.set(e.seat, e.client_seed);
    } else if (e && e.type === "start" && startAt < 0) startAt = i;
  });
  const expectedSeats = humans.length ? humans : [null];
  for (const s of expectedSeats) if (!got.has(s)) seedProblems.push(`no client seed from ${s === null ? "the operator" : "seat " + s}`);
  for (const s of got.keys()) if (!expectedSeats.includes(s)) seedProblems.push(`unexpected client seed from seat ${s}`);
  const clientSeeds = expectedSeats.filter((s) => got.has(s)).map((s) => got.get(s));
  report.clientSeeds = clientSeeds;
  add("client_seed.valid", !seedProblems.length,
    seedProblems.length ? seedProblems.join("; ") : `${clientSeeds.length} client seed(s), before the start`);

  const key = await hmacKey(seed);
  const gameId = h.game_id;

  // start.first: fixed, or a roll-off that re-derives
  if (startAt >= 0) {
    const st = events[startAt];
    const firstProblems = [];
    if (h.first === "random") {
      let contenders = h.seats.map((_, i) => i);
      const rounds = Array.isArray(st.rolloff) ? st.rolloff : [];
      for (let r = 0; r < rounds.length || contenders.length > 1; r++) {
        const round = rounds[r];
        if (!Array.isArray(round)) {
          firstProblems.push(`roll-off round ${r + 1} is missing`);
          break;
        }
        const sums = new Map();
        for (const [j, throwOf] of round.entries()) {
          const seat = contenders[j];
          const expected = await fiveDice(key, message("rolloff", gameId, clientSeeds, [r + 1, seat]));
          const ok = throwOf && throwOf.seat === seat && JSON.stringify(throwOf.dice) === JSON.stringify(expected);
          report.rolloff.push({ round: r + 1, seat, dice: throwOf && throwOf.dice, expected, ok });
          if (!ok) firstProblems.push(`roll-off round ${r + 1} seat ${seat}: expected ${expected}, found ${throwOf && throwOf.dice}`);
          sums.set(seat, expected.reduce((a, b) => a + b, 0));
        }
        if (round.length !== contenders.length) firstProblems.push(`roll-off round ${r + 1} has ${round.length} throws for ${contenders.length} seats`);
        const best = Math.max(...sums.values());
        contenders = [...sums].filter(([, s]) => s === best).map(([seat]) => seat);
        if (contenders.length <= 1 && r + 1 < rounds.length) firstProblems.push("roll-off continues after it was settled");
        if (contenders.length <= 1) break;
      }
      if (contenders.length === 1 && st.first !== contenders[0]) firstProblems.push(`first is seat ${st.first}, the roll-off says seat ${contenders[0]}`);
    } else if (st.first !== h.first) firstProblems.push(`first is seat ${st.first}, the header says ${h.first}`);
    add("start.first", !firstProblems.length, firstProblems.length ? firstProblems.join("; ")
      : h.first === "random" ? `the roll-off re-derives: seat ${st.first} plays first` : `seat ${st.first} plays first, as promised`);
  }

  // roll.dice: every die re-derives; held dice keep their values
  const rolls = events.map((e, i) => [e, i]).filter(([e]) => e && e.type === "roll");
  let previous = new Map(); // seat -> dice of its current turn
  const rollProblems = [];
  let checked = 0;
  for (const [e, index] of rolls) {
    const entry = { index, seat: e.seat, turn: e.turn, roll: e.roll, hold: e.hold, dice: e.dice, expected: null, ok: false, detail: "" };
    report.rolls.push(entry);
    if (!isInt(e.seat) || !isInt(e.turn) || !isInt(e.roll) || !Array.isArray(e.hold) || !Array.isArray(e.dice)) {
      entry.detail = "malformed roll event";
      rollProblems.push(`event ${index}: ${entry.detail}`);
      continue;
    }
    const fresh = await fiveDice(key, message("roll", gameId, clientSeeds, [e.seat, e.turn, e.roll]));
    const prev = e.roll === 1 ? null : previous.get(e.seat);
    const held = new Set(e.hold);
    if (e.roll === 1 && e.hold.length) entry.detail = "a hold on the first roll";
    else if (e.roll > 1 && !prev) entry.detail = "no earlier roll in this turn to hold from";
    else if (e.hold.some((p) => !isInt(p) || p > 4)) entry.detail = `hold ${JSON.stringify(e.hold)} names a position outside 0..4`;
    const expected = fresh.map((d, p) => (held.has(p) && prev ? prev[p] : d));
    entry.expected = expected;
    entry.ok = !entry.detail && JSON.stringify(expected) === JSON.stringify(e.dice);
    if (!entry.ok) {
      if (!entry.detail) entry.detail = `expected [${expected.join(", ")}], found [${e.dice.join(", ")}]`;
      rollProblems.push(`event ${index} (seat ${e.seat}, turn ${e.turn}, roll ${e.roll}): ${entry.detail}`);
    }
    previous.set(e.seat, e.dice);
    checked++;
    if (options.onProgress) options.onProgress(checked, rolls.length);
  }
  add("roll.dice", !rollProblems.length,
    rollProblems.length ? rollProblems.slice(0, 5).join("; ") + (rollProblems.length > 5 ? ` (and ${rollProblems.length - 5} more)` : "")
      : rolls.length ? `${rolls.length} of ${rolls.length} rolls re-derive from the seeds` : "no rolls were made");
  // score.points: every box filled re-scores from the dice of that turn's last roll
  const scoreProblems = [];
  report.scores = [];
  const finalProblems = [];
  if (SCORING[h.rules]) {
    const cards = h.seats.map(() => ({ boxes: Object.fromEntries(Object.keys(SCORING[h.rules].boxes).map((id) => [id, null])), bonus: 0 }));
    const lastDice = new Map();
    events.forEach((e, index) => {
      if (!e) return;
      if (e.type === "roll") lastDice.set(e.seat, e.dice);
      if (e.type !== "score") return;
      const entry = { index, seat: e.seat, turn: e.turn, category: e.category, points: e.points, ok: false, detail: "" };
      report.scores.push(entry);
      const card = cards[e.seat];
      const dice = lastDice.get(e.seat);
      if (!card || !dice) entry.detail = "a box filled without a roll";
      else {
        const opts = scoreOptions(h.rules, card.boxes, dice, !!h.upper_first);
        const o = opts[e.category];
        if (!o) entry.detail = `${e.category} is not open or not allowed for [${dice.join(", ")}]`;
        else {
          const before = cardTotals(h.rules, card.boxes, card.bonus);
          card.boxes[e.category] = o.points;
          card.bonus += o.yahtzee_bonus;
          const after = cardTotals(h.rules, card.boxes, card.bonus);
          const want = { points: o.points, joker: o.joker, yahtzee_bonus: o.yahtzee_bonus,
            upper_bonus: after.upper_bonus - before.upper_bonus, total: after.total };
          const wrong = Object.keys(want).filter((k) => e[k] !== want[k]);
          if (wrong.length) {
            entry.detail = wrong.map((k) => `${k} ${JSON.stringify(e[k])}, expected ${JSON.stringify(want[k])}`).join("; ");
            // go on from what the log claims, so that one wrong box is reported once, not in every later total
            if (Number.isInteger(e.points)) card.boxes[e.category] = e.points;
            if (Number.isInteger(e.yahtzee_bonus)) card.bonus += e.yahtzee_bonus - o.yahtzee_bonus;
          }
        }
      }
      lastDice.delete(e.seat);
      entry.ok = !entry.detail;
      if (!entry.ok) scoreProblems.push(`event ${index} (seat ${e.seat}, ${e.category}): ${entry.detail}`);
    });
    add("score.points", !scoreProblems.length, scoreProblems.length ? scoreProblems.slice(0, 5).join("; ")
      : `${report.scores.length} boxes re-score from their dice (bonuses and totals too)`);
    const totals = cards.map((c) => cardTotals(h.rules, c.boxes, c.bonus));
    (fin.totals || []).forEach((t, seat) => {
      for (const k of ["upper", "upper_bonus", "lower", "yahtzee_bonus", "total"]) {
        if (!totals[seat] || t[k] !== totals[seat][k]) finalProblems.push(`seat ${seat} ${k} ${t[k]}, expected ${totals[seat] && totals[seat][k]}`);
      }
    });
    if ((fin.totals || []).length !== cards.length) finalProblems.push("one total per seat expected");
    if (fin.status === "finished") {
      const best = Math.max(...totals.map((t) => t.total));
      const top = totals.map((t, i) => (t.total === best ? i : null)).filter((i) => i !== null);
      const winner = top.length === 1 ? top[0] : null;
      if (fin.winner !== winner || fin.draw !== top.length > 1) finalProblems.push(`winner ${fin.winner} draw ${fin.draw}, expected winner ${winner} draw ${top.length > 1}`);
      const unfilled = cards.some((c) => Object.values(c.boxes).some((v) => v === null));
      if (unfilled) finalProblems.push("the game is marked finished with open boxes");
    }
    add("final.totals", !finalProblems.length, finalProblems.length ? finalProblems.slice(0, 5).join("; ")
      : fin.status === "finished" ? "totals, winner and draw recompute" : "totals recompute");
  } else add("score.points", false, `unknown rules ${JSON.stringify(h.rules)}`);

  return done();
}
