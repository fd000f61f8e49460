"""The protocol floor of a game request: what the protocol itself asks of the server, measured in-process.

A move is answered with five dice derived by HMAC (SPEC §2.3), a signed move receipt over the hash chain
extended by the new event (SPEC §5.6), the event appended durably before the answer, and a JSON request parsed
and a JSON answer written.  `Floor` measures each of these with the real functions the server calls
(`fairdice.derive.roll_dice`, `Chain.extend`, the key ring's `sign_receipt`, the store's `append`), on a game
made through the real service (`api.games.Games`) in a store opened as `fairdice serve` opens it (api.config's
settings: SQLite `synchronous=FULL` through its commit path, PostgreSQL `synchronous_commit` on, unless
FAIRDICE_SYNCHRONOUS says otherwise), and reports CPU microseconds (user + system of this process:
`time.process_time`) per request, each part and their sum.  The bot's turn, which a score request also plays,
is left out: it is the game, not the protocol.  Each append commits alone (no other request shares its fsync).

    with Floor(data_dir, db_url, extra_env) as floor:
        floor.measure(requests=300)   # {"dice_us": .., "receipt_us": .., "append_us": .., "json_us": ..,
                                      #  "us_per_request": .., "append_wall_us": ..}
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager

REQUEST = b'{"hold":[0,2,3]}'  # a reroll's body, as the load generator sends it


@contextmanager
def _environment(extra: dict):
    """`extra` in os.environ for the duration (api.config reads FAIRDICE_* from it)."""
    saved = {name: os.environ.get(name) for name in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Floor:
    """A service of its own (store, keys, one game in play) in this process, to time the protocol's parts."""

    def __init__(self, data_dir: str, db_url: str | None = None, extra_env: dict | None = None):
        self.data_dir, self.db_url, self.extra_env = data_dir, db_url, dict(extra_env or {})
        self.store = None

    def __enter__(self) -> Floor:
        from api.config import settings
        from api.games import Games
        from api.keys import open_keyring
        from api.store import open_store

        with _environment(self.extra_env):
            conf = settings({"data_dir": self.data_dir, "db": self.db_url, "max_unfinished": 0})
        self.synchronous = conf.synchronous
        self.store = open_store(conf)
        self.keys = open_keyring(conf, self.store)
        games = Games(self.store, self.keys, max_unfinished=0)
        created = games.create("classic13", [{"type": "human", "name": "floor"}])
        self.game_id, token = created["game_id"], created["tokens"][0]["token"]
        games.client_seed(self.game_id, token, "bench")
        self.answer = json.loads(games.roll(self.game_id, token, []).body)  # a move's whole answer
        snap = self.store.snapshot(self.game_id)
        self.event = snap.events[-1]  # the roll's event, as stored
        self.count = len(snap.events)
        self.seed = self.keys.seed_box.open(self.game_id, snap.record.seed_sealed)
        self.signer = self.keys.signer_for(snap.record.key_id)
        from fairdice.chain import Chain

        self.chain = Chain(bytes(32), self.count)  # (any h_n: the work is the same)
        return self

    def __exit__(self, *exc) -> None:
        if self.store is not None:
            self.store.close()

    def measure(self, requests: int = 300, database=None) -> dict:
        """CPU microseconds per request of each part, each part timed over `requests` runs of its own;
        `database`: a PostgreSQL server whose CPU time for the appends is given apart (`append_database_us`)."""
        from fairdice import derive

        seed, gid, signer, event, chain = self.seed, self.game_id, self.signer, self.event, self.chain
        answer = self.answer
        parts = {
            "dice_us": lambda i: derive.roll_dice(seed, gid, ["bench"], 0, 1 + i % 13, 1),
            "receipt_us": lambda i: signer.sign_receipt(gid, chain.count + 1, chain.extend([event]).digest),
            "json_us": lambda i: (json.loads(REQUEST), json.dumps(answer, separators=(",", ":"),
                                                                  ensure_ascii=False)),
        }
        out = {name: _cpu_us(work, requests) for name, work in parts.items()}
        db0 = database.cpu_seconds() if database else 0.0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for _ in range(requests):
            self.store.append(gid, self.count, [event], "playing")
            self.count += 1
        out["append_us"] = round(1e6 * (time.process_time() - cpu0) / requests, 1)
        out["append_wall_us"] = round(1e6 * (time.perf_counter() - wall0) / requests, 1)
        if database:
            out["append_database_us"] = round(1e6 * (database.cpu_seconds() - db0) / requests, 1)
        out["us_per_request"] = round(sum(out[name] for name in ("dice_us", "receipt_us", "json_us", "append_us")), 1)
        out["synchronous"] = self.synchronous
        return out


def _cpu_us(work, n: int) -> float:
    for i in range(min(n, 20)):  # warm: caches, first calls
        work(i)
    t0 = time.process_time()
    for i in range(n):
        work(i)
    return round(1e6 * (time.process_time() - t0) / n, 1)
