"""The page's flows a new player meets first (issue 22), in a real browser against `fairdice serve`, in
Chinese and in English, on a 390x844 phone and on a desktop:

- the lobby says plainly that the game is free and needs no account; on a phone `create-game` is on the
  first screen once a rule set and an opponent are chosen (the client seed folded under "advanced", still
  editable there), and after it the commitment and `start-game` are on screen together, unscrolled; the seed
  goes out only after the commitment was shown;
- the logo (`home`) leaves a game for the lobby mid-game, and the lobby's `resume-game` brings it back as it
  stood; an unfinished game is abandoned from the lobby's list (its seat signs the abandon), and a server
  that refuses a new game for its quota of unfinished games shows that list to abandon from;
- the house rule `upper_first` chosen in the lobby reaches the game (the server's state and signed header
  say so, and the board offers no lower box while an upper one is open);
- filled boxes are not buttons (not focusable, no button role); the commitment is a chip on a phone, tapped
  for its whole fingerprint;
- the end screen says in one plain sentence what was checked, then the downloads, then the details folded;
  the verifier's command line only on a desktop.

Screenshots of every screen go to artifacts/screenshots/ ({screen}-{device}-{lang}.png).
"""

from __future__ import annotations

import json
import re

import pytest

from support.browser import (DESKTOP, IDLE, PHONE, TOUCH, api_get, assert_all_chinese, assert_all_english,
                             assert_touch_targets, axe_clean, card_texts, new_page, picks, press, roll,
                             wait_my_turn_or_end)
from support.browser_page import LOCALES, choose, create_and_start, play_one_turn, shot

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

# The words of the seed documents' promise (000_…: 免费，无需注册), and jargon a plain sentence does without.
FREE = {"zh": "免费 · 无需注册", "en": "Free · no sign-up"}
JARGON = re.compile(r"SPEC|HMAC|§|SHA")


def in_language(page, lang: str, screen: str):
    (assert_all_chinese if lang == "zh" else assert_all_english)(page, screen)


# A box of the player's card as the DOM has it: a filled one must be no button and take no focus.
BOX_KIND = """(el) => ({tag: el.tagName, role: el.getAttribute('role'), tabIndex: el.tabIndex,
    focusable: el.matches('button, a[href], input, select, textarea, [tabindex]'), filled: el.classList.contains('filled')})"""

# Where elements are, against the viewport, with the page unscrolled.
PLACES = """(sels) => ({scrolled: scrollY, height: innerHeight, width: innerWidth,
    boxes: sels.map((s) => { const r = document.querySelector(s).getBoundingClientRect();
                             return {sel: s, top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width}; })})"""


def assert_on_screen(page, selectors, what, unscrolled=False):
    """Each element is drawn, wholly inside the viewport (`unscrolled`: and the page is not scrolled)."""
    got = page.evaluate(PLACES, selectors)
    out = [b for b in got["boxes"] if not (b["width"] > 0 and b["top"] >= 0 and b["left"] >= 0
                                            and b["bottom"] <= got["height"] and b["right"] <= got["width"])]
    assert not out and (got["scrolled"] == 0 or not unscrolled), (what, got)


