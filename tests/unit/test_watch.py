"""Watching a game without reloading (api/watch.py, GET /v1/games/{id}/events), in one process on SQLite.

The waiter: a request parks until its game has more events than its client has seen, woken by the process's
one feed thread whichever connection appended (here a second store on the same file, as another worker
would); at most `max_parked` park, the rest are answered at once; the feed thread ends when nobody waits.
The route: its answer is exactly what GET /v1/games/{id}?since=N answers, with an ETag of the event count;
304 when nothing came; every refusal a problem document.  Real servers: tests/e2e/test_watch_e2e.py.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from api import create_app
from api.games import Games
from api.store import GameRecord, SQLiteStore
from api.watch import POLL_AFTER, NoRoomToWaitError, Watch
from support.api_helpers import openapi_checker

WAKE_BOUND = 1.0  # seconds from an append to its waiter waking (SQLite's feed looks every 0.05 s)
YACHT_WITH_BOT = {"rules": "yacht", "seats": [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]}


# --- the waiter, over a real store -------------------------------------------------------------------

@pytest.fixture
def stores(tmp_path):
    """Two stores on one SQLite file: the watcher's, and another worker's that appends."""
    made = [SQLiteStore(tmp_path / "watch.sqlite3") for _ in range(2)]
    yield made
    for store in made:
        store.close()


def new_game(store, game_id: str) -> str:
    store.create_game(GameRecord(game_id=game_id, opened={"header": {}}, key_id="k" * 16, tokens=[],
                                 seed_sealed=b"sealed", seed_revealed=None, status="playing"))
    return game_id


def append_later(store, game_id: str, at_count: int, delay: float, events: int = 1) -> threading.Thread:
    def append():
        time.sleep(delay)
        store.append(game_id, at_count, [{"type": "roll", "n": at_count + i} for i in range(events)], "playing")

    thread = threading.Thread(target=append)
    thread.start()
    return thread


def until_parked(watch: Watch, waiters: int) -> None:
    deadline = time.monotonic() + 5
    while watch.parked < waiters and time.monotonic() < deadline:
        time.sleep(0.01)
    assert watch.parked == waiters


def test_a_waiter_wakes_when_another_connection_appends(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=4)
    game = new_game(moving, "g1")
    appender = append_later(moving, game, 0, 0.3, events=2)
    started = time.monotonic()
    count = watch.wait(game, 0, timeout=10)
    waited = time.monotonic() - started
    appender.join()
    assert count == 2
    assert 0.3 <= waited < 0.3 + WAKE_BOUND


def test_a_waiter_gives_up_after_its_timeout_when_nothing_comes(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=4)
    game = new_game(moving, "g1")
    started = time.monotonic()
    assert watch.wait(game, 0, timeout=0.4) is None
    assert 0.4 <= time.monotonic() - started < 0.4 + WAKE_BOUND
    assert watch.parked == 0


def test_a_move_in_another_game_wakes_nobody(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=4)
    watched, other = new_game(moving, "watched"), new_game(moving, "other")
    appender = append_later(moving, other, 0, 0.1)
    assert watch.wait(watched, 0, timeout=0.6) is None
    appender.join()


def test_events_appended_before_the_waiter_parks_are_answered_at_once(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=4)
    game = new_game(moving, "g1")
    moving.append(game, 0, [{"n": 0}, {"n": 1}, {"n": 2}], "playing")
    started = time.monotonic()
    assert watch.wait(game, 1, timeout=10) == 3
    assert time.monotonic() - started < 0.2


def test_one_move_wakes_every_watcher_of_the_game(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=12)
    game = new_game(moving, "g1")
    with ThreadPoolExecutor(12) as pool:
        waiting = [pool.submit(watch.wait, game, 0, 10) for _ in range(12)]
        until_parked(watch, 12)
        moving.append(game, 0, [{"n": 0}], "playing")
        assert [f.result(timeout=WAKE_BOUND + 1) for f in waiting] == [1] * 12


def test_no_more_than_max_parked_requests_wait(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=2)
    game = new_game(moving, "g1")
    with ThreadPoolExecutor(2) as pool:
        parked = [pool.submit(watch.wait, game, 0, 10) for _ in range(2)]
        until_parked(watch, 2)
        started = time.monotonic()
        with pytest.raises(NoRoomToWaitError):
            watch.wait(game, 0, timeout=10)
        assert time.monotonic() - started < 0.1  # refused at once, not after waiting
        moving.append(game, 0, [{"n": 0}], "playing")
        assert [f.result(timeout=WAKE_BOUND + 1) for f in parked] == [1, 1]
    assert watch.wait(game, 0, timeout=1) == 1  # room again once they left


def test_a_process_that_may_park_nobody_answers_at_once(stores):
    watching, moving = stores
    with pytest.raises(NoRoomToWaitError):
        Watch(watching, max_parked=0).wait(new_game(moving, "g1"), 0, timeout=10)


def test_a_store_fault_pauses_the_feed_and_it_goes_on_once_the_fault_is_gone(stores, tmp_path):
    watching, moving = stores
    watch = Watch(watching, max_parked=4)
    game = new_game(moving, "g1")
    database, aside = tmp_path / "watch.sqlite3", tmp_path / "aside.sqlite3"
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(watch.wait, game, 0, 10)
        until_parked(watch, 1)
        time.sleep(0.2)  # (past the waiter's own first look at the game)
        database.rename(aside)  # the feed's reads are now UnavailableError (database_missing)
        time.sleep(0.5)
        aside.rename(database)
        assert watch.feeding and not waiting.done()
        moving.append(game, 0, [{"n": 0}], "playing")
        assert waiting.result(timeout=WAKE_BOUND + 1) == 1


def test_a_closing_process_answers_its_waiters_now_and_parks_no_more(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=4)
    game = new_game(moving, "g1")
    with ThreadPoolExecutor(2) as pool:
        parked = [pool.submit(watch.wait, game, 0, 10) for _ in range(2)]
        until_parked(watch, 2)
        started = time.monotonic()
        watch.close()
        assert [f.result(timeout=1) for f in parked] == [None, None]
        assert time.monotonic() - started < 0.5
    with pytest.raises(NoRoomToWaitError):
        watch.wait(game, 0, timeout=10)


def test_the_feed_thread_ends_when_nobody_waits_and_comes_back_with_the_next_waiter(stores):
    watching, moving = stores
    watch = Watch(watching, max_parked=4, idle_stop=0.2)
    game = new_game(moving, "g1")
    assert watch.wait(game, 0, timeout=0.1) is None
    assert watch.feeding
    deadline = time.monotonic() + 5
    while watch.feeding and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not watch.feeding
    appender = append_later(moving, game, 0, 0.2)
    assert watch.wait(game, 0, timeout=5) == 1
    appender.join()


# --- the route -----------------------------------------------------------------------------------------

@pytest.fixture
def played(client):
    """A yacht game of one human against the greedy bot, its client seed sent: (game id, token)."""
    created = client.post("/v1/games", json=YACHT_WITH_BOT).get_json()
    gid, token = created["game_id"], created["tokens"][0]["token"]
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "watched"},
                       headers={"Authorization": f"Bearer {token}"}).status_code == 200
    return gid, token


def roll(client, gid: str, token: str) -> dict:
    answer = client.post(f"/v1/games/{gid}/roll", json={}, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def test_new_events_are_answered_at_once_with_what_the_game_state_shows(client, played):
    gid, token = played
    count = roll(client, gid, token)["event_count"]
    for after in (0, 1, count - 1):
        started = time.monotonic()
        answer = client.get(f"/v1/games/{gid}/events?after={after}")
        assert time.monotonic() - started < 0.5
        assert answer.status_code == 200
        assert answer.headers["ETag"] == f'"{count}"'
        assert answer.headers["Cache-Control"] == "no-store"
        # exactly the public state: nothing the game's own GET would not show
        assert answer.get_data() == client.get(f"/v1/games/{gid}?since={after}").get_data()
    openapi_checker(client)("GameState", answer.get_json())


def test_a_watcher_gets_the_move_made_while_it_waits(client, played):
    gid, token = played
    before = client.get(f"/v1/games/{gid}").get_json()["event_count"]

    def move():
        time.sleep(0.3)
        roll(client.application.test_client(), gid, token)

    mover = threading.Thread(target=move)
    mover.start()
    started = time.monotonic()
    answer = client.get(f"/v1/games/{gid}/events?after={before}")
    waited = time.monotonic() - started
    mover.join()
    assert answer.status_code == 200 and 0.3 <= waited < 0.3 + WAKE_BOUND
    state = answer.get_json()
    assert state["events_from"] == before and state["event_count"] > before
    assert state["events"] == client.get(f"/v1/games/{gid}").get_json()["events"][before:]


def test_a_move_through_another_worker_wakes_the_watcher(tmp_path, played, client):
    gid, token = played
    other_worker = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}).test_client()  # its own store and watch
    before = client.get(f"/v1/games/{gid}").get_json()["event_count"]
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(other_worker.get, f"/v1/games/{gid}/events?after={before}")
        time.sleep(0.3)
        assert not watching.done()
        moved = roll(client, gid, token)
        answer = watching.result(timeout=WAKE_BOUND + 1)
    assert answer.status_code == 200 and answer.get_json()["event_count"] == moved["event_count"]


def test_if_none_match_stands_for_after(client, played):
    gid, token = played
    count = roll(client, gid, token)["event_count"]
    answer = client.get(f"/v1/games/{gid}/events", headers={"If-None-Match": f'"{count - 2}"'})
    assert answer.status_code == 200 and answer.get_json()["events_from"] == count - 2
    unchanged = client.get(f"/v1/games/{gid}/events?wait=0", headers={"If-None-Match": answer.headers["ETag"]})
    assert unchanged.status_code == 304 and unchanged.headers["ETag"] == f'"{count}"'


def test_nothing_new_within_the_wait_is_304_with_the_same_etag(client, played):
    gid, _ = played
    count = client.get(f"/v1/games/{gid}").get_json()["event_count"]
    started = time.monotonic()
    answer = client.get(f"/v1/games/{gid}/events?after={count}&wait=1")
    assert 1 <= time.monotonic() - started < 1 + WAKE_BOUND
    assert answer.status_code == 304 and answer.get_data() == b""
    assert answer.headers["ETag"] == f'"{count}"' and "Retry-After" not in answer.headers


def test_a_game_that_is_over_is_answered_at_once(client, played):
    gid, token = played
    over = client.post(f"/v1/games/{gid}/abandon", json={}, headers={"Authorization": f"Bearer {token}"})
    assert over.status_code == 200, over.get_json()
    count = over.get_json()["event_count"]
    started = time.monotonic()
    answer = client.get(f"/v1/games/{gid}/events?after={count}")
    assert answer.status_code == 304 and time.monotonic() - started < 0.5


def test_past_the_parked_requests_allowed_the_answer_comes_at_once_with_retry_after(tmp_path):
    client = create_app({"FAIRDICE_DATA_DIR": str(tmp_path), "FAIRDICE_THREADS": "1"}).test_client()  # parks none
    created = client.post("/v1/games", json=YACHT_WITH_BOT).get_json()
    started = time.monotonic()
    answer = client.get(f"/v1/games/{created['game_id']}/events?after=0")
    assert time.monotonic() - started < 0.5
    assert answer.status_code == 304 and answer.headers["Retry-After"] == str(POLL_AFTER)


@pytest.mark.parametrize("query, headers, status, code", [
    ("after=x", {}, 400, "invalid_query"),
    ("after=-1", {}, 400, "invalid_query"),
    ("after=1000001", {}, 400, "invalid_query"),
    ("wait=26", {}, 400, "invalid_query"),
    ("since=0", {}, 400, "invalid_query"),
    ("", {"If-None-Match": "*"}, 400, "invalid_if_none_match"),
    ("", {"If-None-Match": '"1", "2"'}, 400, "invalid_if_none_match"),
    ("after=999", {}, 409, "after_beyond_events"),
])
def test_refusals_are_problem_documents(client, played, query, headers, status, code):
    gid, _ = played
    answer = client.get(f"/v1/games/{gid}/events?{query}", headers=headers)
    assert answer.status_code == status
    assert answer.mimetype == "application/problem+json" and answer.get_json()["code"] == code


def test_an_unknown_game_is_404(client):
    answer = client.get("/v1/games/nope/events?after=0")
    assert answer.status_code == 404 and answer.get_json()["code"] == "game_not_found"


def test_an_after_beyond_the_game_names_its_event_count(client, played):
    gid, _ = played
    count = client.get(f"/v1/games/{gid}").get_json()["event_count"]
    assert client.get(f"/v1/games/{gid}/events?after={count + 1}").get_json()["event_count"] == count


class CountingGames(Games):
    """The service, counting the state documents it renders."""
    rendered = 0

    def state(self, *args, **kwargs):
        CountingGames.rendered += 1
        return super().state(*args, **kwargs)


def test_watchers_woken_by_one_move_share_one_rendering(app, played):
    gid, token = played
    service = app.extensions["fairdice"]
    app.extensions["fairdice"] = CountingGames(service.store, service.keys)
    watch = app.extensions["fairdice_watch"] = Watch(service.store, max_parked=8)
    count = app.test_client().get(f"/v1/games/{gid}").get_json()["event_count"]
    with ThreadPoolExecutor(8) as pool:
        watching = [pool.submit(app.test_client().get, f"/v1/games/{gid}/events?after={count}") for _ in range(8)]
        until_parked(watch, 8)
        CountingGames.rendered = 0
        roll(app.test_client(), gid, token)
        answers = [f.result(timeout=WAKE_BOUND + 1) for f in watching]
    assert {a.status_code for a in answers} == {200} and len({a.get_data() for a in answers}) == 1
    assert CountingGames.rendered == 1
