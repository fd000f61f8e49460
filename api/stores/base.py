"""What every store promises (`Store`), the records it holds, and the errors it raises.

A store holds what it is given: server seeds arrive sealed (encrypted by the
caller) and leave sealed; tokens arrive as hashes.  Events are append-only,
and a command's events are appended only if the game still has the event
count the command was computed from (compare-and-append), in the same
transaction as the command's idempotency record.  tests/test_store_contract.py
holds every store to this.
"""

from __future__ import annotations

import abc
import json
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SCHEMA_VERSION = 1
POSTGRES_URL_SCHEMES = ("postgresql://", "postgres://")  # what libpq takes as a URL


class StoreError(RuntimeError):
    pass


class GameNotFound(StoreError):
    pass


class DuplicateGame(StoreError):
    pass


class Busy(StoreError):
    """The database stayed locked (or out of reach) for longer than the busy timeout."""


class Conflict(StoreError):
    """The game has new events since the command was computed: compute it again."""


@dataclass
class GameRecord:
    game_id: str
    opened: dict
    key_id: str
    tokens: list[dict]
    seed_sealed: bytes | None
    seed_revealed: str | None
    status: str
    event_count: int = 0
    created_at: str = ""
    updated_at: str = ""  # when the game was created or last got events: the server's timeout counts from it


@dataclass
class Snapshot:
    record: GameRecord
    events: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Remembered:
    fingerprint: str
    status: int
    body: str


@dataclass(frozen=True)
class Remember:
    """An answer to keep for retries with the same Idempotency-Key."""
    seat: int | None
    key: str
    fingerprint: str
    status: int
    body: str


class Store(abc.ABC):
    @abc.abstractmethod
    def create_game(self, record: GameRecord) -> None:
        """Store a new game (no events); DuplicateGame if the id is taken."""

    @abc.abstractmethod
    def snapshot(self, game_id: str) -> Snapshot | None:
        """The game and all its events, read consistently; None if there is no such game."""

    @abc.abstractmethod
    def final_log(self, game_id: str) -> str | None: ...

    @abc.abstractmethod
    def event_count(self, game_id: str) -> int | None:
        """How many events the game has (None: no such game)."""

    @abc.abstractmethod
    def recall(self, game_id: str, seat: int | None, key: str) -> Remembered | None:
        """The answer kept for this game, seat and Idempotency-Key, if any."""

    @abc.abstractmethod
    def append(self, game_id: str, expected_count: int, events: list[dict], status: str,
               reveal: tuple[str, str] | None = None, remember: Remember | None = None) -> Remembered | None:
        """One transaction: if `remember` names a key already answered, return that answer and write
        nothing; if the game no longer has `expected_count` events, raise Conflict; otherwise append the
        events, set the status, store the revealed seed and signed log (`reveal`: (seed hex, log JSON)) and
        the answer to remember, and return None."""

    def close(self) -> None:
        pass


def is_postgres_url(db) -> bool:
    """Whether the `db` setting names a PostgreSQL database (else it is a SQLite file)."""
    return isinstance(db, str) and db.startswith(POSTGRES_URL_SCHEMES)


def redacted(url: str) -> str:
    """A database URL without its password (in the user part or a `password=` parameter), fit for logs."""
    parts = urlsplit(url)
    if parts.password is not None:
        credentials, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{credentials.partition(':')[0]}:***@{host}")
    query = [(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit(parts._replace(query=urlencode(query, safe="*")))


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def dumps(doc) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def seat_key(seat: int | None) -> int:
    """The seat as stored: -1 for the operator of a game without human seats."""
    return -1 if seat is None else seat


def newer_schema(found: int) -> StoreError:
    return StoreError(f"the database has schema version {found}, newer than this fairdice's "
                      f"{SCHEMA_VERSION}: upgrade fairdice")
