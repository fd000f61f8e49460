// The page's words for what verify.js and the server say in codes: every phrase of a failure detail
// (verify.js's PHRASES) and every problem code the server can send have an entry in both catalogues, and a
// failure detail shown in Chinese holds no English: only the failure's own field, values and ids.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import test from "node:test";
import { CATEGORIES, PHRASES, Phrase, verifyLog } from "../../api/static/verify.js";
import { placeholders, translator } from "../../api/static/i18n.js";
import { failureText } from "../../api/static/report.js";
import en from "../../api/static/i18n/en.js";
import zh from "../../api/static/i18n/zh.js";
import { REPO, VECTORS } from "./helpers.mjs";

const CJK = /[\u3400-\u9fff]/;
const WORD = /(?<![A-Za-z0-9])[A-Za-z]{2,}(?![A-Za-z0-9])/g;
/** Names the Chinese catalogue writes as they are (standards, the spec). */
const NAMES = new Set(["SPEC", "ASCII", "JSON"]);
const words = (text) => [...String(text).matchAll(WORD)].map((m) => m[0]);

// ------------------------------------------------------------------ phrases

test("every phrase has an entry in both catalogues, with the placeholders of its English", () => {
  for (const [code, english] of Object.entries(PHRASES)) {
    const key = `phrase.${code}`;
    assert.ok(key in en && key in zh, `${key} is missing from a catalogue`);
    assert.deepEqual(placeholders(en[key]), placeholders(english), `${key}: en and verify.js name different parameters`);
    assert.deepEqual(placeholders(zh[key]), placeholders(english), `${key}: zh and verify.js name different parameters`);
    const prose = JSON.stringify(zh[key]).replace(/\{[a-z_]+\}|[\s"]/g, "");
    if (prose) assert.match(prose, CJK, `${key}: the zh entry is not Chinese`);
  }
});

/** The code of verify.js's modules (api/static/verify/), without the table of PHRASES itself. */
function verifierSource() {
  const dir = join(REPO, "api", "static", "verify");
  return readdirSync(dir).filter((name) => name.endsWith(".js")).sort().map((name) => {
    const text = readFileSync(join(dir, name), "utf8");
    return name === "phrases.js" ? text.slice(text.indexOf("export class Phrase")) : text;
  }).join("\n");
}

test("verify.js says only phrases it defines, and uses every one", () => {
  const source = verifierSource();
  const direct = [...source.matchAll(/said\("([a-z_]+)"/g)].map((m) => m[1]);
  assert.ok(direct.length > 40, direct.length);
  assert.deepEqual(direct.filter((c) => !(c in PHRASES)), [], "said() with a code PHRASES does not define");
  assert.deepEqual(Object.keys(PHRASES).filter((c) => !source.includes(`"${c}"`)), [], "a phrase verify.js never says");
  assert.throws(() => new Phrase("no_such_phrase"), /no such phrase/);
});

test("a phrase is a class of its own: a value of the log shaped like one stays a value", async () => {
  const t = translator("zh");
  const f = { check: "log.format", event: null, field: "note", expected: new Phrase("no_such_field"),
    found: { code: "present", params: {} } };
  assert.equal(failureText(t, f), 'note：应为 不应有这个字段，实为 {"code":"present","params":{}}');
});

test("a value of the log is shown so that it cannot be taken for another: strings bare unless ambiguous", () => {
  const t = translator("en");
  const shown = (found) => failureText(t, { check: "log.format", event: 3, field: "x", expected: 1, found })
    .replace("event 3, x: expected 1, found ", "");
  assert.deepEqual(["1", "", "null", " ab", "[]", "c8a6", "3016a8c0", "large_straight", "中文"].map(shown),
    ['"1"', '""', '"null"', '" ab"', '"[]"', "c8a6", "3016a8c0", "large_straight", "中文"]);
  assert.deepEqual([1, null, true, [0, 2], { a: "b" }].map(shown), ["1", "null", "true", "[0,2]", '{"a":"b"}']);
  assert.equal(shown("a".repeat(500)).length, 200, "a long value is cut");
});

/** The words a failure may show in any language: its field, its values and the parameters of its phrases. */
function ownWords(f) {
  const of = (v) => (v instanceof Phrase ? JSON.stringify(v.params) : JSON.stringify(v) ?? "");
  return new Set([...words(f.field), ...words(of(f.expected)), ...words(of(f.found))]);
}

const INDEX = join(VECTORS, "forged", "index.json");

test("in Chinese, no failure detail of the forged corpus holds an English word",
  { skip: existsSync(INDEX) ? false : "tests/vectors/forged/index.json is missing (corpus.test.mjs says so)" }, async () => {
    const zhT = translator("zh");
    const enT = translator("en");
    let phrases = 0;
    for (const c of JSON.parse(readFileSync(INDEX, "utf8")).cases) {
      if (c.verdict === "error") continue;
      const r = await verifyLog(readFileSync(join(VECTORS, "forged", c.file)), {
        trustedKeys: c.trusted_keys, receipt: c.receipt, moveReceipts: c.move_receipts ?? null, allowUnsigned: c.allow_unsigned,
      });
      for (const f of r.failures) {
        const text = failureText(zhT, f);
        const own = [...ownWords(f)];
        const foreign = words(text).filter((w) => !NAMES.has(w) && !own.some((o) => o.startsWith(w))); // (a long value is cut)
        assert.deepEqual(foreign, [], `${c.name}: ${text}`);
        assert.ok(!/undefined|\{[a-z_]+\}/.test(text) && !/undefined|\{[a-z_]+\}/.test(failureText(enT, f)), `${c.name}: ${text}`);
        if (f.expected instanceof Phrase || f.found instanceof Phrase) phrases += 1;
      }
    }
    assert.ok(phrases >= 40, `only ${phrases} failures in words`);
  });

// ------------------------------------------------------------------ the server's problem codes

/** Every *.py file under `dir`. */
function pythonFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "__pycache__" ? [] : pythonFiles(path);
    return name.endsWith(".py") ? [path] : [];
  });
}

