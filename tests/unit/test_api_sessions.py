"""The session routes (SPEC §10.10) through the app: 200 mixed notations over two seed pairs whose log verifies,
a changed roll that fails, malformed notation answered with 4xx problem documents, the order of a session's
commands, idempotent rolls, the app's signatures, rate limits, and no server seed before its reveal."""

from __future__ import annotations

import copy
import json

import pytest

from fairdice.sessions import AppKey, roll_command, rotate_command, start_chain
from verifier.cli import main as verify

NOTATIONS = ["4d6kh3", "2d20kl1", "d100", "3d6+2", "1d1000-7", "10d2", "6d6kl2", "d257", "2d129+1", "5d8",
             "d20", "100d6", "2d12kh1-3", "d1000", "8d10kl8"]
MALFORMED = [("0d6", "dice_count"), ("2d1", "dice_sides"), ("3d6++", "dice_syntax"), ("1d6kh2", "dice_keep"),
             ("1000000d6", "dice_count"), ("1d100000", "dice_sides"), ("1d6+0", "dice_modifier"),
             ("d", "dice_syntax"), ("2D6", "dice_syntax"), ("1d6; DROP TABLE", "dice_syntax"),
             ("", "dice_syntax"), ("1d6+9999999", "dice_modifier")]


@pytest.fixture
def client(make_app):
    return make_app({"FAIRDICE_RATE_MOVES_TOKEN": "off", "FAIRDICE_RATE_MOVES_CLIENT": "off"}).test_client()


def opened(client) -> tuple[str, dict, dict]:
    r = client.post("/v1/sessions")
    assert r.status_code == 201, r.json
    return r.json["session_id"], {"Authorization": "Bearer " + r.json["token"]}, r.json


def post(client, path: str, doc: dict, headers: dict, status: int = 200) -> dict:
    r = client.post(path, json=doc, headers=headers)
    assert r.status_code == status, r.json
    return r.json


def write_verification_inputs(client, tmp_path, session_id: str, log: dict | None = None):
    (tmp_path / "keys.json").write_bytes(client.get("/v1/keys").data)
    doc = log if log is not None else client.get(f"/v1/sessions/{session_id}/log").json
    (tmp_path / "log.json").write_text(json.dumps(doc))
    return ["--pubkey", str(tmp_path / "keys.json"), str(tmp_path / "log.json")]


def two_hundred_rolls(client) -> tuple[str, dict, list[dict], list[str]]:
    """200 mixed notations, 120 in the first seed pair and 80 in the second, both pairs rotated; the receipts
    and the text of every answer."""
    sid, auth, made = opened(client)
    answers, receipts = [json.dumps(made)], []
    first = post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "my app's first seed"}, auth)
    receipts.append(first["receipt"])
    for i in range(200):
        if i == 120:
            rotated = post(client, f"/v1/sessions/{sid}/rotate", {"client_seed": "my app's second seed"}, auth)
            receipts.append(rotated["receipt"])
            answers.append(json.dumps(rotated))
        answer = post(client, f"/v1/sessions/{sid}/rolls", {"dice": NOTATIONS[i % len(NOTATIONS)]}, auth)
        expected = (0, i, i + 1) if i < 120 else (1, i - 120, i + 1)
        assert (answer["pair"], answer["nonce"], answer["serial"]) == expected
        receipts.append(answer["receipt"])
        answers.append(json.dumps(answer))
    last = post(client, f"/v1/sessions/{sid}/rotate", {}, auth)
    receipts.append(last["receipt"])
    answers.append(json.dumps(last))
    return sid, auth, receipts, answers


def test_a_session_of_200_mixed_rolls_over_two_seed_pairs_verifies(client, tmp_path, capsys):
    sid, _, receipts, answers = two_hundred_rolls(client)
    log = client.get(f"/v1/sessions/{sid}/log").json
    rolls = [e for e in log["events"] if e["type"] == "roll"]
    assert len(rolls) == 200 and [e["serial"] for e in rolls] == list(range(1, 201))
    (tmp_path / "receipts.json").write_text(json.dumps(receipts))
    args = write_verification_inputs(client, tmp_path, sid, log)
    assert verify(["--session-receipts", str(tmp_path / "receipts.json"), *args]) == 0, capsys.readouterr().out
    # no answer before a pair's rotation showed its server seed
    for rotate in [e for e in log["events"] if e["type"] == "rotate"]:
        shown = [i for i, text in enumerate(answers) if rotate["server_seed"] in text]
        assert shown and all("revealed" in json.loads(answers[i]) for i in shown)


