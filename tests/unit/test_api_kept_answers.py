"""Idempotency-Key answers kept as references into the history (api/games.py `_reference`): small on disk,
replayed byte for byte by any process, at any later point of the game, and old full answers still replayed."""

from __future__ import annotations

import sqlite3

from support.api_helpers import EV, HUMAN, bearer, started
from support.api_helpers import play_turn

DB = "fairdice.sqlite3"


def play_with_keys(client, gid, token) -> list[tuple[str, dict, str, bytes]]:
    """The game played to its end, every move with its own Idempotency-Key: (path, body, key, answer)."""
    moves = []
    state = client.get(f"/v1/games/{gid}").get_json()

    def post(path, body):
        key = f"key-{len(moves)}"
        resp = client.post(f"/v1/games/{gid}/{path}", json=body, headers={**bearer(token), "Idempotency-Key": key})
        assert resp.status_code == 200, resp.get_data(as_text=True)
        moves.append((path, body, key, resp.get_data()))
        return resp.get_json()

    while state["status"] == "playing":
        state = play_turn(lambda hold: post("roll", {"hold": hold} if hold else {}),
                          lambda box: post("score", {"category": box}), state, rerolls=1)
    return moves


def replay(client, gid, token, move) -> bytes:
    path, body, key, _ = move
    resp = client.post(f"/v1/games/{gid}/{path}", json=body, headers={**bearer(token), "Idempotency-Key": key})
    assert resp.status_code == 200 and resp.headers["Idempotent-Replayed"] == "true"
    return resp.get_data()


def test_every_answer_of_a_finished_game_replays_byte_for_byte_in_a_new_process(make_app):
    first = make_app().test_client()
    created, tokens, _ = started(first, [HUMAN, EV], "classic13")
    gid = created["game_id"]
    moves = play_with_keys(first, gid, tokens[0])
    assert b'"final":{' in moves[-1][3]  # the last answer reveals the seed: it must come back the same too
    restarted = make_app().test_client()  # nothing cached: every answer is rebuilt from the stored history
    for move in moves:
        assert replay(restarted, gid, tokens[0], move) == move[3], move[:3]


def test_an_answer_replays_unchanged_after_the_game_moved_on(client):
    created, tokens, _ = started(client, [HUMAN, EV], "yacht")
    gid, h = created["game_id"], bearer(tokens[0])
    first = client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "early"})
    later = client.post(f"/v1/games/{gid}/roll", json={"hold": [0, 1]}, headers=h)
    assert later.status_code == 200
    assert replay(client, gid, tokens[0], ("roll", {}, "early", first.get_data())) == first.get_data()


def test_a_kept_answer_takes_tens_of_bytes_not_the_answer(make_app, tmp_path):
    client = make_app().test_client()
    created, tokens, _ = started(client, [HUMAN, EV], "classic13")
    moves = play_with_keys(client, created["game_id"], tokens[0])
    with sqlite3.connect(tmp_path / DB) as db:
        kept = db.execute("SELECT count(*), max(length(body)), sum(length(key) + length(fingerprint) + "
                          "length(body) + length(created_at)) FROM idempotency").fetchone()
    count, longest, total = kept
    answered = sum(len(answer) for *_, answer in moves)
    assert count == len(moves) and longest < 40
    assert total < answered / 15, (total, answered)


def test_an_answer_kept_in_full_by_an_older_server_is_still_replayed(make_app, tmp_path):
    client = make_app().test_client()
    created, tokens, _ = started(client, [HUMAN, EV], "yacht")
    gid, h = created["game_id"], bearer(tokens[0])
    first = client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "old"})
    legacy = b'{"written":"in full","as":"servers before references kept it"}'
    with sqlite3.connect(tmp_path / DB) as db:  # as a server before references wrote it (triggers allow it)
        db.execute("UPDATE idempotency SET body = ? WHERE key = 'old'", (legacy.decode(),))
    restarted = make_app().test_client()
    assert replay(restarted, gid, tokens[0], ("roll", {}, "old", first.get_data())) == legacy


def test_a_damaged_reference_is_a_503_not_a_wrong_answer(make_app, tmp_path):
    client = make_app().test_client()
    created, tokens, _ = started(client, [HUMAN, EV], "yacht")
    gid, h = created["game_id"], bearer(tokens[0])
    client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "k"})
    for damaged in ("ref:state:0:999", "ref:state:x:1", "ref:state:5:2"):
        with sqlite3.connect(tmp_path / DB) as db:
            db.execute("UPDATE idempotency SET body = ? WHERE key = 'k'", (damaged,))
        resp = make_app().test_client().post(f"/v1/games/{gid}/roll", json={},
                                            headers={**h, "Idempotency-Key": "k"})
        assert resp.status_code == 503 and resp.headers["Content-Type"].startswith("application/problem+json"), \
            (damaged, resp.get_data(as_text=True))


def test_a_twin_that_commits_between_the_recall_and_the_append_gets_the_first_answer(app, client, monkeypatch):
    """Two requests with one key race: the second read the game and recalled nothing before the first
    committed, computed its own roll, and its append finds the first one's kept answer in the same transaction:
    it answers that one, rebuilt from the stored history, not its own dice."""
    created, tokens, _ = started(client, [HUMAN, EV], "yacht")
    gid, h = created["game_id"], {**bearer(tokens[0]), "Idempotency-Key": "raced"}
    games = app.extensions["fairdice"]
    read_before = games._load(gid)  # the game as the second request read it
    first = client.post(f"/v1/games/{gid}/roll", json={}, headers=h)
    monkeypatch.setattr(games.store, "recall", lambda *args: None)
    monkeypatch.setattr(games, "_take", lambda game_id: (read_before, False))
    again = client.post(f"/v1/games/{gid}/roll", json={}, headers=h)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()


def test_a_process_whose_copy_is_older_than_the_kept_answer_rebuilds_it_from_the_stored_history(make_app):
    """Two processes on one database: the second holds the game as it served it, then a retry reaches it of a
    move the first one answered since."""
    first, second = make_app().test_client(), make_app().test_client()
    created, tokens, _ = started(first, [HUMAN, EV], "yacht")
    gid, h = created["game_id"], bearer(tokens[0])
    assert second.post(f"/v1/games/{gid}/roll", json={}, headers=h).status_code == 200  # second keeps its copy
    answer = first.post(f"/v1/games/{gid}/roll", json={"hold": [0]}, headers={**h, "Idempotency-Key": "k"})
    assert answer.status_code == 200
    retry = second.post(f"/v1/games/{gid}/roll", json={"hold": [0]}, headers={**h, "Idempotency-Key": "k"})
    assert retry.status_code == 200 and retry.get_data() == answer.get_data()
