"""The two quotas of dice sessions (api/sessions.py).  FAIRDICE_MAX_SESSIONS, the sessions a client may open in
any 24 hours: past it, opening is a 429 problem document with Retry-After and the quota, while the client's
sessions keep rolling and other clients keep opening; a session a day old no longer counts.
FAIRDICE_MAX_SESSION_ROLLS, the rolls a client's sessions may make in a UTC day, all together: past it a roll is a
429 until midnight UTC, stores nothing and takes no nonce; replays and rotations do not count.  `fairdice admin
quota --sessions` / `--session-rolls` set, lift and reset one client's quota for a running app; and the store's
part (counting a client's sessions since a time and its rolls of a day, the quotas an operator sets, their tables
made on a database that predates them) holds on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time

import pytest

from api.sessions import QUOTA_WINDOW
from api.stores.sessions_base import (CLIENT_SESSION_QUOTAS_TABLE, ClientSessions, RollQuota, RollsExhaustedError,
                                     SessionRecord)
from support.api_helpers import openapi_checker
from support.serve import admin
from support.serve import QUIET
from support.stores import tail

OTHER_CLIENT = {"REMOTE_ADDR": "203.0.113.9"}


def open_session(client, environ: dict | None = None):
    return client.post("/v1/sessions", environ_base=environ or {})


def backdate(backend, session_id: str, created_at: str) -> None:
    """Move a session's opening back in time (the table refuses updates: its trigger is dropped first)."""
    if backend.name == "sqlite":
        backend.execute("DROP TRIGGER IF EXISTS sessions_no_update")
    else:
        backend.execute("ALTER TABLE sessions DISABLE TRIGGER sessions_no_update_or_delete")
    backend.execute("UPDATE sessions SET created_at = ? WHERE session_id = ?", (created_at, session_id))


def stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# --- through the app --------------------------------------------------------------------------------------------

def test_past_the_quota_opening_is_429_with_retry_after_and_the_sessions_keep_rolling(make_app):
    client = make_app({**QUIET, "FAIRDICE_MAX_SESSIONS": "2"}).test_client()
    made = [open_session(client) for _ in range(2)]
    assert [r.status_code for r in made] == [201, 201]
    refused = open_session(client)
    assert refused.status_code == 429 and refused.mimetype == "application/problem+json"
    body = refused.get_json()
    assert body["code"] == "too_many_sessions" and body["status"] == 429
    assert body["max_sessions"] == 2 and body["window"] == QUOTA_WINDOW
    # the oldest session was opened a moment ago: a place frees when it turns a day old
    assert QUOTA_WINDOW - 60 <= body["retry_after"] <= QUOTA_WINDOW
    assert refused.headers["Retry-After"] == str(body["retry_after"])
    openapi_checker(client)("Problem", body)
    documented = client.get("/openapi.json").get_json()["paths"]["/v1/sessions"]["post"]["responses"]["429"]
    assert "too_many_sessions" in documented["description"] and documented["headers"]["Retry-After"]["required"]
    sid, token = made[0].get_json()["session_id"], made[0].get_json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert client.post(f"/v1/sessions/{sid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    assert client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "3d6"}, headers=auth).status_code == 200
    assert client.post(f"/v1/sessions/{sid}/rotate", json={"client_seed": "t"}, headers=auth).status_code == 200
    assert open_session(client, OTHER_CLIENT).status_code == 201  # another client has its own quota


def test_a_session_a_day_old_no_longer_counts(backend, make_app, tmp_path):
    client = make_app({**QUIET, **backend.config(tmp_path), "FAIRDICE_MAX_SESSIONS": "1"}).test_client()
    first = open_session(client).get_json()["session_id"]
    assert open_session(client).status_code == 429
    backdate(backend, first, stamp(time.time() - QUOTA_WINDOW - 1))
    assert open_session(client).status_code == 201
    assert open_session(client).status_code == 429


def started(client, environ: dict | None = None) -> tuple[str, dict]:
    made = open_session(client, environ).get_json()
    auth = {"Authorization": f"Bearer {made['token']}"}
    r = client.post(f"/v1/sessions/{made['session_id']}/client-seed", json={"client_seed": "s"}, headers=auth)
    assert r.status_code == 200
    return made["session_id"], auth


def roll(client, sid: str, auth: dict, key: str | None = None):
    headers = {**auth, **({"Idempotency-Key": key} if key else {})}
    return client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "2d6"}, headers=headers)


