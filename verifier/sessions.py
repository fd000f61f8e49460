"""Session logs (SPEC §10): fair dice for any app, checked independently of the server.

Written again from SPEC §10 alone: the notation (§10.4) by a hand-written scanner, each die from its own HMAC
stream with candidates of one or two bytes, the session chain and receipts (§10.6), the app's signatures
(§10.7). The checks and their order are those of §10.9: `session.format` stops everything; the others all run,
each failure naming the session, the event, the field, the expected and the found value."""

from __future__ import annotations

import hashlib
import hmac
import json
import re

from . import keys, strictjson
from .chain import chain_digests
from .errors import VerifierError
from .reading import UnusableFileError, read_bytes
from .results import Checks, Result, StopReplay
from .seed_rule import CLIENT_SEED_LENGTH, text_ok
from .spec import SCHEME, canonical, field, u32

SESSION_FORMAT = "fairdice-session-log"
SESSION_CHECKS = ("session.format", "session.key", "session.signature", "session.order", "session.commitment",
                  "session.nonce", "session.notation", "session.dice", "session.total", "session.app_signature",
                  "session.receipt")  # SPEC §10.9, in its order
CHAIN_LABEL, RECEIPT_LABEL, APP_LABEL = ("fairdice-session-chain/v1", "fairdice-session-receipt/v1",
                                         "fairdice-session-app/v1")
TOP_FIELDS = {"format", "version", "header", "commitment_signature", "events", "signature"}
SIGNATURES = {"commitment_signature", "signature"}  # a missing one fails session.signature, not the format
HEADER_FIELDS = {"scheme", "session_id", "commitment", "next_commitment", "key_id", "public_key"}
EVENT_FIELDS = {
    "client_seed": {"type", "pair", "client_seed", "app_key"},
    "roll": {"type", "pair", "nonce", "serial", "dice", "rolls", "dropped", "total", "app_signature"},
    "rotate": {"type", "pair", "server_seed", "next_commitment", "app_signature"},
}
RECEIPT_FIELDS = {"session_id", "events", "chain", "key_id", "signature"}
HEX = {n: re.compile(rf"[0-9a-f]{{{n}}}") for n in (16, 64, 128)}
PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]{1,64}")
U32 = 2 ** 32
UNSIGNED_WARNING = ("the app did not sign the rolls of pair{s} {pairs} (no app key): there, the operator could have "
                    "added or dropped rolls between the receipts the app holds")


def is_session_log(doc) -> bool:
    return type(doc) is dict and doc.get("format") == SESSION_FORMAT


def _hex(x, n: int) -> bool:
    return type(x) is str and HEX[n].fullmatch(x) is not None


def _count(x) -> bool:
    return type(x) is int and 0 <= x < U32


def _int_list(x) -> bool:
    return type(x) is list and all(type(v) is int for v in x)


# ---------------------------------------------------------------- §10.4 the notation


def _number(text: str, i: int) -> tuple[int | None, int]:
    """A decimal number at text[i:] (no leading zero, at most 7 digits): (value or None, the index after it)."""
    j = i
    while j < len(text) and "0" <= text[j] <= "9":
        j += 1
    digits = text[i:j]
    if not digits or len(digits) > 7 or (len(digits) > 1 and digits[0] == "0"):
        return None, j
    return int(digits), j


def parse_notation(text) -> tuple[int, int, str | None, int | None, int] | str:
    """(N, M, keep mode, K, modifier) of a valid notation, else the refusal code of SPEC §10.4."""
    if type(text) is not str or len(text) > 32:
        return "dice_syntax"
    i, count = 0, 1
    if text[:1] != "d":
        count, i = _number(text, 0)
        if count is None:
            return "dice_syntax"
    if text[i:i + 1] != "d":
        return "dice_syntax"
    sides, i = _number(text, i + 1)
    if sides is None:
        return "dice_syntax"
    mode = keep = None
    if text[i:i + 2] in ("kh", "kl"):
        mode = text[i:i + 2]
        keep, i = _number(text, i + 2)
        if keep is None:
            return "dice_syntax"
    modifier = 0
    if text[i:i + 1] in ("+", "-"):
        sign = text[i]
        modifier, i = _number(text, i + 1)
        if modifier is None:
            return "dice_syntax"
        if not 1 <= modifier <= 100_000:
            return "dice_modifier"
        modifier = -modifier if sign == "-" else modifier
    if i != len(text):
        return "dice_syntax"
    if not 1 <= count <= 100:
        return "dice_count"
    if not 2 <= sides <= 1000:
        return "dice_sides"
    if keep is not None and not 1 <= keep <= count:
        return "dice_keep"
    return count, sides, mode, keep, modifier


