"""Faults under a running store: each is `UnavailableError(reason, detail)`, never a bare sqlite3/psycopg error, is
seen by `health()`, and goes away by itself once the fault does (no restart, no new store).

Made for real where the machine allows it:
- disk full: a tmpfs of 4 MiB filled by a ballast file (needs root or CAP_SYS_ADMIN to mount; CI runs as
  root), and everywhere SQLite's `PRAGMA max_page_count`, which fails writes with the very same SQLITE_FULL;
- read-only: as root (who ignores permissions) a read-only bind mount over the data directory; as anyone
  else the directory and files made read-only with chmod;
- a database moved away, deleted (and put back through a hard link), or replaced by a copy;
- PostgreSQL out of reach: a TCP relay between the store and the run's server, cut and restored (the
  server itself stays up for the other tests), and a closed port.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from api.store import PostgresStore, SQLiteStore, StoreError, UnavailableError
from api.stores import sqlite as sqlite_store
from support.stores import PostgresBackend, event, record
from support.disks import mount, unmount
from support.stores import in_new_thread

BIG = {"type": "roll", "pad": "x" * 3000}  # an event that needs pages of its own


def unavailable(reason: str, call, *args, **kwargs) -> UnavailableError:
    with pytest.raises(UnavailableError) as raised:
        call(*args, **kwargs)
    assert raised.value.reason == reason, raised.value
    assert not isinstance(raised.value.__cause__, sqlite3.Error)
    return raised.value


class Game:
    """A game on a store and the events it holds, appended one by one."""

    def __init__(self, store):
        self.store, self.made = store, record()
        store.create_game(self.made)
        self.count = 0

    def append(self, body=None):
        self.store.append(self.made.game_id, self.count, [body or event(self.count)], "playing")
        self.count += 1

    def fill(self, reason: str) -> UnavailableError:
        """Append big events until the store refuses: that refusal, with nothing of it written."""
        for _ in range(5000):
            try:
                self.append(BIG)
            except UnavailableError as exc:
                assert exc.reason == reason, exc
                assert self.store.event_count(self.made.game_id) == self.count
                return exc
        pytest.fail("the store never filled up")


# --- disk full ---------------------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mount("-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(disk))
    yield disk
    unmount(disk)


def fill_with_ballast(path: Path) -> None:
    """A file that takes every byte the disk has left: written unbuffered, in big blocks and then small ones,
    so that no failed write stays in a buffer to fail again when the file is closed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for block in (b"\0" * 65536, b"\0" * 512):
            try:
                while True:
                    os.write(fd, block)
            except OSError:
                pass
    finally:
        os.close(fd)


def test_a_full_disk_is_unavailable_and_recovers_when_space_is_freed(small_disk):
    store = SQLiteStore(small_disk / "db" / "fairdice.sqlite3", checkpoint_every=0)
    game = Game(store)
    game.append()
    fill_with_ballast(small_disk / "ballast")
    fault = game.fill("disk_full")
    assert str(store.path) in fault.detail
    unavailable("disk_full", store.health)
    unavailable("disk_full", store.create_game, record())
    assert store.snapshot(game.made.game_id).record.event_count == game.count  # reads still answer
    (small_disk / "ballast").unlink()
    assert store.health() is None
    game.append()  # the same store, the same thread: no restart
    assert store.snapshot(game.made.game_id).events[-1] == event(game.count - 1)
    store.close()


def test_a_database_at_its_size_limit_is_disk_full_and_recovers(tmp_path):
    """SQLite's max_page_count (one connection's: this thread's) fails writes with SQLITE_FULL, as a full
    disk does, without root."""
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0)
    game = Game(store)
    conn = store._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages + 3}")
    game.fill("disk_full")
    unavailable("disk_full", store.health)
    conn.execute("PRAGMA max_page_count = 1000000")  # room again
    assert store.health() is None
    game.append()
    assert store.event_count(game.made.game_id) == game.count


# --- read-only -------------------------------------------------------------------------------------------

@contextmanager
def read_only(directory: Path, database: Path):
    """The data directory read-only while inside: a read-only bind mount as root, chmod otherwise."""
    if os.geteuid() == 0:
        mount("--bind", str(directory), str(directory))
        try:
            mount("-o", "remount,bind,ro", str(directory))
            yield
        finally:
            unmount(directory)
        return
    files = [p for p in directory.iterdir()]
    modes = {p: p.stat().st_mode & 0o777 for p in [directory, *files]}
    for p in files:
        p.chmod(0o400)
    directory.chmod(0o500)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


def test_a_read_only_database_is_unavailable_and_recovers_when_writable(tmp_path):
    data = tmp_path / "data"
    store = SQLiteStore(data / "fairdice.sqlite3", checkpoint_every=0)
    game = Game(store)
    game.append()
    with read_only(data, store.path):
        store.close()  # (its connections opened the files writable before: a connection opened now gets them
        #               read-only, as every one does once the store has let go of its files after a disk fault)
        fault = in_new_thread(game.append)
        assert isinstance(fault, UnavailableError) and fault.reason == "read_only", fault
        unavailable("read_only", store.health)
        # nor is anything read until the fault is gone: what a failed commit left in the WAL could show
        assert isinstance(in_new_thread(store.event_count, game.made.game_id), UnavailableError)
    assert store.health() is None
    assert in_new_thread(game.append) is None
    game.append()
    assert store.event_count(game.made.game_id) == game.count


