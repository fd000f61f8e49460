"""Playing friends in a real browser (issue 20), with every move signed by the player who made it (SPEC §5.7):
Playwright driving Debian's Chromium against `fairdice serve` (the fixtures of tests/browser/conftest.py).

- two browsers play each other from an invite link: the friend's page (Chinese) sees the rules, the seats and the
  signed commitment before joining with its own seed and key; each takes its turns and sees the other's moves
  without reloading, with a "waiting for ..." state in both languages; the friend leaves and comes back from its
  link (the same link on another device only watches: the seat's key is on the friend's phone); both end screens
  verify, and every human event of the log is signed by its seat's key;
- pass and play: two friends and a bot on one phone, each friend with its own key and receipt; a spectator link
  shows the game read-only as it is played; both end screens verify (the players' page once per seat), and
  `fairdice-verify` accepts the page's downloads: the log, both receipts, the move receipts;
- a signed abandon verifies with `fairdice-verify` given the page's receipts, and "Verify a log" holds a log to
  the receipts the page kept;
- an answer whose move receipt signs another roll than it shows, or that carries no receipt, stops the game.

Screenshots go where tests/browser/test_browser.py saves its own (artifacts/): friends-{screen}-phone-{lang}.png.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from support.api_helpers import installed_command
from support.browser import (CJK_TEXT, IDLE, LATIN_WORDS, NOT_TRANSLATED, PHONE, ROLL, TOUCH, api_get,
                             assert_touch_targets, axe_clean, new_page, picks, press, roll, shot)

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

# Two friends revealing their seeds at once: the later reveal is refused as signed over an older history
# (409 stale_history), and the page signs the same reveal again over the new one (SPEC §5.7). The browser logs
# the refusal as a failed request.
STALE = r"status of 409"

MY_TURN_OR_END = """() => !document.querySelector('#result').hidden || (!document.body.classList.contains('busy') &&
    !document.querySelector('[data-testid=roll]').disabled && document.querySelector('[data-testid=roll]').dataset.rollsMade === '0')"""
FILLED = "() => document.querySelectorAll('#scorecard tbody td.filled').length"
VERIFIED = "#fairness:not([data-verdict=pending])"


def kept(page) -> dict:
    """The game as the page keeps it in the browser's storage (store.js)."""
    return json.loads(page.evaluate("localStorage.getItem('fairdice.current')"))


def open_lobby(page, site, name, *choices):
    """The lobby, the player named `name`, with these choices (test ids of a rule set and an opponent) made."""
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    page.fill("#player-name", name)
    page.dispatch_event("#player-name", "change")
    for testid in choices:
        page.get_by_test_id(testid).check(force=True)


def start_game(page, site, opponent):
    """A game of yacht against `opponent` (a bot, or "solo") from the lobby, up to the player's first roll."""
    open_lobby(page, site, "Ann", "rules-yacht", opponent)
    page.get_by_test_id("create-game").click()
    page.wait_for_selector("#commit-card:not([hidden])")
    page.get_by_test_id("start-game").click()
    page.wait_for_function(MY_TURN_OR_END)


def play_turn(page, touch):
    """The page's seat plays one turn: one roll, then the box that scores most."""
    roll(page, touch)
    category, _ = max(picks(page), key=lambda p: p[1])
    press(page, page.locator(f"[data-testid=box-{category}]"), touch)
    page.wait_for_function(IDLE)


def assert_chinese_but_names(page, screen, names):
    """No English word on a Chinese page but names, standards and the players' own names."""
    words = sorted(set(page.evaluate(LATIN_WORDS)) - NOT_TRANSLATED - set(names))
    assert not words, (screen, words)


CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def assert_english_but_names(page, screen, names):
    """No Chinese on an English page but the players' own names (and the language switch)."""
    assert page.evaluate("document.documentElement.lang") == "en"
    found = [text for text in page.evaluate(CJK_TEXT) if CJK.search(re.sub("|".join(names), "", text))]
    assert not found, (screen, found)


def assert_signed_by(log, keys: dict[int, str]):
    """Every event of each seat of `keys` carries its key (first events) and a signature (SPEC §5.7)."""
    for seat, key in keys.items():
        events = [e for e in log["events"] if e.get("seat") == seat]
        assert events and all(len(e["player_signature"] or "") == 128 for e in events), seat
        assert {e["player_key"] for e in events if "player_key" in e} == {key}, seat


def fairdice_verify(site, tmp_path, paths):
    pub = tmp_path / "server.pub"
    pub.write_text(api_get(site, "/v1/keys")["keys"][0]["public_key"])
    return subprocess.run([installed_command("fairdice-verify"), "--pubkey", str(pub), *map(str, paths)],
                          capture_output=True, text=True, timeout=120)


