"""Checks one fairdice log (SPEC §5-§7): its format, key and commitment signature, the revealed
seed, then a replay of every event from the seed, re-deriving every die and recomputing every
score, and last the final signature (over bytes written faster once the replay has checked them).

The replay follows the true game: a die that does not re-derive is reported and the derived
value is used from then on. A failure that leaves no meaningful game to follow (an event out
of order, a bad hold, a box that cannot be filled) stops the replay there."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import keys
from .chain import check_move_receipts
from .optimal import TableError
from .seed_rule import CLIENT_SEED_LENGTH, SEAT_NAME_LENGTH, text_ok
from .spec import (CATEGORIES, HOLDS, UPPER, Deriver, canonical, canonical_events, canonical_object, options,
                   score_box, sha256_hex, upper_bonus, yahtzee_bonus)

CHECKS = (
    "log.format", "log.key", "sig.commitment", "sig.final", "seed.revealed", "seed.commitment",
    "client_seed.valid", "start.first", "turn.order", "roll.count", "roll.hold", "roll.dice",
    "score.category", "score.points", "game.complete", "final.totals", "final.winner",
    "bot.identity", "bot.decision", "receipt.match", "client_seed.commit", "game.abandon", "receipt.chain",
)
VERSIONS = (1, 2)  # log format versions (SPEC §5): 2 adds client seed commitments, abandon reasons, the timeout
MAX_LISTED = 10  # failures listed per check and game; the rest are counted


@dataclass
class Failure:
    check: str
    event: int | None  # index into "events", None for the whole log
    field: str
    expected: Any
    found: Any

    def as_dict(self) -> dict:
        return {"check": self.check, "event": self.event, "field": self.field,
                "expected": self.expected, "found": self.found}


@dataclass
class Result:
    file: str
    game_id: str | None = None
    rules: str | None = None
    status: str | None = None  # "finished", "abandoned" or "in progress"
    error: str | None = None  # set when the input is not a log at all
    checks: dict = field(default_factory=lambda: dict.fromkeys(CHECKS, "skip"))
    failures: list = field(default_factory=list)
    unlisted: dict = field(default_factory=dict)  # check -> failures beyond MAX_LISTED
    signed: bool = False  # both signatures present (and then checked)
    trusted: bool = False  # checked against a --pubkey key, not only the embedded one
    seed_secret: bool | None = None  # False: the seed came from a public value (§2.1)
    bots: list = field(default_factory=list)  # the bot ids of the log's bot seats
    bots_checked: bool = False  # their decisions were replayed (bot.identity, bot.decision)
    abandoned_by: str | None = None  # who abandoned, in words ("seat 1", "THE SERVER, on a timeout", ...)
    replay: list | None = None  # with verbose: the game turn by turn
    audit: dict | None = None  # with audit: the numbers the audit aggregates

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failures and not self.unlisted


class Stop(Exception):
    """The replay cannot meaningfully go on."""


PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]{1,64}")
HEX = {n: re.compile(rf"[0-9a-f]{{{n}}}") for n in (16, 64)}


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


EVENT_FIELDS = {
    "client_seed": ("type", "seat", "client_seed"),
    "start": ("type", "first", "rolloff"),
    "roll": ("type", "seat", "turn", "roll", "hold", "dice"),
    "score": ("type", "seat", "turn", "category", "points", "joker", "yahtzee_bonus",
              "upper_bonus", "total"),
    "abandon": ("type", "seat"),
}
EVENT_KEYS = {kind: set(names) for kind, names in EVENT_FIELDS.items()}
# version 2 (SPEC §5.3): every abandon says why; with two or more human seats each client seed is committed
# to first and revealed with its salt
EVENT_FIELDS_V2 = {**EVENT_FIELDS, "abandon": ("type", "seat", "reason")}
EVENT_FIELDS_V2_COMMITTED = {**EVENT_FIELDS_V2, "client_seed_commit": ("type", "seat", "commitment"),
                             "client_seed": ("type", "seat", "client_seed", "salt")}
ABANDON_REASONS = ("player", "timeout")


def event_fields(version: int, humans: int) -> dict:
    """The events of a log (type -> its fields in SPEC order) for its version and number of human seats."""
    if version == 1:
        return EVENT_FIELDS
    return EVENT_FIELDS_V2_COMMITTED if humans >= 2 else EVENT_FIELDS_V2
SCORE_FIELDS = ("points", "joker", "yahtzee_bonus", "upper_bonus", "total")
TOTAL_PARTS = ("upper", "upper_bonus", "lower", "yahtzee_bonus", "total")
TOTAL_KEYS = set(TOTAL_PARTS)


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
    "version": ("1 or 2", lambda v, h: is_int(v) and v in VERSIONS),
    "header": ("an object", lambda v, h: type(v) is dict),
    "commitment_signature": ("a hex string, or no such field (unsigned)", lambda v, h: isinstance(v, str)),
    "events": ("an array", lambda v, h: type(v) is list),
    "final": ("an object, or null while the game is in progress", lambda v, h: v is None or type(v) is dict),
    "signature": ("a hex string, or no such field (unsigned)", lambda v, h: isinstance(v, str)),
}
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
HEADER_FIELDS_V2 = {**HEADER_FIELDS, "abandon_timeout": (
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


def first_difference(expected, found, path: str):
    """(path, expected, found) at the first place two JSON values differ, or None."""
    if type(expected) is list and type(found) is list and len(expected) == len(found):
        for i, (e, f) in enumerate(zip(expected, found)):
            d = first_difference(e, f, f"{path}[{i}]")
            if d:
                return d
        return None
    if type(expected) is dict and type(found) is dict and expected.keys() == found.keys():
        for k in expected:
            d = first_difference(expected[k], found[k], f"{path}.{k}")
            if d:
                return d
        return None
    same = expected == found and type(expected) is type(found)
    return None if same else (path, expected, found)


class Verification:
    def __init__(self, doc, file: str, trusted_keys: list[bytes] | None = None,
                 require_signature: bool = True, bots=None, verbose: bool = False,
                 audit: bool = False, receipts: list[dict] = (), receipts_by_game: bool = False,
                 move_receipts: list[dict] = ()):
        """receipts: the players' receipts (verifier.receipt), move_receipts: the server's signed receipts of
        the moves (verifier.chain), to hold the log to; with receipts_by_game only those of this log's game id
        apply (a batch), otherwise every one does (it must be this game)."""
        self.doc, self.r = doc, Result(file)
        self.receipts, self.receipts_by_game = list(receipts), receipts_by_game
        self.move_receipts = list(move_receipts)
        self.trusted_keys, self.require_signature = trusted_keys, require_signature
        self.bots, self.verbose, self.audit = bots, verbose, audit
        self.seed: bytes | None = None
        self.signers: list[bytes] | None = None  # the keys a signature may be from (check_key_and_commitment)
        self.header_json: bytes | None = None  # canonical(header), when the log carries a signature
        self.events_checked = False  # every event went through the replay (replay_events)

    # -- bookkeeping
    def fail(self, check: str, event: int | None, fld: str, expected, found) -> None:
        r = self.r
        r.checks[check] = "fail"
        if sum(f.check == check for f in r.failures) < MAX_LISTED:
            r.failures.append(Failure(check, event, fld, expected, found))
        else:
            r.unlisted[check] = r.unlisted.get(check, 0) + 1

    def passed(self, *checks: str) -> None:
        for c in checks:
            if self.r.checks[c] == "skip":
                self.r.checks[c] = "pass"

    def expect(self, check: str, event, fld: str, expected, found) -> bool:
        if expected == found and type(expected) is type(found):
            return True
        self.fail(check, event, fld, expected, found)
        return False

    # -- the whole run
    def run(self) -> Result:
        try:
            self.check_format()
            if self.receipts_by_game:
                self.receipts = [rc for rc in self.receipts if rc["game_id"] == self.r.game_id]
                self.move_receipts = [rc for rc in self.move_receipts if rc["game_id"] == self.r.game_id]
            for receipt in self.receipts:
                self.check_receipt(receipt)
            self.check_key_and_commitment()
            if self.move_receipts:
                check_move_receipts(self, self.move_receipts, self.signers)
            self.check_seed()
            self.replay_events()
            self.check_end()
        except Stop:
            if self.r.replay is not None:
                self.r.replay.append("  (the replay stops at this failure)")
        if self.signers is not None:  # (the log has the fields that the signature covers)
            self.check_final_signature()  # last: see there
        return self.r

    def stop(self, check: str, event, fld: str, expected, found):
        self.fail(check, event, fld, expected, found)
        raise Stop

    # -- log.format: the fields and types of SPEC §5
    def check_format(self) -> None:
        doc = self.doc
        self.fields_ok(doc, "", TOP_FIELDS, doc, optional=("commitment_signature", "signature"))
        if self.r.checks["log.format"] == "fail":
            raise Stop
        h, final = doc["header"], doc["final"]
        self.fields_ok(h, "header.", HEADER_FIELDS if doc["version"] == 1 else HEADER_FIELDS_V2, h)
        self.r.game_id = h["game_id"] if HEADER_FIELDS["game_id"][1](h.get("game_id"), h) else None
        self.r.rules = h["rules"] if HEADER_FIELDS["rules"][1](h.get("rules"), h) else None
        self.r.seed_secret = h.get("seed_secret") if type(h.get("seed_secret")) is bool else None
        if final is not None:
            self.fields_ok(final, "final.", FINAL_FIELDS, h)
        status = "in progress" if final is None else final.get("status")
        self.r.status = status if status in ("finished", "abandoned", "in progress") else None
        if self.r.checks["log.format"] == "fail":
            raise Stop
        self.r.bots = [s["bot"]["id"] for s in h["seats"] if s["type"] == "bot"]
        self.r.bots_checked = self.bots is not None
        self.passed("log.format")

    def fields_ok(self, obj: dict, prefix: str, fields: dict, header: dict, optional=()) -> None:
        """Every field present (or optional) and well typed, and no other field."""
        for name, (wanted, good) in fields.items():
            if name not in obj:
                if name not in optional:
                    self.fail("log.format", None, prefix + name, "present", "missing")
            elif not good(obj[name], header):
                self.fail("log.format", None, prefix + name, wanted, obj[name])
        for name in obj.keys() - fields.keys():
            self.fail("log.format", None, prefix + name, "no such field", obj[name])

    # -- receipt.match (SPEC §5.5): the log is the game the player joined, with the seed the player sent
    def check_receipt(self, rc: dict) -> None:
        doc, h = self.doc, self.doc["header"]
        self.expect("receipt.match", None, "game_id", rc["game_id"], h["game_id"])
        self.expect("receipt.match", None, "commitment", rc["commitment"], h["commitment"])
        if rc.get("header") is not None and canonical(rc["header"]) != canonical(h):
            where, want, got = first_difference(rc["header"], h, "header") or ("header", rc["header"], h)
            self.fail("receipt.match", None, where, want, got)
        if rc.get("public_key") is not None:
            self.expect("receipt.match", None, "public_key", rc["public_key"], h["public_key"])
        sent = [(i, e.get("client_seed")) for i, e in enumerate(doc["events"])
                if type(e) is dict and e.get("type") == "client_seed" and e.get("seat") == rc["seat"]
                and type(e.get("seat")) is type(rc["seat"])]
        if not sent:
            self.fail("receipt.match", None, "client_seed", rc["client_seed"], "no client seed from that seat")
        for i, seed in sent:
            self.expect("receipt.match", i, "client_seed", rc["client_seed"], seed)
        self.passed("receipt.match")

    # -- log.key, sig.commitment (SPEC §6)
    def check_key_and_commitment(self) -> None:
        doc, h = self.doc, self.doc["header"]
        embedded = bytes.fromhex(h["public_key"])
        self.expect("log.key", None, "header.key_id", keys.key_id(embedded), h["key_id"])
        # trusted: the keys given (--pubkey), else the key each receipt says the player saw at creation
        signers = self.trusted_keys if self.trusted_keys is not None else [
            bytes.fromhex(rc["public_key"]) for rc in self.receipts if rc.get("public_key") is not None] or None
        if signers is None:
            signers = [embedded]
        else:
            self.r.trusted = True
            if embedded not in signers:
                self.fail("log.key", None, "header.public_key",
                          "a trusted key: " + ", ".join(k.hex() for k in signers), h["public_key"])
        self.passed("log.key")
        present = ["commitment_signature" in doc, "signature" in doc]
        self.r.signed = all(present)
        self.signers = signers
        if any(present):
            self.header_json = canonical(h)  # both signatures cover it: written once
        if present[0]:
            if not any(keys.signature_valid(k, doc["commitment_signature"], self.header_json) for k in signers):
                self.fail("sig.commitment", None, "commitment_signature", "a valid signature of the header",
                          doc["commitment_signature"])
            self.passed("sig.commitment")
        elif self.require_signature:
            self.fail("sig.commitment", None, "commitment_signature", "present", "missing")

    # -- sig.final (SPEC §6), checked last (run)
    def check_final_signature(self) -> None:
        """The signed bytes are canonical(the log without "signature"). When the replay has gone through
        every event, each has exactly the fields and JSON types of SPEC §5.3, and canonical_events writes
        the events out (most of those bytes) in half the time of canonical(); otherwise canonical() does."""
        doc = self.doc
        if "signature" not in doc:
            if self.require_signature and doc["final"] is not None:  # signed once the game is over (§6)
                self.fail("sig.final", None, "signature", "present", "missing")
            return
        unsigned = {k: v for k, v in doc.items() if k != "signature"}
        if self.events_checked:
            written = {"header": self.header_json, "events": canonical_events(doc["events"])}
            signed_doc = canonical_object({k: written[k] if k in written else canonical(v)
                                           for k, v in unsigned.items()})
        else:
            signed_doc = canonical(unsigned)
        if not any(keys.signature_valid(k, doc["signature"], signed_doc) for k in self.signers):
            self.fail("sig.final", None, "signature", "a valid signature of the log", doc["signature"])
        self.passed("sig.final")

    # -- seed.revealed, seed.commitment (SPEC §2.1)
    def check_seed(self) -> None:
        final = self.doc["final"]
        if final is None:
            self.fail("seed.revealed", None, "final",
                      "a finished or abandoned game; this one is not over, so its server seed is not "
                      "revealed and its dice cannot be checked", None)
            return
        self.passed("seed.revealed")
        self.seed = bytes.fromhex(final["server_seed"])
        self.expect("seed.commitment", None, "header.commitment", sha256_hex(self.seed),
                    self.doc["header"]["commitment"])
        self.passed("seed.commitment")

    # -- the replay (SPEC §2.2-§4)
    def event_format(self, i: int, ev) -> None:
        """log.format for one event: its type, exactly its fields, and their JSON types."""
        kind = ev.get("type") if type(ev) is dict else None
        if not isinstance(kind, str) or kind not in self.fields:
            self.stop("log.format", i, "type", "one of " + ", ".join(self.fields),
                      kind if type(ev) is dict else ev)
        names = self.fields[kind]
        if ev.keys() != set(names):
            self.stop("log.format", i, ",".join(sorted(set(ev) ^ set(names))), list(names), sorted(ev))
        n = self.n_seats
        for name in names[1:]:
            v = ev[name]
            if name == "seat":
                good = is_int(v) or (v is None and kind in ("client_seed", "abandon"))
                if kind == "abandon" and is_int(v):
                    good = 0 <= v < n
            elif name in ("turn", "roll", "points", "yahtzee_bonus", "upper_bonus", "total"):
                good = is_int(v)
            elif name == "first":
                good = is_int(v) and 0 <= v < n
            elif name == "hold":
                good = type(v) is list and all_ints(v)
            elif name == "dice":
                good = is_dice(v)
            elif name == "joker":
                good = type(v) is bool
            elif name in ("commitment", "salt"):
                good = is_hex(v, 64)
            elif name == "rolloff":
                good = type(v) is list and all(type(rnd) is list and all(
                    type(e) is dict and e.keys() == {"seat", "dice"} and is_int(e["seat"]) and is_dice(e["dice"])
                    for e in rnd) for rnd in v)
            else:  # client_seed, category, reason
                good = isinstance(v, str)
            if not good:
                self.stop("log.format", i, name, "see SPEC §5.3", v)

    def check_move(self, i: int, ev: dict, cur: int, turn: int, rolls: int, dice, derive) -> None:
        """turn.order, the bot's decision (with --check-bots) and roll.count for a roll or a score
        (the replay calls this only when something is to be said, or for a bot's move)."""
        if ev["seat"] != cur:
            self.stop("turn.order", i, "seat", cur, ev["seat"])
        if ev["turn"] != turn:
            self.stop("turn.order", i, "turn", turn, ev["turn"])
        if self.bots is not None and self.doc["header"]["seats"][cur]["type"] == "bot" and rolls > 0:
            self.check_bot_decision(i, ev, cur, turn, rolls, dice, derive)
        if ev["type"] == "roll" and (rolls == 3 or ev["roll"] != rolls + 1):
            self.stop("roll.count", i, "roll", rolls + 1 if rolls < 3 else "a box after the third roll", ev["roll"])
        if ev["type"] == "score" and rolls == 0:
            self.stop("roll.count", i, "type", "roll (a turn begins with a roll)", "score")

    def replay_events(self) -> None:
        """Replay the events in order (SPEC §2.2-§4), re-deriving the dice from the revealed seed
        (without a revealed seed: taking the logged dice, so that the rest can still be checked)."""
        h, events = self.doc["header"], self.doc["events"]
        self.n_seats = n = len(h["seats"])
        rules, upper_first = h["rules"], h["upper_first"]
        cats = CATEGORIES[rules]
        n_boxes = n * len(cats)  # the game is over when they are all filled
        card = self.boxes = [dict.fromkeys(cats) for _ in range(n)]  # per seat: category -> points, None while open
        bonus = self.bonus = [[0, 0] for _ in range(n)]  # per seat: upper bonus, Yahtzee bonuses
        filled, total, upper = [0] * n, [0] * n, [0] * n  # per seat: boxes filled, running total, upper boxes
        humans = [s for s, seat in enumerate(h["seats"]) if seat["type"] == "human"]
        senders = humans or [None]  # who sends a client seed: the human seats, else the operator
        self.fields = event_fields(self.doc["version"], len(humans))
        committed = "client_seed_commit" in self.fields  # version 2 with two or more human seats
        seeds: dict = {}
        commitments: dict = {}  # seat -> the commitment to its client seed (committed games)
        phase = "seeds"  # then "play", then "over" or "abandoned"
        cur, rolls, dice = None, 0, [0] * 5
        derive: Deriver | None = None
        is_bot = [seat["type"] == "bot" for seat in h["seats"]] if self.bots is not None else [False] * n
        lines = self.r.replay = [] if self.verbose else None
        # for the audit: freshly rolled faces counted by seat, by roll number and by position
        fresh = {"seat": [[0] * 6 for _ in range(6)], "roll": [[0] * 6 for _ in range(3)],
                 "position": [[0] * 6 for _ in range(5)]} if self.audit else None
        n_rolls, turn_text = 0, ""
        n_scores = 0
        # for the audit: who was ahead after each box filled (bots against humans), and at an abandon
        bot_seats = [s for s, seat in enumerate(h["seats"]) if seat["type"] == "bot"]
        standings = dict.fromkeys(STANDINGS, 0) if fresh is not None and bot_seats and humans else None
        abandon = None
        if self.bots is not None:
            self.check_bot_identities()
        for i, ev in enumerate(events):
            kind = ev.get("type") if type(ev) is dict else None
            if kind == "roll" and phase == "play":
                # The hot path, written out as it runs for every roll: a few conditions pass the usual
                # case; anything else goes to event_format or check_move, which say what is wrong.
                # -- log.format: exactly the six fields of a roll (these five and "type"), of their JSON types
                try:
                    seat, turn, roll, hold, logged = ev["seat"], ev["turn"], ev["roll"], ev["hold"], ev["dice"]
                except KeyError:
                    self.event_format(i, ev)
                if not (len(ev) == 6 and type(seat) is int and type(turn) is int and type(roll) is int
                        and is_dice(logged) and type(hold) is list and all_ints(hold)):
                    self.event_format(i, ev)
                # -- turn.order, roll.count (and bot.decision): the seat, turn and roll whose move it is
                if seat != cur or turn != filled[cur] + 1 or roll != rolls + 1 or roll > 3 or is_bot[cur]:
                    self.check_move(i, ev, cur, filled[cur] + 1, rolls, dice, derive)
                # -- roll.hold
                if hold and (roll == 1 or tuple(hold) not in HOLDS):
                    self.stop("roll.hold", i, "hold",
                              "[] on roll 1" if roll == 1 else "sorted distinct positions 0..4", hold)
                # -- roll.dice: every die re-derived; a held die keeps its value (the stream is not shifted)
                new = derive.roll(seat, turn, roll) if derive else list(logged)
                for p in hold:
                    new[p] = dice[p]
                if new != logged:
                    for p in range(5):
                        if new[p] != logged[p]:
                            self.fail("roll.dice", i, f"dice[{p}]", new[p], logged[p])
                dice, rolls = new, roll
                n_rolls += 1
                if fresh is not None:
                    by_seat, by_roll = fresh["seat"][cur], fresh["roll"][rolls - 1]
                    for p in range(5):
                        if p not in hold:
                            by_seat[dice[p] - 1] += 1
                            by_roll[dice[p] - 1] += 1
                            fresh["position"][p][dice[p] - 1] += 1
                if lines is not None:
                    turn_text += (f"  seat {cur} turn {turn}:" if rolls == 1 else "") + " " + " ".join(
                        f"[{d}]" if p in hold else str(d) for p, d in enumerate(dice)) + " |"
                continue
            if kind == "score" and phase == "play":
                # The other hot path: it runs for every box filled.
                # -- log.format: exactly the nine fields of a score (these eight and "type"); the types of
                #    those that recompute are checked with their values, further down
                try:
                    seat, turn, cat = ev["seat"], ev["turn"], ev["category"]
                    found = (ev["points"], ev["joker"], ev["yahtzee_bonus"], ev["upper_bonus"], ev["total"])
                except KeyError:
                    self.event_format(i, ev)
                if not (len(ev) == 9 and type(seat) is int and type(turn) is int):
                    self.event_format(i, ev)
                # -- turn.order, roll.count (and bot.decision): the seat and turn whose move it is, after a roll
                if seat != cur or turn != filled[cur] + 1 or rolls == 0 or is_bot[cur]:
                    self.check_move(i, ev, cur, filled[cur] + 1, rolls, dice, derive)
                # -- score.category: a box of the rule set, open, and legal for these dice
                boxes = card[cur]
                if type(cat) is not str:
                    self.event_format(i, ev)
                if cat not in boxes:
                    self.stop("score.category", i, "category", "a category of %s" % rules, cat)
                if boxes[cat] is not None:
                    self.stop("score.category", i, "category", "an open box", f"{cat} (already filled)")
                scored = score_box(rules, boxes, dice, cat, upper_first)
                if scored is None:
                    self.stop("score.category", i, "category",
                              "one of " + ", ".join(options(rules, boxes, dice, upper_first)), cat)
                # -- score.points: points, joker, Yahtzee bonus, upper bonus and running total
                pts, joker = scored
                yb = yahtzee_bonus(rules, boxes, dice)
                ub = upper_bonus(rules, upper[cur], cat, pts)
                boxes[cat] = pts
                if cat in UPPER:
                    upper[cur] += pts
                if ub or yb:
                    bonus[cur][0] += ub
                    bonus[cur][1] += yb
                total[cur] += pts + ub + yb
                mine = (pts, joker, yb, ub, total[cur])
                if found != mine or type(found[0]) is not int or type(found[1]) is not bool or \
                        type(found[2]) is not int or type(found[3]) is not int or type(found[4]) is not int:
                    self.event_format(i, ev)  # first: are these the right JSON types?
                    for name, m, t in zip(SCORE_FIELDS, mine, found):
                        if m != t:
                            self.fail("score.points", i, name, m, t)
                if lines is not None:
                    extra = "".join(s for s, on in ((" joker", joker), (f" +{ub} upper bonus", ub),
                                                    (f" +{yb} Yahtzee bonus", yb)) if on)
                    lines.append(f"{turn_text} {cat} {pts}{extra} (total {total[cur]})")
                    turn_text = ""
                rolls = 0
                filled[cur] += 1
                n_scores += 1
                if standings is not None:
                    standings[standing(total, bot_seats, humans)] += 1
                if n_scores == n_boxes:
                    phase = "over"
                else:
                    cur = (cur + 1) % n
                continue
            self.event_format(i, ev)
            if phase in ("over", "abandoned"):
                self.stop("game.complete", i, "type",
                          "no event after " + ("the last box" if phase == "over" else "the abandon event"), kind)
            if phase == "seeds" and len(seeds) == len(senders) and kind not in ("start", "client_seed"):
                self.stop("turn.order", i, "type", "start (it follows the last client seed)", kind)
            if kind == "client_seed_commit":
                if phase != "seeds" or seeds:
                    self.stop("client_seed.commit", i, "type", "every commitment before any client seed", kind)
                self.check_commitment_event(i, ev, humans, commitments)
            elif kind == "client_seed":
                s = ev["seat"]
                if phase != "seeds":
                    self.stop("client_seed.valid", i, "type", "no client seed once play has started", kind)
                if committed:
                    self.check_reveal(i, ev, humans, commitments)
                if s not in senders:
                    self.fail("client_seed.valid", i, "seat",
                              "a human seat: %s" % humans if humans else "null (no human seat)", s)
                elif s in seeds:
                    self.fail("client_seed.valid", i, "seat", "one client seed per seat", s)
                else:
                    if not client_seed_ok(ev["client_seed"]):
                        self.fail("client_seed.valid", i, "client_seed",
                                  "1 to 256 code points allowed by SPEC §2.2", ev["client_seed"])
                    seeds[s] = ev["client_seed"]
            elif kind == "start":
                if phase != "seeds":
                    self.stop("turn.order", i, "type", "roll or score", kind)
                missing = [s for s in senders if s not in seeds]
                if missing:
                    self.fail("client_seed.valid", i, "type", "a client seed from seat(s) %s first" % missing, kind)
                client_seeds = [seeds[s] for s in senders if s in seeds]  # in seat order (§2.2)
                if self.seed is not None:
                    derive = Deriver(self.seed, h["game_id"], client_seeds)
                cur = self.check_start(i, ev, h["first"], derive)
                phase = "play"
                if lines is not None:
                    lines.append(f"  start: seat {cur} plays first" + (
                        f" (roll-off: {self.rolloff_text(ev['rolloff'])})" if h["first"] == "random" else ""))
            elif kind == "abandon":
                if self.doc["version"] >= 2:
                    self.check_abandon(i, ev, humans, cur if phase == "play" else None)
                self.r.abandoned_by = abandoner(ev, humans)
                abandon = {"by": "seat" if ev["seat"] is not None else "server" if humans else "operator",
                           "reason": ev.get("reason"), "during": phase,
                           "standing": standing(total, bot_seats, humans) if standings is not None else None}
                phase = "abandoned"
                if lines is not None:
                    if turn_text:
                        lines.append(turn_text + " (turn not finished)")
                        turn_text = ""
                    lines.append("  abandoned by " + abandoner(ev, humans))
            else:  # a roll or a score before play began
                self.stop("turn.order", i, "type", "start before any roll or score", kind)
        self.phase = phase
        self.events_checked = True  # every event went through the checks above: none stopped the replay
        self.passed("client_seed.valid")
        if committed:
            self.passed("client_seed.commit")
        if phase == "abandoned" and self.doc["version"] >= 2:
            self.passed("game.abandon")
        if phase != "seeds":
            self.passed("start.first")
        if n_rolls:
            self.passed("turn.order", "roll.count", "roll.hold", "roll.dice")
        if n_scores:
            self.passed("score.category", "score.points")
        if lines is not None and turn_text:
            lines.append(turn_text + " (turn not finished)")
        if fresh is not None:
            final = self.doc["final"]
            self.r.audit = {"faces": fresh, "rolls": n_rolls, "commitment": h["commitment"],
                            "server_seed": final["server_seed"] if final else None,
                            "client_seeds": [seeds[s] for s in senders if s in seeds],
                            # a bot under the upper_first house rule plays another game than the published one
                            "players": [(s["bot"]["id"] + (" (upper_first)" if h["upper_first"] else ""))
                                        if s["type"] == "bot" else "human" for s in h["seats"]],
                            "abandon": abandon, "standings": standings}

    # -- client_seed.commit (SPEC §2.2, version 2): each human seat commits, then every seat reveals
    def check_commitment_event(self, i: int, ev: dict, humans: list, commitments: dict) -> None:
        s = ev["seat"]
        if s not in humans:
            self.stop("client_seed.commit", i, "seat", "a human seat: %s" % humans, s)
        if s in commitments:
            self.stop("client_seed.commit", i, "seat", "one commitment per seat", s)
        commitments[s] = ev["commitment"]

    def check_reveal(self, i: int, ev: dict, humans: list, commitments: dict) -> None:
        missing = [s for s in humans if s not in commitments]
        if missing:
            self.stop("client_seed.commit", i, "type", "a commitment from seat(s) %s before any client seed" % missing,
                      ev["type"])
        seed, s = ev["client_seed"], ev["seat"]
        if type(seed) is not str or not client_seed_ok(seed) or s not in commitments:
            return  # client_seed.valid says what is wrong with it
        opened = sha256_hex(bytes.fromhex(ev["salt"]) + seed.encode("utf-8"))
        if opened != commitments[s]:  # (expected: the commitment; found: what this seed and salt hash to)
            self.fail("client_seed.commit", i, "client_seed", commitments[s], opened)

    # -- game.abandon (SPEC §4.3, version 2): who may abandon, when, and why
    def check_abandon(self, i: int, ev: dict, humans: list, current: int | None) -> None:
        seat, reason = ev["seat"], ev["reason"]
        if reason not in ABANDON_REASONS:
            self.fail("game.abandon", i, "reason", " or ".join(ABANDON_REASONS), reason)
        elif reason == "timeout" and seat is not None:
            self.fail("game.abandon", i, "seat", "null (only the server abandons on a timeout)", seat)
        elif reason == "player" and seat is None and humans:
            self.fail("game.abandon", i, "seat", "a seat (the server abandons only on a timeout)", seat)
        elif reason == "player" and seat is not None and seat not in humans:
            self.fail("game.abandon", i, "seat", "a human seat: %s" % humans, seat)
        elif reason == "player" and seat is not None and current is not None and seat != current:
            self.fail("game.abandon", i, "seat", f"seat {current}, whose turn it is (or any seat before play)", seat)

    def check_start(self, i: int, ev: dict, first, derive: Deriver | None) -> int:
        """start.first: the fixed first seat, or the roll-off re-derived. Returns the true first seat."""
        if first != "random":
            self.expect("start.first", i, "first", first, ev["first"])
            self.expect("start.first", i, "rolloff", [], ev["rolloff"])
            return first
        logged = {(r, e["seat"]): e["dice"] for r, rnd in enumerate(ev["rolloff"], 1) for e in rnd}
        rounds, alive, r = [], list(range(self.n_seats)), 1
        while len(alive) > 1 and r <= 1000:
            if derive is None and r > len(ev["rolloff"]):  # no seed: check the logged roll-off is consistent
                break
            rnd = [{"seat": s, "dice": derive.rolloff(r, s) if derive else logged.get((r, s))} for s in alive]
            rounds.append(rnd)
            if any(e["dice"] is None for e in rnd):
                break
            best = max(sum(e["dice"]) for e in rnd)
            alive = [e["seat"] for e in rnd if sum(e["dice"]) == best]
            r += 1
        diff = first_difference(rounds, ev["rolloff"], "rolloff")
        if diff:
            self.fail("start.first", i, *diff)
        if len(alive) == 1:
            self.expect("start.first", i, "first", alive[0], ev["first"])
            return alive[0]
        self.fail("start.first", i, "rolloff", "rounds until one seat has the highest sum", ev["rolloff"])
        return ev["first"]

    @staticmethod
    def rolloff_text(rounds) -> str:
        return "; ".join(", ".join(f"seat {e['seat']} {sum(e['dice'])}" for e in rnd) for rnd in rounds)

    def totals(self, s: int) -> dict:
        upper = lower = 0
        for c, v in self.boxes[s].items():
            if v is not None:
                if c in UPPER:
                    upper += v
                else:
                    lower += v
        ub, yb = self.bonus[s]
        return {"upper": upper, "upper_bonus": ub, "lower": lower, "yahtzee_bonus": yb,
                "total": upper + ub + lower + yb}

    # -- game.complete, final.totals, final.winner (SPEC §4.4, §5.4)
    def check_end(self) -> None:
        final, phase = self.doc["final"], self.phase
        events = self.doc["events"]
        status = final["status"] if final else None
        if final is None:
            if phase in ("over", "abandoned"):
                self.fail("game.complete", None, "final", "the final block of a game that is over", None)
            return
        if status == "finished" and phase != "over":
            open_boxes = sum(v is None for b in self.boxes for v in b.values())
            found_phase = {"play": f"in progress ({open_boxes} boxes still open)", "seeds": "play never started",
                           "abandoned": "abandoned (an abandon event)"}[phase]
            self.fail("game.complete", None, "final.status", f"what the events show: {found_phase}", status)
        elif status == "abandoned" and phase != "abandoned":
            self.fail("game.complete", len(events) - 1 if events else None, "type",
                      "an abandon event as the last event", events[-1]["type"] if events else "no events")
        self.passed("game.complete")
        totals = [self.totals(s) for s in range(self.n_seats)]
        # (the format check made sure that the logged totals are integers: equal values are equal JSON)
        diff = first_difference(totals, final["totals"], "final.totals") if totals != final["totals"] else None
        if diff:
            self.fail("final.totals", None, *diff)
        self.passed("final.totals")
        if status == "finished":
            best = max(t["total"] for t in totals)
            winners = [s for s, t in enumerate(totals) if t["total"] == best]
            winner, draw = (winners[0] if len(winners) == 1 else None), len(winners) > 1
        else:
            winner, draw = None, False
        self.expect("final.winner", None, "final.winner", winner, final["winner"])
        self.expect("final.winner", None, "final.draw", draw, final["draw"])
        self.passed("final.winner")
        if self.r.audit is not None and status == "finished":
            self.r.audit["totals"] = [t["total"] for t in totals]

    # -- bot.identity, bot.decision (only with --check-bots)
    def check_bot_identities(self) -> None:
        self.bot_ok = {}
        for s, seat in enumerate(self.doc["header"]["seats"]):
            if seat["type"] == "bot":
                problem = self.bots.identity_problem(seat["bot"])
                if problem:
                    self.fail("bot.identity", None, f"header.seats[{s}].bot.{problem[0]}", problem[1], problem[2])
                self.bot_ok[s] = not problem
        self.passed("bot.identity")

    def check_bot_decision(self, i, ev, seat, turn, rolls, dice, derive) -> None:
        if not self.bot_ok.get(seat) or derive is None:
            return
        h = self.doc["header"]
        try:
            action, value = self.bots.decide(
                h["seats"][seat]["bot"]["id"], h["rules"], dict(self.boxes[seat]), tuple(dice), rolls,
                self.bonus[seat][1], h["upper_first"], lambda k: derive.tiebreak(seat, turn, rolls, k))
        except TableError:
            raise  # the optimal table is missing: a usage error (exit 2), not a decision of this log
        except Exception as e:  # the published policy cannot decide here (e.g. a house rule it does not play)
            self.fail("bot.decision", i, "type", f"a decision of the policy, which failed: {e!r}", ev["type"])
            return
        if action != ev["type"]:
            self.fail("bot.decision", i, "type", f"{action} {list(value) if action == 'roll' else value}",
                      f"{ev['type']} {ev['hold'] if ev['type'] == 'roll' else ev['category']}")
        elif action == "roll":
            self.expect("bot.decision", i, "hold", list(value), ev["hold"])
        else:
            self.expect("bot.decision", i, "category", value, ev["category"])
        self.passed("bot.decision")


STANDINGS = ("bot ahead", "human ahead", "level")


def standing(total: list, bot_seats: list, humans: list) -> str:
    """Who leads a game of bots and humans right now: the best bot's total against the best human's."""
    bots, people = max(total[s] for s in bot_seats), max(total[s] for s in humans)
    return STANDINGS[0] if bots > people else STANDINGS[1] if people > bots else STANDINGS[2]


def abandoner(ev: dict, humans: list) -> str:
    """Who abandoned, in words (the verifier's output names an abandon by the server)."""
    if ev["seat"] is not None:
        return f"seat {ev['seat']}"
    if ev.get("reason") == "timeout":
        return "THE SERVER, on a timeout"
    return "the operator" if not humans else "THE SERVER"


def verify_document(doc, file: str, **options) -> Result:
    """Check one parsed log. `doc` must be a JSON object (a dict)."""
    return Verification(doc, file, **options).run()
