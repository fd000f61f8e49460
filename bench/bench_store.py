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
    python bench/bench_store.py --synchronous normal,full [--threads 8] [--rounds 3] [--ops 3000] [--json]

`--synchronous` compares instead, in one run, the contended appends (`--threads` threads, each appending to a
game of its own) of fresh SQLite stores at each setting, their writes committed in groups (the default) and
one transaction each (`group_commit=False`), round after round (`--rounds`, medians reported): appends a
second, and each against the first setting ungrouped.
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.store import GameRecord, Remember, SQLiteStore
from api.stores.base import SYNCHRONOUS_LEVELS

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
    """CPU and wall seconds per append of `threads` threads appending to a game each at once."""
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


def compare_synchronous(args) -> dict:
    """Contended appends per second of each (setting, grouped or not), each round on fresh stores."""
    kinds = [(level, grouped) for level in args.synchronous for grouped in (False, True)]
    rates = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="fairdice-bench-store-") as tmp:
        for round_ in range(args.rounds):
            for level, grouped in kinds:
                store = SQLiteStore(Path(tmp) / f"{round_}-{level}-{grouped}.sqlite3", synchronous=level,
                                    group_commit=grouped)
                try:
                    _, wall = contended(store, args.ops, args.threads)
                finally:
                    store.close()
                rates[(level, grouped)].append(1 / wall)
    first = rates[kinds[0]]
    return {f"{level} {'grouped' if grouped else 'one transaction each'}": {
        "appends_per_s": round(statistics.median(found)),
        "vs_first": round(statistics.median(r / f for r, f in zip(found, first)), 3),
        "rounds": [round(r) for r in found]} for (level, grouped), found in rates.items()}


def synchronous_levels(text: str) -> list[str]:
    levels = [part.strip().upper() for part in text.split(",") if part.strip()]
    if not levels or any(level not in SYNCHRONOUS_LEVELS for level in levels):
        raise argparse.ArgumentTypeError("a comma-separated list of off, normal, full, extra")
    return levels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=3000, help="calls per operation (default 3000)")
    parser.add_argument("--postgres", metavar="URL", help="measure PostgresStore on this database instead")
    parser.add_argument("--synchronous", type=synchronous_levels, metavar="normal,full",
                        help="compare the contended appends of SQLite stores at these settings, grouped and not")
    parser.add_argument("--threads", type=int, default=8, help="appending threads with --synchronous (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds with --synchronous (default 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.synchronous:
        compared = compare_synchronous(args)
        if args.json:
            print(json.dumps({"threads": args.threads, "ops": args.ops, "results": compared}, indent=2))
            return 0
        print(f"contended appends, {args.threads} threads, {args.ops} appends a round, medians of {args.rounds} "
              f"rounds")
        for name, row in compared.items():
            print(f"{name:32} {row['appends_per_s']:8} appends/s  {row['vs_first']:6.2f} x the first  "
                  f"(rounds: {', '.join(map(str, row['rounds']))})")
        return 0
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
