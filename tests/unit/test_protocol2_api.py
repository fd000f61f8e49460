"""Protocol 2 over HTTP (SPEC §4.3, §5.6, §9): commit and reveal, move receipts, who may abandon, the server's
timeout, version 1 games still in a store; and end to end, two humans and a bot on a real `fairdice serve`.

Chains and signatures are recomputed here from the formulas of SPEC §5.6 (hashlib, json, cryptography), not
taken from fairdice.log.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import secrets
import subprocess
import threading
import time

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from requests.adapters import HTTPAdapter

from api.games import Games, GameNotFoundError
from fairdice.edges.client import ApiResponseError, Client, ProtocolError, SeedNotAcceptedError
from fairdice.errors import NotNowError
from support.api_helpers import (best_option, choose_hold, installed_command, openapi_checker, play_session,
                              spec_canonical, spec_field, store_version_1_game)

ANN, BO, CY = ({"type": "human", "name": n} for n in ("ann", "bo", "cy"))
GREEDY = {"type": "bot", "bot": "greedy"}


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


canonical, field = spec_canonical, spec_field


def commitment_of(client_seed: str, salt: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + client_seed.encode("utf-8")).hexdigest()


def spec_chain(head: dict, events: list[dict]) -> bytes:
    h = hashlib.sha256(field("fairdice-chain/v2") + field(head["game_id"]) + canonical(head)).digest()
    for event in events:
        h = hashlib.sha256(h + canonical(event)).digest()
    return h


def assert_receipt_of(receipt: dict, log: dict, public_key: str) -> None:
    """The move receipt signs h_n of the log's header and first n events (SPEC §5.6)."""
    head, n = log["header"], receipt["events"]
    assert set(receipt) == {"game_id", "events", "chain", "key_id", "signature"}
    assert receipt["game_id"] == head["game_id"] and receipt["key_id"] == head["key_id"]
    assert 0 <= n <= len(log["events"])
    digest = spec_chain(head, log["events"][:n])
    assert receipt["chain"] == digest.hex()
    message = field("fairdice-receipt/v2") + field(head["game_id"]) + n.to_bytes(4, "big") + digest
    Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key)).verify(bytes.fromhex(receipt["signature"]), message)


def problem(resp, status, code):
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    body = resp.get_json()
    assert body["code"] == code and body["status"] == status
    return body


def create(client, seats, rules="yacht", **extra):
    resp = client.post("/v1/games", json={"rules": rules, "seats": seats, **extra})
    assert resp.status_code == 201, resp.get_json()
    created = resp.get_json()
    return created, {t["seat"]: t["token"] for t in created["tokens"]}


def key_of(client) -> str:
    return client.get("/v1/keys").get_json()["keys"][0]["public_key"]


# --- commit and reveal ---------------------------------------------------------------------------

