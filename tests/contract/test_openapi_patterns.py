"""The OpenAPI document states the text rule of SPEC §2.2 (issue 21, item 6): the `pattern`s of seat names and
client seeds are the ones api/openapi_patterns.py generates from fairdice.derive.REFUSED_CODE_POINTS, and they
accept exactly what the server accepts: on the vectors of tests/vectors/client_seed_rule.json (under Python's
`re`, under ECMA-262 with the `u` flag in Node, JSON Schema's own dialect, and under jsonschema-rs, which
schemathesis generates from), at every edge of the rule (lone surrogates aside: no JSON text the server takes
holds one), and on
names and seeds drawn from the patterns themselves and at random, as the core's own checks (which the API
applies) judge them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.openapi_patterns import (OPENAPI_PATH, SURROGATES, apply, client_seed_pattern, schemas_with_patterns,
                                  seat_name_pattern)
from fairdice import derive
from fairdice.errors import FairdiceError
from fairdice.game import check_seats
from support import VECTORS as VECTOR_DIR

VECTORS = json.loads((VECTOR_DIR / "client_seed_rule.json").read_text(encoding="utf-8"))
NODE = shutil.which("node") or "/usr/bin/node"
SEED = re.compile(client_seed_pattern())
NAME = re.compile(seat_name_pattern())


def test_the_document_holds_the_generated_patterns_and_nothing_else_changes():
    kept = OPENAPI_PATH.read_text(encoding="utf-8")
    doc = json.loads(kept)
    patterns = {where: schema["pattern"] for where, schema in schemas_with_patterns(doc).items()}
    assert patterns == {("SeatRequest", "human", "name"): seat_name_pattern(),
                        ("SeatRequest", "bot", "name"): seat_name_pattern(),
                        ("ClientSeed", "client seed, or reveal", "client_seed"): client_seed_pattern()}
    apply(doc)  # what `python -m api.openapi_patterns` would write: the same bytes
    assert json.dumps(doc, indent=1, ensure_ascii=False) == kept


def _examples(kind: str) -> list[tuple[str, bool]]:
    valid, invalid = {"seed": ("valid_examples", "invalid_examples"),
                      "name": ("valid_seat_names", "invalid_seat_names")}[kind]
    return [(e["text"], True) for e in VECTORS[valid]] + [(e["text"], False) for e in VECTORS[invalid]]


@pytest.mark.parametrize("kind, pattern", [("seed", SEED), ("name", NAME)])
def test_the_patterns_agree_with_the_vectors(kind, pattern):
    wrong = [(text, valid) for text, valid in _examples(kind) if bool(pattern.search(text)) != valid]
    assert not wrong


CASES = ([[kind, text] for kind in ("seed", "name") for text, _ in _examples(kind)]
         + [["name", "ann\n"], ["seed", "seed\n"], ["name", "  ann  "], ["name", " "]])


def _python_verdicts() -> list[bool]:
    verdicts = [bool((SEED if kind == "seed" else NAME).search(text)) for kind, text in CASES]
    assert verdicts[-4:] == [False, False, True, False]  # no final line feed slips past the end
    return verdicts


def test_the_patterns_mean_the_same_in_javascript():
    """`new RegExp(pattern, "u")`, as a JSON Schema validator in a browser or Node compiles it."""
    script = """
        const [doc, cases] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2])];
        const out = cases.map(([kind, text]) => new RegExp(doc[kind], "u").test(text));
        process.stdout.write(JSON.stringify(out));
    """
    patterns = {"seed": client_seed_pattern(), "name": seat_name_pattern()}
    done = subprocess.run([NODE, "-e", script, json.dumps(patterns), json.dumps(CASES)], capture_output=True,
                          text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == _python_verdicts()


def test_the_patterns_mean_the_same_to_jsonschema_rs():
    """The validator schemathesis compiles patterns with (a pattern it cannot compile, it silently drops, and
    then fuzzes with names and seeds the server rightly refuses)."""
    validators = {"seed": jsonschema_rs.validator_for({"type": "string", "pattern": client_seed_pattern()}),
                  "name": jsonschema_rs.validator_for({"type": "string", "pattern": seat_name_pattern()})}
    assert [validators[kind].is_valid(text) for kind, text in CASES] == _python_verdicts()


def _server_accepts(check, text: str) -> bool:
    try:
        check(text)
    except FairdiceError:
        return False
    return True


def _human_name(text: str) -> None:
    check_seats([{"type": "human", "name": text}])


def test_every_edge_of_the_rule_is_judged_alike():
    """Each code point at the edge of a refused range, and each next to one, as a one-character seed and as
    a name between two letters: the pattern and the core agree."""
    edges = {cp for lo, hi in derive.REFUSED_CODE_POINTS for cp in (lo - 1, lo, hi, hi + 1)
             if 0 <= cp < 0x110000 and not SURROGATES[0] <= cp <= SURROGATES[1]}
    differ = [cp for cp in sorted(edges)
              if bool(SEED.search(chr(cp))) != _server_accepts(derive.check_client_seed, chr(cp))
              or bool(NAME.search(f"a{chr(cp)}b")) != _server_accepts(_human_name, f"a{chr(cp)}b")]
    assert not differ, [hex(cp) for cp in differ[:10]]


@pytest.mark.parametrize("text", [" ann", "ann ", "  a  ", " " * 3, "a" * 40, " " + "a" * 40 + " ", "a" * 41,
                                  "a\u00a0", "\u00a0a", "a \u200b", "a\n", "\n", "é \U0001FAE8 é"])
def test_names_with_spaces_around_are_judged_alike(text):
    assert bool(NAME.search(text)) == _server_accepts(_human_name, text)


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.one_of(st.from_regex(NAME, fullmatch=False), st.text(max_size=45)))
def test_names_drawn_from_the_pattern_or_at_random_are_judged_alike(text):
    assert bool(NAME.search(text)) == _server_accepts(_human_name, text)


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.one_of(st.from_regex(SEED, fullmatch=False), st.text(max_size=260)))
def test_seeds_drawn_from_the_pattern_or_at_random_are_judged_alike(text):
    assert bool(SEED.search(text)) == _server_accepts(derive.check_client_seed, text)
