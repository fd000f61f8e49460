"""The files of the SQLite store: everything it makes is the owner's alone (whatever the umask), and its
write-ahead log stays bounded (api/stores/sqlite.py: WAL_SIZE_LIMIT once it restarts, nothing after a prune)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time

import pytest

from api.store import Remember, SQLiteStore
from api.stores import sqlite as sqlite_store
from support.stores import event, record

ANSWER = '{"state":"' + "x" * 2500 + '"}'  # about a state document kept for an Idempotency-Key


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)  # the usual default: files 0644 and directories 0755 unless the store says otherwise
    yield
    os.umask(old)


def use(store) -> None:
    """What a server does with a store: create, move, remember, rate-limit, probe, prune; from two threads."""
    made = record()
    store.create_game(made)
    store.append(made.game_id, 0, [event(0)], "playing", remember=Remember(0, "k", "f" * 64, 200, "{}"))
    store.rate_hit("create:x", 1.0, 5)
    store.health()
    worker = threading.Thread(target=lambda: store.append(made.game_id, 1, [event(1)], "playing"))
    worker.start()
    worker.join()
    store.prune("2000-01-01T00:00:00Z")
    store.append(made.game_id, 2, [event(2)], "playing")


def test_everything_the_store_makes_is_private_whatever_the_umask(tmp_path, umask_022):
    existing = tmp_path / "srv"
    existing.mkdir()
    existing.chmod(0o755)
    path = existing / "data" / "db" / "fairdice.sqlite3"
    store = SQLiteStore(path, checkpoint_every=0.2)
    use(store)
    time.sleep(0.5)  # the checkpoint thread has opened its connection too
    made = {p.name: mode(p) for p in path.parent.iterdir()}
    assert made == {name: 0o600 for name in ("fairdice.sqlite3", "fairdice.sqlite3-wal", "fairdice.sqlite3-shm",
                                             "fairdice.sqlite3.lock")}
    assert mode(existing / "data") == mode(existing / "data" / "db") == 0o700  # both made by the store
    assert mode(existing) == 0o755  # not the store's: left as it was
    store.close()


def test_files_made_again_by_a_reopened_store_are_private(tmp_path, umask_022):
    """The last connection's close deletes -wal and -shm; a store opened later makes them again."""
    path = tmp_path / "fairdice.sqlite3"
    first = SQLiteStore(path, checkpoint_every=0)
    use(first)
    first.close()
    (tmp_path / "fairdice.sqlite3.lock").unlink()
    second = SQLiteStore(path, checkpoint_every=0)
    use(second)
    assert {p.name: mode(p) for p in tmp_path.iterdir()} == {
        name: 0o600 for name in ("fairdice.sqlite3", "fairdice.sqlite3-wal", "fairdice.sqlite3-shm",
                                 "fairdice.sqlite3.lock")}


def wal_size(path) -> int:
    return os.path.getsize(f"{path}-wal")


def test_the_wal_stays_bounded_and_a_prune_truncates_it(tmp_path):
    """A reader holding an old snapshot stops every checkpoint, so the WAL grows past three times
    WAL_SIZE_LIMIT; once the reader is gone, it is cut back to at most WAL_SIZE_LIMIT as writing goes on
    (the checkpoint thread, then the WAL's restart), and to nothing by a prune."""
    path = tmp_path / "fairdice.sqlite3"
    store = SQLiteStore(path, checkpoint_every=0.2)
    made = record()
    store.create_game(made)
    count = 0

    def write():
        nonlocal count
        store.append(made.game_id, count, [event(count)], "playing",
                     remember=Remember(0, f"k{count}", "f" * 64, 200, ANSWER))
        count += 1

    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM games").fetchone()  # a snapshot no checkpoint may pass
    while wal_size(path) < 3 * sqlite_store.WAL_SIZE_LIMIT:
        write()
        assert count < 20000, "the WAL never grew"
    reader.execute("COMMIT")
    reader.close()
    deadline = time.monotonic() + 20
    while wal_size(path) > sqlite_store.WAL_SIZE_LIMIT:
        assert time.monotonic() < deadline, f"the WAL stayed at {wal_size(path)} bytes"
        write()
        time.sleep(0.01)
    pruned = store.prune("2000-01-01T00:00:00Z")
    assert pruned["wal_bytes"] == wal_size(path) == 0
    snap = store.snapshot(made.game_id)
    assert snap.record.event_count == count and snap.events[-1] == event(count - 1)
    store.close()
