"""Watching a game: a request waits ("parks") until the game has events its client has not seen.

`GET /v1/games/{id}/events?after=N` (api/routes/watch.py) is a long poll: answered at once when the game
has more than N events, else it waits up to `wait` seconds for them (README "Live updates" gives the
measurements that chose long polling over server-sent events).  What it answers is the game state that
`GET /v1/games/{id}?since=N` answers, rendered by the same `Games.state`: nothing more, so nothing before
its reveal.

- A parked request holds one of its worker's threads (the gthread worker gives every request in flight a
  thread), so at most `max_parked` requests of a process wait at once (the app allows half its threads):
  past that a request is answered at once with nothing new and POLL_AFTER, its client asks again then, and
  game requests always find a thread free.
- One thread per process wakes them (`Watch._feed`, started by the first waiter and gone IDLE_STOP seconds
  after the last): it reads the store's append feed (api/stores: PostgreSQL's LISTEN/NOTIFY, SQLite's
  `data_version`), which sees the appends of every worker and server on the database, and wakes the waiters
  whose game now has more events than they have seen.  No waiter polls anything itself.
- `Watch.close()` answers every waiter at once (nothing new) and parks no more: for a worker that stops.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from .errors import RefusalError, ServiceError
from .games import Games
from .stores.base import FINAL_STATUSES, GameNotFoundError, Store, StoreError

log = logging.getLogger("fairdice.api")

POLL_AFTER = 1  # seconds a client waits before asking again when it found no place to wait
FEED_WAIT = 1.0  # seconds the feed thread waits on the feed at a time (then it looks whether anyone still waits)
IDLE_STOP = 30.0  # seconds without a waiter after which the feed thread ends (PostgreSQL: its connection closes)
FAULT_PAUSE = 0.5  # seconds the feed thread pauses when the store cannot be watched (waiters then time out)
RENDERS_KEPT = 256  # state texts kept for the watchers of the same game and count (api.watch.Renders)


class NoRoomToWaitError(ServiceError):
    """As many requests as may wait in this process are waiting: answer now, the client asks again later."""


@dataclass(eq=False)
class _Waiter:
    after: int  # the event count its client has seen
    woken: threading.Event = field(default_factory=threading.Event)
    count: int = 0  # the game's event count that woke it


class Watch:
    """The requests of one process that wait for games to get new events, and the thread that wakes them."""

    def __init__(self, store: Store, max_parked: int, idle_stop: float = IDLE_STOP):
        self.store = store
        self.max_parked = max_parked
        self.idle_stop = idle_stop
        self._cond = threading.Condition()
        self._waiting: dict[str, set[_Waiter]] = {}  # game id -> its waiters
        self._parked = 0
        self._feeder: tuple[int, threading.Thread] | None = None  # (pid, thread): a parent's thread is not ours
        self.renders = Renders()

    @property
    def parked(self) -> int:
        """Requests waiting now."""
        return self._parked

    @property
    def feeding(self) -> bool:
        """Whether this process's feed thread runs."""
        feeder = self._feeder
        return feeder is not None and feeder[0] == os.getpid() and feeder[1].is_alive()

    def wait(self, game_id: str, after: int, timeout: float) -> int | None:
        """Wait until the game has more than `after` events: its event count then, or None once `timeout`
        seconds have passed.  NoRoomToWaitError at once when `max_parked` requests of this process wait already."""
        waiter = _Waiter(after)
        self._enter(game_id, waiter)
        try:
            # an append committed before the feed thread knew of this waiter would wake nobody: look once
            found = self.store.progress([game_id]).get(game_id)
            if found is not None and found.event_count > after:
                return found.event_count
            woken = waiter.woken.wait(timeout)
            return waiter.count if woken and waiter.count > after else None
        finally:
            self._leave(game_id, waiter)

    def close(self) -> None:
        """The process is stopping: every waiting request is answered now (nothing new), none waits again."""
        with self._cond:
            self.max_parked = 0
            for waiters in self._waiting.values():
                for waiter in waiters:
                    waiter.woken.set()

    def _enter(self, game_id: str, waiter: _Waiter) -> None:
        with self._cond:
            if self._parked >= self.max_parked:
                raise NoRoomToWaitError(f"{self._parked} requests of this process are waiting already")
            self._waiting.setdefault(game_id, set()).add(waiter)
            self._parked += 1
            if self._feeder is None or self._feeder[0] != os.getpid():
                thread = threading.Thread(target=self._feed, name="fairdice-watch", daemon=True)
                self._feeder = (os.getpid(), thread)
                thread.start()
            self._cond.notify()

    def _leave(self, game_id: str, waiter: _Waiter) -> None:
        with self._cond:
            waiters = self._waiting[game_id]
            waiters.discard(waiter)
            if not waiters:
                del self._waiting[game_id]
            self._parked -= 1

    # --- the feed thread ------------------------------------------------------------------------

    def _feed(self) -> None:
        """Wake waiters from the store's append feed for as long as anyone waits (or comes within idle_stop)."""
        feed = self.store.append_feed()
        try:
            while self._anyone_waiting():
                try:
                    appended = feed.wait(FEED_WAIT)
                    if appended is None:  # something changed, the feed cannot say what: read the watched games
                        appended = self._watched_counts()
                except StoreError:
                    time.sleep(FAULT_PAUSE)
                    continue
                self._wake(appended)
        except Exception:
            log.exception("the feed thread of the game watchers failed; the next waiter starts another")
            self._forget_feeder()
        finally:
            feed.close()

    def _anyone_waiting(self) -> bool:
        """Whether someone waits, waiting up to idle_stop seconds for one; False forgets this thread (under the
        lock: the next waiter starts another)."""
        with self._cond:
            if self._cond.wait_for(lambda: self._waiting, self.idle_stop):
                return True
            self._forget_feeder()  # (still under the lock: a waiter coming now starts another)
            return False

    def _forget_feeder(self) -> None:
        """(In the feed thread, as it ends.) The next waiter starts another."""
        with self._cond:  # (a reentrant lock)
            if self._feeder is not None and self._feeder[1] is threading.current_thread():
                self._feeder = None

    def _watched_counts(self) -> dict[str, int]:
        with self._cond:
            watched = list(self._waiting)
        return {game_id: found.event_count for game_id, found in self.store.progress(watched).items()}

    def _wake(self, appended: dict[str, int]) -> None:
        """Wake every waiter whose game now has more events than it has seen (counts only grow, so a count
        that arrives late still says something true)."""
        with self._cond:
            for game_id, count in appended.items():
                for waiter in self._waiting.get(game_id, ()):
                    if count > max(waiter.after, waiter.count):
                        waiter.count = count
                        waiter.woken.set()