def download(page, button, tmp_path, count=1) -> list:
    """Click a download button; the `count` files it saves (one per receipt when the page keeps several)."""
    got = []

    def saved_one(d):
        got.append(d)
    page.on("download", saved_one)
    page.click(button)
    for _ in range(100):
        if len(got) >= count:
            break
        page.wait_for_timeout(100)
    page.remove_listener("download", saved_one)
    assert len(got) == count, [d.suggested_filename for d in got]
    saved = []
    for d in got:
        path = tmp_path / d.suggested_filename
        d.save_as(path)
        saved.append(path)
    return saved


# ------------------------------------------------------------------ two browsers


def test_two_browsers_play_each_other_from_an_invite_link(site, browser, watch):
    """Ann (English) invites 小红 (Chinese) with a link; each plays on its own phone and sees the other's moves as
    they are made, 小红 leaves and comes back from the link, and both end screens verify the signed log."""
    watch.allow(STALE)
    ann = new_page(browser, watch, viewport=PHONE, locale="en-US", **TOUCH)
    open_lobby(ann, site, "Ann", "rules-yacht", "opponent-friend")
    ann.fill("[data-testid=seat-name]", "小红")
    shot(ann, "friends-lobby-phone-en.png", full_page=True)
    assert_touch_targets(ann, "lobby, a friend")
    press(ann, ann.get_by_test_id("create-game"), True)
    ann.wait_for_selector("#commit-card:not([hidden])")
    link = ann.get_by_test_id("invite-link").input_value()
    spectate = ann.get_by_test_id("spectator-link").input_value()
    page_url, fragment = link.split("#")
    assert "token=" in fragment and "token" not in page_url  # the seat's token never goes to the server
    assert "token" not in spectate and "watch=" in spectate
    commitment = ann.inner_text("#commitment")
    shot(ann, "friends-invite-phone-en.png", full_page=True)
    press(ann, ann.get_by_test_id("start-game"), True)
    ann.wait_for_selector("#game:not([hidden])")
    ann.wait_for_function("() => /Waiting for 小红 to join/.test(document.querySelector('#status').textContent)")
    assert ann.get_by_test_id("invite-link").input_value() == link  # the link stays at hand while waiting
    shot(ann, "friends-waiting-phone-en.png")
    axe_clean(ann, "waiting for a friend")

    hong = new_page(browser, watch, viewport=PHONE, locale="zh-CN", **TOUCH)
    hong.goto(link)
    hong.wait_for_selector("#join-card:not([hidden])")
    assert "token" not in hong.url  # the token left the address bar
    invitation = hong.inner_text("#join-card")
    assert "快艇" in invitation and "Ann" in invitation and "小红" in invitation
    assert hong.inner_text("#commitment") == commitment  # the signed commitment, checked against the server's keys
    assert hong.is_hidden("[data-testid=create-game]") and hong.is_hidden("#rules-choices")
    assert_chinese_but_names(hong, "join", ["Ann"])
    shot(hong, "friends-join-phone-zh.png", full_page=True)
    axe_clean(hong, "join")
    assert_touch_targets(hong, "join")
    press(hong, hong.get_by_test_id("start-game"), True)
    hong.wait_for_selector("#game:not([hidden])")
    for page in (ann, hong):
        page.wait_for_function("() => document.querySelector('#game').dataset.status === 'playing'")
        page.evaluate("window.__same_page = true")  # gone if the page is ever reloaded

    # the same link on a third device: the seat has joined with a key that stays on 小红's phone, so it only watches
    elsewhere = new_page(browser, watch, viewport=PHONE, locale="en-US", **TOUCH)
    elsewhere.goto(link)
    elsewhere.wait_for_selector("[data-testid=watching]:not([hidden])")
    assert "already joined from another device" in elsewhere.inner_text("#toast")
    assert elsewhere.is_hidden(ROLL) and kept(elsewhere)["seats"] == {}
    elsewhere.context.close()

    pages = {0: (ann, "en"), 1: (hong, "zh")}
    turns = 0
    shots = set()
    while True:
        state = api_get(site, f"/v1/games/{kept(ann)['game_id']}")
        if state["final"]:
            break
        seat = state["current_seat"]
        player, lang = pages[seat]
        other, other_lang = pages[1 - seat]
        player.wait_for_function(MY_TURN_OR_END, timeout=30_000)
        waiting = "Waiting for 小红 to play" if other_lang == "en" else "等待 Ann 掷骰"
        other.wait_for_function("(text) => document.querySelector('#status').textContent.includes(text)", arg=waiting)
        if other_lang not in shots:
            shot(other, f"friends-game-phone-{other_lang}.png")
            shots.add(other_lang)
        play_turn(player, True)
        turns += 1
        # the other page shows the move without reloading
        other.wait_for_function(f"() => ({FILLED})() === {turns} || !document.querySelector('#result').hidden")
        assert other.evaluate("window.__same_page === true")
        if turns == 5:  # 小红 leaves, and comes back from the link: the same seat, its key kept in this browser
            key = kept(hong)["seats"]["1"]["key"]["public_key"]
            hong.goto("about:blank")
            hong.goto(link)
            hong.wait_for_selector("#game:not([hidden])")
            hong.wait_for_function(f"() => ({FILLED})() === {turns}")
            assert kept(hong)["seats"]["1"]["key"]["public_key"] == key
            hong.evaluate("window.__same_page = true")
    assert turns == 24 and shots == {"en", "zh"}

    for page, lang in ((ann, "en"), (hong, "zh")):
        page.wait_for_selector("#result:not([hidden])")
        page.wait_for_selector(VERIFIED, timeout=60_000)
        assert page.get_attribute("#fairness", "data-verdict") == "pass", page.inner_text("#verify-report")
        assert page.locator("#result-table tbody tr.total td").count() == 2  # every seat's totals
        shot(page, f"friends-end-phone-{lang}.png")
    assert_english_but_names(ann, "end", ["小红"])
    assert_chinese_but_names(hong, "end", ["Ann"])
    log = api_get(site, f"/v1/games/{kept(ann)['game_id']}/log")
    assert log["version"] == 3
    assert_signed_by(log, {0: kept(ann)["seats"]["0"]["key"]["public_key"], 1: kept(hong)["seats"]["1"]["key"]["public_key"]})
    assert kept(hong)["seats"]["1"]["receipt"]["player_key"] == kept(hong)["seats"]["1"]["key"]["public_key"]
    ann.context.close()
    hong.context.close()


