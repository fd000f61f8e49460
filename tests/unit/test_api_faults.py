"""Faults over HTTP (issue 14): a store that cannot serve answers 503 problem documents with Retry-After and an
unhealthy /healthz naming the reason, and recovers by itself; domain errors are mapped to statuses in one place
(api/problems.py), and the service layer knows nothing of HTTP."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from api.engines import TableNotReadyError
from api.games import ForbiddenError, GameNotFoundError
from api.store import BusyError, SQLiteStore
from api.stores.base import UNAVAILABLE_REASONS, UnavailableError
from fairdice.errors import FairdiceError, NotNowError
from support import REPO
from support.api_helpers import openapi_checker

API = REPO / "api"
SOLO = {"rules": "yacht", "seats": [{"type": "human", "name": "ann"}]}


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def failing(exc: Exception):
    def fail(*args, **kwargs):
        raise exc
    return fail


def assert_unavailable(resp, reason: str) -> dict:
    assert resp.status_code == 503, resp.get_data(as_text=True)
    assert resp.mimetype == "application/problem+json"
    assert resp.headers["Retry-After"] == "5"
    body = resp.get_json()
    assert body["code"] == reason and body["status"] == 503 and body["type"] == f"urn:fairdice:problem:{reason}"
    return body


# --- a store that cannot serve ---------------------------------------------------------------------------------

@pytest.mark.parametrize("reason", UNAVAILABLE_REASONS)
def test_a_store_fault_on_creation_is_a_503_named_by_its_reason(app, client, monkeypatch, tmp_path, reason):
    store = app.extensions["fairdice"].store
    monkeypatch.setattr(store, "create_game",
                        failing(UnavailableError(reason, f"{tmp_path}/fairdice.sqlite3: it broke")))
    body = assert_unavailable(client.post("/v1/games", json=SOLO), reason)
    openapi_checker(client)("Problem", body)
    assert str(tmp_path) not in json.dumps(body)  # the store's account names files: it goes to the log only


def test_a_store_fault_on_a_move_or_a_read_is_a_503(app, client, monkeypatch):
    created = client.post("/v1/games", json=SOLO).get_json()
    gid, auth = created["game_id"], bearer(created["tokens"][0]["token"])
    store = app.extensions["fairdice"].store
    monkeypatch.setattr(store, "append", failing(UnavailableError("disk_full", "database or disk is full")))
    assert_unavailable(client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth),
                       "disk_full")
    monkeypatch.setattr(store, "snapshot", failing(UnavailableError("database_missing", "the file has vanished")))
    assert_unavailable(client.get(f"/v1/games/{gid}"), "database_missing")
    monkeypatch.undo()  # the fault is gone: the same requests go through, nothing was half done
    state = client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).get_json()
    assert state["status"] == "playing" and state["event_count"] == 2


def test_a_busy_store_stays_503_busy(app, client, monkeypatch):
    monkeypatch.setattr(app.extensions["fairdice"].store, "create_game", failing(BusyError("database is locked")))
    resp = client.post("/v1/games", json=SOLO)
    assert resp.status_code == 503 and resp.get_json()["code"] == "busy" and resp.headers["Retry-After"] == "1"


# --- /healthz --------------------------------------------------------------------------------------------------

def test_healthz_asks_the_store(app, client, monkeypatch):
    calls = []
    monkeypatch.setattr(app.extensions["fairdice"].store, "health", lambda: calls.append(1))
    assert client.get("/healthz").get_json() == {"status": "ok"} and calls == [1]


@pytest.mark.parametrize("reason", UNAVAILABLE_REASONS)
def test_healthz_is_unhealthy_with_the_reason_and_recovers(app, client, monkeypatch, reason):
    conf = app.config["FAIRDICE"]
    detail = f"cannot write next to {conf.key_dir}/signing-ed25519.pem or {conf.seed_key_file}"
    monkeypatch.setattr(app.extensions["fairdice"].store, "health", failing(UnavailableError(reason, detail)))
    resp = client.get("/healthz")
    assert resp.status_code == 503 and resp.mimetype == "application/json" and resp.headers["Retry-After"] == "5"
    body = resp.get_json()
    openapi_checker(client)("Unhealthy", body)
    assert body["status"] == "unhealthy" and body["reason"] == reason and body["detail"].startswith("cannot write")
    assert str(conf.key_dir) not in body["detail"] and str(conf.seed_key_file) not in body["detail"]
    monkeypatch.undo()
    assert client.get("/healthz").status_code == 200


def test_healthz_never_shows_the_database_password(tmp_path, make_app):
    url = "postgresql://fairdice:s3cret-pw@db.internal:5432/fairdice"
    app = make_app({"FAIRDICE_DB": url}, store=SQLiteStore(tmp_path / "stand-in.sqlite3"))  # nothing connects
    app.extensions["fairdice"].store.health = failing(UnavailableError("unreachable", f"connection to {url} failed: "
                                                                                      "password s3cret-pw refused"))
    body = app.test_client().get("/healthz").get_json()
    assert body["reason"] == "unreachable" and "s3cret-pw" not in body["detail"] and "db.internal" in body["detail"]


def test_healthz_of_a_busy_store_is_unhealthy(app, client, monkeypatch):
    monkeypatch.setattr(app.extensions["fairdice"].store, "health", failing(BusyError("database is locked")))
    resp = client.get("/healthz")
    assert resp.status_code == 503 and resp.get_json()["reason"] == "busy"


def test_livez_touches_nothing(app, client, monkeypatch):
    monkeypatch.setattr(app.extensions["fairdice"].store, "health", failing(UnavailableError("disk_full", "full")))
    assert client.get("/livez").get_json() == {"status": "ok"}


def test_a_vanished_database_file_makes_healthz_unhealthy(tmp_path, make_app):
    """A real fault, not a stand-in: the database file is deleted under the running app."""
    app = make_app()
    client = app.test_client()
    assert client.post("/v1/games", json=SOLO).status_code == 201
    db = app.config["FAIRDICE"].db
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    resp = client.get("/healthz")
    assert resp.status_code == 503 and resp.get_json()["reason"] == "database_missing"
    assert_unavailable(client.post("/v1/games", json=SOLO), "database_missing")


# --- domain errors, one mapping ----------------------------------------------------------------------------------

class Quota(FairdiceError):
    kind = "quota"


@pytest.mark.parametrize("error, status", [
    (FairdiceError("invalid_hold", "bad"), 422),
    (NotNowError("not_your_turn", "wait"), 409),
    (GameNotFoundError("none"), 404),
    (ForbiddenError("invalid_token", "not yours"), 403),
    (Quota("too_many_unfinished_games", "finish one"), 429),
    (TableNotReadyError("engine_warming_up", "building", retry_after=15), 503),
])
def test_each_kind_of_domain_error_has_its_status(app, client, monkeypatch, error, status):
    monkeypatch.setattr(app.extensions["fairdice"], "state", failing(error))
    resp = client.get("/v1/games/some-game")
    assert resp.status_code == status and resp.mimetype == "application/problem+json"
    assert resp.get_json()["code"] == error.code and resp.get_json()["detail"] == error.message
    assert resp.headers.get("Retry-After") == ("15" if status == 503 else None)


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


@pytest.mark.parametrize("module", ["games.py", "sessions.py", "engines.py", "errors.py"])
def test_the_service_layer_knows_nothing_of_http(module):
    """api/games.py and api/sessions.py (and the engine tables they wait for) raise domain errors and answer with
    domain values; only the HTTP layer maps them to statuses."""
    imported = _imported_modules(API / module)
    http = {name for name in imported if name.split(".")[0] in ("flask", "werkzeug")
            or name in (".problems", ".routes", "api.problems")}
    assert not http, f"api/{module} imports {sorted(http)}"
