"""The text rule of SPEC §2.2 (client seeds and seat names) as the OpenAPI document's `pattern`s, generated
from fairdice.derive.REFUSED_CODE_POINTS, so that the schema states what the server accepts and the two
cannot drift (tests/contract/test_openapi_patterns.py holds api/openapi.json to these and both to the vectors of
tests/vectors/client_seed_rule.json).

`python -m api.openapi_patterns` writes them into api/openapi.json (loaded and dumped again as it is kept:
indent 1, UTF-8, nothing else changed).

Every other `pattern` of the document that ends in `$` is written to end in END too, and the If-None-Match
header's is the watch route's own expression (api/routes/watch.py).

The expressions mean the same in Python's `re`, in ECMA-262 with the `u` flag (JSON Schema's dialect) and in
Rust's fancy-regex (jsonschema-rs, which schemathesis compiles patterns with).  So a code point of the Basic
Multilingual Plane is written `\\uXXXX` and one above it as the character itself; the end of the text is
`(?![\\s\\S])`, because `$` also matches before a final line feed in Python (and Hypothesis, which schemathesis
generates from, then writes names that end in one); lone surrogates are named nowhere, because Rust's
expressions cannot name them (no JSON text the server takes holds one: their escapes are refused first, 400
`lone_surrogate`); and the refused ranges of more than WIDE code points (private use, planes 15 and 16) are
refused by a lookahead before each code point rather than in its character class, because Hypothesis expands
a class code point by code point (seconds for each one of theirs, each time a strategy is built).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fairdice.derive import CLIENT_SEED_MAX, REFUSED_CODE_POINTS
from fairdice.game import NAME_MAX

OPENAPI_PATH = Path(__file__).resolve().parent / "openapi.json"
END = r"(?![\s\S])"  # the end of the text, and nothing after it


def _code_point(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else chr(cp)


WIDE = 1024  # a refused range of more code points is refused by a lookahead, not in the character class
SURROGATES = (0xD800, 0xDFFF)


def _class(ranges, negated: bool = False) -> str:
    return ("[^" if negated else "[") + "".join(
        _code_point(lo) if lo == hi else f"{_code_point(lo)}-{_code_point(hi)}" for lo, hi in sorted(ranges)) + "]"


def _one_allowed(refused) -> str:
    """One code point in none of the `refused` ranges (but the surrogates: see the module's docstring)."""
    ranges = [r for r in refused if r != SURROGATES]
    wide = [(lo, hi) for lo, hi in ranges if hi - lo + 1 > WIDE]
    narrow = [r for r in ranges if r not in wide]
    return f"(?!{_class(wide)}){_class(narrow, negated=True)}"


ALLOWED = _one_allowed(REFUSED_CODE_POINTS)  # one code point the rule allows
ALLOWED_BUT_SPACE = _one_allowed((*REFUSED_CODE_POINTS, (0x20, 0x20)))


def client_seed_pattern() -> str:
    """1..CLIENT_SEED_MAX allowed code points (a space is one, even alone)."""
    return f"^(?:{ALLOWED}){{1,{CLIENT_SEED_MAX}}}{END}"


def seat_name_pattern() -> str:
    """A name as sent: the server trims spaces (U+0020) around it, then 1..NAME_MAX allowed code points must be
    left, so it starts and ends (after any spaces) with an allowed code point other than the space."""
    return f"^ *{ALLOWED_BUT_SPACE}(?:(?:{ALLOWED}){{0,{NAME_MAX - 2}}}{ALLOWED_BUT_SPACE})? *{END}"


SEAT_NAME_RULE = (f"SPEC.md §2.2: spaces around it are trimmed, then 1..{NAME_MAX} code points must be left, none "
                  "of them a control, a separator other than the space, a format character, a surrogate, a "
                  "private-use character or a noncharacter")


def schemas_with_patterns(doc: dict) -> dict[tuple[str, ...], dict]:
    """The string schemas of api/openapi.json that take a seat name or a client seed, by their path in it."""
    seat = doc["components"]["schemas"]["SeatRequest"]["oneOf"]
    seed = doc["components"]["schemas"]["ClientSeed"]["oneOf"]
    return {("SeatRequest", "human", "name"): seat[0]["properties"]["name"],
            ("SeatRequest", "bot", "name"): seat[1]["properties"]["name"],
            ("ClientSeed", "client seed, or reveal", "client_seed"): seed[1]["properties"]["client_seed"]}


def if_none_match_pattern() -> str:
    """An ETag of GET /v1/games/{id}/events, as the route takes it (api/routes/watch.py's COUNT_TAG)."""
    from .routes.watch import COUNT_TAG

    return f"^{COUNT_TAG}{END}"


def patterned(node):
    """Every schema in `node` (a document or a part of it) that has a `pattern`, depth first."""
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node
        for value in node.values():
            yield from patterned(value)
    elif isinstance(node, list):
        for value in node:
            yield from patterned(value)


def end_anchored(pattern: str) -> str:
    """`pattern` with a final `$` written as END: in Python's `re` (and Hypothesis) `$` also matches before a
    final line feed, so "ab\\n" would pass `^[a-z]+$`; END means the end in every dialect."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern[:-1] + END
    return pattern


def if_none_match_schema(doc: dict) -> dict:
    parameters = doc["paths"]["/v1/games/{game_id}/events"]["get"]["parameters"]
    return next(p for p in parameters if p["name"] == "If-None-Match")["schema"]


def apply(doc: dict) -> None:
    """Write the patterns (and the words that go with them) into the document, in place."""
    for schema in patterned(doc):
        schema["pattern"] = end_anchored(schema["pattern"])
    if_none_match_schema(doc)["pattern"] = if_none_match_pattern()
    for where, schema in schemas_with_patterns(doc).items():
        if where[-1] == "client_seed":
            schema["pattern"] = client_seed_pattern()
            continue
        schema.pop("minLength", None)
        schema.pop("maxLength", None)  # (spaces around a name do not count: the pattern bounds the rest)
        schema["pattern"] = seat_name_pattern()
        absent = '"player <n>"' if where[1] == "human" else '"<bot> bot"'
        schema["description"] = f"{SEAT_NAME_RULE}; absent: {absent}"


def main() -> int:
    doc = json.loads(OPENAPI_PATH.read_text(encoding="utf-8"))
    apply(doc)
    OPENAPI_PATH.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"wrote the text patterns into {OPENAPI_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
