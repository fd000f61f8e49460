"""PostgreSQL: one database behind many stateless `fairdice serve` processes.

- The same tables as SQLite's (games, events, idempotency, rate_limits), JSON
  kept as text byte for byte (jsonb would reorder keys).  They are created
  on first use, in one transaction under an advisory lock (servers starting
  together do not race), and `fairdice_schema` holds the schema version: an
  older database is migrated in place, one made by a newer fairdice refused.
- Events are append-only in the database: a trigger refuses UPDATE, DELETE
  and TRUNCATE on them.
- A command is one statement, `fairdice_append(...)`, a function that first
  locks its game's row (`SELECT ... FOR UPDATE`), then does what SQLite does
  under BEGIN IMMEDIATE: an answer already kept for its Idempotency-Key is
  returned; a game whose event count is no longer the one the command was
  computed from is a ConflictError; otherwise the events, the new count and the
  idempotency record are written together.  The lock serializes the commands
  of one game only, and under READ COMMITTED each statement after it sees
  what the previous holder committed, so a twin request waits for the first
  and gets its answer.  One round trip per command.
- A snapshot is one statement (the game row with an array of its events), so
  it is consistent without a transaction.  A rate-limit hit is one statement
  too (INSERT ... ON CONFLICT DO UPDATE ... WHERE ... RETURNING: the row lock
  makes it atomic across servers), on the database's clock.
- Every append that adds events then notifies channel APPENDS_CHANNEL with "<event count> <game id>", on
  the same connection right after its commit, in a transaction that does not wait for the disk (NOTIFY
  inside the append serialized every append's commit, flush included, across the cluster: 45-55% fewer
  appends a second from 8 threads, against 23-33% fewer this way); one connection per watching process
  LISTENs to it (`PostgresAppendFeed`, for api/watch.py), so a move made through one server wakes the
  players watching through another.
- Durable answers: every connection sets synchronous_commit (on by default,
  FAIRDICE_SYNCHRONOUS=FULL) whatever the server's own default, so a game's
  creation and a command's events are answered only once the database server
  has them on disk.  The server groups the WAL flushes of concurrent commits
  itself.
- Connections come from a psycopg_pool ConnectionPool opened on first use in
  each process (so never shared across a fork), checked before use.  Waiting
  longer than `busy_timeout` for a lock raises BusyError.  A database that cannot
  be reached is `UnavailableError("unreachable")`: then every call first tries a
  direct connection (at most every PROBE_EVERY seconds, failing fast in
  between), and the first that succeeds replaces the pool, so the store
  recovers as soon as the database is back, without waiting for the pool's
  back-off.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors
from psycopg_pool import ConnectionPool, PoolTimeout

from .postgres_sessions import PostgresSessions, create_session_tables
from .sessions_base import SESSION_TABLES, utc_day
from .base import (CLIENT_QUOTAS, CLIENT_QUOTAS_TABLE, FINAL_STATUSES, SCHEMA_VERSION, AppendFeed, BusyError,
                   ClientGames, ConflictError, DuplicateGameError, GameNotFoundError, GameRecord, GamesMarker, Progress,
                   RateWait, Remembered, Snapshot, Store, StoreError, UnavailableError, check_quota, check_rate, dumps,
                   is_postgres_url, loads_array, longest_wait, newer_schema, now, redacted, seat_key)

SCHEMA_LOCK = int.from_bytes(b"fairdice", "big")  # pg_advisory_xact_lock key while the schema is created
IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000  # a client gone quiet inside a transaction releases its locks
CONNECT_TIMEOUT = 5  # seconds to reach the database (and to wait for a free connection of the pool)
PROBE_EVERY = 0.5  # seconds between tries to reach a database found unreachable (calls between fail at once)
PRUNE_BATCH = 1000
# FAIRDICE_SYNCHRONOUS as PostgreSQL's synchronous_commit: on, a commit waits until the server has it on disk
SYNCHRONOUS_COMMIT = {"FULL": "on", "EXTRA": "on", "NORMAL": "off", "OFF": "off"}
APPENDS_CHANNEL = "fairdice_appends"  # NOTIFY "<event count> <game id>" after each append that added events

SCHEMA_V1 = """
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
INSERT INTO fairdice_schema (version) VALUES (1);
"""

# Version 2: who created a game, rate limits, the indexes of timeouts, quotas, key checks and pruning (only
# running games in the games_running ones, by columns an ordinary append does not change), and the append.
APPEND_FUNCTION = """
CREATE OR REPLACE FUNCTION fairdice_append(p_game text, p_expected integer, p_bodies text[], p_status text,
                                           p_now text, p_seed text, p_log text, p_seat integer, p_key text,
                                           p_fingerprint text, p_answer_status integer, p_answer text)
