"""The session tables of the SQLite store (api/stores/sessions_base.py says what they promise).

A mixin of `SQLiteStore`: it writes through the store's durable, grouped commits (`_commit`) and reads through
its pool (`_read`), so sessions share the games' durability and fault handling."""

from __future__ import annotations

import json
import sqlite3

from .base import Conflict, Remembered, dumps, now
from .sessions_base import SessionNotFound, SessionRecord, SessionState

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
]
_SELECT = "SELECT session_id, created_at, opened, key_id, token_sha256, client FROM sessions WHERE session_id = ?"
_LAST = "SELECT tail FROM session_events WHERE session_id = ? ORDER BY idx DESC LIMIT 1"
_SEEDS = "SELECT pair, sealed FROM session_seeds WHERE session_id = ? AND pair >= ?"
_RECALL = "SELECT fingerprint, status, body FROM session_idempotency WHERE session_id = ? AND key = ?"


def create_session_tables(conn: sqlite3.Connection) -> None:
    """Make the tables if they are missing (at set-up, under the store's set-up lock)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'session_events'").fetchone():
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

    def session_append(self, session_id: str, expected: int, rows: list[tuple[dict, dict]],
                       seed: tuple[int, bytes] | None = None, remember=None) -> Remembered | None:
        """Append the events (each with the tail after it) at index `expected`, the new pair's sealed seed and
        the answer to keep, in one transaction; Conflict if the session has other events there."""
        stamp = now()
        texts = [(expected + i, dumps(body), dumps(tail)) for i, (body, tail) in enumerate(rows)]
        keep = None if remember is None else (session_id, remember.key, remember.fingerprint, remember.status,
                                              remember.body, stamp)
        return self._commit(_append_session, session_id, expected, texts, seed, keep)

    def session_events(self, session_id: str, upto: int) -> list[str]:
        """The JSON text of the first `upto` events, in order."""
        return [body for (body,) in self._read(
            "SELECT body FROM session_events WHERE session_id = ? AND idx < ? ORDER BY idx", (session_id, upto))]


def _insert_session(conn: sqlite3.Connection, row: tuple, seeds: list) -> None:
    conn.execute("INSERT INTO sessions (session_id, created_at, opened, key_id, token_sha256, client) "
                 "VALUES (?, ?, ?, ?, ?, ?)", row)
    conn.executemany("INSERT INTO session_seeds (session_id, pair, sealed) VALUES (?, ?, ?)",
                     [(row[0], pair, sealed) for pair, sealed in seeds])


def _append_session(conn: sqlite3.Connection, session_id, expected, texts, seed, keep) -> Remembered | None:
    if keep is not None:
        found = conn.execute(_RECALL, keep[:2]).fetchone()
        if found is not None:
            return Remembered(*found)
    last = conn.execute("SELECT max(idx) FROM session_events WHERE session_id = ?", (session_id,)).fetchone()[0]
    count = 0 if last is None else last + 1
    if count != expected:
        raise Conflict(f"session {session_id} has {count} events, not {expected}")
    if not conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone():
        raise SessionNotFound(session_id)
    conn.executemany("INSERT INTO session_events (session_id, idx, body, tail) VALUES (?, ?, ?, ?)",
                     [(session_id, *t) for t in texts])
    if seed is not None:
        conn.execute("INSERT INTO session_seeds (session_id, pair, sealed) VALUES (?, ?, ?)", (session_id, *seed))
    if keep is not None:
        conn.execute("INSERT INTO session_idempotency (session_id, key, fingerprint, status, body, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", keep)
    return None