def test_two_humans_commit_then_reveal(client):
    created, tokens = create(client, [ANN, GREEDY, BO])
    gid, url = created["game_id"], f"/v1/games/{created['game_id']}/client-seed"
    assert created["commit_reveal"] is True and created["header"]["abandon_timeout"] == 86400
    seeds, salts = {0: "ann's secret", 2: "bo's secret"}, {0: secrets.token_hex(32), 2: secrets.token_hex(32)}
    bodies = [json.dumps(created)]

    def post(seat, body):
        resp = client.post(url, json=body, headers=bearer(tokens[seat]))
        bodies.append(resp.get_data(as_text=True))
        return resp

    state = client.get(f"/v1/games/{gid}").get_json()
    assert state["awaiting_commitments"] == [0, 2] and state["commit_reveal"] is True and state["version"] == 3
    assert [(s["committed"], s["commitment"], s["revealed"]) for s in state["seats"]] == [(False, None, False)] * 3
    problem(post(0, {"client_seed": seeds[0]}), 409, "client_seed_commit_required")
    problem(post(0, {"client_seed": seeds[0], "salt": salts[0]}), 409, "awaiting_commitments")
    problem(post(0, {"commitment": commitment_of(seeds[0], salts[0]), "salt": salts[0]}), 400, "invalid_body")
    problem(post(0, {"commitment": "ab" * 31}), 422, "invalid_commitment")
    problem(post(0, {"salt": salts[0]}), 400, "invalid_body")
    promise = commitment_of(seeds[0], salts[0])
    state = post(0, {"commitment": promise}).get_json()
    assert state["events"] == [{"type": "client_seed_commit", "seat": 0, "commitment": promise, "player_key": None,
                                "player_signature": None}]  # (version 3: a seat that chose not to sign)
    assert state["awaiting_commitments"] == [2] and state["seats"][0]["committed"] is True
    assert state["seats"][0]["commitment"] == promise and state["seats"][2]["committed"] is False
    problem(post(0, {"commitment": commitment_of("other", salts[0])}), 409, "commitment_already_set")
    body = problem(post(0, {"client_seed": seeds[0], "salt": salts[0]}), 409, "awaiting_commitments")
    assert body["awaiting"] == [2]
    bodies.append(client.get(f"/v1/games/{gid}").get_data(as_text=True))
    bodies.append(client.get(f"/v1/games/{gid}/log").get_data(as_text=True))
    state = post(2, {"commitment": commitment_of(seeds[2], salts[2])}).get_json()
    assert state["awaiting_commitments"] == [] and state["status"] == "awaiting_client_seed"
    # no answer before the last commitment shows a client seed or a salt
    for secret in (*seeds.values(), *salts.values()):
        assert not any(secret in text or secret.upper() in text for text in bodies), secret
    # reveals: only the committed seed with its salt opens the commitment
    problem(post(2, {"client_seed": seeds[0], "salt": salts[0]}), 422, "client_seed_mismatch")
    problem(post(2, {"client_seed": seeds[2], "salt": salts[0]}), 422, "client_seed_mismatch")
    problem(post(2, {"client_seed": seeds[2], "salt": "X" * 64}), 422, "invalid_salt")
    problem(post(2, {"client_seed": seeds[2]}), 409, "client_seed_commit_required")
    state = post(2, {"client_seed": seeds[2], "salt": salts[2]}).get_json()
    assert state["events"] == [{"type": "client_seed", "seat": 2, "client_seed": seeds[2], "salt": salts[2],
                                "player_key": None, "player_signature": None}]
    assert state["seats"][2]["revealed"] is True and state["seats"][0]["revealed"] is False
    problem(post(2, {"client_seed": seeds[2], "salt": salts[2]}), 409, "client_seed_already_set")
    state = post(0, {"client_seed": seeds[0], "salt": salts[0]}).get_json()
    assert [e["type"] for e in state["events"]] == ["client_seed", "start"] and state["status"] == "playing"
    assert state["awaiting_client_seeds"] == [] and [s["revealed"] for s in state["seats"]] == [True, False, True]
    problem(post(0, {"commitment": commitment_of("late", salts[0])}), 409, "client_seed_closed")


def test_a_game_of_one_human_takes_no_commitment(client):
    created, tokens = create(client, [ANN, GREEDY])
    url = f"/v1/games/{created['game_id']}/client-seed"
    assert created["commit_reveal"] is False
    problem(client.post(url, json={"commitment": "ab" * 32}, headers=bearer(tokens[0])), 422, "commitment_not_used")
    problem(client.post(url, json={"client_seed": "s", "salt": "ab" * 32}, headers=bearer(tokens[0])), 422,
            "commitment_not_used")
    state = client.post(url, json={"client_seed": "s"}, headers=bearer(tokens[0])).get_json()
    assert state["events"][0] == {"type": "client_seed", "seat": 0, "client_seed": "s", "player_key": None,
                                  "player_signature": None}
    assert state["awaiting_commitments"] == [] and state["seats"][0]["revealed"] is True


# --- move receipts ---------------------------------------------------------------------------------

def play_on(client, tokens, state, gid, answers):
    """Every human seat plays `roll, roll holding its most common face, best box` until the game is over."""
    while state["status"] == "playing":
        h = bearer(tokens[state["current_seat"]])
        state = client.post(f"/v1/games/{gid}/roll", json={}, headers=h).get_json()
        answers.append(state)
        if state["rolls_left"] and len(choose_hold(state["dice"])) < 5:
            hold = choose_hold(state["dice"])
            state = client.post(f"/v1/games/{gid}/roll", json={"hold": hold}, headers=h).get_json()
            answers.append(state)
        state = client.post(f"/v1/games/{gid}/score", json={"category": best_option(state)}, headers=h).get_json()
        answers.append(state)
    return state


