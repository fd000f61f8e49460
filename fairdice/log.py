"""The transcript (SPEC.md §5): one JSON document per game, signed twice, and the move receipts.

At creation the header (rules, seats, bots, commitment, key) is signed: that
signature is the server's promise.  When the game is over the whole document,
revealed seed included, is signed again.  In between, every answer to a move
carries a signed receipt of the history so far (a hash chain over the header
and the events, SPEC §5.6), so a player holds the server to each move, not
only to the start and the end.  Canonical JSON (sorted keys, no spaces,
ASCII) is what gets signed and hashed.
"""

from __future__ import annotations

import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from . import derive
from .errors import SignatureError
from .chain import CHAIN_LABEL, RECEIPT_LABEL, Chain, canonical, chain, receipt_message  # noqa: F401 (re-exported)
from .game import Game, Setup

LOG_FORMAT = "fairdice-log"


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
    def from_private_bytes(cls, raw: bytes) -> Signer:
        return cls(Ed25519PrivateKey.from_private_bytes(raw))

    def sign(self, data: bytes) -> str:
        return self._key.sign(data).hex()

    def private_bytes(self) -> bytes:
        """The raw 32-byte private key, to hand the same key to worker processes."""
        return self._key.private_bytes_raw()

    def sign_receipt(self, game_id: str, events: int, chain: bytes) -> dict:
        """The move receipt of SPEC §5.6: the server's signed word that the game had these `events` events,
        hashing to `chain` (h_n) together with the header."""
        return {"game_id": game_id, "events": events, "chain": chain.hex(), "key_id": self.key_id,
                "signature": self.sign(receipt_message(game_id, events, chain))}


def verify_signature(public_key_hex: str, signature_hex: str, data: bytes, check: str) -> None:
    """Return only if `signature_hex` is the Ed25519 signature of `data` by `public_key_hex`; else raise
    SignatureError naming `check` (the verifier's id for what is checked).  A key or signature that is not hex
    of the right length fails the same way: it verifies nothing."""
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex)).verify(bytes.fromhex(signature_hex), data)
    except (InvalidSignature, ValueError, TypeError):
        raise SignatureError(check, f"{check}: the signature does not verify by the key given") from None


def seat_entry(seat) -> dict:
    from .bots import BOTS

    if seat.is_bot:
        return {"type": "bot", "name": seat.name, "bot": BOTS[seat.bot].identity()}
    return {"type": "human", "name": seat.name}


def header(setup: Setup, commitment: str, signer: Signer, seed_secret: bool = True) -> dict:
    """The header of SPEC §5.1; version 2 adds the signed `abandon_timeout`."""
    head = {
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
    if setup.version >= 2:
        head["abandon_timeout"] = setup.abandon_timeout
    return head


def open_log(game: Game, signer: Signer, seed_secret: bool = True) -> dict:
    """The document as it stands at creation: header and commitment signature, no events; its version is
    the game's (new games: the last of `game.LOG_VERSIONS`)."""
    head = header(game.setup, game.commitment, signer, seed_secret)
    return {"format": LOG_FORMAT, "version": game.setup.version, "header": head,
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


def setup_from_header(head: dict, version: int | None = None) -> Setup:
    """The game setup a header describes (bot identities are checked by the verifier, not here), under the
    log's `version`.  Without it, the header tells 1 from the later versions (only version 1 lacks
    `abandon_timeout`), and version 2 is assumed: versions 2 and 3 share a header."""
    seats = [{"type": s["type"], "name": s["name"], **({"bot": s["bot"]["id"]} if s["type"] == "bot" else {})}
             for s in head["seats"]]
    if version is None:
        version = 2 if "abandon_timeout" in head else 1
    return Setup.build(head["game_id"], head["rules"], seats, head["first"], head.get("upper_first", False),
                       version=version, abandon_timeout=head.get("abandon_timeout"))


# --- move receipts (SPEC §5.6) ---------------------------------------------------------------

def move_receipt(signer: Signer, head: dict, events: list[dict]) -> dict:
    """The signed receipt of a game whose history is `events` so far."""
    return signer.sign_receipt(head["game_id"], len(events), chain(head, events))


def check_move_receipt(receipt, public_key_hex: str, game_id: str, events: int | None = None,
                       expected_chain: bytes | None = None) -> None:
    """Raise ValueError unless `receipt` is a move receipt of `game_id` (after `events` events, when given)
    signed by `public_key_hex` (else SignatureError, check `receipt.chain`), and, given `expected_chain` (h_n
    computed by the player from the events it was shown), of exactly that history: what a player checks before
    keeping it (SPEC §5.7)."""
    fields = {"game_id", "events", "chain", "key_id", "signature"}
    if not isinstance(receipt, dict) or set(receipt) != fields:
        raise ValueError(f"a move receipt has exactly the fields {', '.join(sorted(fields))}")
    n, digest = receipt["events"], receipt["chain"]
    if receipt["game_id"] != game_id or isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < 2 ** 32:
        raise ValueError(f"the move receipt is not one of game {game_id!r}, or its event count is not a count")
    if events is not None and n != events:
        raise ValueError(f"the move receipt counts {n} events where the answer has {events}")
    try:
        derive.check_hex(digest, "chain", 32, "invalid_receipt")
    except ValueError:
        raise ValueError("the move receipt's chain is not 64 lowercase hex digits") from None
    if expected_chain is not None and digest != expected_chain.hex():
        raise ValueError(f"the move receipt signs a history of {n} events other than the one shown "
                         f"(chain {digest}, the events shown hash to {expected_chain.hex()})")
    signed = receipt_message(game_id, n, bytes.fromhex(digest))
    not_signed = "the move receipt is not signed by the game's key"
    if receipt["key_id"] != key_id(bytes.fromhex(public_key_hex)) or not isinstance(receipt["signature"], str):
        raise SignatureError("receipt.chain", not_signed)
    try:
        verify_signature(public_key_hex, receipt["signature"], signed, "receipt.chain")
    except SignatureError:
        raise SignatureError("receipt.chain", not_signed) from None
