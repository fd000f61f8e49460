"""A receipt only for what is durable, and disk faults the store lets go of (issue 21, parts 1 and 2).

- Writes answered to a client are on disk first: FAIRDICE_SYNCHRONOUS is FULL by default, SQLite's connections
  commit at FULL and PostgreSQL's with synchronous_commit on, whatever the database server's default.
- The durable writes of concurrent threads share one commit (one fsync): held behind the write lock, eight
  appends from eight threads write the WAL once, not eight times, and inside that one transaction each append
  still goes only after the history it was computed from, a twin gets the first answer, a refused write is
  rolled back alone.
- A corrupt database is `database_corrupt`, takes no writes, and recovers once an integrity check passes.
- On a real ext4 file system (a loop device; needs root): after the errors=remount-ro fault or a shutdown (a
  disk that fails every I/O), the store answers `read_only` or `io_error`, holds no file of the file system
  open (so it can be unmounted and checked while the server runs), and recovers by itself once it is mounted
  again, with every event it had stored.  tests/e2e/test_durability_server.py does the same to a real server
  under load.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from api.config import settings
from api.store import BusyError, ConflictError, DuplicateGameError, Remember, Remembered, SQLiteStore, UnavailableError
from support.stores import PostgresBackend, event, in_new_thread, record


# --- durable by default -------------------------------------------------------------------------------------

def test_writes_answered_to_clients_wait_for_the_disk_by_default(tmp_path):
    assert settings(environ={}).synchronous == "FULL"
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0)
    store.create_game(record())
    assert store._conn().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    store.rate_hit("client", 1.0, 5)  # (committed at NORMAL: nobody is answered for it)
    assert store._conn().execute("PRAGMA synchronous").fetchone()[0] == 2


def test_a_setting_that_is_no_level_is_refused():
    with pytest.raises(ValueError, match="FAIRDICE_SYNCHRONOUS"):
        settings(environ={"FAIRDICE_SYNCHRONOUS": "sometimes"})


@pytest.mark.e2e
def test_postgres_commits_synchronously_whatever_the_server_default(postgres_url):
    backend = PostgresBackend(postgres_url)
    try:
        url = backend.url + "%20-csynchronous_commit%3Doff"  # the connections' own default: off
        with backend.psycopg.connect(url) as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "off"
        from api.store import PostgresStore

        for setting, expected in (("FULL", "on"), ("NORMAL", "off")):
            store = PostgresStore(url, pool_size=1, synchronous=setting)
            backend.stores.append(store)
            assert store._rows("SHOW synchronous_commit") == [(expected,)]
    finally:
        backend.close()


# --- one commit for many --------------------------------------------------------------------------------------

def wal_frames(store: SQLiteStore) -> int:
    page_size = store._conn().execute("PRAGMA page_size").fetchone()[0]
    wal = Path(f"{store.path}-wal")
    return max(0, wal.stat().st_size - 32) // (page_size + 24) if wal.exists() else 0


class WriteLockHeld:
    """The store's file lock held by the test: the store's writers queue behind it until `release()`."""

    def __init__(self, store: SQLiteStore):
        self.fd = os.open(store._lock_path, os.O_RDWR)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def behind_the_lock(store: SQLiteStore, calls: list, queued: int | None = None) -> list:
    """Each call (in a thread of its own) started while the write lock is held, released once `queued` writes
    wait in the commit group (or after a moment): each result, or the exception it raised."""
    results = [None] * len(calls)

    def run(i):
        try:
            results[i] = calls[i]()
        except Exception as exc:  # a result to look at
            results[i] = exc

    held = WriteLockHeld(store)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    try:
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + (10 if queued else 0.3)
        while time.monotonic() < deadline and (not queued or len(store._process().group.queue) < queued):
            time.sleep(0.005)
        if queued:
            assert len(store._process().group.queue) == queued, "the writes did not queue"
    finally:
        held.release()
    for thread in threads:
        thread.join(30)
    return results


@pytest.mark.parametrize("grouped", [True, False])
def test_appends_of_concurrent_threads_share_one_commit(tmp_path, grouped):
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0, group_commit=grouped)
    games = [record() for _ in range(8)]
    for made in games:
        store.create_game(made)
    store._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert wal_frames(store) == 0
    alone = store.append(games[0].game_id, 0, [event(0)], "playing") or wal_frames(store)
    calls = [lambda g=made: store.append(g.game_id, 1 if g is games[0] else 0, [event(1)], "playing")
             for made in games]
    assert behind_the_lock(store, calls, queued=8 if grouped else None) == [None] * 8
    written = wal_frames(store) - alone
    if grouped:
        assert written <= 2 * alone, (written, alone)  # one transaction's pages, once
    else:
        assert written >= 8 * alone, (written, alone)  # (the same appends, one transaction each)
    for made in games:
        assert store.event_count(made.game_id) == (2 if made is games[0] else 1)


def test_in_one_commit_each_write_still_needs_its_history_and_a_refused_one_rolls_back_alone(tmp_path):
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0)
    raced, other, taken = record(), record(), record()
    for made in (raced, other, taken):
        store.create_game(made)
    answer = Remember(0, "key-1", "f" * 64, 200, '{"first": true}')
    twin = Remember(0, "key-1", "f" * 64, 200, '{"second": true}')
    calls = [lambda: store.append(raced.game_id, 0, [event(0, by="first")], "playing", remember=answer),
             lambda: store.append(raced.game_id, 0, [event(0, by="second")], "playing", remember=twin),
             lambda: store.append(raced.game_id, 0, [event(0, by="third")], "playing"),
             lambda: store.create_game(record(taken.game_id)),
             lambda: store.append(other.game_id, 0, [event(0), event(1)], "playing")]
    first, second, third, duplicate, elsewhere = behind_the_lock(store, calls, queued=5)
    assert first is None and elsewhere is None
    assert second == Remembered(answer.fingerprint, 200, answer.body)  # the twin: the first answer
    assert isinstance(third, ConflictError)  # computed from 0 events, and the game has 1 now
    assert isinstance(duplicate, DuplicateGameError)
    assert store.snapshot(raced.game_id).events == [event(0, by="first")]
    assert store.snapshot(other.game_id).events == [event(0), event(1)]
    assert store.snapshot(taken.game_id).record.opened == taken.opened


def test_a_write_blocked_past_the_busy_timeout_fails_its_whole_commit_as_busy(tmp_path):
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0, busy_timeout=0.3)
    made = record()
    store.create_game(made)
    with sqlite3.connect(store.path, isolation_level=None) as other:  # a writer that ignores the file lock
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(BusyError):
            store.append(made.game_id, 0, [event(0)], "playing")
        other.execute("ROLLBACK")
    store.append(made.game_id, 0, [event(0)], "playing")
    assert store.event_count(made.game_id) == 1


# --- a corrupt database ------------------------------------------------------------------------------------------

def test_a_corrupt_database_is_unavailable_takes_no_writes_and_recovers_once_mended(tmp_path):
    path = tmp_path / "fairdice.sqlite3"
    store = SQLiteStore(path, checkpoint_every=0)
    made, spare = record(), record()
    store.create_game(made)
    store.create_game(spare)
    store.append(made.game_id, 0, [event(i) for i in range(40)], "playing")
    store.prune("0000")  # (the WAL copied into the database and cut to nothing)
    page_size, root = store._conn().execute(
        "SELECT (SELECT page_size FROM pragma_page_size), rootpage FROM sqlite_master WHERE name = 'events'").fetchone()
    store.close()
    with open(path, "r+b") as db:  # garbage over the events' root page, in place (the same file)
        db.seek((root - 1) * page_size)
        kept = db.read(page_size)
        db.seek((root - 1) * page_size)
        db.write(bytes(range(256)) * (page_size // 256))
    fault = in_new_thread(store.snapshot, made.game_id)
    assert isinstance(fault, UnavailableError) and fault.reason == "database_corrupt", fault
    store.integrity_check_every = 0
    with pytest.raises(UnavailableError) as raised:
        store.health()
    assert raised.value.reason == "database_corrupt"
    with pytest.raises(UnavailableError) as raised:
        store.append(spare.game_id, 0, [event(0)], "playing")  # no write into a corrupt database
    assert raised.value.reason == "database_corrupt"
    with open(path, "r+b") as db:  # mended in place
        db.seek((root - 1) * page_size)
        db.write(kept)
    assert store.health() is None
    assert store.snapshot(made.game_id).events == [event(i) for i in range(40)]
    store.append(spare.game_id, 0, [event(0)], "playing")
    assert store.event_count(spare.game_id) == 1


# --- a real ext4 file system that fails --------------------------------------------------------------------


def open_files_under(directory: Path) -> list[str]:
    """The files this process holds open under `directory`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory) + "/"):
            found.append(target)
    return found