def die(seed: bytes, session_id: str, client_seed: str, nonce: int, index: int, sides: int) -> int:
    """Die `index` of the roll with `nonce` (SPEC §10.4): candidates of 1 byte (M <= 256) or 2, below
    L = 256^w - 256^w mod M accepted, face = x mod M + 1; the stream goes on into block(1), block(2), ..."""
    msg = (field(SCHEME) + field("session-roll") + field(session_id) + u32(1) + field(client_seed) + u32(nonce)
           + u32(index))
    width = 1 if sides <= 256 else 2
    space = 256 ** width
    return face_of_stream((hmac.digest(seed, msg + u32(j), "sha256") for j in range(U32)), sides, width,
                          space - space % sides)


def face_of_stream(blocks, sides: int, width: int, limit: int) -> int:
    for block in blocks:
        for start in range(0, 32, width):
            x = int.from_bytes(block[start:start + width], "big")
            if x < limit:
                return x % sides + 1
    raise ValueError("the byte stream ended")


def kept_total(faces: list[int], mode: str | None, keep: int | None, modifier: int) -> tuple[list[int], int]:
    """(dropped indices ascending, total) of SPEC §10.4."""
    if mode is None:
        return [], sum(faces) + modifier
    order = sorted(range(len(faces)), key=lambda i: (-faces[i] if mode == "kh" else faces[i], i))
    dropped = sorted(order[keep:])
    return dropped, sum(faces[i] for i in order[:keep]) + modifier


# ---------------------------------------------------------------- the receipts file (§10.6)


class SessionReceiptError(VerifierError, ValueError):
    """A session receipts file that cannot be used (the message names the receipt and the field)."""


def load_session_receipts(path: str) -> list[dict]:
    try:
        doc = strictjson.loads(read_bytes(path))
    except (UnusableFileError, strictjson.StrictJSONError) as e:
        raise SessionReceiptError(str(e)) from None
    if type(doc) is not list:
        raise SessionReceiptError("not a JSON array of session receipts")
    for i, rc in enumerate(doc):
        if type(rc) is not dict or set(rc) != RECEIPT_FIELDS:
            raise SessionReceiptError(f"receipt {i}: a session receipt has exactly the fields "
                                      + ", ".join(sorted(RECEIPT_FIELDS)))
        if type(rc["session_id"]) is not str or not _count(rc["events"]) or not _hex(rc["chain"], 64) \
                or not _hex(rc["key_id"], 16) or not _hex(rc["signature"], 128):
            raise SessionReceiptError(f"receipt {i}: a field is not of its type or form")
    return doc


# ---------------------------------------------------------------- the checks (§10.9)


