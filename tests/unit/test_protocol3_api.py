"""Protocol 3 over HTTP (SPEC §5.7, §9): signed commands through the routes, their refusals as problem documents,
the Python client signing and checking what it is shown; and end to end against a server that lies.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import threading
import time

import pytest
import requests

from fairdice.chain import Chain
from fairdice.edges import play as play_mod
from fairdice.edges.client import ApiResponseError, Client, ProtocolError, parse_invite
from fairdice.players import PlayerKey
from support.api_helpers import best_option, openapi_checker, play_out

ANN, BO = {"type": "human", "name": "ann"}, {"type": "human", "name": "bo"}
GREEDY = {"type": "bot", "bot": "greedy"}


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


class Seat:
    """A player talking to the Flask test client: its key, the history it holds, each command signed over it."""

    def __init__(self, client, created: dict, seat: int):
        self.client, self.created, self.seat = client, created, seat
        self.game_id = created["game_id"]
        self.token = next(t["token"] for t in created["tokens"] if t["seat"] == seat)
        self.key = PlayerKey.generate()
        self.events: list[dict] = []

    def sync(self) -> dict:
        state = self.client.get(f"/v1/games/{self.game_id}?since={len(self.events)}").get_json()
        self.events += state["events"]
        return state

    def signed(self, command: dict, n: int | None = None) -> dict:
        n = len(self.events) if n is None else n
        digest = Chain.start(self.created["header"]).extend(self.events[:n]).digest
        return {"player_signature": self.key.sign(self.game_id, n, digest, command), "event_count": n}

    def post(self, action: str, body: dict):
        resp = self.client.post(f"/v1/games/{self.game_id}/{action}", json=body, headers=bearer(self.token))
        if resp.status_code == 200:
            doc = resp.get_json()
            assert doc["events_from"] == len(self.events)
            self.events += doc["events"]
        return resp

    def seed(self, client_seed="s") -> dict:
        command = {"type": "client_seed", "seat": self.seat, "client_seed": client_seed,
                   "player_key": self.key.public_hex}
        return self.post("client-seed", {"client_seed": client_seed, "player_key": self.key.public_hex,
                                         **self.signed(command)})

    def roll(self, hold=(), state=None):
        state = state or self.sync()
        command = {"type": "roll", "seat": self.seat, "turn": state["turn"], "roll": state["rolls_made"] + 1,
                   "hold": sorted(hold)}
        return self.post("roll", {"hold": list(hold), **self.signed(command)})


def created(client, seats=(ANN, GREEDY)) -> dict:
    resp = client.post("/v1/games", json={"rules": "yacht", "seats": list(seats)})
    assert resp.status_code == 201
    return resp.get_json()


def test_a_signed_game_through_the_routes_shows_keys_and_signatures(client):
    game = created(client)
    assert game["version"] == 3
    ann = Seat(client, game, 0)
    assert ann.seed().status_code == 200
    resp = ann.roll()
    assert resp.status_code == 200, resp.get_json()
    state = ann.sync()
    check = openapi_checker(client)
    check("GameState", state)
    assert state["seats"][0]["player_key"] == ann.key.public_hex and state["seats"][1]["player_key"] is None
    assert [e["player_signature"] is not None for e in ann.events if e.get("seat") == 0] == [True, True]
    log = client.get(f"/v1/games/{ann.game_id}/log").get_json()
    check("Log", log)
    assert log["version"] == 3 and log["events"] == ann.events


@pytest.mark.parametrize("body, status, code", [
    ({"hold": []}, 422, "player_signature_required"),
    ({"hold": [], "player_signature": "ab" * 64}, 400, "invalid_body"),  # a signature names its history
    ({"hold": [], "player_signature": "ab" * 64, "event_count": 2}, 422, "invalid_player_signature"),
    ({"hold": [], "player_signature": "zz", "event_count": 2}, 422, "invalid_player_signature"),
    ({"hold": [], "player_signature": "ab" * 64, "event_count": 1}, 409, "stale_history"),
    ({"hold": [], "player_signature": 5, "event_count": 2}, 400, "invalid_body"),
    ({"hold": [], "player_signature": "ab" * 64, "event_count": "2"}, 400, "invalid_body"),
])
def test_a_bad_signature_is_a_problem_document_and_changes_nothing(client, body, status, code):
    game = created(client)
    ann = Seat(client, game, 0)
    ann.seed()
    before = client.get(f"/v1/games/{ann.game_id}").get_json()
    resp = client.post(f"/v1/games/{ann.game_id}/roll", json=body, headers=bearer(ann.token))
    assert resp.status_code == status and resp.mimetype == "application/problem+json"
    problem = resp.get_json()
    assert problem["code"] == code
    if code == "stale_history":
        assert problem["event_count"] == 2
    after = client.get(f"/v1/games/{ann.game_id}").get_json()
    assert after["event_count"] == before["event_count"] == 2
    assert ann.roll().status_code == 200  # the genuine command still goes through


def test_a_key_is_checked_and_a_seat_may_choose_not_to_sign(client):
    game = created(client)
    bad = client.post(f"/v1/games/{game['game_id']}/client-seed", headers=bearer(game["tokens"][0]["token"]),
                      json={"client_seed": "s", "player_key": "11" * 31})
    assert bad.status_code == 422 and bad.get_json()["code"] == "invalid_player_key"
    plain = client.post(f"/v1/games/{game['game_id']}/client-seed", headers=bearer(game["tokens"][0]["token"]),
                        json={"client_seed": "s"})
    assert plain.status_code == 200
    assert plain.get_json()["events"][0] == {"type": "client_seed", "seat": 0, "client_seed": "s",
                                             "player_key": None, "player_signature": None}


def test_the_operator_token_signs_nothing(client):
    game = created(client, (GREEDY,))
    resp = client.post(f"/v1/games/{game['game_id']}/client-seed", headers=bearer(game["tokens"][0]["token"]),
                       json={"client_seed": "s", "player_key": PlayerKey.generate().public_hex})
    assert resp.status_code == 422 and resp.get_json()["code"] == "invalid_player_key"


def test_commit_and_reveal_are_signed_and_a_stale_commitment_is_signed_again(client):
    game = created(client, (ANN, GREEDY, BO))
    ann, bo = Seat(client, game, 0), Seat(client, game, 2)
    salts = {0: "a1" * 32, 2: "c3" * 32}

    def commit(p, n=None):
        c = hashlib.sha256(bytes.fromhex(salts[p.seat]) + bytes.fromhex(p.key.public_hex) + b"seed").hexdigest()
        command = {"type": "client_seed_commit", "seat": p.seat, "commitment": c, "player_key": p.key.public_hex}
        return p.post("client-seed", {"commitment": c, "player_key": p.key.public_hex, **p.signed(command, n)})

    assert commit(bo).status_code == 200
    stale = commit(ann)  # ann signed over the empty history it held: bo's commitment came first
    assert stale.status_code == 409 and stale.get_json()["code"] == "stale_history"
    ann.sync()
    assert commit(ann).status_code == 200
    for p in (ann, bo):
        p.sync()
        command = {"type": "client_seed", "seat": p.seat, "client_seed": "seed", "player_key": p.key.public_hex,
                   "salt": salts[p.seat]}
        resp = p.post("client-seed", {"client_seed": "seed", "salt": salts[p.seat], "player_key": p.key.public_hex,
                                      **p.signed(command)})
        assert resp.status_code == 200, resp.get_json()
    assert client.get(f"/v1/games/{game['game_id']}").get_json()["status"] == "playing"


# --- the Python client, end to end -----------------------------------------------------------------------------

@pytest.mark.e2e
def test_the_client_signs_every_move_and_its_game_verifies(app_url):
    game = Client(app_url).new_game("yacht", bot="greedy", name="ann")
    game.join()
    assert game.receipt["version"] == 2 and game.receipt["log_version"] == 3
    assert game.receipt["player_key"] == game.key.public_hex
    state = play_out(game)
    assert state["status"] == "finished"
    mine = [e for e in game.events if e.get("seat") == 0]
    assert mine and all(isinstance(e["player_signature"], str) for e in mine)
    assert len(game.receipts) == len(mine)  # one receipt per answer to a move of this seat (its seed included)
    assert all(r["events"] <= len(game.events) for r in game.receipts)
    result = game.verify()  # raises VerificationError unless every check passes
    assert result.warnings == []  # every human move signed: nothing to warn about


class LyingTransport(requests.adapters.HTTPAdapter):
    """The server's answers as an operator would doctor them on the way out (the server itself is real)."""

    def __init__(self, doctor):
        super().__init__()
        self.doctor = doctor

    def build_response(self, req, resp):
        response = super().build_response(req, resp)
        if req.method == "POST" and "/roll" in req.url and response.status_code == 200:
            doc = self.doctor(json.loads(response.content))
            response._content = json.dumps(doc).encode()
        return response


