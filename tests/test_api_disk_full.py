"""A disk the service fills by itself: games played with an Idempotency-Key on every move until the disk is full
(a real tmpfs, as root: CI runs as root), then room made.  Every move answered 200 is in the stored history, the
refusals are 503 `disk_full` problem documents, and the very next move after room is made is served."""

from __future__ import annotations

import pytest

from test_api import EV, HUMAN, bearer, started
from test_api_helpers import play_turn
from test_store_faults import mount, unmount

DISK = "8m"  # the disk the issue saw filled by the service itself (233 moves, answers kept in full)


@pytest.fixture
def disk(tmp_path):
    """A tmpfs of DISK for the data directory (mounting needs root: CI runs as root)."""
    path = tmp_path / "disk"
    path.mkdir()
    mount("-t", "tmpfs", "-o", f"size={DISK},mode=0700", "tmpfs", str(path))
    yield path
    unmount(path)


def app_at(data):
    from api import create_app
    return create_app({"FAIRDICE_DATA_DIR": str(data)})


class Refused(Exception):
    def __init__(self, resp, game_id, token, path, body, key):
        super().__init__(resp.status_code)
        self.resp, self.game_id, self.token, self.path, self.body, self.key = resp, game_id, token, path, body, key


def play_until_refused(client, answered: dict) -> Refused:
    """Games played move after move (a roll, one reroll towards the most common face, the best box), every move
    with a key, each answer kept in `answered` by game, until a move is refused: that refusal."""
    for _ in range(500):
        created, tokens, state = started(client, [HUMAN, EV], "yacht")
        gid, token = created["game_id"], tokens[0]

        def post(path, body):
            key = f"{gid}-{len(answered.get(gid, []))}"
            resp = client.post(f"/v1/games/{gid}/{path}", json=body, headers={**bearer(token), "Idempotency-Key": key})
            if resp.status_code != 200:
                raise Refused(resp, gid, token, path, body, key)
            answered.setdefault(gid, []).append(resp.get_json())
            return answered[gid][-1]

        try:
            while state["status"] == "playing":
                state = play_turn(lambda hold: post("roll", {"hold": hold} if hold else {}),
                                  lambda box: post("score", {"category": box}), state, rerolls=1)
        except Refused as refused:
            return refused
    pytest.fail("the disk never filled")


def test_a_disk_the_service_fills_itself_loses_no_answered_move_and_serves_again_once_room_is_made(
        disk):
    app = app_at(disk / "data")
    client = app.test_client()
    (disk / "room").write_bytes(b"\0" * (512 << 10))  # another file on the disk, deleted to make room
    answered: dict[str, list[dict]] = {}
    refused = play_until_refused(client, answered)
    resp = refused.resp
    assert resp.status_code == 503 and resp.headers["Content-Type"].startswith("application/problem+json")
    assert resp.get_json()["code"] == "disk_full" and "Retry-After" in resp.headers
    assert sum(len(states) for states in answered.values()) > 0
    (disk / "room").unlink()  # room again: the refused move goes through at once
    again = client.post(f"/v1/games/{refused.game_id}/{refused.path}", json=refused.body,
                        headers={**bearer(refused.token), "Idempotency-Key": refused.key})
    assert again.status_code == 200, again.get_data(as_text=True)
    restarted = app_at(disk / "data").test_client()
    for gid, states in answered.items():
        stored = restarted.get(f"/v1/games/{gid}").get_json()
        for state in states:  # every answered move's events are the stored history's, at the same place
            since = state["events_from"]
            assert stored["events"][since:since + len(state["events"])] == state["events"]
            assert stored["event_count"] >= state["event_count"]