class SessionVerification:
    """The verification of one session log (SPEC §10.9), the sessions' twin of `verifier.replay.Verification`:
    `run` takes the checks in §10.9's order into one Result, stopping only when the format itself is broken.
    The events are replayed by `SessionReplay`; the receipts and app key the caller holds are what catch an
    operator who re-signs a changed log with the server's own key."""
    def __init__(self, doc: dict, file: str, trusted_keys=None, require_signature: bool = True,
                 session_receipts: list[dict] = (), app_key: str | None = None, audit: bool = False,
                 receipts_by_game: bool = False, **_ignored):
        """`receipts_by_game`: a batch of several logs, where each receipt applies to the log of its session only
        (with one log, every receipt given must be this session's)."""
        self.doc = doc
        self.r = Result(file, checks=dict.fromkeys(SESSION_CHECKS, "skip"), kind="session")
        self.ck = Checks(self.r)
        self.trusted_keys = None if trusted_keys is None else keys.TrustedKeys.of(trusted_keys)
        self.require_signature = require_signature
        sid = doc.get("header", {}).get("session_id") if type(doc.get("header")) is dict else None
        self.receipts = [rc for rc in session_receipts if not receipts_by_game or rc["session_id"] == sid]
        self.app_key = app_key
        self.audit = audit

    def run(self) -> Result:
        try:
            self.check_format()
        except StopReplay:
            return self.r
        doc = self.doc
        digests = chain_digests(doc["header"], doc["events"], CHAIN_LABEL, doc["header"]["session_id"])
        key = self.check_key()
        self.check_signatures(key)
        self.check_events(digests)
        self.check_receipts(digests, key)
        return self.r

    # -- session.format
    def check_format(self) -> None:
        doc, ck = self.doc, self.ck
        if set(doc) - TOP_FIELDS or (TOP_FIELDS - SIGNATURES) - set(doc):
            ck.stop("session.format", None, "(fields)", sorted(TOP_FIELDS), sorted(doc))
        h = doc["header"]
        if doc["version"] != 1 or type(doc["version"]) is not int:
            ck.stop("session.format", None, "version", 1, doc["version"])
        if type(h) is not dict or set(h) != HEADER_FIELDS:
            ck.stop("session.format", None, "header", sorted(HEADER_FIELDS), sorted(h) if type(h) is dict else h)
        self.r.game_id = h["session_id"] if type(h["session_id"]) is str else None
        for name, ok in (("scheme", h["scheme"] == SCHEME),
                         ("session_id", type(h["session_id"]) is str and PRINTABLE_ASCII.fullmatch(h["session_id"])),
                         ("commitment", _hex(h["commitment"], 64)), ("next_commitment", _hex(h["next_commitment"], 64)),
                         ("key_id", _hex(h["key_id"], 16)), ("public_key", _hex(h["public_key"], 64))):
            if not ok:
                ck.stop("session.format", None, f"header.{name}", "the form of SPEC §10.2", h[name])
        for name in SIGNATURES & set(doc):
            if type(doc[name]) is not str:
                ck.stop("session.format", None, name, "a hex string", doc[name])
        if type(doc["events"]) is not list:
            ck.stop("session.format", None, "events", "an array", doc["events"])
        for i, e in enumerate(doc["events"]):
            self.check_event_format(i, e)
        ck.passed("session.format")

    def check_event_format(self, i: int, e) -> None:
        ck = self.ck
        kind = e.get("type") if type(e) is dict and type(e.get("type")) is str else None
        if kind not in EVENT_FIELDS or set(e) != EVENT_FIELDS[kind]:
            ck.stop("session.format", i, "(fields)", "the fields of a client_seed, roll or rotate event (SPEC "
                    "§10.5)", sorted(e) if type(e) is dict else e)
        forms = {
            "pair": _count(e["pair"]), "client_seed": type(e.get("client_seed", "")) is str,
            "app_key": e.get("app_key") is None or _hex(e.get("app_key"), 64),
            "nonce": _count(e.get("nonce", 0)), "serial": _count(e.get("serial", 0)),
            "dice": type(e.get("dice", "")) is str, "rolls": _int_list(e.get("rolls", [])),
            "dropped": _int_list(e.get("dropped", [])), "total": type(e.get("total", 0)) is int,
            "app_signature": e.get("app_signature") is None or _hex(e.get("app_signature"), 128),
            "server_seed": _hex(e.get("server_seed", "0" * 64), 64),
            "next_commitment": _hex(e.get("next_commitment", "0" * 64), 64),
        }
        for name, ok in forms.items():
            if not ok:
                ck.stop("session.format", i, name, "the form of SPEC §10.5", e[name])

    # -- session.key, session.signature
    def check_key(self) -> bytes | None:
        """The trusted key the header names, or None (then no signature can pass)."""
        h, ck, r = self.doc["header"], self.ck, self.r
        embedded = bytes.fromhex(h["public_key"])
        ck.expect("session.key", None, "header.key_id", keys.key_id(embedded), h["key_id"])
        trusted = self.trusted_keys or keys.TrustedKeys([embedded])
        r.trusted = self.trusted_keys is not None
        if not trusted.trusts(embedded):
            ck.fail("session.key", None, "header.public_key", trusted.described(), h["public_key"])
        ck.passed("session.key")
        key = trusted.named(h["key_id"])
        return key if key == embedded else None

    def check_signatures(self, key: bytes | None) -> None:
        doc, ck = self.doc, self.ck
        self.r.signed = SIGNATURES <= set(doc)
        signed = {"commitment_signature": canonical(doc["header"]),
                  "signature": canonical({k: v for k, v in doc.items() if k != "signature"})}
        for name, data in signed.items():
            if name not in doc:
                if self.require_signature:
                    ck.fail("session.signature", None, name, "present", "missing")
            elif key is None or not keys.signature_valid(key, doc[name], data):
                ck.fail("session.signature", None, name, "a valid signature by the trusted key the header names",
                        doc[name])
        ck.passed("session.signature")

    # -- the events: session.order, .commitment, .nonce, .notation, .dice, .total, .app_signature
    def check_events(self, digests: list[bytes]) -> None:
        """The events replayed in order (`SessionReplay`), then what only the whole log says: a roll whose seed is
        never revealed, the count of pairs and rolls, and the pairs the app did not sign."""
        ck, r = self.ck, self.r
        replay = SessionReplay(ck, self.doc["header"], digests, self.app_key, self.audit)
        for i, e in enumerate(self.doc["events"]):
            replay.on_event(i, e)
        if replay.pending:
            ck.fail("session.order", replay.pending[0][0], "type", "a rotate event revealing the seed of every roll in "
                    "the log (SPEC §10.8)", "a roll of a pair that is not revealed")
        ck.passed("session.order", "session.commitment", "session.nonce", "session.notation", "session.dice",
                  "session.total", "session.app_signature")
        pair, unsigned = replay.pair, replay.unsigned_pairs
        r.status = f"{pair} revealed pair{'s' if pair != 1 else ''}, {replay.rolls} rolls"
        if unsigned:
            r.notes.append(UNSIGNED_WARNING.format(s="s" if len(unsigned) > 1 else "",
                                                   pairs=", ".join(map(str, unsigned))))
        if self.audit:
            r.audit = {"session_faces": replay.faces_by_size}

    # -- session.receipt
    def check_receipts(self, digests: list[bytes], key: bytes | None) -> None:
        sid, ck = self.doc["header"]["session_id"], self.ck
        for k, rc in enumerate(self.receipts):
            where = f"receipts[{k}]"
            if rc["session_id"] != sid:
                ck.fail("session.receipt", None, f"{where}.session_id", sid, rc["session_id"])
                continue
            n = rc["events"]
            if n >= len(digests):
                self.r.notes.append(f"{where} covers {n} events, past the log's {len(digests) - 1}: its pair is "
                                    "not revealed yet")
                continue
            ck.expect("session.receipt", n - 1 if n else None, f"{where}.chain", digests[n].hex(), rc["chain"])
            signed = field(RECEIPT_LABEL) + field(sid) + u32(n) + bytes.fromhex(rc["chain"])
            trusted = self.trusted_keys or keys.TrustedKeys([bytes.fromhex(self.doc["header"]["public_key"])])
            signer = trusted.named(rc["key_id"])
            if signer is None or not keys.signature_valid(signer, rc["signature"], signed):
                ck.fail("session.receipt", None, f"{where}.signature", "a valid signature by a trusted key",
                        rc["signature"])
        if self.receipts:
            ck.passed("session.receipt")


