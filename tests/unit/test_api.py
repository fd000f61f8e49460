"""The HTTP API through Flask's test client: every route, every refusal, storage and secrecy."""

from __future__ import annotations

import calendar
import hashlib
import json
import stat
import time

import pytest

from api import create_app
from api.config import settings
from api.keys import KeyFileError, KeyRing, SeedBox
from api.store import BusyError, ConflictError, GameNotFoundError, Remember, Remembered, SQLiteStore
from fairdice.adapters import table_cache
from fairdice.bots import BOTS, measured_scores, position_of
from fairdice.edges.client import verify_log
from fairdice.game import Game
from fairdice.hint import hint as core_hint
from fairdice.log import canonical, setup_from_header, verify_signature
from fairdice.rules import RULESETS
from support.api_helpers import (EV, HUMAN, SALT, assert_problem, bearer, create, openapi_checker, play_turn,
                                 seed_commitment, started)
from support import VECTORS

# the published bot identities (SPEC §4.5, tests/vectors/bots.json): what headers and /v1/bots must name
BOT_IDENTITY = {v["id"]: {"id": v["id"], "version": v["version"], "hash": v["hash"]}
                for v in json.loads((VECTORS / "bots.json").read_text())}

# --- reference documents ----------------------------------------------------------------

def test_healthz_and_openapi(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/livez").get_json() == {"status": "ok"}
    doc = client.get("/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["schemas"]["BotId"]["enum"] == list(BOTS)
    for path in ("/v1/rules", "/v1/bots", "/v1/keys", "/v1/games", "/v1/games/{game_id}",
                 "/v1/games/{game_id}/log", "/v1/games/{game_id}/client-seed", "/v1/games/{game_id}/roll",
                 "/v1/games/{game_id}/score", "/v1/games/{game_id}/abandon", "/v1/games/{game_id}/hint",
                 "/healthz", "/livez"):
        assert path in doc["paths"]


def _resolved(doc: dict, response: dict) -> dict:
    while "$ref" in response:
        response = doc["components"]["responses"][response["$ref"].rpartition("/")[2]]
    return response


MOVES = ("client-seed", "roll", "score", "abandon")


def test_openapi_documents_limits_and_faults(client):
    """429 on creation and every move, 503 with Retry-After wherever the store is used, an unhealthy /healthz."""
    doc = client.get("/openapi.json").get_json()
    paths = doc["paths"]
    game_operations = [op for path, ops in paths.items() if path.startswith("/v1/games") for op in ops.values()]
    assert len(game_operations) == 10  # (the analysis of a game that is over: GET /v1/games/{game_id}/analysis)
    for op in game_operations:
        unavailable = _resolved(doc, op["responses"]["503"])
        assert unavailable["headers"]["Retry-After"]["required"] is True
        for reason in ("busy", "disk_full", "read_only", "database_missing", "database_replaced", "unreachable",
                       "engine_warming_up"):
            assert f"`{reason}`" in unavailable["description"]
    create = paths["/v1/games"]["post"]["responses"]["429"]
    assert "`rate_limited`" in create["description"] and "`too_many_unfinished_games`" in create["description"]
    assert "Retry-After" in create["headers"] and not create["headers"]["Retry-After"].get("required")
    for move in MOVES:
        limited = _resolved(doc, paths[f"/v1/games/{{game_id}}/{move}"]["post"]["responses"]["429"])
        assert limited["headers"]["Retry-After"]["required"] is True and "`rate_limited`" in limited["description"]
    health = paths["/healthz"]["get"]["responses"]
    assert health["503"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Unhealthy"}
    assert set(doc["components"]["schemas"]["Unhealthy"]["required"]) == {"status", "reason", "detail"}
    assert {"created", "current"} <= set(doc["components"]["schemas"]["PublicKey"]["required"])


def test_rules(client):
    rules = client.get("/v1/rules").get_json()["rules"]
    assert [r["id"] for r in rules] == list(RULESETS)
    for doc in rules:
        rs = RULESETS[doc["id"]]
        assert doc["name"] == rs.name and doc["summary"] == rs.summary and doc["upper_bonus"] == rs.upper_bonus
        assert [c["id"] for c in doc["categories"]] == list(rs.category_ids)
        assert {c["section"] for c in doc["categories"]} == {"upper", "lower"}
    assert [len(r["categories"]) for r in rules] == [12, 15, 13]
    # the rule book's upper bonuses (SPEC §3), not the core's table read back
    assert [(r["id"], r["upper_bonus"]) for r in rules] == [("yacht", 35), ("yatzy", 50), ("classic13", 35)]


def test_bots(client):
    body = client.get("/v1/bots").get_json()
    bots = body["bots"]
    assert [b["id"] for b in bots] == list(BOTS)
    measured = measured_scores()
    assert body["measured_source"] == measured["source"] and body["measured_source"]
    assert body["measured_games"] == measured["games"]
    for doc in bots:
        policy = BOTS[doc["id"]]
        assert {k: v for k, v in doc.items() if k != "measured"} == {
            "id": policy.id, "version": policy.version, "level": policy.level,
            "description": policy.description, "hash": BOT_IDENTITY[doc["id"]]["hash"]}
        assert doc["version"] == BOT_IDENTITY[doc["id"]]["version"]
        assert list(doc["measured"]) == list(RULESETS)  # every bot is measured on all three rule sets
        for rules_id, score in doc["measured"].items():
            assert score == measured["bots"][policy.id][rules_id]
            assert 100 < score["mean"] < 300 and 0 < score["sd"] < 100
    means = {b["id"]: b["measured"]["classic13"]["mean"] for b in bots}
    assert means["greedy"] < means["ev"] < means["optimal"]


def test_keys(client, app):
    before = time.time()
    keys = client.get("/v1/keys").get_json()["keys"]
    assert len(keys) == 1
    key = keys[0]
    assert key["algorithm"] == "Ed25519" and len(key["public_key"]) == 64
    assert key["key_id"] == hashlib.sha256(bytes.fromhex(key["public_key"])).hexdigest()[:16]
    assert key["current"] is True
    made = calendar.timegm(time.strptime(key["created"], "%Y-%m-%dT%H:%M:%SZ"))  # a UTC stamp, made by this app
    assert before - 120 <= made <= time.time() + 1


# --- creating -------------------------------------------------------------------------

def test_create_commits_and_signs(client):
    resp = client.post("/v1/games", json={"rules": "yatzy", "seats": [HUMAN, {"type": "human", "name": "bo"}, EV],
                                         "first": "random", "upper_first": True})
    assert resp.status_code == 201
    assert resp.headers["Cache-Control"] == "no-store"
    body = resp.get_json()
    assert resp.headers["Location"] == f"/v1/games/{body['game_id']}"
    head = body["header"]
    assert head["game_id"] == body["game_id"] and head["rules"] == "yatzy" and head["upper_first"] is True
    assert head["first"] == "random" and head["seed_secret"] is True
    assert head["commitment"] == body["commitment"] and head["key_id"] == body["key_id"]
    assert head["seats"][2]["bot"] == BOT_IDENTITY["ev"]
    key = client.get("/v1/keys").get_json()["keys"][0]
    assert head["public_key"] == key["public_key"] == body["public_key"]
    verify_signature(key["public_key"], body["commitment_signature"], canonical(head), "sig.commitment")
    assert [t["seat"] for t in body["tokens"]] == [0, 1]
    assert len({t["token"] for t in body["tokens"]}) == 2
    assert body["status"] == "awaiting_client_seed" and body["awaiting_client_seeds"] == [0, 1]
    state = client.get(f"/v1/games/{body['game_id']}").get_json()
    assert state["status"] == "awaiting_client_seed" and state["current_seat"] is None and state["final"] is None
    assert state["commitment_signature"] == body["commitment_signature"]


def test_a_bot_that_cannot_play_the_house_rule_is_refused_at_creation(client):
    assert_problem(client.post("/v1/games", json={"rules": "yacht", "seats": [HUMAN, {"type": "bot", "bot": "optimal"}],
                                                  "upper_first": True}), 422, "unsupported_bot")
    create(client, [HUMAN, EV, {"type": "bot", "bot": "greedy"}], "yacht", upper_first=True)


def test_create_defaults(client):
    body = create(client, [{"type": "human"}])
    assert body["header"]["first"] == 0 and body["header"]["upper_first"] is False
    assert body["header"]["seats"] == [{"type": "human", "name": "player 1"}]


@pytest.mark.parametrize("payload, status, code", [
    (b"{", 400, "malformed_json"),
    (b"[1, 2]", 400, "invalid_body"),
    (b"", 400, "invalid_body"),
    (b'{"rules": NaN, "seats": []}', 400, "malformed_json"),
    (b'{"seats": [{"type": "human"}]}', 400, "invalid_body"),
    (b'{"rules": "yacht"}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": [{"type": "human"}], "colour": "red"}', 400, "invalid_body"),
    (b'{"rules": 7, "seats": [{"type": "human"}]}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": {"type": "human"}}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": ["human"]}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": [{"type": "human", "hat": 1}]}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": [{"type": "bot", "bot": "ev", "name": {}}]}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": [{"type": "human", "name": null}]}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": [{"type": "human"}], "first": true}', 400, "invalid_body"),
    (b'{"rules": "yacht", "seats": [{"type": "human"}], "upper_first": "yes"}', 400, "invalid_body"),
    (b'{"rules": "poker", "seats": [{"type": "human"}]}', 422, "unknown_rules"),
    (b'{"rules": "yacht", "seats": [{"type": "bot", "bot": "oracle"}]}', 422, "unknown_bot"),
    (b'{"rules": "yacht", "seats": []}', 422, "invalid_seats"),
    (b'{"rules": "yacht", "seats": [{"type": "alien"}]}', 422, "invalid_seats"),
    (b'{"rules": "yacht", "seats": [{"type": "human", "name": "\\u0007"}]}', 422, "invalid_seats"),
    (json.dumps({"rules": "yacht", "seats": [{"type": "human"}] * 7}).encode(), 422, "invalid_seats"),
    (b'{"rules": "yacht", "seats": [{"type": "human"}], "first": 1}', 422, "invalid_first"),
    (b'{"rules": "yacht", "seats": [{"type": "human"}], "first": "last"}', 422, "invalid_first"),
])
def test_create_refusals(client, payload, status, code):
    body = assert_problem(client.post("/v1/games", data=payload, content_type="application/json"), status, code)
    if code in ("unknown_rules", "unknown_bot"):
        assert body["allowed"] == list(RULESETS if code == "unknown_rules" else BOTS)


def test_body_too_large(client):
    assert_problem(client.post("/v1/games", data=b"{" + b" " * 70_000 + b"}", content_type="application/json"),
                   413)


# --- client seeds and start -----------------------------------------------------------

def test_client_seed_refusals(client):
    created = create(client, [HUMAN, {"type": "human", "name": "bo"}])
    gid, tokens = created["game_id"], [t["token"] for t in created["tokens"]]
    url = f"/v1/games/{gid}/client-seed"
    body = assert_problem(client.post(url, json={"client_seed": "x"}), 401, "missing_token")
    assert body["code"] == "missing_token"
    assert client.post(url, json={"client_seed": "x"}).headers["WWW-Authenticate"].startswith("Bearer")
    assert_problem(client.post(url, json={"client_seed": "x"}, headers={"Authorization": f"Basic {tokens[0]}"}),
                   401, "missing_token")
    assert_problem(client.post(url, json={"client_seed": "x"}, headers=bearer("nope")), 403, "invalid_token")
    other = create(client)["tokens"][0]["token"]
    assert_problem(client.post(url, json={"client_seed": "x"}, headers=bearer(other)), 403, "invalid_token")
    assert_problem(client.post("/v1/games/nosuchgame/client-seed", json={"client_seed": "x"},
                               headers=bearer(tokens[0])), 404, "game_not_found")
    assert_problem(client.post(url, json={}, headers=bearer(tokens[0])), 400, "invalid_body")
    assert_problem(client.post(url, json={"client_seed": 5}, headers=bearer(tokens[0])), 400, "invalid_body")
    # two humans: both commit (SPEC §4.3), then the seeds themselves are judged as they are revealed
    for seat, seed in ((0, "ann's"), (1, "bo's")):
        assert client.post(url, json={"commitment": seed_commitment(seed)}, headers=bearer(tokens[seat])).status_code \
            == 200
    for bad in ("", "a\nb", "x" * 257):
        assert_problem(client.post(url, json={"client_seed": bad, "salt": SALT}, headers=bearer(tokens[0])), 422,
                       "invalid_client_seed")
    # seat 0 reveals; play waits for seat 1
    state = client.post(url, json={"client_seed": "ann's", "salt": SALT}, headers=bearer(tokens[0])).get_json()
    assert state["status"] == "awaiting_client_seed" and state["awaiting_client_seeds"] == [1]
    assert state["seats"][0]["awaiting_client_seed"] is False and state["seats"][1]["awaiting_client_seed"] is True
    assert_problem(client.post(url, json={"client_seed": "again", "salt": SALT}, headers=bearer(tokens[0])), 409,
                   "client_seed_already_set")
    assert_problem(client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0])), 409, "not_playing")
    state = client.post(url, json={"client_seed": "bo's", "salt": SALT}, headers=bearer(tokens[1])).get_json()
    assert state["status"] == "playing" and state["current_seat"] == 0 and state["turn"] == 1
    assert [e["type"] for e in state["events"]] == ["client_seed", "start"]
    assert state["events_from"] == 3 and state["event_count"] == 5
    assert_problem(client.post(url, json={"client_seed": "late"}, headers=bearer(tokens[1])), 409,
                   "client_seed_closed")


