"""The fairness scheme: server seed, commitment, and every derived number (SPEC.md §2).

Every random choice in a game is HMAC-SHA256 keyed by the server seed over a
message that names the scheme, the purpose, the game, the client seeds and
the position of the choice; bytes become numbers by rejection sampling, so
there is no modulo bias.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache

from .errors import FairdiceError

SCHEME = "fairdice/v1"
SEED_BYTES = 32
SALT_BYTES = 32
CLIENT_SEED_MAX = 256
DICE = 5
_LOWER_HEX = re.compile(r"[0-9a-f]*")


def commitment(server_seed: bytes) -> str:
    """SHA-256 of the raw server seed, as lowercase hex."""
    return hashlib.sha256(server_seed).hexdigest()


# SPEC §2.2: the code points that client seeds and seat names may not contain, inclusive ranges.
# Written out once (the separators and format characters are those of Unicode 14.0) so that the
# rule does not change with the Unicode database of whichever Python or browser checks it.
REFUSED_CODE_POINTS = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0xD800, 0xDFFF), (0xE000, 0xF8FF), (0xFDD0, 0xFDEF),
    (0xF0000, 0x10FFFF),  # controls, surrogates, private use, noncharacters, planes 15 and 16
    # general categories Zs (but U+0020), Zl, Zp and Cf of Unicode 14.0
    (0x00A0, 0x00A0), (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x1680, 0x1680), (0x180E, 0x180E),
    (0x2000, 0x200F), (0x2028, 0x202F), (0x205F, 0x2064), (0x2066, 0x206F), (0x3000, 0x3000),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
) + tuple((plane + 0xFFFE, plane + 0xFFFF) for plane in range(0, 0x110000, 0x10000))  # U+xxFFFE, U+xxFFFF
_REFUSED = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in REFUSED_CODE_POINTS) + "]")


def check_text(text, what: str, max_length: int, code: str) -> str:
    """1..max_length code points, none of them refused by SPEC §2.2 (assigned or not, any other is fine)."""
    if not isinstance(text, str):
        raise FairdiceError(code, f"{what} must be a string")
    if not 1 <= len(text) <= max_length:
        raise FairdiceError(code, f"{what} is {len(text)} characters; it must be 1 to {max_length}")
    refused = _REFUSED.search(text)
    if refused:
        raise FairdiceError(code, f"{what} may not contain U+{ord(refused.group()):04X} (character "
                                  f"{refused.start() + 1}): no controls, separators other than the space, "
                                  "format characters, surrogates, private-use characters or noncharacters")
    return text


def check_client_seed(client_seed) -> str:
    """The player's contribution to every roll: 1..256 code points of text (SPEC §2.2)."""
    return check_text(client_seed, "client seed", CLIENT_SEED_MAX, "invalid_client_seed")


def check_hex(value, what: str, n_bytes: int, code: str) -> str:
    """Exactly `n_bytes` bytes written as lowercase hex (how every hash and salt appears in a log)."""
    if not isinstance(value, str) or len(value) != 2 * n_bytes or not _LOWER_HEX.fullmatch(value):
        raise FairdiceError(code, f"{what} must be {2 * n_bytes} lowercase hex digits")
    return value


def seed_commitment(salt_hex: str, client_seed: str, player_key: str | None = None) -> str:
    """A seat's promise of its client seed (SPEC §4.3): hex(SHA-256(salt || UTF-8(client_seed))), and in
    version 3 hex(SHA-256(salt || player_key || UTF-8(client_seed))) (no key bytes for a seat without one)."""
    key = bytes.fromhex(player_key) if player_key is not None else b""
    return hashlib.sha256(bytes.fromhex(salt_hex) + key + client_seed.encode("utf-8")).hexdigest()


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def message(purpose: str, game_id: str, client_seeds: Sequence[str], *numbers: int) -> bytes:
    """The HMAC message: length-prefixed text fields, then 4-byte big-endian numbers."""
    return _message_head(purpose, game_id, tuple(client_seeds)) + b"".join([n.to_bytes(4, "big") for n in numbers])


@lru_cache(maxsize=1024)
def _message_head(purpose: str, game_id: str, client_seeds: tuple[str, ...]) -> bytes:
    """The text fields of a message: the same for every roll of a game (kept for the games being played)."""
    parts = [_field(SCHEME.encode()), _field(purpose.encode()), _field(game_id.encode()),
             len(client_seeds).to_bytes(4, "big")]
    parts += [_field(seed.encode("utf-8")) for seed in client_seeds]
    return b"".join(parts)


def hmac_blocks(server_seed: bytes, msg: bytes) -> Iterator[bytes]:
    """SPEC §2.3's byte stream, a block at a time: HMAC-SHA256 of the message and block 0, 1, 2, ..."""
    block = 0
    while True:
        yield hmac.digest(server_seed, msg + block.to_bytes(4, "big"), "sha256")
        block += 1


def uniform_ints(server_seed: bytes, msg: bytes, bound: int, count: int) -> list[int]:
    """`count` integers uniform in 0..bound-1 (bound <= 256), rejecting bytes >= 256 - 256 % bound."""
    if not 1 <= bound <= 256:
        raise ValueError("bound must be 1..256")
    limit = 256 - 256 % bound
    out: list[int] = []
    if count <= 0:
        return out
    for block in hmac_blocks(server_seed, msg):  # (five dice need one block, nearly always)
        for byte in block:
            if byte < limit:
                out.append(byte % bound)
                if len(out) == count:
                    return out
    raise AssertionError("unreachable: the stream never ends")


def five_dice(server_seed: bytes, msg: bytes) -> list[int]:
    return [value + 1 for value in uniform_ints(server_seed, msg, 6, DICE)]


def roll_dice(server_seed: bytes, game_id: str, client_seeds: Sequence[str],
              seat: int, turn: int, roll: int, previous: Sequence[int] = (), hold: Sequence[int] = ()) -> list[int]:
    """The dice after a roll: all five positions derived, held positions keep their previous value."""
    fresh = five_dice(server_seed, message("roll", game_id, client_seeds, seat, turn, roll))
    for i in hold:
        fresh[i] = previous[i]
    return fresh


def rolloff_dice(server_seed: bytes, game_id: str, client_seeds: Sequence[str], round_: int, seat: int) -> list[int]:
    return five_dice(server_seed, message("rolloff", game_id, client_seeds, round_, seat))


def tiebreak(server_seed: bytes, game_id: str, client_seeds: Sequence[str],
             seat: int, turn: int, roll: int, choices: int) -> int:
    """Index 0..choices-1 among equally good bot decisions after a roll."""
    return uniform_ints(server_seed, message("tiebreak", game_id, client_seeds, seat, turn, roll), choices, 1)[0]
