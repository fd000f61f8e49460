"""HTTP API throughput: complete turns per second with 50 concurrent games, against a no-op endpoint.

Starts `fairdice serve` on a loopback port with a fresh data directory (on
SQLite, or with `--db` on PostgreSQL; `--servers N` starts N servers on the
same database, and the connections are spread over them), warms it up with
`--warmup` seconds of games (what a server that has run for a while holds:
its bots' tables of holds and cards, the games it serves), then measures, in
the same run and with the same load generator:

1. baseline: `GET /livez` (the JSON no-op of the same server: it touches neither
   the store nor a game; `/healthz` runs the store's health probe, a write
   transaction, and is no no-op) from C concurrent keep-alive connections (the
   report names this phase `healthz`, as it always has);
2. games: C concurrent games (one human seat against a bot); each connection
   plays its own game turn after turn (`roll`, up to `--rerolls` rerolls
   keeping the most common face, then `score` the best box; the bot's whole
   turn is played server-side inside the score request) and starts a new game
   when one ends;
3. with `--think MS`, the same games at a human's pace: each game waits MS
   milliseconds before each move, so the latency is that of 50 games played at
   the offered rate rather than of a queue kept full.

Rate limits and the quota of unfinished games are off (one address plays every
game; `--with-limits` counts them, set too high to refuse anything).  Reported:
requests per second of each phase, their ratio (issue 14's goal of half the
no-op rate, retired by issue 21: it measured the load generator), complete turns per second, p50/p99 latency per
request, the server's CPU time per request (all its processes, from /proc; on
PostgreSQL the database's own CPU is given apart), which says what each
request costs the server even when the machine is shared or the load
generator is the bottleneck, and the load average before and after.  The load
comes from several client processes (plain `http.client`, keep-alive), which
share the machine with the server; both phases pay the same client cost.  In
closed loop (no think time) a request waits for the ones queued before it, so
its latency is about C / throughput (Little's law): the paced phase is the one
that says how long a move takes.

In each round, right after its phases (the servers idle), the protocol floor of a game request is measured in
this process (bench/bench_api_floor.py): five HMAC dice, the Ed25519 move receipt over the extended hash chain,
the durable append of the event through the real store with the servers' settings (each append committing
alone), and the JSON parse of a request and encode of its answer; the bot's turn is left out.  `cpu_vs_floor`:
the server's CPU per game request over that floor (the median of the rounds' ratios).

    python bench/bench_api.py [--games 50] [--seconds 8] [--workers 2] [--threads 8] [--bot ev] [--rerolls 2]
                              [--db postgres|postgresql://...] [--servers 1] [--warmup 3] [--think MS]
                              [--rounds 1] [--with-limits] [--profile DIR] [--synchronous normal,full] [--json]

`--rounds N` measures the two phases N times, one after the other, and reports the median of each figure and the
median of the rounds' ratios (with the ratio of every round): on a shared machine, load from elsewhere that comes
and goes then falls on both phases alike.

`--synchronous normal,full` measures servers of each setting (FAIRDICE_SYNCHRONOUS: NORMAL survives a killed
process, FULL also a power cut; on PostgreSQL synchronous_commit off or on) in the same run, each on a database of
its own, their rounds interleaved (`--rounds`), and reports each one's figures and the turns a second of each
against the first's (`turns_vs_first`: the median of the rounds' ratios).

`--db postgres` starts a throwaway PostgreSQL server for the run (bench/bench_api_postgres.py); a URL uses that
database as it is (the servers create their schema in it if missing).  `--profile DIR` profiles the servers'
request threads instead (bench/bench_api_workerprof.py).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing as mp
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from procstat import process_times, seconds

REPO = Path(__file__).resolve().parents[1]


# --- load generator (runs in client processes) ----------------------------------------------

class Conn:
    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.conn = http.client.HTTPConnection(host, port, timeout=30)

    def request(self, method: str, path: str, body=None, token: str | None = None):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = json.dumps(body) if body is not None else None
        for attempt in range(3):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                payload = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                return resp.status, payload
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt == 2:
                    raise


def best(options: dict) -> str:
    return max(options, key=lambda c: options[c]["points"] + options[c]["yahtzee_bonus"])


NOOP_PATH = "/livez"


def _noop_loop(conn: Conn, until: float, lat: list, counts: dict) -> None:
    while time.perf_counter() < until:
        t0 = time.perf_counter()
        status, _ = conn.request("GET", NOOP_PATH)
        lat.append(time.perf_counter() - t0)
        counts["requests"] += 1
        if status != 200:
            counts["errors"] += 1


def keep_most_common(dice: list[int]) -> list[int]:
    face = max(set(dice), key=lambda f: (dice.count(f), f))
    return [i for i, d in enumerate(dice) if d == face]


def _game_loop(conn: Conn, until: float, lat: list, counts: dict, rules: str, bot: str, rerolls: int,
               think: float = 0.0) -> None:
    def call(method, path, body=None, token=None, timed=True):
        if timed and think:
            time.sleep(think)
        t0 = time.perf_counter()
        status, payload = conn.request(method, path, body, token)
        if timed:
            lat.append(time.perf_counter() - t0)
            counts["requests"] += 1
        if status >= 300:
            counts["errors"] += 1
            raise RuntimeError(f"{method} {path}: {status} {payload[:200]!r}")
        return json.loads(payload)

    while time.perf_counter() < until:
        created = call("POST", "/v1/games", {"rules": rules, "seats": [{"type": "human", "name": "bench"},
                                                                       {"type": "bot", "bot": bot}]}, timed=False)
        gid, token = created["game_id"], created["tokens"][0]["token"]
        state = call("POST", f"/v1/games/{gid}/client-seed", {"client_seed": "bench"}, token, timed=False)
        counts["games"] += 1
        while state["status"] == "playing" and time.perf_counter() < until:
            state = call("POST", f"/v1/games/{gid}/roll", {"hold": []}, token)
            for _ in range(rerolls):
                hold = keep_most_common(state["dice"])
                if len(hold) == 5 or not state["rolls_left"]:
                    break
                state = call("POST", f"/v1/games/{gid}/roll", {"hold": hold}, token)
            state = call("POST", f"/v1/games/{gid}/score", {"category": best(state["options"])}, token)
            counts["turns"] += 1


def client_process(args) -> dict:
    kind, targets, first_user, users, start, seconds, rules, bot, rerolls, think = args
    time.sleep(max(0.0, start - time.time()))
    until = time.perf_counter() + seconds
    lats, counts, threads = [], [], []
    for user in range(first_user, first_user + users):
        lat, count = [], {"requests": 0, "errors": 0, "turns": 0, "games": 0}
        lats.append(lat)
        counts.append(count)
        conn = Conn(*targets[user % len(targets)])  # the connections spread over the servers
        target = _noop_loop if kind == "healthz" else _game_loop
        extra = () if kind == "healthz" else (rules, bot, rerolls, think)
        threads.append(threading.Thread(target=_safe, args=(target, conn, until, lat, count, *extra)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    merged = {k: sum(c[k] for c in counts) for k in counts[0]}
    merged["latencies"] = [x for lat in lats for x in lat]
    return merged


def _safe(target, *args):
    try:
        target(*args)
    except Exception as exc:  # counted as an error; the phase goes on with the other users
        print(f"bench: a client stopped: {exc}", file=sys.stderr)


def run_phase(kind: str, targets: list[tuple[str, int]], users: int, procs: int, seconds: float, rules: str,
              bot: str, pgids: list[int] = (), rerolls: int = 2, think: float = 0.0, database=None) -> dict:
    """One phase of `seconds`; `pgids`: the servers' process groups, `database`: a PostgreSQL server whose
    CPU time is counted apart (bench_api_postgres.Postgres)."""
    start = time.time() + 0.5
    share = [users // procs + (1 if i < users % procs else 0) for i in range(procs)]
    firsts = [sum(share[:i]) for i in range(procs)]
    with mp.get_context("fork").Pool(procs) as pool:
        pending = pool.map_async(client_process, [(kind, targets, first, n, start, seconds, rules, bot, rerolls, think)
                                                  for first, n in zip(firsts, share) if n])
        time.sleep(max(0.0, start - time.time()))
        cpu0, db0 = server_cpu_seconds(pgids), database.cpu_seconds() if database else 0.0
        parts = pending.get()
        cpu1, db1 = server_cpu_seconds(pgids), database.cpu_seconds() if database else 0.0
    lat = sorted(x for p in parts for x in p["latencies"])
    total = {k: sum(p[k] for p in parts) for k in ("requests", "errors", "turns", "games")}
    return {
        "requests": total["requests"],
        "errors": total["errors"],
        "requests_per_s": round(total["requests"] / seconds, 1),
        "turns": total["turns"],
        "turns_per_s": round(total["turns"] / seconds, 1),
        "games_started": total["games"],
        "p50_ms": round(1000 * statistics.median(lat), 2) if lat else None,
        "p99_ms": round(1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))], 2) if lat else None,
        "server_cpu_cores": round((cpu1 - cpu0) / seconds, 2),
        "server_cpu_us_per_request": round(1e6 * (cpu1 - cpu0) / total["requests"], 1) if total["requests"] else None,
        "database_cpu_us_per_request": (round(1e6 * (db1 - db0) / total["requests"], 1)
                                        if database and total["requests"] else None),
    }


# --- the server ----------------------------------------------------------------------------

def server_cpu_seconds(pgids) -> float:
    """User + system CPU time of every process in the servers' process groups (masters and workers)."""
    pgids = set(pgids)
    return seconds(sum(p.ticks for p in process_times().values() if p.group in pgids))