def test_bot_first_plays_as_soon_as_play_starts(client):
    created, tokens, state = started(client, [EV, HUMAN], "yacht")
    assert state["current_seat"] == 1 and state["turn"] == 1
    kinds = [e["type"] for e in state["events"]]
    assert kinds[:2] == ["client_seed", "start"] and kinds[-1] == "score" and "roll" in kinds
    assert all(e["seat"] == 0 for e in state["events"][2:])
    assert sum(v is not None for v in state["seats"][0]["card"].values()) == 1


def test_random_first_rolloff(client):
    created, tokens, state = started(client, [HUMAN, EV, EV], "yatzy", first="random")
    start = next(e for e in state["events"] if e["type"] == "start")
    assert start["rolloff"] and state["first_seat"] == start["first"]
    assert [t["seat"] for t in start["rolloff"][0]] == [0, 1, 2]  # every seat throws in round 1 (SPEC §4.2)
    last_round = start["rolloff"][-1]
    best = max(sum(t["dice"]) for t in last_round)
    assert [t["seat"] for t in last_round if sum(t["dice"]) == best] == [start["first"]]
    assert state["status"] == "playing" and state["current_seat"] == 0
    # the bots seated from the first player up to the last seat have played their first turn, no one else
    bots_before_seat_0 = list(range(start["first"], 3)) if start["first"] else []
    assert [e["seat"] for e in state["events"] if e["type"] == "score"] == bots_before_seat_0


