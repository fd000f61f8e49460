"""The embedded default store: one SQLite file.

- WAL mode, so readers never wait for the writer;
- games (one row each) and events (append-only: triggers refuse UPDATE and
  DELETE), idempotency records keyed by game, seat and key, and rate-limit
  rows (one theoretical arrival time per key);
- every command is written in a transaction, `BEGIN IMMEDIATE` (SQLite's
  database write lock, held across processes), which appends only if the
  game still has the event count the command was computed from (the UPDATE
  of its row says so).  Events are append-only, so an equal count means the
  very same history: two requests racing on one game, in one process or in
  several gunicorn workers, can never both append after the same event, and a
  roll is never consumed twice.  The loser gets `ConflictError` and recomputes on
  the new history.  A file lock in front of `BEGIN IMMEDIATE` makes waiting
  writers queue in the kernel instead of polling SQLite's busy handler (which
  sleeps up to 100 ms between tries); everything that can be done before the
  lock (JSON, stamps) is.
- Durable answers: `synchronous=FULL` by default, so a commit returns only
  once the WAL holds it on disk, and no other connection sees it before (a
  game's creation and a command's events are answered, signed, only after
  that; NORMAL would survive a killed process but not a power cut or a disk
  going read-only).  One fsync serves many writes: a game's creation and a
  command's events go through the process's commit group (`_CommitGroup`):
  the thread that finds no commit under way leads, takes every write queued
  meanwhile by the other threads, runs each in a savepoint of one transaction
  (a refused one, ConflictError say, is rolled back alone, in order, so each append
  still sees the ones before it) and commits them together; the others wait
  for its commit.  Rate-limit counts and pruning, which nobody is answered for,
  commit at NORMAL.
- A snapshot needs no transaction: it reads the game's row, then its events
  below the count that row gave; events are append-only and committed with
  their count, so the two reads agree.
- Connections: a pool per process (any thread takes one for a call and gives
  it back), never carried across a fork.
- Faults: the file the store opened is the only one it uses.  Before every
  call the path is compared (device, inode) with it: a vanished file is
  `database_missing`, another file at the path `database_replaced`, and
  connections open with `mode=rw`, so no empty database is ever made in its
  place.  Disk full is `disk_full`; a file system that refuses writes is
  `read_only` (ext4 after an error, errors=remount-ro, says so only when a
  file is opened for writing: statvfs still says rw), one that fails them
  `io_error`, a database SQLite finds malformed on a sound disk
  `database_corrupt`.  After one of these three the store lets go of every
  file it holds (the pool's connections and lock files, as each call ends),
  so that a file system with errors can be unmounted, checked and mounted
  again while the server runs, and it reads and writes nothing until the
  fault is gone: `_mend` (tried every second by the background thread below,
  and by `health`) ends it once a write reaches the disk again and the WAL
  has been copied into the database and synced (a corrupt database: first an
  integrity check must pass).  Not even reads are served meanwhile: a commit
  whose fsync failed leaves its frames in the WAL file, and SQLite's recovery
  of the WAL would show them, answered as if stored, though the disk may
  never have had them.  So the store recovers by itself once the fault is
  gone, and serves only what is on disk.
- The WAL stays bounded: a background thread per process checkpoints it every
  second (PASSIVE: blocking nobody), SQLite's own checkpoint takes over past
  AUTOCHECKPOINT_FALLBACK pages, the file is cut back to WAL_SIZE_LIMIT when
  it restarts, and `prune` truncates it (TRUNCATE checkpoint).
- Watchers (api/watch.py) learn that some process committed from `PRAGMA
  data_version`, looked at every FEED_POLL_EVERY seconds by one thread per
  process (`SQLiteAppendFeed`, on a connection of its own), then read the
  counts of the games they watch.
- Everything the store makes is the owner's alone: the database, its -wal,
  -shm and lock files 0600 (SQLite gives -wal and -shm the database's mode),
  the directories it makes 0700.
"""

from __future__ import annotations

import copy
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
from .sessions_base import utc_day
from .sqlite_sessions import SQLiteSessions, create_session_tables
from .base import (CLIENT_QUOTAS, CLIENT_QUOTAS_TABLE, FINAL_STATUSES, SCHEMA_VERSION, AppendFeed, BusyError,
                   ClientGames, ConflictError, DuplicateGameError, GameNotFoundError, GameRecord, GamesMarker, Progress,
                   RateWait, Remembered, SYNCHRONOUS_LEVELS, Snapshot, Store, StoreError, UnavailableError,
                   check_quota, check_rate, dumps as _dumps, loads_array, longest_wait, newer_schema, now as _now,
                   seat_key as _seat_key)

