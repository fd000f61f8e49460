"""The browser tests' fixtures: `site` (conftest's `server`, a real `fairdice serve`), one Chromium per module
(`browser`) and `watch`, which fails a test on any JavaScript error its pages report.  Playwright is imported
when a fixture first runs: a module without Chromium is skipped by support/browser.py before that."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def site(server):
    """The base URL of `fairdice serve` (conftest's `server`: a real process on a free loopback port)."""
    return server.url


@pytest.fixture(scope="module")
def browser():
    from playwright import sync_api

    from support.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def watch():
    from support.browser import Watch

    w = Watch()
    yield w
    assert not w.errors, "JavaScript errors on the page:\n" + "\n".join(w.errors)
