"""The embedded default store: one SQLite file.

- WAL mode, so readers never wait for the writer;
- games (one row each) and events (append-only: triggers refuse UPDATE and
  DELETE), plus idempotency records keyed by game, seat and key;
- every command is written by one transaction, `BEGIN IMMEDIATE` (SQLite's
  database write lock, held across processes), which re-reads the game's
  event count and appends only if it is still the count the command was
  computed from.  Events are append-only, so an equal count means the very
  same history: two requests racing on one game, in one process or in several
  gunicorn workers, can never both append after the same event, and a roll is
  never consumed twice.  The loser gets `Conflict` and recomputes on the new
  history.  A file lock in front of `BEGIN IMMEDIATE` makes waiting writers
  queue in the kernel instead of polling SQLite's busy handler (which sleeps
  up to 100 ms between tries).
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .base import (SCHEMA_VERSION, Busy, Conflict, DuplicateGame, GameNotFound, GameRecord, Remembered, Snapshot,
                   Store, StoreError, dumps as _dumps, newer_schema, now as _now, seat_key as _seat_key)

AUTOCHECKPOINT_FALLBACK = 20000  # pages (about 80 MB of WAL) before a commit checkpoints by itself
_CHECKPOINTER_LOCK = threading.Lock()

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game_id       TEXT PRIMARY KEY,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    opened        TEXT NOT NULL,      -- the creation document: header + commitment_signature
    key_id        TEXT NOT NULL,
    tokens        TEXT NOT NULL,      -- JSON [{"seat": int|null, "sha256": hex}]
    seed_sealed   BLOB,               -- AES-GCM sealed server seed while the game runs
    seed_revealed TEXT,               -- hex server seed once the game is over
    status        TEXT NOT NULL,
    event_count   INTEGER NOT NULL DEFAULT 0,
    final_log     TEXT,               -- the signed transcript once the game is over
    CHECK ((seed_sealed IS NULL) <> (seed_revealed IS NULL))
);
CREATE TABLE IF NOT EXISTS events (
    game_id TEXT NOT NULL REFERENCES games(game_id),
    idx     INTEGER NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (game_id, idx)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TABLE IF NOT EXISTS idempotency (
    game_id     TEXT NOT NULL REFERENCES games(game_id),
    seat        INTEGER NOT NULL,     -- -1 for the operator of a game without human seats
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status      INTEGER NOT NULL,
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (game_id, seat, key)
) WITHOUT ROWID;
"""

_GAME_COLUMNS = ("game_id, created_at, opened, key_id, tokens, seed_sealed, seed_revealed, status, event_count, "
                 "updated_at")


