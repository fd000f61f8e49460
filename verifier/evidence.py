"""A player's evidence found among the inputs (SPEC §7.2): the folder where the page or `fairdice play` saved a
game holds, beside the log, the player's receipt (§5.5), the server's move receipts (§5.6) and perhaps the player's
key file (§5.7). Each such file is told from a log by its content, not its name, and held to the log of its game
id; evidence whose game has no log among the inputs is a failure of its own (the operator handed over a log of
another game, or none).

A log always has an "events" key at its top level; a receipt and a key file never have one, so only the few files
without the bytes `"events"` (and the arrays: move receipts) are parsed here, and a directory of a million logs is
not read twice over."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from . import strictjson
from .chain import MoveReceiptError, well_formed_receipts
from .errors import VerifierError
from .reading import UnusableFileError, read_bytes
from .receipt import FORMAT, ReceiptError, check_receipt

KEY_FILE_FIELDS = ("game_id", "seat", "player_key", "private_key")  # as `fairdice play` keeps it (SPEC §5.7)
PRIVATE_FIELDS = ("private_key", "private_jwk")  # any object with one of them is a key file, and never printed
HEX64 = re.compile(r"[0-9a-f]{64}")


class EvidenceError(VerifierError, ValueError):
    """A file that is a player's evidence but cannot serve as such (the message names the field, never a private
    key's value)."""


@dataclass
class Evidence:
    """One file of a player's evidence: `kind` "receipt", "moves" or "key"; `items` what it holds (a receipt, the
    move receipts, or a key file without its private key), each with its game id."""
    file: str
    kind: str
    items: list

    @property
    def game_ids(self) -> list[str]:
        return list(dict.fromkeys(item["game_id"] for item in self.items))

    def described(self, game_id: str) -> str:
        """What this file holds for `game_id`, in words."""
        if self.kind == "moves":
            n = sum(item["game_id"] == game_id for item in self.items)
            return f"{self.file} ({n} move receipt{'s' if n != 1 else ''})"
        return f"{self.file} ({'the player receipt' if self.kind == 'receipt' else 'the player key file'})"


@dataclass
class Inputs:
    """The input files sorted: logs to verify, the evidence to hold them to, and evidence that cannot be used
    (file, why)."""
    logs: list = field(default_factory=list)
    evidence: list = field(default_factory=list)
    unusable: list = field(default_factory=list)

    def of_kind(self, kind: str) -> list:
        return [item for e in self.evidence if e.kind == kind for item in e.items]

    def for_game(self, game_id) -> list[Evidence]:
        return [e for e in self.evidence if game_id in e.game_ids]


def sort_inputs(files: list[str]) -> Inputs:
    """Each file as a log (the default: whatever is wrong with it is the log check's to say) or as evidence."""
    inputs = Inputs()
    for path in files:
        try:
            found = evidence_in(path)
        except EvidenceError as e:
            inputs.unusable.append((path, str(e)))
            continue
        if found is None:
            inputs.logs.append(path)
        else:
            inputs.evidence.append(found)
    return inputs


def evidence_in(path: str) -> Evidence | None:
    """The evidence in the file, or None when it is to be verified as a log."""
    try:
        data = read_bytes(path)
    except UnusableFileError:
        return None  # reported by the log check, with the reason
    start = data.lstrip()[:1]
    if start not in (b"[", b"{") or (start == b"{" and b'"events"' in data):
        return None
    try:
        doc = strictjson.loads(data)
    except strictjson.StrictJSONError:
        return None
    if type(doc) is list and any(type(item) is dict and "game_id" in item for item in doc):  # (not a session's)
        try:
            return Evidence(path, "moves", well_formed_receipts(doc))
        except MoveReceiptError as e:
            raise EvidenceError(f"move receipts (SPEC §5.6) that cannot be used: {e}") from None
    if type(doc) is not dict:
        return None
    if any(name in doc for name in PRIVATE_FIELDS):
        return Evidence(path, "key", [key_file(doc)])
    if doc.get("format") == FORMAT or {"game_id", "commitment", "client_seed"} <= doc.keys():
        try:
            return Evidence(path, "receipt", [check_receipt(doc)])
        except ReceiptError as e:
            raise EvidenceError(f"a player receipt (SPEC §5.5) that cannot be used: {e}") from None
    return None


def key_file(doc: dict) -> dict:
    """The public part of a player's key file: {game_id, seat, player_key}, once the private key is seen to be the
    public key's (a file that is not the player's own pair is no evidence of which key the player made)."""
    def unusable(why: str) -> EvidenceError:
        return EvidenceError(f"a player key file (SPEC §5.7) that cannot be used: {why}")

    for name in sorted(doc.keys() - set(KEY_FILE_FIELDS)):
        raise unusable(f"{name}: no such field in a key file of `fairdice play`")
    for name in KEY_FILE_FIELDS:
        if name not in doc:
            raise unusable(f"{name}: missing")
    if type(doc["game_id"]) is not str or not doc["game_id"]:
        raise unusable("game_id: expected a non-empty string")
    if type(doc["seat"]) is not int or doc["seat"] < 0:
        raise unusable("seat: expected a seat index")
    for name in ("player_key", "private_key"):
        if type(doc[name]) is not str or not HEX64.fullmatch(doc[name]):
            raise unusable(f"{name}: expected 64 lowercase hex digits")
    public = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(doc["private_key"])).public_key().public_bytes_raw()
    if public.hex() != doc["player_key"]:
        raise unusable("player_key: not the public key of the file's private key")
    return {"game_id": doc["game_id"], "seat": doc["seat"], "player_key": doc["player_key"]}
