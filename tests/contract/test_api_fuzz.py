"""Fuzz the API from its own OpenAPI document (schemathesis, bounded).

Every operation gets generated requests, valid and invalid; every answer must
be documented (status, content type, headers, body schema) and none may be a
5xx.  A second pass aims every route of a game at a real game made for the
case (one awaiting its client seed for client-seed, one in play for the rest),
with its seat's token and the command unsigned (signing is optional: a seat
that sent no key moves unsigned), so the generated bodies reach the core
instead of stopping at 404 or at a signature no fuzzer can make; a valid
client seed (the schema states the text rule as a pattern), a valid roll and
an abandon must then be accepted.  A third sends every creation and move past
the rate limits: each 429 must be documented too (status, Retry-After, body).
"""

from __future__ import annotations

import pytest

import schemathesis
from hypothesis import HealthCheck, assume, settings

from api import create_app

pytestmark = pytest.mark.slow  # about 10 seconds for the three fuzzers and their apps

MAX_EXAMPLES = 12
# A schema-valid request may still be an illegal move (first=4 in a 2-seat game, a filled box): the rules
# live in the core, not in the schema, so such requests are rightly refused with 422.  Every other check
# (documented status, content type, headers and body; negative data rejected) runs.  The one 5xx answer
# the API documents, 503 while the optimal engine's table is being built (a game with an `optimal` seat of a
# rule set other than yacht, here), is accepted by `no_server_error` below; every other 5xx fails.
EXCLUDED = [schemathesis.checks.positive_data_acceptance, schemathesis.checks.not_a_server_error]
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def fuzzed_app(tmp_path_factory, optimal_table):
    """One app for the whole module (conftest's `app` is one per test): the schema is loaded from it once."""
    optimal_table("yacht")  # the hints are aimed at a yacht game
    return create_app({"FAIRDICE_DATA_DIR": str(tmp_path_factory.mktemp("fuzz"))})


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture(scope="module")
def api_schema(fuzzed_app):
    return schemathesis.openapi.from_wsgi("/openapi.json", fuzzed_app)


SIGNING_FIELDS = ("player_key", "player_signature", "event_count")  # what makes a command a signed one


def _game_for(app, path: str) -> tuple[str, str]:
    """A fresh game for one case: awaiting its client seed for client-seed, else in play (seed sent, dice
    rolled once); yacht for a hint (its optimal table is the quickest to build on a fresh machine)."""
    client = app.test_client()
    created = client.post("/v1/games", json={"rules": "yacht" if path.endswith("/hint") else "classic13",
                                             "seats": [{"type": "human", "name": "fuzz"}, {"type": "bot", "bot": "ev"}]})
    gid, token = created.get_json()["game_id"], created.get_json()["tokens"][0]["token"]
    if not path.endswith("/client-seed"):
        auth = {"Authorization": f"Bearer {token}"}
        assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "fuzz"}, headers=auth).status_code == 200
        assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200
    return gid, token


def _must_be_accepted(case) -> bool:
    """Whether no rule of the game can refuse this unsigned command with its token: a client seed (the schema's
    pattern states the text rule) on a game awaiting it, a roll (positions 0..4, each once) after the first
    roll of a turn, an abandon.  (A score names a category the rule set may not have or that is filled.)"""
    action = case.path.rpartition("/")[2]
    body = case.body if isinstance(case.body, dict) else {}
    if action == "client-seed":
        return set(body) == {"client_seed"}
    return action in ("roll", "abandon")


def no_server_error(response) -> None:
    if response.status_code == 503 and response.json().get("code") == "engine_warming_up":
        assert int(response.headers["retry-after"][0]) > 0  # (schemathesis: lower-case names, lists of values)
        return
    assert response.status_code < 500, response.text


@schema.parametrize()
@SETTINGS
def test_every_answer_is_documented(case):
    response = case.call_and_validate(excluded_checks=EXCLUDED)
    no_server_error(response)


@schema.include(path_regex=r"\{game_id\}").parametrize()
@SETTINGS
def test_moves_on_a_real_game(case, fuzzed_app):
    # negative cases are the first test's; only valid requests are aimed at a real game
    assume(case.meta is not None and case.meta.generation.mode == schemathesis.GenerationMode.POSITIVE)
    gid, token = _game_for(fuzzed_app, case.path)
    case.path_parameters["game_id"] = gid
    headers = dict(case.headers or {})
    auth = next((name for name in headers if name.lower() == "authorization"), None)
    if auth is not None:  # keep the cases that leave the token out on purpose
        headers[auth] = f"Bearer {token}"
    case.headers = headers
    if isinstance(case.body, dict):  # unsigned: no fuzzer can sign over the game's history
        case.body = {name: value for name, value in case.body.items() if name not in SIGNING_FIELDS}
    response = case.call_and_validate(excluded_checks=EXCLUDED)
    no_server_error(response)
    if auth is not None and _must_be_accepted(case):
        assert response.status_code == 200, (case.body, response.text)


# --- past the rate limits: every creation and move is a documented 429 ------------------------------------------

@pytest.fixture(scope="module")
def limited_app(tmp_path_factory):
    """An app whose every limit is 1/h, already used up by this address: each creation and move is refused."""
    from werkzeug.test import Client

    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path_factory.mktemp("fuzz-limited")),
                      "FAIRDICE_RATE_CREATE": "1/h", "FAIRDICE_RATE_MOVES_CLIENT": "1/h"})
    client = Client(app)  # what schemathesis calls the app with: the same client address (none)
    created = client.post("/v1/games", json={"rules": "yacht", "seats": [{"type": "human"}]}).get_json()
    spent = client.post(f"/v1/games/{created['game_id']}/client-seed", json={"client_seed": "fuzz"},
                        headers={"Authorization": f"Bearer {created['tokens'][0]['token']}"})
    assert spent.status_code == 200 and client.post("/v1/games", json={}).status_code == 429
    return app


limited_schema = schemathesis.pytest.from_fixture("limited_api_schema")


@pytest.fixture(scope="module")
def limited_api_schema(limited_app):
    return schemathesis.openapi.from_wsgi("/openapi.json", limited_app)


@limited_schema.include(method="POST").parametrize()
@SETTINGS
def test_answers_past_the_rate_limits_are_documented(case):
    response = case.call_and_validate(excluded_checks=EXCLUDED)
    no_server_error(response)
    if case.meta is not None and case.meta.generation.mode == schemathesis.GenerationMode.POSITIVE:
        # refused before anything else; only a move without a token is refused first, for that (401)
        code = response.json()["code"]
        assert (response.status_code, code) in ((429, "rate_limited"), (401, "missing_token")), response.text