class SQLiteStore(Store):
    def __init__(self, path: str | os.PathLike, synchronous: str = "NORMAL", busy_timeout: float = 30.0,
                 checkpoint_every: float = 1.0):
        """`checkpoint_every` seconds: a background thread per process copies the WAL into the database
        (a PASSIVE checkpoint, which blocks no reader or writer), so that no command pays for a checkpoint
        while it holds the write lock.  0: SQLite's own automatic checkpoints, inside commits."""
        self.checkpoint_every = checkpoint_every
        self._checkpointer: tuple[int, threading.Thread] | None = None
        self.path = Path(path)
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.synchronous = synchronous.upper()
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.path.exists():  # tokens' hashes and sealed seeds: readable by the owner only
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        # One process at a time sets the database up: switching a fresh file to WAL takes an exclusive lock that
        # SQLite does not wait for (several workers starting on a new data directory got "database is locked").
        lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        conn = None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            conn = self._connect()
            conn.execute("PRAGMA journal_mode = WAL")
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found > SCHEMA_VERSION:
                raise newer_schema(found)
            conn.executescript(SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            if conn is not None:
                conn.close()
            os.close(lock_fd)  # (closing the descriptor releases the lock)

    # --- connections: one per thread, never carried across a fork ----------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=self.busy_timeout,
                               check_same_thread=False)
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        if self.checkpoint_every > 0:  # the checkpointer's job; a large bound in case it ever falls behind
            conn.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_FALLBACK}")
        return conn

    def _start_checkpointer(self) -> None:
        """One daemon thread per process (started on its first write, again after a fork)."""
        if self.checkpoint_every <= 0 or (self._checkpointer and self._checkpointer[0] == os.getpid()):
            return
        with _CHECKPOINTER_LOCK:
            if self._checkpointer and self._checkpointer[0] == os.getpid():
                return
            thread = threading.Thread(target=_checkpoint_loop, args=(weakref.ref(self), os.getpid()),
                                      name="fairdice-wal-checkpoint", daemon=True)
            self._checkpointer = (os.getpid(), thread)
            thread.start()

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            self._start_checkpointer()
            local.conn = self._connect()
            local.lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            local.pid = os.getpid()
        return local.conn

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        fd = self._local.lock_fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self._checkpointer = None  # the checkpoint thread ends after its current sleep
        local = self._local
        if getattr(local, "pid", None) == os.getpid():
            local.conn.close()
            os.close(local.lock_fd)
        local.pid = None

    # --- reading ------------------------------------------------------------------

    @staticmethod
    def _record(row) -> GameRecord:
        game_id, created_at, opened, key_id, tokens, sealed, revealed, status, count, updated_at = row
        return GameRecord(game_id=game_id, opened=json.loads(opened), key_id=key_id, tokens=json.loads(tokens),
                          seed_sealed=sealed, seed_revealed=revealed, status=status, event_count=count,
                          created_at=created_at, updated_at=updated_at)

    def snapshot(self, game_id: str) -> Snapshot | None:
        conn = self._conn()
        try:
            conn.execute("BEGIN")
            try:
                row = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE game_id = ?", (game_id,)).fetchone()
                if row is None:
                    return None
                rows = conn.execute("SELECT body FROM events WHERE game_id = ? ORDER BY idx", (game_id,)).fetchall()
            finally:
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise _translate(exc) from None
        record = self._record(row)
        if len(rows) != record.event_count:
            raise StoreError(f"game {game_id}: {len(rows)} events stored, {record.event_count} counted")
        return Snapshot(record, [json.loads(body) for (body,) in rows])

    def _one(self, sql: str, args: tuple):
        try:
            return self._conn().execute(sql, args).fetchone()
        except sqlite3.OperationalError as exc:
            raise _translate(exc) from None

    def final_log(self, game_id: str) -> str | None:
        row = self._one("SELECT final_log FROM games WHERE game_id = ?", (game_id,))
        return row[0] if row else None

    # --- writing ------------------------------------------------------------------

    def create_game(self, record: GameRecord) -> None:
        conn = self._conn()
        now = _now()
        try:
            with self._write_lock():
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute("INSERT INTO games (game_id, created_at, updated_at, opened, key_id, tokens, "
                                 "seed_sealed, seed_revealed, status, event_count) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                                 (record.game_id, now, now, _dumps(record.opened), record.key_id,
                                  _dumps(record.tokens), record.seed_sealed, record.seed_revealed, record.status))
                except sqlite3.IntegrityError as exc:
                    conn.execute("ROLLBACK")
                    if "UNIQUE" in str(exc):
                        raise DuplicateGame(record.game_id) from None
                    raise StoreError(f"game {record.game_id} refused: {exc}") from None
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise _translate(exc) from None
        record.created_at = record.updated_at = now

    def event_count(self, game_id: str) -> int | None:
        row = self._one("SELECT event_count FROM games WHERE game_id = ?", (game_id,))
        return row[0] if row else None

    def recall(self, game_id: str, seat: int | None, key: str) -> Remembered | None:
        row = self._one("SELECT fingerprint, status, body FROM idempotency WHERE game_id = ? AND seat = ? AND key = ?",
                        (game_id, _seat_key(seat), key))
        return Remembered(*row) if row else None

    def append(self, game_id, expected_count, events, status, reveal=None, remember=None):
        conn = self._conn()
        with self._write_lock():
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise _translate(exc) from None
            try:
                if remember is not None:
                    row = conn.execute("SELECT fingerprint, status, body FROM idempotency "
                                       "WHERE game_id = ? AND seat = ? AND key = ?",
                                       (game_id, _seat_key(remember.seat), remember.key)).fetchone()
                    if row is not None:
                        conn.execute("ROLLBACK")
                        return Remembered(*row)
                row = conn.execute("SELECT event_count FROM games WHERE game_id = ?", (game_id,)).fetchone()
                if row is None:
                    raise GameNotFound(game_id)
                if row[0] != expected_count:
                    raise Conflict(f"game {game_id} has {row[0]} events, not {expected_count}")
                now = _now()
                conn.executemany("INSERT INTO events (game_id, idx, body) VALUES (?, ?, ?)",
                                 [(game_id, expected_count + i, _dumps(e)) for i, e in enumerate(events)])
                if reveal is None:
                    conn.execute("UPDATE games SET event_count = ?, status = ?, updated_at = ? WHERE game_id = ?",
                                 (expected_count + len(events), status, now, game_id))
                else:
                    conn.execute("UPDATE games SET event_count = ?, status = ?, updated_at = ?, seed_sealed = NULL, "
                                 "seed_revealed = ?, final_log = ? WHERE game_id = ?",
                                 (expected_count + len(events), status, now, reveal[0], reveal[1], game_id))
                if remember is not None:
                    conn.execute("INSERT INTO idempotency (game_id, seat, key, fingerprint, status, body, created_at) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 (game_id, _seat_key(remember.seat), remember.key, remember.fingerprint,
                                  remember.status, remember.body, now))
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise _translate(exc) from None
                raise
        return None


def _checkpoint_loop(store_ref, pid: int) -> None:
    """PASSIVE checkpoints every `checkpoint_every` seconds while the store lives (and is not closed)."""
    store = store_ref()
    if store is None:
        return
    every, conn = store.checkpoint_every, sqlite3.connect(store.path, isolation_level=None,
                                                           timeout=store.busy_timeout, check_same_thread=False)
    del store
    try:
        while True:
            time.sleep(every)
            store = store_ref()
            if store is None or not store._checkpointer or store._checkpointer[0] != pid:
                return
            del store
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.Error:
                pass  # busy or closing: the next round (or SQLite's fallback) catches up
    finally:
        conn.close()


def _translate(exc: sqlite3.OperationalError) -> Exception:
    if "locked" in str(exc) or "busy" in str(exc):
        return Busy(str(exc))
    return exc
