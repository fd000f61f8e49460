"""The move routes' own matcher (api/app.py MoveRoutes) finds exactly what werkzeug's URL map finds.

A move request skips werkzeug's adapter (bound and run for every request) and is matched by one regular
expression; every other request, and a move path it does not recognise, goes to werkzeug.  Each case below is
matched both ways, and the two must agree: the same rule and arguments, or the same refusal.
"""

from __future__ import annotations

import pytest
from flask import Flask
from werkzeug.exceptions import HTTPException
from werkzeug.test import EnvironBuilder

from api.app import MatchedAdapter

PATHS = [
    "/v1/games/AbC-_09xyz/roll", "/v1/games/AbC-_09xyz/score", "/v1/games/AbC-_09xyz/client-seed",
    "/v1/games/AbC-_09xyz/abandon", "/v1/games/g/roll",
    "/v1/games/AbC/roll/", "/v1/games//roll", "/v1/games/a%20b/roll", "/v1/games/caf\u00e9/roll",
    "/v1/games/a.b/roll", "/v1/games/AbC/rolls", "/v1/games/AbC/hint", "/v1/games/AbC", "/v1/games",
    "/v1/games/a/b/roll", "/v1/sessions/AbC/rolls", "/livez", "/v1/games/AbC/ROLL",
]


def _match(app: Flask, adapter_of, path: str, method: str):
    environ = EnvironBuilder(path=path, method=method).get_environ()
    request = app.request_class(environ)
    try:
        rule, args = adapter_of(request).match(return_rule=True)
    except HTTPException as refused:
        return type(refused).__name__, refused.code
    return rule.endpoint, rule.rule, args


@pytest.mark.parametrize("method", ["POST", "GET", "PUT"])
@pytest.mark.parametrize("path", PATHS)
def test_a_move_is_matched_as_werkzeug_matches_it(app, path, method):
    ours = _match(app, app.create_url_adapter, path, method)
    werkzeugs = _match(app, lambda request: Flask.create_url_adapter(app, request), path, method)
    assert ours == werkzeugs


def test_the_moves_skip_werkzeugs_adapter_and_nothing_else_does(app):
    def adapter(path, method):
        return app.create_url_adapter(app.request_class(EnvironBuilder(path=path, method=method).get_environ()))

    for action in ("roll", "score", "client-seed", "abandon"):
        assert isinstance(adapter(f"/v1/games/AbC/{action}", "POST"), MatchedAdapter)
    for path, method in [("/v1/games/AbC/roll", "GET"), ("/v1/games", "POST"), ("/v1/sessions/AbC/rolls", "POST"),
                         ("/v1/games/a%20b/roll", "POST"), ("/v1/games/AbC/hint", "GET")]:
        assert not isinstance(adapter(path, method), MatchedAdapter), (path, method)


def test_a_matched_move_still_builds_urls_through_werkzeug(app):
    environ = EnvironBuilder(path="/v1/games/AbC/roll", method="POST").get_environ()
    adapter = app.create_url_adapter(app.request_class(environ))
    assert isinstance(adapter, MatchedAdapter)
    assert adapter.build("games.game_log", {"game_id": "XyZ"}) == "/v1/games/XyZ/log"
    assert adapter.match("/v1/games/XyZ/hint", "GET") == ("games.game_hint", {"game_id": "XyZ"})
