"""The embedded default store: one SQLite file.

- WAL mode, so readers never wait for the writer;
- games (one row each) and events (append-only: triggers refuse UPDATE and
  DELETE), idempotency records keyed by game, seat and key, and rate-limit
  rows (one theoretical arrival time per key);
- every command is written by one transaction, `BEGIN IMMEDIATE` (SQLite's
  database write lock, held across processes), which appends only if the
  game still has the event count the command was computed from (the UPDATE
  of its row says so).  Events are append-only, so an equal count means the
  very same history: two requests racing on one game, in one process or in
  several gunicorn workers, can never both append after the same event, and a
  roll is never consumed twice.  The loser gets `Conflict` and recomputes on
  the new history.  A file lock in front of `BEGIN IMMEDIATE` makes waiting
  writers queue in the kernel instead of polling SQLite's busy handler (which
  sleeps up to 100 ms between tries); everything that can be done before the
  lock (JSON, stamps) is.
- A snapshot needs no transaction: it reads the game's row, then its events
  below the count that row gave; events are append-only and committed with
  their count, so the two reads agree.
- Faults: the file the store opened is the only one it uses.  Before every
  call the path is compared (device, inode) with it: a vanished file is
  `database_missing`, another file at the path `database_replaced`, and
  connections open with `mode=rw`, so no empty database is ever made in its
  place.  Disk full and read-only errors are `Unavailable` too (after a
  read-only one the thread's connection is dropped: a connection SQLite opened
  read-only would stay so), and the next call simply tries again.
- The WAL stays bounded: a background thread per process checkpoints it every
  second (PASSIVE: blocking nobody), SQLite's own checkpoint takes over past
  AUTOCHECKPOINT_FALLBACK pages, the file is cut back to WAL_SIZE_LIMIT when
  it restarts, and `prune` truncates it (TRUNCATE checkpoint).
- Watchers (api/watch.py) learn that some process committed from `PRAGMA
  data_version`, looked at every FEED_POLL_EVERY seconds by one thread per
  process (`SQLiteAppendFeed`), then read the counts of the games they watch.
- Everything the store makes is the owner's alone: the database, its -wal,
  -shm and lock files 0600 (SQLite gives -wal and -shm the database's mode),
  the directories it makes 0700.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from urllib.parse import quote

from ..files import make_private_dirs
from .base import (FINAL_STATUSES, SCHEMA_VERSION, AppendFeed, Busy, Conflict, DuplicateGame, GameNotFound,
                   GameRecord, Progress, RateWait, Remembered, Snapshot, Store, StoreError, Unavailable, check_rate,
                   dumps as _dumps, loads_array, longest_wait, newer_schema, now as _now, seat_key as _seat_key)

AUTOCHECKPOINT_FALLBACK = 2000  # pages (8 MB) before a commit checkpoints by itself, if the thread falls behind
WAL_SIZE_LIMIT = 4 << 20  # bytes the -wal file is cut back to when it restarts (journal_size_limit)
PRUNE_BATCH = 500  # rows deleted per write transaction: pruning never holds the write lock for long
PRUNE_CHECKPOINT_TIMEOUT_MS = 2000  # how long prune's TRUNCATE checkpoint waits for readers to move on
READ_CHECK_EVERY = 0.1  # seconds: reads check the file's identity at most this often (writes every time)
MIN_FREE_BYTES = 256 << 10  # less free space than this on the database's file system: unhealthy (disk_full)
FEED_POLL_EVERY = 0.05  # seconds between two looks at the database's data_version while an append feed waits
_CHECKPOINTER_LOCK = threading.Lock()
_UNFINISHED = f"seed_revealed IS NULL AND status NOT IN {FINAL_STATUSES!r}"  # the index's WHERE, then exact

_forks = 0  # forks this process descends from: a connection or thread of an earlier count is the parent's


def _count_fork() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_count_fork)  # (os.getpid() per call was a system call per call)

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
    client        TEXT NOT NULL DEFAULT '',  -- who created it: the quota of unfinished games counts it
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

# Version 2: rate limits, and the indexes of timeouts, quotas, key checks and pruning.  Only running games
# (seed not yet revealed) are in the two games_running indexes, and neither names a column an ordinary append
# changes: an append touches them only when its game ends.  Stale games are found by their creation (a game
# last updated before a time was created before it), then checked by updated_at.
VERSION_2 = ["CREATE TABLE IF NOT EXISTS rate_limits (key TEXT PRIMARY KEY, tat REAL NOT NULL) WITHOUT ROWID",
             "CREATE INDEX IF NOT EXISTS games_running_by_client ON games (client) WHERE seed_revealed IS NULL",
             "CREATE INDEX IF NOT EXISTS games_running_by_creation ON games (created_at) WHERE seed_revealed IS NULL",
             "CREATE INDEX IF NOT EXISTS games_by_key ON games (key_id)",
             "CREATE INDEX IF NOT EXISTS idempotency_by_age ON idempotency (created_at)"]

# A version-n database becomes version n + 1 by MIGRATIONS[n], in the transaction that sets user_version.
MIGRATIONS = {1: ["ALTER TABLE games ADD COLUMN client TEXT NOT NULL DEFAULT ''", *VERSION_2]}

_GAME_COLUMNS = ("game_id, created_at, opened, key_id, tokens, seed_sealed, seed_revealed, status, event_count, "
                 "updated_at, client")
_SELECT_GAME = f"SELECT {_GAME_COLUMNS} FROM games WHERE game_id = ?"
_SELECT_EVENTS = "SELECT body FROM events WHERE game_id = ? AND idx < ? ORDER BY idx"
_RECALL = "SELECT fingerprint, status, body FROM idempotency WHERE game_id = ? AND seat = ? AND key = ?"
_PROGRESS = "SELECT game_id, event_count, status FROM games WHERE game_id IN (SELECT value FROM json_each(?))"
_KEEP = ("INSERT INTO idempotency (game_id, seat, key, fingerprint, status, body, created_at) "
         "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
_MOVE = ("UPDATE games SET event_count = ?, status = ?, updated_at = ? WHERE game_id = ? AND event_count = ?")
_MOVE_AND_REVEAL = ("UPDATE games SET event_count = ?, status = ?, updated_at = ?, seed_sealed = NULL, "
                    "seed_revealed = ?, final_log = ? WHERE game_id = ? AND event_count = ?")
EVENTS_PER_INSERT = 16  # events one INSERT adds (one statement for the 1-8 of a move, not one step per event)
# _ADD_EVENTS[n] adds n events: ?1 the game, ?2 the index of the first, ?3... their bodies
_ADD_EVENTS = tuple("INSERT INTO events (game_id, idx, body) VALUES " +
                    ", ".join(f"(?1, ?2 + {i}, ?{i + 3})" for i in range(n)) for n in range(EVENTS_PER_INSERT + 1))
# GCRA: a key's row holds its theoretical arrival time (tat); an event at `now` is allowed if the tat runs
# at most `tau` ahead of now, and then moves the tat one interval on.  Refused: the row is left as it was.
_RATE_HIT = ("INSERT INTO rate_limits (key, tat) VALUES (:key, :now + :interval) ON CONFLICT (key) DO UPDATE "
             "SET tat = max(tat, :now) + :interval WHERE max(tat, :now) - :now <= :tau RETURNING tat")

# SQLite's primary result codes that mean a fault of the machine rather than of the request
_FULL, _READONLY, _CANTOPEN, _IOERR, _PERM, _BUSY, _LOCKED = (sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY,
                                                              sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR,
                                                              sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY,
                                                              sqlite3.SQLITE_LOCKED)


class SQLiteStore(Store):
    def __init__(self, path: str | os.PathLike, synchronous: str = "NORMAL", busy_timeout: float = 30.0,
                 checkpoint_every: float = 1.0):
        """`checkpoint_every` seconds: a background thread per process copies the WAL into the database
        (a PASSIVE checkpoint, which blocks no reader or writer), so that no command pays for a checkpoint
        while it holds the write lock.  0: SQLite's own automatic checkpoints, inside commits."""
        self.checkpoint_every = checkpoint_every
        self._checkpointer: tuple[int, threading.Thread] | None = None
        self.path = Path(os.path.abspath(path))
        self._path_text = str(self.path)  # (os.stat of a str skips a Path's conversion, before every write)
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.synchronous = synchronous.upper()
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._uri = f"file:{quote(str(self.path))}?mode=rw"  # never creates: a vanished file stays missing
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._checked_at = 0.0  # (monotonic) when the path last named the file the store opened
        try:
            make_private_dirs(self.path.parent)
            _make_private_file(self.path)
            self._identity = _identity(os.stat(self.path))
            self._set_up()
        except OSError as exc:
            raise _os_fault(exc, self.path) from None
        except sqlite3.Error as exc:
            raise self._fault(exc) from None

    def __str__(self) -> str:
        return f"SQLite {self.path}"

    def _set_up(self) -> None:
        """One process at a time makes or migrates the schema: switching a fresh file to WAL takes an exclusive
        lock that SQLite does not wait for (several workers starting on a new data directory got "database is
        locked")."""
        lock_fd = _open_lock_file(self._lock_path)
        conn = None
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            conn = self._connect()
            conn.execute("PRAGMA journal_mode = WAL")
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found > SCHEMA_VERSION:
                raise newer_schema(found)
            if found < SCHEMA_VERSION:
                _migrate(conn, found)
        finally:
            if conn is not None:
                conn.close()
            os.close(lock_fd)  # (closing the descriptor releases the lock)

    # --- connections: one per thread, never carried across a fork ----------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._uri, uri=True, isolation_level=None, timeout=self.busy_timeout,
                               check_same_thread=False)
        try:
            conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
            if self.checkpoint_every > 0:  # the checkpointer's job; a bound in case it ever falls behind
                conn.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_FALLBACK}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _start_checkpointer(self) -> None:
        """One daemon thread per process (started on its first connection, again after a fork)."""
        if self.checkpoint_every <= 0 or (self._checkpointer and self._checkpointer[0] == _forks):
            return
        with _CHECKPOINTER_LOCK:
            if self._checkpointer and self._checkpointer[0] == _forks:
                return
            thread = threading.Thread(target=_checkpoint_loop, args=(weakref.ref(self), _forks),
                                      name="fairdice-wal-checkpoint", daemon=True)
            self._checkpointer = (_forks, thread)
            thread.start()

    def _conn(self, check_every: float = 0.0) -> sqlite3.Connection:
        """This thread's connection, once the path is checked to still name the file the store opened
        (`check_every`: skip the check when one succeeded less than this many seconds ago)."""
        local = self._local
        fresh = getattr(local, "forks", None) != _forks
        if fresh or check_every <= 0 or time.monotonic() - self._checked_at > check_every:
            self._check_file()  # (always before a new connection opens whatever is at the path)
        if fresh:
            local.conn, local.lock_fd = self._connect(), None
            local.forks = _forks
            self._start_checkpointer()
        return local.conn

    def _drop_connection(self) -> None:
        """Forget this thread's connection (after a fault: the next call opens a fresh one)."""
        local = self._local
        if getattr(local, "forks", None) == _forks:
            try:
                local.conn.close()
            except sqlite3.Error:
                pass
            if local.lock_fd is not None:
                os.close(local.lock_fd)
        local.forks = None

    def _check_file(self) -> None:
        """Unavailable unless the path still names the very file this store opened."""
        try:
            found = _identity(os.stat(self._path_text))
        except FileNotFoundError:
            raise Unavailable("database_missing", f"{self.path} is gone: put it back (a server never makes a "
                                                  f"new database while it runs)") from None
        except OSError as exc:
            raise _os_fault(exc, self.path) from None
        if found != self._identity:
            raise Unavailable("database_replaced", f"{self.path} is no longer the file this server opened: "
                                                   f"restart the server to use the new one")
        self._checked_at = time.monotonic()

    def _failed(self, exc: Exception) -> StoreError:
        """An error of SQLite or the OS as the store's own (Busy, Unavailable, StoreError); after a read-only
        fault the thread's connection is dropped, so that the next call opens the file afresh."""
        fault = self._fault(exc) if isinstance(exc, sqlite3.Error) else _os_fault(exc, self.path)
        if isinstance(fault, Unavailable) and fault.reason == "read_only":  # (opened read-only, it would stay so)
            self._drop_connection()
        return fault

    def _fault(self, exc: sqlite3.Error) -> StoreError:
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in (_BUSY, _LOCKED):
            return Busy(str(exc))
        try:
            self._check_file()  # a vanished or replaced file explains whatever SQLite said
        except Unavailable as vanished:
            return vanished
        except StoreError:
            pass
        if code == _FULL or (code == _IOERR and _free_bytes(self.path) < MIN_FREE_BYTES):
            return Unavailable("disk_full", f"{self.path}: {exc} ({_free_bytes(self.path)} bytes free)")
        if code in (_READONLY, _CANTOPEN, _PERM) or (code == _IOERR and _read_only(self.path)):
            return Unavailable("read_only", f"{self.path}: {exc}")
        return StoreError(f"{self.path}: {exc}")

    def _read(self, sql: str, args: tuple = ()) -> list:
        """The rows of one statement (a statement is a consistent read by itself)."""
        try:
            return self._conn(READ_CHECK_EVERY).execute(sql, args).fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None

    def _write(self, work, *args, transaction: bool = True):
        """work(conn, *args) in one write transaction (BEGIN IMMEDIATE under the store's file lock, queued in
        the kernel), committed unless it raises or has ended the transaction itself; its result."""
        try:
            conn = self._conn()
            local = self._local
            if local.lock_fd is None:
                local.lock_fd = _open_lock_file(self._lock_path)
            fcntl.flock(local.lock_fd, fcntl.LOCK_EX)
            try:
                if not transaction:
                    return work(conn, *args)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = work(conn, *args)
                    if conn.in_transaction:
                        conn.execute("COMMIT")
                    return result
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            finally:
                fcntl.flock(local.lock_fd, fcntl.LOCK_UN)
        except sqlite3.IntegrityError:
            raise  # the request's own fault: the caller says what it means
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None

    def close(self) -> None:
        self._checkpointer = None  # the checkpoint thread ends after its current sleep
        self._drop_connection()

    # --- reading ------------------------------------------------------------------

    @staticmethod
    def _record(row) -> GameRecord:
        game_id, created_at, opened, key_id, tokens, sealed, revealed, status, count, updated_at, client = row
        return GameRecord(game_id=game_id, opened=json.loads(opened), key_id=key_id, tokens=json.loads(tokens),
                          seed_sealed=sealed, seed_revealed=revealed, status=status, event_count=count,
                          created_at=created_at, updated_at=updated_at, client=client)

    def snapshot(self, game_id: str) -> Snapshot | None:
        try:
            conn = self._conn(READ_CHECK_EVERY)
            row = conn.execute(_SELECT_GAME, (game_id,)).fetchone()
            if row is None:
                return None
            bodies = [body for (body,) in conn.execute(_SELECT_EVENTS, (game_id, row[8]))]
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None
        record = self._record(row)
        if len(bodies) != record.event_count:
            raise StoreError(f"game {game_id}: {len(bodies)} events stored, {record.event_count} counted")
        return Snapshot(record, loads_array(bodies, f"game {game_id}"))

    def final_log(self, game_id: str) -> str | None:
        rows = self._read("SELECT final_log FROM games WHERE game_id = ?", (game_id,))
        return rows[0][0] if rows else None

    def event_count(self, game_id: str) -> int | None:
        rows = self._read("SELECT event_count FROM games WHERE game_id = ?", (game_id,))
        return rows[0][0] if rows else None

    def progress(self, game_ids: list[str]) -> dict[str, Progress]:
        rows = self._read(_PROGRESS, (_dumps(list(game_ids)),))
        return {game_id: Progress(count, status) for game_id, count, status in rows}

    def append_feed(self) -> AppendFeed:
        return SQLiteAppendFeed(self)

    def recall(self, game_id: str, seat: int | None, key: str) -> Remembered | None:
        rows = self._read(_RECALL, (game_id, _seat_key(seat), key))
        return Remembered(*rows[0]) if rows else None

    def unfinished_count(self, client: str) -> int:
        return self._read(f"SELECT count(*) FROM games WHERE client = ? AND {_UNFINISHED}", (client,))[0][0]

    def stale_games(self, idle_since: str, limit: int = 100) -> list[str]:
        rows = self._read(f"SELECT game_id FROM games WHERE created_at < ?1 AND updated_at < ?1 AND {_UNFINISHED} "
                          "ORDER BY updated_at, game_id LIMIT ?2", (idle_since, limit))
        return [game_id for (game_id,) in rows]

    def key_ids(self) -> set[str]:
        return {key_id for (key_id,) in self._read("SELECT DISTINCT key_id FROM games")}

    # --- writing ------------------------------------------------------------------

    def create_game(self, record: GameRecord) -> None:
        now = _now()
        row = (record.game_id, now, now, _dumps(record.opened), record.key_id, _dumps(record.tokens),
               record.seed_sealed, record.seed_revealed, record.status, record.client)
        try:
            self._write(_insert_game, row)
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise DuplicateGame(record.game_id) from None
            raise StoreError(f"game {record.game_id} refused: {exc}") from None
        record.created_at = record.updated_at = now

    def append(self, game_id, expected_count, events, status, reveal=None, remember=None):
        now = _now()  # everything but the writing itself is done before the lock
        count = expected_count + len(events)
        bodies = [_dumps(e) for e in events]
        if reveal is None:
            move = (_MOVE, (count, status, now, game_id, expected_count))
        else:
            move = (_MOVE_AND_REVEAL, (count, status, now, reveal[0], reveal[1], game_id, expected_count))
        keep = None if remember is None else (game_id, _seat_key(remember.seat), remember.key,
                                              remember.fingerprint, remember.status, remember.body, now)
        try:
            return self._write(_append, game_id, expected_count, bodies, move, keep)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"game {game_id}: events refused: {exc}") from None

    def rate_hit(self, key: str, interval: float, burst: int, now: float | None = None) -> float:
        tau = check_rate(interval, burst)
        now = time.time() if now is None else float(now)
        tat = self._write(_rate_hit, {"key": key, "now": now, "interval": float(interval), "tau": tau})
        return 0.0 if tat is None else max(tat - now - tau, 1e-6)

    def rate_hits(self, hits: list[tuple[str, float, int]], now: float | None = None) -> float:
        taus = [check_rate(interval, burst) for _, interval, burst in hits]
        now = time.time() if now is None else float(now)
        args = [{"key": key, "now": now, "interval": float(interval), "tau": tau}
                for (key, interval, _), tau in zip(hits, taus)]
        return self._write(_rate_hits, args) if args else RateWait(0.0)

    # --- upkeep -------------------------------------------------------------------

    def prune(self, idempotency_before: str, now: float | None = None) -> dict:
        now = time.time() if now is None else float(now)
        deleted = {
            "idempotency_records": self._delete_in_batches(
                "DELETE FROM idempotency WHERE (game_id, seat, key) IN (SELECT game_id, seat, key FROM idempotency "
                "WHERE created_at < ? LIMIT ?)", idempotency_before),
            "rate_limits": self._delete_in_batches(
                "DELETE FROM rate_limits WHERE key IN (SELECT key FROM rate_limits WHERE tat < ? LIMIT ?)", now),
        }
        self._write(self._truncate_wal, transaction=False)  # writers queue on the lock meanwhile, not in SQLite
        return {**deleted, "wal_bytes": self._wal_bytes()}

    def _delete_in_batches(self, sql: str, bound) -> int:
        """Delete PRUNE_BATCH rows per write transaction: pruning never holds the write lock for long."""
        total = 0
        while True:
            deleted = self._write(lambda conn: conn.execute(sql, (bound, PRUNE_BATCH)).rowcount)
            total += deleted
            if deleted < PRUNE_BATCH:
                return total

    def _truncate_wal(self, conn: sqlite3.Connection) -> None:
        """Copy the whole WAL into the database and cut the file to nothing, unless readers stay on old
        snapshots for longer than PRUNE_CHECKPOINT_TIMEOUT_MS (then the next prune does it)."""
        conn.execute(f"PRAGMA busy_timeout = {PRUNE_CHECKPOINT_TIMEOUT_MS}")
        deadline = time.monotonic() + PRUNE_CHECKPOINT_TIMEOUT_MS / 1000
        try:
            # busy = 1 when another checkpoint (the PASSIVE thread's, another process's) held the checkpointer
            # lock, which SQLite does not wait for: try again until it is free
            while conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {round(self.busy_timeout * 1000)}")

    def _wal_bytes(self) -> int:
        try:
            return os.stat(f"{self.path}-wal").st_size
        except FileNotFoundError:
            return 0

    def stats(self) -> dict:
        (games, unfinished, events), = self._read(
            f"SELECT count(*), coalesce(sum({_UNFINISHED}), 0), coalesce(sum(event_count), 0) FROM games")
        (idempotency, rate_limits, pages, page_size), = self._read(
            "SELECT (SELECT count(*) FROM idempotency), (SELECT count(*) FROM rate_limits), "
            "(SELECT page_count FROM pragma_page_count), (SELECT page_size FROM pragma_page_size)")
        return {"backend": "sqlite", "games": games, "unfinished": unfinished, "events": events,
                "idempotency_records": idempotency, "rate_limits": rate_limits, "bytes": pages * page_size,
                "wal_bytes": self._wal_bytes()}

    def health(self) -> None:
        """The file is the one opened, its file system writable with room left, and a write transaction
        can start and allocate a page (rolled back: nothing is written)."""
        self._check_file()
        if _read_only(self.path):
            raise Unavailable("read_only", f"{self.path} or its directory cannot be written")
        free = _free_bytes(self.path)
        if free < MIN_FREE_BYTES:
            raise Unavailable("disk_full", f"{free} bytes free on the file system of {self.path}")
        self._write(_probe)


