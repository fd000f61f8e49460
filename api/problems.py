"""Errors as RFC 9457 problem details (`application/problem+json`).

Every refusal the API sends goes through `problem()`: a stable `code` (the
core's own code when the core refused), a `type` URI made from it, a title,
the HTTP status, a human `detail`, and extra members such as `allowed`.
Nothing here ever includes a server seed: details come from the core's
refusals (which name rules, seats and categories only) or from this adapter.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from flask import Response

from fairdice.errors import FairdiceError

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:fairdice:problem:"

# The core says what sort of refusal it is; the adapter only maps that to a status.
STATUS_OF_KIND = {"invalid": 422, "conflict": 409, "not_found": 404, "forbidden": 403}


class ApiError(Exception):
    """A refusal decided by the HTTP adapter itself (malformed body, token, unknown game...)."""

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


def problem(status: int, code: str, detail: str, headers: dict | None = None, **extra) -> Response:
    body = {"type": TYPE_PREFIX + code, "title": _title(code), "status": status, "detail": detail, "code": code}
    for key, value in extra.items():
        if key not in body and value is not None:
            body[key] = _jsonable(value)
    resp = Response(json.dumps(body, separators=(",", ":")), status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def from_api_error(exc: ApiError) -> Response:
    return problem(exc.status, exc.code, exc.detail, exc.headers, **exc.extra)


def from_core_error(exc: FairdiceError) -> Response:
    status = STATUS_OF_KIND.get(exc.kind, 422)
    return problem(status, exc.code, exc.message, **exc.details)


def from_http_status(status: int, detail: str | None = None, headers: dict | None = None) -> Response:
    phrase = HTTPStatus(status).phrase
    code = phrase.lower().replace(" ", "_").replace("-", "_")
    return problem(status, code, detail or phrase, headers)
