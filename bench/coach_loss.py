"""The coach's proficiency figure for the bots: expected points each tier leaves on the table per game.

    python bench/coach_loss.py                    # 1,000 solitaire games per bot and rule set
    python bench/coach_loss.py --games 200 --rules yacht --bots greedy ev

Plays solitaire games through the real core (Game + play_bots, the dice seeds of bench/tiers.py, so game i of a
cell faces the same dice stream as there), builds each game's log and analyses it (`fairdice.analysis`, SPEC
§4.7): the mean and standard deviation of `total_expected_loss` per game, the mean number of decisions that
lost points, and the mean score.  `optimal` is the check: it always takes one of the best choices, so it loses
exactly 0.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fairdice.adapters import table_cache
from fairdice.analysis import analyze
from fairdice.bots import play_bots
from fairdice.game import Game, Setup
from fairdice.log import Signer, build_log, open_log
from fairdice.rules import RULESETS

SIGNER = Signer.from_private_bytes(bytes(32))  # the logs are analysed, never published


def cell(rules_id: str, bot: str, games: int) -> dict:
    losses, mistakes, totals = [], [], []
    for i in range(games):
        seed = hashlib.sha256(f"fairdice tiers {rules_id} {i}".encode()).digest()  # bench/tiers.py's dice
        game = Game(Setup.build(f"tiers-{i}", rules_id, [{"type": "bot", "bot": bot}]), server_seed=seed)
        opened = open_log(game, SIGNER)
        game.supply_client_seed(None, f"tiers {i}")
        play_bots(game, table_cache.bots())
        seat = analyze(build_log(opened, game, SIGNER), table_cache.source())["seats"][0]
        losses.append(seat["total_expected_loss"])
        mistakes.append(seat["mistakes"])
        totals.append(seat["total"])
    return {"rules": rules_id, "bot": bot, "games": games, "loss_mean": statistics.fmean(losses),
            "loss_sd": statistics.stdev(losses) if games > 1 else 0.0, "mistakes_mean": statistics.fmean(mistakes),
            "score_mean": statistics.fmean(totals)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--rules", nargs="+", default=list(RULESETS))
    parser.add_argument("--bots", nargs="+", default=["greedy", "ev", "optimal"])
    args = parser.parse_args()
    print("| rules | bot | games | expected loss per game (mean) | sd | decisions that lost points | mean score |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for rules_id in args.rules:
        for bot in args.bots:
            started = time.process_time()
            r = cell(rules_id, bot, args.games)
            print(f"| {rules_id} | {bot} | {r['games']} | {r['loss_mean']:.2f} | {r['loss_sd']:.2f} "
                  f"| {r['mistakes_mean']:.1f} | {r['score_mean']:.2f} |  ({time.process_time() - started:.1f} CPU s)",
                  flush=True)


if __name__ == "__main__":
    main()
