"""What every route uses: this app's service (`games()`), reading requests, writing JSON answers.

The readers check the shape of a request only (a strict JSON object with fields of the right JSON types, the
bearer token, the Idempotency-Key header, whole-number query parameters) and refuse with an `ApiError`
(400/401/413); whether a move is legal is the core's business.
"""

from __future__ import annotations

import json
import re

from flask import Response, current_app, g, request
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

from verifier import strictjson

from ..games import Answer, Games
from ..limits import Limiter
from ..problems import ApiError

MAX_BODY = 64 * 1024
TOKEN_MAX = 512
IDEMPOTENCY_KEY = re.compile(r"[\x20-\x7e]{1,255}")
JSON = "application/json"
_JSON_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "an array", dict: "an object",
               type(None): "null"}


def games() -> Games:
    """The service of the app handling this request (made by `create_app`)."""
    return current_app.extensions["fairdice"]


def limiter() -> Limiter:
    return current_app.extensions["fairdice_limits"]


def request_client() -> str:
    """Who sent this request, as rate limits and quotas count clients (api/limits.py)."""
    if "fairdice_client" not in g:
        g.fairdice_client = limiter().client_of(request.remote_addr, request.headers.getlist("X-Forwarded-For"))
    return g.fairdice_client


def json_response(body, status: int = 200, headers: dict | None = None) -> Response:
    """`body`: a document, or JSON text already encoded."""
    if not isinstance(body, str):
        body = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    resp = Response(body, status=status, mimetype=JSON)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def command_response(answer: Answer) -> Response:
    """A command (a game's move, a dice session's) is answered 200 with the service's answer; one kept from an
    earlier request with the same Idempotency-Key says so (Idempotent-Replayed)."""
    return json_response(answer.body, 200, {"Idempotent-Replayed": "true"} if answer.replayed else None)


def request_bytes() -> bytes:
    """The request body, refused (413) past MAX_BODY bytes. Werkzeug refuses a longer Content-Length
    itself, but reads a chunked body (no Content-Length) only up to MAX_CONTENT_LENGTH and then stops,
    silently; that limit is one byte above MAX_BODY, so a body that reaches it is too long.  A body framed by
    a Content-Length within the limit is read in one call, straight from the server's input stream (which
    ends where the body ends), instead of through werkzeug's stream wrapper."""
    length = request.content_length
    if length is not None and length <= MAX_BODY:
        raw = request.environ["wsgi.input"].read(length)
        if len(raw) != length:
            raise ClientDisconnected()  # (as werkzeug's stream says it)
        return raw
    raw = request.get_data(cache=False)
    if len(raw) > MAX_BODY:
        raise RequestEntityTooLarge()
    return raw


def request_json():
    """The request body parsed as strict JSON (verifier/strictjson.py: no duplicate keys, NaN, numbers
    of 2^53 or more, nesting deeper than 64, lone surrogates); an empty body is {}. A whole number
    written 0.0 or 1e0 is the integer it is, as for the OpenAPI document (JSON Schema's "integer")."""
    raw = request_bytes()
    if not raw.strip():
        return {}
    try:
        return strictjson.loads(raw, integral_floats=True)
    except strictjson.StrictJSONError as exc:
        code = "malformed_json" if exc.reason in ("not_json", "not_utf8") else exc.reason
        raise ApiError(400, code, f"the request body is {exc}") from None


def body(allowed: dict[str, tuple[type, ...]], required: tuple[str, ...] = ()) -> dict:
    """The request body as a JSON object with only `allowed` fields of the given JSON types."""
    doc = request_json()
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
        if name in doc and not _is_one_of(doc[name], types):
            kinds = " or ".join(_JSON_NAMES[t] for t in types)
            raise ApiError(400, "invalid_body", f"the field {name!r} must be {kinds}")
    return doc


def _is_one_of(value, types: tuple[type, ...]) -> bool:
    """JSON types: true and false are not integers."""
    return isinstance(value, types) and (not isinstance(value, bool) or bool in types)


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>` (401 without one)."""
    token = presented_token()
    if token is None:
        raise ApiError(401, "missing_token", "send the seat's token as 'Authorization: Bearer <token>'",
                       headers={"WWW-Authenticate": 'Bearer realm="fairdice"'})
    return token


def presented_token() -> str | None:
    """The bearer token if the request carries a well-formed one, else None."""
    scheme, _, token = request.environ.get("HTTP_AUTHORIZATION", "").partition(" ")  # (request.headers, directly)
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > TOKEN_MAX:
        return None
    return token


def idempotency_key() -> str | None:
    key = request.environ.get("HTTP_IDEMPOTENCY_KEY")  # (request.headers["Idempotency-Key"], directly)
    if key is None:
        return None
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise ApiError(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
    return key


def only_query(*names: str) -> None:
    """Refuse a query parameter other than `names`."""
    unknown = sorted(set(request.args) - set(names))
    if unknown:
        raise ApiError(400, "invalid_query", f"unknown query parameter {unknown[0]!r}; parameters: {', '.join(names)}")


def int_arg(name: str, default: int, low: int, high: int) -> int:
    text = request.args.get(name)
    if text is None:
        return default
    if not re.fullmatch(r"[0-9]{1,9}", text) or not low <= int(text) <= high:  # (\d would take other scripts' digits)
        raise ApiError(400, "invalid_query", f"{name} must be a whole number {low}..{high}")
    return int(text)