# ------------------------------------------------------------------ one phone, and a spectator


def test_pass_and_play_on_one_phone_with_a_spectator(site, browser, watch, tmp_path):
    """小明 and 小红 share a phone against the greedy bot, each seat with its own key; a spectator link shows the
    game as it is played, read-only; the end screens verify, and so does fairdice-verify with the downloads."""
    watch.allow(STALE)
    phone = new_page(browser, watch, viewport=PHONE, locale="zh-CN", **TOUCH)
    open_lobby(phone, site, "小明", "rules-yacht", "opponent-friends")
    phone.select_option("[data-testid=seat-kind] >> nth=0", "here")
    phone.fill("[data-testid=seat-name] >> nth=0", "小红")
    assert phone.locator("[data-testid=seat-kind] >> nth=1").input_value() == "bot:greedy"
    shot(phone, "friends-seats-phone-zh.png", full_page=True)
    assert_chinese_but_names(phone, "lobby, friends and bots", [])
    axe_clean(phone, "lobby, friends and bots")
    assert_touch_targets(phone, "lobby, friends and bots")
    press(phone, phone.get_by_test_id("create-game"), True)
    phone.wait_for_selector("#commit-card:not([hidden])")
    assert phone.get_by_test_id("invite-link").count() == 0  # nobody to invite: both friends are here
    spectate = phone.get_by_test_id("spectator-link").input_value()
    press(phone, phone.get_by_test_id("start-game"), True)
    phone.wait_for_selector("#game:not([hidden])")
    phone.wait_for_function("() => document.querySelector('#game').dataset.status === 'playing'")
    game = kept(phone)["game_id"]

    viewer = new_page(browser, watch, viewport=PHONE, locale="en-US", **TOUCH)
    viewer.goto(spectate)
    viewer.wait_for_selector("#game:not([hidden])")
    assert viewer.is_visible("[data-testid=watching]")
    assert viewer.is_hidden(ROLL) and viewer.is_hidden("#abandon-btn")
    viewer.evaluate("window.__same_page = true")

    names = {0: "小明", 1: "小红"}
    turns = 0
    while True:
        phone.wait_for_function(MY_TURN_OR_END, timeout=30_000)
        if phone.is_visible("#result"):
            break
        seat = api_get(site, f"/v1/games/{game}")["current_seat"]
        assert f"轮到 {names[seat]} 了" in phone.inner_text("#status")  # whose turn it is, by name
        if turns == 2:
            shot(phone, "friends-pass-phone-zh.png")
        play_turn(phone, True)
        turns += 1
        if turns == 3:  # the spectator sees it happen
            viewer.wait_for_function("() => document.querySelectorAll('#scorecard tbody td.filled').length >= 3")
            assert "EV" not in viewer.inner_text("#game-title") and "小红" in viewer.inner_text("#game-title")
            shot(viewer, "friends-spectator-phone-en.png")
            axe_clean(viewer, "spectator")
    assert turns == 24

    phone.wait_for_selector(VERIFIED, timeout=60_000)
    assert phone.get_attribute("#fairness", "data-verdict") == "pass", phone.inner_text("#verify-report")
    assert phone.locator("#verify-seats li.pass").count() == 2  # once for each seat's receipt
    shot(phone, "friends-pass-end-phone-zh.png")
    viewer.wait_for_selector("#result:not([hidden])", timeout=30_000)
    viewer.wait_for_selector(VERIFIED, timeout=60_000)
    assert viewer.get_attribute("#fairness", "data-verdict") == "pass", viewer.inner_text("#verify-report")
    assert viewer.evaluate("window.__same_page === true")
    assert_english_but_names(viewer, "spectator end", ["小明", "小红"])
    shot(viewer, "friends-spectator-end-phone-en.png")

    entry = kept(phone)
    keys = {seat: entry["seats"][str(seat)]["key"]["public_key"] for seat in (0, 1)}
    assert keys[0] != keys[1]  # each friend its own key
    log = api_get(site, f"/v1/games/{game}/log")
    assert_signed_by(log, keys)
    files = download(phone, "#download-btn", tmp_path) + download(phone, "#receipt-btn", tmp_path, count=2) \
        + download(phone, "#moves-btn", tmp_path)
    receipts = sorted(p for p in files if p.name.startswith("receipt-"))
    assert [json.loads(p.read_text())["seat"] for p in receipts] == [0, 1]
    log_path = next(p for p in files if p.name.startswith("game-"))
    moves_path = next(p for p in files if p.name.startswith("moves-"))
    done = fairdice_verify(site, tmp_path, ["--receipt", receipts[0], "--receipt", receipts[1], "--receipts", moves_path,
                                            log_path])
    assert done.returncode == 0, done.stdout + done.stderr
    phone.context.close()
    viewer.context.close()


