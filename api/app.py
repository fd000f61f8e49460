"""The Flask app: thin routes from HTTP to `Games`, which calls the core.

Routes parse and check the shape of a request (JSON object, field types, the
bearer token, the Idempotency-Key header) and turn every refusal into an
`application/problem+json` answer.  Whether a move is legal is the core's
business: its refusals come back as 422 (invalid) or 409 (not now).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from fairdice.bots import BOTS, measured_scores
from fairdice.errors import FairdiceError
from fairdice.rules import RULESETS
from verifier import strictjson

from . import page, problems
from .config import settings
from .games import EVENTS_PAGE_MAX, Games
from .keys import KeyRing
from .problems import ApiError
from .store import Busy, Store, open_store

OPENAPI_PATH = Path(__file__).with_name("openapi.json")
MAX_BODY = 64 * 1024
TOKEN_MAX = 512
IDEMPOTENCY_KEY = re.compile(r"[\x20-\x7e]{1,255}")
JSON = "application/json"

log = logging.getLogger("fairdice.api")


def _json_response(body, status: int = 200, headers: dict | None = None) -> Response:
    if not isinstance(body, str):
        body = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    resp = Response(body, status=status, mimetype=JSON)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def _request_bytes() -> bytes:
    """The request body, refused (413) past MAX_BODY bytes. Werkzeug refuses a longer Content-Length
    itself, but reads a chunked body (no Content-Length) only up to MAX_CONTENT_LENGTH and then stops,
    silently; that limit is one byte above MAX_BODY, so a body that reaches it is too long."""
    raw = request.get_data(cache=False)
    if len(raw) > MAX_BODY:
        raise RequestEntityTooLarge()
    return raw


def _request_json():
    """The request body parsed as strict JSON (verifier/strictjson.py: no duplicate keys, NaN, numbers
    of 2^53 or more, nesting deeper than 64, lone surrogates); an empty body is {}. A whole number
    written 0.0 or 1e0 is the integer it is, as for the OpenAPI document (JSON Schema's "integer")."""
    raw = _request_bytes()
    if not raw.strip():
        return {}
    try:
        return strictjson.loads(raw, integral_floats=True)
    except strictjson.StrictJSONError as exc:
        code = "malformed_json" if exc.reason in ("not_json", "not_utf8") else exc.reason
        raise ApiError(400, code, f"the request body is {exc}") from None


def _body(allowed: dict[str, tuple[type, ...]], required: tuple[str, ...] = ()) -> dict:
    """The request body as a JSON object with only `allowed` fields of the given JSON types."""
    doc = _request_json()
    if not isinstance(doc, dict):
        raise ApiError(400, "invalid_body", "the request body must be a JSON object")
    unknown = sorted(set(doc) - set(allowed))
    if unknown:
        raise ApiError(400, "invalid_body", f"unknown field {unknown[0]!r}; fields: {', '.join(allowed)}",
                       allowed=list(allowed))
    for name in required:
        if name not in doc:
            raise ApiError(400, "invalid_body", f"the field {name!r} is required")
    for name, types in allowed.items():
        if name in doc and (not isinstance(doc[name], types) or (isinstance(doc[name], bool) and bool not in types)):
            kinds = " or ".join(_JSON_NAMES[t] for t in types)
            raise ApiError(400, "invalid_body", f"the field {name!r} must be {kinds}")
    return doc


_JSON_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "an array", dict: "an object",
               type(None): "null"}


def _bearer_token() -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > TOKEN_MAX:
        raise ApiError(401, "missing_token", "send the seat's token as 'Authorization: Bearer <token>'",
                       headers={"WWW-Authenticate": 'Bearer realm="fairdice"'})
    return token


def _idempotency_key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
    return key


def _int_arg(name: str, default: int, low: int, high: int) -> int:
    text = request.args.get(name)
    if text is None:
        return default
    if not re.fullmatch(r"\d{1,9}", text) or not low <= int(text) <= high:
        raise ApiError(400, "invalid_query", f"{name} must be a whole number {low}..{high}")
    return int(text)


def _command_response(reply) -> Response:
    headers = {"Idempotent-Replayed": "true"} if reply.replayed else None
    return _json_response(reply.body, reply.status, headers)


def _openapi_document() -> str:
    """api/openapi.json, with the bot ids of this server's registry."""
    doc = json.loads(OPENAPI_PATH.read_text())
    doc["components"]["schemas"]["BotId"]["enum"] = list(BOTS)
    return json.dumps(doc, separators=(",", ":"))


def _bots_document() -> dict:
    """GET /v1/bots: each bot with its measured solitaire score (mean, sd, ...) per rule set, where measured."""
    measured = measured_scores()
    scores = measured.get("bots", {})
    return {
        "bots": [{"id": b.id, "version": b.version, "level": b.level, "description": b.description,
                  "hash": b.identity_hash(),
                  "measured": {rid: dict(scores[b.id][rid]) for rid in RULESETS if rid in scores.get(b.id, {})}}
                 for b in BOTS.values()],
        "measured_source": measured.get("source", ""),
        "measured_games": measured.get("games"),
    }


