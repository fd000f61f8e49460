"""The HTTP routes, in three blueprints: the public documents (api/routes/documents.py), the games
(api/routes/games.py) and watching a game (api/routes/watch.py); the game page (api/page.py) comes last, at
`/` and `/ui/`."""

from __future__ import annotations

from flask import Flask

from .. import page
from . import documents, games, watch


def register(app: Flask) -> None:
    app.register_blueprint(documents.bp)
    app.register_blueprint(games.bp)
    app.register_blueprint(watch.bp)
    page.register(app)
    documents.prepare()  # build the cached documents now: a broken one fails here, not on a request
