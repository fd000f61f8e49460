"""Errors as RFC 9457 problem details (`application/problem+json`), and the one place that maps them.

Every refusal the API sends goes through `problem()`: a stable `code` (the
core's own code when the core refused), a `type` URI made from it, a title,
the HTTP status, a human `detail`, and extra members such as `allowed`.
Nothing here ever includes a server seed: details come from the core's
refusals (which name rules, seats and categories only) or from this adapter.

`register(app)` installs the error handlers: the service and the core raise
domain errors (`FairdiceError` with a `kind`, the service's `RefusalError`s
in the same shape, the store's `BusyError` and `UnavailableError`) and only
this module knows which HTTP status each one gets.
"""

from __future__ import annotations

import json
import logging
from http import HTTPStatus

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from fairdice.errors import FairdiceError

from .errors import ServiceError
from .stores.base import BusyError, UnavailableError

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:fairdice:problem:"
BUSY_RETRY_AFTER = 1  # seconds: a lock held too long clears quickly
UNAVAILABLE_RETRY_AFTER = 5  # seconds: a fault (disk full, database gone) is not over at once

# The core and the service say what sort of refusal it is; the adapter only maps that to a status.
STATUS_OF_KIND = {"invalid": 422, "conflict": 409, "not_found": 404, "forbidden": 403, "quota": 429,
                  "unavailable": 503}

log = logging.getLogger("fairdice.api")


class ApiError(ServiceError):
    """A refusal decided by the HTTP adapter itself (malformed body, token, rate limit...)."""

    def __init__(self, status: int, code: str, detail: str, headers: dict | None = None, **extra):
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def _title(code: str) -> str:
    return code.replace("_", " ").capitalize()


def _jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return str(value)


def problem_json(status: int, code: str, detail: str, **extra) -> str:
    """The problem document's JSON text (also what api.worker answers with for the HTTP server's refusals)."""
    body = {"type": TYPE_PREFIX + code, "title": _title(code), "status": status, "detail": detail, "code": code}
    for key, value in extra.items():
        if key not in body and value is not None:
            body[key] = _jsonable(value)
    return json.dumps(body, separators=(",", ":"))


def problem(status: int, code: str, detail: str, headers: dict | None = None, **extra) -> Response:
    resp = Response(problem_json(status, code, detail, **extra), status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def from_api_error(exc: ApiError) -> Response:
    return problem(exc.status, exc.code, exc.detail, exc.headers, **exc.extra)


def from_core_error(exc: FairdiceError) -> Response:
    """A domain refusal: its kind gives the status; a `retry_after` detail (seconds) also goes in Retry-After."""
    status = STATUS_OF_KIND.get(exc.kind, 422)
    retry_after = exc.details.get("retry_after")
    headers = {"Retry-After": str(retry_after)} if isinstance(retry_after, int) and retry_after > 0 else None
    return problem(status, exc.code, exc.message, headers, **exc.details)


# What a client is told about a store fault: the store's own detail may name files, so it goes to the log only.
UNAVAILABLE_TEXT = {"disk_full": "the server's disk is full", "read_only": "the server's database is read-only",
                    "database_missing": "the server's database file has vanished",
                    "database_replaced": "the server's database file was replaced",
                    "unreachable": "the server cannot reach its database",
                    "io_error": "the server's disk is failing (nothing it acknowledged is lost)",
                    "database_corrupt": "the server's database is damaged"}


def from_unavailable(exc: UnavailableError) -> Response:
    """The store cannot serve now (disk full, read-only, database gone or unreachable): 503, code = the reason."""
    cause = UNAVAILABLE_TEXT.get(exc.reason, "the server's database cannot serve now")
    return problem(503, exc.reason, f"{cause}; retry later",
                   {"Retry-After": str(UNAVAILABLE_RETRY_AFTER)}, retry_after=UNAVAILABLE_RETRY_AFTER)


def status_code(status: int) -> str:
    """The code of a refusal that is its HTTP status alone: the phrase in snake case (413: request_entity_too_large)."""
    return HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_")


def from_http_status(status: int, detail: str | None = None, headers: dict | None = None) -> Response:
    return problem(status, status_code(status), detail or HTTPStatus(status).phrase, headers)


def register(app: Flask, max_body: int) -> None:
    """Answer every error raised while handling a request with a problem document (`max_body`: the body
    limit in bytes, named in a 413's detail)."""

    def busy(exc: BusyError) -> Response:
        return problem(503, "busy", "the server is busy; retry shortly", {"Retry-After": str(BUSY_RETRY_AFTER)})

    def unavailable(exc: UnavailableError) -> Response:
        log.error("store unavailable on %s %s: %s: %s", request.method, request.path, exc.reason, exc.detail)
        return from_unavailable(exc)

    def http_error(exc: HTTPException) -> Response:
        headers = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
        detail = {404: "no such resource", 405: f"{request.method} is not allowed here",
                  413: f"the request body is larger than {max_body} bytes"}.get(exc.code)
        return from_http_status(exc.code or 500, detail, headers)

    def unexpected(exc: Exception) -> Response:
        log.error("internal error on %s %s: %s", request.method, request.path, type(exc).__name__, exc_info=exc)
        return problem(500, "internal_error", "the server failed to handle this request")

    app.register_error_handler(ApiError, from_api_error)
    app.register_error_handler(FairdiceError, from_core_error)
    app.register_error_handler(BusyError, busy)
    app.register_error_handler(UnavailableError, unavailable)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(Exception, unexpected)
