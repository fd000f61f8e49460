"""Players' keys and signed commands (SPEC §5.7, log version 3).

A human seat's device makes an Ed25519 key pair and signs every command of the seat over the history it was
shown (the chain head h_n, SPEC §5.6), so the operator can write no move, no abandon and no second history in a
player's name.  The core checks each signature before it accepts a command (`Game`); clients sign with
`PlayerKey`.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from . import derive
from .chain import canonical, field
from .errors import FairdiceError

MOVE_LABEL = "fairdice-move/v3"
KEY_BYTES = 32
SIGNATURE_BYTES = 64

# SPEC §5.7: the fields of an event that are the player's command (the rest the server computes).
COMMAND_FIELDS = {
    "client_seed_commit": ("type", "seat", "commitment", "player_key"),
    "client_seed": ("type", "seat", "client_seed", "player_key", "salt"),
    "roll": ("type", "seat", "turn", "roll", "hold"),
    "score": ("type", "seat", "turn", "category"),
    "abandon": ("type", "seat", "reason"),
}


def command_of(event: dict) -> dict:
    """The command a player signs for this event: the event restricted to the fields the player chose."""
    return {name: event[name] for name in COMMAND_FIELDS[event["type"]] if name in event}


def move_message(game_id: str, n: int, chain_digest: bytes, command: dict) -> bytes:
    """field("fairdice-move/v3") || field(game_id) || u32(n) || h_n || canonical(command)."""
    return field(MOVE_LABEL) + field(game_id) + n.to_bytes(4, "big") + chain_digest + canonical(command)


def check_player_key(player_key) -> str | None:
    """A seat's public key: 64 lowercase hex digits (32 raw bytes) that make an Ed25519 key, or None."""
    if player_key is None:
        return None
    derive.check_hex(player_key, "player_key", KEY_BYTES, "invalid_player_key")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(player_key))
    except ValueError:
        raise FairdiceError("invalid_player_key", "player_key is not an Ed25519 public key") from None
    return player_key


def check_signature(player_key: str, signature: str, message: bytes, seat: int) -> None:
    """Raise FairdiceError `invalid_player_signature` unless `signature` is `player_key`'s over `message`."""
    derive.check_hex(signature, "player_signature", SIGNATURE_BYTES, "invalid_player_signature")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(player_key)).verify(bytes.fromhex(signature), message)
    except InvalidSignature:
        raise FairdiceError("invalid_player_signature", f"player_signature is not seat {seat}'s signature of "
                                                        "this command over the game's history as stored; "
                                                        "sign the command over the history you were shown") from None


class PlayerKey:
    """A player's Ed25519 key pair, made and kept on the player's device."""

    def __init__(self, private_key: Ed25519PrivateKey):
        self._key = private_key
        self.public_hex = private_key.public_key().public_bytes_raw().hex()

    @classmethod
    def generate(cls) -> PlayerKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_private_hex(cls, raw_hex: str) -> PlayerKey:
        return cls(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(raw_hex)))

    def private_hex(self) -> str:
        """The raw private key, for the player's own storage only."""
        return self._key.private_bytes_raw().hex()

    def sign(self, game_id: str, n: int, chain_digest: bytes, command: dict) -> str:
        """The player_signature of `command` made after the `n` events whose chain head is `chain_digest`."""
        return self._key.sign(move_message(game_id, n, chain_digest, command)).hex()
