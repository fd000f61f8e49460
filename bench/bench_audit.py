"""The audit end to end: `fairdice-verify --audit` on 10,000 two-seat logs, all cores.

    python bench/bench_audit.py [--games 10000] [--dir DIR] [--jobs N]

Makes the logs once with `fairdice simulate` (three rule sets, greedy vs ev; kept in --dir
for later runs), then times the command as a user would run it, wall clock, output to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "fairdice-bench-audit"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    root = Path(args.dir) / str(args.games)
    per_rules = [args.games // 3 + (i < args.games % 3) for i in range(3)]
    t = time.perf_counter()
    for i, (rules, games) in enumerate(zip(("yacht", "yatzy", "classic13"), per_rules)):
        out = root / rules
        if not out.exists() or len(list(out.glob("*.json"))) != games:
            subprocess.run(["fairdice", "simulate", "--rules", rules, "--bots", "greedy,ev", "--games", str(games),
                            "--seed", f"bench-audit-{i}", "--out", str(out)], check=True, capture_output=True)
    print(f"logs ready in {root} ({time.perf_counter() - t:.1f} s to make or find)")
    cmd = [sys.executable, "-m", "verifier", "--audit", "--json", "--jobs", str(args.jobs), str(root)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[1])
        seconds = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        out.seek(0)
        report = json.load(out)
    audit = report["audit"]
    print(f"fairdice-verify --audit --jobs {args.jobs}: {audit['logs']} logs in {seconds:.2f} s "
          f"({audit['logs'] / seconds:.0f} logs/s), exit {p.returncode}")
    print(f"  CPU time, all processes: {cpu:.2f} s; load average before the run: {load:.1f} "
          f"(on an otherwise idle machine the wall time is about CPU / {args.jobs} = {cpu / args.jobs:.2f} s)")
    print(f"  {audit['verified']} verified, {audit['rolls']} rolls, {audit['fresh_dice']} fresh dice, "
          f"findings: {audit['findings'] or 'none'}")
    return 0 if p.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