const SNAKE = "[a-z][a-z0-9]*(?:_[a-z0-9]+)+";
const CODE_PATTERNS = [
  new RegExp(`\\b[A-Z]\\w*\\(\\s*"(${SNAKE})"`, "g"), // FairdiceError("code", ...), NotNow(...), Unavailable(...)
  /\(\s*\d{3},\s*"([a-z][a-z0-9_]*)"/g, // ApiError(400, "code", ...), problem(503, "busy", ...)
  new RegExp(`check_(?:text|hex)\\([^()]*"(${SNAKE})"\\s*\\)`, "g"), // derive.check_text(..., "invalid_client_seed")
];
/** The problem codes of issue 14 (rate limits, quotas, store faults), and of HTTP errors Werkzeug raises (problems.py
 * makes their code from the status phrase: 400, 404, 405, 413 in both Python spellings, 429, 500, 503). */
const LISTED = ["rate_limited", "too_many_unfinished_games", "disk_full", "read_only", "database_missing",
  "database_replaced", "unreachable", "busy", "engine_warming_up", "internal_error",
  "bad_request", "not_found", "method_not_allowed", "request_entity_too_large", "content_too_large", "too_many_requests",
  "internal_server_error", "service_unavailable"];

/** code -> the files that send it: the server (api/), the core (fairdice/), and the codes of a malformed body. */
function serverCodes() {
  const codes = new Map();
  const add = (code, where) => codes.set(code, [...(codes.get(code) || []), where]);
  const categories = new Set(Object.values(CATEGORIES).flat()); // (Category("full_house", ...) in fairdice/rules.py)
  for (const path of [...pythonFiles(join(REPO, "api")), ...pythonFiles(join(REPO, "fairdice"))]) {
    const source = readFileSync(path, "utf8");
    for (const pattern of CODE_PATTERNS) {
      for (const m of source.matchAll(pattern)) if (!categories.has(m[1])) add(m[1], relative(REPO, path));
    }
  }
  // api/problems.py's tables of codes ({"disk_full": "the server's disk is full", ...})
  const problems = readFileSync(join(REPO, "api", "problems.py"), "utf8");
  for (const m of problems.matchAll(new RegExp(`"(${SNAKE})":\\s*"`, "g"))) add(m[1], "api/problems.py");
  // a body that is not strict JSON: the reason of verifier/strictjson.py, not_json and not_utf8 as malformed_json
  const strict = readFileSync(join(REPO, "verifier", "strictjson.py"), "utf8");
  for (const m of strict.matchAll(new RegExp(`"(${SNAKE})"\\)`, "g"))) add(["not_json", "not_utf8"].includes(m[1]) ? "malformed_json" : m[1], "strictjson.py");
  for (const code of LISTED) add(code, "listed");
  return codes;
}

test("every problem code the server can send has an entry in both catalogues, in Chinese in zh", () => {
  const codes = serverCodes();
  for (const code of ["rate_limited", "too_many_unfinished_games", "disk_full", "not_your_turn", "duplicate_key", "invalid_client_seed"]) {
    assert.ok(codes.has(code), `the scan misses ${code}`);
  }
  const missing = [...codes].filter(([code]) => !(`problem.${code}` in en) || !(`problem.${code}` in zh));
  assert.deepEqual(missing, [], "problem codes without a catalogue entry (code, where it is sent)");
  for (const code of codes.keys()) {
    const text = zh[`problem.${code}`];
    assert.match(text, CJK, `problem.${code}`);
    assert.deepEqual(words(text).filter((w) => !NAMES.has(w)), [], `problem.${code}: ${text}`);
  }
  assert.ok(codes.size >= 60, codes.size);
});

// ------------------------------------------------------------------ unsigned moves, said plainly (SPEC §5.7)

test("a log whose human moves nobody signed says so in both languages, naming the seats and why", async () => {
  const { unsignedNote } = await import("../../api/static/report.js");
  const chain = JSON.parse(readFileSync(join(VECTORS, "chain.json"), "utf8")); // a version 2 log of ann and bo
  const report = await verifyLog(chain.log, { trustedKeys: [chain.public_key] });
  assert.deepEqual(report.unsignedSeats, [0, 2]);
  const names = (seat) => chain.log.header.seats[seat].name;
  const english = unsignedNote(translator("en"), report, names);
  assert.match(english, /ann and bo/);
  assert.match(english, /operator could have written them/);
  assert.match(english, /version 2/);
  const chinese = unsignedNote(translator("zh"), report, names);
  assert.ok(CJK.test(chinese) && chinese.includes("ann") && chinese.includes("运营方"), chinese);
  const signed = JSON.parse(readFileSync(join(VECTORS, "players.json"), "utf8")); // every human move signed
  const v3 = await verifyLog(signed.log, { trustedKeys: [signed.public_key] });
  assert.deepEqual(v3.unsignedSeats, []);
});
