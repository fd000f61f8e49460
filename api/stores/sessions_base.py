"""What every store keeps of sessions (SPEC §10), beside its games: the records and the promises.

Four tables, all append-only: `sessions` (one row, written once: the signed header, the token's hash, who made
it), `session_seeds` (each pair's server seed, sealed, added one pair ahead), `session_events` (each event with
the session's tail after it, `fairdice.sessions.Tail`, so that a command resumes from the last row instead of
replaying the history) and `session_idempotency`.  An append adds events only at the index the command was
computed from (compare-and-append: the primary key (session_id, idx) refuses a second event at an index), in one
transaction with the new pair's sealed seed and the idempotency record.  No row is ever rewritten: a roll costs
one event row, whatever the session's length.  tests/contract/test_store_contract.py holds both stores to this.

The two quotas of api/sessions.py: the sessions a client may open a day (FAIRDICE_MAX_SESSIONS) count the
`sessions` rows by their `client` and `created_at` (the index `sessions_by_client`); the rolls a client's sessions
may make a UTC day (FAIRDICE_MAX_SESSION_ROLLS) are counted in `session_rolls_by_day`, one row per client and day,
added to in the append's own transaction (so the count is exact on every server, and a refused roll stores
nothing).  A quota an operator sets for one client (`fairdice admin quota --sessions` or `--session-rolls`) is a
row of `client_session_quotas`, beside the games' `client_quotas` (a table of its own, one row per client and
quota, so that a client may have one quota set and not the others, and a server that predates it ignores it).
"""

from __future__ import annotations

import time

from dataclasses import dataclass
from typing import NamedTuple

from .base import NotFoundError, StoreError, check_quota

SESSION_QUOTAS = ("sessions", "rolls")  # opened in any 24 hours; rolled in a UTC day
CLIENT_SESSION_QUOTAS_TABLE = "client_session_quotas"
# every table the sessions keep, as a store sizes them (stats)
SESSION_TABLES = ("sessions", "session_seeds", "session_events", "session_idempotency", "session_rolls_by_day",
                  CLIENT_SESSION_QUOTAS_TABLE)
SESSION_QUOTA_TABLES = [
    "CREATE INDEX IF NOT EXISTS sessions_by_client ON sessions (client, created_at)",
    f"CREATE TABLE IF NOT EXISTS {CLIENT_SESSION_QUOTAS_TABLE} (client TEXT NOT NULL, "
    "quota TEXT NOT NULL CHECK (quota IN ('sessions', 'rolls')), most INTEGER NOT NULL CHECK (most >= 0), "
    "PRIMARY KEY (client, quota))",
    "CREATE TABLE IF NOT EXISTS session_rolls_by_day (client TEXT NOT NULL, day TEXT NOT NULL, "
    "rolls INTEGER NOT NULL, PRIMARY KEY (client, day))",
]


class SessionNotFoundError(NotFoundError):
    what = "session"


class RollsExhaustedError(StoreError):
    """The session's client has made the rolls it may make this day (`RollQuota`): nothing was stored."""

    def __init__(self, rolled: int, most: int):
        super().__init__(f"{rolled} rolls this day, the most is {most}")
        self.rolled, self.most = rolled, most

    def __reduce__(self):
        return type(self), (self.rolled, self.most)


class RollQuota(NamedTuple):
    """What an append of rolls counts against: `client`'s rolls on `day` (a UTC date, 2026-12-02), at most
    `most` unless an operator set the client's own."""
    client: str
    day: str
    most: int



def utc_day(now: float | None = None) -> str:
    """The UTC day a roll counts against (FAIRDICE_MAX_SESSION_ROLLS), as `session_rolls_by_day` names it."""
    return time.strftime("%Y-%m-%d", time.gmtime(now))

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


class ClientSessions(NamedTuple):
    """A client's standing against the quota of sessions opened a day (`client_sessions`)."""
    opened: int  # sessions it opened since the time asked about
    oldest: str | None  # when the first of those was opened (a `now()` stamp)
    max_sessions: int | None  # the quota an operator set for this client (0: none); None: the server's


def check_session_quota(quota: str, most: int | None) -> int | None:
    """A quota of sessions or rolls: a whole number (0: none), or None (the server's)."""
    if quota not in SESSION_QUOTAS:
        raise ValueError(f"a session quota is one of {SESSION_QUOTAS}, not {quota!r}")
    try:
        return check_quota(most)
    except ValueError:
        raise ValueError(f"a quota is a whole number of {quota} (0: none), not {most!r}") from None


def rolls_in(rows: list[tuple[dict, dict]]) -> int:
    """How many of the (event, tail) rows of an append are rolls."""
    return sum(event["type"] == "roll" for event, _ in rows)
