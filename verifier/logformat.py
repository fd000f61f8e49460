"""log.format: the fields of a log and their JSON types (SPEC §5), as tables of what is expected and a test
of each value. (The tests of dice and holds are written out: they run for every roll.)"""

from __future__ import annotations

import re

from .results import Checks
from .seed_rule import CLIENT_SEED_LENGTH, SEAT_NAME_LENGTH, text_ok
from .spec import CATEGORIES

VERSIONS = (1, 2, 3)  # log format versions (SPEC §5): 2 adds client seed commitments, abandon reasons, the
# timeout; 3 the players' keys and signatures (§5.7)
PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]{1,64}")
HEX = {n: re.compile(rf"[0-9a-f]{{{n}}}") for n in (16, 64, 128)}


def is_int(x) -> bool:
    return type(x) is int  # bool is not an integer here


def is_hex(x, n: int) -> bool:
    return isinstance(x, str) and HEX[n].fullmatch(x) is not None


def all_ints(values) -> bool:
    """Every value an integer (a loop, not all() over a generator: this runs for every roll)."""
    for v in values:
        if type(v) is not int:
            return False
    return True


def is_dice(x) -> bool:
    """Five faces: integers 1..6 (written out: this runs for every roll)."""
    if type(x) is not list or len(x) != 5:
        return False
    a, b, c, d, e = x
    return (type(a) is int and type(b) is int and type(c) is int and type(d) is int and type(e) is int
            and 0 < a < 7 and 0 < b < 7 and 0 < c < 7 and 0 < d < 7 and 0 < e < 7)


def client_seed_ok(text) -> bool:
    """1..256 code points, none of them refused by SPEC §2.2 (a fixed list: unassigned code points
    are allowed, whatever the Unicode version)."""
    return text_ok(text, CLIENT_SEED_LENGTH)


def seat_name_ok(name) -> bool:
    """1..40 code points under the rule of client seeds (SPEC §5.2)."""
    return text_ok(name, SEAT_NAME_LENGTH)


# ------------------------------------------------------------------ the events (SPEC §5.3)

EVENT_FIELDS = {
    "client_seed": ("type", "seat", "client_seed"),
    "start": ("type", "first", "rolloff"),
    "roll": ("type", "seat", "turn", "roll", "hold", "dice"),
    "score": ("type", "seat", "turn", "category", "points", "joker", "yahtzee_bonus",
              "upper_bonus", "total"),
    "abandon": ("type", "seat"),
}
# version 2 (SPEC §5.3): every abandon says why; with two or more human seats each client seed is committed
# to first and revealed with its salt
EVENT_FIELDS_V2 = {**EVENT_FIELDS, "abandon": ("type", "seat", "reason")}
EVENT_FIELDS_V2_COMMITTED = {**EVENT_FIELDS_V2, "client_seed_commit": ("type", "seat", "commitment"),
                             "client_seed": ("type", "seat", "client_seed", "salt")}
SCORE_FIELDS = ("points", "joker", "yahtzee_bonus", "upper_bonus", "total")  # what a score recomputes
# version 3 (SPEC §5.3): an event of a human seat also carries the player's signature, and its client seed events
# (commitment, seed) the player's key
PLAYER_KEY_EVENTS = ("client_seed_commit", "client_seed")


def event_fields(version: int, humans: int) -> dict:
    """The events of a log (type -> its fields in SPEC order) for its version and number of human seats: those
    of every event but a human seat's (see human_event_fields)."""
    if version == 1:
        return EVENT_FIELDS
    return EVENT_FIELDS_V2_COMMITTED if humans >= 2 else EVENT_FIELDS_V2


def human_event_fields(version: int, humans: int) -> dict:
    """The events of a human seat (an event whose `seat` is a human seat): in version 3 they also carry
    `player_signature`, and the client seed events `player_key`."""
    fields = event_fields(version, humans)
    if version < 3:
        return fields
    return {kind: names + (("player_key",) if kind in PLAYER_KEY_EVENTS else ()) + ("player_signature",)
            for kind, names in fields.items() if kind != "start"}


def carries_player_signature(ev: dict) -> bool:
    """The event has a `player_signature` of its JSON type (a string or null; SPEC §5.4 leaves its form to
    player.signature): the replay's hot paths ask for a human seat's roll or score of version 3."""
    v = ev.get("player_signature", 0)
    return v is None or type(v) is str


def rolloff_ok(v) -> bool:
    return type(v) is list and all(type(rnd) is list and all(
        type(e) is dict and e.keys() == {"seat", "dice"} and is_int(e["seat"]) and is_dice(e["dice"])
        for e in rnd) for rnd in v)


EVENT_VALUES = {  # field -> test of its value (seat and first: event_value_ok); any other field is a string
    "turn": is_int, "roll": is_int, "points": is_int, "yahtzee_bonus": is_int, "upper_bonus": is_int,
    "total": is_int, "hold": lambda v: type(v) is list and all_ints(v), "dice": is_dice,
    "joker": lambda v: type(v) is bool, "commitment": lambda v: is_hex(v, 64), "salt": lambda v: is_hex(v, 64),
    "rolloff": rolloff_ok, "player_key": lambda v: v is None or is_hex(v, 64),
    # a signature that is a string but not 128 lowercase hex digits is player.signature's to judge (SPEC §5.4, §5.7)
    "player_signature": lambda v: v is None or type(v) is str,  # (the hot paths: carries_player_signature)
}