def test_past_the_roll_quota_a_roll_is_429_until_midnight_and_takes_no_nonce(make_app):
    app = make_app({**QUIET, "FAIRDICE_MAX_SESSION_ROLLS": "3"})
    client = app.test_client()
    first, second = started(client), started(client)
    assert [roll(client, *first).status_code, roll(client, *second).status_code] == [200, 200]
    assert roll(client, *first, key="k").status_code == 200
    assert roll(client, *first, key="k").headers["Idempotent-Replayed"] == "true"  # a replay is not a roll
    refused = roll(client, *second)  # the client's sessions together: 3 rolls made
    assert refused.status_code == 429
    body = refused.get_json()
    assert body["code"] == "too_many_session_rolls" and body["max_session_rolls"] == 3
    seconds_to_midnight = 86400 - int(time.time()) % 86400
    assert seconds_to_midnight - 5 <= body["retry_after"] <= seconds_to_midnight
    assert refused.headers["Retry-After"] == str(body["retry_after"])
    openapi_checker(client)("Problem", body)
    documented = client.get("/openapi.json").get_json()["paths"]["/v1/sessions/{session_id}/rolls"]["post"]
    assert "too_many_session_rolls" in documented["responses"]["429"]["description"]
    sid, auth = second
    assert client.post(f"/v1/sessions/{sid}/rotate", json={}, headers=auth).status_code == 200  # not a roll
    assert roll(client, *started(client, OTHER_CLIENT)).status_code == 200  # another client's own count
    app.extensions["fairdice_sessions"].store.set_client_session_quota("127.0.0.1", 4, "rolls")
    again = roll(client, *first).get_json()  # the refused roll took no nonce: the first's third roll is nonce 2
    assert (again["pair"], again["nonce"], again["serial"]) == (0, 2, 3)
    assert roll(client, *first).status_code == 429


def test_no_quota_is_asked_for_when_it_is_off(make_app):
    client = make_app({**QUIET, "FAIRDICE_MAX_SESSIONS": "0", "FAIRDICE_MAX_SESSION_ROLLS": "0"}).test_client()
    assert all(open_session(client).status_code == 201 for _ in range(5))
    session = started(client)
    assert all(roll(client, *session).status_code == 200 for _ in range(5))


def test_the_quota_setting_is_a_whole_number():
    from api.config import settings

    defaults = settings({}, environ={})
    assert (defaults.max_sessions, defaults.max_session_rolls) == (100, 100000)
    assert settings({"FAIRDICE_MAX_SESSIONS": "7"}, environ={}).max_sessions == 7
    assert settings({}, environ={"FAIRDICE_MAX_SESSION_ROLLS": "9"}).max_session_rolls == 9
    for name in ("FAIRDICE_MAX_SESSIONS", "FAIRDICE_MAX_SESSION_ROLLS"):
        for bad in ("-1", "many", "1.5"):
            with pytest.raises(ValueError, match=name):
                settings({name: bad}, environ={})


