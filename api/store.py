"""Storage: the only module that knows SQL.

The interface is small on purpose (`Store`, `CommandTx`), so that another
database (PostgreSQL, with `SELECT ... FOR UPDATE` on the game row) can serve
the same API from many stateless processes.  `SQLiteStore` is the embedded
default:

- WAL mode, so readers never wait for the writer;
- games (one row each) and events (append-only: triggers refuse UPDATE and
  DELETE), plus idempotency records keyed by game, seat and key;
- every command is one transaction opened with `BEGIN IMMEDIATE`, which takes
  SQLite's database write lock before anything is read.  The events are read
  again inside that transaction, so two requests on one game, in one process
  or in several gunicorn workers, are applied one after the other and a roll
  is never consumed twice.  A process-wide file lock in front of
  `BEGIN IMMEDIATE` makes waiting writers queue in the kernel instead of
  polling SQLite's busy handler (which sleeps up to 100 ms between tries).

The store holds what it is given: server seeds arrive sealed (encrypted by
the caller) and leave sealed; tokens arrive as hashes.
"""

from __future__ import annotations

import abc
import fcntl
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA_VERSION = 1

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

_GAME_COLUMNS = ("game_id, created_at, opened, key_id, tokens, seed_sealed, seed_revealed, status, event_count")


class StoreError(RuntimeError):
    pass


class GameNotFound(StoreError):
    pass


class DuplicateGame(StoreError):
    pass


class Busy(StoreError):
    """The database stayed locked for longer than the busy timeout."""


@dataclass
class GameRecord:
    game_id: str
    opened: dict
    key_id: str
    tokens: list[dict]
    seed_sealed: bytes | None
    seed_revealed: str | None
    status: str
    event_count: int = 0
    created_at: str = ""


@dataclass
class Snapshot:
    record: GameRecord
    events: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Remembered:
    fingerprint: str
    status: int
    body: str


class CommandTx(abc.ABC):
    """One command on one game, inside one transaction that holds the game's write lock."""
    record: GameRecord

    @abc.abstractmethod
    def events(self) -> list[dict]: ...

    @abc.abstractmethod
    def recall(self, seat: int | None, key: str) -> Remembered | None: ...

    @abc.abstractmethod
    def remember(self, seat: int | None, key: str, fingerprint: str, status: int, body: str) -> None: ...

    @abc.abstractmethod
    def append(self, events: list[dict], status: str) -> None:
        """Add events after the ones read, and set the game's status."""

    @abc.abstractmethod
    def reveal(self, seed_hex: str, final_log: str) -> None:
        """The game is over: drop the sealed seed, store it revealed with the signed transcript."""


class Store(abc.ABC):
    @abc.abstractmethod
    def create_game(self, record: GameRecord) -> None: ...

    @abc.abstractmethod
    def snapshot(self, game_id: str) -> Snapshot | None:
        """The game and all its events, read consistently; None if there is no such game."""

    @abc.abstractmethod
    def final_log(self, game_id: str) -> str | None: ...

    @abc.abstractmethod
    def command(self, game_id: str):
        """Context manager yielding a CommandTx; commits on normal exit, rolls back on an exception."""

    def close(self) -> None:
        pass


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _dumps(doc) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def _seat_key(seat: int | None) -> int:
    return -1 if seat is None else seat


class _SQLiteTx(CommandTx):
    def __init__(self, conn: sqlite3.Connection, record: GameRecord):
        self._conn = conn
        self.record = record
        self._events: list[dict] | None = None
        self._appended = False

    def events(self) -> list[dict]:
        if self._events is None:
            rows = self._conn.execute("SELECT body FROM events WHERE game_id = ? ORDER BY idx",
                                      (self.record.game_id,)).fetchall()
            self._events = [json.loads(body) for (body,) in rows]
            if len(self._events) != self.record.event_count:
                raise StoreError(f"game {self.record.game_id}: {len(self._events)} events stored, "
                                 f"{self.record.event_count} counted")
        return self._events

    def recall(self, seat, key):
        row = self._conn.execute("SELECT fingerprint, status, body FROM idempotency "
                                 "WHERE game_id = ? AND seat = ? AND key = ?",
                                 (self.record.game_id, _seat_key(seat), key)).fetchone()
        return Remembered(*row) if row else None

    def remember(self, seat, key, fingerprint, status, body):
        self._conn.execute("INSERT INTO idempotency (game_id, seat, key, fingerprint, status, body, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (self.record.game_id, _seat_key(seat), key, fingerprint, status, body, _now()))

    def append(self, events, status):
        if self._appended:
            raise StoreError("append once per command")
        self._appended = True
        start = self.record.event_count
        self._conn.executemany("INSERT INTO events (game_id, idx, body) VALUES (?, ?, ?)",
                               [(self.record.game_id, start + i, _dumps(e)) for i, e in enumerate(events)])
        cur = self._conn.execute("UPDATE games SET event_count = ?, status = ?, updated_at = ? "
                                 "WHERE game_id = ? AND event_count = ?",
                                 (start + len(events), status, _now(), self.record.game_id, start))
        if cur.rowcount != 1:
            raise StoreError(f"game {self.record.game_id} changed under a command")
        self.record.event_count = start + len(events)
        self.record.status = status

    def reveal(self, seed_hex, final_log):
        self._conn.execute("UPDATE games SET seed_sealed = NULL, seed_revealed = ?, final_log = ? "
                           "WHERE game_id = ?", (seed_hex, final_log, self.record.game_id))
        self.record.seed_sealed, self.record.seed_revealed = None, seed_hex


class SQLiteStore(Store):
    def __init__(self, path: str | os.PathLike, synchronous: str = "NORMAL", busy_timeout: float = 30.0):
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
        conn = self._connect()
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            conn.close()

    # --- connections: one per thread, never carried across a fork ----------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=self.busy_timeout,
                               check_same_thread=False)
        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _conn(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
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
        local = self._local
        if getattr(local, "pid", None) == os.getpid():
            local.conn.close()
            os.close(local.lock_fd)
        local.pid = None

    # --- reading ------------------------------------------------------------------

    @staticmethod
    def _record(row) -> GameRecord:
        game_id, created_at, opened, key_id, tokens, sealed, revealed, status, count = row
        return GameRecord(game_id=game_id, opened=json.loads(opened), key_id=key_id, tokens=json.loads(tokens),
                          seed_sealed=sealed, seed_revealed=revealed, status=status, event_count=count,
                          created_at=created_at)

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
        return Snapshot(self._record(row), [json.loads(body) for (body,) in rows])

    def final_log(self, game_id: str) -> str | None:
        row = self._conn().execute("SELECT final_log FROM games WHERE game_id = ?", (game_id,)).fetchone()
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
                except sqlite3.IntegrityError:
                    conn.execute("ROLLBACK")
                    raise DuplicateGame(record.game_id) from None
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            raise _translate(exc) from None
        record.created_at = now

    @contextmanager
    def command(self, game_id: str) -> Iterator[CommandTx]:
        conn = self._conn()
        with self._write_lock():
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise _translate(exc) from None
            try:
                row = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE game_id = ?", (game_id,)).fetchone()
                if row is None:
                    raise GameNotFound(game_id)
                yield _SQLiteTx(conn, self._record(row))
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise _translate(exc) from None
                raise


def _translate(exc: sqlite3.OperationalError) -> Exception:
    if "locked" in str(exc) or "busy" in str(exc):
        return Busy(str(exc))
    return exc
