"""What watching needs of a store (api/stores: `progress`, `append_feed`), held to both stores as
tests/contract/test_store_contract.py holds the rest (its backends; the PostgreSQL runs are e2e).

An append feed reports the appends of other connections (another worker, another server), and says nothing
when nothing was appended: not for a refused append, nor for an Idempotency-Key answered again.  A feed may
answer None ("something may have changed: read what you watch"), never a count that is wrong.
"""

from __future__ import annotations

import time

import pytest

from api.store import ConflictError, Remember, UnavailableError
from support.stores import PostgresBackend, record

FEED_BOUND = 2.0  # seconds within which a feed reports an append


@pytest.fixture
def feed(backend):
    """A feed of the watcher's store, past its first answer (which only starts watching)."""
    made = backend.open().append_feed()
    made.wait(0)
    yield made
    made.close()


def reports(feed, game_id: str, count: int) -> bool:
    """Whether the feed, within FEED_BOUND, says the game got events (None, or the game at `count` or more)."""
    deadline = time.monotonic() + FEED_BOUND
    while time.monotonic() < deadline:
        appended = feed.wait(0.1)
        if appended is None or appended.get(game_id, 0) >= count:
            return True
        assert game_id not in appended, appended  # a count, when given, is the game's count after an append
    return False


def test_progress_is_the_count_and_status_of_every_game_that_exists(backend):
    store = backend.open()
    a, b = record(), record(status="playing")
    store.create_game(a)
    store.create_game(b)
    store.append(b.game_id, 0, [{"n": 0}, {"n": 1}], "finished")
    found = store.progress([a.game_id, b.game_id, "nope", "a\x00b"])
    assert found == {a.game_id: (0, "awaiting_client_seed"), b.game_id: (2, "finished")}
    assert store.progress([]) == {}


def test_an_append_by_another_connection_is_reported(backend, feed):
    other = backend.open()
    game = record()
    other.create_game(game)
    feed.wait(0.05)  # (the creation may show as a change)
    other.append(game.game_id, 0, [{"n": 0}, {"n": 1}], "playing")
    assert reports(feed, game.game_id, 2)


def test_nothing_appended_is_reported_as_nothing(backend, feed):
    other = backend.open()
    game = record()
    other.create_game(game)
    feed.wait(0.05)
    started = time.monotonic()
    assert feed.wait(0.3) == {}
    assert time.monotonic() - started >= 0.3


def test_a_refused_append_is_not_reported(backend, feed):
    other = backend.open()
    game = record()
    other.create_game(game)
    other.append(game.game_id, 0, [{"n": 0}], "playing", remember=Remember(0, "key", "f", 200, "{}"))
    assert reports(feed, game.game_id, 1)
    with pytest.raises(ConflictError):
        other.append(game.game_id, 0, [{"n": 0}], "playing")
    assert other.append(game.game_id, 1, [{"n": 1}], "playing", remember=Remember(0, "key", "f", 200, "{}"))
    assert feed.wait(0.3) == {}


@pytest.mark.e2e
def test_a_postgres_feed_that_lost_its_connection_reconnects_and_says_it_may_have_missed_appends(postgres_url):
    backend = PostgresBackend(postgres_url)
    try:
        store, other = backend.open(), backend.open()
        feed = store.append_feed()
        assert feed.wait(0) is None
        game = record()
        other.create_game(game)
        with backend.connection() as conn:
            pid = feed.conn.info.backend_pid
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(UnavailableError):
            feed.wait(1)
        other.append(game.game_id, 0, [{"n": 0}], "playing")  # while nobody listens
        assert feed.wait(1) is None  # listening again; what came meanwhile is unknown
        other.append(game.game_id, 1, [{"n": 1}], "playing")
        assert reports(feed, game.game_id, 2)
        feed.close()
    finally:
        backend.close()
