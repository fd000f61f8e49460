"""`fairdice admin stats|prune`: what the configured store holds, and pruning what may be pruned.

- `stats`: games (and how many are unfinished), events, Idempotency-Key answers kept, rate-limit rows, the
  database's size and its write-ahead log's (`Store.stats`).
- `prune`: what every server's maintenance does on its own (api.lifecycle): delete the Idempotency-Key
  answers older than FAIRDICE_IDEMPOTENCY_TTL and the rate-limit rows that no longer limit anyone, and cut
  the SQLite WAL back (`Store.prune`).  Safe while servers run on the same store.

Both read the store the way `fairdice serve` does (--data-dir, --db, FAIRDICE_*), and never create one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .config import settings
from .lifecycle import stamp
from .serve import add_store_options, database_error


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Report on the server's store, or prune it (the settings are those of fairdice serve)."
    common = argparse.ArgumentParser(add_help=False)
    add_store_options(common)
    common.add_argument("--json", action="store_true", help="print one JSON object")
    actions = parser.add_subparsers(dest="action", required=True, metavar="{stats,prune}")
    actions.add_parser("stats", parents=[common], help="games, events, records kept and sizes",
                       description="Games, events, Idempotency-Key answers and rate-limit rows kept, and the "
                                   "database's size (with its write-ahead log).")
    actions.add_parser("prune", parents=[common], help="delete expired records and cut the WAL back",
                       description="Delete Idempotency-Key answers older than FAIRDICE_IDEMPOTENCY_TTL seconds "
                                   "and spent rate-limit rows, and cut the SQLite write-ahead log back. "
                                   "Servers do this by themselves every FAIRDICE_MAINTENANCE_INTERVAL seconds.")


class AdminError(Exception):
    """Why the command cannot run, in one line."""


def open_existing_store(conf):
    """The configured store; AdminError if it cannot be opened, or (SQLite) if there is no database file:
    an administrative command never makes one."""
    import sqlite3

    from .store import StoreError, is_postgres_url, open_store

    if not is_postgres_url(conf.db) and not Path(conf.db).is_file():
        raise AdminError(f"no database at {conf.db} (fairdice serve makes it; --data-dir or --db names another)")
    try:
        return open_store(conf)
    except (StoreError, sqlite3.Error, OSError, ValueError) as exc:
        raise AdminError(str(database_error(conf, exc))) from None


def run(args) -> int:
    from .store import StoreError, describe_db

    try:
        conf = settings({"data_dir": args.data_dir, "db": args.db})
        store = open_existing_store(conf)
    except (AdminError, ValueError) as exc:
        print(f"fairdice admin {args.action}: {exc}", file=sys.stderr)
        return 2
    try:
        if args.action == "stats":
            report = {"database": describe_db(conf.db), **store.stats()}
        else:
            before = stamp(time.time() - conf.idempotency_ttl)
            report = {"database": describe_db(conf.db), "idempotency_before": before,
                      "idempotency_ttl": conf.idempotency_ttl, **store.prune(before)}
    except StoreError as exc:
        print(f"fairdice admin {args.action}: {database_error(conf, exc)}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(json.dumps(report) if args.json else (describe_stats if args.action == "stats" else describe_prune)(report))
    return 0


def size(count: int | None) -> str:
    if count is None:
        return "none"
    if count < 1024:
        return f"{count} bytes"
    value = count / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def describe_stats(report: dict) -> str:
    wal = "" if report.get("wal_bytes") is None else f" (+ {size(report['wal_bytes'])} of write-ahead log)"
    return "\n".join([
        f"database:            {report['database']} ({report['backend']})",
        f"games:               {report['games']} ({report['unfinished']} unfinished)",
        f"events:              {report['events']}",
        f"idempotency answers: {report['idempotency_records']}",
        f"rate-limit rows:     {report.get('rate_limits', 'n/a')}",
        f"size:                {size(report['bytes'])}{wal}",
    ])


def describe_prune(report: dict) -> str:
    wal = "" if report.get("wal_bytes") is None else f"; write-ahead log now {size(report['wal_bytes'])}"
    return (f"{report['database']}: deleted {report['idempotency_records']} idempotency answers from before "
            f"{report['idempotency_before']} (FAIRDICE_IDEMPOTENCY_TTL={report['idempotency_ttl']} s) and "
            f"{report['rate_limits']} spent rate-limit rows{wal}")
