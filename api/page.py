"""The game page: `/` and its static files under `/ui/` (api/static/).

Plain HTML, CSS and JavaScript modules; no build step and nothing fetched from
elsewhere, so the page works offline.  `register(app)` adds the blueprint.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, send_from_directory

STATIC_DIR = Path(__file__).with_name("static")

# Everything comes from this origin; no inline script or style, no eval.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

bp = Blueprint("page", __name__, static_folder=str(STATIC_DIR), static_url_path="/ui")


@bp.get("/")
def index():
    resp = send_from_directory(STATIC_DIR, "index.html", max_age=0)
    resp.headers["Cache-Control"] = "no-cache"
    return resp


@bp.after_request
def _headers(resp):
    resp.headers.setdefault("Content-Security-Policy", CSP)
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "no-referrer")
    if resp.mimetype == "text/javascript" or resp.mimetype == "application/javascript":
        resp.headers["Cache-Control"] = "no-cache"
    return resp


def register(app: Flask) -> None:
    """Serve the game page at `/` and its files at `/ui/<name>` (revalidated on every load)."""
    app.config.setdefault("SEND_FILE_MAX_AGE_DEFAULT", 0)
    app.register_blueprint(bp)
