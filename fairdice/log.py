"""The transcript (SPEC.md §5): one JSON document per game, signed twice.

At creation the header (rules, seats, bots, commitment, key) is signed: that
signature is the server's promise.  When the game is over the whole document,
revealed seed included, is signed again.  Canonical JSON (sorted keys, no
spaces, ASCII) is what gets signed and hashed.
"""

from __future__ import annotations

import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from . import derive
from .game import Game, Setup

LOG_FORMAT = "fairdice-log"
LOG_VERSION = 1


def canonical(doc) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def key_id(public_key: bytes) -> str:
    """First 16 hex digits of SHA-256 of the raw 32-byte Ed25519 public key."""
    return hashlib.sha256(public_key).hexdigest()[:16]


class Signer:
    """An Ed25519 signing key; the core only uses it, the edges create and store it."""

    def __init__(self, private_key: Ed25519PrivateKey):
        self._key = private_key
        self.public_key = private_key.public_key().public_bytes_raw()
        self.key_id = key_id(self.public_key)

    @classmethod
    def from_private_bytes(cls, raw: bytes) -> "Signer":
        return cls(Ed25519PrivateKey.from_private_bytes(raw))

    def sign(self, data: bytes) -> str:
        return self._key.sign(data).hex()

    def private_bytes(self) -> bytes:
        """The raw 32-byte private key, to hand the same key to worker processes."""
        return self._key.private_bytes_raw()


def verify_signature(public_key_hex: str, signature_hex: str, data: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(bytes.fromhex(signature_hex), data)
        return True
    except (InvalidSignature, ValueError, TypeError):
        return False


def seat_entry(seat) -> dict:
    from .bots import BOTS

    if seat.is_bot:
        return {"type": "bot", "name": seat.name, "bot": BOTS[seat.bot].identity()}
    return {"type": "human", "name": seat.name}


def header(setup: Setup, commitment: str, signer: Signer, seed_secret: bool = True) -> dict:
    return {
        "scheme": derive.SCHEME,
        "game_id": setup.game_id,
        "rules": setup.rules.id,
        "upper_first": setup.upper_first,
        "seats": [seat_entry(s) for s in setup.seats],
        "first": setup.first,
        "commitment": commitment,
        "seed_secret": seed_secret,
        "key_id": signer.key_id,
        "public_key": signer.public_key.hex(),
    }


def open_log(game: Game, signer: Signer, seed_secret: bool = True) -> dict:
    """The document as it stands at creation: header and commitment signature, no events."""
    head = header(game.setup, game.commitment, signer, seed_secret)
    return {"format": LOG_FORMAT, "version": LOG_VERSION, "header": head,
            "commitment_signature": signer.sign(canonical(head)), "events": [], "final": None}


def final_block(game: Game) -> dict:
    winners = game.winners()
    return {
        "status": game.status,
        "server_seed": game.revealed_seed().hex(),
        "totals": [game.totals(i).as_dict() for i in range(len(game.setup.seats))],
        "winner": winners[0] if len(winners) == 1 else None,
        "draw": len(winners) > 1,
    }


def build_log(opened: dict, game: Game, signer: Signer | None = None) -> dict:
    """The transcript so far; once the game is over, with the final block and (given the key) signed."""
    doc = {**opened, "events": list(game.events), "final": None}
    doc.pop("signature", None)
    if game.over:
        doc["final"] = final_block(game)
        if signer is not None:
            doc["signature"] = signer.sign(canonical(doc))
    return doc


def setup_from_header(head: dict) -> Setup:
    """The game setup a header describes (bot identities are checked by the verifier, not here)."""
    seats = [{"type": s["type"], "name": s["name"], **({"bot": s["bot"]["id"]} if s["type"] == "bot" else {})}
             for s in head["seats"]]
    return Setup.build(head["game_id"], head["rules"], seats, head["first"], head.get("upper_first", False))
