"""Hostile request bodies: every one gets a 4xx problem document (RFC 9457), never a 500; bodies are strict
JSON (verifier/strictjson.py) of at most 64 KiB whether or not they have a Content-Length; and the OpenAPI
document accepts exactly the integers the server accepts (a whole number however written: JSON Schema's
"integer"; a first seat that exists)."""

from __future__ import annotations

import io
import json

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import EnvironBuilder, run_wsgi_app

from api import create_app
from api.app import MAX_BODY
from support.api_helpers import ServeProcess

HUMAN = {"type": "human", "name": "ann"}
CREATE = {"rules": "yacht", "seats": [HUMAN]}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return create_app({"FAIRDICE_DATA_DIR": str(tmp_path_factory.mktemp("hostile-api"))})


@pytest.fixture(scope="module")
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def validator(client):
    """`validator(schema_name)`: a JSON Schema validator for a component of the served OpenAPI document."""
    import jsonschema
    import referencing

    doc = client.get("/openapi.json").get_json()
    resource = referencing.Resource.from_contents(doc, default_specification=referencing.jsonschema.DRAFT202012)
    registry = referencing.Registry().with_resource("urn:fairdice:openapi", resource)
    return lambda name: jsonschema.Draft202012Validator(
        {"$ref": f"urn:fairdice:openapi#/components/schemas/{name}"}, registry=registry)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def rolled_game(client) -> tuple[str, dict]:
    """A solitaire game after its first roll: any hold of distinct positions 0..4 is a legal next move."""
    created = client.post("/v1/games", json=CREATE).get_json()
    gid, auth = created["game_id"], bearer(created["tokens"][0]["token"])
    assert client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "s"}, headers=auth).status_code == 200
    assert client.post(f"/v1/games/{gid}/roll", json={}, headers=auth).status_code == 200
    return gid, auth


def post(client, url: str, body: bytes, headers: dict | None = None):
    return client.post(url, data=body, content_type="application/json", headers=headers or {})


def problem(response, status: int, validator) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    validator("Problem").validate(body)
    return body


# ------------------------------------------------------------------ strict JSON bodies: 400 with a clear code

STRICT = [
    ("nested 983 deep", b"[" * 983 + b"]" * 983, "nesting_too_deep"),
    ("objects nested 983 deep", b'{"a":' * 983 + b"1" + b"}" * 983, "nesting_too_deep"),
    ("nested 65 deep", b'{"rules": ' + b"[" * 64 + b"]" * 64 + b"}", "nesting_too_deep"),
    ("duplicate key", b'{"rules": "yacht", "rules": "yatzy", "seats": [{"type": "human"}]}', "duplicate_key"),
    ("duplicate key in a seat", b'{"rules": "yacht", "seats": [{"type": "human", "type": "bot"}]}', "duplicate_key"),
    ("NaN", b'{"rules": "yacht", "seats": [{"type": "human"}], "first": NaN}', "malformed_json"),
    ("Infinity", b'{"rules": "yacht", "seats": [{"type": "human"}], "first": -Infinity}', "malformed_json"),
    ("1e400", b'{"rules": "yacht", "seats": [{"type": "human"}], "first": 1e400}', "number_out_of_range"),
    ("2^53", b'{"rules": "yacht", "seats": [{"type": "human"}], "first": 9007199254740992}', "number_out_of_range"),
    ("21 digits", b'{"rules": "yacht", "seats": [{"type": "human"}], "first": 0.12345678901234567890}',
     "number_out_of_range"),
    ("lone surrogate", b'{"rules": "yacht", "seats": [{"type": "human", "name": "a\\ud800"}]}', "lone_surrogate"),
    ("not UTF-8", b'{"rules": "yacht\xff", "seats": []}', "malformed_json"),
    ("byte order mark", b'\xef\xbb\xbf{"rules": "yacht", "seats": [{"type": "human"}]}', "malformed_json"),
]


@pytest.mark.parametrize("what, body, code", STRICT, ids=[s[0] for s in STRICT])
def test_a_body_that_is_not_strict_json_is_a_400(client, validator, what, body, code):
    answer = problem(post(client, "/v1/games", body), 400, validator)
    assert answer["code"] == code and answer["detail"].startswith("the request body is not ")


@pytest.mark.parametrize("what, body, code", STRICT[:4], ids=[s[0] for s in STRICT[:4]])
def test_every_move_parses_its_body_strictly(client, validator, what, body, code):
    gid, auth = rolled_game(client)
    for move in ("client-seed", "roll", "score", "abandon"):
        assert problem(post(client, f"/v1/games/{gid}/{move}", body, auth), 400, validator)["code"] == code


BODIES = st.one_of(
    st.binary(max_size=200),
    st.tuples(st.integers(1, 3000), st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")])).map(
        lambda t: t[1][0] * t[0] + (b"1" if t[1][1] == b"}" else b"") + t[1][1] * t[0]),
    st.recursive(st.none() | st.booleans() | st.integers(-(2 ** 60), 2 ** 60) | st.floats() | st.text(max_size=8),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                     st.sampled_from(["rules", "seats", "first", "upper_first", "type", "name", "bot", "hold",
                                      "category", "client_seed", "x"]), inner, max_size=4),
                 max_leaves=12).map(lambda v: json.dumps(v).encode("utf-8", "surrogatepass")),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES, move=st.sampled_from(["", "client-seed", "roll", "score", "abandon"]))
