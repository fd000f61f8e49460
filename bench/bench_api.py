"""HTTP API throughput: complete turns per second with 50 concurrent games, against a no-op endpoint.

Starts `fairdice serve` on a loopback port with a fresh data directory, then
measures, in the same run and with the same load generator:

1. baseline: `GET /healthz` (a JSON no-op of the same server) from C concurrent
   keep-alive connections;
2. games: C concurrent games (one human seat against a bot); each connection
   plays its own game turn after turn (`roll`, up to `--rerolls` rerolls
   keeping the most common face, then `score` the best box; the bot's whole
   turn is played server-side inside the score request) and starts a new game
   when one ends.

Reported: requests per second of each phase, their ratio (the goal: game
requests at least half the no-op rate), complete turns per second, p50/p99
latency per request, and the server's CPU time per request (all its
processes, from /proc), which says what each request costs the server even
when the machine is shared or the load generator is the bottleneck.  The load comes from several client processes (plain
`http.client`, keep-alive), which share the machine with the server; both
phases pay the same client cost.

    python bench/bench_api.py [--games 50] [--seconds 8] [--workers 2] [--threads 4] [--bot ev] [--rerolls 2] [--json]
"""

from __future__ import annotations

import argparse
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


def _healthz_loop(conn: Conn, until: float, lat: list, counts: dict) -> None:
    while time.perf_counter() < until:
        t0 = time.perf_counter()
        status, _ = conn.request("GET", "/healthz")
        lat.append(time.perf_counter() - t0)
        counts["requests"] += 1
        if status != 200:
            counts["errors"] += 1


def keep_most_common(dice: list[int]) -> list[int]:
    face = max(set(dice), key=lambda f: (dice.count(f), f))
    return [i for i, d in enumerate(dice) if d == face]


def _game_loop(conn: Conn, until: float, lat: list, counts: dict, rules: str, bot: str, rerolls: int) -> None:
    def call(method, path, body=None, token=None, timed=True):
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
    kind, host, port, users, start, seconds, rules, bot, rerolls = args
    time.sleep(max(0.0, start - time.time()))
    until = time.perf_counter() + seconds
    lats, counts, threads = [], [], []
    for _ in range(users):
        lat, count = [], {"requests": 0, "errors": 0, "turns": 0, "games": 0}
        lats.append(lat)
        counts.append(count)
        conn = Conn(host, port)
        target = _healthz_loop if kind == "healthz" else _game_loop
        extra = () if kind == "healthz" else (rules, bot, rerolls)
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


def run_phase(kind: str, host: str, port: int, users: int, procs: int, seconds: float, rules: str, bot: str,
              pgid: int | None = None, rerolls: int = 2) -> dict:
    start = time.time() + 0.5
    share = [users // procs + (1 if i < users % procs else 0) for i in range(procs)]
    with mp.get_context("fork").Pool(procs) as pool:
        pending = pool.map_async(client_process,
                                 [(kind, host, port, n, start, seconds, rules, bot, rerolls) for n in share if n])
        time.sleep(max(0.0, start - time.time()))
        cpu0 = server_cpu_seconds(pgid) if pgid else 0.0
        parts = pending.get()
        cpu1 = server_cpu_seconds(pgid) if pgid else 0.0
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
    }


# --- the server ----------------------------------------------------------------------------

def server_cpu_seconds(pgid: int) -> float:
    """User + system CPU time of every process in the server's process group (master and workers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # field 5 of stat: the process group
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def start_server(data_dir: str, workers: int, threads: int) -> tuple[subprocess.Popen, str, int]:
    cmd = [sys.executable, "-m", "fairdice", "serve", "--host", "127.0.0.1", "--port", "0",
           "--data-dir", data_dir, "--workers", str(workers), "--threads", str(threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                            start_new_session=True)
    deadline = time.time() + 30
    for line in proc.stdout:
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
    raise SystemExit("bench: fairdice serve did not start")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="concurrent games (and connections)")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each phase")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per server worker")
    parser.add_argument("--clients", type=int, default=2, help="load generator processes")
    parser.add_argument("--rules", default="classic13")
    parser.add_argument("--bot", default="ev")
    parser.add_argument("--rerolls", type=int, default=2, choices=(0, 1, 2),
                        help="rerolls per turn at most (keeping the most common face); 0: roll once, then score")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="fairdice-bench-") as data_dir:
        proc, host, port = start_server(data_dir, args.workers, args.threads)
        try:
            run_phase("healthz", host, port, args.games, args.clients, 1.0, args.rules, args.bot)  # warm up
            baseline = run_phase("healthz", host, port, args.games, args.clients, args.seconds, args.rules, args.bot,
                                 proc.pid)
            games = run_phase("games", host, port, args.games, args.clients, args.seconds, args.rules, args.bot,
                              proc.pid, args.rerolls)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
    ratio = games["requests_per_s"] / baseline["requests_per_s"] if baseline["requests_per_s"] else 0.0
    report = {"concurrent": args.games, "seconds": args.seconds, "workers": args.workers, "threads": args.threads,
              "clients": args.clients, "cpus": os.cpu_count(), "rules": args.rules, "bot": args.bot, "rerolls": args.rerolls,
              "healthz": baseline, "games": games, "ratio": round(ratio, 3), "goal_met": ratio >= 0.5}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"fairdice serve: {args.workers} workers x {args.threads} threads, {args.games} concurrent "
              f"connections from {args.clients} client processes, {args.seconds:g} s per phase, "
              f"{os.cpu_count()} CPUs")
        for label, phase in (("no-op GET /healthz", baseline), ("game roll+score", games)):
            print(f"  {label:<20} {phase['requests_per_s']:>8.1f} req/s   p50 {phase['p50_ms']} ms  "
                  f"p99 {phase['p99_ms']} ms   server CPU {phase['server_cpu_us_per_request']} us/request "
                  f"({phase['server_cpu_cores']} cores busy)")
        per_turn = games["requests"] / games["turns"] if games["turns"] else 0
        print(f"  complete turns       {games['turns_per_s']:>8.1f} turns/s ({args.rules}; {per_turn:.2f} requests a "
              f"turn, up to {args.rerolls} rerolls; each followed by the {args.bot} bot's turn, played "
              f"server-side); {games['games_started']} games")
        print(f"  game/no-op request rate: {ratio:.2f} (goal >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'})"
              f"; errors {baseline['errors'] + games['errors']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