# --- rolls and scores ---------------------------------------------------------------------

def test_roll_and_score_refusals(client):
    created, tokens, state = started(client, [HUMAN, {"type": "human", "name": "bo"}, EV], "classic13")
    gid = created["game_id"]
    roll, score = f"/v1/games/{gid}/roll", f"/v1/games/{gid}/score"
    t0, t1 = bearer(tokens[0]), bearer(tokens[1])
    body = assert_problem(client.post(roll, json={}, headers=t1), 409, "not_your_turn")
    assert body["current_seat"] == 0
    assert_problem(client.post(score, json={"category": "chance"}, headers=t0), 409, "roll_first")
    assert_problem(client.post(roll, json={"hold": [0]}, headers=t0), 422, "invalid_hold")
    assert_problem(client.post(roll, json={"hold": "0"}, headers=t0), 400, "invalid_body")
    assert_problem(client.post(roll, json={"hold": [True]}, headers=t0), 400, "invalid_body")
    assert_problem(client.post(roll, json={"hold": [], "turn": 1}, headers=t0), 400, "invalid_body")
    assert_problem(client.post(roll, data=b"[", content_type="application/json", headers=t0), 400, "malformed_json")
    assert_problem(client.post(roll, json={}), 401, "missing_token")
    assert_problem(client.post("/v1/games/zzz/roll", json={}, headers=t0), 404, "game_not_found")
    first = client.post(roll, headers=t0)  # no body: hold nothing
    assert first.status_code == 200
    state = first.get_json()
    assert state["rolls_made"] == 1 and state["rolls_left"] == 2 and len(state["dice"]) == 5
    assert [e["type"] for e in state["events"]] == ["roll"]
    body = assert_problem(client.post(roll, json={"hold": [5]}, headers=t0), 422, "invalid_hold")
    assert body["allowed"] == [0, 1, 2, 3, 4]
    assert_problem(client.post(roll, json={"hold": [1, 1]}, headers=t0), 422, "invalid_hold")
    second = client.post(roll, json={"hold": [4, 0]}, headers=t0).get_json()
    assert second["dice"][0] == state["dice"][0] and second["dice"][4] == state["dice"][4]
    assert second["events"][0]["hold"] == [0, 4]
    client.post(roll, json={"hold": []}, headers=t0)
    body = assert_problem(client.post(roll, json={}, headers=t0), 422, "no_rolls_left")
    assert set(body["allowed"]) == set(RULESETS["classic13"].category_ids)
    body = assert_problem(client.post(score, json={"category": "poker"}, headers=t0), 422, "unknown_category")
    assert body["allowed"] == list(RULESETS["classic13"].category_ids)
    assert_problem(client.post(score, json={}, headers=t0), 400, "invalid_body")
    assert_problem(client.post(score, json={"category": ["chance"]}, headers=t0), 400, "invalid_body")
    state = client.post(score, json={"category": "chance"}, headers=t0).get_json()
    assert state["current_seat"] == 1 and state["dice"] == [] and state["options"] == {}
    client.post(roll, json={}, headers=t1)
    client.post(score, json={"category": "chance"}, headers=t1)  # then the bot (seat 2) plays at once
    client.post(roll, json={}, headers=t0)
    body = assert_problem(client.post(score, json={"category": "chance"}, headers=t0), 422, "illegal_category")
    assert "chance" not in body["allowed"] and "ones" in body["allowed"]