class SQLiteAppendFeed(AppendFeed):
    """SQLite can say that the database changed, not what changed: `PRAGMA data_version` on the watching
    thread's own connection (which never writes) moves whenever another connection, of any process, commits,
    and reading it reads no table.  The feed looks at it every FEED_POLL_EVERY seconds; a change is None (the
    watcher reads the counts of the games it watches)."""

    def __init__(self, store: SQLiteStore):
        self.store = store
        self.version: int | None = None

    def wait(self, timeout: float) -> dict[str, int] | None:
        deadline = time.monotonic() + timeout
        while True:
            (version,), = self.store._read("PRAGMA data_version")
            if version != self.version:
                self.version = version
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            time.sleep(min(FEED_POLL_EVERY, left))


# --- the write transactions (work for SQLiteStore._write) ---------------------------------------

def _insert_game(conn: sqlite3.Connection, row: tuple) -> None:
    conn.execute("INSERT INTO games (game_id, created_at, updated_at, opened, key_id, tokens, seed_sealed, "
                 "seed_revealed, status, client, event_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)", row)


def _append(conn: sqlite3.Connection, game_id, expected_count, bodies, move, keep) -> Remembered | None:
    """Keep the answer first (a key already answered gets its answer, whatever the game did since), then move
    the game's count on only from `expected_count`, then add the events."""
    if keep is not None:
        try:
            kept = conn.execute(_KEEP, keep).rowcount
        except sqlite3.IntegrityError:  # (the foreign key: no such game)
            raise GameNotFound(game_id) from None
        if not kept:
            answered = conn.execute(_RECALL, keep[:3]).fetchone()
            conn.execute("ROLLBACK")
            return Remembered(*answered)
    if not conn.execute(*move).rowcount:
        found = conn.execute("SELECT event_count FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if found is None:
            raise GameNotFound(game_id)
        raise Conflict(f"game {game_id} has {found[0]} events, not {expected_count}")
    for start in range(0, len(bodies), EVENTS_PER_INSERT):
        chunk = bodies[start:start + EVENTS_PER_INSERT]
        conn.execute(_ADD_EVENTS[len(chunk)], (game_id, expected_count + start, *chunk))
    return None


def _rate_hit(conn: sqlite3.Connection, args: dict) -> float | None:
    """None if the event is allowed (and counted), else the key's theoretical arrival time."""
    if conn.execute(_RATE_HIT, args).fetchall():
        return None
    return conn.execute("SELECT tat FROM rate_limits WHERE key = ?", (args["key"],)).fetchone()[0]


def _rate_hits(conn: sqlite3.Connection, hits: list[dict]) -> RateWait:
    """Every hit counted, or (one refused) the transaction rolled back and the longest wait."""
    waits = []
    for args in hits:
        tat = _rate_hit(conn, args)
        if tat is not None:
            waits.append((args["key"], max(tat - args["now"] - args["tau"], 1e-6)))
    if waits:
        conn.execute("ROLLBACK")
    return longest_wait(waits)


def _probe(conn: sqlite3.Connection) -> None:
    """A write that needs a page of its own (a key larger than a page), rolled back: over a size limit it
    fails as a real write would, and nothing is written."""
    conn.execute("INSERT INTO rate_limits (key, tat) VALUES (?, 0)", ("health-probe " + "." * 5000,))
    conn.execute("ROLLBACK")


# --- files ------------------------------------------------------------------------------------

def _make_private_file(path: Path) -> None:
    """Make the (empty) database file 0600 if it is missing: tokens' hashes and sealed seeds are the owner's."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _open_lock_file(path: Path) -> int:
    """The store's lock file (0600), made if missing; read-only is enough to take the lock."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        return os.open(path, os.O_RDONLY)
    if os.fstat(fd).st_mode & 0o077:
        os.fchmod(fd, 0o600)
    return fd


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _free_bytes(path: Path) -> int:
    """Bytes this process may still write on the file system holding `path` (root may use the reserve)."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return 0
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


def _read_only(path: Path) -> bool:
    """Whether the database, or the directory its -wal and -shm files live in, cannot be written now."""
    try:
        if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return True
    return not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK))


def _os_fault(exc: OSError, path: Path) -> StoreError:
    if exc.errno == errno.ENOSPC:
        return Unavailable("disk_full", f"{path}: {exc.strerror}")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return Unavailable("read_only", f"{exc.filename or path}: {exc.strerror}")
    if exc.errno == errno.ENOENT:
        return Unavailable("database_missing", f"{exc.filename or path}: {exc.strerror}")
    return StoreError(f"{exc.filename or path}: {exc.strerror}")


def _migrate(conn: sqlite3.Connection, found: int) -> None:
    """Make the schema of a new database, or bring an older one up to SCHEMA_VERSION, in one transaction."""
    if found == 0:  # a new database (executescript would commit at once: the statements go one by one)
        statements = [*_statements(SCHEMA), *VERSION_2]
    else:
        statements = [s for version in range(found, SCHEMA_VERSION) for s in MIGRATIONS[version]]
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _statements(script: str) -> list[str]:
    """The statements of a script (a trigger's body keeps its inner `;`)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    return [s for s in statements if s]


def _checkpoint_loop(store_ref, forks: int) -> None:
    """PASSIVE checkpoints every `checkpoint_every` seconds while the store lives (and is not closed)."""
    store = store_ref()
    if store is None:
        return
    every, uri, timeout = store.checkpoint_every, store._uri, store.busy_timeout
    del store
    conn = None
    try:
        while True:
            time.sleep(every)
            store = store_ref()
            if store is None or not store._checkpointer or store._checkpointer[0] != forks:
                return
            try:
                store._check_file()  # never checkpoint into (or make) another file at the path
                if conn is None:
                    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout,
                                           check_same_thread=False)
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except (sqlite3.Error, StoreError):
                if conn is not None:  # busy, full or gone: start afresh next round (or SQLite's fallback does)
                    conn.close()
                    conn = None
            del store
    finally:
        if conn is not None:
            conn.close()
