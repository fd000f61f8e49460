"""The game page in a real browser: Playwright driving Debian's Chromium (headless)
against `fairdice serve` running as a real process on a free loopback port.

- the page's verification module (api/static/verify.js) recomputes every value
  of the SPEC §8.1 derivation vectors and the §8.2/§8.3 scores, replays the SPEC
  example log and a server roll-off, and accepts 64 `fairdice simulate` logs;
- a whole game of `yacht` against `ev`, played by clicking and by keys: the
  commitment is shown before the client seed is sent, holds keep their dice,
  recording 0 asks first, the bot's turns are played out step by step, a reload
  mid-turn resumes the game, and at the end the in-browser verification passes;
  the downloaded log passes `fairdice-verify`; the same page with one die of the
  log changed (the /log route intercepted) fails verification on that roll;
- the end screen, lobby and board at phone size (a solitaire game);
- any JavaScript error (console error or uncaught exception) fails the test.

Screenshots go to `artifacts/` at the repository root. CI installs Chromium
with `apt-get install chromium`; without it the module is skipped (and fails
where FAIRDICE_REQUIRE_BROWSER is set, as in CI).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "tests" / "vectors"
ARTIFACTS = REPO / "artifacts"
CHROMIUM = os.environ.get("FAIRDICE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

if not Path(CHROMIUM).exists():
    # .ci/run installs Chromium and sets FAIRDICE_REQUIRE_BROWSER: there a missing browser is a failure, not a skip
    if os.environ.get("FAIRDICE_REQUIRE_BROWSER"):
        raise RuntimeError(f"no Chromium at {CHROMIUM}, and FAIRDICE_REQUIRE_BROWSER is set")
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set FAIRDICE_CHROMIUM)",
                allow_module_level=True)
from playwright import sync_api  # noqa: E402  (a pinned dev dependency: no skip when it is missing)

from test_api_helpers import installed_command  # noqa: E402

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

# Runs before the page's own scripts on every load: quick animations, and a record of
# every text the status line showed (to see the bot's turn played out step by step).
INIT_SCRIPT = """
(() => {
  try {
    const prefs = JSON.parse(localStorage.getItem("fairdice.prefs") || "{}");
    if (!prefs.speed) localStorage.setItem("fairdice.prefs", JSON.stringify({...prefs, speed: "quick"}));
  } catch (e) {}
  window.__statuses = [];
  document.addEventListener("DOMContentLoaded", () => {
    const el = document.getElementById("status");
    new MutationObserver(() => window.__statuses.push(el.textContent))
      .observe(el, {childList: true, characterData: true, subtree: true});
  });
})();
"""


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def site(server):
    """The base URL of `fairdice serve` (conftest's `server`: a real process on a free loopback port)."""
    return server.url


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Watch:
    """Every JavaScript error a page reports: console errors and uncaught exceptions."""

    def __init__(self):
        self.errors: list[str] = []

    def attach(self, page):
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text} @ {m.location}"))
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        return page


@pytest.fixture
def watch():
    w = Watch()
    yield w
    assert not w.errors, "JavaScript errors on the page:\n" + "\n".join(w.errors)


def new_page(browser, watch, viewport=DESKTOP, storage_state=None, **kw):
    ctx = browser.new_context(viewport=viewport, storage_state=storage_state, accept_downloads=True, **kw)
    ctx.add_init_script(INIT_SCRIPT)
    ctx.set_default_timeout(15_000)
    return watch.attach(ctx.new_page())


def shot(page, name, full_page=True):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=full_page)


def api_get(site, path):
    with urllib.request.urlopen(site + path, timeout=10) as resp:
        return json.load(resp)