# ------------------------------------------------------------------ the page's receipts, offline


def test_a_signed_abandon_verifies_with_the_pages_receipts(site, browser, watch, tmp_path):
    """A player rolls once and abandons: the abandon is signed by the player's key, and fairdice-verify, given the
    page's receipt and move receipts, accepts the log; "Verify a log" holds it to the receipts the page kept."""
    page = new_page(browser, watch)
    start_game(page, site, "bot-greedy")
    roll(page)
    page.click("#abandon-btn")
    page.click("#confirm-ok")
    page.wait_for_selector(VERIFIED, timeout=60_000)
    assert page.get_attribute("#fairness", "data-verdict") == "pass", page.inner_text("#verify-report")
    game = kept(page)["game_id"]
    log = api_get(site, f"/v1/games/{game}/log")
    abandon = log["events"][-1]
    assert abandon["type"] == "abandon" and abandon["seat"] == 0 and len(abandon["player_signature"]) == 128
    files = download(page, "#download-btn", tmp_path) + download(page, "#receipt-btn", tmp_path) \
        + download(page, "#moves-btn", tmp_path)
    by_kind = {p.name.split("-")[0]: p for p in files}
    done = fairdice_verify(site, tmp_path, ["--receipt", by_kind["receipt"], "--receipts", by_kind["moves"], by_kind["game"]])
    assert done.returncode == 0, done.stdout + done.stderr

    page.click("#nav-verify")
    page.fill("#verify-paste", by_kind["game"].read_text())
    page.click("#verify-run")
    page.wait_for_selector("#verify-dialog[data-verdict=pass]")
    assert page.locator("#verify-out [data-check='receipt.match']:not(.bad)").count() == 1
    assert page.locator("#verify-out [data-check='receipt.chain']:not(.bad)").count() == 1
    page.context.close()


# ------------------------------------------------------------------ an answer the server did not sign


@pytest.mark.parametrize("forgery", ["other_dice", "no_receipt"])
def test_an_answer_that_departs_from_its_receipt_stops_the_game(site, browser, watch, forgery):
    """The server answers a roll with dice other than those its receipt signs, or with no receipt at all: the
    page says so and sends nothing more in that game."""
    page = new_page(browser, watch)
    start_game(page, site, "bot-solo")
    sent = []

    def forge(route):
        sent.append(route.request.url)
        answer = route.fetch()
        body = answer.json()
        if forgery == "other_dice":
            body["events"][-1]["dice"] = [6, 6, 6, 6, 6]
            body["dice"] = [6, 6, 6, 6, 6]
        else:
            del body["receipt"]
        route.fulfill(response=answer, body=json.dumps(body))
    page.route("**/roll", forge)
    page.click(ROLL)
    page.wait_for_selector("[data-testid=halted]:not([hidden])")
    assert ("another history" if forgery == "other_dice" else "no signed receipt") in page.inner_text("[data-testid=halted]")
    assert page.is_disabled(ROLL)
    assert page.locator("button.box:not([disabled])").count() == 0
    page.keyboard.press("r")
    page.wait_for_timeout(500)
    assert len(sent) == 1  # nothing more was sent
    page.context.close()