def test_every_answer_to_a_move_carries_the_receipt_of_the_history(client):
    created, tokens = create(client, [ANN, GREEDY, BO], first="random")
    gid, url = created["game_id"], f"/v1/games/{created['game_id']}/client-seed"
    salt = secrets.token_hex(32)
    answers = [client.post(url, json={"commitment": commitment_of(f"s{seat}", salt)}, headers=bearer(token)).get_json()
               for seat, token in tokens.items()]
    answers += [client.post(url, json={"client_seed": f"s{seat}", "salt": salt}, headers=bearer(token)).get_json()
                for seat, token in tokens.items()]
    state = play_on(client, tokens, answers[-1], gid, answers)
    assert state["status"] == "finished"
    log = client.get(f"/v1/games/{gid}/log").get_json()
    key = key_of(client)
    for answer in answers:
        assert answer["receipt"]["events"] == answer["event_count"]
        assert_receipt_of(answer["receipt"], log, key)
    assert answers[-1]["receipt"]["events"] == len(log["events"])
    # reading the game carries the receipt of the whole history, page or not
    for query in ("", "?since=3&limit=2"):
        read = client.get(f"/v1/games/{gid}{query}").get_json()
        assert read["receipt"]["events"] == len(log["events"])
        assert_receipt_of(read["receipt"], log, key)


def test_a_retried_move_gets_the_same_receipt_and_reading_does_not_move_it(client):
    created, tokens = create(client, [ANN])
    gid, h = created["game_id"], bearer(tokens[0])
    client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=h)
    first = client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "k"}).get_json()
    again = client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "k"}).get_json()
    assert again["receipt"] == first["receipt"] and first["receipt"]["events"] == 3
    read = client.get(f"/v1/games/{gid}").get_json()["receipt"]
    assert read == first["receipt"]  # the same history: the same chain, and Ed25519 signs deterministically
    assert_receipt_of(read, client.get(f"/v1/games/{gid}/log").get_json(), key_of(client))
    created2, _ = create(client, [ANN])
    fresh = client.get(f"/v1/games/{created2['game_id']}").get_json()["receipt"]
    assert fresh["events"] == 0 and fresh["chain"] == spec_chain(created2["header"], []).hex()


# --- abandon ------------------------------------------------------------------------------------------

def started(client, seats):
    created, tokens = create(client, seats)
    url, salt = f"/v1/games/{created['game_id']}/client-seed", "c4" * 32
    if created["commit_reveal"]:
        for seat, token in tokens.items():
            client.post(url, json={"commitment": commitment_of(f"s{seat}", salt)}, headers=bearer(token))
    state = None
    for seat, token in tokens.items():
        body = {"client_seed": f"s{seat}", **({"salt": salt} if created["commit_reveal"] else {})}
        state = client.post(url, json=body, headers=bearer(token)).get_json()
    return created, tokens, state


def test_a_seat_abandons_only_for_itself_and_on_its_turn(client):
    created, tokens, state = started(client, [ANN, BO, GREEDY])
    gid = created["game_id"]
    assert state["current_seat"] == 0
    body = problem(client.post(f"/v1/games/{gid}/abandon", headers=bearer(tokens[1])), 409, "not_your_turn")
    assert body["current_seat"] == 0
    state = client.post(f"/v1/games/{gid}/abandon", headers=bearer(tokens[0])).get_json()
    assert state["events"] == [{"type": "abandon", "seat": 0, "reason": "player", "player_signature": None}] \
        and state["status"] == "abandoned"
    assert state["final"]["server_seed"] and state["receipt"]["events"] == state["event_count"]
    # before the start any human seat may give up
    created, tokens = create(client, [ANN, BO])
    state = client.post(f"/v1/games/{created['game_id']}/abandon", headers=bearer(tokens[1])).get_json()
    assert state["events"] == [{"type": "abandon", "seat": 1, "reason": "player", "player_signature": None}]


def test_the_operator_of_a_game_without_humans_abandons_as_seat_null(client):
    created, tokens = create(client, [GREEDY, GREEDY])
    state = client.post(f"/v1/games/{created['game_id']}/abandon", headers=bearer(tokens[None])).get_json()
    assert state["events"] == [{"type": "abandon", "seat": None, "reason": "player"}]
    problem(client.post(f"/v1/games/{created['game_id']}/abandon", headers=bearer(tokens[None])), 409, "game_over")