def event_value_ok(kind: str, name: str, v, n_seats: int) -> bool:
    """The JSON type of one field of an event (and its range, where the format alone fixes one)."""
    if name == "seat":
        if kind == "abandon":  # a seat, or null for the server (or the operator of a bots-only game)
            return v is None or (is_int(v) and 0 <= v < n_seats)
        return is_int(v) or (v is None and kind == "client_seed")  # null: the operator's client seed
    if name == "first":
        return is_int(v) and 0 <= v < n_seats
    return EVENT_VALUES.get(name, lambda x: isinstance(x, str))(v)


def event_format(checks: Checks, fields: dict, human_fields: dict, humans: list[int], n_seats: int, i: int,
                 ev) -> str:
    """log.format for event i: a known type, exactly its fields (those of a human seat's event when its `seat` is a
    human seat), and their JSON types; else the replay stops. Returns its type."""
    kind = ev.get("type") if type(ev) is dict else None
    if not isinstance(kind, str) or kind not in fields:
        checks.stop("log.format", i, "type", "one of " + ", ".join(fields), kind if type(ev) is dict else ev)
    seat = ev.get("seat")
    names = human_fields[kind] if type(seat) is int and seat in humans and kind in human_fields else fields[kind]
    if ev.keys() != set(names):
        checks.stop("log.format", i, ",".join(sorted(set(ev) ^ set(names))), list(names), sorted(ev))
    for name in names[1:]:
        if not event_value_ok(kind, name, ev[name], n_seats):
            checks.stop("log.format", i, name, "see SPEC §5.3", ev[name])
    return kind


# ------------------------------------------------------------------ the header and the final block (SPEC §5)

TOTAL_KEYS = {"upper", "upper_bonus", "lower", "yahtzee_bonus", "total"}


def seats_ok(seats, _header=None) -> bool:
    if type(seats) is not list or not 1 <= len(seats) <= 6:
        return False
    for s in seats:
        if type(s) is not dict or not seat_name_ok(s.get("name")):
            return False
        if s.get("type") == "human" and s.keys() == {"type", "name"}:
            continue
        bot = s.get("bot")
        if not (s.get("type") == "bot" and s.keys() == {"type", "name", "bot"} and type(bot) is dict
                and bot.keys() == {"id", "version", "hash"} and isinstance(bot["id"], str)
                and isinstance(bot["version"], str) and is_hex(bot["hash"], 64)):
            return False
    return True


def n_seats(header) -> int:
    return len(header["seats"]) if type(header.get("seats")) is list else 0


# The fields of SPEC §5: name -> (what is expected, check(value, header)).
TOP_FIELDS = {
    "format": ("fairdice-log", lambda v, h: v == "fairdice-log"),
    "version": ("1, 2 or 3", lambda v, h: is_int(v) and v in VERSIONS),
    "header": ("an object", lambda v, h: type(v) is dict),
    "commitment_signature": ("a hex string, or no such field (unsigned)", lambda v, h: isinstance(v, str)),
    "events": ("an array", lambda v, h: type(v) is list),
    "final": ("an object, or null while the game is in progress", lambda v, h: v is None or type(v) is dict),
    "signature": ("a hex string, or no such field (unsigned)", lambda v, h: isinstance(v, str)),
}
SIGNATURE_FIELDS = ("commitment_signature", "signature")  # optional: an unsigned log (--allow-unsigned)
HEADER_FIELDS = {
    "scheme": ("fairdice/v1", lambda v, h: v == "fairdice/v1"),
    "game_id": ("1 to 64 printable ASCII characters",
                lambda v, h: isinstance(v, str) and PRINTABLE_ASCII.fullmatch(v) is not None),
    "rules": ("yacht, yatzy or classic13", lambda v, h: isinstance(v, str) and v in CATEGORIES),
    "upper_first": ("true or false", lambda v, h: type(v) is bool),
    "seats": ("1 to 6 seats as in SPEC §5.2 (a name: 1 to 40 code points, as a client seed)", seats_ok),
    "first": ('a seat index or "random"', lambda v, h: v == "random" or (is_int(v) and 0 <= v < n_seats(h))),
    "commitment": ("64 lowercase hex digits", lambda v, h: is_hex(v, 64)),
    "seed_secret": ("true or false", lambda v, h: type(v) is bool),
    "key_id": ("16 lowercase hex digits", lambda v, h: is_hex(v, 16)),
    "public_key": ("64 lowercase hex digits", lambda v, h: is_hex(v, 64)),
}
HEADER_FIELDS_V2 = {**HEADER_FIELDS, "abandon_timeout": (  # (versions 2 and 3)
    "whole seconds, at least 1 (the server's inactivity timeout)", lambda v, h: is_int(v) and v >= 1)}
FINAL_FIELDS = {
    "status": ('"finished" or "abandoned"', lambda v, h: v in ("finished", "abandoned")),
    "server_seed": ("64 lowercase hex digits", lambda v, h: is_hex(v, 64)),
    "totals": ("one object of integers upper, upper_bonus, lower, yahtzee_bonus, total per seat",
               lambda v, h: type(v) is list and len(v) == n_seats(h) and all(
                   type(t) is dict and t.keys() == TOTAL_KEYS and all_ints(t.values())
                   for t in v)),
    "winner": ("a seat index or null", lambda v, h: v is None or is_int(v)),
    "draw": ("true or false", lambda v, h: type(v) is bool),
}


def fields_ok(checks: Checks, obj: dict, prefix: str, fields: dict, header: dict, optional=()) -> None:
    """log.format: every field present (or optional) and well typed, and no other field."""
    for name, (wanted, good) in fields.items():
        if name not in obj:
            if name not in optional:
                checks.fail("log.format", None, prefix + name, "present", "missing")
        elif not good(obj[name], header):
            checks.fail("log.format", None, prefix + name, wanted, obj[name])
    for name in obj.keys() - fields.keys():
        checks.fail("log.format", None, prefix + name, "no such field", obj[name])