# One address plays every game: no rate limit, no quota of unfinished games; or (--with-limits) limits and quota
# counted as usual but too high to refuse anything, to see what counting them costs.
LIMITS_OFF = {"FAIRDICE_RATE_CREATE": "off", "FAIRDICE_RATE_MOVES_CLIENT": "off", "FAIRDICE_RATE_MOVES_TOKEN": "off",
              "FAIRDICE_MAX_UNFINISHED": "0"}
LIMITS_HIGH = {"FAIRDICE_RATE_CREATE": "1000000/s", "FAIRDICE_RATE_MOVES_CLIENT": "1000000/s",
               "FAIRDICE_RATE_MOVES_TOKEN": "1000000/s", "FAIRDICE_MAX_UNFINISHED": "1000000"}


def start_server(data_dir: str, workers: int, threads: int, db: str | None = None, extra_env: dict | None = None
                 ) -> tuple[subprocess.Popen, str, int]:
    """`fairdice serve` in its own process group; servers given the same data directory share its keys (and,
    without `db`, its SQLite database)."""
    cmd = [sys.executable, "-m", "fairdice", "serve", "--host", "127.0.0.1", "--port", "0",
           "--data-dir", data_dir, "--workers", str(workers), "--threads", str(threads), *(["--db", db] if db else [])]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **LIMITS_OFF, **(extra_env or {})}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                            start_new_session=True, env=env)
    output = []
    deadline = time.time() + 60
    for line in proc.stdout:
        output.append(line)
        match = re.search(r"serving at http://([\d.]+):(\d+)", line)
        if match:
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            host, port = match.group(1), int(match.group(2))
            while time.time() < deadline:  # wait for the workers
                try:
                    if Conn(host, port).request("GET", "/healthz")[0] == 200:
                        return proc, host, port
                except OSError:
                    time.sleep(0.05)
            break
        if time.time() > deadline:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("bench: fairdice serve did not start:\n" + "".join(output[-20:]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="concurrent games (and connections)")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each phase")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per server worker (the server's default: 8)")
    parser.add_argument("--servers", type=int, default=1, help="fairdice serve processes on the same database")
    parser.add_argument("--db", help="postgres: a throwaway PostgreSQL server; or a postgresql:// URL "
                                     "(default: SQLite in a fresh data directory)")
    parser.add_argument("--clients", type=int, default=2, help="load generator processes")
    parser.add_argument("--rules", default="classic13")
    parser.add_argument("--bot", default="ev")
    parser.add_argument("--rerolls", type=int, default=2, choices=(0, 1, 2),
                        help="rerolls per turn at most (keeping the most common face); 0: roll once, then score")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of games before measuring")
    parser.add_argument("--think", type=float, default=0.0,
                        help="milliseconds each game waits before a move, in a third phase measuring latency")
    parser.add_argument("--with-limits", action="store_true",
                        help="count rate limits and the quota (set too high to refuse anything) instead of turning "
                             "them off")
    parser.add_argument("--profile", metavar="DIR", help="profile the servers' request threads (games only, no "
                                                         "no-op phase) into DIR and print where their time goes")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure the no-op and the game phases this many times, interleaved, and report the "
                             "medians (on a shared machine, load that comes and goes then falls on both alike)")
    parser.add_argument("--synchronous", type=synchronous_settings, metavar="normal,full",
                        help="measure servers of each of these FAIRDICE_SYNCHRONOUS settings, interleaved, and "
                             "compare their turns a second (default: the server's default alone)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.synchronous:
        return compare_synchronous(args)

    with contextlib.ExitStack() as stack:
        database, db_url = None, args.db
        if args.db in ("postgres", "postgresql"):
            from bench_api_postgres import temporary_postgres

            database = stack.enter_context(temporary_postgres(max_connections=50 + 20 * args.servers * args.workers
                                                              * args.threads))
            db_url = database.url
        data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="fairdice-bench-"))
        floor = None if args.profile else stack.enter_context(open_floor(data_dir, db_url, "default"))
        report = measure(args, data_dir, db_url, database, floor=floor)
    report["database"] = "sqlite" if not db_url else "postgresql"
    if args.profile:
        from bench_api_workerprof import summary

        games = report["games"]
        print(f"profiled: {games['requests_per_s']} game requests/s, {games['server_cpu_us_per_request']} us server "
              f"CPU each (under cProfile)\n" + summary(Path(args.profile)))
        return 0
    if args.json:
        print(json.dumps(report))
    else:
        print_report(args, report)
    return 0


