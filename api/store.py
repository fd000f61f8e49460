"""Storage: the only place that knows SQL (the modules in api/stores/).

The interface is small on purpose (`Store`, api/stores/base.py), so that two
databases serve the same API and tests/contract/test_store_contract.py holds them to
the same behaviour:

- `SQLiteStore` (api/stores/sqlite.py): the embedded default, one file, for
  the gunicorn workers of one machine;
- `PostgresStore` (api/stores/postgres.py): one database behind many
  stateless servers.

Both append a command's events only after the history it was computed from
(compare-and-append), in one transaction with its idempotency record; both
keep events append-only in the database, seeds sealed and tokens hashed; both
hold the rate limits every server shares; both answer a write only once it is
on disk (FAIRDICE_SYNCHRONOUS=FULL by default); and both turn a fault of the
machine or the network (disk full, read-only or failing, a corrupt database,
a vanished or replaced file, a database out of reach) into `UnavailableError`,
recovering by themselves once it is gone.
`open_store(settings)` picks one by the `db` setting: a `postgresql://` URL
or a file.
"""

from __future__ import annotations

from pathlib import Path

from .stores.base import (GAMES_MARKER, SCHEMA_VERSION, BusyError, ConflictError, DuplicateGameError,
                          GameNotFoundError, GameRecord, GamesMarker, Remember, Remembered, Snapshot, Store, StoreError,
                          UnavailableError, is_postgres_url, redacted)
from .stores.sqlite import SQLiteStore

__all__ = ["SCHEMA_VERSION", "BusyError", "ConflictError", "DuplicateGameError", "GameNotFoundError", "GameRecord",
           "GamesMarker", "Remember", "Remembered", "SQLiteStore", "Snapshot", "Store", "StoreError",
           "UnavailableError", "describe_db", "games_marker", "is_postgres_url", "open_store",
           "PostgresStore"]  # noqa: F822 (defined on first use by __getattr__ below)


def __getattr__(name: str):
    """`PostgresStore` is imported when first asked for: SQLite's users do not load psycopg."""
    if name == "PostgresStore":
        from .stores.postgres import PostgresStore
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(conf) -> Store:
    """The store that `conf` (api.config.Settings) names: PostgreSQL for a postgresql:// URL, else SQLite; it
    commits at `conf.synchronous` and marks the key directory once it stores a game (`games_marker`)."""
    if is_postgres_url(conf.db):
        from .stores.postgres import PostgresStore
        return PostgresStore(conf.db, pool_size=conf.threads + 1,  # (+1: the maintenance thread)
                             synchronous=conf.synchronous, marker=games_marker(conf))
    return SQLiteStore(conf.db, synchronous=conf.synchronous, marker=games_marker(conf))


def games_marker(conf) -> GamesMarker:
    """The file in `conf.key_dir` that says this service has stored games (api/serve.py reads it at start)."""
    return GamesMarker(Path(conf.key_dir) / GAMES_MARKER)


def describe_db(db) -> str:
    """The `db` setting as it may be shown: a URL without its password."""
    return f"PostgreSQL {redacted(db)}" if is_postgres_url(db) else str(db)
