"""Live updates: long polling (GET /v1/games/{id}/events) against server-sent events, with W watchers.

Each phase starts `fairdice serve`'s own gunicorn app (BufferedThreadWorker, `--workers` processes, on SQLite
or with `--db postgres` on a throwaway PostgreSQL) with two additions of this benchmark's: an SSE route over
the same waiter (api/watch.py: `/_bench/sse/{id}?after=N` streams the state, as GET /v1/games/{id}?since=N
shows it, at every move) and a count of the watchers' requests in flight in each worker (each holds a
thread: gthread gives every request in flight one).  G games (a human seat, played here at one move every
`--pace` ms, against the greedy bot) are watched by W watchers spread over them, for `--seconds`:

- `moves`: nobody watches: what the moves cost by themselves;
- `poll, T threads`: every watcher long polls (the route as served; past half a worker's threads a request
  is answered at once and its watcher asks again after Retry-After);
- `sse, T threads`: every watcher holds one SSE stream.

With `--db postgres --servers 2` the moves go through one server and the watchers watch through another:
every delivery crosses servers by LISTEN/NOTIFY.  Reported per phase: deliveries (a move reaching a watcher),
the server CPU per delivery beyond the moves' own (all server processes, from /proc), watcher requests per
delivery, the time from a move's answer to its mover to its delivery (p50, p95; a delivery that came before
the mover read its own answer counts as 0), the threads the watchers held (mean and most, all workers), and
the moves' own latency and how many moves got no answer within MOVE_TIMEOUT s (starved of threads).

    python bench/bench_watch.py [--watchers 20,50] [--games 5] [--pace 1000] [--seconds 10] [--workers 2]
                                [--db postgres] [--servers 1|2] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from procstat import process_times, seconds

REPO = Path(__file__).resolve().parents[1]
MOVE_TIMEOUT = 5.0  # seconds a move may take before it counts as starved
HELD_EVERY = 0.2  # seconds between two records of the watchers' requests in flight, per worker
LIMITS_OFF = {"FAIRDICE_RATE_CREATE": "off", "FAIRDICE_RATE_MOVES_CLIENT": "off", "FAIRDICE_RATE_MOVES_TOKEN": "off",
              "FAIRDICE_MAX_UNFINISHED": "0", "FAIRDICE_TABLES": "lazy"}


# --- the server (in its own process: python bench/bench_watch.py --serve ...) ------------------------

class HeldThreads:
    """WSGI middleware: counts the watchers' requests in flight (each holds a worker thread until its answer,
    or its stream, ends) and writes the count and its time integral to `<dir>/held-<pid>.json`."""

    def __init__(self, app, out_dir: Path):
        self.app, self.out = app, out_dir / f"held-{os.getpid()}.json"
        self.lock = threading.Lock()
        self.now, self.area, self.at = 0, 0.0, time.monotonic()
        threading.Thread(target=self._record, daemon=True).start()

    def _add(self, change: int) -> None:
        with self.lock:
            moment = time.monotonic()
            self.area += self.now * (moment - self.at)
            self.now, self.at = self.now + change, moment

    def _record(self) -> None:
        while True:
            self._add(0)
            text = json.dumps({"now": self.now, "area": self.area, "t": time.time()})
            tmp = self.out.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(self.out)
            time.sleep(HELD_EVERY)

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if not (path.endswith("/events") or path.startswith("/_bench/sse/")):
            return self.app(environ, start_response)
        self._add(1)
        try:
            result = self.app(environ, start_response)
        except BaseException:
            self._add(-1)
            raise
        return _Closing(result, lambda: self._add(-1))


class _Closing:
    def __init__(self, result, done):
        self.result, self.done = result, done

    def __iter__(self):
        return iter(self.result)

    def close(self):
        try:
            if hasattr(self.result, "close"):
                self.result.close()
        finally:
            self.done()


def bench_app(conf, out_dir: Path):
    from flask import Blueprint, Response, current_app, request

    from api.app import create_app
    from api.watch import Watch, news

    app = create_app(conf.as_config())
    streams = Watch(app.extensions["fairdice"].store, max_parked=10 ** 6)  # an SSE stream waits however many there are
    bp = Blueprint("bench_sse", __name__)

    @bp.get("/_bench/sse/<game_id>")
    def sse(game_id):
        games, after = current_app.extensions["fairdice"], int(request.args.get("after", 0))

        def stream(after=after):
            while True:
                found = news(games, streams, game_id, after, 15)
                if found.state is None:
                    yield ": nothing new\n\n"
                    continue
                after = found.event_count
                yield f"id: {after}\ndata: {found.state}\n\n"
                if not found.state.endswith('"final":null}'):
                    return  # the game is over

        return Response(stream(), mimetype="text/event-stream", headers={"Cache-Control": "no-store"})

    app.register_blueprint(bp)
    app.wsgi_app = HeldThreads(app.wsgi_app, out_dir)
    return app


def serve(args) -> int:
    from api.config import settings
    from api.serve import bind_listener, gunicorn_app, prepare_storage

    conf = settings({"host": "127.0.0.1", "port": 0, "data_dir": args.serve, "db": args.db,
                     "workers": args.workers, "threads": args.threads})
    prepare_storage(conf)
    listener = bind_listener(conf.host, conf.port)
    server = gunicorn_app(conf, False, lambda urls: print(f"serving at {urls[0]}", flush=True),
                          listener=listener.detach())
    out_dir = Path(args.serve)
    server.load = lambda: bench_app(conf, out_dir)
    server.run()
    return 0


class Server:
    def __init__(self, data_dir: Path, key_dir: Path, workers: int, threads: int, db: str | None):
        self.dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, __file__, "--serve", str(data_dir), "--workers", str(workers), "--threads",
               str(threads), *(["--db", db] if db else [])]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "FAIRDICE_KEY_DIR": str(key_dir), **LIMITS_OFF}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                                     start_new_session=True, env=env)
        output, deadline = [], time.time() + 60
        for line in self.proc.stdout:
            output.append(line)
            found = re.search(r"serving at http://([\d.]+):(\d+)", line)
            if found:
                self.host, self.port = found[1], int(found[2])
                threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
                break
            if time.time() > deadline:
                break
        else:
            raise SystemExit("bench: the server did not start:\n" + "".join(output[-20:]))
        for _ in range(600):
            with contextlib.suppress(OSError):
                if request(self.host, self.port, "GET", "/healthz")[0] == 200:
                    return
            time.sleep(0.05)
        raise SystemExit("bench: the server does not answer")

    def held(self) -> tuple[int, float]:
        """(watchers' requests in flight now, their integral over time) summed over the workers."""
        now, area = 0, 0.0
        for path in self.dir.glob("held-*.json"):
            with contextlib.suppress(ValueError, OSError):
                doc = json.loads(path.read_text())
                now, area = now + doc["now"], area + doc["area"]
        return now, area

    def cpu(self) -> float:
        return seconds(sum(p.ticks for p in process_times().values() if p.group == self.proc.pid))

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(15)


# --- the load ----------------------------------------------------------------------------------------

def request(host, port, method, path, body=None, token=None, timeout=30.0, conn=None):
    conn = conn or http.client.HTTPConnection(host, port, timeout=timeout)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    resp = conn.getresponse()
    return resp.status, resp.read(), resp


class Game:
    """One game played by its mover at `pace` seconds a move; `appends`: (event count, when its mover read it)."""

    def __init__(self, server: Server):
        self.server = server
        status, payload, _ = request(server.host, server.port, "POST", "/v1/games",
                                     {"rules": "classic13", "seats": [{"type": "human", "name": "ann"},
                                                                      {"type": "bot", "bot": "greedy"}]})
        created = json.loads(payload)
        self.id, self.token = created["game_id"], created["tokens"][0]["token"]
        self.state = self._move("client-seed", {"client_seed": "bench"})
        self.appends: list[tuple[int, float]] = []
        self.latencies: list[float] = []
        self.starved = 0

    def _move(self, action: str, body: dict) -> dict:
        status, payload, _ = request(self.server.host, self.server.port, "POST", f"/v1/games/{self.id}/{action}",
                                     body, self.token, timeout=MOVE_TIMEOUT)
        if status != 200:
            raise RuntimeError(f"{action}: {status} {payload[:200]!r}")
        return json.loads(payload)

    def play(self, pace: float, until: float) -> None:
        tick = time.perf_counter()
        while self.state["status"] == "playing":
            tick += pace
            time.sleep(max(0.0, tick - time.perf_counter()))
            if time.perf_counter() >= until:
                return
            state = self.state
            if state["rolls_made"] == 0:
                action, body = "roll", {"hold": []}
            elif state["rolls_left"] and state["rolls_made"] < 2:
                dice = state["dice"]
                face = max(set(dice), key=dice.count)
                action, body = "roll", {"hold": [i for i, d in enumerate(dice) if d == face]}
            else:
                opts = state["options"]
                action, body = "score", {"category": max(opts, key=lambda c: opts[c]["points"])}
            sent = time.perf_counter()
            try:
                self.state = self._move(action, body)
            except OSError:  # no answer within MOVE_TIMEOUT: every thread is taken
                self.starved += 1
                return
            answered = time.perf_counter()
            self.latencies.append(answered - sent)
            self.appends.append((self.state["event_count"], answered))


class Watcher:
    """Follows a game; `seen`: (event count, when it arrived); `requests`: requests made."""

    def __init__(self, server: Server, game: Game, mode: str):
        self.server, self.game, self.mode = server, game, mode
        self.seen: list[tuple[int, float]] = []
        self.requests = 0
        self.after = game.state["event_count"]

    def run(self, until: float) -> None:
        with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
            (self._poll if self.mode == "poll" else self._stream)(until)

    def _poll(self, until: float) -> None:
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=60)
        while time.perf_counter() < until:
            status, payload, resp = request(None, None, "GET", f"/v1/games/{self.game.id}/events?after={self.after}",
                                            conn=conn)
            self.requests += 1
            if status == 200:
                self.after = json.loads(payload)["event_count"]
                self.seen.append((self.after, time.perf_counter()))
            elif status == 304 and resp.getheader("Retry-After"):
                time.sleep(float(resp.getheader("Retry-After")))

    def _stream(self, until: float) -> None:
        conn = http.client.HTTPConnection(self.server.host, self.server.port, timeout=60)
        conn.request("GET", f"/_bench/sse/{self.game.id}?after={self.after}")
        self.requests += 1
        resp = conn.getresponse()
        while time.perf_counter() < until:
            line = resp.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                self.after = json.loads(line[6:])["event_count"]
                self.seen.append((self.after, time.perf_counter()))