def test_score_then_bots_play(client):
    created, tokens, state = started(client, [HUMAN, EV, {"type": "bot", "bot": "greedy"}], "yacht")
    gid = created["game_id"]
    roll, score = f"/v1/games/{gid}/roll", f"/v1/games/{gid}/score"
    client.post(roll, json={}, headers=bearer(tokens[0]))
    state = client.post(score, json={"category": "choice"}, headers=bearer(tokens[0])).get_json()
    assert state["events"][0]["type"] == "score" and state["events"][0]["seat"] == 0
    bot_events = state["events"][1:]
    assert {e["seat"] for e in bot_events} == {1, 2}
    assert [e["type"] for e in bot_events if e["type"] == "score"] == ["score", "score"]
    assert state["current_seat"] == 0 and state["turn"] == 2
    full = client.get(f"/v1/games/{gid}").get_json()
    assert full["events"][-len(bot_events):] == bot_events


def test_options_are_the_cores(client, app):
    created, tokens, _ = started(client, [HUMAN], "classic13")
    gid = created["game_id"]
    state = client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0])).get_json()
    games = app.extensions["fairdice"]
    snap = games.store.snapshot(gid)
    game = games._restore(snap.record, snap.events)
    expected = {c: {"points": o.points, "yahtzee_bonus": o.yahtzee_bonus, "joker": o.joker}
                for c, o in game.scoring_options().items()}
    assert state["options"] == expected and len(expected) == 13
    dice = state["dice"]  # a fresh card: every box open, scored by the rule book (the upper boxes and chance)
    for face, box in enumerate(("ones", "twos", "threes", "fours", "fives", "sixes"), start=1):
        assert state["options"][box]["points"] == face * dice.count(face)
    assert state["options"]["chance"]["points"] == sum(dice)


def test_full_games_all_rules(client):
    for rules in RULESETS:
        created, tokens, state = started(client, [HUMAN, EV], rules)
        gid = created["game_id"]
        roll, score = _movers(client, gid, tokens[0])
        while state["status"] == "playing":
            state = play_turn(roll, score, state)
        assert state["status"] == "finished"
        final = state["final"]
        assert hashlib.sha256(bytes.fromhex(final["server_seed"])).hexdigest() == created["commitment"]
        assert [t["total"] for t in final["totals"]] == [s["totals"]["total"] for s in state["seats"]]
        assert state["current_seat"] is None and state["rolls_left"] == 0
        log = client.get(f"/v1/games/{gid}/log").get_json()
        assert log["final"] == final and "signature" in log
        assert log["events"] == client.get(f"/v1/games/{gid}").get_json()["events"]
        key = client.get("/v1/keys").get_json()["keys"][0]["public_key"]
        verify_log(log, key)  # raises VerificationError unless every check passes
        assert_problem(client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0])), 409, "not_playing")
        assert_problem(client.post(f"/v1/games/{gid}/abandon", headers=bearer(tokens[0])), 409, "game_over")


def _movers(client, gid, token):
    def roll(hold):
        resp = client.post(f"/v1/games/{gid}/roll", json={"hold": hold}, headers=bearer(token))
        assert resp.status_code == 200, resp.get_json()
        return resp.get_json()

    def score(category):
        resp = client.post(f"/v1/games/{gid}/score", json={"category": category}, headers=bearer(token))
        assert resp.status_code == 200, resp.get_json()
        return resp.get_json()
    return roll, score


# --- abandon, bot-only games ----------------------------------------------------------------