def test_admin_sets_lifts_and_resets_one_clients_quota_of_sessions_for_a_running_app(tmp_path):
    """`fairdice admin quota --sessions` writes to the store; the app, another process, applies it to the next
    session; the games' quota of the same client is untouched."""
    from api import create_app

    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path), **QUIET, "FAIRDICE_MAX_SESSIONS": "1"})
    client = app.test_client()  # REMOTE_ADDR 127.0.0.1
    assert [open_session(client).status_code for _ in range(2)] == [201, 429]
    out = admin("quota", "--sessions", "--client", "127.0.0.1", "--max", "3", "--data-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["127.0.0.1: at most 3 dice sessions a day"]
    assert [open_session(client).status_code for _ in range(3)] == [201, 201, 429]
    assert open_session(client).get_json()["max_sessions"] == 3
    assert admin("quota", "--sessions", "--client", "127.0.0.1", "--lift", "--data-dir", str(tmp_path)).returncode == 0
    assert [open_session(client).status_code for _ in range(3)] == [201] * 3
    listed = json.loads(admin("quota", "--json", "--data-dir", str(tmp_path),
                              env={"FAIRDICE_MAX_SESSIONS": "1"}).stdout)
    assert listed["session_quotas"] == {"127.0.0.1": 0} and listed["max_sessions"] == 1
    assert listed["quotas"] == {}  # the games' quota of this client is not set
    text = admin("quota", "--data-dir", str(tmp_path), env={"FAIRDICE_MAX_SESSIONS": "1"}).stdout.splitlines()
    assert "127.0.0.1: no quota of dice sessions a day" in text
    assert "any other client: the servers' quota, 1 dice sessions a day (FAIRDICE_MAX_SESSIONS)" in text
    assert admin("quota", "--sessions", "--client", "127.0.0.1", "--reset", "--data-dir", str(tmp_path)).returncode == 0
    refused = open_session(client)
    assert refused.status_code == 429 and refused.get_json()["max_sessions"] == 1
    app.extensions["fairdice"].store.close()


def test_admin_sets_one_clients_quota_of_session_rolls_for_a_running_app(tmp_path):
    from api import create_app

    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path), **QUIET, "FAIRDICE_MAX_SESSION_ROLLS": "1"})
    client = app.test_client()
    session = started(client)
    assert [roll(client, *session).status_code for _ in range(2)] == [200, 429]
    out = admin("quota", "--session-rolls", "--client", "127.0.0.1", "--max", "2", "--data-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["127.0.0.1: at most 2 session rolls a UTC day"]
    assert [roll(client, *session).status_code for _ in range(2)] == [200, 429]
    assert admin("quota", "--session-rolls", "--client", "127.0.0.1", "--lift", "--data-dir",
                 str(tmp_path)).returncode == 0
    assert [roll(client, *session).status_code for _ in range(3)] == [200] * 3
    listed = json.loads(admin("quota", "--json", "--data-dir", str(tmp_path)).stdout)
    assert listed["session_roll_quotas"] == {"127.0.0.1": 0} and listed["session_quotas"] == {}
    out = admin("quota", "--sessions", "--session-rolls", "--client", "127.0.0.1", "--max", "2", "--data-dir",
                str(tmp_path))
    assert out.returncode == 2 and "not allowed with" in out.stderr
    assert admin("quota", "--session-rolls", "--client", "127.0.0.1", "--reset", "--data-dir",
                 str(tmp_path)).returncode == 0
    assert roll(client, *session).status_code == 429
    app.extensions["fairdice"].store.close()


# --- the store, on both backends ---------------------------------------------------------------------------------

def opened_by(store, client: str, n: int) -> list[str]:
    ids = [f"s-{client}-{i}" for i in range(n)]
    for sid in ids:
        store.create_session(SessionRecord(sid, {"header": {"session_id": sid}, "commitment_signature": "ab"},
                                           "k" * 16, "f" * 64, client), {0: b"x", 1: b"y"})
    return ids


def test_client_sessions_counts_a_clients_sessions_opened_after_a_time(backend, store):
    a = opened_by(store, "a", 3)
    opened_by(store, "b", 1)
    backdate(backend, a[0], "2026-01-01T00:00:00Z")
    backdate(backend, a[1], "2026-01-02T00:00:00Z")
    backdate(backend, a[2], "2026-01-03T00:00:00Z")
    store.set_client_session_quota("a", 5)
    assert store.client_sessions("a", "2025-12-31T00:00:00Z") == ClientSessions(3, "2026-01-01T00:00:00Z", 5)
    # opened after the time, not at it: the session of 2026-01-01 is out of a window that starts then
    assert store.client_sessions("a", "2026-01-01T00:00:00Z") == ClientSessions(2, "2026-01-02T00:00:00Z", 5)
    assert store.client_sessions("a", "2026-01-03T00:00:00Z") == ClientSessions(0, None, 5)
    assert store.client_sessions("b", "2026-01-01T00:00:00Z").opened == 1
    assert store.client_sessions("nobody", "2000-01-01T00:00:00Z") == ClientSessions(0, None, None)
    assert store.client_sessions("a\x00", "2000-01-01T00:00:00Z").opened == 0


def test_a_session_quota_set_through_one_store_is_seen_through_another(backend):
    writer, reader = backend.open(), backend.open()
    assert reader.client_session_quotas() == {}
    writer.set_client_session_quota("203.0.113.7", 50)
    writer.set_client_session_quota("2001:db8:1:2::/64", 0)
    assert reader.client_session_quotas() == {"2001:db8:1:2::/64": 0, "203.0.113.7": 50}
    writer.set_client_session_quota("203.0.113.7", 3)  # changed, not added
    assert reader.client_sessions("203.0.113.7", "2000-01-01T00:00:00Z").max_sessions == 3
    writer.set_client_session_quota("203.0.113.7", None)  # back to the server's quota
    assert reader.client_session_quotas() == {"2001:db8:1:2::/64": 0}
    assert reader.client_quotas() == {}  # the games' quotas are another table
    writer.set_client_session_quota("203.0.113.7", 9, "rolls")  # a quota of rolls beside one of sessions
    assert reader.client_session_quotas("rolls") == {"203.0.113.7": 9}
    assert reader.client_session_quotas("sessions") == {"2001:db8:1:2::/64": 0}


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_a_session_quota_that_is_not_a_count_is_refused(store, bad):
    with pytest.raises(ValueError, match="sessions"):
        store.set_client_session_quota("203.0.113.7", bad)
    assert store.client_session_quotas() == {}


def roll_rows(n: int, at: int) -> list[tuple[dict, dict]]:
    return [({"type": "roll", "i": at + i}, tail(at + i + 1)) for i in range(n)]


def test_rolls_count_against_the_day_of_the_client_that_opened_the_session(store):
    a1, a2 = opened_by(store, "a", 2)
    (b1,) = opened_by(store, "b", 1)
    today = RollQuota("a", "2026-12-02", 3)
    store.session_append(a1, 0, [({"type": "client_seed"}, tail(1))], quota=today)  # not a roll
    store.session_append(a1, 1, roll_rows(2, 1), quota=today)
    store.session_append(b1, 0, roll_rows(3, 0), quota=RollQuota("b", "2026-12-02", 3))  # b's own count
    with pytest.raises(RollsExhaustedError) as refused:
        store.session_append(a2, 0, roll_rows(2, 0), quota=today)  # 2 + 2 > 3: neither is stored
    assert (refused.value.rolled, refused.value.most) == (2, 3)
    assert store.session_state(a2).event_count == 0
    store.session_append(a2, 0, roll_rows(1, 0), quota=today)  # the refused append counted nothing
    with pytest.raises(RollsExhaustedError):
        store.session_append(a2, 1, roll_rows(1, 1), quota=today)
    store.session_append(a2, 1, roll_rows(1, 1), quota=RollQuota("a", "2026-12-03", 3))  # another day
    store.session_append(a2, 2, roll_rows(1, 2))  # no quota: not counted, not refused
    store.set_client_session_quota("a", 5, "rolls")  # the client's own quota, in place of the server's
    store.session_append(a2, 3, roll_rows(2, 3), quota=today)
    with pytest.raises(RollsExhaustedError) as refused:
        store.session_append(a2, 5, roll_rows(1, 5), quota=today)
    assert (refused.value.rolled, refused.value.most) == (5, 5)
    store.set_client_session_quota("a", 0, "rolls")  # none for this client
    store.session_append(a2, 5, roll_rows(10, 5), quota=today)
    assert store.session_state(a2).event_count == 15


def test_a_database_made_before_session_quotas_gets_their_table_and_index(backend):
    first = backend.open()
    opened_by(first, "a", 2)
    first.close()
    backend.execute(f"DROP TABLE {CLIENT_SESSION_QUOTAS_TABLE}")  # as the sessions' tables were made before it
    backend.execute("DROP TABLE session_rolls_by_day")
    backend.execute("DROP INDEX sessions_by_client")
    again = backend.open()
    assert again.client_sessions("a", "2000-01-01T00:00:00Z").opened == 2
    again.set_client_session_quota("a", 2)
    assert again.client_session_quotas() == {"a": 2}
    with pytest.raises(RollsExhaustedError):
        again.session_append("s-a-0", 0, roll_rows(2, 0), quota=RollQuota("a", "2026-12-02", 1))
    if backend.name == "sqlite":
        assert backend.execute("SELECT 1 FROM sqlite_master WHERE name = 'sessions_by_client'")
    else:
        assert backend.execute("SELECT to_regclass('sessions_by_client')")[0][0] is not None