def test_any_body_gets_an_answer_and_never_a_500(client, validator, body, move):
    if move:
        gid, auth = rolled_game(client)
        response = post(client, f"/v1/games/{gid}/{move}", body, auth)
    else:
        response = post(client, "/v1/games", body)
    assert response.status_code < 500
    if response.status_code >= 400:
        problem(response, response.status_code, validator)


# ------------------------------------------------------------------ at most 64 KiB, with or without Content-Length

def padded(size: int) -> bytes:
    """A valid create body of exactly `size` bytes (white space before its closing brace)."""
    body = json.dumps(CREATE).encode()
    return body[:-1] + b" " * (size - len(body)) + b"}"


TRAILING = json.dumps(CREATE).encode() + b" " * MAX_BODY + b"!"  # valid JSON in its first 64 KiB, then more


def chunked(app, body: bytes) -> tuple[int, dict]:
    """POST /v1/games with no Content-Length, its body ending where the stream ends: the environ that
    gunicorn and werkzeug's server build for a chunked request (the test client always sets a length)."""
    environ = EnvironBuilder(path="/v1/games", method="POST", content_type="application/json").get_environ()
    environ.pop("CONTENT_LENGTH", None)
    environ.update({"wsgi.input": io.BytesIO(body), "wsgi.input_terminated": True,
                    "HTTP_TRANSFER_ENCODING": "chunked"})
    chunks, status, _ = run_wsgi_app(app, environ, buffered=True)
    return int(status.split()[0]), json.loads(b"".join(chunks))


@pytest.mark.parametrize("body, status", [(padded(MAX_BODY), 201), (padded(MAX_BODY + 1), 413), (TRAILING, 413)],
                         ids=["64 KiB", "64 KiB + 1", "more after valid JSON"])
def test_the_size_limit_holds_with_and_without_content_length(app, client, body, status):
    assert post(client, "/v1/games", body).status_code == status
    got, answer = chunked(app, body)
    assert got == status
    if status == 413:
        assert answer["code"] == "request_entity_too_large" and str(MAX_BODY) in answer["detail"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    proc = ServeProcess(tmp_path_factory.mktemp("hostile-serve"), workers=1, threads=2).start()
    yield proc.url
    proc.stop()


@pytest.mark.e2e
@pytest.mark.parametrize("body, status", [(padded(MAX_BODY), 201), (padded(MAX_BODY + 1), 413), (TRAILING, 413),
                                          (b"[" * 983 + b"]" * 983, 400)],
                         ids=["64 KiB", "64 KiB + 1", "more after valid JSON", "nested 983 deep"])
def test_a_real_server_holds_the_limit_for_chunked_bodies(served, body, status):
    """`fairdice serve` (gunicorn) on loopback: requests sends a generator's body chunked."""
    url, headers = served + "/v1/games", {"Content-Type": "application/json"}
    with_length = requests.post(url, data=body, headers=headers, timeout=30)
    without = requests.post(url, data=iter([body[i:i + 4096] for i in range(0, len(body), 4096)]),
                            headers=headers, timeout=30)
    assert "Content-Length" not in without.request.headers and without.request.headers["Transfer-Encoding"] == "chunked"
    assert (with_length.status_code, without.status_code) == (status, status)
    if status >= 400:
        assert without.headers["Content-Type"] == "application/problem+json"


# ------------------------------------------------------------------ the OpenAPI document says what the server accepts

FIRSTS = [-1, 0, 1, 2, 5, 6, "random", "last", True, None, 0.0, 1.0, -0.0, 1e0, 0.5, 2.5]


@pytest.mark.parametrize("seats", [1, 2, 3, 6])
def test_the_schema_and_the_server_agree_on_first(client, validator, seats):
    """For each value of `first` (written as json.dumps writes it: 0.0 stays 0.0), the document accepts the
    body exactly when the server creates the game."""
    schema = validator("CreateGame")
    for first in FIRSTS:
        body = {"rules": "yacht", "seats": [HUMAN] * seats, "first": first}
        status = post(client, "/v1/games", json.dumps(body).encode()).status_code
        assert (status == 201) == schema.is_valid(body), (first, status)
        assert status in (201, 400, 422)


HOLDS = [[0], [4], [0.0], [4.0], [2e0], [-0.0], [0, 1, 2, 3, 4], [0.5], [5], [-1], [True], [0, 0], [0, 1, 2, 3, 4, 0],
         ["0"], [None]]


def test_the_schema_and_the_server_agree_on_hold(client, validator):
    """After a first roll any set of positions 0..4 may be held: the document accepts a hold exactly when
    the server rolls."""
    schema = validator("Roll")
    for hold in HOLDS:
        gid, auth = rolled_game(client)
        status = post(client, f"/v1/games/{gid}/roll", json.dumps({"hold": hold}).encode(), auth).status_code
        assert (status == 200) == schema.is_valid({"hold": hold}), (hold, status)
        assert status in (200, 400, 422)


def test_a_whole_number_written_with_a_fraction_is_that_integer(client):
    created = client.post("/v1/games", data=b'{"rules": "yacht", "seats": [{"type": "human"}, {"type": "human"}], '
                          b'"first": 1.0}', content_type="application/json").get_json()
    assert created["header"]["first"] == 1 and type(created["header"]["first"]) is int
    gid, auth = rolled_game(client)
    before = client.get(f"/v1/games/{gid}").get_json()["dice"]
    after = post(client, f"/v1/games/{gid}/roll", b'{"hold": [0.0, 4e0]}', auth).get_json()["dice"]
    assert (after[0], after[4]) == (before[0], before[4])
