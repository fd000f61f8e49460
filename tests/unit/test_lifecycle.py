"""api.lifecycle.Maintenance against a stand-in store and service: which games it asks for and expires, what
it prunes, that a fault ends only its round, and its thread.  (tests/e2e/test_lifecycle_server.py runs it in a
real server.)"""

from __future__ import annotations

import logging
import time
from datetime import datetime, UTC
from types import SimpleNamespace

import pytest

from api.games import GameNotFoundError
from api.lifecycle import EXPIRE_BATCH, Maintenance, stamp
from api.store import BusyError, UnavailableError
from fairdice.errors import NotNowError

NOW = 1_780_000_000  # 2026-05-28T20:26:40Z
CONF = SimpleNamespace(maintenance_interval=60, abandon_timeout=3600, idempotency_ttl=600)


def utc(seconds: float) -> str:
    """The store's time format, written independently of api.lifecycle.stamp."""
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeStore:
    def __init__(self, games: dict[str, str]):
        self.games = dict(games)  # unfinished game id -> updated_at
        self.stale_calls: list[tuple[str, int]] = []
        self.pruned: list[str] = []
        self.fail_stale: Exception | None = None

    def stale_games(self, idle_since: str, limit: int = 100) -> list[str]:
        self.stale_calls.append((idle_since, limit))
        if self.fail_stale:
            raise self.fail_stale
        return sorted((gid for gid, at in self.games.items() if at < idle_since),
                      key=lambda gid: (self.games[gid], gid))[:limit]

    def prune(self, idempotency_before: str) -> dict:
        self.pruned.append(idempotency_before)
        return {"idempotency_records": 3, "rate_limits": 1, "wal_bytes": 0}


class FakeGames:
    """Games.expire as the contract has it: abandons (here: forgets) a game, or refuses with NotNowError."""

    def __init__(self, store: FakeStore, refuse: dict[str, Exception] | None = None):
        self.store = store
        self.refuse = refuse or {}
        self.expired: list[tuple[str, float]] = []

    def expire(self, game_id: str, now: float | None = None):
        if game_id in self.refuse:
            raise self.refuse[game_id]
        self.expired.append((game_id, now))
        del self.store.games[game_id]


def maintenance(store, games=None, conf=CONF, **kw) -> Maintenance:
    return Maintenance(games or FakeGames(store), store, conf, clock=lambda: NOW, **kw)


def test_stamp_is_the_stores_time_format():
    assert stamp(NOW) == utc(NOW) == "2026-05-28T20:26:40Z"


def test_a_round_expires_the_games_idle_for_the_timeout_and_prunes_by_the_ttl():
    store = FakeStore({"old": utc(NOW - 3601), "older": utc(NOW - 90000), "fresh": utc(NOW - 3599)})
    games = FakeGames(store)
    report = maintenance(store, games).run_once()
    assert store.stale_calls[0] == (utc(NOW - 3600), EXPIRE_BATCH)
    assert games.expired == [("older", NOW), ("old", NOW)]  # the longest idle first
    assert set(store.games) == {"fresh"}
    assert store.pruned == [utc(NOW - 600)]
    assert report == {"expired": 2, "pruned": {"idempotency_records": 3, "rate_limits": 1, "wal_bytes": 0}}


def test_games_refused_are_skipped_and_not_counted():
    store = FakeStore({f"g{i}": utc(NOW - 4000 - i) for i in range(4)})
    games = FakeGames(store, refuse={"g1": NotNowError("not_expired", "its header promises longer"),
                                     "g2": NotNowError("game_over", "abandoned by another worker"),
                                     "g3": GameNotFoundError("gone")})
    assert maintenance(store, games).run_once()["expired"] == 1
    assert [gid for gid, _ in games.expired] == ["g0"]


def test_more_stale_games_than_a_batch_are_all_expired_in_one_round():
    count = EXPIRE_BATCH * 2 + 17
    store = FakeStore({f"g{i:04}": utc(NOW - 5000 - i) for i in range(count)})
    assert maintenance(store).run_once()["expired"] == count
    assert store.games == {}


def test_a_batch_of_only_refused_games_ends_the_search():
    """The oldest games refuse (their own timeout is longer): asking again would return the same ones."""
    store = FakeStore({f"g{i:04}": utc(NOW - 5000 - i) for i in range(EXPIRE_BATCH)})
    games = FakeGames(store, refuse={gid: NotNowError("not_expired", "later") for gid in store.games})
    assert maintenance(store, games).run_once()["expired"] == 0
    assert len(store.stale_calls) == 1


@pytest.mark.parametrize("fault", [BusyError("database is locked"), UnavailableError("disk_full", "0 bytes free")],
                         ids=["busy", "unavailable"])
def test_a_store_fault_ends_that_part_of_the_round_with_a_warning(fault, caplog):
    store = FakeStore({"old": utc(NOW - 4000)})
    store.fail_stale = fault
    with caplog.at_level(logging.WARNING, logger="fairdice.maintenance"):
        report = maintenance(store).run_once()
    assert report["expired"] is None and report["pruned"] is not None  # pruning still ran
    assert "next round tries again" in caplog.text


def test_a_game_that_fails_to_expire_does_not_stop_the_others(caplog):
    store = FakeStore({"broken": utc(NOW - 9000), "fine": utc(NOW - 8000)})
    games = FakeGames(store, refuse={"broken": RuntimeError("no signing key with id abc")})
    keeper = maintenance(store, games)
    with caplog.at_level(logging.ERROR, logger="fairdice.maintenance"):
        assert keeper.run_once()["expired"] == 1
        keeper.run_once()
    assert [gid for gid, _ in games.expired] == ["fine"]
    assert caplog.text.count("game broken could not be abandoned") == 1  # reported once, not every round


def test_waits_are_jittered_around_the_interval():
    conf = SimpleNamespace(maintenance_interval=100, abandon_timeout=1, idempotency_ttl=1)
    assert maintenance(FakeStore({}), conf=conf, uniform=lambda: 0.0).next_wait() == pytest.approx(80)
    assert maintenance(FakeStore({}), conf=conf, uniform=lambda: 0.5).next_wait() == pytest.approx(100)
    assert maintenance(FakeStore({}), conf=conf, uniform=lambda: 0.999999).next_wait() == pytest.approx(120, abs=1e-3)


def test_the_thread_runs_rounds_until_stopped():
    conf = SimpleNamespace(maintenance_interval=0.05, abandon_timeout=1, idempotency_ttl=1)
    store = FakeStore({})
    keeper = Maintenance(FakeGames(store), store, conf)
    keeper.start()
    deadline = time.monotonic() + 5
    while len(store.pruned) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert keeper.running
    keeper.stop()
    rounds = len(store.pruned)
    assert rounds >= 3 and not keeper.running
    time.sleep(0.2)
    assert len(store.pruned) == rounds


def test_an_interval_of_zero_starts_no_thread():
    conf = SimpleNamespace(maintenance_interval=0, abandon_timeout=1, idempotency_ttl=1)
    keeper = maintenance(FakeStore({}), conf=conf)
    keeper.start()
    assert not keeper.running
    keeper.stop()
