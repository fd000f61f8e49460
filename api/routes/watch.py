"""Watching a game without reloading: `GET /v1/games/{id}/events`, a long poll (api/watch.py).

No token: the state is public, as `GET /v1/games/{id}` shows it.  `after` (or `If-None-Match: "N"`) is the
event count the client has seen; the answer is 200 with the state and its events after those (`ETag` the
state's event count), or 304 when nothing new came within `wait` seconds (`Retry-After` when the server had no
place for the request to wait: ask again then).
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, current_app, request

from .. import watch
from ..problems import ApiError
from .common import games, int_arg, json_response, only_query

bp = Blueprint("watch", __name__)
AFTER_MAX = 1_000_000  # (as GET /v1/games/{id}'s `since`)
WAIT_DEFAULT = 20  # seconds: under the idle timeouts of common proxies and load balancers (60 s)
WAIT_MAX = 25
# An ETag this route gives: "N", N an event count 0..AFTER_MAX written as the route writes it (no leading zero),
# weak or not; api/openapi.json's If-None-Match pattern is this expression (api/openapi_patterns.py writes it).
COUNT_TAG = r'(?:W/)?"(0|[1-9][0-9]{0,5}|1000000)"'
_COUNT_TAG = re.compile(COUNT_TAG)


@bp.get("/v1/games/<game_id>/events")
def game_events(game_id):
    only_query("after", "wait")
    after = int_arg("after", _seen_by_tag(), 0, AFTER_MAX)
    wait = int_arg("wait", WAIT_DEFAULT, 0, WAIT_MAX)
    news = watch.news(games(), current_app.extensions["fairdice_watch"], game_id, after, wait)
    tag = {"ETag": f'"{news.event_count}"'}
    if news.state is not None:
        return json_response(news.state, 200, tag)
    if news.poll_after is not None:
        tag["Retry-After"] = str(news.poll_after)
    return Response(status=304, headers=tag)


def _seen_by_tag() -> int:
    """The event count an `If-None-Match` names (an ETag this route gave), else 0."""
    header = request.headers.get("If-None-Match")
    if header is None:
        return 0
    match = _COUNT_TAG.fullmatch(header)
    if match is None:
        raise ApiError(400, "invalid_if_none_match", f'If-None-Match must be one ETag of this route: "<event count>", '
                                                     f'a count 0..{AFTER_MAX} without leading zeros')
    return int(match[1])