def assert_on_screen_unscrolled(page, selectors, what):
    """Each element is drawn, wholly inside the viewport, and the page is not scrolled."""
    assert_on_screen(page, selectors, what, unscrolled=True)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_create_then_start_on_one_phone_screen(site, browser, watch, lang):
    """390x844: free and no sign-up said plainly; create-game on the first screen once a rule set and an
    opponent are chosen; then the commitment and start-game on screen at once, unscrolled; the seed, edited
    under "advanced", is sent only after the commitment was shown, and is the one the game took."""
    page = new_page(browser, watch, PHONE, locale=LOCALES[lang], **TOUCH)
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    assert page.inner_text("[data-testid=free]") == FREE[lang]
    assert_on_screen_unscrolled(page, ["[data-testid=free]"], "free, no sign-up")
    choose(page, True, "classic13", "ev")
    assert_on_screen_unscrolled(page, ["[data-testid=create-game]"], f"create, {lang}")
    assert not page.locator("#client-seed").is_visible()  # folded under "advanced" on a phone
    in_language(page, lang, "lobby")
    assert_touch_targets(page, "lobby")
    axe_clean(page, f"lobby, {lang}, phone")
    shot(page, f"lobby-phone-{lang}.png")

    press(page, page.get_by_test_id("advanced"), True)  # the seed stays the player's to edit
    page.wait_for_selector("#client-seed", state="visible")
    my_seed = f"{lang} phone seed ✓"
    page.fill("#client-seed", my_seed)
    shot(page, f"lobby-advanced-phone-{lang}.png")
    press(page, page.get_by_test_id("advanced"), True)  # folded again: the form is as a phone player sees it
    page.evaluate("window.scrollTo(0, 0)")
    assert_on_screen_unscrolled(page, ["[data-testid=create-game]"], f"create after advanced, {lang}")

    press(page, page.get_by_test_id("create-game"), True)
    page.wait_for_selector("#commit-card:not([hidden])")
    assert_on_screen_unscrolled(page, ["#commitment", "[data-testid=start-game]"], f"commitment and start, {lang}")
    game_id = json.loads(page.evaluate("localStorage.getItem('fairdice.current')"))["game_id"]
    state = api_get(site, f"/v1/games/{game_id}")
    # the commitment is on the screen, and the server has no seed of the player's yet
    assert state["status"] == "awaiting_client_seed" and page.inner_text("#commitment").strip() == state["commitment"]
    assert not any(e["type"] == "client_seed" for e in api_get(site, f"/v1/games/{game_id}/log")["events"])
    in_language(page, lang, "committed")
    axe_clean(page, f"committed, {lang}, phone")
    shot(page, f"commit-phone-{lang}.png")

    press(page, page.get_by_test_id("start-game"), True)
    page.wait_for_selector("#game:not([hidden])")
    wait_my_turn_or_end(page)
    sent = [e for e in api_get(site, f"/v1/games/{game_id}/log")["events"] if e["type"] == "client_seed"]
    assert [e["client_seed"] for e in sent] == [my_seed]
    page.context.close()


# ------------------------------------------------------------------ leaving, resuming, abandoning


@pytest.mark.parametrize("device,lang", [("phone", "zh"), ("desktop", "en"), ("phone", "en"), ("desktop", "zh")])
def test_leave_mid_game_and_resume(site, browser, watch, device, lang):
    """The logo leaves a game for the lobby mid-game; the lobby lists it (resume-game) and brings it back as it
    stood, still playable. Filled boxes are not buttons; the commitment chip is on screen and opens its
    details."""
    phone = device == "phone"
    page = new_page(browser, watch, PHONE if phone else DESKTOP, locale=LOCALES[lang], **(TOUCH if phone else {}))
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    game_id = create_and_start(page, phone)
    filled = play_one_turn(page, phone)

    # a filled box is done: not a button, no focus; the open ones are buttons
    kind = page.eval_on_selector(f"[data-testid=box-{filled}]", BOX_KIND)
    assert kind == {"tag": "DIV", "role": None, "tabIndex": -1, "focusable": False, "filled": True}, kind
    assert page.locator("button.box").count() == 11 and page.locator("button.box.filled").count() == 0

    # the commitment: a chip on the screen (a phone's too), tapped for the whole fingerprint
    commitment = api_get(site, f"/v1/games/{game_id}")["commitment"]
    assert_on_screen_unscrolled(page, ["[data-testid=commit-chip]"], "commitment chip")
    chip = page.get_by_test_id("commit-chip").bounding_box()
    assert chip["width"] >= 44 and chip["height"] >= 44, chip
    assert commitment[:8] in page.inner_text("[data-testid=commit-chip]")
    roll(page, touch=phone)
    in_language(page, lang, "game")
    if phone:
        assert_touch_targets(page, "game")
    axe_clean(page, f"game, {lang}, {device}")
    shot(page, f"game-{device}-{lang}.png")
    press(page, page.get_by_test_id("commit-chip"), phone)
    page.wait_for_selector("#commit-dialog[open]")
    assert page.inner_text("#commit-dialog-hash").strip() == commitment
    in_language(page, lang, "commitment dialog")
    shot(page, f"commitment-{device}-{lang}.png")
    page.keyboard.press("Escape")

    cells, shown_dice = card_texts(page), page.eval_on_selector_all("[data-testid=die]", "els => els.map(e => e.dataset.face)")
    events = api_get(site, f"/v1/games/{game_id}")["event_count"]
    press(page, page.get_by_test_id("home"), phone)
    page.wait_for_selector("#lobby:not([hidden])")
    assert page.evaluate("localStorage.getItem('fairdice.current')") is None  # a reload stays in the lobby
    entries = page.get_by_test_id("resume-game")
    assert entries.count() == 1
    assert api_get(site, f"/v1/games/{game_id}")["status"] == "playing"  # left, not abandoned
    in_language(page, lang, "lobby with an unfinished game")
    axe_clean(page, f"lobby with an unfinished game, {lang}, {device}")
    shot(page, f"lobby-unfinished-{device}-{lang}.png")

    page.reload()
    page.wait_for_selector("#lobby:not([hidden])")
    press(page, page.get_by_test_id("resume-game"), phone)
    page.wait_for_selector("#game:not([hidden])")
    page.wait_for_function(IDLE)
    assert card_texts(page) == cells
    assert page.eval_on_selector_all("[data-testid=die]", "els => els.map(e => e.dataset.face)") == shown_dice
    assert api_get(site, f"/v1/games/{game_id}")["event_count"] == events
    play_one_turn(page, phone)  # still the player's game: it plays on
    assert api_get(site, f"/v1/games/{game_id}")["event_count"] > events
    page.context.close()