# --- the file moved, deleted, replaced --------------------------------------------------------------------

def test_a_moved_database_is_missing_is_never_recreated_and_recovers_when_back(tmp_path):
    store = SQLiteStore(tmp_path / "fairdice.sqlite3")
    game = Game(store)
    game.append()
    moved = tmp_path / "elsewhere.sqlite3"
    os.rename(store.path, moved)
    unavailable("database_missing", game.append)
    unavailable("database_missing", store.health)
    time.sleep(sqlite_store.READ_CHECK_EVERY * 1.5)
    unavailable("database_missing", store.snapshot, game.made.game_id)
    assert isinstance(in_new_thread(store.event_count, game.made.game_id), UnavailableError)
    time.sleep(1.5)  # the checkpoint thread has had its turn too
    assert not store.path.exists()  # nothing made a new (empty, 0644) database in its place
    os.rename(moved, store.path)
    assert store.health() is None
    game.append()
    assert in_new_thread(store.event_count, game.made.game_id) == game.count == 2
    store.close()


def test_a_deleted_database_stays_missing_until_its_file_is_linked_back(tmp_path):
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0)
    game = Game(store)
    keep = tmp_path / "kept-link"
    os.link(store.path, keep)  # (the operator's backup of the very file)
    store.path.unlink()
    for _ in range(3):
        unavailable("database_missing", game.append)
        unavailable("database_missing", store.create_game, record())
    assert not store.path.exists()
    os.link(keep, store.path)
    game.append()
    assert store.snapshot(game.made.game_id).events == [event(0)]


def test_a_replaced_database_is_refused_until_the_original_is_back(tmp_path):
    store = SQLiteStore(tmp_path / "fairdice.sqlite3", checkpoint_every=0)
    game = Game(store)
    game.append()
    original = tmp_path / "original.sqlite3"
    os.rename(store.path, original)
    shutil.copyfile(original, store.path)  # another file (a restored backup, say) at the path
    fault = unavailable("database_replaced", game.append)
    assert "restart" in fault.detail
    unavailable("database_replaced", store.health)
    assert isinstance(in_new_thread(store.snapshot, game.made.game_id), UnavailableError)
    os.replace(original, store.path)
    game.append()
    assert store.event_count(game.made.game_id) == 2


def test_a_file_that_is_not_a_database_is_a_store_error_naming_it(tmp_path):
    path = tmp_path / "fairdice.sqlite3"
    path.write_bytes(b"this is not a database, just some text " * 100)
    with pytest.raises(StoreError, match="fairdice.sqlite3") as raised:
        SQLiteStore(path)
    assert not isinstance(raised.value, UnavailableError)


# --- PostgreSQL out of reach -------------------------------------------------------------------------------

class Relay:
    """A TCP relay on a loopback port to `upstream`: `cut()` closes it and every connection through it (as a
    network or server failure would), `restore()` listens again on the same port."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.listener: socket.socket | None = None
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.port = 0
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        try:  # (close alone leaves a socket that a thread is accepting on listening, on Linux)
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


@pytest.fixture
def relayed(postgres_url):
    """(backend, relay, URL of the backend's schema through the relay)."""
    backend = PostgresBackend(postgres_url)
    parts = urlsplit(backend.url)
    relay = Relay((parts.hostname, parts.port))
    yield backend, relay, backend.url.replace(f":{parts.port}/", f":{relay.port}/")
    relay.cut()
    backend.close()


def eventually(call, seconds: float = 10.0):
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except UnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.e2e
def test_postgres_out_of_reach_is_unreachable_and_recovers_when_back(relayed):
    backend, relay, url = relayed
    store = PostgresStore(url, pool_size=2, busy_timeout=5)
    backend.stores.append(store)
    game = Game(store)
    game.append()
    relay.cut()
    started = time.monotonic()
    fault = unavailable("unreachable", game.append)
    assert time.monotonic() - started < 10
    assert urlsplit(url).password not in str(fault)  # the URL is shown without its password
    started = time.monotonic()
    for call, args in [(store.snapshot, (game.made.game_id,)), (store.health, ()), (store.rate_hit, ("k", 1.0, 1))]:
        unavailable("unreachable", call, *args)
    assert time.monotonic() - started < 10  # known to be down: no call waits for a pool's timeout
    relay.restore()
    eventually(store.health)
    game.append()  # the same store: no restart
    assert store.snapshot(game.made.game_id).events == [event(0), event(1)]


@pytest.mark.e2e
def test_postgres_at_a_closed_port_is_unreachable_from_the_start(postgres_url):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free, and nothing listens once the socket is closed
    with pytest.raises(UnavailableError) as raised:
        PostgresStore(f"postgresql://postgres:s3cret@127.0.0.1:{port}/postgres", busy_timeout=2)
    assert raised.value.reason == "unreachable" and "s3cret" not in str(raised.value)
