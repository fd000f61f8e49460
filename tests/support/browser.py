"""Playwright driving Debian's Chromium: the browser tests' constants and helpers (tests/browser/; the fixtures
`site`, `browser` and `watch` are tests/browser/conftest.py's).

Without Chromium a module that imports this one is skipped, and fails where FAIRDICE_REQUIRE_BROWSER is set
(as in CI)."""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

from support import ARTIFACTS, REPO

STATIC = REPO / "api" / "static"
CHROMIUM = os.environ.get("FAIRDICE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

if not Path(CHROMIUM).exists():
    # .ci/run installs Chromium and sets FAIRDICE_REQUIRE_BROWSER: there a missing browser is a failure, not a skip
    if os.environ.get("FAIRDICE_REQUIRE_BROWSER"):
        raise RuntimeError(f"no Chromium at {CHROMIUM}, and FAIRDICE_REQUIRE_BROWSER is set")
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set FAIRDICE_CHROMIUM)",
                allow_module_level=True)
from axe_playwright_python.sync_playwright import Axe  # noqa: E402  (pinned dev dependencies: no skip when missing)

from fairdice.chain import chain  # noqa: E402
from fairdice.players import PlayerKey  # noqa: E402

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 320, "height": 568}
LANDSCAPE = {"width": 844, "height": 390}
TOUCH = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}

# The box names of the seed documents (the Chinese rule pages the players know), in table order, and the
# English names of SPEC §3.
ZH_BOXES = {
    "yacht": "幺点 两点 三点 四点 五点 六点 自选 四条 葫芦 小顺 大顺 快艇",
    "yatzy": "一点 两点 三点 四点 五点 六点 一对 两对 三条 四条 小顺子 大顺子 葫芦 机会 亚兹",
    "classic13": "幺点 两点 三点 四点 五点 六点 三条 四条 葫芦 小顺 大顺 快艇 机会",
}
EN_BOXES = {"yacht": "Ones|Twos|Threes|Fours|Fives|Sixes|Choice|Four of a kind|Full house|Small straight|"
                     "Large straight|Yacht"}

# Runs before the page's own scripts on every load: quick animations, and a record of every text the status
# line showed, with where the dice were on the screen and what moved at that moment.
INIT_SCRIPT = """
(() => {
  try {
    const prefs = JSON.parse(localStorage.getItem("fairdice.prefs") || "{}");
    if (!prefs.speed) localStorage.setItem("fairdice.prefs", JSON.stringify({...prefs, speed: "quick"}));
  } catch (e) {}
  window.__statuses = [];
  window.__tumbled = 0;
  document.addEventListener("DOMContentLoaded", () => {
    const el = document.getElementById("status");
    if (!el) return;  // not the game page
    new MutationObserver(() => {
      const r = document.getElementById("dice").getBoundingClientRect();
      window.__statuses.push({text: el.textContent, top: r.top, bottom: r.bottom, height: innerHeight,
        animations: document.getAnimations().filter((a) => a.playState === "running").length});
    }).observe(el, {childList: true, characterData: true, subtree: true});
    new MutationObserver(() => {
      if (document.querySelector("#dice .tumbling")) window.__tumbled += 1;
    }).observe(document.getElementById("dice"), {attributes: true, subtree: true, attributeFilter: ["class"]});
  });
})();
"""