@pytest.mark.parametrize("device,lang", [("phone", "en"), ("desktop", "zh")])
def test_abandon_an_unfinished_game_from_the_lobby(site, browser, watch, device, lang):
    """An unfinished game left for the lobby is abandoned from the lobby's list: the player confirms, its seat
    signs the abandon, the server reveals the seed, and the list empties; the game is among the recent ones."""
    phone = device == "phone"
    page = new_page(browser, watch, PHONE if phone else DESKTOP, locale=LOCALES[lang], **(TOUCH if phone else {}))
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    game_id = create_and_start(page, phone)
    play_one_turn(page, phone)
    press(page, page.get_by_test_id("home"), phone)
    page.wait_for_selector("[data-testid=abandon-game]")
    press(page, page.get_by_test_id("abandon-game"), phone)
    page.wait_for_selector("#confirm-dialog[open]")
    press(page, page.locator("#confirm-ok"), phone)
    page.wait_for_selector("#unfinished", state="hidden")
    log = api_get(site, f"/v1/games/{game_id}/log")
    abandon = [e for e in log["events"] if e["type"] == "abandon"]
    assert len(abandon) == 1 and abandon[0]["seat"] == 0 and abandon[0].get("player_signature"), abandon
    assert log["final"]["status"] == "abandoned" and re.fullmatch(r"[0-9a-f]{64}", log["final"]["server_seed"])
    kept = json.loads(page.evaluate("localStorage.getItem('fairdice.recent')"))
    entry = next(g for g in kept if g["game_id"] == game_id)
    assert entry["result"] == {"outcome": "abandoned"}
    assert max(r["events"] for r in entry["move_receipts"]) == len(log["events"])  # the abandon's receipt kept too
    assert page.locator("#recent-list li").count() >= 1
    in_language(page, lang, "lobby after abandoning")
    shot(page, f"lobby-abandoned-{device}-{lang}.png")
    page.context.close()


# ------------------------------------------------------------------ the server's quota of unfinished games