RETURNS TABLE (outcome text, found integer, fingerprint text, status integer, body text)
LANGUAGE plpgsql AS $$
DECLARE
    v_count integer;
    v_kept record;
BEGIN
    SELECT g.event_count INTO v_count FROM games g WHERE g.game_id = p_game FOR UPDATE;
    IF p_key IS NOT NULL THEN
        SELECT i.fingerprint, i.status, i.body INTO v_kept FROM idempotency i
         WHERE i.game_id = p_game AND i.seat = p_seat AND i.key = p_key;
        IF FOUND THEN
            RETURN QUERY SELECT 'answered'::text, v_count, v_kept.fingerprint, v_kept.status, v_kept.body;
            RETURN;
        END IF;
    END IF;
    IF v_count IS NULL THEN
        RETURN QUERY SELECT 'missing'::text, NULL::integer, NULL::text, NULL::integer, NULL::text;
        RETURN;
    END IF;
    IF v_count <> p_expected THEN
        RETURN QUERY SELECT 'conflict'::text, v_count, NULL::text, NULL::integer, NULL::text;
        RETURN;
    END IF;
    INSERT INTO events (game_id, idx, body)
        SELECT p_game, p_expected + t.n - 1, t.b FROM unnest(p_bodies) WITH ORDINALITY AS t(b, n);
    IF p_seed IS NULL THEN
        UPDATE games SET event_count = p_expected + cardinality(p_bodies), status = p_status, updated_at = p_now
         WHERE game_id = p_game;
    ELSE
        UPDATE games SET event_count = p_expected + cardinality(p_bodies), status = p_status, updated_at = p_now,
                         seed_sealed = NULL, seed_revealed = p_seed, final_log = p_log
         WHERE game_id = p_game;
    END IF;
    IF p_key IS NOT NULL THEN
        INSERT INTO idempotency (game_id, seat, key, fingerprint, status, body, created_at)
            VALUES (p_game, p_seat, p_key, p_fingerprint, p_answer_status, p_answer, p_now);
    END IF;
    RETURN QUERY SELECT 'appended'::text, p_expected + cardinality(p_bodies), NULL::text, NULL::integer, NULL::text;
