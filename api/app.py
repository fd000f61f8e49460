"""The Flask app: thin routes from HTTP to `Games`, which calls the core.

Routes (api/routes/) parse and check the shape of a request and call the service; the service and the core
refuse with domain errors, which api/problems.py alone maps to `application/problem+json` answers: 422
(invalid), 409 (not now), 404, 403, 429 (rate limit, quota) and 503 (store busy or unavailable).
"""

from __future__ import annotations

import re
from inspect import CO_COROUTINE
from types import FunctionType

from flask import Flask
from werkzeug.routing import Rule

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

    def create_url_adapter(self, request):
        """A move (POST /v1/games/{id}/roll and its siblings: most of what the server answers) is matched by one
        regular expression; werkzeug's adapter, bound for every request (its host, scheme and path worked out,
        then its state machine run), is made only if something else asks for it.  Every other request, and a
        move whose path holds anything but the characters of a game id, is matched by werkzeug as before."""
        if request is not None and request.environ.get("REQUEST_METHOD") == "POST":
            routes = self.__dict__.get("_fairdice_moves")
            if routes is None:
                routes = self._fairdice_moves = MoveRoutes.of(self)
            found = routes.match(request.environ.get("PATH_INFO", ""))
            if found is not None:
                return MatchedAdapter(self, request, *found)
        return super().create_url_adapter(request)


MOVE_ENDPOINTS = ("games.client_seed", "games.roll", "games.score", "games.abandon")
_GAME_ID_TEXT = "[A-Za-z0-9_-]+"  # (a game id is URL-safe base64: narrower than werkzeug's [^/]+, never wider)


class MoveRoutes:
    """The move routes' rules, matched by their path alone: each is `/v1/games/<game_id>/<action>` with the
    default converter, and no other POST route ends the same way.  Used only where werkzeug would match the
    same way: no trusted-host check, no host or subdomain matching."""

    def __init__(self, pattern: re.Pattern | None, rules: dict[str, Rule]):
        self.pattern, self.rules = pattern, rules

    @classmethod
    def of(cls, app: Flask) -> MoveRoutes:
        if app.config["TRUSTED_HOSTS"] is not None or app.url_map.host_matching or app.subdomain_matching:
            return cls(None, {})
        rules = {}
        for rule in app.url_map.iter_rules():
            if rule.endpoint in MOVE_ENDPOINTS and "POST" in rule.methods:
                head, _, action = rule.rule.rpartition("/")
                if head != "/v1/games/<game_id>" or "<" in action:
                    return cls(None, {})  # (routes changed: werkzeug alone matches them)
                rules[action] = rule
        if not rules:
            return cls(None, {})
        actions = "|".join(re.escape(action) for action in rules)
        return cls(re.compile(f"/v1/games/({_GAME_ID_TEXT})/({actions})"), rules)

    def match(self, path: str) -> tuple[Rule, dict] | None:
        found = self.pattern.fullmatch(path) if self.pattern is not None else None
        if found is None:
            return None
        return self.rules[found[2]], {"game_id": found[1]}


class MatchedAdapter:
    """The URL adapter of a request whose rule MoveRoutes found: `match()` answers it; anything else (building
    a URL, matching another path) goes to werkzeug's adapter, bound on first use as Flask binds it."""

    def __init__(self, app: Flask, request, rule: Rule, args: dict):
        self._app, self._request, self._rule, self._args = app, request, rule, args
        self._adapter = None

    def match(self, path_info=None, method=None, return_rule=False, query_args=None, websocket=None):
        if path_info is None and method is None and query_args is None and websocket is None:
            return (self._rule if return_rule else self._rule.endpoint), dict(self._args)
        return self._bound().match(path_info, method, return_rule, query_args, websocket)

    def _bound(self):
        if self._adapter is None:
            self._adapter = Flask.create_url_adapter(self._app, self._request)
        return self._adapter

    def __getattr__(self, name):
        return getattr(self._bound(), name)


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