# --- what a watching client is answered -------------------------------------------------------------

@dataclass(frozen=True)
class News:
    """What the game has for a client that has seen `after` of its events."""
    event_count: int
    state: str | None = None  # the state document (JSON text) with the events after `after`; None: nothing new
    poll_after: int | None = None  # nothing new and no place to wait: ask again after this many seconds


class AheadOfGameError(RefusalError):
    """The client says it has seen more events than the game has (409, as the core's NotNowError)."""
    kind = "conflict"


_EVENT_COUNT = re.compile(r',"event_count":(\d+),"events_from":')  # in a state document's text (api.games)


def news(games: Games, watch: Watch, game_id: str, after: int, wait: float) -> News:
    """The game's state with its events after the first `after`, as soon as there are any: at once, else
    within `wait` seconds (then None if none came).  A game that is over gets no more events: nothing new
    from it is answered at once."""
    found = games.store.progress([game_id]).get(game_id)
    if found is None:
        raise GameNotFoundError(game_id)
    count = found.event_count
    if count < after:
        raise AheadOfGameError("after_beyond_events", f"the game has {count} events, fewer than after={after}",
                               event_count=count)
    if count == after:
        if found.status in FINAL_STATUSES or wait <= 0:
            return News(after)
        try:
            count = watch.wait(game_id, after, wait)
        except NoRoomToWaitError:
            return News(after, poll_after=POLL_AFTER)
        if count is None:
            return News(after)
    return watch.renders.news(games, game_id, after, count)


class Renders:
    """The state last rendered for each (game, event count seen): the watchers of a game whom one move wakes
    together are answered with one rendering (the first renders, the others wait for it and take it).  A
    kept text is given only to a request that knows of no later event than it shows."""

    def __init__(self, size: int = RENDERS_KEPT):
        self.size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, int], News] = OrderedDict()
        self._rendering: dict[tuple[str, int], threading.Lock] = {}

    def news(self, games: Games, game_id: str, after: int, count: int) -> News:
        """The state of the game, with its events after `after`, showing at least `count` events."""
        key = (game_id, after)
        kept = self._take(key, count)
        if kept is not None:
            return kept
        with self._lock:
            rendering = self._rendering.setdefault(key, threading.Lock())
        with rendering:
            kept = self._take(key, count)
            if kept is not None:
                return kept
            try:
                text = games.state(game_id, since=after)
                made = News(event_count_of(text), text)
                with self._lock:
                    self._kept[key] = made
                    self._kept.move_to_end(key)
                    if len(self._kept) > self.size:
                        self._kept.popitem(last=False)
            finally:
                with self._lock:
                    self._rendering.pop(key, None)
        return made

    def _take(self, key: tuple[str, int], count: int) -> News | None:
        with self._lock:
            kept = self._kept.get(key)
        return kept if kept is not None and kept.event_count >= count else None


def event_count_of(state: str) -> int:
    """The event count a state document's text shows."""
    match = _EVENT_COUNT.search(state)
    return int(match[1]) if match else json.loads(state)["event_count"]