class Watch:
    """Every JavaScript error a page reports: console errors and uncaught exceptions (`allow`: patterns of
    console errors a test provokes on purpose, such as a 503 it serves)."""

    def __init__(self):
        self.errors: list[str] = []
        # the coach's analysis while the server builds its optimal table (503, shown as "preparing"): a game that
        # ends in a test that built no table
        self.allowed: list[re.Pattern] = [re.compile(r"status of 503 .*/v1/games/[^/]+/analysis'")]

    def allow(self, pattern: str):
        self.allowed.append(re.compile(pattern))

    def attach(self, page):
        def console(m):
            said = f"{m.text} @ {m.location}"
            if m.type == "error" and not any(p.search(said) for p in self.allowed):
                self.errors.append(f"console: {said}")
        page.on("console", console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        return page


def new_page(browser, watch, viewport=DESKTOP, storage_state=None, locale="en-US", **kw):
    ctx = browser.new_context(viewport=viewport, storage_state=storage_state, accept_downloads=True, locale=locale, **kw)
    ctx.add_init_script(INIT_SCRIPT)
    ctx.set_default_timeout(15_000)
    return watch.attach(ctx.new_page())


def shot(page, name, full_page=False):
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


def page_key(page, seat=0):
    """The Ed25519 key the page keeps for `seat` of its current game (SPEC §5.7), as the core's PlayerKey."""
    current = json.loads(page.evaluate("localStorage.getItem('fairdice.current')"))
    jwk = current["seats"][str(seat)]["key"]["private_jwk"]
    return PlayerKey.from_private_hex(base64.urlsafe_b64decode(jwk["d"] + "==").hex())


def signed_post(site, game, token, key, route, body, command):
    """A move made elsewhere (not through the page) with the page's own key, signed over the stored history."""
    log = api_get(site, f"/v1/games/{game}/log")
    n = len(log["events"])
    signature = key.sign(game, n, chain(log["header"], log["events"]), command)
    return api_post(site, f"/v1/games/{game}/{route}", {**body, "player_signature": signature, "event_count": n}, token)


def axe_clean(page, screen):
    """axe-core finds no violation on the page as it is now."""
    results = Axe().run(page)
    assert results.violations_count == 0, f"{screen}: {results.generate_report()}"


# ------------------------------------------------------------------ page helpers

ROLL = "[data-testid=roll]"
IDLE = "() => !document.body.classList.contains('busy')"
TURN_START = """() => !document.querySelector('#result').hidden || (!document.body.classList.contains('busy') &&
    !document.querySelector('[data-testid=roll]').disabled && document.querySelector('[data-testid=roll]').dataset.rollsMade === '0')"""


def press(page, locator, touch):
    """A tap on a phone, a click elsewhere."""
    (locator.tap if touch else locator.click)()


def wait_my_turn_or_end(page) -> bool:
    """Until the board waits for my first roll of a turn (False), or the result is shown (True)."""
    page.wait_for_function(TURN_START, timeout=30_000)
    return page.locator("#result").is_visible()


def rolls_made(page) -> int:
    return int(page.get_attribute(ROLL, "data-rolls-made") or 0)


def roll(page, touch=False, by_key=False):
    """Roll once and wait until the board offers the boxes for the new dice."""
    before = rolls_made(page)
    if by_key:
        page.keyboard.press("r")
    else:
        press(page, page.locator(ROLL), touch)
    page.wait_for_function(f"""() => !document.body.classList.contains('busy') &&
        document.querySelector('[data-testid=roll]').dataset.rollsMade === '{before + 1}' &&
        document.querySelectorAll('button.box.pos:not([disabled]), button.box.zero:not([disabled])').length > 0""")


def dice(page) -> list[int]:
    return [int(x) for x in page.eval_on_selector_all("[data-testid=die]", "els => els.map(e => e.dataset.face)")]


def picks(page) -> list[tuple[str, int]]:
    """(category, points) of every box the page offers now."""
    return page.eval_on_selector_all("button.box:not([disabled]):not(.filled)",
                                     "bs => bs.map(b => [b.dataset.category, parseInt(b.querySelector('.box-value').textContent)])")


def card_texts(page) -> list[str]:
    return page.eval_on_selector_all("#scorecard tbody td.filled", "tds => tds.map(t => t.closest('tr').dataset.category + '=' + t.textContent)")


def box_names(page) -> list[str]:
    return page.eval_on_selector_all("button.box .box-name", "els => els.map(e => e.textContent)")


def set_holds(page, hold, touch=False):
    """Hold exactly these positions (a held die stays held for the next roll of the turn until pressed again)."""
    held = page.eval_on_selector_all("[data-testid=die]", "els => els.map((e) => e.getAttribute('aria-pressed') === 'true')")
    for p in range(5):
        if held[p] != (p in hold):
            press(page, page.locator("[data-testid=die]").nth(p), touch)


def choose_hold(values: list[int]) -> list[int]:
    """Keep every die of the most common face (the higher on equal counts)."""
    face = max(set(values), key=lambda f: (values.count(f), f))
    return [i for i, d in enumerate(values) if d == face]


ON_ONE_SCREEN = """() => {
    const inView = (el) => { const r = el.getBoundingClientRect();
        return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; };
    const els = [...document.querySelectorAll('[data-testid=die]'), document.querySelector('[data-testid=roll]'),
                 ...document.querySelectorAll('button.box:not(.filled)')];
    return {scrolled: scrollY, wide: document.documentElement.scrollWidth > innerWidth, count: els.length,
            out: els.filter((e) => !inView(e)).map((e) => (e.dataset.category || e.dataset.testid) + ' '
                 + JSON.stringify(e.getBoundingClientRect()))};
}"""


def assert_turn_on_one_screen(page, what):
    """The dice, the roll button and every open box of the player's card are on the screen, unscrolled."""
    got = page.evaluate(ON_ONE_SCREEN)
    assert got["scrolled"] == 0 and not got["wide"] and not got["out"], (what, got)


SMALL_TARGETS = """() => {
    const sel = 'button, select, input:not([type=radio]):not([type=file]), label.choice, .segmented label, summary, [role=tab], a[href]';
    return [...document.querySelectorAll(sel)].filter((el) => el.getClientRects().length && !el.closest('p, li, [hidden], dialog:not([open])'))
      .map((el) => [el.id || el.dataset.testid || el.className || el.tagName, el.getBoundingClientRect()])
      .filter(([, r]) => r.width > 0 && r.right > 0 && r.bottom > 0 && (r.height < 43.5 || r.width < 43.5)).map(([n, r]) => `${n} ${r.width}x${r.height}`);
}"""


def assert_touch_targets(page, screen):
    """Every control (outside running text) is at least 44 x 44 CSS pixels, and taps draw no grey square."""
    small = page.evaluate(SMALL_TARGETS)
    assert not small, (screen, small)
    colours = set(page.eval_on_selector_all("button, label, a", "els => els.map(e => getComputedStyle(e).webkitTapHighlightColor)"))
    assert colours == {"rgba(0, 0, 0, 0)"}, colours


LATIN_WORDS = """() => {
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || !el.getClientRects().length || el.closest('code, kbd, textarea, .mono, .brand, [lang]:not([lang^=zh]), .mini, script, style')) continue;
      for (const m of n.textContent.matchAll(/(?<![A-Za-z0-9])[A-Za-z]{2,}(?![A-Za-z0-9])/g)) out.push(m[0]);
    }
    for (const el of document.querySelectorAll('[aria-label], [title]')) {
      if (!el.getClientRects().length || el.closest('[lang]:not([lang^=zh])')) continue;
      for (const v of [el.getAttribute('aria-label'), el.getAttribute('title')]) {
        for (const m of (v || '').matchAll(/(?<![A-Za-z0-9])[A-Za-z]{2,}(?![A-Za-z0-9])/g)) out.push(m[0]);
      }
    }
    return out;
}"""
# Words a Chinese page shows as they are: names, standards and the verifier's own command and fields.
NOT_TRANSLATED = {"fairdice", "verify", "SHA", "HMAC", "JSON", "Web", "Crypto", "Ed25519", "SPEC", "Yatzy", "Yahtzee",
                  "EV", "MiB", "simulate", "seed", "receipt", "receipts", "format", "log", "header", "events", "English"}


def assert_all_chinese(page, screen):
    """No English word on the screen (or in its labels) but names and the verifier's own terms."""
    words = sorted(set(page.evaluate(LATIN_WORDS)) - NOT_TRANSLATED)
    assert not words, (screen, words)


CJK_TEXT = """() => [...document.querySelectorAll('body *')].filter((el) => el.getClientRects().length
    && !el.closest('[lang^=zh]') && [...el.childNodes].some((n) => n.nodeType === 3 && /[\\u3000-\\u9fff\\uff00-\\uffef]/.test(n.textContent)))
    .map((el) => el.textContent.slice(0, 60))"""


def assert_all_english(page, screen):
    """No Chinese on an English page (but the language switch, which says 中文 in Chinese)."""
    assert page.evaluate("document.documentElement.lang") == "en"
    found = page.evaluate(CJK_TEXT)
    assert not found, (screen, found)


def slow_down_for_the_bot(page):
    """Normal speed for the next bot turn (so that a screenshot catches it), and forget the last bot step."""
    page.evaluate("""() => { localStorage.setItem('fairdice.prefs', JSON.stringify({...JSON.parse(
        localStorage.getItem('fairdice.prefs') || '{}'), speed: 'normal'})); document.querySelector('#status').removeAttribute('data-step'); }""")


def speed_up(page):
    page.evaluate("""() => localStorage.setItem('fairdice.prefs', JSON.stringify({...JSON.parse(
        localStorage.getItem('fairdice.prefs') || '{}'), speed: 'quick'}))""")


def catch_the_bot_rolling(page, name):
    """A screenshot while the bot's turn is played out (its second roll, or its first when it stops there)."""
    page.wait_for_selector("#status[data-step^='1:']", timeout=30_000)
    shot(page, name)
    speed_up(page)


def start_solo_game(page, site, touch):
    """The lobby, then a game of yacht alone, up to the player's first roll."""
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    for testid in ("rules-yacht", "bot-solo", "create-game"):
        press(page, page.get_by_test_id(testid), touch)
    page.wait_for_selector("#commit-card:not([hidden])")
    press(page, page.get_by_test_id("start-game"), touch)
    page.wait_for_selector("#game:not([hidden])")
    wait_my_turn_or_end(page)


def altered_table(route):
    """The server's table with its last bit flipped on the way (a route handler): another table, another digest."""
    body = bytearray(route.fetch().body())
    body[-1] ^= 1
    route.fulfill(status=200, body=bytes(body), headers={"Content-Type": "application/octet-stream"})
