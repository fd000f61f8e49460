"""What every store promises (`Store`), the records it holds, and the errors it raises.

A store holds what it is given: server seeds arrive sealed (encrypted by the
caller) and leave sealed; tokens arrive as hashes.  Events are append-only,
and a command's events are appended only if the game still has the event
count the command was computed from (compare-and-append), in the same
transaction as the command's idempotency record.  tests/contract/test_store_contract.py
holds every store to this.
"""

from __future__ import annotations

import abc
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..clock import SecondStamp
from ..errors import RefusalError, ServiceError

SCHEMA_VERSION = 2  # 2: games.client, rate_limits, indexes for timeouts, quotas and pruning
FINAL_STATUSES = ("finished", "abandoned")  # a game in one of these takes no more moves
POSTGRES_URL_SCHEMES = ("postgresql://", "postgres://")  # what libpq takes as a URL
SYNCHRONOUS_LEVELS = ("OFF", "NORMAL", "FULL", "EXTRA")  # FAIRDICE_SYNCHRONOUS: what a commit waits for
GAMES_MARKER = "games-stored"  # the file in the key directory saying that this service has stored games

log = logging.getLogger("fairdice.store")


class StoreError(ServiceError, RuntimeError):
    """The base of a store's errors: what the database could not do (the caller decides what it means)."""


class NotFoundError(StoreError, RefusalError):
    """Nothing of this kind (`what`) has this id: one error for the store (a call on one it does not hold) and the
    service (a request for one), answered 404 `<what>_not_found`."""
    kind = "not_found"
    what = "record"

    def __init__(self, ident: str):
        RefusalError.__init__(self, f"{self.what}_not_found", f"no {self.what} with id {ident!r}")
        self.ident = ident

    def __reduce__(self):
        return type(self), (self.ident,)


class GameNotFoundError(NotFoundError):
    what = "game"


class DuplicateGameError(StoreError):
    """A new game's id is taken already (the service draws another)."""


class BusyError(StoreError):
    """The database stayed locked (or out of reach) for longer than the busy timeout."""


class ConflictError(StoreError):
    """The game has new events since the command was computed: compute it again."""


UNAVAILABLE_REASONS = ("disk_full", "read_only", "io_error", "database_corrupt", "database_missing",
                       "database_replaced", "unreachable")


class UnavailableError(StoreError):
    """The store cannot serve now: disk full, read-only or failing (I/O errors), database corrupt, its file
    vanished or replaced, unreachable.

    A fault of the machine or the network, not of the request: the same call may succeed once the fault is
    gone, and the store recovers by itself (no restart).  `reason` is one of UNAVAILABLE_REASONS."""

    def __init__(self, reason: str, detail: str):
        if reason not in UNAVAILABLE_REASONS:
            raise ValueError(f"unknown reason {reason!r}")
        super().__init__(f"{reason.replace('_', ' ')}: {detail}")
        self.reason = reason
        self.detail = detail

    def __reduce__(self):
        return type(self), (self.reason, self.detail)


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
    client: str = ""      # who created it (the rate-limit client key): the quota of unfinished games counts it


class ClientGames(NamedTuple):
    """A client's standing against the quota of unfinished games (`Store.client_games`)."""
    unfinished: int  # games it created that are not finished or abandoned
    idle_since: str | None  # when the one of them without a move for longest last moved (a `now()` stamp)
    max_unfinished: int | None  # the quota an operator set for this client (0: none); None: the server's


class Progress(NamedTuple):
    """How far a game has come: what a watcher needs to know whether there is anything new to show."""
    event_count: int
    status: str


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


class AppendFeed(abc.ABC):
    """The appends committed to a store's database by every process and server on it, as one thread of one
    process watches them (api/watch.py): the one way a watcher learns that a game moved on elsewhere."""

    @abc.abstractmethod
    def wait(self, timeout: float) -> dict[str, int] | None:
        """Wait at most `timeout` seconds for appends committed since the previous call (by anyone, this
        process included): {game id: event count} of the games that got events ({} if none came), or None when
        events may have come and the feed cannot say to which games (its first call, after a reconnection, or
        a store that only knows that something changed): the caller then reads the counts it cares about.
        Raises StoreError (UnavailableError, BusyError) when the database cannot be watched now; the next call tries
        again."""

    def close(self) -> None:  # noqa: B027 (a hook: a store with nothing to release need not override it)
        pass