AUTOCHECKPOINT_FALLBACK = 2000  # pages (8 MB) before a commit checkpoints by itself, if the thread falls behind
WAL_SIZE_LIMIT = 4 << 20  # bytes the -wal file is cut back to when it restarts (journal_size_limit)
PRUNE_BATCH = 500  # rows deleted per write transaction: pruning never holds the write lock for long
PRUNE_CHECKPOINT_TIMEOUT_MS = 2000  # how long prune's TRUNCATE checkpoint waits for readers to move on
READ_CHECK_EVERY = 0.1  # seconds: reads check the file's identity at most this often (writes every time)
MIN_FREE_BYTES = 256 << 10  # less free space than this on the database's file system: unhealthy (disk_full)
FEED_POLL_EVERY = 0.05  # seconds between two looks at the database's data_version while an append feed waits
DISK_FAULTS = ("read_only", "io_error", "database_corrupt")  # after these the store lets go of every file it holds
INTEGRITY_CHECK_EVERY = 10.0  # seconds between two integrity checks of a database found corrupt
CONFIRM_XATTR = "user.fairdice.committed"  # set on the lock file after each durable commit (`_confirm_on_disk`)
_CHECKPOINTER_LOCK = threading.Lock()
_PROCESS_LOCK = threading.Lock()
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
_CORRUPT, _NOTADB = sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB


class _Handle:
    """A connection of the pool, and its own descriptor of the store's lock file (opened with its first write)."""
    __slots__ = ("conn", "lock_fd", "generation")

    def __init__(self, conn: sqlite3.Connection, generation: int):
        self.conn, self.lock_fd, self.generation = conn, None, generation

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None


