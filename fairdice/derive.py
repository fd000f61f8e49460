"""The fairness scheme: server seed, commitment, and every derived number (SPEC.md §2).

Every random choice in a game is HMAC-SHA256 keyed by the server seed over a
message that names the scheme, the purpose, the game, the client seeds and
the position of the choice; bytes become numbers by rejection sampling, so
there is no modulo bias.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence

from .errors import FairdiceError

SCHEME = "fairdice/v1"
SEED_BYTES = 32
CLIENT_SEED_MAX = 256
DICE = 5


def commitment(server_seed: bytes) -> str:
    """SHA-256 of the raw server seed, as lowercase hex."""
    return hashlib.sha256(server_seed).hexdigest()


def check_client_seed(client_seed) -> str:
    """1..256 characters of printable text: the player's contribution to every roll."""
    if not isinstance(client_seed, str):
        raise FairdiceError("invalid_client_seed", "client seed must be a string")
    if not client_seed:
        raise FairdiceError("invalid_client_seed", "client seed must not be empty")
    if len(client_seed) > CLIENT_SEED_MAX:
        raise FairdiceError("invalid_client_seed",
                            f"client seed is {len(client_seed)} characters; at most {CLIENT_SEED_MAX}")
    if not client_seed.isprintable():  # also refuses lone surrogates, which have no UTF-8 form
        raise FairdiceError("invalid_client_seed", "client seed must be printable text (no control characters)")
    return client_seed


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def message(purpose: str, game_id: str, client_seeds: Sequence[str], *numbers: int) -> bytes:
    """The HMAC message: length-prefixed text fields, then 4-byte big-endian numbers."""
    parts = [_field(SCHEME.encode()), _field(purpose.encode()), _field(game_id.encode()),
             len(client_seeds).to_bytes(4, "big")]
    parts += [_field(seed.encode("utf-8")) for seed in client_seeds]
    parts += [n.to_bytes(4, "big") for n in numbers]
    return b"".join(parts)


def byte_stream(server_seed: bytes, msg: bytes) -> Iterator[int]:
    """HMAC-SHA256 blocks 0, 1, 2, ... of the message, byte by byte."""
    block = 0
    while True:
        yield from hmac.digest(server_seed, msg + block.to_bytes(4, "big"), "sha256")
        block += 1


def uniform_ints(server_seed: bytes, msg: bytes, bound: int, count: int) -> list[int]:
    """`count` integers uniform in 0..bound-1 (bound <= 256), rejecting bytes >= 256 - 256 % bound."""
    if not 1 <= bound <= 256:
        raise ValueError("bound must be 1..256")
    limit = 256 - 256 % bound
    out = []
    for byte in byte_stream(server_seed, msg):
        if len(out) == count:
            break
        if byte < limit:
            out.append(byte % bound)
    return out


def five_dice(server_seed: bytes, msg: bytes) -> list[int]:
    return [value + 1 for value in uniform_ints(server_seed, msg, 6, DICE)]


def roll_dice(server_seed: bytes, game_id: str, client_seeds: Sequence[str],
              seat: int, turn: int, roll: int, previous: Sequence[int] = (), hold: Sequence[int] = ()) -> list[int]:
    """The dice after a roll: all five positions derived, held positions keep their previous value."""
    fresh = five_dice(server_seed, message("roll", game_id, client_seeds, seat, turn, roll))
    held = set(hold)
    return [previous[i] if i in held else fresh[i] for i in range(DICE)]


def rolloff_dice(server_seed: bytes, game_id: str, client_seeds: Sequence[str], round_: int, seat: int) -> list[int]:
    return five_dice(server_seed, message("rolloff", game_id, client_seeds, round_, seat))


def tiebreak(server_seed: bytes, game_id: str, client_seeds: Sequence[str],
             seat: int, turn: int, roll: int, choices: int) -> int:
    """Index 0..choices-1 among equally good bot decisions after a roll."""
    return uniform_ints(server_seed, message("tiebreak", game_id, client_seeds, seat, turn, roll), choices, 1)[0]