def synchronous_settings(text: str) -> list[str]:
    settings = [part.strip().upper() for part in text.split(",") if part.strip()]
    if not settings or any(s not in ("OFF", "NORMAL", "FULL", "EXTRA") for s in settings):
        raise argparse.ArgumentTypeError("a comma-separated list of off, normal, full, extra")
    return settings


def measure(args, data_dir: str, db_url: str | None, database, extra_env: dict | None = None, floor=None) -> dict:
    """The phases of `args` on servers of their own (`extra_env`: more of their environment); `floor`: the
    protocol floor to measure in each round (bench_api_floor.Floor)."""
    return finish(args, start_servers(args, data_dir, db_url, extra_env), database, floor)


def open_floor(data_dir: str, db_url: str | None, name: str, extra_env: dict | None = None):
    """The protocol floor's own service (keys, database: a SQLite file, or a schema of its own on `db_url`),
    with the servers' settings (`extra_env`)."""
    from bench_api_floor import Floor

    url = own_schema(db_url, f"floor_{name}") if db_url else None
    return Floor(os.path.join(data_dir, f"floor-{name}"), url, extra_env)


def start_servers(args, data_dir: str, db_url: str | None, extra_env: dict | None = None) -> list:
    """`args.servers` servers on one database (the first makes the keys and the schema): (proc, host, port)."""
    env = {**(LIMITS_HIGH if args.with_limits else {}), **(extra_env or {})}
    if args.profile:
        from bench_api_workerprof import environment

        env.update(environment(Path(args.profile)))
    servers = []
    try:
        for _ in range(args.servers):
            servers.append(start_server(data_dir, args.workers, args.threads, db_url, env))
    except BaseException:
        stop_servers(servers)
        raise
    return servers


