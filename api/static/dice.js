// The "fair dice" page (ui/dice.html, SPEC §10): open a session, send a client seed made here, roll dice notation,
// reveal the seed, and verify the log in the browser (verify/sessions.js). Every request is signed with an Ed25519
// key made on this device (where Web Crypto has Ed25519), over the chain of the events this page was shown, and
// every answer's receipt is held to that chain: what the page shows is what the server signed.

import { bytesToHex, concat, enc, field, hexToBytes, sha256, u32 } from "./verify/bytes.js";
import { canonicalJSON } from "./verify/canonical.js";
import { ed25519Verify } from "./verify/keys.js";
import { SESSION_LABELS, parseNotation, verifySessionLog } from "./verify/sessions.js";
import en from "./i18n/dice.en.js";
import zh from "./i18n/dice.zh.js";

const CATALOGUES = { en, zh };
const PREFS = "fairdice.prefs"; // the page's preferences (store.js): the language chosen there holds here too
const $ = (id) => document.getElementById(id);

function savedPrefs() {
  try {
    return JSON.parse(localStorage.getItem(PREFS) || "{}") || {};
  } catch {
    return {};
  }
}

function chosenLanguage() {
  const saved = savedPrefs().lang;
  if (saved && CATALOGUES[saved]) return saved;
  const first = (navigator.languages || []).map((l) => l.toLowerCase().split("-")[0]).find((l) => CATALOGUES[l]);
  return first || "en";
}

let lang = chosenLanguage();
const t = (key, params = {}) => (CATALOGUES[lang][key] ?? en[key] ?? key)
  .replace(/\{(\w+)\}/g, (_, name) => String(params[name] ?? ""));

function applyTexts() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
}

function randomSeed() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return bytesToHex(b);
}

class ProblemError extends Error {
  constructor(code, detail) {
    super(detail);
    this.code = code;
  }
}