class SessionReplay:
    """A session log's events replayed in order, pair by pair (SPEC §10.5-§10.8): a pair's client seed, its rolls
    (session.order, .nonce, .notation, .total and .app_signature as they come), then its rotate, which opens the
    pair's commitment and reveals the seed its rolls are re-derived from (session.commitment, session.dice).

    One method per event type, so that each event's checks read in SPEC's order; the state between events is
    only the pair being played. The page's twin is `SessionReplay` in api/static/verify/sessions.js."""

    def __init__(self, ck: Checks, header: dict, digests: list[bytes], app_key: str | None, audit: bool):
        self.ck = ck
        self.sid = header["session_id"]
        self.digests = digests
        self.app_key_given = app_key  # the app key the caller knows, or None
        self.audit = audit
        self.commitments = {0: header["commitment"], 1: header["next_commitment"]}  # pair -> its commitment
        self.pair = 0  # the pair being played
        self.client: tuple[str, str | None] | None = None  # its (client seed, app key), once its client seed came
        self.nonce, self.serial = 0, 1  # the nonce and serial its next roll must have
        self.pending: list[tuple] = []  # its rolls (index, event, notation, client), re-derived once its seed is out
        self.rolls = 0
        self.unsigned_pairs: list[int] = []  # the pairs with rolls and no app key
        self.faces_by_size: dict[int, list[int]] = {}  # with audit: die size -> face counts of the rolls re-derived

    @property
    def app_key(self) -> str | None:
        """The app key of the pair being played (None: the app signs nothing in it)."""
        return self.client[1] if self.client is not None else None

    def on_event(self, i: int, e: dict) -> None:
        if e["pair"] != self.pair:
            self.ck.fail("session.order", i, "pair", self.pair, e["pair"])
        {"client_seed": self.on_client_seed, "roll": self.on_roll, "rotate": self.on_rotate}[e["type"]](i, e)

    def on_client_seed(self, i: int, e: dict) -> None:
        """A pair's client seed: one, before its rolls, valid, with the app key the caller knows (when it knows one)."""
        ck, pair, kind = self.ck, self.pair, e["type"]
        if self.client is not None:
            ck.fail("session.order", i, "type", f"no second client seed in pair {pair}", kind)
        elif self.nonce or self.pending:
            ck.fail("session.order", i, "type", f"the client seed before pair {pair}'s rolls", kind)
        if not text_ok(e["client_seed"], CLIENT_SEED_LENGTH):
            ck.fail("session.order", i, "client_seed", "1..256 code points, none refused (SPEC §2.2)",
                    e["client_seed"])
        if self.app_key_given is not None and e["app_key"] != self.app_key_given:
            ck.fail("session.app_signature", i, "app_key", self.app_key_given, e["app_key"])
        if self.client is None:
            self.client = (e["client_seed"], e["app_key"])

    def on_roll(self, i: int, e: dict) -> None:
        """A roll: after the client seed, the next nonce and serial, signed by the app, its notation and its total;
        its dice wait for the pair's rotate."""
        ck = self.ck
        self.rolls += 1
        if self.client is None:
            ck.fail("session.order", i, "type", f"a client seed before pair {self.pair}'s first roll", e["type"])
        ck.expect("session.nonce", i, "nonce", self.nonce, e["nonce"])
        ck.expect("session.nonce", i, "serial", self.serial, e["serial"])
        self.nonce, self.serial = e["nonce"] + 1, e["serial"] + 1  # (a gap is one finding, not one per later roll)
        self.check_app_signature(i, e, {"type": "roll", "pair": e["pair"], "nonce": e["nonce"], "dice": e["dice"]})
        spec = parse_notation(e["dice"])
        if isinstance(spec, str):
            ck.fail("session.notation", i, "dice", f"valid notation (SPEC §10.4; refused as {spec})", e["dice"])
            return
        self.check_total(i, e, spec)
        self.pending.append((i, e, spec, self.client))

    def on_rotate(self, i: int, e: dict) -> None:
        """A rotate: its server seed opens the pair's commitment, it names the commitment of pair + 2, the app signs
        it, and every roll of the pair re-derives from the seed; then the next pair begins."""
        app_key, pair = self.app_key, self.pair
        seed = bytes.fromhex(e["server_seed"])
        if pair in self.commitments:
            self.ck.expect("session.commitment", i, "server_seed", self.commitments[pair],
                           hashlib.sha256(seed).hexdigest())
        self.commitments[pair + 2] = e["next_commitment"]
        self.check_app_signature(i, e, {"type": "rotate", "pair": e["pair"]})
        for j, roll, spec, client in self.pending:
            if client is not None:
                self.check_dice(j, roll, spec, seed, client[0])
        if app_key is None and (self.nonce or self.pending):
            self.unsigned_pairs.append(pair)
        self.pair, self.client, self.nonce, self.pending = pair + 1, None, 0, []

    def check_app_signature(self, i: int, e: dict, command: dict) -> None:
        """session.app_signature: by the pair's app key over the chain so far and the command; none without a key."""
        app_key = self.app_key
        if app_key is None:
            if e["app_signature"] is not None:
                self.ck.fail("session.app_signature", i, "app_signature", None, e["app_signature"])
            return
        message = field(APP_LABEL) + field(self.sid) + u32(i) + self.digests[i] + canonical(command)
        if not keys.signature_valid(bytes.fromhex(app_key), e["app_signature"], message):
            self.ck.fail("session.app_signature", i, "app_signature", f"a valid signature by the app key {app_key} "
                         "over the history before this event", e["app_signature"])

    def check_total(self, i: int, e: dict, spec) -> None:
        """session.total: the dropped dice and the total follow from the faces shown (when there are N of them)."""
        count, sides, mode, keep, modifier = spec
        if len(e["rolls"]) == count:
            dropped, total = kept_total(e["rolls"], mode, keep, modifier)
            self.ck.expect("session.total", i, "dropped", dropped, e["dropped"])
            self.ck.expect("session.total", i, "total", total, e["total"])

    def check_dice(self, i: int, e: dict, spec, seed: bytes, client_seed: str) -> None:
        """session.dice: the roll's faces re-derived from the revealed seed (and counted, with audit)."""
        count, sides = spec[0], spec[1]
        derived = [die(seed, self.sid, client_seed, e["nonce"], k, sides) for k in range(count)]
        if self.ck.expect("session.dice", i, "rolls", derived, e["rolls"]) and self.audit:
            tally = self.faces_by_size.setdefault(sides, [0] * sides)
            for f in derived:
                tally[f - 1] += 1


