"""granian against `fairdice serve`'s gunicorn worker: the same app, the same load, server CPU per request.

Starts `fairdice serve` (gunicorn with api.worker's BufferedThreadWorker) and granian (a Rust HTTP server
that runs WSGI apps: `--interface wsgi`) on the same app (`api.create_app`, one data directory each, prepared
as `fairdice serve` prepares it), both with `--workers` processes of `--threads` threads, then measures with
bench_api.py's load generator, round after round, each server's no-op (`GET /livez`) and game phases
interleaved (gunicorn no-op, granian no-op, gunicorn games, granian games), and reports per server the median
CPU time per request (all its processes, from /proc), requests a second and p50/p99, and granian's CPU per
request against gunicorn's (the median of the rounds' ratios).

granian is not a dependency of fairdice: install it where this script can import it, e.g.
`pip install --target /tmp/granian-lib granian==2.8.0` and `--granian-path /tmp/granian-lib`.

    python bench/bench_api_granian.py [--rounds 3] [--seconds 5] [--workers 2] [--threads 8] [--games 50]
                                      [--granian-path DIR] [--json] [--refusals]

`--refusals` measures nothing: it sends each server the requests its HTTP layer must refuse or bear (the operations
tests' cases: header fields and head sizes around the README's limits, malformed request lines and framing,
slow bodies holding threads, a head that never ends) and prints what each answered.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_api import LIMITS_OFF, REPO, Conn, run_phase, start_server

BENCH = Path(__file__).resolve().parent


def wsgi_app():
    """(In each granian worker.) The app `fairdice serve` serves, on the FAIRDICE_* settings of the environment."""
    from api.app import create_app
    from api.config import settings

    return create_app(settings().as_config())


def prepare(data_dir: str) -> None:
    """Database and keys made once, before any worker starts (what `fairdice serve`'s master does)."""
    from api.config import settings
    from api.serve import prepare_storage

    prepare_storage(settings({"data_dir": data_dir}))


def start_granian(data_dir: str, workers: int, threads: int, granian_path: str | None) -> tuple:
    prepare(data_dir)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    paths = [p for p in (granian_path, str(BENCH), str(REPO), os.environ.get("PYTHONPATH")) if p]
    env = {**os.environ, **LIMITS_OFF, "FAIRDICE_DATA_DIR": data_dir, "FAIRDICE_TABLES": "lazy",
           "PYTHONPATH": os.pathsep.join(paths)}
    cmd = [sys.executable, "-m", "granian", "--interface", "wsgi", "--host", "127.0.0.1", "--port", str(port),
           "--workers", str(workers), "--blocking-threads", str(threads), "--runtime-threads", "1", "--http", "1",
           "--no-ws", "--log-level", "warning", "--factory", "bench_api_granian:wsgi_app"]
    proc = subprocess.Popen(cmd, cwd=BENCH, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if Conn("127.0.0.1", port).request("GET", "/healthz")[0] == 200:
                return proc, "127.0.0.1", port
        except OSError:
            time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("bench: granian did not start (is it installed? --granian-path)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--granian-path", help="a directory holding the granian package (pip install --target)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--refusals", action="store_true", help="compare what each server answers to requests "
                                                                "its HTTP layer must refuse or bear")
    args = parser.parse_args(argv)
    if args.refusals:
        return compare_refusals(args)
    common = dict(users=args.games, procs=args.clients, rules="classic13", bot="ev", rerolls=2)
    with tempfile.TemporaryDirectory(prefix="fairdice-bench-granian-") as data:
        servers = {}
        try:
            servers["gunicorn"] = start_server(os.path.join(data, "gunicorn"), args.workers, args.threads)
            servers["granian"] = start_granian(os.path.join(data, "granian"), args.workers, args.threads,
                                               args.granian_path)
            for _, host, port in servers.values():
                run_phase("healthz", [(host, port)], seconds=1.0, **common)
                run_phase("games", [(host, port)], seconds=args.warmup, **common)
            rounds = {name: {"noop": [], "games": []} for name in servers}
            for _ in range(args.rounds):
                for kind in ("noop", "games"):
                    for name, (proc, host, port) in servers.items():
                        rounds[name][kind].append(run_phase("healthz" if kind == "noop" else "games",
                                                            [(host, port)], seconds=args.seconds,
                                                            pgids=[proc.pid], **common))
        finally:
            for proc, _, _ in servers.values():
                os.killpg(proc.pid, signal.SIGTERM)
            for proc, _, _ in servers.values():
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
    report = summarize(args, rounds)
    print(json.dumps(report) if args.json else render(report))
    return 0


FIGURES = ("server_cpu_us_per_request", "requests_per_s", "p50_ms", "p99_ms", "errors")


def summarize(args, rounds: dict) -> dict:
    out = {"workers": args.workers, "threads": args.threads, "concurrent": args.games, "rounds": args.rounds,
           "seconds": args.seconds, "cpus": os.cpu_count()}
    for name, kinds in rounds.items():
        out[name] = {kind: {figure: statistics.median(run[figure] for run in runs) for figure in FIGURES}
                     for kind, runs in kinds.items()}
    for kind in ("noop", "games"):
        ratios = sorted(b["server_cpu_us_per_request"] / a["server_cpu_us_per_request"]
                        for a, b in zip(rounds["gunicorn"][kind], rounds["granian"][kind]))
        out[f"granian_vs_gunicorn_cpu_{kind}"] = round(statistics.median(ratios), 3)
        out[f"granian_vs_gunicorn_cpu_{kind}_rounds"] = [round(r, 3) for r in ratios]
    return out


def render(report: dict) -> str:
    lines = [f"{report['workers']} workers x {report['threads']} threads, {report['concurrent']} connections, "
             f"median of {report['rounds']} interleaved rounds of {report['seconds']:g} s"]
    for name in ("gunicorn", "granian"):
        for kind in ("noop", "games"):
            r = report[name][kind]
            lines.append(f"  {name:<9} {kind:<6} {r['server_cpu_us_per_request']:>7.1f} us/request  "
                         f"{r['requests_per_s']:>7.1f} req/s  p50 {r['p50_ms']} ms  p99 {r['p99_ms']} ms  "
                         f"errors {r['errors']}")
    lines.append(f"  granian CPU per request / gunicorn's: no-op {report['granian_vs_gunicorn_cpu_noop']}, "
                 f"games {report['granian_vs_gunicorn_cpu_games']}")
    return "\n".join(lines)


# (what is sent, and what the README and the operations tests say fairdice answers)
HEAD = b"GET /livez HTTP/1.1\r\nHost: x\r\n"
CLOSE = b"Connection: close\r\n\r\n"
REFUSAL_CASES = [
    ("99 more header fields", HEAD + b"".join(b"X-F%d: a\r\n" % i for i in range(99)) + CLOSE, "200"),
    ("998 more header fields", HEAD + b"".join(b"X-F%d: a\r\n" % i for i in range(998)) + CLOSE, "200"),
    ("1000 more header fields", HEAD + b"".join(b"X-F%d: a\r\n" % i for i in range(1000)) + CLOSE, "431 problem"),
    ("one 9 KB header", HEAD + b"X-Big: " + b"a" * 9000 + b"\r\n" + CLOSE, "200"),
    ("one 70 KB header (head > 64 KiB)", HEAD + b"X-Big: " + b"a" * 70000 + b"\r\n" + CLOSE, "431 problem"),
    ("byte 0xFF in the path", b"GET /v1/games/\xff HTTP/1.1\r\nHost: x\r\n" + CLOSE, "400 problem"),
    ("a request line that is no request line", b"GARBAGE\r\n\r\n", "400 problem"),
    ("a malformed header field", HEAD + b"Bad Header: x\r\n" + CLOSE, "400 problem"),
    ("Content-Length: abc", b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n" + CLOSE,
     "400 problem"),
    ("a malformed chunk", b"POST /v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                          b"Connection: close\r\n\r\nzz\r\n\r\n", "400 problem"),
    ("HTTP/2.0 in an HTTP/1 request line", b"GET /livez HTTP/2.0\r\nHost: x\r\n\r\n", "400 problem"),
]


def _exchange(host: str, port: int, data: bytes, wait: float = 3.0) -> bytes:
    with socket.create_connection((host, port)) as sock:
        sock.settimeout(wait)
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionError):
            pass
    return out


def _verdict(answer: bytes) -> str:
    """"<status>", "<status> problem" (a problem document), "<status> empty"/"<status> html", or "nothing"."""
    head, _, body = answer.partition(b"\r\n\r\n")
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    if not match:
        return "nothing"
    status = match[1].decode()
    if status.startswith("2"):
        return status
    if re.search(rb"(?im)^content-type: *application/problem\+json", head):
        return f"{status} problem"
    return f"{status} {'empty' if not body else 'other body'}"


def _slow_bodies(host: str, port: int, count: int) -> str:
    """`count` clients send a head and 1 byte of a 100-byte body and wait; then can another client be served?"""
    slow = [socket.create_connection((host, port)) for _ in range(count)]
    try:
        for sock in slow:
            sock.sendall(b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{")
        time.sleep(1.0)
        started = time.monotonic()
        verdict = _verdict(_exchange(host, port, HEAD + CLOSE, wait=5.0))
        return f"{verdict} after {time.monotonic() - started:.1f} s"
    finally:
        for sock in slow:
            sock.close()


def _half_head(host: str, port: int, wait: float) -> str:
    """A head that never ends: what is answered, and when."""
    started = time.monotonic()
    verdict = _verdict(_exchange(host, port, b"GET /livez HTTP/1.1\r\nHo", wait=wait))
    return f"{verdict} after {time.monotonic() - started:.0f} s"


def compare_refusals(args) -> int:
    with tempfile.TemporaryDirectory(prefix="fairdice-bench-granian-") as data:
        servers = {}
        try:
            servers["gunicorn"] = start_server(os.path.join(data, "gunicorn"), 1, args.threads)
            servers["granian"] = start_granian(os.path.join(data, "granian"), 1, args.threads, args.granian_path)
            rows = [(name, expected, {server: _verdict(_exchange(host, port, data_))
                                      for server, (_, host, port) in servers.items()})
                    for name, data_, expected in REFUSAL_CASES]
            rows.append((f"{3 * args.threads} slow bodies, then GET /livez", "200",
                         {server: _slow_bodies(host, port, 3 * args.threads)
                          for server, (_, host, port) in servers.items()}))
            rows.append(("half a head, then silence", "408 problem within the read timeout (10 s)",
                         {server: _half_head(host, port, 35.0) for server, (_, host, port) in servers.items()}))
        finally:
            for proc, _, _ in servers.values():
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(15)
    if args.json:
        print(json.dumps([{"case": name, "fairdice_needs": expected, **answers} for name, expected, answers in rows]))
        return 0
    print(f"{'case':<40} {'fairdice needs':<24} {'gunicorn (fairdice serve)':<28} granian")
    for name, expected, answers in rows:
        print(f"{name:<40} {expected:<24} {answers['gunicorn']:<28} {answers['granian']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