def test_abandon_reveals_and_signs(client):
    created, tokens, state = started(client, [HUMAN, EV], "yatzy")
    gid = created["game_id"]
    client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0]))
    log = client.get(f"/v1/games/{gid}/log").get_json()
    assert log["final"] is None and "signature" not in log and len(log["events"]) == 3
    assert_problem(client.post(f"/v1/games/{gid}/abandon", json={"why": 1}, headers=bearer(tokens[0])), 400)
    state = client.post(f"/v1/games/{gid}/abandon", json={}, headers=bearer(tokens[0])).get_json()
    assert state["status"] == "abandoned" and state["events"] == [{"type": "abandon", "seat": 0, "reason": "player", "player_signature": None}]
    final = state["final"]
    assert final["status"] == "abandoned" and final["winner"] is None and final["draw"] is False
    assert hashlib.sha256(bytes.fromhex(final["server_seed"])).hexdigest() == created["commitment"]
    log = client.get(f"/v1/games/{gid}/log").get_json()
    assert log["final"] == final and log["signature"]
    key = client.get("/v1/keys").get_json()["keys"][0]["public_key"]
    verify_signature(key, log["signature"], canonical({k: v for k, v in log.items() if k != "signature"}), "sig.final")
    assert_problem(client.post(f"/v1/games/{gid}/abandon", headers=bearer(tokens[0])), 409, "game_over")


def test_abandon_before_start(client):
    created = create(client)
    state = client.post(f"/v1/games/{created['game_id']}/abandon",
                        headers=bearer(created["tokens"][0]["token"])).get_json()
    assert state["status"] == "abandoned" and state["final"]["server_seed"]


def test_bot_only_game_has_an_operator_token(client):
    created = create(client, [EV, {"type": "bot", "bot": "greedy"}], "classic13")
    assert created["tokens"] == [{"seat": None, "name": None, "token": created["tokens"][0]["token"]}]
    assert created["awaiting_client_seeds"] == [None]
    gid, token = created["game_id"], created["tokens"][0]["token"]
    assert_problem(client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(token)), 403, "not_a_player")
    state = client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "operator"},
                        headers=bearer(token)).get_json()
    assert state["status"] == "finished" and state["final"]["server_seed"]
    assert state["events"][0] == {"type": "client_seed", "seat": None, "client_seed": "operator"}
    log = client.get(f"/v1/games/{gid}/log").get_json()
    verify_log(log)


# --- hints ------------------------------------------------------------------------------------

def _stored_game(app, gid):
    games = app.extensions["fairdice"]
    snap = games.store.snapshot(gid)
    return games._restore(snap.record, snap.events)


def test_hint_during_a_human_turn(client, app, optimal_table):
    optimal_table("yacht")
    created, tokens, state = started(client, [HUMAN, EV], "yacht")
    gid = created["game_id"]
    url = f"/v1/games/{gid}/hint"
    resp = client.get(url)  # no token needed: the position is public
    assert resp.status_code == 200 and resp.mimetype == "application/json"
    assert resp.headers["Cache-Control"] == "no-store"
    doc = resp.get_json()
    assert doc["game_id"] == gid and doc["seat"] == 0 and doc["turn"] == 1 and doc["dice"] == []
    assert doc["event_count"] == state["event_count"] and doc["roll"] == 0 and doc["rolls_left"] == 3
    assert doc["engine"] == "optimal" and doc["value_kind"] == "expected_final_score" and doc["rules"] == "yacht"
    assert doc["alternatives"] == [doc["best"]] and doc["tied"] == 1
    assert doc["best"]["action"] == "roll" and doc["best"]["hold"] == [] and doc["best"]["value"] == pytest.approx(
        191.7744, abs=1e-3)  # before the first roll: roll, worth the optimal start value
    assert client.get(url, headers=bearer(tokens[0])).get_json() == doc  # a token sent anyway changes nothing
    assert client.get(url, headers=bearer("not a token")).get_json() == doc

    state = client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0])).get_json()
    doc = client.get(url).get_json()
    assert doc["dice"] == state["dice"] and doc["roll"] == 1 and doc["rolls_left"] == 2
    assert doc["event_count"] == state["event_count"]
    expected = core_hint(position_of(_stored_game(app, gid)), table_cache.source())
    assert {k: v for k, v in doc.items() if k not in ("game_id", "seat", "turn", "dice", "event_count")} == expected
    assert doc["best"] == doc["alternatives"][0] and doc["best"]["loss"] == 0
    values = [a["value"] for a in doc["alternatives"]]
    assert values[0] == max(values) and all(a["loss"] >= 0 for a in doc["alternatives"])
    actions = {a["action"] for a in doc["alternatives"]}
    assert actions == {"roll", "score"}  # holds and every legal box
    assert {a["category"] for a in doc["alternatives"] if a["action"] == "score"} == set(state["options"])
    for alt in doc["alternatives"]:
        if alt["action"] == "roll":
            assert alt["keep"] == sorted(state["dice"][p] for p in alt["hold"])
        else:
            assert alt["points"] == state["options"][alt["category"]]["points"]

    # the advice is playable as given: follow it to the end of the turn
    while doc["best"]["action"] == "roll":
        state = client.post(f"/v1/games/{gid}/roll", json={"hold": doc["best"]["hold"]},
                            headers=bearer(tokens[0])).get_json()
        doc = client.get(url).get_json()
    assert doc["best"]["action"] == "score"
    if state["rolls_left"] == 0:
        assert {a["action"] for a in doc["alternatives"]} == {"score"}
    state = client.post(f"/v1/games/{gid}/score", json={"category": doc["best"]["category"]},
                        headers=bearer(tokens[0])).get_json()
    doc = client.get(url).get_json()  # the bot has played: the human's second turn
    assert doc["turn"] == 2 and doc["roll"] == 0 and doc["banked"] == state["seats"][0]["totals"]["total"]


def test_hint_under_the_upper_first_house_rule_uses_ev(client):
    created, tokens, _ = started(client, [HUMAN], "yacht", upper_first=True)
    gid = created["game_id"]
    client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0]))
    doc = client.get(f"/v1/games/{gid}/hint").get_json()
    assert doc["engine"] == "ev" and doc["value_kind"] == "expected_turn_points" and doc["note"]
    # SPEC §3.4: no lower box while an upper box is open, so the boxes offered are exactly the six upper ones
    assert {a["category"] for a in doc["alternatives"] if a["action"] == "score"} == {
        "ones", "twos", "threes", "fours", "fives", "sixes"}


