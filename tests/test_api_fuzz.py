"""Fuzz the API from its own OpenAPI document (schemathesis, bounded).

Every operation gets generated requests, valid and invalid; every answer must
be documented (status, content type, headers, body schema) and none may be a
5xx.  A second pass aims the moves at a real game in play, with its seat's
token, so the generated bodies reach the core instead of stopping at 404.
A third sends every creation and move past the rate limits: each 429 must be
documented too (status, Retry-After, body).
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


def _game_in_play(app, rules: str = "classic13") -> tuple[str, str]:
    client = app.test_client()
    created = client.post("/v1/games", json={"rules": rules,
                                             "seats": [{"type": "human", "name": "fuzz"}, {"type": "bot", "bot": "ev"}]})
    gid, token = created.get_json()["game_id"], created.get_json()["tokens"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "fuzz"}, headers=auth)
    client.post(f"/v1/games/{gid}/roll", json={}, headers=auth)
    return gid, token


def no_server_error(response) -> None:
    if response.status_code == 503 and response.json().get("code") == "engine_warming_up":
        assert int(response.headers["Retry-After"]) > 0
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
    # a hint needs the rule set's optimal table: yacht's is the quickest to build on a fresh machine
    gid, token = _game_in_play(fuzzed_app, "yacht" if case.path.endswith("/hint") else "classic13")
    case.path_parameters["game_id"] = gid
    headers = dict(case.headers or {})
    auth = next((name for name in headers if name.lower() == "authorization"), None)
    if auth is not None:  # keep the cases that leave the token out on purpose
        headers[auth] = f"Bearer {token}"
    case.headers = headers
    response = case.call_and_validate(excluded_checks=EXCLUDED)
    no_server_error(response)


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