class _Pool:
    """This process's idle connections, the last given back first.  `let_go` closes them all, and those in use
    as they come back, so that the store holds no file open; while `keeping` is off (a disk fault lasts) every
    connection is closed after its call."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: list[_Handle] = []
        self.generation = 0  # moved on by let_go: a connection of an earlier one is closed when given back
        self.keeping = True

    def take(self) -> _Handle | None:
        with self.lock:
            return self.idle.pop() if self.idle else None

    def give(self, handle: _Handle) -> None:
        with self.lock:
            if self.keeping and handle.generation == self.generation:
                self.idle.append(handle)
                return
        handle.close()

    def let_go(self, keep: bool) -> None:
        with self.lock:
            self.generation += 1
            self.keeping = keep
            idle, self.idle = self.idle, []
        for handle in idle:
            handle.close()


class _Pending:
    """A durable write waiting for its commit: work(conn, *args), then its result or the error to raise.  `wake`
    (made when it has to wait): a lock held until the commit group lets its thread go, settled or to lead."""
    __slots__ = ("work", "args", "done", "result", "error", "wake")

    def __init__(self, work, args: tuple):
        self.work, self.args = work, args
        self.done, self.result, self.error = False, None, None
        self.wake: threading.Lock | None = None

    def fail(self, error: BaseException) -> None:
        self.result, self.error, self.done = None, error, True

    def outcome(self):
        if self.error is not None:
            raise self.error
        return self.result


class _CommitGroup:
    """The durable writes of one process's threads, committed together.  A thread that finds no commit under
    way leads: `commit(take)` waits for the database's write lock, then takes every write queued by then (its
    own among them: `take()`) and settles each one; threads that come meanwhile queue and wait, and when the
    commit is done the leader wakes the threads it settled, each alone, and hands the lead to the first write
    still queued.  So while one fsync runs (this process's or another's), the next batch gathers, and no thread
    wakes only to find its write still waiting (a condition's notify_all would wake every one)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.queue: list[_Pending] = []
        self.leading = False
        self.batch: list[_Pending] | None = None  # what the leader took

    def run(self, commit, pending: _Pending) -> None:
        with self.lock:
            self.queue.append(pending)
            follows = self.leading
            if follows:
                pending.wake = threading.Lock()
                pending.wake.acquire()
            else:
                self.leading = True
        if follows:
            pending.wake.acquire()  # (released by a leader: the write is settled, or this thread leads now)
            if pending.done:
                return
        self.batch = None
        try:
            commit(self.take)
        finally:
            batch = self.batch if self.batch is not None else self.take()
            for queued in batch:
                if not queued.done:
                    queued.fail(StoreError("the commit of this write was interrupted"))
            with self.lock:
                successor = self.queue[0] if self.queue else None
                self.leading = successor is not None  # (the lead passes on without a gap)
            for queued in batch:
                if queued.wake is not None:
                    queued.wake.release()
            if successor is not None:
                successor.wake.release()

    def take(self) -> list[_Pending]:
        """(The leader, once.)  Every write queued so far."""
        with self.lock:
            self.batch, self.queue = self.queue, []
        return self.batch


class _Process:
    """What a store holds in one process: its connections and its commit group (a forked child makes its own)."""
    __slots__ = ("forks", "pool", "group")

    def __init__(self, forks: int):
        self.forks, self.pool, self.group = forks, _Pool(), _CommitGroup()


class SQLiteStore(SQLiteSessions, Store):  # (sessions of SPEC §10: api/stores/sqlite_sessions.py)
    """The `Store` contract on one SQLite file, the default for a single host (its gunicorn workers share the file).
    Shaped by SQLite's one writer: writes queue on a file lock and commit in groups under one fsync, reads use a
    pool per process, and after a disk fault it serves nothing (UnavailableError) until the fault is mended,
    rather than trust the disk; the module's docstring says why each of these is so."""
    def __init__(self, path: str | os.PathLike, synchronous: str = "FULL", busy_timeout: float = 30.0,
                 checkpoint_every: float = 1.0, group_commit: bool = True, marker: GamesMarker | None = None):
        """`synchronous`: SQLite's setting for the writes answered to a client (FULL: on disk before the answer;
        NORMAL: survives a killed process, not a power cut).  `checkpoint_every` seconds: a background thread per
        process copies the WAL into the database (a PASSIVE checkpoint, which blocks no reader or writer), so
        that no command pays for a checkpoint while it holds the write lock, and retries a disk fault until it
        is gone.  0: SQLite's own automatic checkpoints, inside commits.  `group_commit`: commit the durable
        writes of concurrent threads together (False: each in a transaction of its own, for comparison).
        `marker`: written with the first game stored (api.stores.base.GamesMarker)."""
        self.checkpoint_every = checkpoint_every
        self.group_commit = group_commit
        self.marker = marker
        self._checkpointer: tuple[int, threading.Thread] | None = None
        self.path = Path(os.path.abspath(path))
        self._path_text = str(self.path)  # (os.stat of a str skips a Path's conversion, before every write)
        if synchronous.upper() not in SYNCHRONOUS_LEVELS:
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.synchronous = synchronous.upper()
        # the writes nobody is answered for (rate-limit counts, pruning) need not wait for the disk
        self._lighter = "NORMAL" if self.synchronous in ("FULL", "EXTRA") else None
        self._confirming = self._lighter is not None  # (`_confirm_on_disk`: only where commits claim the disk)
        self.busy_timeout = busy_timeout
        self._process_state = _Process(_forks)
        self._uri = f"file:{quote(str(self.path))}?mode=rw"  # never creates: a vanished file stays missing
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._checked_at = 0.0  # (monotonic) when the path last named the file the store opened
        self._disk_fault: UnavailableError | None = None  # a fault of the disk (DISK_FAULTS) until it is gone
        self._integrity_checked_at = 0.0  # (monotonic) when a database found corrupt was last checked
        self.integrity_check_every = INTEGRITY_CHECK_EVERY
        try:
            make_private_dirs(self.path.parent)
            _make_private_file(self.path)
            self._identity = _identity(os.stat(self.path))
            self._set_up()
        except OSError as exc:
            raise _os_fault(exc, self.path) from None
        except sqlite3.Error as exc:
            fault = self._fault(exc)
            if isinstance(fault, UnavailableError) and fault.reason == "database_corrupt":
                fault = StoreError(f"{self.path}: {exc}")  # at the start: not a database (garbage, another format)
            raise fault from None

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
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (CLIENT_QUOTAS_TABLE,)).fetchone():
                conn.execute(f"{CLIENT_QUOTAS} WITHOUT ROWID")
            create_session_tables(conn)
            # whatever the WAL shows, a commit whose fsync failed before a restart included, into the synced
            # database file (PASSIVE: blocking no server that runs on it)
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            if conn is not None:
                conn.close()
            os.close(lock_fd)  # (closing the descriptor releases the lock)

    # --- connections: a pool per process, never carried across a fork ----------------

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

    def _process(self) -> _Process:
        """This process's pool and commit group (a process forked since makes its own)."""
        state = self._process_state
        if state.forks != _forks:
            with _PROCESS_LOCK:
                if self._process_state.forks != _forks:
                    self._process_state = _Process(_forks)  # (the parent's connections are not ours to close)
                state = self._process_state
        return state

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

    def _take(self, check_every: float = 0.0, mending: bool = False) -> _Handle:
        """A connection of the pool (a new one if none is idle), once the path is checked to still name the file
        the store opened (`check_every`: skip the check when one succeeded less than this many seconds ago;
        never before a new connection opens whatever is at the path).  Give it back with `_give`.  While a disk
        fault lasts, the fault instead (unless `mending`): nothing is read or written until `_mend` has made
        sure that whatever the database shows is on disk."""
        fault = self._disk_fault
        if fault is not None and not mending:
            raise copy.copy(fault)
        if check_every <= 0 or time.monotonic() - self._checked_at > check_every:
            self._check_file()
        pool = self._process().pool
        handle = pool.take()
        if handle is not None:
            return handle
        if check_every > 0:
            self._check_file()
        generation = pool.generation
        try:
            handle = _Handle(self._connect(), generation)
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        self._start_checkpointer()
        return handle

    def _give(self, handle: _Handle) -> None:
        self._process().pool.give(handle)

    def _conn(self) -> sqlite3.Connection:
        """A connection of the pool, left in it: the next call of this thread (alone) uses it (for tests that look
        at the database or set a connection's limits)."""
        handle = self._take()
        self._give(handle)
        return handle.conn

    def _check_file(self) -> None:
        """UnavailableError unless the path still names the very file this store opened (and then every call checks
        again until it does)."""
        self._checked_at = 0.0
        try:
            found = _identity(os.stat(self._path_text))
        except FileNotFoundError:
            raise UnavailableError("database_missing", f"{self.path} is gone: put it back (a server never makes a "
                                                       f"new database while it runs)") from None
        except OSError as exc:
            raise _os_fault(exc, self.path) from None
        if found != self._identity:
            raise UnavailableError("database_replaced", f"{self.path} is no longer the file this server opened: "
                                                        f"restart the server to use the new one")
        self._checked_at = time.monotonic()

    def _check_disk(self) -> None:
        """UnavailableError when the database's file system refuses to open a file for writing: read-only (ext4
        after an error is, though statvfs still says rw) or failing (EIO).  The file opened is the store's lock
        file, never the database: closing a descriptor of the database would drop SQLite's POSIX locks on it."""
        try:
            fd = os.open(self._lock_path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise self._found(_os_fault(exc, self._lock_path)) from None
        os.close(fd)

    def _failed(self, exc: Exception) -> StoreError:
        """An error of SQLite or the OS as the store's own (BusyError, UnavailableError, StoreError)."""
        return self._found(self._fault(exc) if isinstance(exc, sqlite3.Error) else _os_fault(exc, self.path))

    def _found(self, fault: StoreError) -> StoreError:
        """After a fault of the disk, let go of every file (each connection in use as its call ends), and serve
        nothing until `_mend` ends the fault; `fault`."""
        if isinstance(fault, UnavailableError) and fault.reason in DISK_FAULTS:
            if self._disk_fault is None or self._disk_fault.reason != "database_corrupt":
                self._disk_fault = fault
            self._process().pool.let_go(keep=False)
        return fault

    def _recovered(self) -> None:
        self._disk_fault = None
        self._process().pool.keeping = True

    def _fault(self, exc: sqlite3.Error) -> StoreError:
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in (_BUSY, _LOCKED):
            return BusyError(str(exc))
        try:
            self._check_file()  # a vanished or replaced file explains whatever SQLite said
            self._check_disk()  # and so does a file system that refuses writes (SQLite says I/O error, or corrupt)
        except UnavailableError as explained:
            return explained
        except StoreError:
            pass
        if code == _FULL or (code == _IOERR and _free_bytes(self.path) < MIN_FREE_BYTES):
            return UnavailableError("disk_full", f"{self.path}: {exc} ({_free_bytes(self.path)} bytes free)")
        if code in (_READONLY, _CANTOPEN, _PERM) or (code == _IOERR and _read_only(self.path)):
            return UnavailableError("read_only", f"{self.path}: {exc}")
        if code == _IOERR:
            return UnavailableError("io_error", f"{self.path}: {exc}: the disk failed a read or write")
        if code in (_CORRUPT, _NOTADB):
            return UnavailableError("database_corrupt", f"{self.path}: {exc}: restore it from a backup")
        return StoreError(f"{self.path}: {exc}")

    def _read(self, sql: str, args: tuple = ()) -> list:
        """The rows of one statement (a statement is a consistent read by itself)."""
        handle = self._take(READ_CHECK_EVERY)
        try:
            return handle.conn.execute(sql, args).fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None
        finally:
            self._give(handle)

    def _locked(self, handle: _Handle) -> sqlite3.Connection:
        """The handle's connection, once this process holds the store's file lock through it (queued in the
        kernel behind other writers); unlock with `_unlock`."""
        if handle.lock_fd is None:
            handle.lock_fd = _open_lock_file(self._lock_path)
        fcntl.flock(handle.lock_fd, fcntl.LOCK_EX)
        return handle.conn

    @staticmethod
    def _unlock(handle: _Handle) -> None:
        fcntl.flock(handle.lock_fd, fcntl.LOCK_UN)

    def _write(self, work, *args, transaction: bool = True):
        """work(conn, *args) in one write transaction of its own that nobody is answered for (rate limits,
        pruning, probes: committed at NORMAL), committed unless it raises or has ended the transaction itself;
        its result.  `transaction=False`: under the file lock, outside a transaction."""
        handle = self._take()
        try:
            conn = self._locked(handle)
            try:
                if not transaction:
                    return work(conn, *args)
                if self._lighter:
                    conn.execute(f"PRAGMA synchronous = {self._lighter}")
                try:
                    return _in_transaction(conn, work, args)
                finally:
                    if self._lighter:
                        conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            finally:
                self._unlock(handle)
        except sqlite3.IntegrityError:
            raise  # the request's own fault: the caller says what it means
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None
        finally:
            self._give(handle)

    def _commit(self, work, *args):
        """work(conn, *args), durably: committed at the store's `synchronous` level, with the durable writes of
        this process's other threads that come meanwhile (one fsync for them all); its result, or its error.
        Refused while the database is known to be corrupt."""
        pending = _Pending(work, args)
        if self.group_commit:
            self._process().group.run(self._commit_batch, pending)
        else:
            self._commit_batch(lambda: [pending])
        return pending.outcome()

    def _commit_batch(self, take) -> None:
        """One transaction for the writes `take()` gives once the write lock is held: each in a savepoint of its
        own (a refusal, StoreError or a constraint, rolls back that write alone), in order, then one commit; a
        fault fails them all."""
        batch: list[_Pending] = []
        try:
            handle = self._take()
        except StoreError as exc:
            _fail_all(take(), exc)
            return
        try:
            conn = self._locked(handle)
            try:
                batch = take()
                _in_transaction(conn, _run_each, (batch,))
            finally:
                self._unlock(handle)
            self._confirm_on_disk(handle)
        except (sqlite3.Error, OSError) as exc:
            _fail_all(batch or take(), self._failed(exc))
        else:
            for pending in batch:
                pending.done = True
        finally:
            self._give(handle)

    def _confirm_on_disk(self, handle: _Handle) -> None:
        """After a durable commit: OSError unless its fsync can be believed.  ext4 reports success to an fsync
        that races its own error (the journal aborted under it: errors=remount-ro) and then loses what it was
        to sync; but once the journal is aborted, no journal handle can start, so a write of metadata that
        must be journaled and reports its failure (an extended attribute set on the store's lock file), made
        after the fsync, fails then.  File systems without user extended attributes are not asked again."""
        if not self._confirming:
            return
        try:
            os.setxattr(handle.lock_fd, CONFIRM_XATTR, b"")
        except OSError as exc:
            if exc.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM, errno.EACCES):
                raise
            self._confirming = False

    def close(self) -> None:
        self._checkpointer = None  # the checkpoint thread ends after its current sleep
        self._process().pool.let_go(keep=True)

    # --- reading ------------------------------------------------------------------

    @staticmethod
    def _record(row) -> GameRecord:
        game_id, created_at, opened, key_id, tokens, sealed, revealed, status, count, updated_at, client = row
        return GameRecord(game_id=game_id, opened=json.loads(opened), key_id=key_id, tokens=json.loads(tokens),
                          seed_sealed=sealed, seed_revealed=revealed, status=status, event_count=count,
                          created_at=created_at, updated_at=updated_at, client=client)

    def snapshot(self, game_id: str) -> Snapshot | None:
        handle = self._take(READ_CHECK_EVERY)
        try:
            conn = handle.conn
            row = conn.execute(_SELECT_GAME, (game_id,)).fetchone()
            if row is None:
                return None
            bodies = [body for (body,) in conn.execute(_SELECT_EVENTS, (game_id, row[8]))]
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None
        finally:
            self._give(handle)
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

    def client_games(self, client: str) -> ClientGames:
        (count, idle_since, quota), = self._read(
            f"SELECT count(*), min(updated_at), (SELECT max_unfinished FROM {CLIENT_QUOTAS_TABLE} WHERE client = ?1) "
            f"FROM games WHERE client = ?1 AND {_UNFINISHED}", (client,))
        return ClientGames(count, idle_since, quota)

    def set_client_quota(self, client: str, max_unfinished: int | None) -> None:
        if check_quota(max_unfinished) is None:
            self._write(lambda conn: conn.execute(f"DELETE FROM {CLIENT_QUOTAS_TABLE} WHERE client = ?", (client,)))
        else:
            self._write(lambda conn: conn.execute(
                f"INSERT INTO {CLIENT_QUOTAS_TABLE} (client, max_unfinished) VALUES (?1, ?2) "
                "ON CONFLICT (client) DO UPDATE SET max_unfinished = ?2", (client, max_unfinished)))

    def client_quotas(self) -> dict[str, int]:
        return dict(self._read(f"SELECT client, max_unfinished FROM {CLIENT_QUOTAS_TABLE} ORDER BY client"))

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
            self._commit(_insert_game, row)
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise DuplicateGameError(record.game_id) from None
            raise StoreError(f"game {record.game_id} refused: {exc}") from None
        record.created_at = record.updated_at = now
        if self.marker is not None:
            self.marker.mark(str(self))

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
            return self._commit(_append, game_id, expected_count, bodies, move, keep)
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
            "session_idempotency_records": self._delete_in_batches(
                "DELETE FROM session_idempotency WHERE (session_id, key) IN (SELECT session_id, key FROM "
                "session_idempotency WHERE created_at < ? LIMIT ?)", idempotency_before),
            "session_roll_counts": self._delete_in_batches(  # the days before today count against nothing
                "DELETE FROM session_rolls_by_day WHERE (client, day) IN (SELECT client, day FROM "
                "session_rolls_by_day WHERE day < ? LIMIT ?)", utc_day(now)),
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

    def _truncate_wal(self, conn: sqlite3.Connection) -> bool:
        """Copy the whole WAL into the database and cut the file to nothing, unless readers stay on old
        snapshots for longer than PRUNE_CHECKPOINT_TIMEOUT_MS (then the next prune does it); whether it did."""
        conn.execute(f"PRAGMA busy_timeout = {PRUNE_CHECKPOINT_TIMEOUT_MS}")
        deadline = time.monotonic() + PRUNE_CHECKPOINT_TIMEOUT_MS / 1000
        try:
            # busy = 1 when another checkpoint (the PASSIVE thread's, another process's) held the checkpointer
            # lock, which SQLite does not wait for: try again until it is free
            while (busy := conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]) and \
                    time.monotonic() < deadline:
                time.sleep(0.01)
            return not busy
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
        (idempotency, rate_limits, quotas, pages, page_size), = self._read(
            f"SELECT (SELECT count(*) FROM idempotency), (SELECT count(*) FROM rate_limits), "
            f"(SELECT count(*) FROM {CLIENT_QUOTAS_TABLE}), (SELECT page_count FROM pragma_page_count), "
            f"(SELECT page_size FROM pragma_page_size)")
        return {"backend": "sqlite", "games": games, "unfinished": unfinished, "events": events,
                "idempotency_records": idempotency, "rate_limits": rate_limits, "client_quotas": quotas,
                "bytes": pages * page_size, "table_bytes": self._table_bytes(), "wal_bytes": self._wal_bytes()}

    def _table_bytes(self) -> dict[str, int] | None:
        """The pages of each table and its indexes, in bytes (SQLite's dbstat table); None where this SQLite was
        built without it."""
        handle = self._take(READ_CHECK_EVERY)
        try:
            rows = handle.conn.execute(
                "SELECT m.tbl_name, sum(s.pgsize) FROM dbstat AS s JOIN sqlite_master AS m ON m.name = s.name "
                "WHERE m.tbl_name NOT LIKE 'sqlite_%' GROUP BY m.tbl_name ORDER BY m.tbl_name").fetchall()
        except sqlite3.OperationalError as exc:
            if "dbstat" in str(exc):
                return None
            raise self._failed(exc) from None
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None
        finally:
            self._give(handle)
        return dict(rows)

    def health(self) -> None:
        """The file is the one opened, its file system takes writes with room left, and a write transaction
        can start and allocate a page (rolled back: nothing is written).  After a fault of the disk: a write
        that reaches the disk commits again (a corrupt database: first its integrity check passes)."""
        self._check_file()
        self._check_disk()
        if _read_only(self.path):
            raise UnavailableError("read_only", f"{self.path} or its directory cannot be written")
        free = _free_bytes(self.path)
        if free < MIN_FREE_BYTES:
            raise UnavailableError("disk_full", f"{free} bytes free on the file system of {self.path}")
        if self._disk_fault is None:
            self._write(_probe)
        else:
            self._mend()

    def _mend(self) -> None:
        """Whether the disk fault is gone, and if it is, end it.  A database found corrupt must pass an integrity
        check (at most every `integrity_check_every` seconds); then a write must reach the disk (the header
        rewritten as it is, committed), and the whole WAL be copied into the database, synced, and cut to
        nothing.  That last step is why nothing is served meanwhile: a commit whose fsync failed leaves its
        frames in the WAL file, and SQLite's recovery of the WAL (when every connection has closed) would show
        it, though the disk may never have had it; once copied into the database and synced, it has.  Raises
        the fault while it lasts."""
        fault = self._disk_fault
        if fault is None:
            return
        if fault.reason == "database_corrupt":
            if time.monotonic() - self._integrity_checked_at < self.integrity_check_every:
                raise copy.copy(fault)
            self._integrity_checked_at = time.monotonic()
        handle = self._take(mending=True)
        try:
            conn = self._locked(handle)
            try:
                if fault.reason == "database_corrupt":
                    found = conn.execute("PRAGMA quick_check(1)").fetchall()
                    if found != [("ok",)]:
                        raise self._found(UnavailableError("database_corrupt", f"{self.path}: integrity check: "
                                                                               f"{found[0][0]}"))
                _in_transaction(conn, _rewrite_header, ())
                if not self._truncate_wal(conn):
                    raise copy.copy(fault)  # readers kept the WAL in use: the next try
            finally:
                self._unlock(handle)
            self._confirm_on_disk(handle)
        except (sqlite3.Error, OSError) as exc:
            raise self._failed(exc) from None
        finally:
            self._give(handle)
        self._recovered()

    def _upkeep(self) -> None:
        """(The background thread, every `checkpoint_every` seconds.)  Copy the WAL into the database; or,
        while a disk fault lasts, see whether it is gone.  Faults are recorded (`_found`), not raised."""
        try:
            self._check_file()
            self._check_disk()  # a file system gone read-only is noticed, and let go of, without any request
            if self._disk_fault is not None:
                self._mend()
            else:
                self._read("PRAGMA wal_checkpoint(PASSIVE)")
        except StoreError:
            pass  # busy, full, gone: the next round tries again (or SQLite's fallback checkpoints)