def test_hint_refusals(client, app, monkeypatch):
    assert_problem(client.get("/v1/games/no-such-game/hint"), 404, "game_not_found")
    created = create(client, [HUMAN, EV], "yacht")
    gid = created["game_id"]
    body = assert_problem(client.get(f"/v1/games/{gid}/hint"), 409, "not_playing")
    assert "awaiting_client_seed" in body["detail"]
    token = created["tokens"][0]["token"]
    client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=bearer(token))
    client.post(f"/v1/games/{gid}/abandon", headers=bearer(token))
    assert_problem(client.get(f"/v1/games/{gid}/hint"), 409, "not_playing")
    assert_problem(client.post(f"/v1/games/{gid}/hint"), 405)
    # a bot to move: bots play inside the command that hands them the turn, so hold them back to see it
    monkeypatch.setattr("api.games.play_bots", lambda game, bots: [])
    created, tokens, state = started(client, [EV, HUMAN], "yacht")
    assert state["status"] == "playing" and state["current_seat"] == 0
    body = assert_problem(client.get(f"/v1/games/{created['game_id']}/hint"), 409, "bot_to_move")
    assert body["current_seat"] == 0


# --- idempotency ---------------------------------------------------------------------------

def test_idempotent_retries(client):
    created, tokens, _ = started(client, [HUMAN, EV], "classic13")
    gid, h = created["game_id"], bearer(tokens[0])
    first = client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "k1"})
    again = client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "k1"})
    assert first.status_code == again.status_code == 200
    assert again.get_data() == first.get_data() and again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    state = client.get(f"/v1/games/{gid}").get_json()
    assert state["rolls_made"] == 1 and [e["type"] for e in state["events"]].count("roll") == 1
    assert_problem(client.post(f"/v1/games/{gid}/roll", json={"hold": [0]}, headers={**h, "Idempotency-Key": "k1"}),
                   422, "idempotency_key_reused")
    assert_problem(client.post(f"/v1/games/{gid}/score", json={"category": "chance"},
                               headers={**h, "Idempotency-Key": "k1"}), 422, "idempotency_key_reused")
    assert_problem(client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": ""}), 400,
                   "invalid_idempotency_key")
    assert_problem(client.post(f"/v1/games/{gid}/roll", json={}, headers={**h, "Idempotency-Key": "x" * 256}), 400,
                   "invalid_idempotency_key")
    # a refused request is not remembered: its retry is judged afresh
    assert_problem(client.post(f"/v1/games/{gid}/score", json={"category": "nope"},
                               headers={**h, "Idempotency-Key": "k2"}), 422, "unknown_category")
    ok = client.post(f"/v1/games/{gid}/score", json={"category": "chance"}, headers={**h, "Idempotency-Key": "k3"})
    assert ok.status_code == 200
    assert client.post(f"/v1/games/{gid}/score", json={"category": "chance"},
                       headers={**h, "Idempotency-Key": "k3"}).get_data() == ok.get_data()


# --- reading ---------------------------------------------------------------------------------

def test_state_paging_and_unknown(client):
    created, tokens, _ = started(client, [EV, HUMAN], "yacht")
    gid = created["game_id"]
    full = client.get(f"/v1/games/{gid}").get_json()
    n = full["event_count"]
    assert len(full["events"]) == n and full["events_from"] == 0
    page = client.get(f"/v1/games/{gid}?since=2&limit=3").get_json()
    assert page["events"] == full["events"][2:5] and page["events_from"] == 2 and page["event_count"] == n
    assert client.get(f"/v1/games/{gid}?since={n + 5}").get_json()["events"] == []
    assert client.get(f"/v1/games/{gid}?limit=0").get_json()["events"] == []
    for bad in ("since=-1", "since=x", "limit=1001", "limit=1.5", "sort=asc"):
        assert_problem(client.get(f"/v1/games/{gid}?{bad}"), 400, "invalid_query")
    assert_problem(client.get("/v1/games/nope"), 404, "game_not_found")
    assert_problem(client.get("/v1/games/nope/log"), 404, "game_not_found")


def test_unknown_routes_and_methods(client):
    body = assert_problem(client.get("/v2/whatever"), 404, "not_found")
    assert body["title"] == "Not found"
    resp = client.delete("/v1/games")
    assert_problem(resp, 405, "method_not_allowed")
    assert "POST" in resp.headers["Allow"]
    assert_problem(client.get("/v1/games/x/roll"), 405)
    assert_problem(client.put("/v1/rules"), 405)


