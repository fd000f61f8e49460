"""The store contract: SQLiteStore and PostgresStore held to the same behaviour (api/stores/base.py's `Store`).

Every test here runs once per store (`backend`): the PostgreSQL runs use the run's own server (the
`postgres_url` fixture; marked e2e), each test in a fresh schema.  What is checked is what api/games.py
relies on: a game reads back as it was stored; events are appended only after the history a command was
computed from (one winner per position however many threads or stores race); a key's answer is kept in
the same transaction and returned to its twins; the database itself refuses to change or delete events;
seeds stay sealed until the reveal and tokens are only hashes; snapshots are consistent while a game grows;
the schema is made on first use and a newer one refused; a write blocked past the busy timeout is Busy.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest

from api import create_app
from api.config import settings
from api.store import (SCHEMA_VERSION, Busy, Conflict, DuplicateGame, GameNotFound, GameRecord, Remember, Remembered,
                       SQLiteStore, StoreError, describe_db)
from fairdice.edges.client import verify_log
from test_api_helpers import play_turn

HUMAN = {"type": "human", "name": "ann"}
GREEDY = {"type": "bot", "bot": "greedy"}
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


def dump(backend) -> bytes:
    """Everything the database holds in its three tables, as bytes (text UTF-8, blobs as they are)."""
    cells = [cell for table in ("games", "events", "idempotency")
             for row in backend.execute(f"SELECT * FROM {table}") for cell in row]
    return b"\x1e".join(bytes(c) if isinstance(c, (bytes, memoryview)) else str(c).encode() for c in cells)


def race(n: int, work):
    """Run work(i) for i in 0..n-1 in n threads started together; each result, or the exception it raised."""
    barrier = threading.Barrier(n)

    def run(i):
        barrier.wait()
        try:
            return work(i)
        except Exception as exc:  # noqa: BLE001 - a result to count, not an error of the test
            return exc

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


# --- games ---------------------------------------------------------------------------------------

def test_a_new_game_reads_back_as_created(store):
    made = record()
    store.create_game(made)
    snap = store.snapshot(made.game_id)
    assert snap.events == [] and snap.record.event_count == 0 and store.event_count(made.game_id) == 0
    assert snap.record == made  # every field, the sealed bytes exactly, created_at as create_game set it
    assert time.strptime(made.created_at, "%Y-%m-%dT%H:%M:%SZ") and made.updated_at == made.created_at
    assert store.final_log(made.game_id) is None


def test_a_taken_game_id_is_refused_and_the_first_game_kept(store):
    first = record("same-id")
    store.create_game(first)
    with pytest.raises(DuplicateGame):
        store.create_game(record("same-id", key_id="other", status="playing"))
    assert store.snapshot("same-id").record == first


@pytest.mark.parametrize("sealed, revealed", [(None, None), (SEALED, "ab" * 32)], ids=["neither", "both"])
def test_a_game_holds_its_seed_either_sealed_or_revealed(store, sealed, revealed):
    with pytest.raises(StoreError) as refused:
        store.create_game(record("bad-seed", seed_sealed=sealed, seed_revealed=revealed))
    assert not isinstance(refused.value, DuplicateGame)  # a refused record, not a taken id
    assert store.snapshot("bad-seed") is None


@pytest.mark.parametrize("game_id", ["nope", "", "a\x00b", "ü 🎲", "x" * 300],
                         ids=["unknown", "empty", "nul", "non-ascii", "long"])
def test_an_unknown_game_reads_as_absent(store, game_id):
    store.create_game(record())
    assert store.snapshot(game_id) is None and store.final_log(game_id) is None
    assert store.event_count(game_id) is None and store.recall(game_id, 0, "k") is None
    with pytest.raises(GameNotFound):
        store.append(game_id, 0, [event(0)], "playing")
    with pytest.raises(GameNotFound):
        store.append(game_id, 0, [event(0)], "playing", remember=Remember(0, "k", "f" * 64, 200, "{}"))


def test_a_game_id_with_a_nul_is_not_found_over_http(backend, tmp_path):
    client = create_app(backend.config(tmp_path), store=backend.open()).test_client()
    assert client.get("/v1/games/a%00b").status_code == 404
    assert client.post("/v1/games/a%00b/roll", json={}, headers={"Authorization": "Bearer t"}).status_code == 404


# --- compare-and-append ------------------------------------------------------------------------------

def test_events_are_appended_only_after_the_expected_history(store):
    made = record()
    store.create_game(made)
    gid = made.game_id
    assert store.append(gid, 0, [event(0)], "playing") is None
    with pytest.raises(Conflict):  # computed on the history before event 0
        store.append(gid, 0, [event(99)], "playing")
    with pytest.raises(Conflict):  # computed on a history the store never had
        store.append(gid, 2, [event(99)], "playing")
    assert store.append(gid, 1, [event(1), event(2)], "finished") is None
    snap = store.snapshot(gid)
    assert snap.events == [event(0), event(1), event(2)]
    assert snap.record.event_count == store.event_count(gid) == 3 and snap.record.status == "finished"


def test_an_append_marks_when_the_game_last_moved(store):
    """`updated_at` (what a move timeout counts from) moves with every append and only then."""
    made = record()
    store.create_game(made)
    time.sleep(1.05)  # the stamps have whole seconds
    with pytest.raises(Conflict):
        store.append(made.game_id, 1, [event(0)], "playing")
    assert store.snapshot(made.game_id).record.updated_at == made.created_at
    store.append(made.game_id, 0, [event(0)], "playing")
    moved = store.snapshot(made.game_id).record.updated_at
    assert time.strptime(moved, "%Y-%m-%dT%H:%M:%SZ") and moved > made.created_at


def test_a_refused_append_writes_nothing(store):
    made = record()
    store.create_game(made)
    gid = made.game_id
    store.append(gid, 0, [event(0)], "playing")
    before = store.snapshot(gid)
    with pytest.raises(Conflict):
        store.append(gid, 0, [event(9)], "finished", reveal=("ab" * 32, '{"log":1}'),
                     remember=Remember(0, "k", "f" * 64, 200, '{"x":1}'))
    assert store.snapshot(gid) == before and store.recall(gid, 0, "k") is None and store.final_log(gid) is None


def test_event_bodies_round_trip_exactly(store):
    made = record()
    store.create_game(made)
    bodies = [{"type": "client_seed", "seat": 0, "client_seed": "ü 🎲 \u0000 \\ \" '; DROP TABLE events; --"},
              {"type": "roll", "dice": [1, 6, 6, 2, 5], "big": 2**53 - 1, "neg": -(2**53 - 1), "nested": {"a": [[], {}]}},
              {"type": "score", "empty": "", "null": None, "bool": True, "line": "a\nb\tc\r"}]
    store.append(made.game_id, 0, bodies, "playing")
    assert store.append(made.game_id, 3, [], "playing") is None  # nothing to add is still a valid command
    assert store.snapshot(made.game_id).events == bodies


def test_one_append_wins_each_position_among_racing_threads(backend):
    """8 threads on two stores (two servers) append at every position at once: exactly one wins each."""
    stores = [backend.open(), backend.open()]
    made = record()
    stores[0].create_game(made)
    positions, threads = 6, 8
    for position in range(positions):
        results = race(threads, lambda i: stores[i % 2].append(made.game_id, position, [event(position, by=i)],
                                                               "playing"))
        winners = [i for i, r in enumerate(results) if r is None]
        assert len(winners) == 1, results
        assert all(isinstance(r, Conflict) for i, r in enumerate(results) if i != winners[0]), results
        assert stores[1].snapshot(made.game_id).events[position] == event(position, by=winners[0])
    assert stores[0].event_count(made.game_id) == positions


def test_twin_requests_get_the_first_answer(backend):
    """8 retries of one command (one Idempotency-Key, computed on the same history) race on two stores:
    one appends, every other gets its answer back, not a Conflict, and nothing else is written."""
    stores = [backend.open(), backend.open()]
    made = record()
    stores[0].create_game(made)
    stores[0].append(made.game_id, 0, [event(0)], "playing")
    results = race(8, lambda i: stores[i % 2].append(made.game_id, 1, [event(1, by=i)], "playing",
                                                     remember=Remember(0, "key", "f" * 64, 200, f'{{"by":{i}}}')))
    winner = [i for i, r in enumerate(results) if r is None]
    assert len(winner) == 1, results
    assert [r for r in results if r is not None] == [Remembered("f" * 64, 200, f'{{"by":{winner[0]}}}')] * 7
    assert stores[1].snapshot(made.game_id).events == [event(0), event(1, by=winner[0])]


# --- idempotency records ---------------------------------------------------------------------------

def test_an_answer_is_kept_per_game_seat_and_key(store):
    a, b = record(), record()
    store.create_game(a)
    store.create_game(b)
    kept = Remember(0, "key-1", "f" * 64, 200, '{"seat":0}')
    assert store.append(a.game_id, 0, [event(0)], "playing", remember=kept) is None
    assert store.recall(a.game_id, 0, "key-1") == Remembered("f" * 64, 200, '{"seat":0}')
    assert store.recall(a.game_id, 1, "key-1") is None and store.recall(a.game_id, None, "key-1") is None
    assert store.recall(a.game_id, 0, "key-2") is None and store.recall(b.game_id, 0, "key-1") is None
    operator = Remember(None, "key-1", "e" * 64, 200, '{"operator":true}')  # the operator's seat is its own
    assert store.append(a.game_id, 1, [event(1)], "playing", remember=operator) is None
    assert store.recall(a.game_id, None, "key-1") == Remembered("e" * 64, 200, '{"operator":true}')
    assert store.recall(a.game_id, 0, "key-1") == Remembered("f" * 64, 200, '{"seat":0}')


def test_an_answered_key_returns_its_answer_and_writes_nothing(store):
    made = record()
    store.create_game(made)
    gid = made.game_id
    kept = Remember(0, "k", "f" * 64, 200, '{"x":1}')
    store.append(gid, 0, [event(0)], "playing", remember=kept)
    before = store.snapshot(gid)
    again = Remember(0, "k", "0" * 64, 201, '{"other":2}')
    for expected in (1, 0):  # on the current history or an outdated one: the kept answer, not a Conflict
        assert store.append(gid, expected, [event(5)], "finished", reveal=("ab" * 32, "{}"),
                            remember=again) == Remembered("f" * 64, 200, '{"x":1}')
    assert store.snapshot(gid) == before and store.final_log(gid) is None


# --- what the database itself refuses ---------------------------------------------------------------

def test_the_database_refuses_to_change_or_delete_events(backend, store):
    made = record()
    store.create_game(made)
    store.append(made.game_id, 0, [event(0), event(1)], "playing")
    for sql in backend.destructive_statements():
        with pytest.raises(backend.Error, match="append-only"):
            backend.execute(sql, (made.game_id,) if "?" in sql else ())
    assert store.snapshot(made.game_id).events == [event(0), event(1)]


# --- seeds, the reveal and the final log ----------------------------------------------------------------

def test_the_reveal_replaces_the_sealed_seed_and_keeps_the_final_log(store):
    made = record()
    store.create_game(made)
    gid = made.game_id
    assert store.snapshot(gid).record.seed_sealed == SEALED and store.final_log(gid) is None
    store.append(gid, 0, [event(0)], "playing")
    assert store.final_log(gid) is None
    final_log = '{"format":"fairdice-log","seats":["ü 🎲"],"signature":"' + "5" * 128 + '"}'
    store.append(gid, 1, [{"type": "abandon", "seat": 0}], "abandoned", reveal=("cd" * 32, final_log))
    snap = store.snapshot(gid)
    assert snap.record.seed_sealed is None and snap.record.seed_revealed == "cd" * 32
    assert snap.record.status == "abandoned" and store.final_log(gid) == final_log  # the very same text


def test_seeds_stay_sealed_and_tokens_are_only_hashes(backend, tmp_path):
    """Through the app: the database never holds a token or an unrevealed seed, in any form."""
    app = create_app(backend.config(tmp_path), store=backend.open())
    client = app.test_client()
    created = client.post("/v1/games", json={"rules": "yacht", "seats": [HUMAN, GREEDY]}).get_json()
    gid, token = created["game_id"], created["tokens"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "mine"}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers={**auth, "Idempotency-Key": "r1"}).status_code == 200
    games = app.extensions["fairdice"]
    snap = games.store.snapshot(gid)
    seed = games._restore(snap.record, snap.events)._server_seed
    held = dump(backend)
    assert hashlib.sha256(token.encode()).hexdigest().encode() in held
    assert token.encode() not in held
    for secret in (seed, seed.hex().encode(), seed.hex().upper().encode()):
        assert secret not in held
    assert client.post(f"/v1/games/{gid}/abandon", headers=auth).get_json()["final"]["server_seed"] == seed.hex()
    assert seed.hex().encode() in dump(backend)  # revealed now, as the log says


# --- consistency, schema, timeouts ----------------------------------------------------------------

def test_snapshots_are_consistent_while_a_game_grows(backend):
    writer, reader = backend.open(), backend.open()
    made = record()
    writer.create_game(made)
    total, done, seen = 60, threading.Event(), []

    def read():
        while not done.is_set():
            seen.append(reader.snapshot(made.game_id))

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for n in range(0, total, 2):
            writer.append(made.game_id, n, [event(n), event(n + 1)], "playing")
    finally:
        done.set()
        thread.join(30)
    final = writer.snapshot(made.game_id).events
    assert len(seen) > 1 and final == [event(n) for n in range(total)]
    for snap in seen:
        assert len(snap.events) == snap.record.event_count and snap.events == final[:len(snap.events)]


def test_the_schema_is_made_once_and_a_reopened_store_sees_everything(backend):
    stores = race(4, lambda i: backend.open())  # four servers starting together on an empty database
    assert not [s for s in stores if isinstance(s, Exception)], stores
    made = record()
    stores[0].create_game(made)
    stores[0].append(made.game_id, 0, [event(0)], "playing", remember=Remember(0, "k", "f" * 64, 200, "{}"))
    stores[0].close()
    for store in [*stores[1:], backend.open()]:
        assert store.snapshot(made.game_id).events == [event(0)] and store.recall(made.game_id, 0, "k")


def test_a_database_of_a_newer_schema_is_refused(backend):
    backend.open().close()
    backend.set_schema_version(SCHEMA_VERSION + 1)
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}"):
        backend.open()


def test_a_write_blocked_past_the_busy_timeout_is_busy(backend):
    store = backend.open(busy_timeout=0.3)
    made = record()
    store.create_game(made)
    with backend.game_locked(made.game_id):
        started = time.monotonic()
        with pytest.raises(Busy):
            store.append(made.game_id, 0, [event(0)], "playing")
        assert time.monotonic() - started < 10
    assert store.append(made.game_id, 0, [event(0)], "playing") is None  # the lock gone, the write goes through


# --- the app on each store ----------------------------------------------------------------------

def _movers(client, gid, token):
    auth = {"Authorization": f"Bearer {token}"}

    def roll(hold):
        resp = client.post(f"/v1/games/{gid}/roll", json={"hold": hold}, headers=auth)
        assert resp.status_code == 200, resp.get_json()
        return resp.get_json()

    def score(category):
        resp = client.post(f"/v1/games/{gid}/score", json={"category": category}, headers=auth)
        assert resp.status_code == 200, resp.get_json()
        return resp.get_json()

    return roll, score


def test_a_whole_game_through_the_app_verifies(backend, tmp_path):
    store = backend.open()
    client = create_app(backend.config(tmp_path), store=store).test_client()
    created = client.post("/v1/games", json={"rules": "yacht", "seats": [HUMAN, GREEDY]}).get_json()
    gid, token = created["game_id"], created["tokens"][0]["token"]
    state = client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "all the way"},
                        headers={"Authorization": f"Bearer {token}"}).get_json()
    roll, score = _movers(client, gid, token)
    while state["status"] == "playing":
        state = play_turn(roll, score, state)
    served = client.get(f"/v1/games/{gid}/log")
    assert state["status"] == "finished" and served.get_data(as_text=True) == store.final_log(gid)
    result = verify_log(served.get_json(), trusted_public_key=created["public_key"])
    assert result.ok, result.problems


def test_two_apps_on_one_database_never_act_on_an_outdated_game(backend, tmp_path):
    """Two apps stand for two servers, each with its own cache of games (tests/test_api.py does it on SQLite
    files; here on each store)."""
    a = create_app(backend.config(tmp_path), store=backend.open()).test_client()
    b = create_app(backend.config(tmp_path), store=backend.open()).test_client()
    created = a.post("/v1/games", json={"rules": "classic13", "seats": [HUMAN, {"type": "bot", "bot": "ev"}]})
    gid, token = created.get_json()["game_id"], created.get_json()["tokens"][0]["token"]
    h = {"Authorization": f"Bearer {token}"}
    assert a.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "two"}, headers=h).status_code == 200
    for _ in range(3):
        assert a.post(f"/v1/games/{gid}/roll", json={}, headers=h).status_code == 200  # a caches the game
    assert b.post(f"/v1/games/{gid}/score", json={"category": "chance"}, headers=h).status_code == 200
    state = a.post(f"/v1/games/{gid}/roll", json={}, headers=h).get_json()  # a's copy is outdated
    assert state["turn"] == 2 and state["rolls_made"] == 1
    log = b.get(f"/v1/games/{gid}/log").get_json()
    rolls = [(e["turn"], e["roll"]) for e in log["events"] if e["type"] == "roll" and e["seat"] == 0]
    assert rolls == [(1, 1), (1, 2), (1, 3), (2, 1)]


# --- choosing the store -----------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["postgresql://fd:pw@db.example:5432/fairdice?sslmode=require",
                                 "postgres://db.example/fairdice"])
def test_settings_keep_a_postgres_url_as_given(url, tmp_path):
    assert settings({"db": url}, environ={}).db == url  # not a Path: Path would collapse its //
    assert settings(environ={"FAIRDICE_DB": url}).db == url
    assert settings({"FAIRDICE_DB": str(tmp_path / "x.sqlite3")}, environ={}).db == tmp_path / "x.sqlite3"


def test_a_database_url_is_shown_without_its_password():
    assert describe_db("postgresql://fd:s3cret@db:5432/fairdice") == "PostgreSQL postgresql://fd:***@db:5432/fairdice"
    assert "s3cret" not in describe_db("postgresql://db/fairdice?password=s3cret&sslmode=require")
    assert describe_db("postgresql://db/fairdice") == "PostgreSQL postgresql://db/fairdice"


@pytest.mark.e2e
def test_the_app_picks_postgres_for_a_postgres_url(postgres_url, tmp_path):
    from api.store import PostgresStore

    backend = PostgresBackend(postgres_url)
    try:
        app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path), "FAIRDICE_DB": backend.url})
        store = app.extensions["fairdice"].store
        backend.stores.append(store)
        assert isinstance(store, PostgresStore)
        assert app.test_client().post("/v1/games", json={"rules": "yacht", "seats": [HUMAN]}).status_code == 201
        assert backend.execute("SELECT count(*) FROM games") == [(1,)]
        assert not (tmp_path / "fairdice.sqlite3").exists()
    finally:
        backend.close()
