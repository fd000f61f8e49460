"""Where a game request's server time goes: the API app in-process, no network, one thread, cProfile.

Plays the load of `bench/bench_api.py` (one human seat against a bot; `roll`, up to two rerolls keeping the
most common face, `score` the best box; the bot's whole turn inside the score request) through Flask's test
client, or straight on `Games` (`--layer games`: no HTTP parsing, no Flask), and reports the CPU time per
request of the game requests and of `GET /healthz`, then the functions that cost the most.  It measures the
cost of one request in isolation: what `bench_api.py` measures under concurrency (lock waits, gunicorn) is not
here.

    python bench/bench_api_profile.py [--turns 400] [--layer app|games] [--db URL] [--top 30] [--no-profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_api import best, keep_most_common  # the same strategy as the HTTP bench

SEATS = [{"type": "human", "name": "bench"}]


class AppDriver:
    """The game requests through the Flask app's test client (routes, JSON parsing, responses)."""

    def __init__(self, app):
        self.client = app.test_client()

    def create(self, rules, bot):
        doc = self._call("/v1/games", {"rules": rules, "seats": [*SEATS, {"type": "bot", "bot": bot}]})
        return doc["game_id"], doc["tokens"][0]["token"]

    def move(self, gid, token, action, body):
        return self._call(f"/v1/games/{gid}/{action}", body, token)

    def healthz(self):
        resp = self.client.get("/healthz")
        assert resp.status_code == 200

    def _call(self, path, body, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        resp = self.client.post(path, json=body, headers=headers)
        if resp.status_code >= 300:
            raise RuntimeError(f"POST {path}: {resp.status_code} {resp.get_data(as_text=True)[:200]}")
        return json.loads(resp.get_data())


class GamesDriver:
    """The same requests straight on `Games` (what is left once HTTP and Flask are taken away)."""

    def __init__(self, app):
        self.games = app.extensions["fairdice"]

    def create(self, rules, bot):
        doc = self.games.create(rules, [*SEATS, {"type": "bot", "bot": bot}])
        return doc["game_id"], doc["tokens"][0]["token"]

    def move(self, gid, token, action, body):
        if action == "client-seed":
            reply = self.games.client_seed(gid, token, body["client_seed"])
        elif action == "roll":
            reply = self.games.roll(gid, token, body["hold"])
        else:
            reply = self.games.score(gid, token, body["category"])
        return json.loads(reply.body)

    def healthz(self):
        pass


def play(driver, turns: int, rules: str, bot: str, rerolls: int = 2) -> int:
    """Play `turns` turns of games one after another; the number of (timed) game requests made."""
    requests = 0
    while turns > 0:
        gid, token = driver.create(rules, bot)
        state = driver.move(gid, token, "client-seed", {"client_seed": "bench"})
        while state["status"] == "playing" and turns > 0:
            state = driver.move(gid, token, "roll", {"hold": []})
            requests += 1
            for _ in range(rerolls):
                hold = keep_most_common(state["dice"])
                if len(hold) == 5 or not state["rolls_left"]:
                    break
                state = driver.move(gid, token, "roll", {"hold": hold})
                requests += 1
            state = driver.move(gid, token, "score", {"category": best(state["options"])})
            requests += 1
            turns -= 1
    return requests


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--layer", choices=("app", "games"), default="app")
    parser.add_argument("--db", help="a postgresql:// URL (default: a fresh SQLite file)")
    parser.add_argument("--rules", default="classic13")
    parser.add_argument("--bot", default="ev")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime", choices=("tottime", "cumulative"))
    parser.add_argument("--no-profile", action="store_true", help="only the timings")
    args = parser.parse_args(argv)
    os.environ.setdefault("FAIRDICE_TABLES", "lazy")

    from api import create_app

    with tempfile.TemporaryDirectory(prefix="fairdice-profile-") as data_dir:
        config = {"FAIRDICE_DATA_DIR": data_dir, "FAIRDICE_RATE_CREATE": "off", "FAIRDICE_RATE_MOVES_CLIENT": "off",
                  "FAIRDICE_RATE_MOVES_TOKEN": "off", "FAIRDICE_MAX_UNFINISHED": "0"}
        if args.db:
            config["FAIRDICE_DB"] = args.db
        app = create_app(config)
        driver = (AppDriver if args.layer == "app" else GamesDriver)(app)
        play(driver, 30, args.rules, args.bot)  # warm up: imports, caches, the bot's tables
        t0 = time.process_time()
        for _ in range(2000):
            driver.healthz()
        noop_us = 1e6 * (time.process_time() - t0) / 2000
        profiler = None if args.no_profile else cProfile.Profile()
        t0 = time.process_time()
        if profiler:
            profiler.enable()
        n = play(driver, args.turns, args.rules, args.bot)
        if profiler:
            profiler.disable()
        game_us = 1e6 * (time.process_time() - t0) / n
        store = app.extensions["fairdice"].store
        store.close()
    print(f"{args.layer}: {n} game requests, {game_us:.0f} us CPU each{' (under cProfile)' if profiler else ''}; "
          f"GET /healthz {noop_us:.0f} us; in-process ratio {noop_us / game_us:.2f}")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
