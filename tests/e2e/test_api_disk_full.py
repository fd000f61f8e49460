"""A disk the service fills by itself: games played with an Idempotency-Key on every move until the disk is full
(a real tmpfs, as root: CI runs as root), then room made.  Every move answered 200 is in the stored history, the
refusals are 503 `disk_full` problem documents, and the refused request, sent again once room is made, is served."""

from __future__ import annotations

import pytest

from support.api_helpers import EV, HUMAN, bearer
from support.api_helpers import play_turn
from support.disks import mount, unmount

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
    """A request the service refused, and how to send it again."""

    def __init__(self, resp, again):
        super().__init__(resp.status_code)
        self.resp, self.again = resp, again


def send(client, url: str, body: dict, headers: dict | None = None) -> dict:
    resp = client.post(url, json=body, headers=headers or {})
    if resp.status_code not in (200, 201):
        raise Refused(resp, lambda: client.post(url, json=body, headers=headers or {}))
    return resp.get_json()


def play_until_refused(client, answered: dict) -> Refused:
    """Games created, started and played move after move (a roll, one reroll towards the most common face, the
    best box), every move with a key, each answer kept in `answered` by game, until a request is refused (a
    creation, a client seed or a move): that refusal."""
    try:
        for _ in range(500):
            created = send(client, "/v1/games", {"rules": "yacht", "seats": [HUMAN, EV]})
            gid, token = created["game_id"], created["tokens"][0]["token"]
            state = send(client, f"/v1/games/{gid}/client-seed", {"client_seed": "s"}, bearer(token))

            def post(path, body):
                key = f"{gid}-{len(answered.get(gid, []))}"
                state = send(client, f"/v1/games/{gid}/{path}", body, {**bearer(token), "Idempotency-Key": key})
                answered.setdefault(gid, []).append(state)
                return state

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
    (disk / "room").unlink()  # room again: the refused request goes through at once
    again = refused.again()
    assert again.status_code in (200, 201), again.get_data(as_text=True)
    restarted = app_at(disk / "data").test_client()
    for gid, states in answered.items():
        stored = restarted.get(f"/v1/games/{gid}").get_json()
        for state in states:  # every answered move's events are the stored history's, at the same place
            since = state["events_from"]
            assert stored["events"][since:since + len(state["events"])] == state["events"]
            assert stored["event_count"] >= state["event_count"]
