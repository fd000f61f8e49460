"""The store contract: SQLiteStore and PostgresStore held to the same behaviour (api/stores/base.py's `Store`).

Every test here runs once per store (`backend`): the PostgreSQL runs use the run's own server (the
`postgres_url` fixture; marked e2e), each test in a fresh schema.  What is checked is what api/games.py
relies on: a game reads back as it was stored; events are appended only after the history a command was
computed from (one winner per position however many threads or stores race); a key's answer is kept in
the same transaction and returned to its twins; the database itself refuses to change or delete events;
seeds stay sealed until the reveal and tokens are only hashes; snapshots are consistent while a game grows;
the schema is made on first use, a version-1 database migrated in place and a newer one refused; a write
blocked past the busy timeout is BusyError.  And what the server's defences rely on (issue 14): rate limits
(GCRA) that hold however many threads and processes hit one key, the quota's count of unfinished games,
the timeouts' stale games, the keys games name, pruning, the store's figures and its health.
"""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from api import create_app
from api.config import settings
from api.store import (SCHEMA_VERSION, BusyError, ConflictError, DuplicateGameError, GameNotFoundError, Remember,
                       Remembered, StoreError, describe_db)
from fairdice.edges.client import verify_log
from support.api_helpers import play_turn
from support.stores import SEALED, event, finish_game, PostgresBackend, record, stamp_times
from support import REPO as ROOT

HUMAN = {"type": "human", "name": "ann"}
GREEDY = {"type": "bot", "bot": "greedy"}


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
        except Exception as exc:  # a result to count, not an error of the test
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
    with pytest.raises(DuplicateGameError):
        store.create_game(record("same-id", key_id="other", status="playing"))
    assert store.snapshot("same-id").record == first


@pytest.mark.parametrize("sealed, revealed", [(None, None), (SEALED, "ab" * 32)], ids=["neither", "both"])
def test_a_game_holds_its_seed_either_sealed_or_revealed(store, sealed, revealed):
    with pytest.raises(StoreError) as refused:
        store.create_game(record("bad-seed", seed_sealed=sealed, seed_revealed=revealed))
    assert not isinstance(refused.value, DuplicateGameError)  # a refused record, not a taken id
    assert store.snapshot("bad-seed") is None


@pytest.mark.parametrize("game_id", ["nope", "", "a\x00b", "ü 🎲", "x" * 300],
                         ids=["unknown", "empty", "nul", "non-ascii", "long"])
def test_an_unknown_game_reads_as_absent(store, game_id):
    store.create_game(record())
    assert store.snapshot(game_id) is None and store.final_log(game_id) is None
    assert store.event_count(game_id) is None and store.recall(game_id, 0, "k") is None
    with pytest.raises(GameNotFoundError):
        store.append(game_id, 0, [event(0)], "playing")
    with pytest.raises(GameNotFoundError):
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
    with pytest.raises(ConflictError):  # computed on the history before event 0
        store.append(gid, 0, [event(99)], "playing")
    with pytest.raises(ConflictError):  # computed on a history the store never had
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
    with pytest.raises(ConflictError):
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
    with pytest.raises(ConflictError):
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
        assert all(isinstance(r, ConflictError) for i, r in enumerate(results) if i != winners[0]), results
        assert stores[1].snapshot(made.game_id).events[position] == event(position, by=winners[0])
    assert stores[0].event_count(made.game_id) == positions


def test_twin_requests_get_the_first_answer(backend):
    """8 retries of one command (one Idempotency-Key, computed on the same history) race on two stores:
    one appends, every other gets its answer back, not a ConflictError, and nothing else is written."""
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
    for expected in (1, 0):  # on the current history or an outdated one: the kept answer, not a ConflictError
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
            time.sleep(0.002)  # let the reader in (a fast writer could otherwise finish before it reads twice)
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
        with pytest.raises(BusyError):
            store.append(made.game_id, 0, [event(0)], "playing")
        assert time.monotonic() - started < 10
    assert store.append(made.game_id, 0, [event(0)], "playing") is None  # the lock gone, the write goes through