def create_app(config: dict | None = None, store: Store | None = None) -> Flask:
    """The API app.  `config`: `FAIRDICE_*` settings (see api.config); `store`: use this store instead of
    the database named by the settings (a SQLite file or a PostgreSQL URL)."""
    app = Flask(__name__, static_folder=None)  # the game page and its files: api/page.py
    conf = settings(config)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY + 1  # (see _request_bytes)
    app.config["FAIRDICE"] = conf
    keys = KeyRing(conf.key_dir)
    if store is None:
        store = open_store(conf)
    games = Games(store, keys)
    app.extensions["fairdice"] = games
    openapi = _openapi_document()
    rules_doc = json.dumps({"rules": [
        {"id": r.id, "name": r.name, "summary": r.summary, "upper_bonus": r.upper_bonus,
         "yahtzee_bonus": r.yahtzee_bonus,
         "categories": [{"id": c.id, "label": c.label, "section": c.section} for c in r.categories]}
        for r in RULESETS.values()]}, separators=(",", ":"))
    bots_doc = json.dumps(_bots_document(), separators=(",", ":"))

    # --- errors -----------------------------------------------------------------

    @app.errorhandler(ApiError)
    def _api_error(exc):
        return problems.from_api_error(exc)

    @app.errorhandler(FairdiceError)
    def _core_error(exc):
        return problems.from_core_error(exc)

    @app.errorhandler(Busy)
    def _busy(exc):
        return problems.problem(503, "busy", "the server is busy; retry shortly", {"Retry-After": "1"})

    @app.errorhandler(HTTPException)
    def _http_error(exc):
        headers = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
        detail = {404: "no such resource", 405: f"{request.method} is not allowed here",
                  413: f"the request body is larger than {MAX_BODY} bytes"}.get(exc.code)
        return problems.from_http_status(exc.code or 500, detail, headers)

    @app.errorhandler(Exception)
    def _unexpected(exc):
        log.error("internal error on %s %s: %s", request.method, request.path, type(exc).__name__, exc_info=exc)
        return problems.problem(500, "internal_error", "the server failed to handle this request")

    @app.after_request
    def _no_store(resp):
        if request.path.startswith("/v1/games"):
            resp.headers["Cache-Control"] = "no-store"
        return resp

    # --- public documents ----------------------------------------------------------

    @app.get("/healthz")
    def healthz():
        return _json_response('{"status":"ok"}')

    @app.get("/openapi.json")
    def openapi_doc():
        return _json_response(openapi)

    @app.get("/v1/rules")
    def rules():
        return _json_response(rules_doc)

    @app.get("/v1/bots")
    def bots():
        return _json_response(bots_doc)

    @app.get("/v1/keys")
    def public_keys():
        return _json_response({"keys": keys.public_keys()})

    # --- games --------------------------------------------------------------------

    @app.post("/v1/games")
    def create_game():
        body = _body({"rules": (str,), "seats": (list,), "first": (int, str), "upper_first": (bool,)},
                     required=("rules", "seats"))
        if not all(isinstance(seat, dict) for seat in body["seats"]):
            raise ApiError(400, "invalid_body", "every seat must be an object")
        for seat in body["seats"]:
            extra = sorted(set(seat) - {"type", "name", "bot"})
            if extra:
                raise ApiError(400, "invalid_body", f"unknown seat field {extra[0]!r}; fields: type, name, bot")
            if any(not isinstance(value, str) for value in seat.values()):
                raise ApiError(400, "invalid_body", "a seat's type, name and bot must be strings")
        created = games.create(body["rules"], body["seats"], body.get("first", 0), body.get("upper_first", False))
        return _json_response(created, 201, {"Location": f"/v1/games/{created['game_id']}"})

    @app.get("/v1/games/<game_id>")
    def game_state(game_id):
        unknown = sorted(set(request.args) - {"since", "limit"})
        if unknown:
            raise ApiError(400, "invalid_query", f"unknown query parameter {unknown[0]!r}; parameters: since, limit")
        since = _int_arg("since", 0, 0, 1_000_000)
        limit = _int_arg("limit", EVENTS_PAGE_MAX, 0, EVENTS_PAGE_MAX)
        return _json_response(games.state(game_id, since, limit))

    @app.get("/v1/games/<game_id>/log")
    def game_log(game_id):
        return _json_response(games.log(game_id))

    @app.get("/v1/games/<game_id>/hint")
    def game_hint(game_id):
        return _json_response(games.hint(game_id))  # no token needed: the position is public

    @app.post("/v1/games/<game_id>/client-seed")
    def client_seed(game_id):
        """{"client_seed"}; in a game of several humans {"commitment"} first, then {"client_seed", "salt"}."""
        token, key = _bearer_token(), _idempotency_key()
        body = _body({"client_seed": (str,), "salt": (str,), "commitment": (str,)})
        if "commitment" in body:
            if len(body) > 1:
                raise ApiError(400, "invalid_body", "a commitment is sent alone; the client seed and salt follow "
                                                    "once every human seat has committed")
            return _command_response(games.commit_client_seed(game_id, token, body["commitment"], key))
        if "client_seed" not in body:
            raise ApiError(400, "invalid_body", "send {\"client_seed\"}, or in a game of several humans "
                                                "{\"commitment\"} and later {\"client_seed\", \"salt\"}")
        return _command_response(games.client_seed(game_id, token, body["client_seed"], body.get("salt"), key))

    @app.post("/v1/games/<game_id>/roll")
    def roll(game_id):
        token, key = _bearer_token(), _idempotency_key()
        body = _body({"hold": (list,)})
        hold = body.get("hold", [])
        if not all(isinstance(p, int) and not isinstance(p, bool) for p in hold):
            raise ApiError(400, "invalid_body", "hold must be an array of integers (dice positions 0..4)")
        return _command_response(games.roll(game_id, token, hold, key))

    @app.post("/v1/games/<game_id>/score")
    def score(game_id):
        token, key = _bearer_token(), _idempotency_key()
        body = _body({"category": (str,)}, required=("category",))
        return _command_response(games.score(game_id, token, body["category"], key))

    @app.post("/v1/games/<game_id>/abandon")
    def abandon(game_id):
        token, key = _bearer_token(), _idempotency_key()
        _body({})
        return _command_response(games.abandon(game_id, token, key))

    page.register(app)  # the game page at / (api/page.py, api/static/)
    return app
