"""The store's hot path: CPU seconds per call of append, snapshot, recall, event_count (and rate_hit).

Each operation runs `--ops` times on a fresh SQLite store in a temporary directory (or on PostgreSQL with
`--postgres URL`, in a schema of its own that is dropped afterwards), with the shapes a game request
gives it: an append of 2 events of about 80 bytes with an idempotency answer of 2.5 KB, a snapshot of a
game of 40 events.  Reported per call: CPU seconds of this process (all its threads: the SQLite
checkpointer's work counts), wall seconds, and the ratio of the CPU to that of a baseline measured in the
same run (`SELECT 1` on an in-memory SQLite connection), so that runs on a loaded or another machine
compare by their ratios.  `contended append` is 4 threads appending to 4 games at once: its wall time per
call says how long writers queue on the store's write lock.

    python bench/bench_store.py [--ops 3000] [--postgres URL] [--json]
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.store import GameRecord, Remember, SQLiteStore  # noqa: E402

BODY = json.dumps({"state": "x" * 2400})  # an answer kept for an Idempotency-Key: about a state document


def roll(n: int) -> dict:
    return {"type": "roll", "seat": n % 2, "turn": n // 6 + 1, "roll": n % 3 + 1, "hold": [0, 2],
            "dice": [1, 1, 4, 3, 1]}


def new_game(store) -> str:
    game_id = secrets.token_urlsafe(12)
    store.create_game(GameRecord(game_id=game_id, opened={"header": {"game_id": game_id, "x": "h" * 700}},
                                 key_id="k" * 16, tokens=[{"seat": 0, "sha256": "a" * 64}],
                                 seed_sealed=secrets.token_bytes(60), seed_revealed=None, status="playing"))
    return game_id


def timed(n: int, work) -> tuple[float, float]:
    """CPU and wall seconds per call of work(i), i in 0..n-1."""
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(n):
        work(i)
    return (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n


def baseline(n: int) -> tuple[float, float]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        return timed(n, lambda i: conn.execute("SELECT 1").fetchone())
    finally:
        conn.close()


def appender(store, game_id: str, per_call: int, remember: bool):
    """work(i): the i-th append to the game (the game must have i * per_call events)."""
    def work(i):
        kept = Remember(0, f"key-{i}", "f" * 64, 200, BODY) if remember else None
        store.append(game_id, i * per_call, [roll(i * per_call + j) for j in range(per_call)], "playing",
                     remember=kept)
    return work


def contended(store, n: int, threads: int = 4) -> tuple[float, float]:
    games = [new_game(store) for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def run(game_id):
        work = appender(store, game_id, 2, True)
        barrier.wait()
        for i in range(n // threads):
            work(i)

    workers = [threading.Thread(target=run, args=(g,)) for g in games]
    for w in workers:
        w.start()
    cpu, wall = time.process_time(), time.perf_counter()
    barrier.wait()
    for w in workers:
        w.join()
    done = threads * (n // threads)
    return (time.process_time() - cpu) / done, (time.perf_counter() - wall) / done


def measure(store, n: int) -> dict[str, tuple[float, float]]:
    results = {"baseline SELECT 1": baseline(n * 4)}
    game_id = new_game(store)
    results["append 2 events + answer"] = timed(n, appender(store, game_id, 2, True))
    results["append 1 event"] = timed(n, appender(store, new_game(store), 1, False))
    grown = new_game(store)
    store.append(grown, 0, [roll(i) for i in range(40)], "playing")
    results["snapshot (40 events)"] = timed(n, lambda i: store.snapshot(grown))
    results["recall (kept answer)"] = timed(n, lambda i: store.recall(game_id, 0, f"key-{i}"))
    results["event_count"] = timed(n, lambda i: store.event_count(game_id))
    if hasattr(store, "rate_hit"):
        results["rate_hit"] = timed(n, lambda i: store.rate_hit(f"moves:{i % 50}", 0.001, 1_000_000))
    results["contended append (4 threads)"] = contended(store, n)
    return results


def open_store(args, workdir: Path):
    if not args.postgres:
        return SQLiteStore(workdir / "bench.sqlite3"), lambda: None
    import psycopg

    from api.store import PostgresStore

    schema = "bench_" + secrets.token_hex(6)
    with psycopg.connect(args.postgres, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in args.postgres else "?"
    store = PostgresStore(f"{args.postgres}{sep}options=-csearch_path%3D{schema}", pool_size=5)

    def drop():
        with psycopg.connect(args.postgres, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return store, drop


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=3000, help="calls per operation (default 3000)")
    parser.add_argument("--postgres", metavar="URL", help="measure PostgresStore on this database instead")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fairdice-bench-store-") as tmp:
        store, cleanup = open_store(args, Path(tmp))
        try:
            results = measure(store, args.ops)
        finally:
            store.close()
            cleanup()
    base_cpu = results["baseline SELECT 1"][0]
    rows = {name: {"cpu_us": cpu * 1e6, "wall_us": wall * 1e6, "cpu_ratio": cpu / base_cpu}
            for name, (cpu, wall) in results.items()}
    if args.json:
        print(json.dumps({"backend": "postgresql" if args.postgres else "sqlite", "ops": args.ops,
                          "results": rows}, indent=2))
        return 0
    print(f"{'operation':32} {'CPU µs/call':>12} {'wall µs/call':>13} {'CPU / baseline':>15}")
    for name, row in rows.items():
        print(f"{name:32} {row['cpu_us']:12.1f} {row['wall_us']:13.1f} {row['cpu_ratio']:15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