@pytest.mark.e2e
@pytest.mark.parametrize("lie", ["shown_dice", "no_receipt", "shown_hold", "event_in_my_name"])
def test_the_client_refuses_an_answer_that_departs_from_what_the_server_signed(app_url, lie):
    def doctor(doc):
        if lie == "shown_dice":
            doc["events"][-1]["dice"] = [6, 6, 6, 6, 6]
        elif lie == "no_receipt":
            doc["receipt"] = None
        elif lie == "shown_hold":  # the receipt signs the real history, the answer shows another
            doc["events"][-1]["hold"] = [4]
        else:  # a move this player never made, in its name
            doc["events"].append({**doc["events"][-1], "roll": 9})
            doc["event_count"] += 1
        return doc

    session = requests.Session()
    session.mount("http://", LyingTransport(doctor))
    game = Client(app_url, session=session).new_game("yacht", bot="greedy", name="ann")
    game.join()
    with pytest.raises(ProtocolError):
        game.roll()


@pytest.mark.e2e
def test_a_seat_may_play_unsigned_and_the_client_says_so_in_its_receipt(app_url):
    game = Client(app_url).new_game("yacht", bot="greedy", name="ann")
    game.sign = False
    game.join()
    assert game.key is None and game.receipt["player_key"] is None
    state = game.roll()
    assert state["events"][-1]["player_signature"] is None
    with pytest.raises(ApiResponseError) as err:
        Client(app_url).roll(game.game_id, game.token, [], signed={"player_signature": "ab" * 64, "event_count": 3})
    assert err.value.code == "invalid_player_signature"
    game.abandon()
    verdict = game.verify()
    assert len(verdict.warnings) == 1 and "could have written" in verdict.warnings[0]