def api_post(site, path, body, token=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(site + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


# ------------------------------------------------------------------ page helpers

IDLE = "() => !document.body.classList.contains('busy')"


def wait_my_turn_or_end(page):
    """Until the board waits for my first roll of a turn, or the result is shown."""
    page.wait_for_function("""() => !document.querySelector('#result').hidden ||
        (!document.querySelector('#roll-btn').disabled && document.querySelector('#rolls-left').textContent === '3 left'
         && !document.body.classList.contains('busy'))""", timeout=30_000)
    return page.locator("#result").is_visible()


def roll(page, rolls_left_after):
    page.click("#roll-btn")
    page.wait_for_function(f"""() => !document.body.classList.contains('busy') &&
        document.querySelector('#rolls-left').textContent === '{rolls_left_after} left' &&
        document.querySelectorAll('#scorecard button.pick').length > 0""")


def dice(page) -> list[int]:
    return [int(x) for x in page.eval_on_selector_all("#dice .die", "els => els.map(e => e.dataset.face)")]


def picks(page) -> list[tuple[str, int]]:
    """(category, points) of every box the page offers now."""
    return page.eval_on_selector_all(
        "#scorecard tr.pickable", "rows => rows.map(r => [r.dataset.category, parseInt(r.querySelector('button.pick').textContent)])")


def pick(page, category):
    page.click(f"#scorecard tr[data-category={category}] button.pick")


def card_texts(page) -> list[str]:
    return page.eval_on_selector_all("#scorecard tbody td.filled", "tds => tds.map(t => t.closest('tr').dataset.category + '=' + t.textContent)")


# ------------------------------------------------------------------ tests


def test_verify_module_matches_spec_vectors(site, browser, watch):
    """verify.js, in the browser, recomputes all values of every SPEC §8.1 vector and replays §8.4."""
    vectors = json.loads((VECTORS / "derivation.json").read_text())
    log = json.loads((VECTORS / "log_short.json").read_text())
    page = new_page(browser, watch)
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    got = page.evaluate("""async (vectors) => {
        const v = await import('./ui/verify.js');
        return Promise.all(vectors.map((x) => v.deriveVector(x)));
    }""", vectors)
    assert len(got) == len(vectors) == 5
    for vec, out in zip(vectors, got):
        for name, key in (("commitment", "commitment"), ("message", "message"), ("block0", "block0"),
                          ("bytes_read", "bytes_read"), ("rejected", "rejected"), ("values", "values")):
            assert out[name] == vec[key], (vec["purpose"], vec["game_id"], name)

    report = page.evaluate("""async (log) => (await import('./ui/verify.js')).verifyLog(log)""", log)
    assert report["ok"], report["checks"]
    assert all(c["ok"] for c in report["checks"] if c["id"] != "seed.secret"), report["checks"]
    assert {c["id"] for c in report["checks"]} >= {"seed.commitment", "roll.dice", "score.points", "final.totals"}
    rolls = [e for e in log["events"] if e["type"] == "roll"]
    assert len(report["rolls"]) == len(rolls) and all(r["ok"] for r in report["rolls"])

    tampered = json.loads(json.dumps(log))
    events = tampered["events"]  # a turn's last roll (then no later roll holds the changed die)
    idx = next(i for i, e in enumerate(events) if e["type"] == "roll" and e["roll"] > 1 and events[i + 1]["type"] == "score")
    tampered["events"][idx]["dice"][4] = tampered["events"][idx]["dice"][4] % 6 + 1
    report = page.evaluate("""async (log) => (await import('./ui/verify.js')).verifyLog(log)""", tampered)
    assert not report["ok"]
    failed = {c["id"] for c in report["checks"] if c["ok"] is False}
    assert "roll.dice" in failed and "sig.final" in failed and "final.totals" not in failed
    assert [r["index"] for r in report["rolls"] if not r["ok"]] == [idx]

    # the page's scoring (for its score.points check) agrees with SPEC §8.2 and §8.3
    scoring = json.loads((VECTORS / "scoring.json").read_text())
    joker = json.loads((VECTORS / "joker.json").read_text())
    got = page.evaluate("""async ([scoring, joker]) => {
        const v = await import('./ui/verify.js');
        return [scoring.map((x) => v.scoreBox(x.rules, x.category, x.dice)),
                joker.map((x) => v.scoreOptions(x.rules, x.card, x.dice, x.upper_first))];
    }""", [scoring, joker])
    assert got[0] == [x["points"] for x in scoring]
    assert got[1] == [x["legal"] for x in joker]

    # a roll-off (first: "random") among three bots, played by the server: it re-derives too
    created = api_post(site, "/v1/games", {"rules": "yacht", "first": "random",
                                             "seats": [{"type": "bot", "bot": "greedy"}] * 3})
    api_post(site, f"/v1/games/{created['game_id']}/client-seed", {"client_seed": "operator ✓"},
             created["tokens"][0]["token"])
    served = api_get(site, f"/v1/games/{created['game_id']}/log")
    keys = [k["public_key"] for k in api_get(site, "/v1/keys")["keys"]]
    report = page.evaluate("""async ([log, keys]) =>
        (await import('./ui/verify.js')).verifyLog(log, {trustedKeys: keys})""", [served, keys])
    assert report["ok"] and all(c["ok"] for c in report["checks"]), report["checks"]
    assert len(report["rolloff"]) >= 3 and all(r["ok"] for r in report["rolloff"])
    start = next(e for e in served["events"] if e["type"] == "start")
    start["first"] = (start["first"] + 1) % 3
    report = page.evaluate("""async (log) => (await import('./ui/verify.js')).verifyLog(log)""", served)
    assert "start.first" in {c["id"] for c in report["checks"] if c["ok"] is False}

    cheat = json.loads(json.dumps(log))
    cheat["final"]["server_seed"] = "00" * 32
    report = page.evaluate("""async (log) => (await import('./ui/verify.js')).verifyLog(log)""", cheat)
    assert {c["id"] for c in report["checks"] if c["ok"] is False} >= {"seed.commitment", "roll.dice"}


def test_verify_module_accepts_simulated_games(site, browser, watch, tmp_path):
    """Logs of `fairdice simulate` (all rule sets; bots; jokers and bonuses happen) all verify in the page."""
    logs = []
    for rules, bots, games in (("yacht", "greedy,ev", 12), ("yatzy", "ev,greedy,ev", 12), ("classic13", "ev,ev", 40)):
        out = tmp_path / rules
        subprocess.run([sys.executable, "-m", "fairdice.cli", "simulate", "--rules", rules, "--bots", bots,
                        "--games", str(games), "--seed", f"browser-{rules}", "--out", str(out), "--jobs", "1"],
                       check=True, capture_output=True, timeout=120, cwd=REPO)
        logs += [json.loads(p.read_text()) for p in sorted(out.glob("*.json")) if p.name != "summary.json"]
    logs = [log for log in logs if log.get("format") == "fairdice-log"]
    assert len(logs) == 64
    scores = [e for log in logs for e in log["events"] if e["type"] == "score"]
    assert any(e["yahtzee_bonus"] or e["joker"] for e in scores)  # classic13's bonus and joker are exercised
    page = new_page(browser, watch)
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    reports = page.evaluate("""async (logs) => {
        const v = await import('./ui/verify.js');
        const out = [];
        for (const log of logs) {
            const r = await v.verifyLog(log);
            out.push({ok: r.ok, failed: r.checks.filter((c) => c.ok === false),
                      unchecked: r.checks.filter((c) => c.ok === null).map((c) => c.id)});
        }
        return out;
    }""", logs)
    assert all(r["ok"] and not r["failed"] for r in reports), [r["failed"] for r in reports if r["failed"]][:3]
    assert all(r["unchecked"] == ["seed.secret"] for r in reports)  # --seed: a reproducible, public seed


def test_play_yacht_against_ev_to_the_end(site, browser, watch, tmp_path):
    page = new_page(browser, watch)
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    assert page.locator("#hint-btn").count() == 1
    seed = page.input_value("#client-seed")
    assert re.fullmatch(r"[0-9a-f]{32}", seed), seed  # crypto.getRandomValues, 16 bytes
    page.check("input[name=rules][value=yacht]", force=True)
    page.check("input[name=opponent][value=ev]", force=True)
    page.check("input[name=first][value=me]", force=True)
    my_seed = "playwright's seed ✓ " + seed[:8]
    page.fill("#client-seed", my_seed)
    shot(page, "lobby-desktop.png")

    # rules dialog
    page.click("#nav-rules")
    page.wait_for_selector("#rules-dialog[open]")
    assert "Yacht" in page.inner_text("#rules-body")
    page.keyboard.press("Escape")

    # the commitment is shown before the client seed is sent
    page.click("#create-btn")
    page.wait_for_selector("#commit-card:not([hidden])")
    commitment = page.inner_text("#commitment").strip()
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    current = json.loads(page.evaluate("localStorage.getItem('fairdice.current')"))
    game_id = current["game_id"]
    state = api_get(site, f"/v1/games/{game_id}")
    assert state["status"] == "awaiting_client_seed" and state["commitment"] == commitment
    shot(page, "commit-desktop.png")
    page.reload()  # a reload before the seed is sent comes back to this step, seed and commitment kept
    page.wait_for_selector("#commit-card:not([hidden])")
    assert page.inner_text("#commitment").strip() == commitment
    assert page.input_value("#client-seed") == my_seed
    page.click("#start-btn")
    page.wait_for_selector("#game:not([hidden])")

    turn = 0
    tested = {"hold": False, "zero": False, "resume": False, "keys": False}
    while not wait_my_turn_or_end(page):
        turn += 1
        if not tested["keys"]:
            page.keyboard.press("r")  # R rolls
            page.wait_for_function("() => document.querySelector('#rolls-left').textContent === '2 left'")
            page.wait_for_function(IDLE)
            tested["keys"] = True
        else:
            roll(page, 2)
        if not tested["hold"]:
            before = dice(page)
            page.keyboard.press("1")  # hold die 1 by key, die 3 by click
            page.click("#dice .die[data-pos='2']")
            assert page.get_attribute("#dice .die[data-pos='0']", "aria-pressed") == "true"
            assert page.get_attribute("#dice .die[data-pos='2']", "aria-pressed") == "true"
            roll(page, 1)
            after = dice(page)
            assert after[0] == before[0] and after[2] == before[2]
            tested["hold"] = True
        if not tested["resume"] and turn == 4:
            cells = card_texts(page)
            shown = dice(page)
            page.reload()
            page.wait_for_selector("#game:not([hidden])")
            page.wait_for_function("() => document.querySelectorAll('#scorecard button.pick').length > 0")
            assert card_texts(page) == cells and dice(page) == shown
            assert page.inner_text("#rolls-left") == "2 left"
            tested["resume"] = True
            page.keyboard.press("2")
            page.wait_for_timeout(250)  # the held die's lift transition
            shot(page, "board-desktop.png")
        if turn == 2:  # the hint: H asks the server's optimal engine, the answer is shown
            page.wait_for_function(IDLE)
            page.keyboard.press("h")
            page.wait_for_selector("#hint-text:not([hidden])")
            assert page.inner_text("#hint-text").startswith("Hint:")
        options = picks(page)
        best = max(options, key=lambda o: o[1])
        zero = next((o for o in options if o[1] == 0), None)
        if not tested["zero"] and zero and best[1] > 0:
            pick(page, zero[0])
            page.wait_for_selector("#confirm-dialog[open]")
            assert "Record 0" in page.inner_text("#confirm-title")
            page.click("#confirm-cancel")
            page.wait_for_selector("#confirm-dialog", state="hidden")
            assert page.locator(f"#scorecard tr[data-category={zero[0]}] button.pick").count() == 1
            tested["zero"] = True
        pick(page, best[0])
    assert turn == 12, turn
    assert all(tested.values()), tested

    # the bot's turns were played out step by step, not jumped over
    statuses = page.evaluate("window.__statuses")
    assert any("ev bot rolls (1 of 3)" in s for s in statuses), statuses[-20:]
    assert any(re.search(r"ev bot scores \d+", s) for s in statuses), statuses[-20:]

    # end: result, totals, revealed seed, verification in the page
    page.wait_for_selector("#fairness[data-verdict=pass]", timeout=20_000)
    final = api_get(site, f"/v1/games/{game_id}")["final"]
    assert page.inner_text("#server-seed").strip() == final["server_seed"]
    assert page.inner_text("#fair-commitment").strip() == commitment
    log = api_get(site, f"/v1/games/{game_id}/log")
    n_rolls = sum(e["type"] == "roll" for e in log["events"])
    summary = page.inner_text("#verify-summary")
    assert f"{n_rolls} of {n_rolls} rolls re-derived" in summary, summary
    assert page.locator("#verify-report .rolls .roll.ok").count() == n_rolls
    assert page.locator("#verify-report .tick.bad").count() == 0
    assert my_seed in page.inner_text("#verify-report .seeds")
    title = page.inner_text("#result-title")
    expected = ("A draw" if final["draw"] else "You win!" if final["winner"] == 0 else "ev bot wins")
    assert expected in title, (title, final)
    result_text = page.inner_text("#result-table")
    for t in final["totals"]:
        assert str(t["total"]) in result_text
    records = json.loads(page.evaluate("localStorage.getItem('fairdice.records')"))
    assert records["yacht"]["games"] == 1 and records["yacht"]["best"] == final["totals"][0]["total"]
    shot(page, "end-desktop.png")

    # the download is the log, and the offline verifier accepts it
    assert page.inner_text("#verify-cmd").startswith("fairdice-verify game-")
    with page.expect_download() as dl:
        page.click("#download-btn")
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    assert json.loads(path.read_text()) == log
    keys = api_get(site, "/v1/keys")["keys"]
    pub = tmp_path / "server.pub"
    pub.write_text(keys[0]["public_key"])
    done = subprocess.run([installed_command("fairdice-verify"), str(path), "--pubkey", str(pub)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr

    # a reload returns to the end screen; records are counted once
    page.reload()
    page.wait_for_selector("#fairness[data-verdict=pass]", timeout=20_000)
    records = json.loads(page.evaluate("localStorage.getItem('fairdice.records')"))
    assert records["yacht"]["games"] == 1

    # the same page with one die of the log changed: verification fails on that roll
    events = log["events"]
    bot_roll = next(i for i, e in enumerate(events) if e["type"] == "roll" and e["seat"] == 1
                    and events[i + 1]["type"] == "score")
    tampered = json.loads(json.dumps(log))
    tampered["events"][bot_roll]["dice"][2] = tampered["events"][bot_roll]["dice"][2] % 6 + 1
    page.route(f"**/v1/games/{game_id}/log",
               lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(tampered)))
    page.reload()
    page.wait_for_selector("#fairness[data-verdict=fail]", timeout=20_000)
    assert "Verification failed" in page.inner_text("#verify-summary")
    assert page.locator("#verify-report [data-check='roll.dice'].bad").count() == 1
    assert page.locator(f"#verify-report .roll.bad[data-event='{bot_roll}']").count() == 1
    assert page.locator("#verify-report .roll.bad").count() == 1
    page.locator(f"#verify-report .roll.bad[data-event='{bot_roll}']").scroll_into_view_if_needed()
    shot(page, "end-tampered-desktop.png", full_page=False)
    page.unroute(f"**/v1/games/{game_id}/log")

    # pasting a log into "Verify a log" gives the same verdicts
    page.click("#nav-verify")
    page.fill("#verify-paste", json.dumps(tampered))
    page.click("#verify-run")
    page.wait_for_selector("#verify-dialog[data-verdict=fail]")
    page.fill("#verify-paste", json.dumps(log))
    page.click("#verify-run")
    page.wait_for_selector("#verify-dialog[data-verdict=pass]")
    page.keyboard.press("Escape")

    # phone size: the finished game resumes on its end screen (same browser storage)
    phone = new_page(browser, watch, viewport=PHONE, storage_state=page.context.storage_state(),
                     is_mobile=True, has_touch=True, device_scale_factor=2)
    page.context.close()
    phone.goto(site + "/")
    phone.wait_for_selector("#fairness[data-verdict=pass]", timeout=20_000)
    shot(phone, "end-phone.png")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # ... then a new solitaire game of classic13 at phone size
    phone.click("#new-game-btn")
    phone.wait_for_selector("#lobby:not([hidden])")
    assert phone.inner_text("#records-body").count("–") >= 1
    phone.check("input[name=rules][value=classic13]", force=True)
    phone.check("input[name=opponent][value=solo]", force=True)
    assert phone.eval_on_selector("#first-field", "f => f.disabled")
    shot(phone, "lobby-phone.png")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    phone.click("#create-btn")
    phone.wait_for_selector("#commit-card:not([hidden])")
    phone.click("#start-btn")
    phone.wait_for_selector("#game:not([hidden])")
    wait_my_turn_or_end(phone)
    phone.locator("#roll-btn").tap()
    phone.wait_for_function("() => document.querySelectorAll('#scorecard button.pick').length > 0")
    phone.wait_for_function(IDLE)
    phone.locator("#dice .die[data-pos='1']").tap()
    assert phone.get_attribute("#dice .die[data-pos='1']", "aria-pressed") == "true"
    shot(phone, "board-phone.png")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # abandoning asks first, then the seed is revealed and the rolls so far verify
    phone.locator("#abandon-btn").tap()
    phone.wait_for_selector("#confirm-dialog[open]")
    phone.locator("#confirm-zero").tap()
    phone.wait_for_selector("#fairness[data-verdict=pass]", timeout=20_000)
    assert "abandoned" in phone.inner_text("#result-title")
    phone.context.close()
