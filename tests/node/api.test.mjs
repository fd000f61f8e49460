// The page's API layer (api/static/api.js) against a fake server: it honours Retry-After on 429 and 503 by
// sending a read, or a move with its Idempotency-Key, again after exactly that long (and nothing else), and
// the page words every refusal from its catalogue (problems.js), with when to try again.

import assert from "node:assert/strict";
import test from "node:test";
import { ApiProblem, ATTEMPTS, MAX_SILENT_WAIT, api, retryAfterSeconds } from "../../api/static/api.js";
import { problemText } from "../../api/static/problems.js";
import { translator } from "../../api/static/i18n.js";
import en from "../../api/static/i18n/en.js";
import zh from "../../api/static/i18n/zh.js";

const problem = (status, code, retryAfter) => ({
  status, headers: retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) },
  body: { type: `urn:fairdice:problem:${code}`, title: code, status, detail: `the server's English for ${code}`, code },
});
const OK = { status: 200, headers: {}, body: { event_count: 7 } };

/** Serve `answers` in turn to the page's fetch; returns the requests seen (method, url, headers, time). */
function fakeServer(t, answers) {
  const seen = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    seen.push({ url, method: init.method, key: init.headers["Idempotency-Key"], at: performance.now() });
    const a = answers[Math.min(seen.length, answers.length) - 1];
    const type = a.status < 400 ? "application/json" : "application/problem+json";
    return new Response(JSON.stringify(a.body), { status: a.status, headers: { "Content-Type": type, ...a.headers } });
  };
  t.after(() => { globalThis.fetch = real; });
  return seen;
}

async function refusal(promise) {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ApiProblem, String(err));
    return err;
  }
  return assert.fail("the request was not refused");
}

test("a read answered 503 busy or 429 rate_limited with a short Retry-After is sent again after that long", async (t) => {
  const seen = fakeServer(t, [problem(503, "busy", 1), problem(429, "rate_limited", 1), OK]);
  assert.deepEqual(await api.state("g1"), OK.body);
  assert.equal(seen.length, 3);
  assert.ok(seen[1].at - seen[0].at >= 990 && seen[2].at - seen[1].at >= 990, seen.map((s) => s.at));
});

test("a move is sent again with the same Idempotency-Key (one move, once)", async (t) => {
  const seen = fakeServer(t, [problem(503, "disk_full", 0), OK]);
  await api.roll("g1", "token", [0, 2]);
  assert.equal(seen.length, 2);
  assert.ok(seen[0].key && seen[0].key === seen[1].key, seen);
});

test("a request that is not safe to repeat (creating a game) is not sent again", async (t) => {
  const seen = fakeServer(t, [problem(503, "busy", 0), OK]);
  const err = await refusal(api.create({ rules: "yacht", seats: [] }));
  assert.equal(seen.length, 1);
  assert.equal(err.code, "busy");
  assert.equal(err.retryAfter, 0);
});

test("a long Retry-After, no Retry-After, the engine's warm-up and other statuses go to the caller at once", async (t) => {
  for (const [answer, code, wait] of [[problem(503, "read_only", MAX_SILENT_WAIT + 1), "read_only", MAX_SILENT_WAIT + 1],
    [problem(503, "database_missing"), "database_missing", null], [problem(503, "engine_warming_up", 1), "engine_warming_up", 1],
    [problem(409, "not_your_turn", 1), "not_your_turn", 1]]) {
    const seen = fakeServer(t, [answer, OK]);
    const err = await refusal(api.state("g1"));
    assert.equal(seen.length, 1, code);
    assert.deepEqual([err.code, err.retryAfter], [code, wait]);
  }
});

test(`a refusal that lasts is given up after ${ATTEMPTS} attempts`, async (t) => {
  const seen = fakeServer(t, [problem(429, "rate_limited", 0)]);
  const err = await refusal(api.hint("g1", "token"));
  assert.equal(seen.length, ATTEMPTS);
  assert.equal(err.code, "rate_limited");
});

test("Retry-After in seconds or as an HTTP date", () => {
  assert.equal(retryAfterSeconds("7"), 7);
  assert.equal(retryAfterSeconds(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1)), 30);
  assert.equal(retryAfterSeconds("soon"), null);
  assert.equal(retryAfterSeconds(null), null);
});

test("a refusal is worded from the catalogue by its code, never with the server's English or the bare code", () => {
  for (const lang of ["en", "zh"]) {
    const t = translator(lang);
    const catalogue = lang === "en" ? en : zh;
    for (const code of ["rate_limited", "too_many_unfinished_games", "disk_full", "read_only", "database_missing",
      "database_replaced", "unreachable", "busy"]) {
      const status = code.startsWith("too_many") || code === "rate_limited" ? 429 : 503;
      const text = problemText(t, new ApiProblem(status, problem(status, code).body, null));
      assert.equal(text, catalogue[`problem.${code}`], `${lang} ${code}`);
      assert.ok(!text.includes("_") && !text.includes("English"), text); // (no code_name, no server detail)
    }
    // with the server's Retry-After: when to try again
    const later = problemText(t, new ApiProblem(429, problem(429, "rate_limited").body, 30));
    assert.ok(later.startsWith(catalogue["problem.rate_limited"]) && later.includes("30"), later);
    // a code this page does not know yet: by its status, not as a raw code
    const unknown = problemText(t, new ApiProblem(503, problem(503, "sunspots").body, null));
    assert.equal(unknown, catalogue["problem.service_unavailable"]);
  }
  assert.equal(problemText(translator("en"), new ApiProblem(429, problem(429, "rate_limited").body, 1)),
    `${en["problem.rate_limited"]} Try again in 1 second.`);
  assert.equal(problemText(translator("zh"), new ApiProblem(503, problem(503, "disk_full").body, 5)),
    `${zh["problem.disk_full"]}请 5 秒后再试。`);
});
