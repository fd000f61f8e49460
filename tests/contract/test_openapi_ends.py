"""Where the OpenAPI document's patterns end (issue 21): a `$` also matches before a final line feed in Python's
`re` (and in Hypothesis, which schemathesis generates from), so a pattern ending in `$` promised values with a
trailing "\\n" that the server refuses.  Every pattern now ends in `(?![\\s\\S])`; a seat name ending in "\\n" is
refused by the schema and by the server alike; and If-None-Match takes what its pattern says, no more and no
less (a 9-digit count used to pass the pattern and be refused by the server)."""

from __future__ import annotations

import json
import re

import jsonschema_rs
import pytest

from api.openapi_patterns import END, OPENAPI_PATH, if_none_match_schema, patterned
from api.routes.watch import AFTER_MAX

DOC = json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))

# Values the document's patterns take (written by hand from what the fields mean: ids, hex keys and signatures,
# counts, ETags, header values, codes, stamps, names); each pattern must take one of them.
CANDIDATES = ["5", "Ab_-9", '"1000000"', '"12"', "key 1", "game_not_found", "read_only", "0" * 64, "f" * 16,
              "a" * 128, "2026-12-02T00:00:00Z", "ann"]
def _patterns() -> set[str]:
    return {schema["pattern"] for schema in patterned(DOC)}


def test_no_pattern_ends_in_a_dollar():
    assert [p for p in _patterns() if p.endswith("$")] == []
    assert all(p.endswith(END) for p in _patterns())


@pytest.mark.parametrize("pattern", sorted(_patterns()))
def test_a_value_followed_by_a_line_feed_is_refused(pattern):
    taken = [text for text in CANDIDATES if re.search(pattern, text)]
    assert taken, f"no sample value for {pattern!r}: add one to CANDIDATES"
    text = taken[0]
    assert not re.search(pattern, text + "\n")
    validator = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    assert validator.is_valid(text) and not validator.is_valid(text + "\n")


def _seat_schema_validator():
    return jsonschema_rs.validator_for({"$ref": "#/components/schemas/SeatRequest", "components": DOC["components"]})


def test_a_seat_name_ending_in_a_line_feed_is_refused_by_the_schema_and_the_server(client):
    validator = _seat_schema_validator()
    assert validator.is_valid({"type": "human", "name": "ann"})
    assert not validator.is_valid({"type": "human", "name": "ann\n"})
    answer = client.post("/v1/games", json={"rules": "yacht", "seats": [{"type": "human", "name": "ann\n"}]})
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json", answer.get_json()


def _etag_validator():
    return jsonschema_rs.validator_for(if_none_match_schema(DOC))


@pytest.mark.parametrize("tag, taken", [
    ('"0"', True), ('"7"', True), ('W/"7"', True), (f'"{AFTER_MAX}"', True),
    (f'"{AFTER_MAX + 1}"', False), ('"999999999"', False), ('"01"', False), ('"7"\n', False), ('"\u0661"', False),
])
def test_if_none_match_takes_what_its_pattern_says(client, tag, taken):
    """The schema and the server agree on every tag: a count 0..1000000 as the route writes it (a 9-digit count
    was valid by the schema and refused by the server)."""
    assert _etag_validator().is_valid(tag) is taken
    created = client.post("/v1/games", json={"rules": "yacht", "seats": [{"type": "bot", "bot": "greedy"}]})
    gid = created.get_json()["game_id"]
    try:
        answer = client.get(f"/v1/games/{gid}/events?wait=0", headers={"If-None-Match": tag})
    except ValueError:  # a line feed in a header: the test client will not even send it
        assert not taken
        return
    if taken:
        assert answer.status_code in (200, 304, 409), answer.get_data()
        if answer.status_code == 409:
            assert answer.get_json()["code"] == "after_beyond_events"
    else:
        assert answer.status_code == 400 and answer.get_json()["code"] == "invalid_if_none_match"


def test_a_query_count_in_other_digits_is_refused(client):
    """`\\d` would take ARABIC-INDIC DIGIT ONE for 1; the schema's integer does not."""
    created = client.post("/v1/games", json={"rules": "yacht", "seats": [{"type": "bot", "bot": "greedy"}]})
    answer = client.get(f"/v1/games/{created.get_json()['game_id']}?since=\u0661")
    assert answer.status_code == 400 and answer.get_json()["code"] == "invalid_query"
