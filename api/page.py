"""The game page: `/` and its static files under `/ui/` (api/static/).

Plain HTML, CSS and JavaScript modules; no build step and nothing fetched from
elsewhere, so the page works offline.  `register(app)` adds whichever of the
two routes the app does not have yet, and the page's response headers: a
strict Content-Security-Policy (everything from this origin, no inline script
or style, no eval) and `Cache-Control: no-cache`, so that a new version of a
module is picked up on the next load (files are revalidated by ETag).
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, request, send_from_directory

STATIC_DIR = Path(__file__).with_name("static")
PREFIX = "/ui/"

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def _index():
    return send_from_directory(STATIC_DIR, "index.html")


def _asset(filename: str):
    return send_from_directory(STATIC_DIR, filename)


def _is_page_request() -> bool:
    return request.path == "/" or request.path.startswith(PREFIX)


def _page_headers(resp):
    if _is_page_request() and resp.status_code < 400:
        resp.headers["Cache-Control"] = "no-cache"
        resp.headers.setdefault("Content-Security-Policy", CSP)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("Referrer-Policy", "no-referrer")
    return resp


def register(app: Flask) -> None:
    """Serve the game page at `/` and its files at `/ui/<name>` (unless the app already does), with the
    page's headers. Calling it twice is harmless."""
    if app.extensions.get("fairdice_page"):
        return
    app.extensions["fairdice_page"] = True
    rules = {rule.rule for rule in app.url_map.iter_rules()}
    if "/" not in rules:
        app.add_url_rule("/", "page_index", _index, methods=["GET"])
    if not any(rule.startswith(PREFIX) for rule in rules):
        app.add_url_rule(PREFIX + "<path:filename>", "page_asset", _asset, methods=["GET"])
    app.after_request(_page_headers)
