"""The session routes (SPEC §10.10): open a session, send its client seed, roll, rotate, read the log; each a thin
call of `api.sessions.Sessions`.  Opening counts against the creation rate limit and the commands against the
move limits (api/limits.py), as for games; opening is also under the quota of sessions a client may open a day
and a roll under that of rolls a client's sessions may make a UTC day (FAIRDICE_MAX_SESSIONS,
FAIRDICE_MAX_SESSION_ROLLS: 429 `too_many_sessions`, `too_many_session_rolls`; api/sessions.py)."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, request

from ..problems import ApiError
from ..sessions import Sessions
from .common import (bearer_token, body, command_response, idempotency_key, json_response, limiter, presented_token,
                     request_client)

bp = Blueprint("sessions", __name__)
CREATE = "sessions.create_session"
COMMANDS = {"sessions.client_seed", "sessions.roll", "sessions.rotate"}
SIGNED = {"app_signature": (str,), "event_count": (int,)}  # SPEC §10.7: the app's signature, and over what


def sessions() -> Sessions:
    return current_app.extensions["fairdice_sessions"]


@bp.before_request
def _rate_limits() -> None:
    limits = limiter()
    if limits.off:
        return
    if request.endpoint == CREATE:
        limits.check_create(request_client())
    elif request.endpoint in COMMANDS and (token := presented_token()) is not None:
        limits.check_move(request_client(), token)


@bp.after_request
def _no_store(resp: Response) -> Response:
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.post("/v1/sessions")
def create_session():
    body({})
    created = sessions().create(client=request_client())
    return json_response(created, 201, {"Location": f"/v1/sessions/{created['session_id']}"})


@bp.post("/v1/sessions/<session_id>/client-seed")
def client_seed(session_id):
    token, key = bearer_token(), idempotency_key()
    doc = body({"client_seed": (str,), "app_key": (str, type(None))}, required=("client_seed",))
    return command_response(sessions().client_seed(session_id, token, doc["client_seed"], doc.get("app_key"), key))


@bp.post("/v1/sessions/<session_id>/rolls")
def roll(session_id):
    token, key = bearer_token(), idempotency_key()
    doc = body({"dice": (str,), **SIGNED}, required=("dice",))
    return command_response(sessions().roll(session_id, token, doc["dice"], _signed(doc), key))


@bp.post("/v1/sessions/<session_id>/rotate")
def rotate(session_id):
    token, key = bearer_token(), idempotency_key()
    doc = body({"client_seed": (str,), "app_key": (str, type(None)), **SIGNED})
    if "app_key" in doc and doc["app_key"] is not None and "client_seed" not in doc:
        raise ApiError(400, "invalid_body", "an app_key is registered with the new pair's client_seed")
    return command_response(sessions().rotate(session_id, token, doc.get("client_seed"), doc.get("app_key"),
                                              _signed(doc), key))


@bp.get("/v1/sessions/<session_id>/log")
def session_log(session_id):
    return json_response(sessions().log(session_id))


def _signed(doc: dict) -> dict:
    if "app_signature" in doc and "event_count" not in doc:
        raise ApiError(400, "invalid_body", "an app_signature is sent with the event_count of the history it was "
                                            "made over (the last answer's event_count)")
    return {name: doc[name] for name in SIGNED if name in doc}