def verify_session(doc: dict, file: str, **options) -> Result:
    return SessionVerification(doc, file, **options).run()


def session_lines(r: Result) -> list[str]:
    """The verdict lines of one session log (cli prints them made printable)."""
    signed = "signature INVALID" if r.checks["session.signature"] == "fail" else "signed" if r.signed else "UNSIGNED"
    origin = "trusted key" if r.trusted else "embedded key only: origin not checked"
    lines = [f"{'OK  ' if r.ok else 'FAIL'}  session {r.game_id or '?'}  {r.file}  ({r.status or '?'}, {signed}, "
             f"{origin})"]
    lines += ["      WARNING: " + note if note.startswith("the app") else "      note: " + note for note in r.notes]
    for f in r.failures:
        event = "-" if f.event is None else f.event
        lines.append(f"      {f.check}  event {event}  field {f.field}: expected "
                     f"{json.dumps(f.expected, ensure_ascii=False)[:200]}, found "
                     f"{json.dumps(f.found, ensure_ascii=False)[:200]}")
    lines += [f"      ... and {n} more {c} failures" for c, n in r.unlisted.items()]
    return lines


def session_json(r: Result) -> dict:
    return {"file": r.file, "kind": "session", "session_id": r.game_id, "status": r.status, "ok": r.ok,
            "signed": r.signed, "trusted_key": r.trusted, "checks": r.checks, "warnings": list(r.notes),
            "failures": [f.as_dict() for f in r.failures], "unlisted_failures": r.unlisted}