async function call(method, path, body, token) {
  const headers = { Accept: "application/json, application/problem+json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST" && token) headers["Idempotency-Key"] = randomSeed();
  let resp;
  try {
    resp = await fetch(`../${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ProblemError("network", "");
  }
  const doc = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new ProblemError(doc.code || "http_error", doc.detail || String(resp.status));
  return doc;
}

/** An Ed25519 key of this app, or null where this browser has no Ed25519 (its rolls are then not signed). */
async function makeAppKey() {
  try {
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    return { privateKey: pair.privateKey, publicHex: bytesToHex(raw) };
  } catch {
    return null;
  }
}

const session = {};

async function extendChain(events) {
  for (const event of events) {
    session.digest = await sha256(concat([session.digest, enc.encode(canonicalJSON(event))]));
    session.count += 1;
  }
}

/** Take an answer's events into the chain and hold its receipt to it (SPEC §10.6). */
async function take(answer) {
  await extendChain(answer.events);
  const rc = answer.receipt;
  const signedBytes = concat([field(SESSION_LABELS.receipt), field(session.id), u32(rc.events), hexToBytes(rc.chain)]);
  if (rc.events !== session.count || rc.chain !== bytesToHex(session.digest)
      || (await ed25519Verify(session.header.public_key, rc.signature, signedBytes)) === false) {
    throw new ProblemError("bad_receipt", "the receipt does not sign the history this page was shown");
  }
  session.receipts.push(rc);
}

async function signed(command) {
  if (!session.signing) return {};
  const msg = concat([field(SESSION_LABELS.app), field(session.id), u32(session.count), session.digest,
    enc.encode(canonicalJSON(command))]);
  const sig = new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, session.appKey.privateKey, msg));
  return { app_signature: bytesToHex(sig), event_count: session.count };
}

function showError(err) {
  const box = $("dice-error");
  const code = err instanceof ProblemError ? err.code : "";
  const worded = CATALOGUES[lang][`dice.error.${code}`] || en[`dice.error.${code}`];
  box.textContent = t("dice.error", { detail: worded || err.message || code });
  box.dataset.code = code;
  box.hidden = false;
}

async function run(action) {
  $("dice-error").hidden = true;
  try {
    await action();
  } catch (err) {
    showError(err);
  }
}

async function open() {
  const created = await call("POST", "v1/sessions", {});
  Object.assign(session, { id: created.session_id, token: created.token, header: created.header, count: 0,
    receipts: [], pair: 0, nonce: 0, signing: false, appKey: await makeAppKey() });
  session.digest = await sha256(concat([field(SESSION_LABELS.chain), field(session.id),
    enc.encode(canonicalJSON(session.header))]));
  $("dice-commitment").textContent = created.commitment;
  $("dice-next").textContent = created.next_commitment;
  $("dice-seed").value = randomSeed();
  $("dice-session").hidden = false;
  $("dice-open").hidden = true;
  $("dice-seed").focus();
}

async function sendSeed(event) {
  event.preventDefault();
  const answer = await call("POST", `v1/sessions/${session.id}/client-seed`,
    { client_seed: $("dice-seed").value, app_key: session.appKey ? session.appKey.publicHex : null }, session.token);
  await take(answer);
  session.signing = session.appKey !== null;
  $("dice-seed-form").hidden = true;
  $("dice-roll-form").hidden = false;
  $("dice-rotate").hidden = false;
  $("dice-signed").hidden = !session.signing;
  $("dice-notation").focus();
}

function rollItem(answer) {
  const dropped = new Set(answer.dropped);
  const faces = document.createElement("span");
  faces.className = "faces";
  answer.rolls.forEach((face, i) => {
    const f = document.createElement("span");
    f.textContent = String(face);
    if (dropped.has(i)) {
      f.className = "dropped";
      f.title = t("dice.dropped");
    }
    faces.append(f, i + 1 < answer.rolls.length ? " " : "");
  });
  const li = document.createElement("li");
  const head = document.createElement("strong");
  head.textContent = `${answer.dice} → ${t("dice.total", { total: answer.total })}`;
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = `${t("dice.pair", { pair: answer.pair })} · ${t("dice.nonce", { nonce: answer.nonce })} · #${answer.serial}`;
  li.dataset.testid = "dice-roll-item";
  li.append(head, " ", faces, meta);
  return li;
}

async function roll(event) {
  event.preventDefault();
  const dice = $("dice-notation").value.trim();
  const spec = parseNotation(dice); // refused here as the server would refuse it, in the player's language
  if (typeof spec === "string") throw new ProblemError(spec, dice);
  const body = { dice, ...(await signed({ type: "roll", pair: session.pair, nonce: session.nonce, dice })) };
  const answer = await call("POST", `v1/sessions/${session.id}/rolls`, body, session.token);
  await take(answer);
  session.nonce = answer.nonce + 1;
  $("dice-rolls").prepend(rollItem(answer));
  $("dice-empty").hidden = true;
}

async function rotate() {
  const body = { client_seed: randomSeed(), app_key: session.appKey ? session.appKey.publicHex : null,
    ...(await signed({ type: "rotate", pair: session.pair })) };
  const answer = await call("POST", `v1/sessions/${session.id}/rotate`, body, session.token);
  await take(answer);
  Object.assign(session, { pair: answer.pair, nonce: 0 });
  const li = document.createElement("li");
  li.className = "meta";
  li.textContent = t("dice.revealed", { pair: answer.revealed.pair, seed: answer.revealed.server_seed });
  $("dice-rolls").prepend(li);
  $("dice-commitment").textContent = answer.commitment;
  $("dice-next").textContent = answer.next_commitment;
  $("dice-verify").hidden = false;
}

async function verify() {
  const [log, keys] = await Promise.all([call("GET", `v1/sessions/${session.id}/log`),
    call("GET", "v1/keys")]);
  const verdict = $("dice-verdict");
  const result = await verifySessionLog(log, { trustedKeys: keys.keys.map((k) => k.public_key),
    appKey: session.appKey ? session.appKey.publicHex : undefined, receipts: session.receipts });
  verdict.hidden = false;
  if (result.unverifiable) {
    verdict.className = "dice-verdict bad";
    verdict.textContent = t("dice.cannot");
  } else if (!result.revealedPairs) {
    verdict.className = "dice-verdict";
    verdict.textContent = t("dice.nothing");
  } else if (result.ok) {
    verdict.className = "dice-verdict ok";
    verdict.textContent = t("dice.verified", { status: result.status })
      + (result.notes.some((n) => n.code === "unsigned_pairs") ? ` ${t("dice.unsigned")}` : "");
  } else {
    verdict.className = "dice-verdict bad";
    verdict.textContent = t("dice.failed", { count: result.failures.length });
  }
  verdict.dataset.ok = String(result.ok && !result.unverifiable);
}

function start() {
  applyTexts();
  $("dice-lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    localStorage.setItem(PREFS, JSON.stringify({ ...savedPrefs(), lang }));
    applyTexts();
  });
  $("dice-open").addEventListener("click", () => run(open));
  $("dice-seed-new").addEventListener("click", () => { $("dice-seed").value = randomSeed(); });
  $("dice-seed-form").addEventListener("submit", (e) => run(() => sendSeed(e)));
  $("dice-roll-form").addEventListener("submit", (e) => run(() => roll(e)));
  $("dice-rotate").addEventListener("click", () => run(rotate));
  $("dice-verify").addEventListener("click", () => run(verify));
  document.body.dataset.ready = "true";
}

start();