def stamp_seconds(app, gid) -> int:
    """The store's updated_at of the game, as seconds since the epoch."""
    stamp = app.extensions["fairdice"].store.snapshot(gid).record.updated_at
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def test_the_server_abandons_only_after_the_timeout(app, client):
    games = app.extensions["fairdice"]
    created, tokens, state = started(client, [ANN, GREEDY])
    gid, timeout = created["game_id"], created["header"]["abandon_timeout"]
    last = stamp_seconds(app, gid)
    for now in (time.time(), last + timeout):  # the stored second may have just begun: wait it out too
        with pytest.raises(NotNowError) as err:
            games.expire(gid, now)
        assert err.value.code == "not_expired"
    assert client.get(f"/v1/games/{gid}").get_json()["event_count"] == state["event_count"]
    # a move restarts the wait
    time.sleep(max(0.0, last + 1 - time.time()) + 0.01)  # into the next second of the store's clock
    client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0]))
    moved = stamp_seconds(app, gid)
    assert moved > last
    with pytest.raises(NotNowError):
        games.expire(gid, last + timeout + 1)
    reply = games.expire(gid, moved + timeout + 1)
    state = json.loads(reply.body)
    assert not reply.replayed and state["events"] == [{"type": "abandon", "seat": None, "reason": "timeout"}]
    assert state["status"] == "abandoned" and state["final"]["server_seed"]
    log = client.get(f"/v1/games/{gid}/log").get_json()
    assert log["final"]["status"] == "abandoned" and log["signature"] and log["events"][-1]["reason"] == "timeout"
    assert_receipt_of(state["receipt"], log, key_of(client))
    with pytest.raises(NotNowError) as err:
        games.expire(gid, moved + 10 * timeout)
    assert err.value.code == "game_over"
    with pytest.raises(GameNotFoundError):
        games.expire("no-such-game", time.time())


def test_the_timeout_is_the_servers_and_signed_in_every_header(app, tmp_path):
    """A server configured with another timeout writes it into (and signs it with) each new header."""
    games = app.extensions["fairdice"]
    short = Games(games.store, games.keys, abandon_timeout=120)
    created = short.create("yacht", [ANN])
    assert created["header"]["abandon_timeout"] == 120
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(created["public_key"]))
    key.verify(bytes.fromhex(created["commitment_signature"]), canonical(created["header"]))
    with pytest.raises(NotNowError):
        short.expire(created["game_id"], time.time() + 60)
    assert json.loads(short.expire(created["game_id"], time.time() + 122).body)["status"] == "abandoned"


# --- version 1 games in a store ---------------------------------------------------------------------

def test_a_version_1_game_in_the_store_goes_on_by_version_1_rules(app, client):
    """A game created before version 2 (two humans, no commitments) is played to its end as it began."""
    games = app.extensions["fairdice"]
    game_id = "old-v1-game"
    tokens = store_version_1_game(games, game_id, [ANN, BO])
    url = f"/v1/games/{game_id}/client-seed"
    state = client.get(f"/v1/games/{game_id}").get_json()
    assert state["version"] == 1 and state["abandon_timeout"] is None and state["commit_reveal"] is False
    problem(client.post(url, json={"commitment": "ab" * 32}, headers=bearer(tokens[0])), 422, "commitment_not_used")
    client.post(url, json={"client_seed": "one"}, headers=bearer(tokens[1]))
    state = client.post(url, json={"client_seed": "zero"}, headers=bearer(tokens[0])).get_json()
    assert state["status"] == "playing" and state["current_seat"] == 0
    state = client.post(f"/v1/games/{game_id}/abandon", headers=bearer(tokens[1])).get_json()
    assert state["events"] == [{"type": "abandon", "seat": 1}]  # version 1: any seat, any time, no reason
    log = client.get(f"/v1/games/{game_id}/log").get_json()
    assert log["version"] == 1 and "abandon_timeout" not in log["header"]
    assert_receipt_of(state["receipt"], log, key_of(client))


def test_the_service_raises_domain_errors(app):
    games = app.extensions["fairdice"]
    with pytest.raises(GameNotFoundError) as err:
        games.state("no-such-game")
    assert err.value.code == "game_not_found"
    created = games.create("yacht", [ANN])
    with pytest.raises(NotNowError) as err:
        games.hint(created["game_id"])
    assert err.value.code == "not_playing"