class SQLiteAppendFeed(AppendFeed):
    """SQLite can say that the database changed, not what changed: `PRAGMA data_version` on the feed's own
    connection (which never writes) moves whenever another connection, of any process, commits, and reading
    it reads no table.  The feed looks at it every FEED_POLL_EVERY seconds; a change is None (the watcher reads
    the counts of the games it watches), and so is a new connection (after a fault, or the store letting go of
    its files)."""

    def __init__(self, store: SQLiteStore):
        self.store = store
        self.conn: sqlite3.Connection | None = None
        self.generation: int | None = None  # of the store's pool when the connection was opened
        self.version: int | None = None

    def wait(self, timeout: float) -> dict[str, int] | None:
        deadline = time.monotonic() + timeout
        while True:
            version = self._data_version()
            if version != self.version:
                self.version = version
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            time.sleep(min(FEED_POLL_EVERY, left))

    def _data_version(self) -> int:
        store = self.store
        pool = store._process().pool
        if self.conn is not None and self.generation != pool.generation:
            self.close()  # the store let go of its files: so does the feed
        fault = store._disk_fault
        if fault is not None:
            raise copy.copy(fault)
        try:
            if self.conn is None or time.monotonic() - store._checked_at > READ_CHECK_EVERY:
                store._check_file()
            if self.conn is None:
                self.generation = pool.generation
                self.conn, self.version = store._connect(), None
            return self.conn.execute("PRAGMA data_version").fetchone()[0]
        except (sqlite3.Error, OSError) as exc:
            self.close()
            raise store._failed(exc) from None
        except StoreError:
            self.close()
            raise

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                conn.close()
            except sqlite3.Error:
                pass


