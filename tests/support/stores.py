"""The store contract's two backends (SQLite, and PostgreSQL on the run's own server) and what tests of stores
share: the `backend` and `store` fixtures (each test that asks for them runs once per store; the PostgreSQL runs
are e2e), records and events to store, a fresh PostgreSQL database (`database_url`), and the schema of version 1
as fairdice made it.  Registered as a plugin by tests/conftest.py."""

from __future__ import annotations

import secrets
import sqlite3
import threading
from contextlib import contextmanager

import pytest

from api.store import GameRecord, SQLiteStore


SEALED = bytes(range(256))[::-1] + b"\x00\x00"  # every byte value, NUL at the end: a blob, not text


class SQLiteBackend:
    name = "sqlite"
    Error = sqlite3.DatabaseError

    def __init__(self, tmp_path):
        self.path = tmp_path / "store.sqlite3"
        self.stores = []

    def open(self, **options):
        store = SQLiteStore(self.path, **options)
        self.stores.append(store)
        return store

    def config(self, tmp_path) -> dict:
        return {"FAIRDICE_DATA_DIR": str(tmp_path), "FAIRDICE_DB": str(self.path)}

    @contextmanager
    def connection(self):
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        try:
            yield conn
        finally:
            conn.close()

    def execute(self, sql: str, args=()):
        with self.connection() as conn:
            return conn.execute(sql, args).fetchall()

    def destructive_statements(self) -> list[str]:
        return ["UPDATE events SET body = '{}' WHERE game_id = ?", "UPDATE events SET idx = idx + 10",
                "DELETE FROM events WHERE game_id = ?", "DELETE FROM events"]

    def set_schema_version(self, version: int) -> None:
        self.execute(f"PRAGMA user_version = {version}")

    def opener(self) -> str:
        """Python source that opens this store in another process (as `store`)."""
        return f"from api.store import SQLiteStore\nstore = SQLiteStore({str(self.path)!r})"

    def make_version_1(self) -> None:
        """A database as fairdice made it with schema version 1 (HEAD before issue 14)."""
        with self.connection() as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SQLITE_SCHEMA_V1)
            conn.execute("PRAGMA user_version = 1")

    def schema_version(self) -> int:
        return self.execute("PRAGMA user_version")[0][0]

    @contextmanager
    def game_locked(self, game_id: str):
        """Another writer holds the write lock (SQLite locks the whole database)."""
        with self.connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            finally:
                conn.execute("ROLLBACK")

    def close(self) -> None:
        for store in self.stores:
            store.close()


class PostgresBackend:
    name = "postgres"

    def __init__(self, server_url: str):
        import psycopg

        self.psycopg = psycopg
        self.Error = psycopg.Error
        self.server_url = server_url
        self.schema = "contract_" + secrets.token_hex(6)
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {self.schema}")
        self.url = f"{server_url}?options=-csearch_path%3D{self.schema}"
        self.stores = []

    def open(self, **options):
        from api.store import PostgresStore

        options.pop("checkpoint_every", None)  # SQLite's alone
        store = PostgresStore(self.url, **options)
        self.stores.append(store)
        return store

    def config(self, tmp_path) -> dict:
        return {"FAIRDICE_DATA_DIR": str(tmp_path), "FAIRDICE_DB": self.url}

    @contextmanager
    def connection(self):
        with self.psycopg.connect(self.url, autocommit=True) as conn:
            yield conn

    def execute(self, sql: str, args=()):
        with self.connection() as conn:
            cur = conn.execute(sql.replace("?", "%s"), args)
            return cur.fetchall() if cur.description else []

    def destructive_statements(self) -> list[str]:
        return ["UPDATE events SET body = '{}' WHERE game_id = ?", "UPDATE events SET idx = idx + 10",
                "DELETE FROM events WHERE game_id = ?", "DELETE FROM events", "TRUNCATE events",
                "TRUNCATE games CASCADE"]

    def set_schema_version(self, version: int) -> None:
        self.execute("UPDATE fairdice_schema SET version = ?", (version,))

    def opener(self) -> str:
        return f"from api.store import PostgresStore\nstore = PostgresStore({self.url!r}, pool_size=4)"

    def make_version_1(self) -> None:
        with self.connection() as conn:
            conn.execute(POSTGRES_SCHEMA_V1)
            conn.execute("INSERT INTO fairdice_schema (version) VALUES (1)")

    def schema_version(self) -> int:
        return self.execute("SELECT max(version) FROM fairdice_schema")[0][0]

    @contextmanager
    def game_locked(self, game_id: str):
        """Another server's transaction holds the game's row."""
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT 1 FROM games WHERE game_id = %s FOR UPDATE", (game_id,))
            yield

    def close(self) -> None:
        for store in self.stores:
            store.close()
        with self.psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {self.schema} CASCADE")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.e2e)])