END $$;
"""

# A version-n database becomes version n + 1 by MIGRATIONS[n], in the transaction that records the version.
MIGRATIONS = {1: [
    "ALTER TABLE games ADD COLUMN client text NOT NULL DEFAULT ''",
    "CREATE TABLE rate_limits (key text PRIMARY KEY, tat double precision NOT NULL)",
    "CREATE INDEX games_running_by_client ON games (client) WHERE seed_revealed IS NULL",
    "CREATE INDEX games_running_by_creation ON games (created_at) WHERE seed_revealed IS NULL",
    "CREATE INDEX games_by_key ON games (key_id)",
    "CREATE INDEX idempotency_by_age ON idempotency (created_at)",
    APPEND_FUNCTION,
]}

_UNFINISHED = f"seed_revealed IS NULL AND status NOT IN {FINAL_STATUSES!r}"
_SNAPSHOT = ("SELECT game_id, created_at, opened, key_id, tokens, seed_sealed, seed_revealed, status, event_count, "
             "updated_at, client, ARRAY(SELECT body FROM events e WHERE e.game_id = g.game_id ORDER BY idx) "
             "FROM games g WHERE game_id = %s")
_RECALL = "SELECT fingerprint, status, body FROM idempotency WHERE game_id = %s AND seat = %s AND key = %s"
_APPEND = "SELECT * FROM fairdice_append(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
# After an append that added events, on the same connection: its notification, in a transaction of its own that
# does not wait for its commit to reach the disk (NOTIFY holds a lock of the whole cluster until its transaction
# has committed; inside the append it held every other append's commit behind that append's flush)
_NOTIFY = f"SELECT set_config('synchronous_commit', 'off', true), pg_notify('{APPENDS_CHANNEL}', %s)"
_PROGRESS = "SELECT game_id, event_count, status FROM games WHERE game_id = ANY(%s)"
_DB_NOW = "extract(epoch from statement_timestamp())::float8"  # the database's clock: one for every server
# GCRA, as SQLite's store: refused, the row is left as it was (though locked until the statement ends).
_RATE_HIT = ("INSERT INTO rate_limits AS r (key, tat) VALUES (%(key)s, {now} + %(interval)s) ON CONFLICT (key) "
             "DO UPDATE SET tat = greatest(r.tat, {now}) + %(interval)s "
             "WHERE greatest(r.tat, {now}) - {now} <= %(tau)s RETURNING tat")
_RATE_TAT = "SELECT tat, {now} FROM rate_limits WHERE key = %(key)s"


def _storable(text: str) -> bool:
    """PostgreSQL text cannot hold NUL: an id with one names no game (SQLite's answer too)."""
    return "\x00" not in text


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _translated(exc: psycopg.Error) -> StoreError:
    """A psycopg error as the store's: BusyError (a lock or the server's own timeout), UnavailableError, StoreError."""
    if isinstance(exc, (errors.LockNotAvailable, errors.QueryCanceled, errors.DeadlockDetected,
                        errors.SerializationFailure, errors.TooManyConnections)):
        return BusyError(_first_line(exc))
    if isinstance(exc, errors.DiskFull):
        return UnavailableError("disk_full", f"the database server: {_first_line(exc)}")
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return UnavailableError("read_only", f"the database server: {_first_line(exc)}")
    if isinstance(exc, psycopg.OperationalError):  # the connection lost, the server shutting down or starting
        return UnavailableError("unreachable", _first_line(exc))
    return StoreError(f"the database refused: {_first_line(exc)}")


class PostgresStore(PostgresSessions, Store):  # (sessions of SPEC §10: api/stores/postgres_sessions.py)
    """The `Store` contract on one PostgreSQL database shared by many stateless servers.  A command is one round
    trip (`fairdice_append`, which locks its game's row), so correctness rests on the database's locks and
    transactions, not on any process; the pool is replaced and the database probed again when it goes out of
    reach, so a server outlives a database restart."""
    def __init__(self, url: str, pool_size: int = 4, busy_timeout: float = 30.0, synchronous: str = "FULL",
                 marker: GamesMarker | None = None):
        """`pool_size`: connections per process at most (one per thread that uses the store is enough).
        `synchronous`: FULL or EXTRA (a commit returns once the database server has it on disk:
        synchronous_commit on, set on every connection whatever the server's default), NORMAL or OFF
        (synchronous_commit off: survives a crash of the database server, not of its machine).  `marker`:
        written with the first game stored (api.stores.base.GamesMarker)."""
        if not is_postgres_url(url):
            raise ValueError(f"not a PostgreSQL URL (postgresql://...): {redacted(url)!r}")
        if synchronous.upper() not in SYNCHRONOUS_COMMIT:
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.synchronous_commit = SYNCHRONOUS_COMMIT[synchronous.upper()]
        self.marker = marker
        self.url = url
        self.pool_size = max(1, pool_size)
        self.busy_timeout = busy_timeout
        self.connect_timeout = min(CONNECT_TIMEOUT, max(1, round(busy_timeout)))
        self._pool_lock = threading.Lock()
        self._pool_of: tuple[int, ConnectionPool] | None = None
        self._inherited: list[ConnectionPool] = []  # a parent process's pool: its sockets are not ours to close
        self._down: tuple[float, UnavailableError] | None = None  # (monotonic, why) once the database is out of reach
        self._set_up()

    def __str__(self) -> str:
        return f"PostgreSQL {redacted(self.url)}"

    # --- schema and connections ---------------------------------------------------

    def _set_up(self) -> None:
        """Make the schema, or migrate an older one, in one transaction under an advisory lock."""
        try:
            with psycopg.connect(self.url, connect_timeout=self.connect_timeout) as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                if conn.execute("SELECT to_regclass('fairdice_schema')").fetchone()[0] is None:
                    conn.execute(SCHEMA_V1)
                found = conn.execute("SELECT max(version) FROM fairdice_schema").fetchone()[0]
                if found is None:
                    raise StoreError("the table fairdice_schema is empty: this database's schema version is lost")
                if found > SCHEMA_VERSION:
                    raise newer_schema(found)
                for version in range(found, SCHEMA_VERSION):
                    for statement in MIGRATIONS[version]:
                        conn.execute(statement)
                if found < SCHEMA_VERSION:
                    conn.execute("UPDATE fairdice_schema SET version = %s", (SCHEMA_VERSION,))
                if conn.execute("SELECT to_regclass(%s)", (CLIENT_QUOTAS_TABLE,)).fetchone()[0] is None:
                    conn.execute(CLIENT_QUOTAS)
                create_session_tables(conn)
        except psycopg.OperationalError as exc:
            raise UnavailableError("unreachable", f"{redacted(self.url)}: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            raise StoreError(f"cannot use the PostgreSQL database {redacted(self.url)}: {_first_line(exc)}") from None

    def _configure(self, conn: psycopg.Connection) -> None:
        conn.execute("SELECT set_config('lock_timeout', %s, false), "
                     "set_config('idle_in_transaction_session_timeout', %s, false), "
                     "set_config('synchronous_commit', %s, false)",
                     (f"{round(self.busy_timeout * 1000)}ms", f"{IDLE_IN_TRANSACTION_TIMEOUT_MS}ms",
                      self.synchronous_commit))

    def _new_pool(self) -> ConnectionPool:
        return ConnectionPool(self.url, min_size=1, max_size=self.pool_size, open=True, name="fairdice",
                              timeout=self.connect_timeout, configure=self._configure,
                              kwargs={"autocommit": True, "connect_timeout": self.connect_timeout},
                              check=ConnectionPool.check_connection)

    def _pool(self) -> ConnectionPool:
        made = self._pool_of
        if made is not None and made[0] == os.getpid():
            return made[1]
        with self._pool_lock:
            if self._pool_of is None or self._pool_of[0] != os.getpid():
                if self._pool_of is not None:
                    self._inherited.append(self._pool_of[1])
                self._pool_of = (os.getpid(), self._new_pool())
            return self._pool_of[1]

    def _replace_pool(self) -> None:
        """A fresh pool (the old one may be backing off from a database that is back now)."""
        with self._pool_lock:
            old = self._pool_of
            self._pool_of = (os.getpid(), self._new_pool())
        if old is not None and old[0] == os.getpid():
            old[1].close(timeout=0)

    def _probe(self) -> None:
        """Reach the database directly (not through the pool); UnavailableError if it cannot be reached."""
        try:
            psycopg.connect(self.url, connect_timeout=self.connect_timeout, autocommit=True).close()
        except psycopg.Error as exc:
            fault = UnavailableError("unreachable", f"{redacted(self.url)}: {_first_line(exc)}")
            self._down = (time.monotonic(), fault)
            raise fault from None

    def _recover(self) -> None:
        """Once the database was found out of reach: fail at once, or (every PROBE_EVERY s) try it again."""
        down = self._down
        if down is None:
            return
        if time.monotonic() - down[0] < PROBE_EVERY:
            raise down[1]
        self._probe()
        self._replace_pool()
        self._down = None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        self._recover()
        try:
            with self._pool().connection() as conn:
                yield conn
        except PoolTimeout:
            self._probe()  # out of reach: UnavailableError; else the pool was stuck or every connection busy
            self._replace_pool()
            raise BusyError(f"no database connection was free within {self.connect_timeout} s") from None
        except (errors.IntegrityError, errors.DataError):
            raise  # the request's own fault: the caller says what it means
        except psycopg.Error as exc:
            fault = _translated(exc)
            if isinstance(fault, UnavailableError) and fault.reason == "unreachable":
                self._down = (time.monotonic() - PROBE_EVERY, fault)  # the next call tries again at once
            raise fault from None

    def _rows(self, sql: str, args=()) -> list:
        with self._connection() as conn:
            return conn.execute(sql, args).fetchall()

    def close(self) -> None:
        with self._pool_lock:
            if self._pool_of is not None and self._pool_of[0] == os.getpid():
                self._pool_of[1].close()
            self._pool_of = None

    # --- reading ------------------------------------------------------------------

    def snapshot(self, game_id: str) -> Snapshot | None:
        if not _storable(game_id):
            return None
        rows = self._rows(_SNAPSHOT, (game_id,))
        if not rows:
            return None
        *columns, bodies = rows[0]
        game_id, created_at, opened, key_id, tokens, sealed, revealed, status, count, updated_at, client = columns
        opened, tokens = loads_array([opened, tokens], f"game {game_id}")
        record = GameRecord(game_id=game_id, opened=opened, key_id=key_id, tokens=tokens,
                            seed_sealed=bytes(sealed) if sealed is not None else None, seed_revealed=revealed,
                            status=status, event_count=count, created_at=created_at, updated_at=updated_at,
                            client=client)
        if len(bodies) != count:
            raise StoreError(f"game {game_id}: {len(bodies)} events stored, {count} counted")
        return Snapshot(record, loads_array(bodies, f"game {game_id}"))

    def _value(self, sql: str, args: tuple):
        rows = self._rows(sql, args)
        return rows[0][0] if rows else None

    def final_log(self, game_id: str) -> str | None:
        return self._value("SELECT final_log FROM games WHERE game_id = %s", (game_id,)) if _storable(game_id) else None

    def event_count(self, game_id: str) -> int | None:
        return self._value("SELECT event_count FROM games WHERE game_id = %s", (game_id,)) if _storable(game_id) else None

    def progress(self, game_ids: list[str]) -> dict[str, Progress]:
        rows = self._rows(_PROGRESS, ([game_id for game_id in game_ids if _storable(game_id)],))
        return {game_id: Progress(count, status) for game_id, count, status in rows}

    def append_feed(self) -> AppendFeed:
        return PostgresAppendFeed(self)

    def recall(self, game_id: str, seat: int | None, key: str) -> Remembered | None:
        if not (_storable(game_id) and _storable(key)):
            return None
        rows = self._rows(_RECALL, (game_id, seat_key(seat), key))
        return Remembered(*rows[0]) if rows else None

    def unfinished_count(self, client: str) -> int:
        if not _storable(client):
            return 0
        return self._value(f"SELECT count(*) FROM games WHERE client = %s AND {_UNFINISHED}", (client,))

    def client_games(self, client: str) -> ClientGames:
        if not _storable(client):
            return ClientGames(0, None, None)
        (count, idle_since, quota), = self._rows(
            f"SELECT count(*), min(updated_at), (SELECT max_unfinished FROM {CLIENT_QUOTAS_TABLE} WHERE client = %(c)s) "
            f"FROM games WHERE client = %(c)s AND {_UNFINISHED}", {"c": client})
        return ClientGames(count, idle_since, quota)

    def set_client_quota(self, client: str, max_unfinished: int | None) -> None:
        if not _storable(client):
            raise StoreError("a client cannot hold NUL")
        with self._connection() as conn:
            if check_quota(max_unfinished) is None:
                conn.execute(f"DELETE FROM {CLIENT_QUOTAS_TABLE} WHERE client = %s", (client,))
            else:
                conn.execute(f"INSERT INTO {CLIENT_QUOTAS_TABLE} (client, max_unfinished) VALUES (%(c)s, %(n)s) "
                             "ON CONFLICT (client) DO UPDATE SET max_unfinished = %(n)s",
                             {"c": client, "n": max_unfinished})

    def client_quotas(self) -> dict[str, int]:
        return dict(self._rows(f"SELECT client, max_unfinished FROM {CLIENT_QUOTAS_TABLE} ORDER BY client"))

    def stale_games(self, idle_since: str, limit: int = 100) -> list[str]:
        rows = self._rows(f"SELECT game_id FROM games WHERE created_at < %(t)s AND updated_at < %(t)s AND "
                          f"{_UNFINISHED} ORDER BY updated_at, game_id LIMIT %(n)s", {"t": idle_since, "n": limit})
        return [game_id for (game_id,) in rows]

    def key_ids(self) -> set[str]:
        return {key_id for (key_id,) in self._rows("SELECT DISTINCT key_id FROM games")}

    # --- writing ------------------------------------------------------------------

    def create_game(self, record: GameRecord) -> None:
        created = now()
        try:
            with self._connection() as conn:
                conn.execute("INSERT INTO games (game_id, created_at, updated_at, opened, key_id, tokens, "
                             "seed_sealed, seed_revealed, status, client, event_count) "
                             "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 0)",
                             (record.game_id, created, created, dumps(record.opened), record.key_id,
                              dumps(record.tokens), record.seed_sealed, record.seed_revealed, record.status,
                              record.client))
        except errors.UniqueViolation:
            raise DuplicateGameError(record.game_id) from None
        except (errors.IntegrityError, errors.DataError) as exc:
            raise StoreError(f"game {record.game_id!r} refused: {_first_line(exc)}") from None
        record.created_at = record.updated_at = created
        if self.marker is not None:
            self.marker.mark(str(self))

    def append(self, game_id, expected_count, events, status, reveal=None, remember=None):
        if not _storable(game_id):
            raise GameNotFoundError(game_id)
        if remember is not None and not _storable(remember.key):
            raise StoreError(f"game {game_id}: an Idempotency-Key cannot hold NUL")
        seed, log = reveal if reveal is not None else (None, None)
        kept = (None,) * 5 if remember is None else (seat_key(remember.seat), remember.key, remember.fingerprint,
                                                     remember.status, remember.body)
        args = (game_id, expected_count, [dumps(e) for e in events], status, now(), seed, log, *kept)
        try:
            with self._connection() as conn:
                (outcome, found, fingerprint, answer_status, body), = conn.execute(_APPEND, args).fetchall()
                if outcome == "appended":
                    _notify_append(conn, game_id, found)
        except (errors.IntegrityError, errors.DataError) as exc:
            raise StoreError(f"game {game_id}: events refused: {_first_line(exc)}") from None
        if outcome == "answered":
            return Remembered(fingerprint, answer_status, body)
        if outcome == "missing":
            raise GameNotFoundError(game_id)
        if outcome == "conflict":
            raise ConflictError(f"game {game_id} has {found} events, not {expected_count}")
        return None

    def rate_hit(self, key: str, interval: float, burst: int, now: float | None = None) -> float:
        tau = check_rate(interval, burst)
        clock = _DB_NOW if now is None else "%(now)s::float8"
        args = {"key": key, "now": None if now is None else float(now), "interval": float(interval), "tau": tau}
        with self._connection() as conn:
            if conn.execute(_RATE_HIT.format(now=clock), args).fetchall():
                return 0.0
            found = conn.execute(_RATE_TAT.format(now=clock), args).fetchall()
        if not found:  # pruned meanwhile: nothing limits it any more
            return 1e-6
        (tat, at), = found
        return max(tat - at - tau, 1e-6)

    def rate_hits(self, hits: list[tuple[str, float, int]], now: float | None = None) -> float:
        clock = _DB_NOW if now is None else "%(now)s::float8"
        # taken in key order, so that two transactions locking the same rows never wait for each other in a cycle
        args = sorted(({"key": key, "now": None if now is None else float(now), "interval": float(interval),
                        "tau": check_rate(interval, burst)} for key, interval, burst in hits), key=lambda a: a["key"])
        if not args:
            return RateWait(0.0)
        waits = []
        with self._connection() as conn, conn.transaction():
            for arg in args:
                if conn.execute(_RATE_HIT.format(now=clock), arg).fetchall():
                    continue
                found = conn.execute(_RATE_TAT.format(now=clock), arg).fetchall()
                wait = found[0][0] - found[0][1] - arg["tau"] if found else 0.0  # pruned meanwhile: no limit
                waits.append((arg["key"], max(wait, 1e-6)))
            if waits:
                raise psycopg.Rollback()  # refused: none of the hits is recorded
        return longest_wait(waits)

    # --- upkeep -------------------------------------------------------------------

    def prune(self, idempotency_before: str, now: float | None = None) -> dict:
        clock = _DB_NOW if now is None else "%(bound)s::float8"
        return {
            "idempotency_records": self._delete_in_batches(
                "DELETE FROM idempotency WHERE ctid IN (SELECT ctid FROM idempotency WHERE created_at < %(bound)s "
                "LIMIT %(n)s)", idempotency_before),
            "session_idempotency_records": self._delete_in_batches(
                "DELETE FROM session_idempotency WHERE ctid IN (SELECT ctid FROM session_idempotency "
                "WHERE created_at < %(bound)s LIMIT %(n)s)", idempotency_before),
            "session_roll_counts": self._delete_in_batches(  # the days before today count against nothing
                "DELETE FROM session_rolls_by_day WHERE ctid IN (SELECT ctid FROM session_rolls_by_day "
                "WHERE day < %(bound)s LIMIT %(n)s)", utc_day(now)),
            "rate_limits": self._delete_in_batches(
                f"DELETE FROM rate_limits WHERE ctid IN (SELECT ctid FROM rate_limits WHERE tat < {clock} "
                "LIMIT %(n)s)", now),
            "wal_bytes": None,  # the server's own WAL is its administrator's
        }

    def _delete_in_batches(self, sql: str, bound) -> int:
        total = 0
        while True:
            with self._connection() as conn:
                deleted = conn.execute(sql, {"bound": bound, "n": PRUNE_BATCH}).rowcount
            total += deleted
            if deleted < PRUNE_BATCH:
                return total

    def stats(self) -> dict:
        (games, unfinished, events, idempotency, rate_limits, quotas), = self._rows(
            f"SELECT count(*), count(*) FILTER (WHERE {_UNFINISHED}), coalesce(sum(event_count), 0)::bigint, "
            f"(SELECT count(*) FROM idempotency), (SELECT count(*) FROM rate_limits), "
            f"(SELECT count(*) FROM {CLIENT_QUOTAS_TABLE}) FROM games")
        tables = dict(self._rows(
            "SELECT t, pg_total_relation_size(t::regclass) FROM unnest(%s::text[]) AS t ORDER BY t",
            (["fairdice_schema", "games", "events", "idempotency", "rate_limits", CLIENT_QUOTAS_TABLE,
              *SESSION_TABLES],)))
        return {"backend": "postgresql", "games": games, "unfinished": unfinished, "events": events,
                "idempotency_records": idempotency, "rate_limits": rate_limits, "client_quotas": quotas,
                "bytes": sum(tables.values()), "table_bytes": tables, "wal_bytes": None}

    def health(self) -> None:
        """The database answers, and takes writes (not a standby, not read-only)."""
        (recovering, read_only), = self._rows("SELECT pg_is_in_recovery(), current_setting('transaction_read_only')")
        if recovering or read_only == "on":
            raise UnavailableError("read_only", f"{redacted(self.url)} is {'a standby' if recovering else 'read-only'}")


class PostgresAppendFeed(AppendFeed):
    """LISTEN on APPENDS_CHANNEL over a connection of its own (not the pool's: it stays open for as long as
    the feed, one per watching process).  A lost connection is UnavailableError; the next call connects again
    and answers None, since notifications sent meanwhile are lost."""

    def __init__(self, store: PostgresStore):
        self.store = store
        self.conn: psycopg.Connection | None = None

    def wait(self, timeout: float) -> dict[str, int] | None:
        try:
            if self.conn is None:
                self.conn = psycopg.connect(self.store.url, autocommit=True,
                                            connect_timeout=self.store.connect_timeout)
                self.conn.execute(f"LISTEN {APPENDS_CHANNEL}")
                return None
            appended: dict[str, int] = {}
            for note in self.conn.notifies(timeout=timeout, stop_after=1):
                _note_append(appended, note.payload)
            if appended:  # and whatever came with it, without waiting
                for note in self.conn.notifies(timeout=0):
                    _note_append(appended, note.payload)
            return appended
        except psycopg.Error as exc:
            self.close()
            raise UnavailableError("unreachable", f"{redacted(self.store.url)}: {_first_line(exc)}") from None

    def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            try:
                conn.close()
            except psycopg.Error:
                pass


def _notify_append(conn: psycopg.Connection, game_id: str, count: int) -> None:
    """Tell the listening watchers; the append is committed whatever happens here: a notification lost (the
    connection broke in between) only keeps them waiting until their long poll ends and asks again."""
    try:
        conn.execute(_NOTIFY, (f"{count} {game_id}",))
    except psycopg.Error:
        pass


def _note_append(appended: dict[str, int], payload: str) -> None:
    """Record "<event count> <game id>" (the latest count of a game wins; anything else on the channel is
    not an append's)."""
    count, _, game_id = payload.partition(" ")
    if count.isdigit() and game_id:
        appended[game_id] = max(int(count), appended.get(game_id, 0))