def test_a_changed_roll_fails(client, tmp_path, capsys):
    sid, _, _, _ = two_hundred_rolls(client)
    log = copy.deepcopy(client.get(f"/v1/sessions/{sid}/log").json)
    roll = [e for e in log["events"] if e["type"] == "roll"][77]
    roll["total"] += 1
    assert verify(write_verification_inputs(client, tmp_path, sid, log)) == 1
    assert "session.signature" in capsys.readouterr().out  # not re-signed: the signature shows it first
    capsys.readouterr()
    assert verify(["--json", *write_verification_inputs(client, tmp_path, sid, log)]) == 1
    failures = json.loads(capsys.readouterr().out)["games"][0]["failures"]
    assert {f["check"] for f in failures} == {"session.signature", "session.total"}


@pytest.mark.parametrize("text, code", MALFORMED)
def test_malformed_notation_gets_a_problem_document(client, text, code):
    sid, auth, _ = opened(client)
    post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c"}, auth)
    r = client.post(f"/v1/sessions/{sid}/rolls", json={"dice": text}, headers=auth)
    assert r.status_code == 422 and r.mimetype == "application/problem+json"
    assert r.json["code"] == code and r.json["type"] == f"urn:fairdice:problem:{code}" and r.json["grammar"]


@pytest.mark.parametrize("doc", [{}, {"dice": 6}, {"dice": ["1d6"]}, {"dice": "1d6", "extra": 1}])
def test_a_roll_request_of_the_wrong_shape_is_400(client, doc):
    sid, auth, _ = opened(client)
    r = client.post(f"/v1/sessions/{sid}/rolls", json=doc, headers=auth)
    assert r.status_code == 400 and r.mimetype == "application/problem+json" and r.json["code"] == "invalid_body"


def test_the_order_of_a_sessions_commands(client):
    sid, auth, made = opened(client)
    assert post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, auth, 409)["code"] == "client_seed_required"
    assert post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "\u0000"}, auth, 422)["code"] == \
        "invalid_client_seed"
    post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c"}, auth)
    assert post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "d"}, auth, 409)["code"] == \
        "client_seed_already_set"
    rotated = post(client, f"/v1/sessions/{sid}/rotate", {}, auth)
    assert rotated["commitment"] == made["next_commitment"] and rotated["pair"] == 1
    assert post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, auth, 409)["code"] == "client_seed_required"
    assert client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "1d6"}).status_code == 401
    assert post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, {"Authorization": "Bearer x"}, 403)["code"] \
        == "invalid_token"
    assert post(client, "/v1/sessions/s-none/rolls", {"dice": "1d6"}, auth, 404)["code"] == "session_not_found"
    assert client.get("/v1/sessions/s-none/log").status_code == 404


def test_a_retried_roll_gets_the_same_answer_and_no_second_roll(client):
    sid, auth, _ = opened(client)
    post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c"}, auth)
    keyed = {**auth, "Idempotency-Key": "roll-1"}
    first = client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "3d6"}, headers=keyed)
    again = client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "3d6"}, headers=keyed)
    assert again.data == first.data and again.headers["Idempotent-Replayed"] == "true"
    assert post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, auth)["nonce"] == 1
    other = client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "2d6"}, headers=keyed)
    assert other.status_code == 422 and other.json["code"] == "idempotency_key_reused"


def test_an_app_key_signs_every_request_and_the_log_proves_it(client, tmp_path, capsys):
    app = AppKey.from_private_hex("11" * 32)
    sid, auth, made = opened(client)
    header = made["header"]
    chain = start_chain(header)
    answer = post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c", "app_key": app.public_hex}, auth)
    chain = chain.extend(answer["events"])
    assert post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, auth, 422)["code"] == "app_signature_required"
    for nonce, dice in enumerate(["2d6", "d20", "4d6kh3"]):
        signature = app.sign(sid, chain, roll_command(0, nonce, dice))
        stale = {"dice": dice, "app_signature": signature, "event_count": chain.count - 1}
        assert post(client, f"/v1/sessions/{sid}/rolls", stale, auth, 409)["code"] == "stale_history"
        answer = post(client, f"/v1/sessions/{sid}/rolls", {**stale, "event_count": chain.count}, auth)
        chain = chain.extend(answer["events"])
        assert answer["receipt"]["chain"] == chain.digest.hex()  # what the app saw is what the server signed
    forged = app.sign(sid, chain, roll_command(0, 3, "1d6"))
    assert post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d20", "app_signature": forged,
                                                       "event_count": chain.count}, auth, 422)["code"] == \
        "invalid_app_signature"
    post(client, f"/v1/sessions/{sid}/rotate", {"app_signature": app.sign(sid, chain, rotate_command(0)),
                                                "event_count": chain.count}, auth)
    args = write_verification_inputs(client, tmp_path, sid)
    assert verify(["--app-key", app.public_hex, *args]) == 0
    out = capsys.readouterr().out
    assert "WARNING" not in out and "3 rolls" in out


