"""Benchmark the optimal bot: decision time next to ev (same positions, same run), table load and build times.

    python bench/bench_optimal.py                 # decisions + loads + builds (about 2 minutes on 2 cores)
    python bench/bench_optimal.py --no-build      # decisions and loads only
    python bench/bench_optimal.py --workers 1     # builds in one process

Positions are taken from real games (ev playing, so both bots see the same positions); each decision is
timed with `policy.decide` including candidate generation.  Builds are timed with `compute_table`, which
does not touch the cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fairdice.bots import BOTS, optimal, play_bots, position_of  # noqa: E402
from fairdice.game import Game, Setup  # noqa: E402
from fairdice.rules import RULESETS  # noqa: E402


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


def time_decisions(policy, sample) -> list[float]:
    times = []
    for pos in sample:
        t = time.perf_counter()
        policy.decide(pos, lambda n: 0)
        times.append(time.perf_counter() - t)
    return times


def ms(x: float) -> str:
    return f"{x * 1e3:7.3f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10, help="games per rule set to draw positions from")
    ap.add_argument("--no-build", action="store_true", help="skip the table build timings")
    ap.add_argument("--workers", type=int, default=None, help="processes for builds (default: up to 2)")
    args = ap.parse_args(argv)

    print(f"cache: {optimal.cache_dir()}   cpus: {os.cpu_count()}   load average: {os.getloadavg()[0]:.2f}")
    print("\ntable load (from the disk cache, SHA-256 verified; built first if missing)")
    for rid in RULESETS:
        optimal._LOADED.pop(rid, None)
        t = time.perf_counter()
        info = optimal.build_table(rid)
        print(f"  {rid:10s} {time.perf_counter() - t:7.3f} s   built={info['built']}   "
              f"start {info['start_value']:.4f}  sd {info.get('start_sd', float('nan')):.4f}")

    print("\ndecision time (policy.decide on the same positions; ms)")
    print(f"  {'rules':10s} {'n':>5s} {'ev med':>8s} {'opt med':>8s} {'ev p90':>8s} {'opt p90':>8s} {'opt/ev':>7s}")
    for rid in RULESETS:
        sample = positions(rid, args.games)
        for policy in (BOTS["ev"], BOTS["optimal"]):  # warm up
            time_decisions(policy, sample[:20])
        ev = time_decisions(BOTS["ev"], sample)
        opt = time_decisions(BOTS["optimal"], sample)
        q = lambda xs: statistics.quantiles(xs, n=10)[-1]  # noqa: E731
        print(f"  {rid:10s} {len(sample):5d} {ms(statistics.median(ev))} {ms(statistics.median(opt))} "
              f"{ms(q(ev))} {ms(q(opt))} {statistics.median(opt) / statistics.median(ev):7.2f}")

    if args.no_build:
        return
    workers = optimal.default_workers() if args.workers is None else args.workers
    print(f"\ntable build (compute_table, value + second moment DP, {workers} worker(s); s)")
    for rid in RULESETS:
        t = time.perf_counter()
        _, meta = optimal.compute_table(rid, moments=True, workers=workers)
        full = time.perf_counter() - t
        t = time.perf_counter()
        optimal.compute_table(rid, moments=False, workers=workers)
        values_only = time.perf_counter() - t
        ok = meta["sha256"] == optimal.manifest()["tables"][rid]["sha256"]
        print(f"  {rid:10s} with sd {full:6.1f}   values only {values_only:6.1f}   digest matches manifest: {ok}")


if __name__ == "__main__":
    main()