class Store(abc.ABC):
    """What the service may ask of a store, and all it may ask: SQLite and PostgreSQL each implement it, and one
    contract suite (tests/test_store_contract.py) holds both to it, so the service never knows which it has.
    The promises are the safety ones: events only appended, and only at the count the command was computed from
    (compare-and-append), with the idempotency record in the same transaction."""
    @abc.abstractmethod
    def create_game(self, record: GameRecord) -> None:
        """Store a new game (no events); DuplicateGameError if the id is taken."""

    @abc.abstractmethod
    def snapshot(self, game_id: str) -> Snapshot | None:
        """The game and all its events, read consistently; None if there is no such game."""

    @abc.abstractmethod
    def final_log(self, game_id: str) -> str | None: ...

    @abc.abstractmethod
    def event_count(self, game_id: str) -> int | None:
        """How many events the game has (None: no such game)."""

    @abc.abstractmethod
    def progress(self, game_ids: list[str]) -> dict[str, Progress]:
        """The event count and status of each of these games that exists, in one read."""

    @abc.abstractmethod
    def append_feed(self) -> AppendFeed:
        """A feed of the appends to this database, for the thread that calls it (one per process)."""

    @abc.abstractmethod
    def recall(self, game_id: str, seat: int | None, key: str) -> Remembered | None:
        """The answer kept for this game, seat and Idempotency-Key, if any."""

    @abc.abstractmethod
    def append(self, game_id: str, expected_count: int, events: list[dict], status: str,
               reveal: tuple[str, str] | None = None, remember: Remember | None = None) -> Remembered | None:
        """One transaction: if `remember` names a key already answered, return that answer and write
        nothing; if the game no longer has `expected_count` events, raise ConflictError; otherwise append the
        events, set the status, store the revealed seed and signed log (`reveal`: (seed hex, log JSON)) and
        the answer to remember, and return None."""

    # --- abuse and lifecycle (issue 14) ---------------------------------------------

    @abc.abstractmethod
    def rate_hit(self, key: str, interval: float, burst: int, now: float | None = None) -> float:
        """Count one event on `key` (GCRA, atomic across processes and servers): 0.0 if it is allowed (and
        recorded), else the seconds until one would be (and nothing recorded).  `burst` events may come at
        once; `interval`: seconds per event at the sustained rate.  `now`: seconds since the epoch (default:
        the store's clock)."""

    @abc.abstractmethod
    def rate_hits(self, hits: list[tuple[str, float, int]], now: float | None = None) -> float:
        """Count one event on each `(key, interval, burst)` of `hits` as `rate_hit` does, all in one
        transaction and all or nothing: 0.0 if every one is allowed (and all are recorded), else the longest
        wait of the refused ones (and nothing recorded).  The wait is a `RateWait`, naming the key it is for."""

    @abc.abstractmethod
    def unfinished_count(self, client: str) -> int:
        """How many games `client` created that are not finished or abandoned."""

    @abc.abstractmethod
    def client_games(self, client: str) -> ClientGames:
        """`client`'s unfinished games (how many, and since when the idlest has had no move) and the quota an
        operator set for it, in one read."""

    @abc.abstractmethod
    def set_client_quota(self, client: str, max_unfinished: int | None) -> None:
        """Set the most unfinished games `client` may have (0: no quota), for every server on this store; None
        goes back to the server's setting (FAIRDICE_MAX_UNFINISHED)."""

    @abc.abstractmethod
    def client_quotas(self) -> dict[str, int]:
        """Every quota an operator set, by client."""

    @abc.abstractmethod
    def stale_games(self, idle_since: str, limit: int = 100) -> list[str]:
        """Ids of unfinished games last updated before `idle_since` (a `now()` stamp), oldest first."""

    @abc.abstractmethod
    def key_ids(self) -> set[str]:
        """Every signing key id a stored game names."""

    @abc.abstractmethod
    def prune(self, idempotency_before: str, now: float | None = None) -> dict:
        """Delete idempotency records (of games and of dice sessions) created before the stamp and rate-limit
        rows that no longer limit anything (at `now`, default the store's clock); keep the database's journal
        bounded; and the dice sessions' roll counts of the days before today.  Returns {"idempotency_records": n,
        "session_idempotency_records": n, "session_roll_counts": n, "rate_limits": n, "wal_bytes": n | None} (what was deleted, and the size of the write-ahead log file afterwards)."""

    @abc.abstractmethod
    def stats(self) -> dict:
        """{"backend": "sqlite" | "postgresql", "games", "unfinished", "events", "idempotency_records",
        "rate_limits", "client_quotas", "bytes" (the database's size), "table_bytes" ({table: bytes, its
        indexes included}, or None where the database cannot say), "wal_bytes" (None where there is no such
        file)}."""

    @abc.abstractmethod
    def health(self) -> None:
        """A cheap probe: raises UnavailableError(reason, detail) when writes would fail now (BusyError if locked)."""

    def close(self) -> None:  # noqa: B027 (a hook: a store with nothing to release need not override it)
        pass


