"""Median decision time of the bots, next to a baseline measured in the same run.

    python bench/bench_ev.py [--positions 400]

The baseline is the cheapest honest decision input: building the gain table
for the position (what every policy does first). Each decision is timed cold
(caches emptied), the worst case of a turn's first decision. Reported as
medians in ms and as ratios, since the machines are noisy.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this tree's fairdice, whatever is installed

from fairdice.adapters import table_cache
from fairdice.bots import policies, position_of, space
from fairdice.bots.base import roll_decisions
from fairdice.game import Game, Setup

BOTS = table_cache.bots()  # the optimal bot's tables, from this machine's cache (built there on first use)


def positions(rules: str, count: int):
    """Real positions: every decision point of ev's own games, until `count` are collected."""
    out, g = [], 0
    while len(out) < count:
        game = Game(Setup.build(f"bench-{g}", rules, [{"type": "bot", "bot": "ev"}]), bytes([g % 256]) * 32)
        game.supply_client_seed(None, "bench")
        while game.status == "playing":
            seat = game.current_seat
            if game.rolls_made == 0:
                game.roll(seat)
                continue
            out.append(position_of(game))
            d = BOTS["ev"].decide(out[-1], game.tiebreak)
            game.roll(seat, d.hold) if d.action == "roll" else game.score(seat, d.category)
        g += 1
    return out[:count]


def first_of_tied(k: int) -> int:
    return 0


def median_ms(fn, items):
    """Median over items, each timed cold: the per-card caches are emptied first."""
    times = []
    for item in items:
        space.card_gains.cache_clear()
        roll_decisions.cache_clear()
        policies._keep_values.cache_clear()
        t = time.perf_counter()
        fn(item)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=400)
    args = parser.parse_args()
    print(f"{'rules':<10} {'policy':<8} {'median ms':>10} {'x baseline':>11}")
    for rules in ("yacht", "yatzy", "classic13"):
        items = positions(rules, args.positions)
        base = median_ms(lambda p: space.gain_matrix(p.rules, p.boxes, p.upper_first), items)
        print(f"{rules:<10} {'baseline':<8} {base:>10.3f} {1:>11.2f}")
        for bot in BOTS:
            med = median_ms(lambda p: BOTS[bot].decide(p, first_of_tied), items)
            print(f"{rules:<10} {bot:<8} {med:>10.3f} {med / base:>11.2f}")


if __name__ == "__main__":
    main()
