"""The guide, "How to play & tips" (issue 22), in a real browser: Playwright driving Debian's Chromium against
`fairdice serve` (the fixtures of tests/browser/conftest.py).

In Chinese and in English, on a 390x844 phone (by taps) and on a desktop (by clicks): the header's button
(`open-guide`) opens the guide from the lobby and from a game; its rules (`guide-rules`: every box of every rule
set with its example hands, drawn as the board draws dice), `tips`, `faq` and `glossary` are there and each comes
into view from the guide's own contents; nothing is wider than the screen; every word is in the page's language;
axe finds no violation; controls are 44 px on the phone. In a game, the tip about which dice to keep asks the
live hint: the guide closes and the game's hint appears. A change of language renames the button and the guide.
At 320x568 the header still holds the button.

Screenshots: artifacts/screenshots/guide-{where}-{part}-{device}-{lang}.png, where is `lobby` or `game` and part
one of rules, dice (the boxes of yacht with their hands), tips, faq, glossary, and `hint` (the game with the hint
the tip asked for); guide-lobby-rules-phone320-{lang}.png.
"""

from __future__ import annotations

import pytest

from support.browser import (ARTIFACTS, DESKTOP, PHONE, SMALL_PHONE, TOUCH, ZH_BOXES, assert_all_chinese,
                             assert_all_english, axe_clean, new_page, press, roll, start_solo_game)

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

SCREENSHOTS = ARTIFACTS / "screenshots"
PARTS = {"rules": "guide-rules", "tips": "tips", "faq": "faq", "glossary": "glossary"}
GUIDE = "[data-testid=guide]"

# What the guide shows, as the browser lays it out: for each rule set, the boxes' names and how many hands each
# draws, and whether every drawn die shows as many pips as its face (the board's .die drawing); anything inside
# the guide wider than the screen; the four parts' sizes.
SHOWN = """() => {
  const dialog = document.querySelector('#guide-dialog');
  const wide = [...dialog.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
    .map((el) => el.className || el.tagName);
  const dice = [...dialog.querySelectorAll('.hand-dice .die')];
  const pips = dice.filter((d) => [...d.querySelectorAll('i')].filter((i) => getComputedStyle(i).visibility === 'visible').length
    !== Number(d.dataset.face));
  return {wide, pageWide: document.documentElement.scrollWidth > innerWidth, guideWide: dialog.scrollWidth > dialog.clientWidth,
    dice: dice.length, wrongPips: pips.length,
    boxes: [...dialog.querySelectorAll('.guide-panel > .guide-boxes > li')].map((li) => li.querySelector('strong').textContent),
    hands: [...dialog.querySelectorAll('.guide-panel .guide-box')].map((li) => li.querySelectorAll('.hand').length),
    tips: dialog.querySelectorAll('[data-testid=tips] li[data-tip]').length,
    questions: dialog.querySelectorAll('[data-testid=faq] details').length,
    terms: dialog.querySelectorAll('[data-testid=glossary] dt').length};
}"""
# The guide's controls smaller than a finger (44 x 44 CSS pixels).
SMALL_IN_GUIDE = """() => [...document.querySelectorAll('#guide-dialog :is(button, summary)')].filter((el) => el.getClientRects().length)
  .map((el) => [el.dataset.go || el.dataset.rules || el.dataset.testid || el.textContent, el.getBoundingClientRect()])
  .filter(([, r]) => r.height < 43.5 || r.width < 43.5).map(([n, r]) => `${n} ${r.width}x${r.height}`)"""
# A guide die and a board die drawn alike: the same face, pip colour and corner (the board's .die drawing).
ALIKE = """() => { const look = (d) => { const s = getComputedStyle(d);
    return [s.backgroundColor, s.borderStyle, s.borderTopLeftRadius, getComputedStyle(d.querySelector('i')).backgroundColor]; };
  const a = look(document.querySelector('#guide-dialog .hand-dice .die')), b = look(document.querySelector('#dice .die'));
  return JSON.stringify(a) === JSON.stringify(b) || [a, b]; }"""
IN_VIEW = """(testid) => { const r = document.querySelector(`[data-testid=${testid}] h3`).getBoundingClientRect();
  return r.top >= 0 && r.bottom <= innerHeight; }"""
LABELS = {"zh": {True: "玩法", False: "玩法与技巧"}, "en": {True: "Guide", False: "How to play"}}  # [lang][phone]
TITLES = {"zh": "玩法与技巧", "en": "How to play, and tips"}
BOX_COUNT = {"yacht": 12, "yatzy": 15, "classic13": 13}


def snap(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name))


def open_guide(page, touch):
    press(page, page.get_by_test_id("open-guide"), touch)
    page.wait_for_selector(f"{GUIDE}[open]")


def go_to(page, part, touch):
    """The guide's own contents bring a part into view."""
    press(page, page.locator(f"#guide-dialog [data-go={part}]"), touch)
    page.wait_for_function(IN_VIEW, arg=PARTS[part])