def test_internal_error_is_a_plain_problem(app, client, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("secret internals 0123456789abcdef")
    monkeypatch.setattr(app.extensions["fairdice"], "state", boom)
    body = assert_problem(client.get("/v1/games/anything"), 500, "internal_error")
    assert "secret" not in json.dumps(body)


def test_busy_database_is_503(app, client, monkeypatch):
    def busy(*args, **kwargs):
        raise BusyError("database is locked")
    monkeypatch.setattr(app.extensions["fairdice"].store, "create_game", busy)
    resp = client.post("/v1/games", json={"rules": "yacht", "seats": [HUMAN]})
    assert_problem(resp, 503, "busy")
    assert resp.headers["Retry-After"] == "1"


# --- storage, keys and secrecy -------------------------------------------------------------

def test_seed_never_shown_or_stored_in_clear_before_reveal(tmp_path):
    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)})
    client = app.test_client()
    bodies = []
    created = create(client, [HUMAN, EV], "classic13")
    gid, token = created["game_id"], created["tokens"][0]["token"]
    calls = [("post", f"/v1/games/{gid}/client-seed", {"client_seed": "s"}),
             ("post", f"/v1/games/{gid}/roll", {"hold": []}),
             ("post", f"/v1/games/{gid}/roll", {"hold": [9]}),
             ("post", f"/v1/games/{gid}/score", {"category": "nope"}),
             ("post", f"/v1/games/{gid}/score", {"category": "chance"}),
             ("get", f"/v1/games/{gid}", None), ("get", f"/v1/games/{gid}/log", None)]
    for method, url, body in calls:
        bodies.append(getattr(client, method)(url, json=body, headers=bearer(token)).get_data())
    db = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("fairdice.sqlite3"))
    games = app.extensions["fairdice"]
    snap = games.store.snapshot(gid)
    seed = games._restore(snap.record, snap.events)._server_seed
    assert snap.record.seed_revealed is None and snap.record.seed_sealed
    for secret in (seed, seed.hex().encode(), seed.hex().upper().encode()):
        assert secret not in db
        assert not any(secret in b for b in bodies + [json.dumps(created).encode()])
    state = client.post(f"/v1/games/{gid}/abandon", headers=bearer(token)).get_json()
    assert state["final"]["server_seed"] == seed.hex()
    assert games.store.snapshot(gid).record.seed_sealed is None


def test_tokens_stored_as_hashes(app, client):
    created = create(client)
    token = created["tokens"][0]["token"]
    record = app.extensions["fairdice"].store.snapshot(created["game_id"]).record
    assert record.tokens == [{"seat": 0, "sha256": hashlib.sha256(token.encode()).hexdigest()}]


def test_games_survive_a_new_app_on_the_same_files(tmp_path):
    first = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}).test_client()
    created, tokens, _ = started(first, [HUMAN, EV], "yacht")
    gid = created["game_id"]
    state = first.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0])).get_json()
    second = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}).test_client()
    assert second.get("/v1/keys").get_json() == first.get("/v1/keys").get_json()
    again = second.get(f"/v1/games/{gid}").get_json()
    assert again["dice"] == state["dice"] and again["event_count"] == state["event_count"]
    roll, score = _movers(second, gid, tokens[0])
    while again["status"] == "playing":
        again = play_turn(roll, score, again)
    verify_log(second.get(f"/v1/games/{gid}/log").get_json())


def test_events_are_append_only(app, client):
    created, tokens, _ = started(client)
    store = app.extensions["fairdice"].store
    conn = store._conn()
    import sqlite3
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET body = '{}' WHERE game_id = ?", (created["game_id"],))
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM events WHERE game_id = ?", (created["game_id"],))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_key_files(tmp_path):
    ring = KeyRing(tmp_path / "keys")
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    assert sorted(p.name for p in (tmp_path / "keys").iterdir()) == ["seed-encryption.key", "signing-ed25519.pem"]
    for path in (tmp_path / "keys").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert KeyRing(tmp_path / "keys").key_id == ring.key_id
    with pytest.raises(KeyFileError):
        ring.signer_for("0" * 16)
    with pytest.raises(KeyFileError):
        KeyRing(tmp_path / "absent", create=False)


def test_seed_box_binds_the_game_id():
    box = SeedBox(b"k" * 32)
    sealed = box.seal("game-a", b"s" * 32)
    assert box.open("game-a", sealed) == b"s" * 32
    assert box.seal("game-a", b"s" * 32) != sealed  # fresh nonce
    with pytest.raises(KeyFileError):
        box.open("game-b", sealed)
    with pytest.raises(KeyFileError):
        SeedBox(b"j" * 32).open("game-a", sealed)


def test_store_appends_only_after_the_expected_history(tmp_path):
    store = SQLiteStore(tmp_path / "db.sqlite3")
    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}, store=store)
    created = create(app.test_client())
    gid = created["game_id"]
    seed = {"type": "client_seed", "seat": 0, "client_seed": "s"}
    assert store.append(gid, 0, [seed], "awaiting_client_seed") is None
    with pytest.raises(ConflictError):  # computed on the history before that event: refused
        store.append(gid, 0, [seed], "awaiting_client_seed")
    keep = Remember(0, "k", "f" * 64, 200, '{"x":1}')
    assert store.append(gid, 1, [{"type": "abandon", "seat": 0}], "abandoned", remember=keep) is None
    assert store.append(gid, 2, [], "abandoned", remember=keep) == Remembered("f" * 64, 200, '{"x":1}')
    assert store.recall(gid, 0, "k") == Remembered("f" * 64, 200, '{"x":1}') and store.recall(gid, 1, "k") is None
    snap = store.snapshot(gid)
    assert snap.events == [seed, {"type": "abandon", "seat": 0}] and snap.record.status == "abandoned"
    assert store.event_count(gid) == 2 and store.event_count("nope") is None
    with pytest.raises(GameNotFoundError):
        store.append("nope", 0, [], "playing")


def test_settings_precedence(tmp_path):
    env = {"FAIRDICE_DATA_DIR": str(tmp_path / "env"), "FAIRDICE_PORT": "9000", "FAIRDICE_WORKERS": "3"}
    conf = settings({"port": 0, "FAIRDICE_DB": str(tmp_path / "x.db")}, environ=env)
    assert conf.port == 0 and conf.workers == 3 and conf.db == tmp_path / "x.db"
    assert conf.key_dir == tmp_path / "env" / "keys"
    assert settings(environ={}).data_dir.name == "var"
    with pytest.raises(ValueError):
        settings(environ={"FAIRDICE_PORT": "eighty"})