# The table of the quotas set by `fairdice admin quota`.  Added after schema version 2 without a version of its
# own: a server that does not know it ignores it (and its clients get the server's quota), so every store makes
# it where it is missing, whatever the version.
CLIENT_QUOTAS_TABLE = "client_quotas"
CLIENT_QUOTAS = (f"CREATE TABLE {CLIENT_QUOTAS_TABLE} (client TEXT PRIMARY KEY, "
                 "max_unfinished INTEGER NOT NULL CHECK (max_unfinished >= 0))")


def check_quota(max_unfinished: int | None) -> int | None:
    if max_unfinished is not None and (isinstance(max_unfinished, bool) or not isinstance(max_unfinished, int)
                                       or max_unfinished < 0):
        raise ValueError(f"a quota is a whole number of games (0: none), not {max_unfinished!r}")
    return max_unfinished


class GamesMarker:
    """A file in the key directory saying that this service has stored games: written (0600, on disk) by the
    store that stores one, unless this process knows it is there.  A start that finds it beside a database
    without games (vanished, or made anew) refuses (api/serve.py): that database was lost, not new, and the
    players of its games hold signed commitments and receipts for games it would answer 404."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._known = False  # written or seen by this process

    def exists(self) -> bool:
        return self.path.exists()

    def mark(self, database: str) -> None:
        """Write it if missing (`database`: how the store names itself, for whoever reads the file).  Best
        effort: a failure is logged, and the next game stored tries again."""
        if self._known:
            return
        try:
            if not self.path.exists():
                _write_on_disk(self.path, f"fairdice: the games of the service that signs with these keys are "
                                          f"stored in {database}\n")
            self._known = True
        except OSError as exc:
            log.warning("cannot write %s (%s): a start that finds no database will not know it had games",
                        self.path, exc.strerror or exc)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self._known = False


def _write_on_disk(path: Path, text: str) -> None:
    """Write `path` (0600) whole or not at all, and on disk before returning."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


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


# This second in UTC, as the stores write it (2026-12-01T12:00:00Z): every write is stamped.
now = SecondStamp("%Y-%m-%dT%H:%M:%SZ")


_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode  # json.dumps(**kw) builds one per call


def dumps(doc) -> str:
    return _ENCODE(doc)


def loads_array(texts: list[str], what: str) -> list:
    """Parse JSON texts as one array (one call, not one per text); a bad one is named."""
    try:
        return json.loads("[" + ",".join(texts) + "]")
    except ValueError:
        for i, text in enumerate(texts):
            try:
                json.loads(text)
            except ValueError as exc:
                raise StoreError(f"{what}: stored event {i} is not JSON ({exc})") from None
        raise StoreError(f"{what}: stored events are not JSON") from None


def seat_key(seat: int | None) -> int:
    """The seat as stored: -1 for the operator of a game without human seats."""
    return -1 if seat is None else seat


def check_rate(interval: float, burst: int) -> float:
    """The GCRA tolerance (seconds a key's theoretical arrival time may run ahead of now) for a rate."""
    if not interval > 0 or burst < 1:
        raise ValueError(f"a rate needs interval > 0 and burst >= 1, not {interval!r} and {burst!r}")
    return (burst - 1) * interval


class RateWait(float):
    """What `Store.rate_hits` returns: seconds to wait (0.0: allowed), and `key`, the hit that waits longest
    (None when allowed), so that a refusal can name its limit."""

    key: str | None

    def __new__(cls, seconds: float, key: str | None = None) -> RateWait:
        wait = super().__new__(cls, seconds)
        wait.key = key
        return wait


def longest_wait(waits: list[tuple[str, float]]) -> RateWait:
    """The longest of the (key, seconds) waits as a RateWait; 0.0 if none waits."""
    key, seconds = max(waits, key=lambda kw: kw[1], default=(None, 0.0))
    return RateWait(seconds, key) if seconds > 0 else RateWait(0.0)


def newer_schema(found: int) -> StoreError:
    return StoreError(f"the database has schema version {found}, newer than this fairdice's "
                      f"{SCHEMA_VERSION}: upgrade fairdice")