def test_opening_sessions_counts_against_the_creation_rate_limit(make_app):
    client = make_app({"FAIRDICE_RATE_CREATE": "2/min"}).test_client()
    assert [client.post("/v1/sessions").status_code for _ in range(3)] == [201, 201, 429]


def test_rolls_count_against_the_token_rate_limit(make_app):
    client = make_app({"FAIRDICE_RATE_MOVES_TOKEN": "3/min"}).test_client()
    sid, auth, _ = opened(client)
    post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c"}, auth)
    codes = [client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "1d6"}, headers=auth).status_code
             for _ in range(3)]
    assert codes[-1] == 429 and codes[0] == 200


def test_the_log_is_signed_and_holds_the_revealed_pairs_only(client):
    sid, auth, made = opened(client)
    assert client.get(f"/v1/sessions/{sid}/log").json["events"] == []
    post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c"}, auth)
    post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, auth)
    post(client, f"/v1/sessions/{sid}/rotate", {"client_seed": "d"}, auth)
    post(client, f"/v1/sessions/{sid}/rolls", {"dice": "1d6"}, auth)
    log = client.get(f"/v1/sessions/{sid}/log").json
    assert [e["type"] for e in log["events"]] == ["client_seed", "roll", "rotate"]
    assert log["header"] == made["header"] and set(log) == {"format", "version", "header", "commitment_signature",
                                                            "events", "signature"}


def test_the_answers_match_the_openapi_schemas(client):
    from support.api_helpers import openapi_checker

    check = openapi_checker(client)
    r = client.post("/v1/sessions")
    check("CreatedSession", r.json)
    sid, auth = r.json["session_id"], {"Authorization": "Bearer " + r.json["token"]}
    check("SessionAnswer", post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "c"}, auth))
    check("SessionAnswer", post(client, f"/v1/sessions/{sid}/rolls", {"dice": "4d6kh3+1"}, auth))
    check("SessionAnswer", post(client, f"/v1/sessions/{sid}/rotate", {"client_seed": "d", "app_key": None}, auth))
    check("SessionLog", client.get(f"/v1/sessions/{sid}/log").json)
    paths = client.get("/openapi.json").json["paths"]
    assert {"/v1/sessions", "/v1/sessions/{session_id}/client-seed", "/v1/sessions/{session_id}/rolls",
            "/v1/sessions/{session_id}/rotate", "/v1/sessions/{session_id}/log"} <= set(paths)


@pytest.mark.e2e
def test_a_session_on_postgresql_rolls_rotates_and_verifies(postgres_url, make_app, tmp_path, capsys):
    from support.stores import PostgresBackend

    backend = PostgresBackend(postgres_url)
    try:
        client = make_app({"FAIRDICE_DB": backend.url, "FAIRDICE_RATE_MOVES_TOKEN": "off"}).test_client()
        sid, auth, _ = opened(client)
        post(client, f"/v1/sessions/{sid}/client-seed", {"client_seed": "on postgres"}, auth)
        keyed = {**auth, "Idempotency-Key": "pg-1"}
        first = client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "3d6"}, headers=keyed)
        assert client.post(f"/v1/sessions/{sid}/rolls", json={"dice": "3d6"}, headers=keyed).data == first.data
        for dice in NOTATIONS:
            post(client, f"/v1/sessions/{sid}/rolls", {"dice": dice}, auth)
        post(client, f"/v1/sessions/{sid}/rotate", {}, auth)
        assert verify(write_verification_inputs(client, tmp_path, sid)) == 0
        assert f"{len(NOTATIONS) + 1} rolls" in capsys.readouterr().out
    finally:
        backend.close()
