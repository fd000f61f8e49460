"""The quota of unfinished games per client, at the service (`Games.create(..., client=...)`), on a real
SQLite store: a client at `max_unfinished` unfinished games is refused (TooManyUnfinishedError, a domain error of
kind "quota") until one of its games ends, however it ends; other clients are not counted against it.  The
refusal says when the server's timeout frees a place by itself (retry_after: the idlest game's last move plus
the timeout), and the quota an operator set for a client (`Store.set_client_quota`) replaces the server's."""

from __future__ import annotations

import sqlite3
import time

import pytest

from api.games import Games, TooManyUnfinishedError
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

    def client_games(self, client):
        self.counted += 1
        return self._store.client_games(client)

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
    with pytest.raises(TooManyUnfinishedError) as refused:
        make(games, "10.0.0.1")
    error = refused.value
    assert isinstance(error, FairdiceError) and error.kind == "quota"
    assert error.code == "too_many_unfinished_games" and error.details["max_unfinished"] == LIMIT
    assert str(LIMIT) in error.message
    assert store.unfinished_count("10.0.0.1") == LIMIT  # the refused game was not stored
    assert store.counted == LIMIT + 1


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
    with pytest.raises(TooManyUnfinishedError):
        make(games, "10.0.0.1")
    if ending == "abandoned by the player":
        games.abandon(first, token)
    elif ending == "finished":
        games.client_seed(first, token, "operator")  # a bot-only game plays out at once
    else:
        games.expire(first, now=time.time() + 62)
    assert store.snapshot(first).record.status in ("abandoned", "finished")
    make(games, "10.0.0.1")  # accepted again
    with pytest.raises(TooManyUnfinishedError):
        make(games, "10.0.0.1")


def test_no_quota_by_default_and_the_store_is_not_asked(store, keys):
    games = Games(store, keys)
    assert games.max_unfinished == 0
    store.set_client_quota("10.0.0.1", 1)  # an operator's quota changes the server's; there is none to change
    for _ in range(LIMIT + 3):
        make(games, "10.0.0.1")
    assert store.counted == 0 and store.unfinished_count("10.0.0.1") == LIMIT + 3


def _idle(store, game_id, seconds):
    """Make the game's last move `seconds` ago (the store keeps whole seconds, UTC)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - seconds))
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE games SET updated_at = ? WHERE game_id = ?", (stamp, game_id))
    conn.close()


def test_the_refusal_says_when_the_timeout_frees_a_place(store, keys):
    games = Games(store, keys, abandon_timeout=3600, max_unfinished=LIMIT)
    idlest, _ = make(games, "10.0.0.1")
    other, _ = make(games, "10.0.0.1")
    _idle(store, idlest, 1000)
    _idle(store, other, 10)
    with pytest.raises(TooManyUnfinishedError) as refused:
        make(games, "10.0.0.1")
    assert 3600 - 1000 - 1 <= refused.value.details["retry_after"] <= 3600 - 1000  # the idlest: 2600 s to go
    _idle(store, idlest, 3700)  # past its timeout, not yet abandoned by the upkeep: retry at once
    with pytest.raises(TooManyUnfinishedError) as refused:
        make(games, "10.0.0.1")
    assert refused.value.details["retry_after"] == 1


def test_an_operators_quota_replaces_the_servers_for_that_client_only(store, keys):
    games = Games(store, keys, max_unfinished=LIMIT)
    store.set_client_quota("10.0.0.1", LIMIT + 2)  # raised
    for _ in range(LIMIT + 2):
        make(games, "10.0.0.1")
    with pytest.raises(TooManyUnfinishedError) as refused:
        make(games, "10.0.0.1")
    assert refused.value.details["max_unfinished"] == LIMIT + 2
    store.set_client_quota("10.0.0.1", 0)  # lifted
    make(games, "10.0.0.1")
    for _ in range(LIMIT):
        make(games, "10.0.0.2")
    with pytest.raises(TooManyUnfinishedError):  # another client keeps the server's quota
        make(games, "10.0.0.2")
    store.set_client_quota("10.0.0.1", None)  # back to the server's: far over it now
    with pytest.raises(TooManyUnfinishedError) as refused:
        make(games, "10.0.0.1")
    assert refused.value.details["max_unfinished"] == LIMIT


def test_a_bad_request_is_refused_for_what_it_is_even_at_the_quota(store, keys):
    games = Games(store, keys, max_unfinished=1)
    make(games, "10.0.0.1")
    with pytest.raises(FairdiceError) as refused:
        games.create("no-such-rules", [ANN], client="10.0.0.1")
    assert not isinstance(refused.value, TooManyUnfinishedError)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_a_quota_that_is_not_a_count_is_refused(store, keys, bad):
    with pytest.raises(ValueError):
        Games(store, keys, max_unfinished=bad)
