"""The session tables of the SQLite store (api/stores/sessions_base.py says what they promise).

A mixin of `SQLiteStore`: it writes through the store's durable, grouped commits (`_commit`) and reads through
its pool (`_read`), so sessions share the games' durability and fault handling."""

from __future__ import annotations

import json
import sqlite3

from .base import ConflictError, Remembered, dumps, now
from .sessions_base import (CLIENT_SESSION_QUOTAS_TABLE, SESSION_QUOTA_TABLES, ClientSessions, RollQuota,
                            RollsExhaustedError, SessionNotFoundError, SessionRecord, SessionState, check_session_quota,
                            rolls_in)

SESSION_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id   TEXT PRIMARY KEY,
        created_at   TEXT NOT NULL,
        opened       TEXT NOT NULL,      -- header + commitment_signature (SPEC §10.2)
        key_id       TEXT NOT NULL,
        token_sha256 TEXT NOT NULL,
        client       TEXT NOT NULL DEFAULT ''
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS session_seeds (
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        pair       INTEGER NOT NULL,
        sealed     BLOB NOT NULL,        -- AES-GCM, "<session id>#<pair>" the associated data
        PRIMARY KEY (session_id, pair)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS session_events (
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        idx        INTEGER NOT NULL,
        body       TEXT NOT NULL,
        tail       TEXT NOT NULL,        -- the session's tail after this event
        PRIMARY KEY (session_id, idx)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS session_idempotency (
        session_id  TEXT NOT NULL REFERENCES sessions(session_id),
        key         TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        status      INTEGER NOT NULL,
        body        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID""",
    *(f"""CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"""
      for table in ("sessions", "session_seeds", "session_events") for verb in ("UPDATE", "DELETE")),
    *SESSION_QUOTA_TABLES,  # (added after the tables: a database made before them gets them too)
]
_SELECT = "SELECT session_id, created_at, opened, key_id, token_sha256, client FROM sessions WHERE session_id = ?"
_LAST = "SELECT tail FROM session_events WHERE session_id = ? ORDER BY idx DESC LIMIT 1"
_SEEDS = "SELECT pair, sealed FROM session_seeds WHERE session_id = ? AND pair >= ?"
_RECALL = "SELECT fingerprint, status, body FROM session_idempotency WHERE session_id = ? AND key = ?"
_OWN_QUOTA = f"SELECT most FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE client = ? AND quota = ?"
_CLIENT_SESSIONS = (f"SELECT count(*), min(created_at), (SELECT most FROM {CLIENT_SESSION_QUOTAS_TABLE} "
                    "WHERE client = ?1 AND quota = 'sessions') FROM sessions WHERE client = ?1 AND created_at > ?2")
_COUNT_ROLLS = ("INSERT INTO session_rolls_by_day (client, day, rolls) VALUES (?1, ?2, ?3) "
                "ON CONFLICT (client, day) DO UPDATE SET rolls = rolls + ?3 RETURNING rolls")


def create_session_tables(conn: sqlite3.Connection) -> None:
    """Make the tables (and the quotas' index and table) if they are missing (at set-up, under the store's set-up
    lock); every statement is IF NOT EXISTS, so a database that has the older ones gets the newer."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'session_rolls_by_day'").fetchone():
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in SESSION_SCHEMA:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


class SQLiteSessions:
    """The session methods of `SQLiteStore` (a mixin), kept apart so the games' store stays readable.  It writes
    through the store's durable grouped commits (`_commit`) and reads through its pool (`_read`), so sessions
    get the games' durability and fault handling without a second copy of them."""
    def create_session(self, record: SessionRecord, seeds: dict[int, bytes]) -> None:
        record.created_at = now()
        row = (record.session_id, record.created_at, dumps(record.opened), record.key_id, record.token_sha256,
               record.client)
        self._commit(_insert_session, row, sorted(seeds.items()))

    def session_state(self, session_id: str) -> SessionState | None:
        rows = self._read(_SELECT, (session_id,))
        if not rows:
            return None
        sid, created_at, opened, key_id, token, client = rows[0]
        record = SessionRecord(sid, json.loads(opened), key_id, token, client, created_at)
        last = self._read(_LAST, (session_id,))
        tail = json.loads(last[0][0]) if last else None
        seeds = dict(self._read(_SEEDS, (session_id, tail["pair"] if tail else 0)))
        return SessionState(record, tail, seeds)

    def session_recall(self, session_id: str, key: str) -> Remembered | None:
        rows = self._read(_RECALL, (session_id, key))
        return Remembered(*rows[0]) if rows else None

    def client_sessions(self, client: str, since: str) -> ClientSessions:
        """How many sessions `client` opened after `since` (a `now()` stamp), the first of them, and its quota."""
        (count, oldest, quota), = self._read(_CLIENT_SESSIONS, (client, since))
        return ClientSessions(count, oldest, quota)

    def set_client_session_quota(self, client: str, most: int | None, quota: str = "sessions") -> None:
        """The most sessions `client` may open a day, or (`quota` "rolls") the most rolls its sessions may make a
        UTC day (0: no quota), for every server on this store; None goes back to the server's setting
        (FAIRDICE_MAX_SESSIONS, FAIRDICE_MAX_SESSION_ROLLS)."""
        if check_session_quota(quota, most) is None:
            self._write(lambda conn: conn.execute(
                f"DELETE FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE client = ? AND quota = ?", (client, quota)))
        else:
            self._write(lambda conn: conn.execute(
                f"INSERT INTO {CLIENT_SESSION_QUOTAS_TABLE} (client, quota, most) VALUES (?1, ?2, ?3) "
                "ON CONFLICT (client, quota) DO UPDATE SET most = ?3", (client, quota, most)))

    def client_session_quotas(self, quota: str = "sessions") -> dict[str, int]:
        """Every quota of this kind an operator set, by client."""
        check_session_quota(quota, None)
        return dict(self._read(f"SELECT client, most FROM {CLIENT_SESSION_QUOTAS_TABLE} WHERE quota = ? "
                               "ORDER BY client", (quota,)))

    def session_append(self, session_id: str, expected: int, rows: list[tuple[dict, dict]],
                       seed: tuple[int, bytes] | None = None, remember=None,
                       quota: RollQuota | None = None) -> Remembered | None:
        """Append the events (each with the tail after it) at index `expected`, the new pair's sealed seed and
        the answer to keep, in one transaction; ConflictError if the session has other events there; RollsExhaustedError
        (and nothing stored) if its rolls take the client past its `quota` of the day."""
        stamp = now()
        texts = [(expected + i, dumps(body), dumps(tail)) for i, (body, tail) in enumerate(rows)]
        keep = None if remember is None else (session_id, remember.key, remember.fingerprint, remember.status,
                                              remember.body, stamp)
        counted = None if quota is None or not rolls_in(rows) else (quota, rolls_in(rows))
        return self._commit(_append_session, session_id, expected, texts, seed, keep, counted)

    def session_events(self, session_id: str, upto: int) -> list[str]:
        """The JSON text of the first `upto` events, in order."""
        return [body for (body,) in self._read(
            "SELECT body FROM session_events WHERE session_id = ? AND idx < ? ORDER BY idx", (session_id, upto))]


def _insert_session(conn: sqlite3.Connection, row: tuple, seeds: list) -> None:
    conn.execute("INSERT INTO sessions (session_id, created_at, opened, key_id, token_sha256, client) "
                 "VALUES (?, ?, ?, ?, ?, ?)", row)
    conn.executemany("INSERT INTO session_seeds (session_id, pair, sealed) VALUES (?, ?, ?)",
                     [(row[0], pair, sealed) for pair, sealed in seeds])


def _append_session(conn: sqlite3.Connection, session_id, expected, texts, seed, keep, counted) -> Remembered | None:
    if keep is not None:
        found = conn.execute(_RECALL, keep[:2]).fetchone()
        if found is not None:
            return Remembered(*found)
    last = conn.execute("SELECT max(idx) FROM session_events WHERE session_id = ?", (session_id,)).fetchone()[0]
    count = 0 if last is None else last + 1
    if count != expected:
        raise ConflictError(f"session {session_id} has {count} events, not {expected}")
    if not conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone():
        raise SessionNotFoundError(session_id)
    if counted is not None:
        _count_rolls(conn, *counted)
    conn.executemany("INSERT INTO session_events (session_id, idx, body, tail) VALUES (?, ?, ?, ?)",
                     [(session_id, *t) for t in texts])
    if seed is not None:
        conn.execute("INSERT INTO session_seeds (session_id, pair, sealed) VALUES (?, ?, ?)", (session_id, *seed))
    if keep is not None:
        conn.execute("INSERT INTO session_idempotency (session_id, key, fingerprint, status, body, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", keep)
    return None


def _count_rolls(conn: sqlite3.Connection, quota: RollQuota, rolls: int) -> None:
    """Add the rolls to the client's count of the day; RollsExhaustedError (rolled back with the append's savepoint)
    past its quota: the client's own if an operator set one, else the server's."""
    (rolled,) = conn.execute(_COUNT_ROLLS, (quota.client, quota.day, rolls)).fetchone()
    own = conn.execute(_OWN_QUOTA, (quota.client, "rolls")).fetchone()
    most = quota.most if own is None else own[0]
    if most and rolled > most:
        raise RollsExhaustedError(rolled - rolls, most)
