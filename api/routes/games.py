"""The game routes: create, read, and the four moves, each a thin call of `Games`.

Creation and moves count against their rate limits (api/limits.py) before anything else is done.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from ..games import EVENTS_PAGE_MAX
from ..problems import ApiError
from .common import (bearer_token, body, command_response, games, idempotency_key, int_arg, json_response, limiter,
                     only_query, presented_token, request_client)

bp = Blueprint("games", __name__)
CREATE = "games.create_game"
MOVES = {"games.client_seed", "games.roll", "games.score", "games.abandon"}


@bp.before_request
def _rate_limits() -> None:
    """A creation or a move counts against its limits first: past one, 429 and nothing else is done.  A move
    without a bearer token is not counted: it is refused (401) at once, without any work to limit."""
    limits = limiter()
    if limits.off:
        return
    if request.endpoint == CREATE:
        limits.check_create(request_client())
    elif request.endpoint in MOVES and (token := presented_token()) is not None:
        limits.check_move(request_client(), token)


@bp.after_app_request
def _no_store(resp: Response) -> Response:
    """Nothing under /v1/games is cached, refusals included: a game changes with every move."""
    if request.path.startswith("/v1/games"):
        resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.post("/v1/games")
def create_game():
    doc = body({"rules": (str,), "seats": (list,), "first": (int, str), "upper_first": (bool,)},
               required=("rules", "seats"))
    _check_seats(doc["seats"])
    created = games().create(doc["rules"], doc["seats"], doc.get("first", 0), doc.get("upper_first", False),
                             client=request_client())
    return json_response(created, 201, {"Location": f"/v1/games/{created['game_id']}"})


def _check_seats(seats: list) -> None:
    """Each seat an object of string fields type, name, bot (whether they make a valid seat is the core's call)."""
    if not all(isinstance(seat, dict) for seat in seats):
        raise ApiError(400, "invalid_body", "every seat must be an object")
    for seat in seats:
        extra = sorted(set(seat) - {"type", "name", "bot"})
        if extra:
            raise ApiError(400, "invalid_body", f"unknown seat field {extra[0]!r}; fields: type, name, bot")
        if any(not isinstance(value, str) for value in seat.values()):
            raise ApiError(400, "invalid_body", "a seat's type, name and bot must be strings")


@bp.get("/v1/games/<game_id>")
def game_state(game_id):
    only_query("since", "limit")
    since = int_arg("since", 0, 0, 1_000_000)
    limit = int_arg("limit", EVENTS_PAGE_MAX, 0, EVENTS_PAGE_MAX)
    return json_response(games().state(game_id, since, limit))


@bp.get("/v1/games/<game_id>/log")
def game_log(game_id):
    return json_response(games().log(game_id))


@bp.get("/v1/games/<game_id>/hint")
def game_hint(game_id):
    return json_response(games().hint(game_id))  # no token needed: the position is public


# SPEC §5.7: what a version 3 command adds, the player's signature and the history it was made over
SIGNED = {"player_signature": (str,), "event_count": (int,)}
KEYED = {"player_key": (str,), **SIGNED}  # a seat's first command (seed or commitment) brings its key


@bp.post("/v1/games/<game_id>/client-seed")
def client_seed(game_id):
    """{"client_seed"}; in a game of several humans {"commitment"} first, then {"client_seed", "salt"}; in
    version 3 each with the seat's player_key and signature."""
    token, key = bearer_token(), idempotency_key()
    doc = body({"client_seed": (str,), "salt": (str,), "commitment": (str,), **KEYED})
    signed = _signed(doc, KEYED)
    if "commitment" in doc:
        if "client_seed" in doc or "salt" in doc:
            raise ApiError(400, "invalid_body", "a commitment is sent without the client seed and salt; they "
                                                "follow once every human seat has committed")
        return command_response(games().commit_client_seed(game_id, token, doc["commitment"], key, signed))
    if "client_seed" not in doc:
        raise ApiError(400, "invalid_body", "send {\"client_seed\"}, or in a game of several humans "
                                            "{\"commitment\"} and later {\"client_seed\", \"salt\"}")
    return command_response(games().client_seed(game_id, token, doc["client_seed"], doc.get("salt"), key, signed))


@bp.post("/v1/games/<game_id>/roll")
def roll(game_id):
    token, key = bearer_token(), idempotency_key()
    doc = body({"hold": (list,), **SIGNED})
    hold = doc.get("hold", [])
    if not all(isinstance(p, int) and not isinstance(p, bool) for p in hold):
        raise ApiError(400, "invalid_body", "hold must be an array of integers (dice positions 0..4)")
    return command_response(games().roll(game_id, token, hold, key, _signed(doc, SIGNED)))


@bp.post("/v1/games/<game_id>/score")
def score(game_id):
    token, key = bearer_token(), idempotency_key()
    doc = body({"category": (str,), **SIGNED}, required=("category",))
    return command_response(games().score(game_id, token, doc["category"], key, _signed(doc, SIGNED)))


@bp.post("/v1/games/<game_id>/abandon")
def abandon(game_id):
    token, key = bearer_token(), idempotency_key()
    doc = body(SIGNED)
    return command_response(games().abandon(game_id, token, key, _signed(doc, SIGNED)))


def _signed(doc: dict, fields: dict) -> dict:
    """The signature fields of a command (SPEC §5.7); a signature says which history it was made over."""
    if "player_signature" in doc and "event_count" not in doc:
        raise ApiError(400, "invalid_body", "a player_signature is sent with the event_count of the history it "
                                            "was made over (the state's event_count)")
    return {name: doc[name] for name in fields if name in doc}

