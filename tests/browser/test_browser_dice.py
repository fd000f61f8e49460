"""The "fair dice" page (ui/dice.html, SPEC §10) in a real browser: Playwright driving Debian's Chromium against
`fairdice serve` (the fixtures of tests/browser/conftest.py), on a phone (390x844), in English and in Chinese.

It opens a session, sends a client seed made on the device, rolls dice notation (its requests signed with an
Ed25519 key made there), refuses malformed notation in the player's language, reveals the seed and verifies the
log in the browser; `fairdice-verify` agrees on the log the server gives."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support.browser import CJK_TEXT, PHONE, TOUCH, api_get, axe_clean, new_page, shot

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
VERDICT = "[data-testid=dice-verdict]:not([hidden])"


def roll(page, notation: str) -> None:
    before = page.locator("[data-testid=dice-roll-item]").count()
    page.fill("[data-testid=dice-notation]", notation)
    page.click("[data-testid=dice-roll]")
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=dice-roll-item]').length > {before}")


def test_rolling_revealing_and_verifying_on_a_phone(site, browser, watch, tmp_path):
    page = new_page(browser, watch, viewport=PHONE, locale="en-US", **TOUCH)
    page.goto(site + "/ui/dice.html")
    page.wait_for_selector("body[data-ready=true]")
    page.click("[data-testid=dice-open]")
    page.wait_for_selector("#dice-session:not([hidden])")
    commitment = page.text_content("[data-testid=dice-commitment]")
    assert len(commitment) == 64
    page.click("[data-testid=dice-seed-send]")
    page.wait_for_selector("#dice-roll-form:not([hidden])")
    for notation in ("4d6kh3", "2d20kl1", "d100", "3d6+2"):
        roll(page, notation)
    items = page.locator("[data-testid=dice-roll-item]").all_text_contents()
    assert items[0].startswith("3d6+2 → total") and items[-1].startswith("4d6kh3")
    page.fill("[data-testid=dice-notation]", "3d6++")
    page.click("[data-testid=dice-roll]")
    assert "not dice notation" in page.text_content("[data-testid=dice-error]")
    assert page.evaluate(CJK_TEXT) == ["中文"]  # English throughout, but the language switch
    shot(page, "dice-phone-en.png")
    axe_clean(page, "dice")
    page.click("[data-testid=dice-rotate]")
    page.wait_for_selector("[data-testid=dice-verify]:not([hidden])")
    page.click("[data-testid=dice-verify]")
    page.wait_for_selector(VERDICT)
    verdict = page.text_content(VERDICT)
    assert verdict.startswith("✓ Verified: 1 revealed pair, 4 rolls") and "not signed" not in verdict
    session_id = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)"
                               ".find(n => n.includes('/v1/sessions/s-')).split('/v1/sessions/')[1].split('/')[0]")
    log = api_get(site, f"/v1/sessions/{session_id}/log")
    (tmp_path / "log.json").write_text(json.dumps(log))
    (tmp_path / "keys.json").write_text(json.dumps(api_get(site, "/v1/keys")))
    done = subprocess.run([sys.executable, "-m", "verifier", "--pubkey", str(tmp_path / "keys.json"),
                           str(tmp_path / "log.json")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout
    app_key = log["events"][0]["app_key"]
    assert app_key and all(e["app_signature"] for e in log["events"] if e["type"] != "client_seed")


def test_the_page_in_chinese(site, browser, watch):
    page = new_page(browser, watch, viewport=PHONE, locale="zh-CN", **TOUCH)
    page.goto(site + "/ui/dice.html")
    page.wait_for_selector("body[data-ready=true]")
    assert page.text_content("h1") == "公平骰子"
    page.click("[data-testid=dice-open]")
    page.wait_for_selector("#dice-session:not([hidden])")
    page.click("[data-testid=dice-seed-send]")
    page.wait_for_selector("#dice-roll-form:not([hidden])")
    roll(page, "2d6")
    assert "合计" in page.locator("[data-testid=dice-roll-item]").first.text_content()
    page.fill("[data-testid=dice-notation]", "0d6")
    page.click("[data-testid=dice-roll]")
    assert "骰子数量须为 1 到 100" in page.text_content("[data-testid=dice-error]")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    shot(page, "dice-phone-zh.png")
    page.click("[data-testid=dice-lang]")
    assert page.text_content("h1") == "Fair dice"