def phase(servers: list[Server], mode: str | None, watchers: int, games: int, pace: float, length: float) -> dict:
    movers, watching = servers[0], servers[-1]
    played = [Game(movers) for _ in range(games)]
    crowd = [Watcher(watching, played[i % games], mode) for i in range(watchers if mode else 0)]
    threads = [threading.Thread(target=w.run, args=(time.perf_counter() + length + 30,), daemon=True) for w in crowd]
    for t in threads:
        t.start()
    time.sleep(0.5)  # every watcher waiting
    cpu0, (_, area0), t0 = sum(s.cpu() for s in servers), watching.held(), time.perf_counter()
    until = t0 + length
    most = [0]

    def sample():
        while time.perf_counter() < until:
            most[0] = max(most[0], watching.held()[0])
            time.sleep(HELD_EVERY)

    players = [threading.Thread(target=g.play, args=(pace, until), daemon=True) for g in played]
    for t in [*players, threading.Thread(target=sample, daemon=True)]:
        t.start()
    for t in players:
        t.join(length + MOVE_TIMEOUT + 5)
    time.sleep(max(0.0, until - time.perf_counter()) + 1.0)  # the last moves reach their watchers
    cpu1, (_, area1), t1 = sum(s.cpu() for s in servers), watching.held(), time.perf_counter()
    delays, delivered = [], 0
    for w in crowd:
        arrivals = list(w.seen)
        for count, answered in w.game.appends:
            first = next((at for seen, at in arrivals if seen >= count), None)
            if first is not None:
                delivered += 1
                delays.append(max(0.0, first - answered))
    move_lat = sorted(x for g in played for x in g.latencies)
    delays.sort()
    return {"mode": mode or "moves", "watchers": len(crowd), "moves": len(move_lat),
            "starved_moves": sum(g.starved for g in played), "deliveries": delivered,
            "server_cpu_s": cpu1 - cpu0, "requests": sum(w.requests for w in crowd),
            "held_mean": (area1 - area0) / (t1 - t0), "held_most": most[0],
            "delivery_p50_ms": pct(delays, 0.5), "delivery_p95_ms": pct(delays, 0.95),
            "move_p50_ms": pct(move_lat, 0.5), "move_p99_ms": pct(move_lat, 0.99)}