def stop_servers(servers: list) -> None:
    for proc, _, _ in servers:
        os.killpg(proc.pid, signal.SIGTERM)
    for proc, _, _ in servers:
        proc.wait(15)


def finish(args, servers: list, database, floor=None) -> dict:
    """Warm `servers` up, measure them as `args` says, and stop them: the report."""
    load_before = os.getloadavg()
    try:
        measured = Measured(args, servers, database, floor)
        measured.warm_up()
        if args.profile:
            return {"games": measured.phase("games")}
        rounds = [measured.round() for _ in range(max(1, args.rounds))]
        paced = measured.paced() if args.think else None
    finally:
        stop_servers(servers)
    return report_of(args, rounds, paced, load_before)


class Measured:
    """The phases of one set of servers (on one database)."""

    def __init__(self, args, servers: list, database, floor=None):
        self.args, self.database, self.floor = args, database, floor
        self.targets = [(host, port) for _, host, port in servers]
        self.pgids = [proc.pid for proc, _, _ in servers]
        self.common = dict(users=args.games, procs=args.clients, rules=args.rules, bot=args.bot,
                           rerolls=args.rerolls)

    def warm_up(self) -> None:
        run_phase("healthz", self.targets, seconds=1.0, **self.common)
        if self.args.warmup:
            run_phase("games", self.targets, seconds=self.args.warmup, **self.common)

    def phase(self, kind: str, think: float = 0.0) -> dict:
        return run_phase(kind, self.targets, seconds=self.args.seconds, pgids=self.pgids, database=self.database,
                         think=think, **self.common)

    def round(self) -> dict:
        """The no-op phase, the game phase, and the protocol floor measured in-process right after them (the
        servers idle meanwhile)."""
        phases = {kind: self.phase(kind) for kind in ("healthz", "games")}
        if self.floor is not None:
            phases["floor"] = self.floor.measure(database=self.database)
        return phases

    def paced(self) -> dict:
        return self.phase("games", think=self.args.think / 1000)


