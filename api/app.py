"""The Flask app: thin routes from HTTP to `Games`, which calls the core.

Routes (api/routes/) parse and check the shape of a request and call the service; the service and the core
refuse with domain errors, which api/problems.py alone maps to `application/problem+json` answers: 422
(invalid), 409 (not now), 404, 403, 429 (rate limit, quota) and 503 (store busy or unavailable).
"""

from __future__ import annotations

from inspect import CO_COROUTINE
from types import FunctionType

from flask import Flask

from . import problems, routes
from .config import settings
from .games import Games
from .keys import KeyRing, open_keyring
from .limits import Limiter
from .routes.common import MAX_BODY
from .sessions import Sessions
from .store import Store, open_store
from .watch import Watch

__all__ = ["MAX_BODY", "create_app"]


class FairdiceFlask(Flask):
    """Flask, with a cheaper `ensure_sync` for plain functions: Flask asks `inspect.iscoroutinefunction` about the
    view and every hook on every request (about seven calls each time); a plain function is a coroutine function
    only by its code's flag (or, from Python 3.12, a mark of `inspect.markcoroutinefunction`)."""

    def ensure_sync(self, func):
        if (type(func) is FunctionType and not func.__code__.co_flags & CO_COROUTINE
                and not hasattr(func, "_is_coroutine_marker")):
            return func
        return super().ensure_sync(func)


def create_app(config: dict | None = None, store: Store | None = None, keys: KeyRing | None = None) -> Flask:
    """The API app.  `config`: `FAIRDICE_*` settings (see api.config); `store`: use this store instead of
    the database named by the settings (a SQLite file or a PostgreSQL URL); `keys`: a key ring already
    opened and checked against the store (`fairdice serve` opens it once, before its workers start), else
    the settings' keys are opened as `fairdice serve` opens them: made only for a store without games,
    refused (KeyFileError) when a stored game needs a key that is missing."""
    conf = settings(config)
    app = FairdiceFlask(__name__, static_folder=None)  # the game page and its files: api/page.py
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY + 1  # (see api.routes.common.request_bytes)
    app.config["FAIRDICE"] = conf
    if store is None:
        store = open_store(conf)
    if keys is None:
        keys = open_keyring(conf, store)
    app.extensions["fairdice"] = Games(store, keys, abandon_timeout=conf.abandon_timeout,
                                       max_unfinished=conf.max_unfinished)
    app.extensions["fairdice_limits"] = Limiter.from_settings(conf, store)
    app.extensions["fairdice_sessions"] = Sessions(store, keys, max_sessions=conf.max_sessions,  # SPEC §10
                                                   max_session_rolls=conf.max_session_rolls)
    # watchers of games (GET /v1/games/{id}/events) park in at most half a worker's threads (api/watch.py)
    app.extensions["fairdice_watch"] = Watch(store, max_parked=conf.threads // 2)
    problems.register(app, MAX_BODY)
    routes.register(app)
    return app