def test_commit_reveal_answers_match_the_openapi_schemas(client):
    check = openapi_checker(client)

    created, tokens = create(client, [ANN, GREEDY, BO])
    check("CreatedGame", created)
    url, salt = f"/v1/games/{created['game_id']}/client-seed", "d5" * 32
    check("ClientSeed", {"commitment": commitment_of("s0", salt)})
    check("ClientSeed", {"client_seed": "s0", "salt": salt})
    for seat in (0, 2):
        check("GameState", client.post(url, json={"commitment": commitment_of(f"s{seat}", salt)},
                                       headers=bearer(tokens[seat])).get_json())
    check("Problem", client.post(url, json={"client_seed": "s0", "salt": "00" * 32},
                                 headers=bearer(tokens[0])).get_json())
    for seat in (0, 2):
        state = client.post(url, json={"client_seed": f"s{seat}", "salt": salt}, headers=bearer(tokens[seat]))
        check("GameState", state.get_json())
    state = client.post(f"/v1/games/{created['game_id']}/abandon", headers=bearer(tokens[0])).get_json()
    check("GameState", state)
    check("MoveReceipt", state["receipt"])
    check("Log", client.get(f"/v1/games/{created['game_id']}/log").get_json())


# --- end to end: two humans and a bot on `fairdice serve` ------------------------------------------------

class Recorder:
    """A requests session that keeps every answer body, in order (shared by several threads)."""

    def __init__(self):
        self.session = requests.Session()
        self.bodies: list[str] = []
        self._lock = threading.Lock()
        self.session.hooks["response"].append(self._keep)

    def _keep(self, resp, *args, **kwargs):
        with self._lock:
            self.bodies.append(resp.text)