def check_guide(page, where, device, lang, touch):
    """Every part of the guide is there, in the page's language, within the screen's width; each rule set draws
    every box with its hands; screenshots of every part."""
    in_language = assert_all_chinese if lang == "zh" else assert_all_english
    for testid in PARTS.values():
        assert page.get_by_test_id(testid).is_visible(), (where, testid)
    for rules_id, count in BOX_COUNT.items():
        press(page, page.locator(f".guide-pick [data-rules={rules_id}]"), touch)
        page.wait_for_selector(f".guide-panel[data-rules={rules_id}]")
        shown = page.evaluate(SHOWN)
        assert len(shown["boxes"]) == count and all(shown["hands"]), (rules_id, shown)
        if lang == "zh":
            assert " ".join(shown["boxes"]) == ZH_BOXES[rules_id], (rules_id, shown["boxes"])
        assert shown["dice"] >= 5 * count and shown["wrongPips"] == 0, shown
        assert not shown["wide"] and not shown["pageWide"] and not shown["guideWide"], (where, device, shown)
    if where == "game":
        assert page.evaluate(ALIKE) is True, page.evaluate(ALIKE)
    assert shown["tips"] >= 5 and shown["questions"] >= 8 and shown["terms"] >= 12, shown
    page.evaluate("document.querySelectorAll('#guide-dialog details').forEach((d) => { d.open = true; })")
    in_language(page, f"guide, {where}")
    assert not page.evaluate(SHOWN)["wide"], "an open answer is wider than the screen"
    page.evaluate("document.querySelectorAll('#guide-dialog details').forEach((d) => { d.open = false; })")
    if touch:  # (the screens behind are held to this by tests/browser/test_browser.py)
        assert not page.evaluate(SMALL_IN_GUIDE), (where, page.evaluate(SMALL_IN_GUIDE))
    page.evaluate("document.querySelector('#guide-dialog').scrollTop = 0")
    snap(page, f"guide-{where}-rules-{device}-{lang}.png")
    press(page, page.locator(".guide-pick [data-rules=yacht]"), touch)
    page.evaluate("document.querySelector('.guide-pick').scrollIntoView({block: 'start'})")
    snap(page, f"guide-{where}-dice-{device}-{lang}.png")
    for part in ("tips", "faq", "glossary"):
        go_to(page, part, touch)
        snap(page, f"guide-{where}-{part}-{device}-{lang}.png")
    go_to(page, "rules", touch)


@pytest.mark.parametrize("device,lang", [("phone", "zh"), ("phone", "en"), ("desktop", "zh"), ("desktop", "en")])
def test_the_guide_from_the_lobby_and_from_a_game(site, browser, watch, optimal_table, device, lang):
    optimal_table("yacht")  # the hint the tip asks for comes from the server's optimal engine
    phone = device == "phone"
    page = new_page(browser, watch, PHONE if phone else DESKTOP, locale="zh-CN" if lang == "zh" else "en-US",
                    **(TOUCH if phone else {}))
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    button = page.get_by_test_id("open-guide")
    assert button.inner_text() == LABELS[lang][phone]
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]

    open_guide(page, phone)
    assert page.inner_text("#guide-title") == TITLES[lang]
    # the rule set shown first is the lobby's choice
    assert page.get_attribute(".guide-panel", "data-rules") == page.eval_on_selector("input[name=rules]:checked", "e => e.value")
    assert not page.locator("[data-testid=tip-hint]").count(), "no game, no hint to ask"
    check_guide(page, "lobby", device, lang, phone)
    axe_clean(page, f"guide, lobby, {lang}, {device}")
    page.keyboard.press("Escape")
    page.wait_for_selector(f"{GUIDE}[open]", state="detached")

    start_solo_game(page, site, phone)
    roll(page, touch=phone)
    open_guide(page, phone)
    assert page.get_attribute(".guide-panel", "data-rules") == "yacht"  # the game's rule set
    check_guide(page, "game", device, lang, phone)
    go_to(page, "tips", phone)
    asks = page.get_by_test_id("tip-hint")
    assert asks.count() == 2 and asks.first.is_enabled()  # keeping the most common face; where to write a 0
    assert page.locator("[data-tip=common] [data-testid=tip-hint]").is_visible()
    press(page, page.locator("[data-tip=common] [data-testid=tip-hint]"), phone)
    page.wait_for_selector(f"{GUIDE}[open]", state="detached")
    page.wait_for_selector("#hint-text:not([hidden])")
    hint = page.inner_text("#hint-text")
    assert hint.startswith("提示：" if lang == "zh" else "Hint:"), hint
    snap(page, f"guide-game-hint-{device}-{lang}.png")

    # the other language: the header's button and the guide follow the page
    other = "en" if lang == "zh" else "zh"
    press(page, page.get_by_test_id("language"), phone)
    page.wait_for_function("(want) => document.querySelector('[data-testid=open-guide]').innerText.trim() === want",
                           arg=LABELS[other][phone])
    open_guide(page, phone)
    assert page.inner_text("#guide-title") == TITLES[other]
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_guides_button_fits_the_smallest_phone(site, browser, watch, lang):
    """At 320x568 the header keeps the guide's button (a "?" named for screen readers) beside the others, a
    finger's size, nothing wider than the screen; the guide opens there and fits too."""
    page = new_page(browser, watch, SMALL_PHONE, locale="zh-CN" if lang == "zh" else "en-US", **TOUCH)
    page.goto(site + "/")
    page.wait_for_selector("#lobby:not([hidden])")
    box = page.get_by_test_id("open-guide").bounding_box()
    assert box["width"] >= 43.5 and box["height"] >= 43.5 and box["x"] + box["width"] <= SMALL_PHONE["width"], box
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    shown_as = page.evaluate("""[...document.querySelectorAll('[data-testid=open-guide] span')]
        .filter((s) => s.getBoundingClientRect().width > 1).map((s) => s.textContent)""")
    assert shown_as == ["?"], shown_as
    assert page.get_by_role("button", name="玩法" if lang == "zh" else "Guide").count() == 1  # what a screen reader says
    open_guide(page, True)
    shown = page.evaluate(SHOWN)
    assert not shown["wide"] and not shown["pageWide"] and not shown["guideWide"], shown
    snap(page, f"guide-lobby-rules-phone320-{lang}.png")
    page.context.close()