def test_restore_matches_live_game(app, client):
    created, tokens, _ = started(client, [HUMAN, EV], "classic13")
    gid = created["game_id"]
    roll, score = _movers(client, gid, tokens[0])
    state = client.get(f"/v1/games/{gid}").get_json()
    for _ in range(3):
        state = play_turn(roll, score, state)
    log = client.get(f"/v1/games/{gid}/log").get_json()
    games = app.extensions["fairdice"]
    snap = games.store.snapshot(gid)
    game = Game.restore(setup_from_header(log["header"]), games._restore(snap.record, [])._server_seed, log["events"])
    assert game.card(0).boxes == state["seats"][0]["card"] and game.current_seat == state["current_seat"]


def test_game_page_is_served(client):
    from api import page

    with client.get("/") as resp:
        assert resp.status_code == 200 and resp.mimetype == "text/html"
    scripts = sorted(p.name for p in page.STATIC_DIR.iterdir() if p.suffix == ".js")
    assert "app.js" in scripts and "verify.js" in scripts
    for name in scripts:
        with client.get(f"/ui/{name}") as asset:
            assert asset.status_code == 200 and "javascript" in asset.mimetype
    assert_problem(client.get("/ui/no-such-file.js"), 404)
    assert_problem(client.get("/static/index.html"), 404)


def test_real_answers_match_the_openapi_schemas(client, optimal_table):
    """Whole games (finished, abandoned, bot-only, roll-off) checked against the document's schemas."""
    optimal_table("yacht")  # for the hint
    check = openapi_checker(client)

    check("RulesList", client.get("/v1/rules").get_json())
    check("BotList", client.get("/v1/bots").get_json())
    check("KeyList", client.get("/v1/keys").get_json())
    created, tokens, state = started(client, [EV, HUMAN, EV], "classic13", first="random")
    check("CreatedGame", create(client, [EV]))
    check("GameState", state)
    gid = created["game_id"]
    roll, score = _movers(client, gid, tokens[1])
    for _ in range(2):
        state = play_turn(roll, score, state)
        check("GameState", state)
    check("Log", client.get(f"/v1/games/{gid}/log").get_json())
    state = client.post(f"/v1/games/{gid}/abandon", headers=bearer(tokens[1])).get_json()
    check("GameState", state)
    check("Log", client.get(f"/v1/games/{gid}/log").get_json())
    bots_only = create(client, [EV], "yatzy")
    check("GameState", client.get(f"/v1/games/{bots_only['game_id']}").get_json())
    state = client.post(f"/v1/games/{bots_only['game_id']}/client-seed", json={"client_seed": "op"},
                        headers=bearer(bots_only["tokens"][0]["token"])).get_json()
    check("GameState", state)
    check("Log", client.get(f"/v1/games/{bots_only['game_id']}/log").get_json())
    check("Problem", client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[1])).get_json())
    # yacht's optimal table is the quickest to build on a fresh machine; under upper_first no table is used
    for rules, upper_first in (("yacht", False), ("classic13", True), ("yatzy", True)):
        created, tokens, _ = started(client, [HUMAN, EV], rules, upper_first=upper_first)
        gid = created["game_id"]
        check("Hint", client.get(f"/v1/games/{gid}/hint").get_json())
        for _ in range(3):
            client.post(f"/v1/games/{gid}/roll", json={}, headers=bearer(tokens[0]))
            check("Hint", client.get(f"/v1/games/{gid}/hint").get_json())
    check("Problem", client.get("/v1/games/nope/hint").get_json())


def test_two_processes_never_act_on_an_outdated_game(tmp_path):
    """Two apps on one database stand for two gunicorn workers, each with its own cache of games."""
    a = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}).test_client()
    b = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}).test_client()
    created, tokens, _ = started(a, [HUMAN, EV], "classic13")
    gid, h = created["game_id"], bearer(tokens[0])
    for _ in range(3):
        assert a.post(f"/v1/games/{gid}/roll", json={}, headers=h).status_code == 200  # a caches the game
    # a's copy says "no rolls left"; b scores, the bot plays, and a new turn begins
    assert b.post(f"/v1/games/{gid}/score", json={"category": "chance"}, headers=h).status_code == 200
    # a must not refuse on its outdated copy, nor append after it
    state = a.post(f"/v1/games/{gid}/roll", json={}, headers=h).get_json()
    assert state["turn"] == 2 and state["rolls_made"] == 1
    assert b.post(f"/v1/games/{gid}/roll", json={"hold": [0]}, headers=h).get_json()["rolls_made"] == 2
    state = a.post(f"/v1/games/{gid}/roll", json={"hold": [1]}, headers=h).get_json()  # a's copy: roll 1
    assert state["rolls_made"] == 3 and state["events"][0]["roll"] == 3
    assert_problem(a.post(f"/v1/games/{gid}/roll", json={}, headers=h), 422, "no_rolls_left")
    log = b.get(f"/v1/games/{gid}/log").get_json()
    rolls = [(e["turn"], e["roll"]) for e in log["events"] if e["type"] == "roll" and e["seat"] == 0]
    assert rolls == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]


def test_background_checkpoints_move_the_wal_into_the_database(tmp_path):
    store = SQLiteStore(tmp_path / "db.sqlite3", checkpoint_every=0.05)
    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path)}, store=store)
    client = app.test_client()
    before = (tmp_path / "db.sqlite3").stat().st_size
    for _ in range(20):
        create(client)
    conn = store._conn()
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] > 1000  # commits do not checkpoint
    deadline = time.monotonic() + 5
    while (tmp_path / "db.sqlite3").stat().st_size == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "db.sqlite3").stat().st_size > before
    thread = store._checkpointer[1]
    store.close()
    thread.join(2)
    assert not thread.is_alive()