@pytest.fixture(scope="module")
def quota_site(tmp_path_factory):
    """A server that keeps one unfinished game per client (FAIRDICE_MAX_UNFINISHED=1)."""
    from support.api_helpers import ServeProcess
    proc = ServeProcess(tmp_path_factory.mktemp("quota"), workers=1, threads=4,
                        extra_env={"FAIRDICE_MAX_UNFINISHED": "1"}).start()
    yield proc.url
    proc.stop()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_quota_refusal_shows_the_unfinished_games(quota_site, browser, watch, lang):
    """A server at its quota of unfinished games refuses a new one: the page shows the unfinished games with
    why, the player abandons one from there, and the new game is created."""
    watch.allow(r"status of 429")  # the refusal the test provokes
    page = new_page(browser, watch, PHONE, locale=LOCALES[lang], **TOUCH)
    page.goto(quota_site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    first = create_and_start(page, True)
    press(page, page.get_by_test_id("home"), True)
    page.wait_for_selector("#lobby:not([hidden])")
    choose(page, True)
    press(page, page.get_by_test_id("create-game"), True)
    page.wait_for_selector("#unfinished-quota:not([hidden])")
    assert page.locator("#commit-card").is_hidden()
    assert_on_screen(page, ["#unfinished-quota", "[data-testid=abandon-game]"], "the quota's list")
    in_language(page, lang, "quota")
    shot(page, f"lobby-quota-phone-{lang}.png")
    press(page, page.get_by_test_id("abandon-game"), True)
    page.wait_for_selector("#confirm-dialog[open]")
    press(page, page.locator("#confirm-ok"), True)
    page.wait_for_selector("#unfinished", state="hidden")
    assert api_get(quota_site, f"/v1/games/{first}")["status"] == "abandoned"
    press(page, page.get_by_test_id("create-game"), True)
    page.wait_for_selector("#commit-card:not([hidden])")
    second = json.loads(page.evaluate("localStorage.getItem('fairdice.current')"))["game_id"]
    press(page, page.locator("#cancel-btn"), True)  # (cancelled: abandoned, the quota free for the next test)
    page.wait_for_selector("#commit-card", state="hidden")
    assert api_get(quota_site, f"/v1/games/{second}")["status"] == "abandoned"
    page.context.close()


# ------------------------------------------------------------------ the house rule


@pytest.mark.parametrize("device,lang", [("desktop", "en"), ("phone", "zh"), ("desktop", "zh"), ("phone", "en")])
def test_upper_first_chosen_in_the_lobby_reaches_the_game(site, browser, watch, device, lang):
    """"Upper section first", ticked in the lobby, is the game's house rule: the server's state and signed
    header say so, the table shows it, and after a roll no lower box is offered while an upper one is open.
    The optimal bot, which does not play it, does not offer it."""
    phone = device == "phone"
    page = new_page(browser, watch, PHONE if phone else DESKTOP, locale=LOCALES[lang], **(TOUCH if phone else {}))
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    if not page.locator("#advanced").evaluate("d => d.open"):
        press(page, page.get_by_test_id("advanced"), phone)
    press(page, page.get_by_test_id("bot-optimal"), phone)
    assert page.get_by_test_id("upper-first").is_disabled()
    in_language(page, lang, "lobby, advanced")
    shot(page, f"lobby-house-rule-{device}-{lang}.png", full_page=not phone)
    game_id = create_and_start(page, phone, bot="ev", upper_first=True)
    assert api_get(site, f"/v1/games/{game_id}")["upper_first"] is True
    assert api_get(site, f"/v1/games/{game_id}/log")["header"]["upper_first"] is True
    rule = {"zh": "房规：先填上半区", "en": "House rule: upper first"}[lang]
    assert rule in page.inner_text("#boxes .upper-line")  # said on the board, where it decides what is open
    assert page.get_by_test_id("house-rule").is_visible() is (not phone)  # (a phone's head keeps to one line)
    roll(page, touch=phone)
    offered = {c for c, _ in picks(page)}
    upper = {"ones", "twos", "threes", "fours", "fives", "sixes"}
    assert offered and offered <= upper, offered
    assert page.locator(".box-grid.lower button.box.closed[disabled]").count() == 6  # yacht's lower boxes
    in_language(page, lang, "game, upper first")
    shot(page, f"game-upper-first-{device}-{lang}.png")
    page.context.close()


# ------------------------------------------------------------------ the end screen


@pytest.mark.parametrize("device,lang", [("phone", "zh"), ("desktop", "en"), ("phone", "en"), ("desktop", "zh")])
def test_end_screen_in_plain_words_first(site, browser, watch, device, lang):
    """The end screen: the verdict and one plain sentence (no SPEC, HMAC or SHA), then the downloads, then the
    details folded in a <details>; the verifier's command line on a desktop only."""
    phone = device == "phone"
    page = new_page(browser, watch, PHONE if phone else DESKTOP, locale=LOCALES[lang], **(TOUCH if phone else {}))
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    create_and_start(page, phone)
    play_one_turn(page, phone)
    press(page, page.locator("#abandon-btn"), phone)
    page.wait_for_selector("#confirm-dialog[open]")
    press(page, page.locator("#confirm-ok"), phone)
    page.wait_for_selector("#fairness[data-verdict=pass]", timeout=20_000)
    plain = page.inner_text("[data-testid=verify-plain]")
    assert plain and not JARGON.search(plain), plain
    assert ("浏览器" in plain) if lang == "zh" else ("Your browser checked" in plain), plain
    order = page.evaluate("""() => ['#verify-summary', '[data-testid=verify-plain]', '#download-btn', '#fair-details']
        .map((s) => document.querySelector(s).getBoundingClientRect().top)""")
    assert order == sorted(order), order
    assert page.evaluate("document.querySelector('#fair-details').tagName") == "DETAILS"
    assert not page.evaluate("document.querySelector('#fair-details').open")
    assert page.locator("#verify-report .checks").is_hidden()  # folded
    assert page.get_by_test_id("verify-command").is_visible() is (not phone)
    if phone:  # the verdict, the sentence and the first download on the screen the game ends on, once scrolled to
        page.locator("#fairness").scroll_into_view_if_needed()
    in_language(page, lang, "end")
    axe_clean(page, f"end, {lang}, {device}")
    shot(page, f"end-{device}-{lang}.png", full_page=True)
    page.click("#fair-details > summary")
    assert page.locator("#verify-report .checks").is_visible()
    shot(page, f"end-details-{device}-{lang}.png", full_page=True)
    page.context.close()