def test_a_version_1_database_is_migrated_in_place(backend):
    """A database made by fairdice before schema version 2 opens: its games read back and play on, with
    the new columns and tables working."""
    backend.make_version_1()
    old = record("old-game")
    backend.execute("INSERT INTO games (game_id, created_at, updated_at, opened, key_id, tokens, seed_sealed, "
                    "seed_revealed, status, event_count) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, 1)",
                    (old.game_id, "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", dumps_doc(old.opened),
                     old.key_id, dumps_doc(old.tokens), SEALED, old.status))
    backend.execute("INSERT INTO events (game_id, idx, body) VALUES (?, 0, ?)", (old.game_id, dumps_doc(event(0))))
    backend.execute("INSERT INTO idempotency (game_id, seat, key, fingerprint, status, body, created_at) "
                    "VALUES (?, 0, 'k', ?, 200, '{}', '2024-01-01T00:00:00Z')", (old.game_id, "f" * 64))
    store = backend.open()
    assert backend.schema_version() == SCHEMA_VERSION == 2
    snap = store.snapshot(old.game_id)
    assert snap.events == [event(0)] and snap.record.client == "" and snap.record.opened == old.opened
    assert store.recall(old.game_id, 0, "k") == Remembered("f" * 64, 200, "{}")
    assert store.append(old.game_id, 1, [event(1)], "playing") is None
    assert store.unfinished_count("") == 1 and store.key_ids() == {old.key_id}
    assert store.stale_games("2024-01-02T00:00:00Z") == []  # it moved just now
    assert store.rate_hit("k", 1.0, 1, now=5.0) == 0.0
    assert store.prune("2024-01-02T00:00:00Z")["idempotency_records"] == 1
    backend.open().close()  # a second start finds version 2 and changes nothing
    assert store.snapshot(old.game_id).events == [event(0), event(1)]


def dumps_doc(doc) -> str:
    import json
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


# --- rate limits (GCRA) --------------------------------------------------------------------------

