"""Upkeep of the data while the server runs: `Maintenance`, one daemon thread per gunicorn worker.

Every `maintenance_interval` seconds (FAIRDICE_MAINTENANCE_INTERVAL; jittered, so that the workers and the
servers that share a database spread out; 0: never) a round

- abandons the games that have had no move for `abandon_timeout` seconds: `Games.expire` ends each as the
  server (seat null, reason "timeout"), reveals its seed and signs its log like any abandon, and refuses
  (NotNowError) a game that moved meanwhile, is over already, or whose own header promises a longer wait;
- deletes the Idempotency-Key answers older than `idempotency_ttl` seconds and the rate-limit rows that no
  longer limit anyone, and cuts the SQLite WAL back to nothing (`Store.prune`).

Rounds in several workers at once are safe: an expiry is a compare-and-append like any move, so two workers
expiring one game store one abandon (the other is refused: the game is over), and pruning deletes rows that
no request may use any more.  A store fault (BusyError, UnavailableError) ends the round with a warning; the next
round tries again.
"""

from __future__ import annotations

import logging
import random
import threading
import time

from fairdice.errors import NotNowError

from .games import GameNotFoundError
from .store import BusyError, UnavailableError

JITTER = 0.2  # each wait is the interval times 1 +- JITTER
EXPIRE_BATCH = 100  # stale games asked of the store at once
EXPIRE_BATCHES = 20  # batches per round at most; what is left waits for the next round

log = logging.getLogger("fairdice.maintenance")


def stamp(seconds: float) -> str:
    """`seconds` since the epoch as the store writes times (UTC, whole seconds: 2024-05-01T12:00:00Z)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


class Maintenance:
    """The upkeep of one worker: rounds that expire idle games and prune old records, in a daemon thread, at
    jittered intervals.  The clock and the jitter are passed in so that the tests can run a round at a chosen
    time; the rounds need no coordination between workers or servers, since an expiry is a compare-and-append
    like any move."""
    def __init__(self, games, store, conf, clock=time.time, uniform=random.random):
        """`games`: the worker's api.games.Games; `store`: its store; `conf`: api.config.Settings (or anything
        with maintenance_interval, abandon_timeout and idempotency_ttl).  `clock` and `uniform` (0 <= x < 1)
        are for tests."""
        self.games = games
        self.store = store
        self.interval = conf.maintenance_interval
        self.abandon_timeout = conf.abandon_timeout
        self.idempotency_ttl = conf.idempotency_ttl
        self._clock = clock
        self._uniform = uniform
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed_games: set[str] = set()  # reported once each

    def start(self) -> None:
        """Run rounds in a daemon thread until `stop` (nothing if the interval is 0)."""
        if self.interval <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="fairdice-maintenance", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """End the thread after its current round."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def next_wait(self) -> float:
        return self.interval * (1 + JITTER * (2 * self._uniform() - 1))

    def _loop(self) -> None:
        while not self._stop.wait(self.next_wait()):
            self.run_once()

    def run_once(self) -> dict:
        """One round: {"expired": games abandoned, "pruned": store.prune's counts}; a part that failed is None
        (and logged)."""
        now = self._clock()
        return {"expired": self._guarded("abandon timed-out games", self.expire_stale, now),
                "pruned": self._guarded("prune the store", self.store.prune, stamp(now - self.idempotency_ttl))}

    def expire_stale(self, now: float) -> int:
        """Abandon every game idle since `abandon_timeout` seconds before `now` (EXPIRE_BATCHES batches at
        most); how many were."""
        idle_since = stamp(now - self.abandon_timeout)
        expired = 0
        for _ in range(EXPIRE_BATCHES):
            stale = self.store.stale_games(idle_since, limit=EXPIRE_BATCH)
            done = sum(self._expire(game_id, now) for game_id in stale)
            expired += done
            if len(stale) < EXPIRE_BATCH or not done:
                break  # no more, or only games that are not to be expired yet (the oldest come first)
        return expired

    def _expire(self, game_id: str, now: float) -> bool:
        try:
            self.games.expire(game_id, now=now)
        except (NotNowError, GameNotFoundError):
            return False  # moved meanwhile, over already (another worker), or its own wait is longer
        except (BusyError, UnavailableError):
            raise
        except Exception:
            if game_id not in self._failed_games:
                self._failed_games.add(game_id)
                log.exception("maintenance: game %s could not be abandoned on its timeout", game_id)
            return False
        return True

    def _guarded(self, what: str, work, *args):
        try:
            return work(*args)
        except (BusyError, UnavailableError) as exc:
            log.warning("maintenance: could not %s now (%s): the next round tries again", what, exc)
        except Exception:
            log.exception("maintenance: could not %s", what)
        return None
