"""What auditors run: `fairdice-verify --audit` on classic13 logs of bots against each other, every bot decision
replayed and both signatures checked against a trusted key, on one core and on all cores, against the floor
measured in the same run.

    python bench/bench_audit.py [--games 400] [--repeat 3] [--pairs ev,optimal greedy,ev greedy,optimal]
                                [--dir DIR] [--tables DIR] [--jobs N] [--against ROOT] [--json]

The logs are made once with `fairdice simulate` (signed with a key of the bench's, kept in --dir with them), the
optimal table with `fairdice tables build` (into --tables, else fairdice's cache directory, where the verifier
looks by default). The floor of a log, the least any audit must do: read the file and parse it as strict JSON, one
HMAC-SHA256 per roll (SPEC §2.3), and the two Ed25519 verifications of a signed log (SPEC §6; the signed bytes
made before the timing).

One core: each measurement is a fresh process (the bots' replay starts with nothing cached, as a run does), which
times the floor and then the audit (`verify_all` of verifier.cli on one job, and the audit's aggregation) in CPU
time; its ratio is the audit's time over the floor's. All cores (the first pair): the command itself
(`python -m verifier --audit --pubkey KEY --jobs N`) against the floor on N processes, wall clock. The goal (issue
25): auditing the ev-against-optimal logs on one core costs at most 12x the floor.

`--against ROOT` also measures the verifier of another tree (a directory holding a `verifier` package, e.g. `git
worktree add /tmp/before HEAD`), interleaved with this one's, and checks that both give the same verdicts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL, GOAL_PAIR = 12.0, "ev,optimal"
RULES = "classic13"


# ------------------------------------------------------------------ the logs

def prepare(directory: Path, games: int, pairs: list[str], tables: str | None) -> tuple[Path, dict[str, Path]]:
    """The trusted key's file and each pair's directory of logs, made when missing."""
    directory.mkdir(parents=True, exist_ok=True)
    private, pubkey = directory / "key.pem", directory / "pubkey"
    if not private.exists():
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        key = Ed25519PrivateKey.generate()
        private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption()))
        pubkey.write_text(key.public_key().public_bytes_raw().hex())
    env = {**os.environ, **({"FAIRDICE_CACHE_DIR": tables} if tables else {})}
    subprocess.run(["fairdice", "tables", "build", "--rules", RULES], check=True, capture_output=True, env=env)
    logs = {}
    for pair in pairs:
        out = logs[pair] = directory / str(games) / pair.replace(",", "-")
        if not out.exists() or len(list(out.glob("*.json"))) != games:
            subprocess.run(["fairdice", "simulate", "--rules", RULES, "--bots", pair, "--games", str(games),
                            "--seed", f"bench-audit-{pair}", "--key", str(private), "--out", str(out)],
                           check=True, capture_output=True, env=env)
    return pubkey, logs


# ------------------------------------------------------------------ the floor (run with any tree's verifier)

def signed_parts(files: list[str]) -> list[tuple[bytes, str, bytes, str, bytes]]:
    """Per log: (key, commitment signature, canonical header, final signature, canonical unsigned log)."""
    from verifier import strictjson
    from verifier.reading import read_bytes
    from verifier.spec import canonical
    parts = []
    for path in files:
        doc = strictjson.loads(read_bytes(path))
        unsigned = {k: v for k, v in doc.items() if k != "signature"}
        parts.append((bytes.fromhex(doc["header"]["public_key"]), doc["commitment_signature"],
                      canonical(doc["header"]), doc["signature"], canonical(unsigned)))
    return parts


def floor(files: list[str], parts: list[tuple]) -> None:
    """Read and parse each log as strict JSON, one HMAC-SHA256 per roll over its message (SPEC §2.3), and the two
    Ed25519 verifications (verifier.keys, as the verifier makes them)."""
    import hmac
    import struct
    from verifier import keys, strictjson
    from verifier.reading import read_bytes
    from verifier.spec import field, u32
    pack = struct.Struct(">IIII").pack
    for path, (key, commitment_signature, header, signature, log) in zip(files, parts):
        doc = strictjson.loads(read_bytes(path))
        seed = bytes.fromhex(doc["final"]["server_seed"])
        seeds, prefix = [], b""
        for e in doc["events"]:
            kind = e["type"]
            if kind == "roll":
                hmac.digest(seed, prefix + pack(e["seat"], e["turn"], e["roll"], 0), "sha256")
            elif kind == "client_seed":  # (they all come before the first roll)
                seeds.append(e["client_seed"])
                prefix = (field("fairdice/v1") + field("roll") + field(doc["header"]["game_id"])
                          + u32(len(seeds)) + b"".join(field(c) for c in seeds))
        if not (keys.signature_valid(key, commitment_signature, header) and keys.signature_valid(key, signature, log)):
            raise SystemExit(f"{path}: the signatures of a benchmark log do not verify")


# ------------------------------------------------------------------ one core: a worker process per measurement

def worker(tree: str, logs: str, pubkey: str, tables: str | None) -> dict:
    """In a fresh process, with the verifier of `tree`: the floor, then the audit on one core (CPU seconds)."""
    sys.path.insert(0, tree)
    from verifier import audit, cli, keys
    from verifier.files import find_logs
    files = find_logs([logs])[0]
    parts = signed_parts(files)
    t = time.process_time()
    floor(files, parts)
    floor_cpu = time.process_time() - t
    options = {"trusted_keys": keys.TrustedKeys(keys.load_trusted_keys(pubkey)), "require_signature": True,
               "check_bots": True, "tables": tables, "verbose": False, "audit": True, "receipts": [],
               "receipts_by_game": True, "move_receipts": []}  # as `fairdice-verify --audit --pubkey` has them
    verdicts = hashlib.sha256()
    t = time.process_time()
    aggregate = audit.Audit()
    for r in cli.verify_all(files, options, 1, progress=False):
        aggregate.add(r)
        verdicts.update(json.dumps(cli.game_json(r), sort_keys=True).encode())
    report = aggregate.report()
    audit_cpu = time.process_time() - t
    return {"logs": len(files), "verified": report["verified"], "floor_cpu": floor_cpu, "audit_cpu": audit_cpu,
            "verdicts": verdicts.hexdigest()}


def one_core(tree: Path, logs: Path, pubkey: Path, tables: str | None) -> dict:
    args = [sys.executable, __file__, "--worker", str(tree), str(logs), str(pubkey)] + (
        ["--tables", tables] if tables else [])
    p = subprocess.run(args, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if p.returncode != 0:
        raise SystemExit(f"the worker for {tree} failed:\n{p.stderr}")
    return json.loads(p.stdout)


# ------------------------------------------------------------------ all cores

_SIGNED: tuple[list[str], list[tuple]] = ([], [])  # (files, their signed parts): made before the pool forks


def _floor_chunk(indices: range) -> None:
    files, parts = _SIGNED
    floor([files[i] for i in indices], [parts[i] for i in indices])


def all_cores(tree: Path, logs: Path, pubkey: Path, tables: str | None, jobs: int) -> dict:
    """Wall clock of the command on `jobs` processes, and of the floor on as many."""
    global _SIGNED
    sys.path.insert(0, str(ROOT))
    from verifier.files import find_logs
    files = find_logs([str(logs)])[0]
    _SIGNED = files, signed_parts(files)
    chunks = [range(i, len(files), jobs) for i in range(jobs)]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        pool.map(len, chunks)  # the workers are up
        t = time.perf_counter()
        pool.map(_floor_chunk, chunks)
        floor_wall = time.perf_counter() - t
    cmd = [sys.executable, "-m", "verifier", "--audit", "--json", "--pubkey", str(pubkey), "--jobs", str(jobs),
           str(logs)] + (["--tables", tables] if tables else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tree)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(p.stdout)
    return {"logs": len(files), "verified": report["audit"]["verified"], "exit": p.returncode, "wall": wall,
            "cpu": after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, "floor_wall": floor_wall}


# ------------------------------------------------------------------ the run

def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=400, help="logs per pair of bots")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--pairs", nargs="+", default=[GOAL_PAIR, "greedy,ev", "greedy,optimal"],
                        help="the bots of each set of logs, two seats (the first set also runs on all cores)")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "fairdice-bench-audit"))
    parser.add_argument("--tables", help="the optimal tables' directory (default: fairdice's cache directory)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="all cores: worker processes")
    parser.add_argument("--against", metavar="ROOT", help="also measure the verifier package under ROOT")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--worker", nargs=3, metavar=("TREE", "LOGS", "PUBKEY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker, args.tables)))
        return 0
    tables = os.path.abspath(args.tables) if args.tables else None
    pubkey, logs = prepare(Path(args.dir), args.games, args.pairs, tables)
    trees = {"this": ROOT, **({"against": Path(args.against).resolve()} if args.against else {})}
    single = {pair: {name: [] for name in trees} for pair in args.pairs}
    multi = {name: [] for name in trees}
    for round_ in range(args.repeat):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))  # interleaved, alternating who goes first
        for pair in args.pairs:
            for name in order:
                single[pair][name].append(one_core(trees[name], logs[pair], pubkey, tables))
        for name in order:
            multi[name].append(all_cores(trees[name], logs[args.pairs[0]], pubkey, tables, args.jobs))
    result = summarize(args, single, multi)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_text(result)
    return 0 if result["same_verdicts"] and result["all_verified"] else 1


def summarize(args, single: dict, multi: dict) -> dict:
    pairs = {}
    for pair, by_tree in single.items():
        pairs[pair] = {}
        for name, runs in by_tree.items():
            pairs[pair][name] = {
                "ratio": spread([r["audit_cpu"] / r["floor_cpu"] for r in runs]),
                "logs_per_s": spread([r["logs"] / r["audit_cpu"] for r in runs]),
                "floor_ms": spread([r["floor_cpu"] / r["logs"] * 1e3 for r in runs]),
                "audit_ms": spread([r["audit_cpu"] / r["logs"] * 1e3 for r in runs]),
                "verdicts": sorted({r["verdicts"] for r in runs})}
    cores = {name: {"ratio": spread([r["wall"] / r["floor_wall"] for r in runs]),
                    "logs_per_s": spread([r["logs"] / r["wall"] for r in runs]),
                    "cpu_s": spread([r["cpu"] for r in runs]), "exit": sorted({r["exit"] for r in runs})}
             for name, runs in multi.items()}
    runs = [r for by_tree in single.values() for rs in by_tree.values() for r in rs] + \
        [r for rs in multi.values() for r in rs]
    return {"rules": RULES, "games": args.games, "repeat": args.repeat, "jobs": args.jobs, "goal": GOAL,
            "goal_pair": GOAL_PAIR, "all_cores_pair": args.pairs[0], "load_average": os.getloadavg(),
            "one_core": pairs, "all_cores": cores,
            "all_verified": all(r["verified"] == r["logs"] for r in runs),
            "same_verdicts": all(len({v for t in p.values() for v in t["verdicts"]}) == 1 for p in pairs.values())}


def print_text(result: dict) -> None:
    print(f"{result['games']} {result['rules']} logs per pair, bots replayed, signatures against a trusted key; "
          f"median (min-max) of {result['repeat']} interleaved runs")
    for pair, by_tree in result["one_core"].items():
        for name, m in by_tree.items():
            r, s = m["ratio"], m["logs_per_s"]
            goal = ""
            if pair == result["goal_pair"]:
                met = "met" if r["median"] <= result["goal"] else "NOT met"
                goal = f"  (goal: {result['goal']:.0f}x or less: {met})"
            print(f"  one core, {pair:<15} {name:<8} {r['median']:5.1f}x the floor ({r['min']:.1f}-{r['max']:.1f}), "
                  f"{s['median']:4.0f} logs/s ({s['min']:.0f}-{s['max']:.0f}); {m['audit_ms']['median']:.2f} ms/log "
                  f"against a floor of {m['floor_ms']['median']:.3f}{goal}")
    for name, m in result["all_cores"].items():
        r, s = m["ratio"], m["logs_per_s"]
        print(f"  all {result['jobs']} cores, {result['all_cores_pair']:<11} {name:<8} {r['median']:5.1f}x the floor's "
              f"wall time ({r['min']:.1f}-{r['max']:.1f}), {s['median']:4.0f} logs/s ({s['min']:.0f}-{s['max']:.0f}), "
              f"CPU {m['cpu_s']['median']:.2f} s, exit {m['exit']}")
    print(f"  verdicts {'the same' if result['same_verdicts'] else 'DIFFERENT'} across trees and runs; every log "
          f"{'verified' if result['all_verified'] else 'NOT verified'}; load average {result['load_average'][0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
