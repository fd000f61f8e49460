"""The HTTP routes, in four blueprints: the public documents (api/routes/documents.py), the games
(api/routes/games.py), watching a game (api/routes/watch.py) and a finished game's analysis
(api/routes/analysis.py); the game page (api/page.py) comes last, at
`/` and `/ui/`."""

from __future__ import annotations

from flask import Flask

from .. import page
from . import analysis, documents, games, sessions, watch


def register(app: Flask) -> None:
    app.register_blueprint(documents.bp)
    app.register_blueprint(games.bp)
    app.register_blueprint(watch.bp)
    app.register_blueprint(analysis.bp)
    app.register_blueprint(sessions.bp)  # fair dice for any app (SPEC §10)
    page.register(app)
    documents.prepare()  # build the cached documents now: a broken one fails here, not on a request