def test_a_burst_is_allowed_at_once_then_one_event_per_interval(store):
    """burst 3, interval 2 s: at t the first 3 are allowed; the 4th waits 2 s (the 1st of the burst's
    slots comes back after one interval); 1 s later 1 s remains; at t + 2 one more goes through."""
    t = 1_000_000.0
    assert [store.rate_hit("create:a", 2.0, 3, now=t) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert store.rate_hit("create:a", 2.0, 3, now=t) == pytest.approx(2.0)
    assert store.rate_hit("create:a", 2.0, 3, now=t + 1) == pytest.approx(1.0)  # a refusal counts nothing
    assert store.rate_hit("create:a", 2.0, 3, now=t + 2) == 0.0
    assert store.rate_hit("create:a", 2.0, 3, now=t + 2) == pytest.approx(2.0)
    assert store.rate_hit("create:b", 2.0, 3, now=t) == 0.0  # every key is limited on its own
    assert [store.rate_hit("create:a", 2.0, 3, now=t + 100) for _ in range(4)][-2:] == [0.0, pytest.approx(2.0)]


def test_a_rate_limit_uses_the_clock_when_no_time_is_given(store):
    assert store.rate_hit("moves:c", 3600.0, 1) == 0.0
    waited = store.rate_hit("moves:c", 3600.0, 1)
    assert 3590 < waited <= 3600


@pytest.mark.parametrize("interval, burst", [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_a_meaningless_rate_is_refused(store, interval, burst):
    with pytest.raises(ValueError):
        store.rate_hit("k", interval, burst, now=1.0)


def test_rate_hits_count_every_key_or_none(store):
    """Several keys in one call, all or nothing: a = 1 per 10 s (burst 1), b = burst 2, one per 4 s. GCRA by
    hand: a second `a` at t waits 10 s; `b` was allowed then but, counted with it, is not recorded (it still has
    its second slot); the answer is the longest wait of those refused, naming its key."""
    t = 1_000_000.0
    a, b = ("moves:a", 10.0, 1), ("token:b", 4.0, 2)
    assert store.rate_hits([a, b], now=t) == 0.0
    refused = store.rate_hits([a, b], now=t)
    assert refused == pytest.approx(10.0) and refused.key == "moves:a"
    assert store.rate_hit(*b, now=t) == 0.0  # b's second slot was left to it
    # at t + 1: a waits 9 s; b (tat t + 8, tolerance 4) waits 3 s; the longest is the answer
    longest = store.rate_hits([b, a], now=t + 1)
    assert longest == pytest.approx(9.0) and longest.key == "moves:a"
    assert store.rate_hit(*b, now=t + 5) == 0.0  # tat t + 8 - (t + 5) <= 4: b's slot came back, nothing counted
    assert store.rate_hits([], now=t) == 0.0


def test_rate_hits_on_one_key_twice_are_one_transaction(store):
    """Twice the same key of burst 1: the second is refused, so the first is not recorded either."""
    c = ("create:c", 60.0, 1)
    assert store.rate_hits([c, c], now=1_000.0) == pytest.approx(60.0)
    assert store.rate_hit(*c, now=1_000.0) == 0.0


HAMMER = """
import sys, threading, time
{opener}
key, threads, at_once, steps, per_step, extra, go = sys.argv[1], *map(int, sys.argv[2:7]), float(sys.argv[7])
interval, t0, step = 0.5, 1_000_000.0, 0.25
allowed = []
def hammer():
    mine = 0
    while time.time() < go:
        time.sleep(0.001)
    for _ in range(at_once):  # everyone at t0 at once
        mine += store.rate_hit(key + ":once", interval, 5, now=t0) == 0.0
    for s in range(steps):  # then time goes on, 4 steps per interval, more demand than the rate allows
        for _ in range(per_step):
            mine += 1000 * (store.rate_hit(key, interval, 5, now=t0 + s * step) == 0.0)
    for _ in range(extra):  # and at the last moment until nothing more is allowed
        mine += 1000 * (store.rate_hit(key, interval, 5, now=t0 + (steps - 1) * step) == 0.0)
    allowed.append(mine)
workers = [threading.Thread(target=hammer) for _ in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print(sum(allowed))
"""


@pytest.mark.slow  # (4 s: 3 processes started, 120 steps of time)
def test_rate_hits_from_many_threads_and_processes_allow_exactly_the_rate(backend):
    """3 processes of 3 threads hit one key at once with the same time (exactly the burst of 5 is allowed),
    then as time goes on (exactly the burst plus one per interval: 5 + floor((M - t0) / 0.5) by the last
    time M, GCRA's count; more would mean two hits counted on one state)."""
    backend.open().close()  # the schema exists before the processes start
    steps, processes = 120, 3
    go = time.time() + 4  # every process has imported and connected by then
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.Popen([sys.executable, "-c", HAMMER.format(opener=backend.opener()), "hammered",
                              "3", "4", str(steps), "3", "12", str(go)], stdout=subprocess.PIPE, text=True, env=env)
            for _ in range(processes)]
    totals = [int(run.communicate(timeout=120)[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    at_once, sustained = sum(t % 1000 for t in totals), sum(t // 1000 for t in totals)
    assert at_once == 5
    assert sustained == 5 + math.floor((steps - 1) * 0.25 / 0.5)


def test_rate_hits_racing_in_threads_of_one_store_allow_exactly_the_burst(store):
    results = race(12, lambda i: [store.rate_hit("token:t", 60.0, 7, now=50.0) for _ in range(5)])
    assert sum(r == 0.0 for rs in results for r in rs) == 7


# --- quotas, timeouts, keys -----------------------------------------------------------------------------


def test_a_game_keeps_the_client_that_created_it(store):
    made, anonymous = record(client="203.0.113.9"), record()
    store.create_game(made)
    store.create_game(anonymous)
    assert store.snapshot(made.game_id).record.client == "203.0.113.9"
    assert store.snapshot(anonymous.game_id).record.client == ""


def test_unfinished_games_are_counted_per_client(store):
    ids = {}
    for name, client in [("running", "a"), ("waiting", "a"), ("finished", "a"), ("abandoned", "a"),
                         ("finished-unrevealed", "a"), ("other", "b")]:
        made = record(client=client, status="awaiting_client_seed")
        store.create_game(made)
        ids[name] = made.game_id
    store.append(ids["running"], 0, [event(0)], "playing")
    finish_game(store, ids["finished"], "finished")
    finish_game(store, ids["abandoned"], "abandoned")
    finish_game(store, ids["finished-unrevealed"], "finished", reveal=False)  # the status says it: over
    assert store.unfinished_count("a") == 2  # running, waiting
    assert store.unfinished_count("b") == 1 and store.unfinished_count("nobody") == 0


def test_stale_games_are_the_unfinished_ones_idle_longest_first(backend, store):
    """Unfinished games last updated before the time, oldest first; a game created long ago but moved
    since is not stale, nor is a finished one however old."""
    ids = {}
    for name in ("idle-3d", "idle-2d", "idle-2d-too", "old-but-moving", "recent", "finished-old"):
        made = record()
        store.create_game(made)
        ids[name] = made.game_id
    finish_game(store, ids["finished-old"], "finished")
    stamp_times(backend, ids["idle-3d"], "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z")
    stamp_times(backend, ids["idle-2d"], "2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z")
    stamp_times(backend, ids["idle-2d-too"], "2024-01-03T00:00:00Z", "2024-01-03T00:00:00Z")
    stamp_times(backend, ids["old-but-moving"], "2024-01-01T00:00:00Z", "2024-01-05T12:00:00Z")
    stamp_times(backend, ids["recent"], "2024-01-05T11:00:00Z", "2024-01-05T11:00:00Z")
    stamp_times(backend, ids["finished-old"], "2023-01-01T00:00:00Z", "2023-01-01T00:00:00Z")
    since = "2024-01-05T00:00:00Z"
    same_day = sorted([ids["idle-2d"], ids["idle-2d-too"]])
    assert store.stale_games(since) == [ids["idle-3d"], *same_day]
    assert store.stale_games(since, limit=2) == [ids["idle-3d"], same_day[0]]
    assert store.stale_games("2024-01-02T00:00:00Z") == []  # updated_at must be before, not at, the time
    unfinished = {ids[n] for n in ("idle-3d", "idle-2d", "idle-2d-too", "old-but-moving", "recent")}
    assert set(store.stale_games("9999-01-01T00:00:00Z")) == unfinished


def test_key_ids_are_every_signing_key_a_game_names(store):
    assert store.key_ids() == set()
    for key_id in ("k1", "k2", "k1"):
        store.create_game(record(key_id=key_id))
    assert store.key_ids() == {"k1", "k2"}


# --- pruning, figures, health ----------------------------------------------------------------------

def test_prune_deletes_old_answers_and_spent_rate_limits_only(backend, store):
    made = record()
    store.create_game(made)
    for n, key in enumerate(("old-1", "old-2", "new")):
        store.append(made.game_id, n, [event(n)], "playing", remember=Remember(0, key, "f" * 64, 200, "{}"))
    backend.execute("UPDATE idempotency SET created_at = '2024-01-01T00:00:00Z' WHERE key IN (?, ?)", ("old-1", "old-2"))
    t = 2_000_000.0
    store.rate_hit("spent", 1.0, 1, now=t - 10)  # its arrival time t - 9 has passed: nothing left to limit
    store.rate_hit("limiting", 10.0, 1, now=t)  # limits until t + 10
    pruned = store.prune("2024-06-01T00:00:00Z", now=t)
    assert pruned["idempotency_records"] == 2 and pruned["rate_limits"] == 1
    assert store.recall(made.game_id, 0, "old-1") is None and store.recall(made.game_id, 0, "new") is not None
    assert store.rate_hit("limiting", 10.0, 1, now=t + 1) == pytest.approx(9.0)  # still limited
    assert store.snapshot(made.game_id).events == [event(0), event(1), event(2)]  # events are never pruned
    assert store.prune("2024-06-01T00:00:00Z", now=t) == {**pruned, "idempotency_records": 0, "rate_limits": 0}


def test_prune_deletes_in_batches_until_nothing_old_is_left(backend, store):
    made = record()
    store.create_game(made)
    many = 1234  # more than a batch
    store.append(made.game_id, 0, [], "playing")
    rows = [(made.game_id, 0, f"k{i}", "f" * 64, 200, "{}", "2024-01-01T00:00:00Z") for i in range(many)]
    with backend.connection() as conn:
        if backend.name == "sqlite":
            conn.executemany("INSERT INTO idempotency VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        else:
            conn.cursor().executemany("INSERT INTO idempotency VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
    assert store.prune("2024-06-01T00:00:00Z")["idempotency_records"] == many
    assert backend.execute("SELECT count(*) FROM idempotency") == [(0,)]


def test_stats_count_what_the_store_holds(backend, store):
    a, b = record(client="x"), record(client="x")
    store.create_game(a)
    store.create_game(b)
    store.append(a.game_id, 0, [event(0), event(1)], "playing", remember=Remember(0, "k", "f" * 64, 200, "{}"))
    finish_game(store, b.game_id, "finished")
    store.rate_hit("r", 1.0, 1, now=time.time() + 100)
    if backend.name == "sqlite":
        store.prune("2000-01-01T00:00:00Z")  # the WAL copied into the database: its file holds every page
    stats = store.stats()
    assert stats["backend"] == backend.name.replace("postgres", "postgresql")
    assert (stats["games"], stats["unfinished"], stats["events"]) == (2, 1, 3)
    assert (stats["idempotency_records"], stats["rate_limits"]) == (1, 1)
    if backend.name == "sqlite":
        assert stats["bytes"] == os.path.getsize(backend.path)
        assert stats["wal_bytes"] == os.path.getsize(f"{backend.path}-wal") == 0
    else:
        assert stats["bytes"] > 0 and stats["wal_bytes"] is None


def test_a_healthy_store_says_so(store):
    assert store.health() is None
    store.create_game(record())
    assert store.health() is None
    assert store.stats()["rate_limits"] == 0  # the probe wrote nothing


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
    verify_log(served.get_json(), trusted_public_key=created["public_key"])  # raises unless it verifies


def test_two_apps_on_one_database_never_act_on_an_outdated_game(backend, tmp_path):
    """Two apps stand for two servers, each with its own cache of games (tests/unit/test_api.py does it on SQLite
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

