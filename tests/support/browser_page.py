"""The game page as a player drives it from the lobby (tests/browser/test_browser_page.py and
test_browser_optimal.py): a game created and started, one turn played, screenshots by name."""

from __future__ import annotations

import json
from pathlib import Path

from support import ARTIFACTS
from support.browser import picks, press, roll, wait_my_turn_or_end


SCREENSHOTS = ARTIFACTS / "screenshots"
LOCALES = {"zh": "zh-CN", "en": "en-US"}


def shot(page, name: str, full_page: bool = False) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    page.screenshot(path=str(path), full_page=full_page)
    return path


def choose(page, touch, rules="yacht", bot="greedy"):
    press(page, page.get_by_test_id(f"rules-{rules}"), touch)
    press(page, page.get_by_test_id(f"bot-{bot}"), touch)
    press(page, page.locator("input[name=first][value=me]"), touch)


def create_and_start(page, touch, rules="yacht", bot="greedy", upper_first=False) -> str:
    """A new game from the lobby as the player makes it; its id."""
    choose(page, touch, rules, bot)
    if upper_first:
        if not page.locator("#advanced").evaluate("d => d.open"):
            press(page, page.get_by_test_id("advanced"), touch)
        press(page, page.get_by_test_id("upper-first"), touch)
    press(page, page.get_by_test_id("create-game"), touch)
    page.wait_for_selector("#commit-card:not([hidden])")
    press(page, page.get_by_test_id("start-game"), touch)
    page.wait_for_selector("#game:not([hidden])")
    wait_my_turn_or_end(page)
    return json.loads(page.evaluate("localStorage.getItem('fairdice.current')"))["game_id"]


def play_one_turn(page, touch) -> str:
    """Roll once and record the best box; the box's category."""
    roll(page, touch=touch)
    category, _ = max(picks(page), key=lambda o: o[1])
    press(page, page.get_by_test_id(f"box-{category}"), touch)
    if page.locator("#confirm-dialog[open]").count():
        press(page, page.locator("#confirm-ok"), touch)
    wait_my_turn_or_end(page)
    return category


# ------------------------------------------------------------------ the lobby on a phone