def backend(request, tmp_path):
    made = (SQLiteBackend(tmp_path) if request.param == "sqlite"
            else PostgresBackend(request.getfixturevalue("postgres_url")))
    yield made
    made.close()


@pytest.fixture
def store(backend):
    return backend.open()


def record(game_id: str | None = None, **changes) -> GameRecord:
    fields = dict(game_id=game_id or secrets.token_urlsafe(12),
                  opened={"header": {"game_id": "g", "commitment": "c" * 64, "seats": ["ann", "ü 🎲"]},
                          "commitment_signature": "s" * 128},
                  key_id="k" * 16, tokens=[{"seat": 0, "sha256": "a" * 64}, {"seat": None, "sha256": "b" * 64}],
                  seed_sealed=SEALED, seed_revealed=None, status="awaiting_client_seed")
    return GameRecord(**{**fields, **changes})


def event(n: int, **extra) -> dict:
    return {"type": "roll", "seat": 0, "n": n, **extra}


def finish_game(store, game_id, status, reveal=True):
    store.append(game_id, 0, [event(0)], status, reveal=("cd" * 32, "{}") if reveal else None)


def stamp_times(backend, game_id, created_at, updated_at):
    backend.execute("UPDATE games SET created_at = ?, updated_at = ? WHERE game_id = ?",
                    (created_at, updated_at, game_id))


def in_new_thread(call, *args):
    """call(*args) in a thread of its own (a new connection, as a request on another worker thread opens):
    its result, or the exception it raised."""
    box = []

    def run():
        try:
            box.append(call(*args))
        except Exception as exc:
            box.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    return box[0]


def tail(n: int, pair: int = 0, revealed: int = 0) -> dict:
    return {"events": n, "chain": f"{n:064x}", "pair": pair, "nonce": n, "serial": n, "client_seed": "c",
            "app_key": None, "revealed": revealed}


@pytest.fixture
def database_url(postgres_url):
    """A fresh database on the run's PostgreSQL server, dropped afterwards."""
    import psycopg

    name = "fairdice_e2e_" + secrets.token_hex(4)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


# --- schema version 1, exactly as fairdice made it before version 2 (git show 6aa2e89:api/stores/*.py) ------

SQLITE_SCHEMA_V1 = """
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

POSTGRES_SCHEMA_V1 = """
CREATE TABLE fairdice_schema (version integer NOT NULL);
CREATE TABLE games (
    game_id       text PRIMARY KEY,
    created_at    text NOT NULL,
    updated_at    text NOT NULL,
    opened        text NOT NULL,      -- the creation document: header + commitment_signature
    key_id        text NOT NULL,
    tokens        text NOT NULL,      -- JSON [{"seat": int|null, "sha256": hex}]
    seed_sealed   bytea,              -- AES-GCM sealed server seed while the game runs
    seed_revealed text,               -- hex server seed once the game is over
    status        text NOT NULL,
    event_count   integer NOT NULL DEFAULT 0,
    final_log     text,               -- the signed transcript once the game is over
    CHECK ((seed_sealed IS NULL) <> (seed_revealed IS NULL))
);
CREATE TABLE events (
    game_id text NOT NULL REFERENCES games(game_id),
    idx     integer NOT NULL,
    body    text NOT NULL,
    PRIMARY KEY (game_id, idx)
);
CREATE FUNCTION fairdice_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'events are append-only'; END $$;
CREATE TRIGGER events_no_update_or_delete BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION fairdice_events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION fairdice_events_append_only();
CREATE TABLE idempotency (
    game_id     text NOT NULL REFERENCES games(game_id),
    seat        integer NOT NULL,     -- -1 for the operator of a game without human seats
    key         text NOT NULL,
    fingerprint text NOT NULL,
    status      integer NOT NULL,
    body        text NOT NULL,
    created_at  text NOT NULL,
    PRIMARY KEY (game_id, seat, key)
);
"""