@pytest.mark.e2e
def test_a_friend_joins_from_an_invite_link_in_the_terminal_and_both_verify(app_url):
    """ann (the Python client) creates a game of two humans and the greedy bot; bo plays it from a terminal with
    `fairdice play --join LINK`; each waits for the other's moves; both end with a verified, signed log."""
    api = Client(app_url)
    created = api.create_game("yacht", [ANN, GREEDY, BO])
    ann = api.seat(created, 0)
    bo_token = next(t["token"] for t in created["tokens"] if t["seat"] == 2)
    link = f"{app_url}/#game={created['game_id']}&seat=2&token={bo_token}"
    assert parse_invite(link) == (app_url + "/", created["game_id"], 2, bo_token)
    errors = []

    def ann_plays():
        try:
            ann.join(poll=0.05)
            while (state := ann.refresh())["status"] == "playing":
                if state["current_seat"] != 0:
                    time.sleep(0.05)
                    continue
                ann.roll()
                ann.score(best_option(ann.state))
        except Exception as exc:
            errors.append(exc)
            Client(app_url).abandon(created["game_id"], ann.token)  # so that bo's terminal stops waiting

    def bo_reads(prompt):
        state = api.state(created["game_id"])
        if state["status"] != "playing":
            raise EOFError
        return "r" if state["rolls_made"] == 0 else f"s {best_option(state)}"

    thread = threading.Thread(target=ann_plays)
    thread.start()
    parser = argparse.ArgumentParser()
    play_mod.configure(parser)
    args = parser.parse_args(["--join", link])
    out = io.StringIO()
    code = play_mod.play(Client(app_url), args, play_mod.Terminal(bo_reads, out), invite=parse_invite(link)[1:],
                         poll=0.05)
    thread.join(timeout=60)
    text = out.getvalue()
    assert not errors, errors
    assert code == 0, text[-3000:]
    assert "you play seat 3 (bo)" in text and "waiting for ann to play" in text and "log verified" in text
    ann.verify()
    log = api.log(created["game_id"])
    assert log["final"]["status"] == "finished" and log["version"] == 3
    for seat in (0, 2):
        assert all(isinstance(e["player_signature"], str) for e in log["events"] if e.get("seat") == seat)
