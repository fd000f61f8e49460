"""Strict JSON: only documents that every JSON parser reads alike, and that the code after the parse
can handle (the "unusable input" rules of SPEC §7).

`loads(data)` parses UTF-8 bytes as json.loads does, and refuses with `StrictJSONError` (a ValueError):
- bytes that are not UTF-8, or that begin with a byte order mark;
- a duplicate key in any object: parsers differ on which value wins, so a log with a second, forged
  "final" block would mean one thing to one verifier and another thing to the next;
- NaN, Infinity and -Infinity, which are not JSON;
- a number of magnitude 2^53 or more (not exact in a double: not the same number in every parser),
  or written with more than 20 digits (every digit counts: leading zeros, fraction and exponent);
- arrays and objects nested deeper than 64 levels (code that walks the value recursively would
  run out of stack);
- a lone surrogate: a \\ud800-\\udfff escape that is not half of a pair has no UTF-8 form, so the
  string could not even be printed.

The checks cost less than the parse: the nesting depth and the long digit runs are read off the
bytes by a few passes at C speed, and the number and surrogate checks run only where those passes
see a need."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from itertools import accumulate

from .errors import VerifierError

MAX_DEPTH = 64
MAX_MAGNITUDE = 2 ** 53
MAX_DIGITS = 20


class StrictJSONError(VerifierError, ValueError):
    """The bytes are not strict JSON. The message says why, in words fit for an error line; `reason`
    says it in one word: not_utf8, not_json, duplicate_key, number_out_of_range, nesting_too_deep or
    lone_surrogate."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def loads(data: bytes, integral_floats: bool = False) -> object:
    """The JSON value of `data`; StrictJSONError if it breaks one of the rules above.

    With `integral_floats`, a number written with a fraction or an exponent whose value is a whole
    number (0.0, -0.0, 1e2) comes back as an int, as JSON Schema's "integer" counts it; otherwise
    every such number is a float, as in json.loads."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"strictjson.loads takes bytes, not {type(data).__name__}")
    data = bytes(data)
    text = _utf8(data)
    unescaped = _without_escaped_quotes(data)
    if _depth(unescaped) > MAX_DEPTH:
        raise _too_deep()
    long_digit_runs = b"0" * 16 in data.translate(_DIGITS_TO_ZERO)  # (an integer of 2^53 or more has 16)
    try:
        value = _DECODERS[integral_floats, long_digit_runs].decode(text)
    except json.JSONDecodeError as e:
        at = "" if e.msg.endswith(" at") else " at"  # ("Unterminated string starting at")
        raise StrictJSONError(f"not JSON: {e.msg}{at} line {e.lineno}, column {e.colno}", "not_json") from None
    except RecursionError:  # (only text that is not JSON gets past the depth pass and recurses this deep)
        raise _too_deep() from None
    if _SURROGATE_ESCAPE.search(unescaped):
        _refuse_lone_surrogates(value)
    return value


def _decoder(integral_floats: bool, checks_ints: bool) -> json.JSONDecoder:
    return json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant,
                            parse_float=_whole_or_float if integral_floats else _float,
                            parse_int=_int if checks_ints else None)


def _utf8(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        raise StrictJSONError("not JSON: the text begins with a byte order mark (U+FEFF)", "not_json")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StrictJSONError(f"not UTF-8 text ({e.reason} at byte {e.start})", "not_utf8") from None


def _without_escaped_quotes(data: bytes) -> bytes:
    """`data` with every escaped backslash and escaped quote overwritten by two underscores: then every
    quote left opens or closes a string, and every backslash left starts an escape."""
    return data.replace(b"\\\\", b"__").replace(b'\\"', b"__")


_STRUCTURE = bytes(range(256)).translate(None, b'[]{}"')  # the bytes that the depth pass deletes
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _depth(unescaped: bytes) -> int:
    """How deep arrays and objects nest, brackets inside strings left out: the highest running count
    of the brackets, as the parser recurses on them."""
    apart = unescaped.translate(None, _STRUCTURE).split(b'"')  # the odd pieces are inside strings
    return max(accumulate(map(_STEP.__getitem__, b"".join(apart[::2]))), default=0)


def _too_deep() -> StrictJSONError:
    return StrictJSONError(f"not strict JSON: arrays and objects nested deeper than {MAX_DEPTH} levels",
                           "nesting_too_deep")


_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _object(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        twice = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise StrictJSONError(f"not strict JSON: the key {_quote(twice)} twice in one object "
                              "(parsers differ on which value counts)", "duplicate_key")
    return obj


def _constant(name: str):
    raise StrictJSONError(f"not JSON: {name} is not a JSON number", "not_json")


def _int(literal: str) -> int:
    _check_digits(literal)
    return _check_magnitude(literal, int(literal))


def _float(literal: str) -> float:
    _check_digits(literal)
    return _check_magnitude(literal, float(literal))


def _whole_or_float(literal: str) -> int | float:
    """An int where the number as written is a whole number (the decimal, not its nearest double)."""
    value = _float(literal)
    return int(value) if value.is_integer() and Decimal(literal) == int(value) else value


def _check_digits(literal: str) -> None:
    if sum(map(literal.count, "0123456789")) > MAX_DIGITS:
        raise StrictJSONError(f"not strict JSON: the number {_shorten(literal)} has more than {MAX_DIGITS} digits",
                              "number_out_of_range")


def _check_magnitude(literal: str, value):
    if not abs(value) < MAX_MAGNITUDE:  # (also an infinite float: 1e400)
        raise StrictJSONError(f"not strict JSON: the number {_shorten(literal)} is too large "
                              "(2^53 or more: not exact in every parser)", "number_out_of_range")
    return value


# one decoder per variant, made once (json.loads with hooks would build one per call; a decoder keeps no state)
_DECODERS = {(floats, ints): _decoder(floats, ints) for floats in (False, True) for ints in (False, True)}

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_lone_surrogates(value) -> None:
    """json.loads joins each escaped pair into one code point: a surrogate left in a string is lone."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            stack += v.keys()
            stack += v.values()
        elif type(v) is list:
            stack += v
        elif type(v) is str and (lone := _SURROGATE.search(v)):
            raise StrictJSONError(f"not strict JSON: a lone surrogate \\u{ord(lone.group()):04x} in the string "
                                  f"{_quote(v)} (\\ud800-\\udfff escapes must come in pairs)", "lone_surrogate")


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _quote(text: str) -> str:
    """`text` as a short JSON string in ASCII: safe in any error line, whatever it holds."""
    return _shorten(json.dumps(text), 42)
