"""PostgreSQL: one database behind many stateless `fairdice serve` processes.

- The same three tables as SQLite's (games, events, idempotency), JSON kept as
  text byte for byte (jsonb would reorder keys).  They are created on first
  use, in one transaction under an advisory lock (servers starting together
  do not race), and `fairdice_schema` holds the schema version: a database
  made by a newer fairdice is refused.
- Events are append-only in the database: a trigger refuses UPDATE, DELETE
  and TRUNCATE on them.
- A command is one transaction that first locks its game's row (`SELECT ...
  FOR UPDATE`), then does what SQLite does under BEGIN IMMEDIATE: an answer
  already kept for its Idempotency-Key is returned; a game whose event count
  is no longer the one the command was computed from raises Conflict;
  otherwise the events, the new count and the idempotency record are written
  together.  The lock serializes the commands of one game only, and under READ
  COMMITTED each statement after it sees what the previous holder committed,
  so a twin request waits for the first and gets its answer.
- A snapshot is one statement (the game row with an array of its events), so
  it is consistent without a transaction.
- Connections come from a psycopg_pool ConnectionPool opened on first use in
  each process (so never shared across a fork), checked before use so that a
  restarted database costs no failed request.  Waiting longer than
  `busy_timeout` for a lock or a connection, or losing the database, raises
  Busy (503 with Retry-After).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors
from psycopg_pool import ConnectionPool

from .base import (SCHEMA_VERSION, Busy, Conflict, DuplicateGame, GameNotFound, GameRecord, Remembered, Snapshot,
                   Store, StoreError, dumps, is_postgres_url, newer_schema, now, redacted, seat_key)

SCHEMA_LOCK = int.from_bytes(b"fairdice", "big")  # pg_advisory_xact_lock key while the schema is created
IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000  # a client gone quiet inside a transaction releases its locks

SCHEMA = """
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

_SNAPSHOT = ("SELECT game_id, created_at, opened, key_id, tokens, seed_sealed, seed_revealed, status, event_count, "
             "updated_at, ARRAY(SELECT body FROM events e WHERE e.game_id = g.game_id ORDER BY idx) "
             "FROM games g WHERE game_id = %s")
_RECALL = "SELECT fingerprint, status, body FROM idempotency WHERE game_id = %s AND seat = %s AND key = %s"


def _storable(text: str) -> bool:
    """PostgreSQL text cannot hold NUL: an id with one names no game (SQLite's answer too)."""
    return "\x00" not in text


@contextmanager
def _database_errors() -> Iterator[None]:
    try:
        yield
    except psycopg.OperationalError as exc:  # lock or pool timeout, lost connection, server shutting down
        raise Busy(str(exc).strip() or type(exc).__name__) from None