# --- the write transactions (work for SQLiteStore._write) ---------------------------------------

def _insert_game(conn: sqlite3.Connection, row: tuple) -> None:
    conn.execute("INSERT INTO games (game_id, created_at, updated_at, opened, key_id, tokens, seed_sealed, "
                 "seed_revealed, status, client, event_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)", row)


def _in_transaction(conn: sqlite3.Connection, work, args: tuple):
    """work(conn, *args) in one write transaction, committed unless it raises (then rolled back) or has ended
    the transaction itself; its result."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn, *args)
        if conn.in_transaction:
            conn.execute("COMMIT")
        return result
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # (a failing disk: SQLite has rolled back itself, or will when the connection closes)
        raise


def _fail_all(batch: list[_Pending], fault: StoreError) -> None:
    for pending in batch:
        pending.fail(copy.copy(fault))  # (an exception of its own for each thread to raise)


def _run_each(conn: sqlite3.Connection, batch: list[_Pending]) -> None:
    """Each write of the batch in a savepoint, in order: its result, or its refusal (StoreError, a constraint)
    with what it wrote rolled back.  A fault of the database (any other error) ends the whole transaction."""
    for pending in batch:
        conn.execute("SAVEPOINT pending")
        try:
            pending.result = pending.work(conn, *pending.args)
        except (StoreError, sqlite3.IntegrityError) as refused:
            conn.execute("ROLLBACK TO pending")
            pending.error = refused
        conn.execute("RELEASE pending")


def _append(conn: sqlite3.Connection, game_id, expected_count, bodies, move, keep) -> Remembered | None:
    """Keep the answer first (a key already answered gets its answer, whatever the game did since, and nothing
    is written), then move the game's count on only from `expected_count`, then add the events."""
    if keep is not None:
        try:
            kept = conn.execute(_KEEP, keep).rowcount
        except sqlite3.IntegrityError:  # (the foreign key: no such game)
            raise GameNotFoundError(game_id) from None
        if not kept:
            return Remembered(*conn.execute(_RECALL, keep[:3]).fetchone())
    if not conn.execute(*move).rowcount:
        found = conn.execute("SELECT event_count FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if found is None:
            raise GameNotFoundError(game_id)
        raise ConflictError(f"game {game_id} has {found[0]} events, not {expected_count}")
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


def _rewrite_header(conn: sqlite3.Connection) -> None:
    """A durable write that changes nothing: the header page written again as it is (user_version)."""
    (version,), = conn.execute("PRAGMA user_version").fetchall()
    conn.execute(f"PRAGMA user_version = {int(version)}")


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
        return UnavailableError("disk_full", f"{path}: {exc.strerror}")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return UnavailableError("read_only", f"{exc.filename or path}: {exc.strerror}")
    if exc.errno == errno.ENOENT:
        return UnavailableError("database_missing", f"{exc.filename or path}: {exc.strerror}")
    if exc.errno == errno.EIO:
        return UnavailableError("io_error", f"{exc.filename or path}: {exc.strerror}: the disk failed a read or write")
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
    """The store's upkeep (`_upkeep`) every `checkpoint_every` seconds while it lives (and is not closed)."""
    store = store_ref()
    if store is None:
        return
    every = store.checkpoint_every
    del store
    while True:
        time.sleep(every)
        store = store_ref()
        if store is None or not store._checkpointer or store._checkpointer[0] != forks:
            return
        store._upkeep()
        del store
