"""Sessions (SPEC §10): rolls per second over HTTP, a 10,000-roll session's speed, and the verifier on it.

Starts `fairdice serve` on a loopback port with a fresh data directory (SQLite, rate limits off: one address
makes every request), then measures in the same run:

1. baseline: `GET /livez` (the server's JSON no-op) from C concurrent keep-alive connections;
2. rolls: C concurrent sessions, each connection rolling a mix of notations in its own session as fast as the
   server answers (`POST /v1/sessions/{id}/rolls`); reported: rolls per second, their ratio to the no-op rate,
   p50/p99 latency, and the server's CPU seconds per roll (all its processes, from /proc);
3. a long session: one session rolled 10,000 times in a row over one connection; the p50 latency of its first
   and of its last 500 rolls (a roll resumes from the last stored event, so they should match), then a rotation
   and the time to answer `GET /v1/sessions/{id}/log` of the 10,000 rolls;
4. the verifier (`verifier.sessions`, in this process) on that log: CPU seconds and rolls per second, against its
   floor measured in the same run: the HMAC-SHA256 of every die and the two Ed25519 checks of the log.

    python bench/bench_sessions.py [--connections 8] [--seconds 6] [--rolls 10000] [--workers 2] [--threads 4]
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_api import Conn, server_cpu_seconds, start_server  # noqa: E402

NOTATIONS = ["4d6kh3", "2d20kl1", "d100", "3d6+2", "1d1000-7", "10d2", "6d6kl2", "d20", "2d12kh1-3", "5d8"]


def opened(conn: Conn) -> tuple[str, str]:
    status, body = conn.request("POST", "/v1/sessions", {})
    doc = json.loads(body)
    assert status == 201, doc
    sid, token = doc["session_id"], doc["token"]
    status, body = conn.request("POST", f"/v1/sessions/{sid}/client-seed", {"client_seed": "bench"}, token)
    assert status == 200, body
    return sid, token


def phase(host: str, port: int, connections: int, seconds: float, kind: str) -> dict:
    """`kind` "noop" or "rolls": requests per second from `connections` threads for `seconds`."""
    latencies: list[float] = []
    counts = [0]
    lock = threading.Lock()
    start_gate = threading.Barrier(connections + 1)

    def run():
        conn = Conn(host, port)
        sid, token = opened(conn) if kind == "rolls" else (None, None)
        mine, i = [], 0
        start_gate.wait()
        until = deadline[0]
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            if kind == "noop":
                status, _ = conn.request("GET", "/livez")
            else:
                status, _ = conn.request("POST", f"/v1/sessions/{sid}/rolls", {"dice": NOTATIONS[i % 10]}, token)
            mine.append(time.perf_counter() - t0)
            assert status == 200, status
            i += 1
        with lock:
            latencies.extend(mine)
            counts[0] += len(mine)

    deadline = [0.0]
    threads = [threading.Thread(target=run) for _ in range(connections)]
    for t in threads:
        t.start()
    deadline[0] = time.perf_counter() + seconds + 0.5
    start_gate.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    latencies.sort()
    return {"requests": counts[0], "per_second": round(counts[0] / elapsed, 1),
            "p50_ms": round(1000 * latencies[len(latencies) // 2], 2),
            "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 2)}


def long_session(host: str, port: int, rolls: int) -> tuple[dict, dict]:
    conn = Conn(host, port)
    sid, token = opened(conn)
    latencies = []
    for i in range(rolls):
        t0 = time.perf_counter()
        status, _ = conn.request("POST", f"/v1/sessions/{sid}/rolls", {"dice": NOTATIONS[i % 10]}, token)
        latencies.append(time.perf_counter() - t0)
        assert status == 200
    status, _ = conn.request("POST", f"/v1/sessions/{sid}/rotate", {}, token)
    assert status == 200
    t0 = time.perf_counter()
    status, body = conn.request("GET", f"/v1/sessions/{sid}/log")
    first_log = time.perf_counter() - t0
    t0 = time.perf_counter()
    conn.request("GET", f"/v1/sessions/{sid}/log")
    cached_log = time.perf_counter() - t0
    window = min(500, rolls // 4)
    first, last = statistics.median(latencies[:window]), statistics.median(latencies[-window:])
    return ({"rolls": rolls, "first_p50_ms": round(1000 * first, 3), "last_p50_ms": round(1000 * last, 3),
             "last_vs_first": round(last / first, 2), "log_bytes": len(body),
             "log_ms": round(1000 * first_log, 1), "log_again_ms": round(1000 * cached_log, 1)}, json.loads(body))


def verifier_speed(log: dict, public_key: bytes) -> dict:
    from verifier import keys
    from verifier.sessions import parse_notation, verify_session
    from verifier.spec import field, u32

    t0 = time.process_time()
    result = verify_session(log, "bench", trusted_keys=[public_key])
    cpu = time.process_time() - t0
    assert result.ok, result.failures[:3]
    rolls = [e for e in log["events"] if e["type"] == "roll"]
    seeds = {e["pair"]: bytes.fromhex(e["server_seed"]) for e in log["events"] if e["type"] == "rotate"}
    clients = {e["pair"]: e["client_seed"] for e in log["events"] if e["type"] == "client_seed"}
    sid = log["header"]["session_id"]
    prefixes = {p: field("fairdice/v1") + field("session-roll") + field(sid) + u32(1) + field(c)
                for p, c in clients.items()}
    t0 = time.process_time()  # the floor: one HMAC per die (its first block) and the two signatures
    dice = 0
    for e in rolls:
        count = parse_notation(e["dice"])[0]
        head = prefixes[e["pair"]] + u32(e["nonce"])
        for i in range(count):
            hmac.digest(seeds[e["pair"]], head + u32(i) + u32(0), "sha256")
        dice += count
    signed = {k: v for k, v in log.items() if k != "signature"}
    keys.signature_valid(public_key, log["signature"],
                         json.dumps(signed, sort_keys=True, separators=(",", ":")).encode())
    keys.signature_valid(public_key, log["commitment_signature"],
                         json.dumps(log["header"], sort_keys=True, separators=(",", ":")).encode())
    floor = time.process_time() - t0
    return {"rolls": len(rolls), "dice": dice, "cpu_s": round(cpu, 3), "rolls_per_cpu_s": round(len(rolls) / cpu),
            "floor_cpu_s": round(floor, 3), "vs_floor": round(cpu / floor, 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--rolls", type=int, default=10_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=4)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as data:
        proc, host, port = start_server(data, args.workers, args.threads)
        try:
            load_before = os.getloadavg()[0]
            noop = phase(host, port, args.connections, args.seconds, "noop")
            cpu0 = server_cpu_seconds([proc.pid])
            rolls = phase(host, port, args.connections, args.seconds, "rolls")
            rolls["server_cpu_ms_per_roll"] = round(1000 * (server_cpu_seconds([proc.pid]) - cpu0) / rolls["requests"],
                                                    3)
            rolls["vs_noop"] = round(rolls["per_second"] / noop["per_second"], 2)
            long, log = long_session(host, port, args.rolls)
            status, body = Conn(host, port).request("GET", "/v1/keys")
            public_key = bytes.fromhex(json.loads(body)["keys"][0]["public_key"])
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    report = {"noop": noop, "rolls": rolls, "long_session": long, "verifier": verifier_speed(log, public_key),
              "load_before": load_before, "load_after": os.getloadavg()[0], "cpus": os.cpu_count()}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