class PostgresStore(Store):
    def __init__(self, url: str, pool_size: int = 4, busy_timeout: float = 30.0):
        """`pool_size`: connections per process at most (one per serving thread is enough)."""
        if not is_postgres_url(url):
            raise ValueError(f"not a PostgreSQL URL (postgresql://...): {redacted(url)!r}")
        self.url = url
        self.pool_size = max(1, pool_size)
        self.busy_timeout = busy_timeout
        self._pool_lock = threading.Lock()
        self._pool_of: tuple[int, ConnectionPool] | None = None
        self._inherited: list[ConnectionPool] = []  # a parent process's pool: its sockets are not ours to close
        self._create_schema()

    def __str__(self) -> str:
        return f"PostgreSQL {redacted(self.url)}"

    # --- schema and connections ---------------------------------------------------

    def _create_schema(self) -> None:
        try:
            with psycopg.connect(self.url, connect_timeout=max(2, round(self.busy_timeout))) as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                if conn.execute("SELECT to_regclass('fairdice_schema')").fetchone()[0] is None:
                    conn.execute(SCHEMA)
                    conn.execute("INSERT INTO fairdice_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
                    return
                found = conn.execute("SELECT max(version) FROM fairdice_schema").fetchone()[0]
                if found is None:
                    raise StoreError("the table fairdice_schema is empty: this database's schema version is lost")
                if found > SCHEMA_VERSION:
                    raise newer_schema(found)
        except psycopg.Error as exc:
            raise StoreError(f"cannot use the PostgreSQL database {redacted(self.url)}: {exc}") from None

    def _configure(self, conn: psycopg.Connection) -> None:
        conn.execute("SELECT set_config('lock_timeout', %s, false), "
                     "set_config('idle_in_transaction_session_timeout', %s, false)",
                     (f"{round(self.busy_timeout * 1000)}ms", f"{IDLE_IN_TRANSACTION_TIMEOUT_MS}ms"))

    def _pool(self) -> ConnectionPool:
        made = self._pool_of
        if made is not None and made[0] == os.getpid():
            return made[1]
        with self._pool_lock:
            if self._pool_of is None or self._pool_of[0] != os.getpid():
                if self._pool_of is not None:
                    self._inherited.append(self._pool_of[1])
                pool = ConnectionPool(self.url, min_size=1, max_size=self.pool_size, open=True, name="fairdice",
                                      timeout=self.busy_timeout, kwargs={"autocommit": True},
                                      configure=self._configure, check=ConnectionPool.check_connection)
                self._pool_of = (os.getpid(), pool)
            return self._pool_of[1]

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        with _database_errors(), self._pool().connection() as conn:
            yield conn

    def _one(self, sql: str, args: tuple):
        with self._connection() as conn:
            return conn.execute(sql, args).fetchone()

    def close(self) -> None:
        with self._pool_lock:
            if self._pool_of is not None and self._pool_of[0] == os.getpid():
                self._pool_of[1].close()
            self._pool_of = None

    # --- reading ------------------------------------------------------------------

    def snapshot(self, game_id: str) -> Snapshot | None:
        if not _storable(game_id):
            return None
        row = self._one(_SNAPSHOT, (game_id,))
        if row is None:
            return None
        *columns, bodies = row
        game_id, created_at, opened, key_id, tokens, sealed, revealed, status, count, updated_at = columns
        record = GameRecord(game_id=game_id, opened=json.loads(opened), key_id=key_id, tokens=json.loads(tokens),
                            seed_sealed=bytes(sealed) if sealed is not None else None, seed_revealed=revealed,
                            status=status, event_count=count, created_at=created_at, updated_at=updated_at)
        if len(bodies) != count:
            raise StoreError(f"game {game_id}: {len(bodies)} events stored, {count} counted")
        return Snapshot(record, [json.loads(body) for body in bodies])

    def final_log(self, game_id: str) -> str | None:
        row = self._one("SELECT final_log FROM games WHERE game_id = %s", (game_id,)) if _storable(game_id) else None
        return row[0] if row else None

    def event_count(self, game_id: str) -> int | None:
        row = self._one("SELECT event_count FROM games WHERE game_id = %s", (game_id,)) if _storable(game_id) else None
        return row[0] if row else None

    def recall(self, game_id: str, seat: int | None, key: str) -> Remembered | None:
        if not (_storable(game_id) and _storable(key)):
            return None
        row = self._one(_RECALL, (game_id, seat_key(seat), key))
        return Remembered(*row) if row else None

    # --- writing ------------------------------------------------------------------

    def create_game(self, record: GameRecord) -> None:
        created = now()
        try:
            with self._connection() as conn:
                conn.execute("INSERT INTO games (game_id, created_at, updated_at, opened, key_id, tokens, "
                             "seed_sealed, seed_revealed, status, event_count) "
                             "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 0)",
                             (record.game_id, created, created, dumps(record.opened), record.key_id,
                              dumps(record.tokens), record.seed_sealed, record.seed_revealed, record.status))
        except errors.UniqueViolation:
            raise DuplicateGame(record.game_id) from None
        except (errors.IntegrityError, errors.DataError) as exc:
            raise StoreError(f"game {record.game_id!r} refused: {str(exc).strip()}") from None
        record.created_at = record.updated_at = created

    def append(self, game_id, expected_count, events, status, reveal=None, remember=None):
        if not _storable(game_id):
            raise GameNotFound(game_id)
        with self._connection() as conn, conn.transaction():
            row = conn.execute("SELECT event_count FROM games WHERE game_id = %s FOR UPDATE", (game_id,)).fetchone()
            if remember is not None:
                answered = conn.execute(_RECALL, (game_id, seat_key(remember.seat), remember.key)).fetchone()
                if answered is not None:
                    return Remembered(*answered)  # nothing was written: the transaction only held a lock
            if row is None:
                raise GameNotFound(game_id)
            if row[0] != expected_count:
                raise Conflict(f"game {game_id} has {row[0]} events, not {expected_count}")
            self._write(conn, game_id, expected_count, events, status, reveal, remember)
        return None

    @staticmethod
    def _write(conn, game_id, expected_count, events, status, reveal, remember) -> None:
        written = now()
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO events (game_id, idx, body) VALUES (%s, %s, %s)",
                            [(game_id, expected_count + i, dumps(e)) for i, e in enumerate(events)])
        count = expected_count + len(events)
        if reveal is None:
            conn.execute("UPDATE games SET event_count = %s, status = %s, updated_at = %s WHERE game_id = %s",
                         (count, status, written, game_id))
        else:
            conn.execute("UPDATE games SET event_count = %s, status = %s, updated_at = %s, seed_sealed = NULL, "
                         "seed_revealed = %s, final_log = %s WHERE game_id = %s",
                         (count, status, written, reveal[0], reveal[1], game_id))
        if remember is not None:
            conn.execute("INSERT INTO idempotency (game_id, seat, key, fingerprint, status, body, created_at) "
                         "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                         (game_id, seat_key(remember.seat), remember.key, remember.fingerprint, remember.status,
                          remember.body, written))
