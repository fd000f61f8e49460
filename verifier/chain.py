"""Move receipts (SPEC §5.6): the server's signed word, given with every answer to a move, that the game's history
had n events hashing to h_n. A final log that departs from any receipt the player collected is caught here: the
operator cannot rewrite a move once it has answered it.

    h_0 = SHA-256(field("fairdice-chain/v2") || field(game_id) || canonical(header))
    h_i = SHA-256(h_(i-1) || canonical(event_(i-1)))
    signed: field("fairdice-receipt/v2") || field(game_id) || u32(n) || h_n"""

from __future__ import annotations

import hashlib
import re

from . import keys, strictjson
from .errors import VerifierError
from .reading import UnusableFileError, read_bytes
from .spec import canonical, canonical_event_texts, field, u32

CHAIN_LABEL, RECEIPT_LABEL = "fairdice-chain/v2", "fairdice-receipt/v2"
FIELDS = {"game_id", "events", "chain", "key_id", "signature"}
HEX = {n: re.compile(rf"[0-9a-f]{{{n}}}") for n in (16, 64, 128)}


class MoveReceiptError(VerifierError, ValueError):
    """A receipts file that cannot be used (the message names the receipt and the field)."""


def chain_digests(header: dict, events: list, label: str = CHAIN_LABEL, ident: str | None = None) -> list[bytes]:
    """[h_0, h_1, ..., h_n] of a log (of a session's: its own label and the session id, SPEC §10.6)."""
    ident = header["game_id"] if ident is None else ident
    digest = hashlib.sha256(field(label) + field(ident) + canonical(header)).digest()
    out = [digest]
    for event in events:
        digest = hashlib.sha256(digest + canonical(event)).digest()
        out.append(digest)
    return out


class History:
    """A log's events as the signatures cover them: each event's canonical JSON and the chain h_0..h_n (SPEC §5.6),
    computed once when first asked for. The move receipts (receipt.chain), the players' signatures
    (player.signature) and the final signature (sig.final) are all checked against them. Once the replay has
    checked every event's form (`checked`), the events are written by the faster spec.canonical_event_texts."""

    def __init__(self, header: dict, events: list):
        self.header, self.events = header, events
        self.form_checked = False
        self._texts: list[bytes] | None = None
        self._digests: list[bytes] | None = None

    def checked(self) -> None:
        """Every event has exactly the fields and JSON types of SPEC §5.3 (the replay went through them all)."""
        self.form_checked = True

    def texts(self) -> list[bytes]:
        """canonical(event) of each event."""
        if self._texts is None:
            self._texts = canonical_event_texts(self.events) if self.form_checked else [
                canonical(e) for e in self.events]
        return self._texts

    def digest(self, n: int) -> bytes:
        """h_n: the chain over the header and the first n events."""
        if self._digests is None:
            h = self.header
            digest = hashlib.sha256(field(CHAIN_LABEL) + field(h["game_id"]) + canonical(h)).digest()
            digests = [digest]
            sha256 = hashlib.sha256
            for text in self.texts():
                digest = sha256(digest + text).digest()
                digests.append(digest)
            self._digests = digests
        return self._digests[n]


def signed_bytes(game_id: str, n: int, digest: bytes) -> bytes:
    return field(RECEIPT_LABEL) + field(game_id) + u32(n) + digest


def _well_formed(i: int, rc) -> dict:
    where = f"receipts[{i}]"
    if type(rc) is not dict:
        raise MoveReceiptError(f"{where}: a move receipt is a JSON object")
    if rc.keys() != FIELDS:
        raise MoveReceiptError(f"{where}: expected exactly the fields {sorted(FIELDS)}, found {sorted(rc)}")
    if type(rc["game_id"]) is not str or type(rc["events"]) is not int or not 0 <= rc["events"] < 2 ** 32:
        raise MoveReceiptError(f"{where}: game_id must be a string and events a count of events")
    for name, n in (("chain", 64), ("key_id", 16), ("signature", 128)):
        if type(rc[name]) is not str or not HEX[n].fullmatch(rc[name]):
            raise MoveReceiptError(f"{where}.{name}: expected {n} lowercase hex digits")
    return rc


def load_move_receipts(path: str) -> list[dict]:
    """The move receipts in a file: a JSON array of them (as `fairdice play --save-receipts` writes)."""
    try:
        doc = strictjson.loads(read_bytes(path))
    except (UnusableFileError, strictjson.StrictJSONError) as e:
        raise MoveReceiptError(str(e)) from None
    return well_formed_receipts(doc)


def well_formed_receipts(doc) -> list[dict]:
    """`doc` itself when it is a JSON array of well-formed move receipts; MoveReceiptError names the first that is
    not."""
    if type(doc) is not list:
        raise MoveReceiptError("a JSON array of move receipts is expected")
    return [_well_formed(i, rc) for i, rc in enumerate(doc)]


def check_move_receipts(checks, doc: dict, receipts: list[dict], trusted: keys.TrustedKeys,
                        history: History) -> int:
    """receipt.chain: every receipt is of this game, within its history, hashing to the log's h_n, and signed by
    the trusted key its key_id names (no other key is tried). Failures go to `checks` (verifier.results.Checks),
    one per receipt that departs. Returns how many events the receipts that hold acknowledge (the most of them;
    0 when none holds)."""
    h, events = doc["header"], doc["events"]
    acknowledged = 0
    for i, rc in enumerate(receipts):
        where = f"receipts[{i}]"
        if rc["game_id"] != h["game_id"]:
            checks.fail("receipt.chain", None, f"{where}.game_id", h["game_id"], rc["game_id"])
            continue
        key = trusted.named(rc["key_id"])
        if key is None:
            checks.fail("receipt.chain", None, f"{where}.key_id", "the id of a trusted key", rc["key_id"])
            continue
        if not keys.signature_valid(key, rc["signature"],
                                    signed_bytes(rc["game_id"], rc["events"], bytes.fromhex(rc["chain"]))):
            checks.fail("receipt.chain", None, f"{where}.signature", "a signature by the trusted key", rc["signature"])
            continue
        if rc["events"] > len(events):
            checks.fail("receipt.chain", None, f"{where}.events",
                        f"at most the log's {len(events)} events (the server acknowledged more)", rc["events"])
            continue
        if history.digest(rc["events"]).hex() != rc["chain"]:
            checks.fail("receipt.chain", rc["events"] - 1 if rc["events"] else None, f"{where}.chain",
                        history.digest(rc["events"]).hex(), rc["chain"])
            continue
        acknowledged = max(acknowledged, rc["events"])
    checks.passed("receipt.chain")
    return acknowledged
