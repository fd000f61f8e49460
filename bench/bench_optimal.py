"""Benchmark the optimal engine in CPU seconds, each number next to a baseline measured in the same run.

    python bench/bench_optimal.py                 # decisions, loads, builds (about a minute)
    python bench/bench_optimal.py --no-build      # decisions and loads only
    python bench/bench_optimal.py --moments       # builds with the second moments too

The machine may be shared and busy, so times are CPU time (user + system, this process and its children),
not wall time, and each is also given as a ratio to a baseline taken in the same run:
- decisions: `policy.decide` on the same positions (real games of the ev bot), optimal next to ev; a turn
  asks the optimal table once per card state (the first decision of a turn), so "first of a turn" is also
  shown with the state's turn values dropped beforehand;
- builds: `compute_table` from nothing (the cache untouched), next to a fixed numpy workload measured just
  before (so a ratio that moves means the build changed, not the machine), with the minor page faults.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from fairdice.bots import BOTS, position_of  # noqa: E402
from fairdice.edges import table_cache  # noqa: E402
from fairdice.game import Game, Setup  # noqa: E402
from fairdice.rules import RULESETS  # noqa: E402


def cpu() -> tuple[float, int]:
    """CPU seconds (user + system) and minor page faults so far, this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime), me.ru_minflt + kids.ru_minflt


def positions(rules_id: str, games: int) -> list:
    """Every position an ev bot decided in `games` solitaire games."""
    out = []
    for seed in range(games):
        game = Game(Setup.build(f"b{seed}", rules_id, [{"type": "bot", "bot": "ev"}]),
                    server_seed=seed.to_bytes(32, "big"))
        game.supply_client_seed(None, f"bench {seed}")
        while game.status == "playing":
            if game.rolls_made == 0:
                game.roll(0)
                continue
            pos = position_of(game)
            out.append(pos)
            d = BOTS["ev"].decide(pos, game.tiebreak)
            if d.action == "roll":
                game.roll(0, d.hold)
            else:
                game.score(0, d.category)
    return out


def decision_times(policy, sample, before=None) -> list[float]:
    """CPU seconds of each decision; `before()` runs untimed before each one."""
    times = []
    for pos in sample:
        if before:
            before()
        start = time.process_time()
        policy.decide(pos, lambda n: 0)
        times.append(time.process_time() - start)
    return times


def baseline_workload() -> float:
    """CPU seconds of a fixed numpy workload (gathers and element-wise maxima over a few MB), a yardstick."""
    rng = np.random.default_rng(0)
    src, out = rng.random((462, 768)), np.empty((252, 768))
    rows = rng.integers(0, 462, 252)

    def work(times):
        for _ in range(times):
            src.take(rows, 0, out, "clip")
            np.maximum(out, src[:252], out=out)
    work(200)  # warm up
    start, _ = cpu()
    work(2000)
    return cpu()[0] - start


def us(x: float) -> str:
    return f"{x * 1e6:8.1f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10, help="games per rule set to draw positions from")
    ap.add_argument("--no-build", action="store_true", help="skip the table builds")
    ap.add_argument("--moments", action="store_true", help="builds compute the second moments too")
    ap.add_argument("--workers", type=int, default=1, help="processes for the builds")
    args = ap.parse_args(argv)
    table_cache.install()

    print(f"cache: {table_cache.cache_dir()}   cpus: {os.cpu_count()}   load average: {os.getloadavg()[0]:.2f}")
    print("\ntable load (from the disk cache, SHA-256 verified; built first if missing): CPU s")
    for rid in RULESETS:
        table_cache.CACHE.forget()
        start, _ = cpu()
        info = table_cache.build_table(rid)
        print(f"  {rid:10s} {cpu()[0] - start:7.3f}   built={info['built']}   start {info['start_value']:.4f}"
              f"  sd {info.get('start_sd', float('nan')):.4f}")

    print("\ndecision CPU time (policy.decide on the same positions; medians, microseconds)")
    print(f"  {'rules':10s} {'n':>5s} {'ev':>8s} {'optimal':>8s} {'opt/ev':>7s} {'1st/turn':>9s} {'/ev':>6s}"
          f" {'opt p90':>8s}")
    for rid in RULESETS:
        sample = positions(rid, args.games)
        table = table_cache.load_table(rid)
        for policy in (BOTS["ev"], BOTS["optimal"]):  # warm up
            decision_times(policy, sample[:20])
        ev = statistics.median(decision_times(BOTS["ev"], sample))
        times = decision_times(BOTS["optimal"], sample)
        opt = statistics.median(times)
        first = statistics.median(decision_times(BOTS["optimal"], sample, before=table.forget_turns))
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"  {rid:10s} {len(sample):5d} {us(ev)} {us(opt)} {opt / ev:7.2f} {us(first)} {first / ev:6.2f}"
              f" {us(p90)}")

    if args.no_build:
        return
    what = "values and second moments" if args.moments else "values"
    print(f"\ntable build (compute_table, {what}, {args.workers} process(es)): CPU s, minor page faults")
    print(f"  {'rules':10s} {'cpu s':>7s} {'baseline':>9s} {'ratio':>6s} {'faults':>9s}  digest")
    for rid in RULESETS:
        base = baseline_workload()
        start, faults = cpu()
        _, meta = table_cache.compute_table(rid, moments=args.moments, workers=args.workers)
        used, faulted = cpu()[0] - start, cpu()[1] - faults
        ok = "matches the manifest" if meta["sha256"] == table_cache.table_format.expected_digest(rid) else "DIFFERS"
        sd = f", sd {meta['start_sd']:.6f}" if "start_sd" in meta else ""
        print(f"  {rid:10s} {used:7.2f} {base:9.2f} {used / base:6.2f} {faulted:9d}  {ok}{sd}")


if __name__ == "__main__":
    main()
