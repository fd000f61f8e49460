"""The session tables of the PostgreSQL store (api/stores/sessions_base.py says what they promise).

A mixin of `PostgresStore`, through its pool (`_connection`, `_rows`).  An append locks the session's row
(`FOR UPDATE`) so that appends to one session run one at a time on every server, then adds its events at the
index it was computed from or raises ConflictError."""

from __future__ import annotations

import json

from .base import ConflictError, Remembered, StoreError, dumps, now
from .sessions_base import (CLIENT_SESSION_QUOTAS_TABLE, SESSION_QUOTA_TABLES, ClientSessions, RollQuota,
                            RollsExhaustedError, SessionNotFoundError, SessionRecord, SessionState, check_session_quota,
                            rolls_in)

SESSION_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id   text PRIMARY KEY,
    created_at   text NOT NULL,
    opened       text NOT NULL,
    key_id       text NOT NULL,
    token_sha256 text NOT NULL,
    client       text NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS session_seeds (
    session_id text NOT NULL REFERENCES sessions(session_id),
    pair       integer NOT NULL,
    sealed     bytea NOT NULL,
    PRIMARY KEY (session_id, pair)
);
CREATE TABLE IF NOT EXISTS session_events (
    session_id text NOT NULL REFERENCES sessions(session_id),
    idx        integer NOT NULL,
    body       text NOT NULL,
    tail       text NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS session_idempotency (
    session_id  text NOT NULL REFERENCES sessions(session_id),
    key         text NOT NULL,
    fingerprint text NOT NULL,
    status      integer NOT NULL,
    body        text NOT NULL,
    created_at  text NOT NULL,
    PRIMARY KEY (session_id, key)
);
CREATE OR REPLACE FUNCTION fairdice_sessions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$;
CREATE TRIGGER sessions_no_update_or_delete BEFORE UPDATE OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION fairdice_sessions_append_only();
CREATE TRIGGER session_seeds_no_update_or_delete BEFORE UPDATE OR DELETE ON session_seeds
    FOR EACH ROW EXECUTE FUNCTION fairdice_sessions_append_only();
CREATE TRIGGER session_events_no_update_or_delete BEFORE UPDATE OR DELETE ON session_events
    FOR EACH ROW EXECUTE FUNCTION fairdice_sessions_append_only();
"""
_RECALL = "SELECT fingerprint, status, body FROM session_idempotency WHERE session_id = %s AND key = %s"


def create_session_tables(conn) -> None:
    """Make the tables if they are missing (at set-up, inside the store's schema transaction and lock), and the
    quotas' index and table where a database made before them lacks them."""
    if conn.execute("SELECT to_regclass('session_events')").fetchone()[0] is None:
        conn.execute(SESSION_SCHEMA)
    if conn.execute("SELECT to_regclass('session_rolls_by_day')").fetchone()[0] is None:
        for statement in SESSION_QUOTA_TABLES:
            conn.execute(statement)


def _storable(text: str) -> bool:
    return "\x00" not in text


class PostgresSessions:
    """The session methods of `PostgresStore` (a mixin: it uses the store's pool through `_connection` and
    `_rows`), kept apart so the games' store stays readable.  An append locks its session's row, so the appends
    to one session run one at a time on every server, and writes its events only at the index they were computed
    from."""
    def create_session(self, record: SessionRecord, seeds: dict[int, bytes]) -> None:
        record.created_at = now()
        with self._connection() as conn, conn.transaction():
            conn.execute("INSERT INTO sessions (session_id, created_at, opened, key_id, token_sha256, client) "
                         "VALUES (%s, %s, %s, %s, %s, %s)",
                         (record.session_id, record.created_at, dumps(record.opened), record.key_id,
                          record.token_sha256, record.client))
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO session_seeds (session_id, pair, sealed) VALUES (%s, %s, %s)",
                                [(record.session_id, pair, sealed) for pair, sealed in sorted(seeds.items())])

    def session_state(self, session_id: str) -> SessionState | None:
        if not _storable(session_id):
            return None
        with self._connection() as conn, conn.transaction():
            row = conn.execute("SELECT session_id, created_at, opened, key_id, token_sha256, client FROM sessions "
                               "WHERE session_id = %s", (session_id,)).fetchone()
            if row is None:
                return None
            last = conn.execute("SELECT tail FROM session_events WHERE session_id = %s ORDER BY idx DESC LIMIT 1",
                                (session_id,)).fetchone()
            tail = json.loads(last[0]) if last else None
            seeds = conn.execute("SELECT pair, sealed FROM session_seeds WHERE session_id = %s AND pair >= %s",
                                 (session_id, tail["pair"] if tail else 0)).fetchall()
        sid, created_at, opened, key_id, token, client = row
        return SessionState(SessionRecord(sid, json.loads(opened), key_id, token, client, created_at), tail,
                            {pair: bytes(sealed) for pair, sealed in seeds})

    def client_sessions(self, client: str, since: str) -> ClientSessions:
        if not _storable(client):
            return ClientSessions(0, None, None)
        (count, oldest, quota), = self._rows(
            f"SELECT count(*), min(created_at), (SELECT most FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE "
            "client = %(c)s AND quota = 'sessions') FROM sessions WHERE client = %(c)s AND created_at > %(t)s",
            {"c": client, "t": since})
        return ClientSessions(count, oldest, quota)

    def set_client_session_quota(self, client: str, most: int | None, quota: str = "sessions") -> None:
        if check_session_quota(quota, most) is not None and not _storable(client):
            raise StoreError("a client cannot hold NUL")
        with self._connection() as conn:
            if most is None:
                conn.execute(f"DELETE FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE client = %s AND quota = %s",
                             (client, quota))
            else:
                conn.execute(f"INSERT INTO {CLIENT_SESSION_QUOTAS_TABLE} (client, quota, most) VALUES (%(c)s, "
                             "%(q)s, %(n)s) ON CONFLICT (client, quota) DO UPDATE SET most = %(n)s",
                             {"c": client, "q": quota, "n": most})

    def client_session_quotas(self, quota: str = "sessions") -> dict[str, int]:
        check_session_quota(quota, None)
        return dict(self._rows(f"SELECT client, most FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE quota = %s "
                               "ORDER BY client", (quota,)))

    def session_recall(self, session_id: str, key: str) -> Remembered | None:
        if not (_storable(session_id) and _storable(key)):
            return None
        rows = self._rows(_RECALL, (session_id, key))
        return Remembered(*rows[0]) if rows else None

    def session_append(self, session_id: str, expected: int, rows: list[tuple[dict, dict]],
                       seed: tuple[int, bytes] | None = None, remember=None,
                       quota: RollQuota | None = None) -> Remembered | None:
        stamp = now()
        with self._connection() as conn, conn.transaction():
            if conn.execute("SELECT 1 FROM sessions WHERE session_id = %s FOR UPDATE", (session_id,)).fetchone() \
                    is None:
                raise SessionNotFoundError(session_id)
            if remember is not None:
                found = conn.execute(_RECALL, (session_id, remember.key)).fetchone()
                if found is not None:
                    return Remembered(*found)
            last = conn.execute("SELECT max(idx) FROM session_events WHERE session_id = %s",
                                (session_id,)).fetchone()[0]
            count = 0 if last is None else last + 1
            if count != expected:
                raise ConflictError(f"session {session_id} has {count} events, not {expected}")
            if quota is not None and rolls_in(rows):
                _count_rolls(conn, quota, rolls_in(rows))
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO session_events (session_id, idx, body, tail) VALUES (%s, %s, %s, %s)",
                                [(session_id, expected + i, dumps(body), dumps(tail))
                                 for i, (body, tail) in enumerate(rows)])
            if seed is not None:
                conn.execute("INSERT INTO session_seeds (session_id, pair, sealed) VALUES (%s, %s, %s)",
                             (session_id, *seed))
            if remember is not None:
                conn.execute("INSERT INTO session_idempotency (session_id, key, fingerprint, status, body, "
                             "created_at) VALUES (%s, %s, %s, %s, %s, %s)",
                             (session_id, remember.key, remember.fingerprint, remember.status, remember.body,
                              stamp))
        return None

    def session_events(self, session_id: str, upto: int) -> list[str]:
        if not _storable(session_id):
            return []
        return [body for (body,) in self._rows(
            "SELECT body FROM session_events WHERE session_id = %s AND idx < %s ORDER BY idx", (session_id, upto))]


def _count_rolls(conn, quota: RollQuota, rolls: int) -> None:
    """Add the rolls to the client's count of the day (its row locked until the append commits or rolls back);
    RollsExhaustedError, which rolls the append back, past its quota: the client's own if set, else the server's."""
    if not _storable(quota.client):
        return
    (rolled,) = conn.execute("INSERT INTO session_rolls_by_day (client, day, rolls) VALUES (%(c)s, %(d)s, %(n)s) "
                             "ON CONFLICT (client, day) DO UPDATE SET rolls = session_rolls_by_day.rolls + %(n)s "
                             "RETURNING rolls", {"c": quota.client, "d": quota.day, "n": rolls}).fetchone()
    own = conn.execute(f"SELECT most FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE client = %s AND quota = 'rolls'",
                       (quota.client,)).fetchone()
    most = quota.most if own is None else own[0]
    if most and rolled > most:
        raise RollsExhaustedError(rolled - rolls, most)