@pytest.mark.e2e
def test_two_humans_and_a_bot_over_http(server, tmp_path):
    recorders = [Recorder(), Recorder()]
    apis = [Client(server.url, session=r.session) for r in recorders]
    created = apis[0].create_game("yacht", [ANN, GREEDY, BO], first="random")
    ann, bo = apis[0].seat(created, 0), apis[1].seat(created, 2)
    joined = {}
    thread = threading.Thread(target=lambda: joined.update(state=ann.join(poll=0.05)))  # commits, waits, reveals
    thread.start()
    deadline = time.monotonic() + 30
    while not apis[1].state(created["game_id"])["seats"][0]["committed"]:
        assert time.monotonic() < deadline, "seat 0 never committed"
        time.sleep(0.05)
    bo.check_commitment()
    bo.commit()  # the last commitment: from here on reveals are accepted
    before_last_commit = [len(r.bodies) for r in recorders]
    with pytest.raises(ApiResponseError) as err:  # a reveal that does not open the commitment is refused
        apis[1].send_client_seed(created["game_id"], bo.token, bo.client_seed, salt="00" * 32)
    assert err.value.status == 422 and err.value.code == "client_seed_mismatch"
    bo.reveal()
    thread.join(30)
    assert not thread.is_alive() and joined["state"]["events"][0]["type"] == "client_seed"
    assert apis[0].state(created["game_id"])["status"] == "playing"
    secrets_sent = [ann.client_seed, ann.salt, bo.client_seed, bo.salt]
    for recorder, upto in zip(recorders, before_last_commit):
        assert upto and not any(s in body for body in recorder.bodies[:upto] for s in secrets_sent)

    players = {0: ann, 2: bo}
    state = ann.refresh()
    moves = 0
    while state["status"] == "playing":
        me = players[state["current_seat"]]
        state = me.roll()
        if state["rolls_left"] and len(choose_hold(state["dice"])) < 5:
            state = me.roll(choose_hold(state["dice"]))
            moves += 1
        state = me.score(best_option(state))
        moves += 2
    assert state["status"] == "finished"
    # every answer to a move had its receipt, checked and kept (2 seed steps each, then every roll and score),
    # and so did every state read that showed a longer history
    assert len(ann.receipts) + len(bo.receipts) >= 4 + moves
    for held in (ann.receipts, bo.receipts):
        counts = [r["events"] for r in held]
        assert counts == sorted(set(counts))
    log = apis[0].log(created["game_id"])
    key = apis[0].keys()[0]["public_key"]
    assert log["version"] == 3 and log["header"] == created["header"]
    assert [e["type"] for e in log["events"][:5]] == ["client_seed_commit"] * 2 + ["client_seed"] * 2 + ["start"]
    for receipt in ann.receipts + bo.receipts:
        assert_receipt_of(receipt, log, key)
    # the log as the verifier sees it, held to every receipt of both players
    (tmp_path / "game.json").write_text(json.dumps(log))
    ann.save_receipts(str(tmp_path / "ann.json"))
    bo.save_receipts(str(tmp_path / "bo.json"))
    assert json.loads((tmp_path / "ann.json").read_text()) == ann.receipts
    (tmp_path / "keys.json").write_text(requests.get(server.url + "/v1/keys", timeout=5).text)
    out = subprocess.run([installed_command("fairdice-verify"), "--pubkey", str(tmp_path / "keys.json"),
                          "--receipts", str(tmp_path / "ann.json"), "--receipts", str(tmp_path / "bo.json"),
                          str(tmp_path / "game.json")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    ann.verify()  # each raises VerificationError unless every check passes
    bo.verify()


@pytest.mark.e2e
def test_the_client_resends_the_same_seed_and_refuses_a_forged_receipt(app_url):
    api = Client(app_url, backoff=0.0)
    game = api.new_game("yacht", bot="greedy")
    game.choose_client_seed("mine")
    with pytest.raises(ValueError):
        game.join("another")  # a new seed for the same game is never sent
    assert game.client_seed == "mine" and game.receipt["client_seed"] == "mine"
    state = game.join()
    assert state["events"][0] == {"type": "client_seed", "seat": 0, "client_seed": "mine",
                                  "player_key": game.player_key,
                                  "player_signature": state["events"][0]["player_signature"]}
    assert game.receipts == [state["receipt"]]
    forged = {**state, "receipt": {**state["receipt"], "events": state["event_count"] + 1}}
    with pytest.raises(ProtocolError):
        game._took(forged)
    assert game.receipts == [state["receipt"]]


class RefuseSeeds(HTTPAdapter):
    """Answers 503 to every client-seed request without delivering it, and keeps what was asked."""

    def __init__(self):
        super().__init__()
        self.asked: list[tuple[str, bytes]] = []

    def send(self, request, **kwargs):
        if request.method == "POST" and request.url.endswith("/client-seed"):
            self.asked.append((request.headers.get("Idempotency-Key"), request.body))
            resp = requests.Response()
            resp.status_code, resp.request, resp.url = 503, request, request.url
            resp._content = b'{"code":"busy","detail":"try again"}'
            resp.headers["Content-Type"] = "application/problem+json"
            return resp
        return super().send(request, **kwargs)


@pytest.mark.e2e
def test_a_refused_seed_is_resent_unchanged_and_then_reported(app_url):
    session = requests.Session()
    refuse = RefuseSeeds()
    session.mount("http://", refuse)
    api = Client(app_url, session=session, backoff=0.0)
    game = api.new_game("yacht", bot="greedy")
    with pytest.raises(SeedNotAcceptedError) as err:
        game.join()
    assert "unchanged" in str(err.value) and "new client seed" in str(err.value)
    with pytest.raises(SeedNotAcceptedError):
        game.join()  # a second try, later: still the same request
    assert len(refuse.asked) == 2 * (1 + api.retries)
    assert len(set(refuse.asked)) == 1  # one Idempotency-Key, one body: the same seed every time
    sent = json.loads(refuse.asked[0][1])
    assert sent["client_seed"] == game.client_seed and sent["player_key"] == game.player_key
    assert set(sent) == {"client_seed", "player_key", "player_signature", "event_count"}
    session.close()
    plain = Client(app_url)  # the server answers again: the same seed goes through
    game.client = plain
    state = game.join()
    assert state["events"][0]["client_seed"] == game.client_seed == json.loads(refuse.asked[0][1])["client_seed"]


@pytest.mark.e2e
def test_fairdice_play_saves_every_move_receipt(app_url, tmp_path):
    path = tmp_path / "moves.json"
    _, out = play_session(app_url, ["r", "r 0", "s choice", "r", "q"],
                 ["--rules", "yacht", "--bot", "greedy", "--save-receipts", str(path), "--save-log", str(tmp_path / "log.json")])
    receipts = json.loads(path.read_text())
    log = json.loads((tmp_path / "log.json").read_text())
    # the client seed, two rolls, a score (with the bot's turn), a roll and the abandon: one receipt each
    assert [r["events"] for r in receipts] == sorted(r["events"] for r in receipts) and len(receipts) == 6
    assert receipts[-1]["events"] == len(log["events"]) and log["events"][-1]["reason"] == "player"
    key = Client(app_url).keys()[0]["public_key"]
    for receipt in receipts:
        assert_receipt_of(receipt, log, key)
    assert f"6 move receipts in {path}" in out
