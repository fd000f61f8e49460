"""The player's receipt (SPEC §5.5): what a player keeps when it sends its client seed, so that the final log
can be checked against what the player itself saw, not only against what the server says.

A receipt is usable evidence only when it is well formed and consistent with itself: its signed header (when it
carries one) names the same game and commitment, and its `commitment_signature` (when it carries one with a
key) is a valid signature of that header. Anything else is refused with ReceiptError, before any log is read.
A receipt of version 2 also records the log version the player saw and the player key it sent (SPEC §5.5, §5.7)."""

from __future__ import annotations

import re

from . import keys, strictjson
from .errors import VerifierError
from .reading import UnusableFileError, read_bytes
from .spec import canonical

FORMAT, VERSIONS = "fairdice-receipt", (1, 2)
HEX = {n: re.compile(rf"[0-9a-f]{{{n}}}") for n in (64, 128)}
REQUIRED = ("game_id", "seat", "commitment", "client_seed")
OPTIONAL = ("format", "version", "header", "commitment_signature", "public_key")
VERSION_2 = ("log_version", "player_key")  # exactly in a receipt of version 2
LOG_VERSIONS = (1, 2, 3)  # (SPEC §5)


class ReceiptError(VerifierError, ValueError):
    """A receipt that cannot serve as evidence (the message names the field)."""


def _is_hex(value, n: int) -> bool:
    return type(value) is str and HEX[n].fullmatch(value) is not None


def check_receipt(rc) -> dict:
    """`rc` itself when it is a usable receipt; raises ReceiptError naming the first problem."""
    if type(rc) is not dict:
        raise ReceiptError("a receipt is a JSON object")
    for name in REQUIRED:
        if name not in rc:
            raise ReceiptError(f"{name}: missing")
    version = rc.get("version", 1)
    if rc.get("format", FORMAT) != FORMAT or type(version) is not int or version not in VERSIONS:
        raise ReceiptError(f'format/version: expected "{FORMAT}" version 1 or 2')
    allowed = set(REQUIRED) | set(OPTIONAL) | (set(VERSION_2) if version == 2 else set())
    for name in sorted(rc.keys() - allowed):
        raise ReceiptError(f"{name}: no such field in a receipt" + (" of version 1" if name in VERSION_2 else ""))
    if version == 2:
        _check_version_2(rc)
    if type(rc["game_id"]) is not str or not rc["game_id"]:
        raise ReceiptError("game_id: expected a non-empty string")
    if rc["seat"] is not None and (type(rc["seat"]) is not int or rc["seat"] < 0):
        raise ReceiptError("seat: expected a seat index, or null for the operator of a game without humans")
    if not _is_hex(rc["commitment"], 64):
        raise ReceiptError("commitment: expected 64 lowercase hex digits")
    if type(rc["client_seed"]) is not str:
        raise ReceiptError("client_seed: expected a string")
    for name, n in (("public_key", 64), ("commitment_signature", 128)):
        if rc.get(name) is not None and not _is_hex(rc[name], n):
            raise ReceiptError(f"{name}: expected {n} lowercase hex digits")
    _check_header(rc)
    return rc


def _check_version_2(rc: dict) -> None:
    """The log version the player saw and the key it sent with its client seed (none before version 3)."""
    for name in VERSION_2:
        if name not in rc:
            raise ReceiptError(f"{name}: missing (a receipt of version 2 has it)")
    if type(rc["log_version"]) is not int or rc["log_version"] not in LOG_VERSIONS:
        raise ReceiptError("log_version: expected 1, 2 or 3")
    if rc["player_key"] is not None and not _is_hex(rc["player_key"], 64):
        raise ReceiptError("player_key: expected 64 lowercase hex digits, or null")
    if rc["player_key"] is not None and rc["log_version"] < 3:
        raise ReceiptError(f"player_key: a game of log version {rc['log_version']} has no players' keys (null)")


def _check_header(rc: dict) -> None:
    header = rc.get("header")
    if header is None:
        return
    if type(header) is not dict:
        raise ReceiptError("header: expected the signed header, an object")
    for name in ("game_id", "commitment", "public_key"):
        if name in header and rc.get(name) is not None and header[name] != rc[name]:
            raise ReceiptError(f"header.{name}: differs from the receipt's own {name}")
    signature, key = rc.get("commitment_signature"), rc.get("public_key") or header.get("public_key")
    if signature is not None:
        if not _is_hex(key, 64):
            raise ReceiptError("commitment_signature: no public key to check it with")
        if not keys.signature_valid(bytes.fromhex(key), signature, canonical(header)):
            raise ReceiptError("commitment_signature: not a valid signature of the receipt's header by its key")


def load_receipt(path: str) -> dict:
    """The receipt in a file (strict JSON, like a log); ReceiptError says why it cannot be used."""
    try:
        doc = strictjson.loads(read_bytes(path))
    except (UnusableFileError, strictjson.StrictJSONError) as e:
        raise ReceiptError(str(e)) from None
    return check_receipt(doc)


def make_receipt(header: dict, commitment_signature: str, seat, client_seed: str, log_version: int | None = None,
                 player_key: str | None = None) -> dict:
    """The receipt a player keeps on sending `client_seed` for `seat`, after checking the signed `header`: of
    version 2 when the game's `log_version` is given (with the `player_key` sent, or None), else of version 1."""
    receipt = {"format": FORMAT, "version": 1, "game_id": header["game_id"], "seat": seat,
               "commitment": header["commitment"], "client_seed": client_seed, "header": header,
               "commitment_signature": commitment_signature, "public_key": header["public_key"]}
    if log_version is not None:
        receipt.update(version=2, log_version=log_version, player_key=player_key)
    return check_receipt(receipt)
