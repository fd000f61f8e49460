"""What every store keeps of sessions (SPEC §10), beside its games: the records and the promises.

Four tables, all append-only: `sessions` (one row, written once: the signed header, the token's hash, who made
it), `session_seeds` (each pair's server seed, sealed, added one pair ahead), `session_events` (each event with
the session's tail after it, `fairdice.sessions.Tail`, so that a command resumes from the last row instead of
replaying the history) and `session_idempotency`.  An append adds events only at the index the command was
computed from (compare-and-append: the primary key (session_id, idx) refuses a second event at an index), in one
transaction with the new pair's sealed seed and the idempotency record.  No row is ever rewritten: a roll costs
one event row, whatever the session's length.  tests/test_store_contract.py holds both stores to this.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import StoreError


class SessionNotFound(StoreError):
    pass


@dataclass
class SessionRecord:
    session_id: str
    opened: dict  # {"header": ..., "commitment_signature": ...}
    key_id: str
    token_sha256: str
    client: str = ""
    created_at: str = ""


@dataclass
class SessionState:
    """A session as its next command needs it: the record, the tail after its last event (None: no event yet),
    the sealed seeds of the pairs from the tail's current pair on, and how many events are revealed."""
    record: SessionRecord
    tail: dict | None
    seeds: dict[int, bytes]

    @property
    def event_count(self) -> int:
        return 0 if self.tail is None else self.tail["events"]

    @property
    def revealed(self) -> int:
        """The events through the last rotation (those a log shows)."""
        return 0 if self.tail is None else self.tail["revealed"]
