"""Benchmark the optimal engine in CPU seconds, each number next to a baseline measured in the same run.

    python bench/bench_optimal.py                 # decisions, loads, builds (about a minute)
    python bench/bench_optimal.py --no-build      # decisions and loads only
    python bench/bench_optimal.py --moments       # builds with the second moments too
    python bench/bench_optimal.py --no-build --repeats 31   # steadier decision figures

The machine may be shared and busy, so times are CPU time (user + system, this process and its children),
not wall time, and each is also given as a ratio to a baseline taken in the same run:
- decisions: `policy.decide` on the same positions (every decision of real games of the ev bot, in game
  order), optimal next to ev.  Each figure is the CPU time of a tight loop over all the positions divided
  by their number, the median of `--repeats` loops:
    played    each bot's per-card values dropped before the loop, so a turn's first decision solves the
              card's turn (optimal: the state's turn values; ev: its gain table and keep values) and the
              turn's later decisions reuse them, as in a game;
    warm      nothing dropped: every turn already solved, the decision alone;
    1st/turn  the per-card values dropped before every decision (counted in the loop): every decision is
              the first of its turn.
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
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from fairdice.bots import BOTS, policies, position_of, space  # noqa: E402
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


def forget_card_values(table) -> Callable[[], None]:
    """What drops both bots' values kept per card: the optimal table's turns, ev's gain tables and keep values."""
    def forget() -> None:
        table.forget_turns()
        space.card_gains.cache_clear()
        policies._keep_values.cache_clear()
    return forget


def loop_time(policy, sample, before: Callable[[], None] = lambda: None) -> float:
    """CPU seconds per decision of one tight loop over the sample; `before()` runs (timed) before each one."""
    decide, tiebreak = policy.decide, first_of_tied
    start = time.process_time_ns()
    for pos in sample:
        before()
        decide(pos, tiebreak)
    return (time.process_time_ns() - start) / 1e9 / len(sample)


def first_of_tied(choices: int) -> int:
    return 0


def decision_figures(policy, sample, forget, repeats: int) -> dict[str, float]:
    """Median over `repeats` of loop_time: as played, warm, and every decision the first of its turn."""
    played, warm, first = [], [], []
    for _ in range(repeats):
        forget()
        played.append(loop_time(policy, sample))
        warm.append(loop_time(policy, sample))
        first.append(loop_time(policy, sample, before=forget))
    return {"played": statistics.median(played), "warm": statistics.median(warm),
            "first": statistics.median(first)}


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
    ap.add_argument("--repeats", type=int, default=15, help="loops over the positions per decision figure")
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

    print(f"\ndecision CPU time (policy.decide, tight loops over the same positions; median of {args.repeats}"
          " loops, microseconds per decision)")
    print(f"  {'rules':10s} {'n':>5s} {'ev':>8s} {'optimal':>8s} {'opt/ev':>7s}   {'ev warm':>8s} {'opt warm':>8s}"
          f" {'/ev':>6s}   {'ev 1st':>8s} {'opt 1st':>8s} {'/ev':>6s}")
    for rid in RULESETS:
        sample = positions(rid, args.games)
        forget = forget_card_values(table_cache.load_table(rid))
        for policy in (BOTS["ev"], BOTS["optimal"]):  # warm up: imports, the per-dice caches
            loop_time(policy, sample)
        ev = decision_figures(BOTS["ev"], sample, forget, args.repeats)
        opt = decision_figures(BOTS["optimal"], sample, forget, args.repeats)
        print(f"  {rid:10s} {len(sample):5d} {us(ev['played'])} {us(opt['played'])} {opt['played'] / ev['played']:7.2f}"
              f"   {us(ev['warm'])} {us(opt['warm'])} {opt['warm'] / ev['warm']:6.2f}"
              f"   {us(ev['first'])} {us(opt['first'])} {opt['first'] / ev['first']:6.2f}")

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