def report_of(args, rounds: list[dict], paced: dict | None, load_before) -> dict:
    phases = {kind: median_phase([r[kind] for r in rounds]) for kind in ("healthz", "games")}
    if paced is not None:
        phases["paced"] = paced
    if "floor" in rounds[0]:
        phases.update(floor_figures(rounds, paced))
    ratio = statistics.median(round_ratio(r) for r in rounds)
    return {"rounds": len(rounds), "round_ratios": sorted(round(round_ratio(r), 3) for r in rounds),
            "concurrent": args.games, "seconds": args.seconds, "warmup": args.warmup, "servers": args.servers,
            "limits": "counted" if args.with_limits else "off",
            "workers": args.workers, "threads": args.threads, "clients": args.clients, "cpus": os.cpu_count(),
            "rules": args.rules, "bot": args.bot, "rerolls": args.rerolls, **phases, "ratio": round(ratio, 3),
            "goal_met": ratio >= 0.5, "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def compare_synchronous(args) -> int:
    """Servers of every `--synchronous` setting, each on a database of its own, measured round by round in
    turn: each setting's report, and its turns a second against the first setting's."""
    settings = args.synchronous
    with contextlib.ExitStack() as stack:
        database, base_url = None, args.db
        if args.db in ("postgres", "postgresql"):
            from bench_api_postgres import temporary_postgres

            database = stack.enter_context(temporary_postgres(
                max_connections=50 + 20 * len(settings) * args.servers * args.workers * args.threads))
            base_url = database.url
        data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="fairdice-bench-"))
        load_before = os.getloadavg()
        sets = {}
        try:
            for setting in settings:
                url = own_schema(base_url, setting.lower()) if base_url else None
                env = {"FAIRDICE_SYNCHRONOUS": setting}
                servers = start_servers(args, os.path.join(data_dir, setting.lower()), url, env)
                floor = None if args.profile else stack.enter_context(
                    open_floor(data_dir, base_url, setting.lower(), env))
                sets[setting] = (servers, Measured(args, servers, database, floor))
            for _, measured in sets.values():
                measured.warm_up()
            rounds = {setting: [] for setting in settings}
            for _ in range(max(1, args.rounds)):
                for setting, (_, measured) in sets.items():
                    rounds[setting].append(measured.round())
            paced = {setting: measured.paced() for setting, (_, measured) in sets.items()} if args.think else {}
        finally:
            for servers, _ in sets.values():
                stop_servers(servers)
    first = settings[0]
    reports = {setting: report_of(args, rounds[setting], paced.get(setting), load_before) for setting in settings}
    for setting in settings:
        ratios = sorted(r["games"]["turns_per_s"] / f["games"]["turns_per_s"] if f["games"]["turns_per_s"] else 0.0
                        for r, f in zip(rounds[setting], rounds[first]))
        reports[setting]["turns_vs_first"] = round(statistics.median(ratios), 3)
        reports[setting]["round_turns_vs_first"] = [round(r, 3) for r in ratios]
        reports[setting]["database"] = "sqlite" if not base_url else "postgresql"
    if args.json:
        print(json.dumps({"synchronous": settings, "reports": reports}))
        return 0
    for setting in settings:
        print(f"FAIRDICE_SYNCHRONOUS={setting}:")
        print_report(args, reports[setting])
        if setting != first:
            rounds_text = ", ".join(f"{r:.2f}" for r in reports[setting]["round_turns_vs_first"])
            print(f"  turns a second against {first}: {reports[setting]['turns_vs_first']:.2f} (rounds: {rounds_text})")
    return 0