def pct(values: list[float], q: float) -> float | None:
    return round(1000 * values[min(len(values) - 1, int(q * len(values)))], 1) if values else None


def run_phase(args, tmp: Path, db: str | None, threads: int, mode: str | None, watchers: int) -> dict:
    name = f"{mode or 'moves'}-{threads}-{watchers}-{len(list(tmp.iterdir()))}"
    servers = []
    try:
        for i in range(args.servers):  # a data directory each, one key directory for all (one database)
            servers.append(Server(tmp / f"{name}-{i}", tmp / "keys", args.workers, threads, db))
        result = phase(servers, mode, watchers, args.games, args.pace / 1000, args.seconds)
    finally:
        for server in servers:
            server.stop()
    return {**result, "threads": threads, "workers": args.workers}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # (the server process of a phase)
    parser.add_argument("--threads", type=int, default=4, help=argparse.SUPPRESS)
    parser.add_argument("--watchers", default="20,50", help="watcher counts, comma-separated")
    parser.add_argument("--games", type=int, default=5, help="games watched (watchers spread over them)")
    parser.add_argument("--pace", type=float, default=1000, help="milliseconds between two moves of a game")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--db", help="postgres: a throwaway PostgreSQL server (default: SQLite)")
    parser.add_argument("--servers", type=int, default=1, choices=(1, 2),
                        help="2: the moves through one server, the watchers through another (PostgreSQL)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args)
    if args.servers == 2 and args.db not in ("postgres", "postgresql"):
        parser.error("--servers 2 needs --db postgres")
    with contextlib.ExitStack() as stack:
        db = None
        if args.db in ("postgres", "postgresql"):
            from bench_api_postgres import temporary_postgres

            db = stack.enter_context(temporary_postgres(max_connections=400)).url
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fairdice-bench-watch-")))
        rows = [run_phase(args, tmp, db, 4, None, 0)]
        for watchers in [int(w) for w in args.watchers.split(",")]:
            roomy = 2 * watchers + 4  # every watcher finds a thread, whichever worker it reaches
            for mode, threads in (("poll", 4), ("poll", roomy), ("sse", roomy), ("sse", 4)):
                rows.append(run_phase(args, tmp, db, threads, mode, watchers))
    per_move = rows[0]["server_cpu_s"] / rows[0]["moves"] if rows[0]["moves"] else 0.0
    for row in rows[1:]:
        beyond = row["server_cpu_s"] - per_move * row["moves"]
        row["cpu_ms_per_delivery"] = round(1000 * beyond / row["deliveries"], 3) if row["deliveries"] else None
        row["requests_per_delivery"] = round(row["requests"] / row["deliveries"], 2) if row["deliveries"] else None
    report = {"database": "postgresql" if db else "sqlite", "servers": args.servers, "games": args.games,
              "pace_ms": args.pace, "seconds": args.seconds, "cpus": os.cpu_count(),
              "load_average": [round(x, 2) for x in os.getloadavg()], "phases": rows,
              "cpu_ms_per_move": round(1000 * per_move, 3)}
    if args.json:
        print(json.dumps(report))
    else:
        print_report(report)
    return 0


def print_report(report: dict) -> None:
    across = ", moves through one server and watchers through the other" if report["servers"] == 2 else ""
    print(f"live updates on {report['database']}{across}: {report['games']} games at one move every "
          f"{report['pace_ms']:g} ms, {report['seconds']:g} s a phase, {report['cpus']} CPUs, load average "
          f"{report['load_average'][0]}; the moves alone cost {report['cpu_ms_per_move']} ms of server CPU each")
    print(f"  {'phase':<24}{'deliv.':>7}{'CPU ms/deliv.':>14}{'req/deliv.':>11}{'p50 ms':>8}{'p95 ms':>8}"
          f"{'threads held':>14}{'move p99':>10}{'starved':>8}")
    for row in report["phases"]:
        label = f"{row['mode']}, {row['workers']}x{row['threads']} threads, {row['watchers']} w"
        held = f"{row['held_mean']:.1f} (<={row['held_most']})"
        print(f"  {label:<24}{row['deliveries']:>7}{str(row.get('cpu_ms_per_delivery', '')):>14}"
              f"{str(row.get('requests_per_delivery', '')):>11}{str(row['delivery_p50_ms']):>8}"
              f"{str(row['delivery_p95_ms']):>8}{held:>14}{str(row['move_p99_ms']):>10}{row['starved_moves']:>8}")


if __name__ == "__main__":
    sys.exit(main())
