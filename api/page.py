"""The game page: `/` and its static files under `/ui/` (api/static/).

Plain HTML, CSS and JavaScript modules; no build step and nothing fetched from
elsewhere, so the page works offline.  `register(app)` adds whichever of the
two routes the app does not have yet, and the page's response headers: a
strict Content-Security-Policy (everything from this origin, no inline script
or style, no eval).

Each file is read and gzipped once, on first use, and kept in memory
(api.assets): a client that accepts gzip gets the compressed bytes, and every
response carries a strong ETag naming the content, so a repeat visit costs a
304 per file and no body.  A file that changes on disk (a new release, or an
edit while the server runs) is seen on the next request: its size and
modification time are looked at on every request, which costs a `stat`, not a
read.  Every file is `Cache-Control: no-cache` (stored, but revalidated before
each use): the modules import one another by fixed names, so a cached module
that outlived a release would mix two versions of the page.
"""

from __future__ import annotations

import mimetypes
import os
import threading
from pathlib import Path

from flask import Flask, abort, request
from werkzeug.security import safe_join

from .assets import Asset, send

STATIC_DIR = Path(__file__).with_name("static")
PREFIX = "/ui/"
REVALIDATE = "no-cache"

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs":
         "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json",
         ".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8"}


class StaticFiles:
    """The files of one directory as Assets, each built on first use and rebuilt when its size or modification
    time changes."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._assets: dict[str, tuple[tuple[int, int], Asset]] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Asset | None:
        """The asset of `name` (a path inside the directory), or None when there is no such regular file."""
        path = safe_join(str(self.directory), name)
        if path is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not os.path.isfile(path):
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        kept = self._assets.get(name)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        with self._lock:
            kept = self._assets.get(name)
            if kept is None or kept[0] != stamp:
                kept = (stamp, self._read(path))
                self._assets[name] = kept
        return kept[1]

    @staticmethod
    def _read(path: str) -> Asset:
        with open(path, "rb") as fh:
            body = fh.read()
        suffix = os.path.splitext(path)[1].lower()
        content_type = TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"
        return Asset.of(body, content_type)


FILES = StaticFiles(STATIC_DIR)


def _serve(name: str):
    asset = FILES.get(name)
    if asset is None:
        abort(404)
    return send(asset, REVALIDATE)


def _index():
    return _serve("index.html")


def _asset(filename: str):
    return _serve(filename)


def _is_page_request() -> bool:
    return request.path == "/" or request.path.startswith(PREFIX)


DOCUMENTS = ("text/html", "image/svg+xml")  # what a browser may open as a document, where the CSP applies


def _page_headers(resp):
    """The page's security headers. The policy and the referrer rule govern documents only (the page, and an SVG
    opened on its own); a module or a style sheet does not need them, and 56 files would carry 15 KiB of them on
    every first load."""
    if _is_page_request() and resp.status_code < 400:
        resp.headers.setdefault("Cache-Control", REVALIDATE)
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        if resp.mimetype in DOCUMENTS:  # (a 304 keeps the headers stored with the page: RFC 9111 §4.3.4)
            resp.headers.setdefault("Content-Security-Policy", CSP)
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
