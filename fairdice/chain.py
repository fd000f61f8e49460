"""The hash chain of a game's history (SPEC §5.6) and the canonical JSON it hashes (SPEC §1).

`h_0` binds the game id and the signed header; each event extends it.  The server signs `h_n` in every move
receipt, and in a version 3 game each player signs it with every command (SPEC §5.7): so both sides commit to
the exact history a move was made after.  The game keeps its chain as it applies events.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

CHAIN_LABEL = "fairdice-chain/v2"
RECEIPT_LABEL = "fairdice-receipt/v2"

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def canonical(doc) -> bytes:
    """SPEC §1's canonical form.  One encoder serves every call (json.dumps with these options would build a
    new one each time); an encoder keeps no state between calls."""
    return _CANONICAL.encode(doc).encode("ascii")


def field(text: str) -> bytes:
    """SPEC §1's field(s): u32(length) || UTF-8 bytes."""
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


@dataclass(frozen=True)
class Chain:
    """h_n of SPEC §5.6 after `count` events: h_0 binds the game id and the header, each event extends it."""
    digest: bytes
    count: int = 0

    @classmethod
    def start(cls, head: dict) -> Chain:
        return cls.begin(CHAIN_LABEL, head["game_id"], head)

    @classmethod
    def begin(cls, label: str, ident: str, head: dict) -> Chain:
        """h_0 = SHA-256(field(label) || field(ident) || canonical(head)): a game's (SPEC §5.6) or, under its own
        label, a session's (SPEC §10.6)."""
        return cls(hashlib.sha256(field(label) + field(ident) + canonical(head)).digest())

    def extend(self, events: Iterable[dict]) -> Chain:
        digest, count = self.digest, self.count
        for event in events:
            digest = hashlib.sha256(digest + canonical(event)).digest()
            count += 1
        return Chain(digest, count)


def chain(head: dict, events: Iterable[dict]) -> bytes:
    """h_n over the header and the events (all of them: n = len(events))."""
    return Chain.start(head).extend(events).digest


def receipt_message(game_id: str, events: int, digest: bytes, label: str = RECEIPT_LABEL) -> bytes:
    """What a move receipt signs: field("fairdice-receipt/v2") || field(game_id) || u32(n) || h_n (a session's
    receipt: its own label and the session id, SPEC §10.6)."""
    return field(label) + field(game_id) + events.to_bytes(4, "big") + digest
