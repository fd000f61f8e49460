"""Benchmark the optimal engine in CPU seconds, each number next to a baseline measured in the same run.

    python bench/bench_optimal.py                 # decisions, loads, builds (about a minute)
    python bench/bench_optimal.py --no-build      # decisions and loads only
    python bench/bench_optimal.py --moments       # builds with the second moments too
    python bench/bench_optimal.py --no-build --repeats 31   # steadier decision figures
    git worktree add /tmp/before 526c6de            # (or any checkout of the code to compare with)
    python bench/bench_optimal.py --against /tmp/before --rounds 5   # builds only: before and after
    python bench/bench_optimal.py --against /tmp/before --numpy-walks  # after twice: compiled walks and numpy's

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
- builds against another checkout (`--against DIR`): `fairdice tables build --force` of each rule set, by
  this checkout and by DIR, in fresh processes taking turns (which one goes first alternates), `--rounds`
  times each; the best of the rounds of each, as the build's own CPU and as the whole process's
  (interpreter, imports, table file), their ratio after / before, and whether both digests are the
  manifest's.  With `--numpy-walks`, this checkout also builds with numpy's walks (`compiled_walks=False`) in
  the same turns: the compiled walks' gain next to the same baseline.  The "after" column uses the compiled
  walks when they are built (`programme.COMPILED_WALKS`, printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from fairdice.adapters import table_cache  # noqa: E402
from fairdice.bots import policies, position_of, space  # noqa: E402
from fairdice.game import Game, Setup  # noqa: E402
from fairdice.rules import RULESETS  # noqa: E402

BOTS = table_cache.bots()  # the optimal bot with this machine's cached tables (built there if missing)


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


# A fresh interpreter in a checkout builds one table into an empty cache, as `fairdice tables build --force`
# does, and says the digest and the build's own CPU seconds (the clock starts after the imports).
CHILD = """
import json, sys, time
try:
    from fairdice.adapters import table_cache
except ImportError:  # a checkout from before fairdice.edges became fairdice.adapters (526c6de)
    from fairdice.edges import table_cache
if sys.argv[3] == "numpy":  # this checkout with numpy's walks, passed to every solve the build makes
    import functools
    from fairdice.bots.optimal import programme
    programme.solve = functools.partial(programme.solve, compiled_walks=False)
start = time.process_time()
info = table_cache.build_table(sys.argv[1], force=True, moments=sys.argv[2] == "moments")
print(json.dumps({"sha256": info["sha256"], "build_cpu": time.process_time() - start}))
"""


def child_build(checkout: str, rules_id: str, moments: bool, walks: str = "default") -> dict:
    """Build a table in a fresh process run in `checkout` (so that it imports that checkout's fairdice):
    its digest, the build's CPU seconds and the whole process's (user + system)."""
    with tempfile.TemporaryDirectory(prefix="fairdice-bench-") as cache:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", CHILD, rules_id, "moments" if moments else "values", walks],
                              cwd=checkout, env={**os.environ, "FAIRDICE_CACHE_DIR": cache, "PYTHONPATH": ""},
                              capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(done.stdout.splitlines()[-1])
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def compare_builds(against: str, rounds: int, moments: bool, numpy_walks: bool = False) -> None:
    """Builds by this checkout and by `against`, taking turns; best of `rounds` each, and the ratios (with
    `numpy_walks`, this checkout's build with numpy's walks too, "numpy", in the same turns)."""
    from fairdice.bots.optimal import programme
    checkouts = {"before": os.path.abspath(against), "after": os.path.abspath(ROOT), "numpy": os.path.abspath(ROOT)}
    order = ("before", "after", "numpy") if numpy_walks else ("before", "after")
    print(f"\ntable build, {rounds} rounds taking turns (before: {checkouts['before']}, after: this checkout,"
          f" compiled walks: {programme.COMPILED_WALKS}): CPU s, best of the rounds")
    print(f"  {'':10s} {'the build alone':^22s}   {'the whole process':^22s}")
    print(f"  {'rules':10s} {'before':>7s} {'after':>7s} {'ratio':>6s}   {'before':>7s} {'after':>7s} {'ratio':>6s}"
          "  digests")
    for rid in RULESETS:
        runs = {which: [] for which in order}
        for round_ in range(rounds):
            for which in order[round_ % len(order):] + order[:round_ % len(order)]:  # who goes first rotates
                runs[which].append(child_build(checkouts[which], rid, moments,
                                               "numpy" if which == "numpy" else "default"))
        best = {which: {key: min(r[key] for r in done) for key in ("build_cpu", "process_cpu")}
                for which, done in runs.items()}
        expected = table_cache.table_format.expected_digest(rid)
        same = all(r["sha256"] == expected for done in runs.values() for r in done)
        figures = [f"{best['before'][key]:7.2f} {best['after'][key]:7.2f} {best['after'][key] / best['before'][key]:6.2f}"
                   for key in ("build_cpu", "process_cpu")]
        print(f"  {rid:10s} {figures[0]}   {figures[1]}  {'all the manifest' if same else 'DIFFER'}")
        if numpy_walks:
            figures = [f"{best['before'][key]:7.2f} {best['numpy'][key]:7.2f} {best['numpy'][key] / best['before'][key]:6.2f}"
                       for key in ("build_cpu", "process_cpu")]
            print(f"  {'  numpy':10s} {figures[0]}   {figures[1]}  (this checkout, numpy's walks)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10, help="games per rule set to draw positions from")
    ap.add_argument("--no-build", action="store_true", help="skip the table builds")
    ap.add_argument("--moments", action="store_true", help="builds compute the second moments too")
    ap.add_argument("--workers", type=int, default=1, help="processes for the builds")
    ap.add_argument("--repeats", type=int, default=15, help="loops over the positions per decision figure")
    ap.add_argument("--against", metavar="DIR", help="only compare the builds with those of the checkout in DIR")
    ap.add_argument("--rounds", type=int, default=3, help="with --against: builds per checkout and rule set")
    ap.add_argument("--numpy-walks", action="store_true",
                    help="with --against: this checkout builds with numpy's walks too (compiled_walks=False)")
    args = ap.parse_args(argv)
    if args.against:
        print(f"cpus: {os.cpu_count()}   load average: {os.getloadavg()[0]:.2f}")
        compare_builds(args.against, args.rounds, args.moments, args.numpy_walks)
        return

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
