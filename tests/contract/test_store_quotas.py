"""The quotas an operator sets per client (`fairdice admin quota`), held to the store contract on both stores
(test_store_contract's `backend`: SQLite, and PostgreSQL marked e2e): set, changed and removed for every store
opened on the same database (every worker and server sees them), read with the client's unfinished games in
one call (`Store.client_games`), made on a database of schema version 2 that predates them, and counted by
`stats`, whose sizes per table add up to the database's."""

from __future__ import annotations

import pytest

from api.store import SCHEMA_VERSION
from api.stores.base import CLIENT_QUOTAS_TABLE, ClientGames
from api.stores.sessions_base import SESSION_TABLES
from support.stores import event, finish_game, record, stamp_times


def test_a_quota_set_through_one_store_is_seen_through_another(backend):
    writer, reader = backend.open(), backend.open()
    assert reader.client_quotas() == {}
    writer.set_client_quota("203.0.113.7", 50)
    writer.set_client_quota("2001:db8:1:2::/64", 0)
    assert reader.client_quotas() == {"2001:db8:1:2::/64": 0, "203.0.113.7": 50}
    writer.set_client_quota("203.0.113.7", 3)  # changed, not added
    assert reader.client_games("203.0.113.7").max_unfinished == 3
    writer.set_client_quota("203.0.113.7", None)  # back to the server's quota
    assert reader.client_quotas() == {"2001:db8:1:2::/64": 0}
    assert reader.client_games("203.0.113.7") == ClientGames(0, None, None)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_a_quota_that_is_not_a_count_is_refused(store, bad):
    with pytest.raises(ValueError):
        store.set_client_quota("203.0.113.7", bad)
    assert store.client_quotas() == {}


def test_client_games_counts_the_unfinished_ones_and_finds_the_idlest(backend, store):
    games = [record(client="a") for _ in range(4)] + [record(client="b")]
    for made in games:
        store.create_game(made)
    store.append(games[1].game_id, 0, [event(0)], "playing")
    finish_game(store, games[2].game_id, "finished")
    for made, updated in zip(games, ["2026-01-03T00:00:00Z", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z",
                                     "2026-01-05T00:00:00Z", "2025-01-01T00:00:00Z"]):
        stamp_times(backend, made.game_id, "2025-12-31T00:00:00Z", updated)
    store.set_client_quota("a", 7)
    # games[2] is the idlest of a's, but finished; b's idler game is b's
    assert store.client_games("a") == ClientGames(3, "2026-01-02T00:00:00Z", 7)
    assert store.client_games("b") == ClientGames(1, "2025-01-01T00:00:00Z", None)
    assert store.client_games("nobody") == ClientGames(0, None, None)


def test_a_database_made_before_quotas_gets_their_table_and_keeps_its_version(backend):
    first = backend.open()
    first.create_game(record(client="a"))
    first.close()
    backend.execute(f"DROP TABLE {CLIENT_QUOTAS_TABLE}")  # as schema version 2 was made before quotas
    again = backend.open()
    assert again.client_games("a") == ClientGames(1, again.snapshot(backend.execute(
        "SELECT game_id FROM games")[0][0]).record.updated_at, None)
    again.set_client_quota("a", 2)
    assert again.client_quotas() == {"a": 2}
    assert backend.schema_version() == SCHEMA_VERSION


def test_stats_count_the_quotas_and_measure_each_table(backend, store):
    store.create_game(record())
    store.set_client_quota("a", 1)
    if backend.name == "sqlite":
        store.prune("2000-01-01T00:00:00Z")  # the WAL copied into the database: its file holds every page
    stats = store.stats()
    assert stats["client_quotas"] == 1
    tables = stats["table_bytes"]
    assert {"games", "events", "idempotency", "rate_limits", CLIENT_QUOTAS_TABLE, *SESSION_TABLES} <= set(tables)
    assert all(size > 0 for size in tables.values())
    if backend.name == "sqlite":  # every page belongs to a table (or is one of SQLite's own schema pages)
        page = stats["bytes"] // backend.execute("PRAGMA page_count")[0][0]
        schema_pages = backend.execute("SELECT count(*) FROM dbstat WHERE name = 'sqlite_schema'")[0][0]
        assert stats["bytes"] - sum(tables.values()) == page * schema_pages
    else:
        assert sum(tables.values()) == stats["bytes"]