def own_schema(url: str, name: str) -> str:
    """`url` with the search path set to a schema `name` of its own, made if missing."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS bench_{name}")
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3Dbench_{name}"


def floor_figures(rounds: list[dict], paced: dict | None) -> dict:
    """The protocol floor (each part's median over the rounds) and the server's CPU per game request against it:
    `cpu_vs_floor` is the median of the rounds' ratios (each round's game phase against its own floor)."""
    floors = [r["floor"] for r in rounds]
    floor = {key: (round(statistics.median(f[key] for f in floors), 1) if isinstance(floors[0][key], float)
                   else floors[0][key]) for key in floors[0]}
    ratios = sorted(r["games"]["server_cpu_us_per_request"] / r["floor"]["us_per_request"] for r in rounds
                    if r["games"]["server_cpu_us_per_request"])
    out = {"floor": floor, "cpu_vs_floor": round(statistics.median(ratios), 2) if ratios else None,
           "round_cpu_vs_floor": [round(x, 2) for x in ratios]}
    if paced is not None and paced["server_cpu_us_per_request"]:
        out["paced_cpu_vs_floor"] = round(paced["server_cpu_us_per_request"] / floor["us_per_request"], 2)
    return out


def round_ratio(phases: dict) -> float:
    """Game requests per second over no-op requests per second, of one round."""
    baseline = phases["healthz"]["requests_per_s"]
    return phases["games"]["requests_per_s"] / baseline if baseline else 0.0


def median_phase(runs: list[dict]) -> dict:
    """The median of each figure over the rounds of a phase (counts summed)."""
    if len(runs) == 1:
        return runs[0]
    out = {}
    for key in runs[0]:
        values = [run[key] for run in runs if run[key] is not None]
        if key in ("requests", "errors", "turns", "games_started"):
            out[key] = sum(values)
        else:
            out[key] = round(statistics.median(values), 2) if values else None
    return out


def print_report(args, report: dict) -> None:
    games, baseline = report["games"], report["healthz"]
    servers = f"{args.servers} servers x " if args.servers > 1 else ""
    limits = ", rate limits and quota counted" if args.with_limits else ""
    print(f"fairdice serve on {report['database']}{limits}: {servers}{args.workers} workers x {args.threads} threads, "
          f"{args.games} concurrent connections from {args.clients} client processes, {args.seconds:g} s per phase "
          f"after {args.warmup:g} s of games, {os.cpu_count()} CPUs; load average "
          f"{report['load_average_before'][0]} before, {report['load_average_after'][0]} after")
    phases = [(f"no-op GET {NOOP_PATH}", baseline), ("game roll+score", games)]
    if "paced" in report:
        phases.append((f"games, {args.think:g} ms think", report["paced"]))
    for label, phase in phases:
        database = phase["database_cpu_us_per_request"]
        print(f"  {label:<20} {phase['requests_per_s']:>8.1f} req/s   p50 {phase['p50_ms']} ms  "
              f"p99 {phase['p99_ms']} ms   server CPU {phase['server_cpu_us_per_request']} us/request "
              f"({phase['server_cpu_cores']} cores busy)" + (f" + database {database} us" if database else ""))
    per_turn = games["requests"] / games["turns"] if games["turns"] else 0
    print(f"  complete turns       {games['turns_per_s']:>8.1f} turns/s ({args.rules}; {per_turn:.2f} requests a "
          f"turn, up to {args.rerolls} rerolls; each followed by the {args.bot} bot's turn, played "
          f"server-side); {games['games_started']} games")
    if "floor" in report:
        floor = report["floor"]
        print(f"  protocol floor       {floor['us_per_request']:>8.1f} us/request in-process (dice {floor['dice_us']}, "
              f"receipt {floor['receipt_us']}, {floor['synchronous']} append {floor['append_us']}, JSON "
              f"{floor['json_us']}); server CPU per game request / floor: {report['cpu_vs_floor']:.2f}")
    errors = sum(report[name]["errors"] for name in ("healthz", "games", "paced") if name in report)
    rounds = (f", median of {report['rounds']} interleaved rounds: {', '.join(f'{r:.2f}' for r in report['round_ratios'])}"
              if report["rounds"] > 1 else "")
    print(f"  game/no-op ({NOOP_PATH}) request rate: {report['ratio']:.2f}{rounds} (issue 14's goal of 0.5, retired "
          f"by issue 21: it measured the load generator and the machine); errors {errors}")


if __name__ == "__main__":
    sys.exit(main())