@pytest.mark.parametrize("how, reason", [("remount-ro", "read_only"), ("shutdown", "io_error")])
def test_after_a_disk_error_the_store_lets_go_of_its_files_and_recovers_once_repaired(loop_disk, how, reason):
    store = SQLiteStore(loop_disk.mount_point / "data" / "fairdice.sqlite3", checkpoint_every=0.1)
    made = record()
    store.create_game(made)
    for n in range(20):
        store.append(made.game_id, n, [event(n)], "playing")
    assert open_files_under(loop_disk.mount_point)  # (the pool's connections, the lock file)
    loop_disk.fail(how)
    with pytest.raises(UnavailableError) as raised:
        store.append(made.game_id, 20, [event(20)], "playing")
    assert raised.value.reason == reason
    with pytest.raises(UnavailableError) as raised:
        store.health()
    assert raised.value.reason == reason
    deadline = time.monotonic() + 5
    while open_files_under(loop_disk.mount_point) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert open_files_under(loop_disk.mount_point) == []
    loop_disk.repair()
    deadline = time.monotonic() + 10
    while True:  # the background thread (or this health check) finds the fault gone
        try:
            store.health()
            break
        except UnavailableError:
            assert time.monotonic() < deadline, "the store did not recover"
            time.sleep(0.1)
    assert store.snapshot(made.game_id).events == [event(n) for n in range(20)]
    store.append(made.game_id, 20, [event(20)], "playing")
    assert store.event_count(made.game_id) == 21
    store.close()
