"""The quota of unfinished games per client, at the service (`Games.create(..., client=...)`), on a real
SQLite store: a client at `max_unfinished` unfinished games is refused (TooManyUnfinished, a domain error of
kind "quota") until one of its games ends, however it ends; other clients are not counted against it."""

from __future__ import annotations

import time

import pytest

from api.games import Games, TooManyUnfinished
from api.keys import KeyRing
from api.stores.sqlite import SQLiteStore
from fairdice.errors import FairdiceError

ANN = {"type": "human", "name": "ann"}
EV = {"type": "bot", "bot": "ev"}
LIMIT = 2


class CountingStore:
    """The store, counting how often the service asks it for a client's unfinished games."""

    def __init__(self, store):
        self._store = store
        self.counted = 0

    def unfinished_count(self, client):
        self.counted += 1
        return self._store.unfinished_count(client)

    def __getattr__(self, name):
        return getattr(self._store, name)


@pytest.fixture
def store(tmp_path):
    store = CountingStore(SQLiteStore(tmp_path / "fairdice.sqlite3"))
    yield store
    store.close()


@pytest.fixture
def keys(tmp_path):
    return KeyRing(tmp_path / "keys")


def make(games, client, seats=(ANN, EV)):
    created = games.create("yacht", list(seats), client=client)
    return created["game_id"], created["tokens"][0]["token"]


def test_a_client_at_its_quota_is_refused_and_nothing_is_stored(store, keys):
    games = Games(store, keys, max_unfinished=LIMIT)
    for _ in range(LIMIT):
        make(games, "10.0.0.1")
    with pytest.raises(TooManyUnfinished) as refused:
        make(games, "10.0.0.1")
    error = refused.value
    assert isinstance(error, FairdiceError) and error.kind == "quota"
    assert error.code == "too_many_unfinished_games" and error.details["max_unfinished"] == LIMIT
    assert str(LIMIT) in error.message
    assert store.unfinished_count("10.0.0.1") == LIMIT  # the refused game was not stored


def test_the_quota_is_per_client(store, keys):
    games = Games(store, keys, max_unfinished=LIMIT)
    for _ in range(LIMIT):
        make(games, "10.0.0.1")
    game_id, _ = make(games, "10.0.0.2")
    assert store.snapshot(game_id).record.client == "10.0.0.2"
    assert store.unfinished_count("10.0.0.2") == 1


@pytest.mark.parametrize("ending", ["abandoned by the player", "finished", "expired by the server"])
def test_a_game_that_ends_frees_its_place(store, keys, ending):
    games = Games(store, keys, abandon_timeout=60, max_unfinished=LIMIT)
    seats = (EV,) if ending == "finished" else (ANN, EV)
    first, token = make(games, "10.0.0.1", seats)
    make(games, "10.0.0.1")
    with pytest.raises(TooManyUnfinished):
        make(games, "10.0.0.1")
    if ending == "abandoned by the player":
        games.abandon(first, token)
    elif ending == "finished":
        games.client_seed(first, token, "operator")  # a bot-only game plays out at once
    else:
        games.expire(first, now=time.time() + 62)
    assert store.snapshot(first).record.status in ("abandoned", "finished")
    make(games, "10.0.0.1")  # accepted again
    with pytest.raises(TooManyUnfinished):
        make(games, "10.0.0.1")


def test_no_quota_by_default_and_the_store_is_not_asked(store, keys):
    games = Games(store, keys)
    assert games.max_unfinished == 0
    for _ in range(LIMIT + 3):
        make(games, "10.0.0.1")
    assert store.counted == 0 and store.unfinished_count("10.0.0.1") == LIMIT + 3


def test_a_bad_request_is_refused_for_what_it_is_even_at_the_quota(store, keys):
    games = Games(store, keys, max_unfinished=1)
    make(games, "10.0.0.1")
    with pytest.raises(FairdiceError) as refused:
        games.create("no-such-rules", [ANN], client="10.0.0.1")
    assert not isinstance(refused.value, TooManyUnfinished)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_a_quota_that_is_not_a_count_is_refused(store, keys, bad):
    with pytest.raises(ValueError):
        Games(store, keys, max_unfinished=bad)
