"""Play many solitaire games per bot tier and rule set, through the real core (Game + play_bots).

    python bench/tiers.py                       # 10,000 games per tier and rule set, 2 processes
    python bench/tiers.py --games 500 --rules classic13 --bots ev optimal
    python bench/tiers.py --json results.json   # also write the per-cell summary as JSON

Game i of every cell uses the same server and client seed, so the tiers face the same dice streams as
far as their decisions let them (common random numbers).  Prints mean, standard deviation, standard
error, the share of games over 300 and the share with a Yahtzee bonus (classic13), and the share with
the upper bonus.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fairdice.adapters import table_cache
from fairdice.bots import play_bots
from fairdice.game import Game, Setup
from fairdice.rules import RULESETS

TIERS = ("greedy", "ev", "optimal")


def play_range(task) -> list[tuple[int, int, int]]:
    """(total, yahtzee bonus points, upper bonus points) of games lo..hi-1 of one cell."""
    rules_id, bot, lo, hi = task
    out = []
    for i in range(lo, hi):
        seed = hashlib.sha256(f"fairdice tiers {rules_id} {i}".encode()).digest()
        game = Game(Setup.build(f"tiers-{i}", rules_id, [{"type": "bot", "bot": bot}]), server_seed=seed)
        game.supply_client_seed(None, f"tiers {i}")
        play_bots(game, table_cache.bots())  # the optimal bot's tables: this process's cache
        t = game.totals(0)
        out.append((t.total, t.yahtzee_bonus, t.upper_bonus))
    return out


def summarise(results) -> dict:
    totals = [r[0] for r in results]
    n = len(totals)
    mean = sum(totals) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in totals) / (n - 1))
    return {"games": n, "mean": round(mean, 3), "sd": round(sd, 3), "se": round(sd / math.sqrt(n), 3),
            "over_300": round(sum(x > 300 for x in totals) / n, 4),
            "yahtzee_bonus": round(sum(r[1] > 0 for r in results) / n, 4),
            "upper_bonus": round(sum(r[2] > 0 for r in results) / n, 4),
            "min": min(totals), "max": max(totals)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--rules", nargs="+", default=list(RULESETS), choices=list(RULESETS))
    ap.add_argument("--bots", nargs="+", default=list(TIERS), choices=list(TIERS))
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--json", help="write the summary to this file")
    args = ap.parse_args(argv)

    if "optimal" in args.bots:  # build or verify the tables once, before forking
        for rid in args.rules:
            table_cache.load_table(rid)

    tasks = [(rid, bot, lo, min(args.games, lo + args.chunk))
             for rid in args.rules for bot in args.bots for lo in range(0, args.games, args.chunk)]
    cells: dict[tuple[str, str], list] = {}
    start = time.perf_counter()
    with mp.get_context("fork").Pool(args.processes) as pool:
        for task, res in zip(tasks, pool.imap(play_range, tasks)):
            cells.setdefault(task[:2], []).extend(res)
            done = sum(len(v) for v in cells.values())
            print(f"\r{done}/{args.games * len(args.rules) * len(args.bots)} games "
                  f"({time.perf_counter() - start:.0f} s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    seconds = time.perf_counter() - start

    summary = {f"{rid}/{bot}": summarise(cells[(rid, bot)]) for rid in args.rules for bot in args.bots}
    print(f"{args.games} games per cell, {args.processes} processes, {seconds:.0f} s\n")
    print("| rules | bot | mean | sd | se | > 300 | Yahtzee bonus | upper bonus | min | max |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rid in args.rules:
        for bot in args.bots:
            s = summary[f"{rid}/{bot}"]
            extra = (f"{100 * s['over_300']:.2f}% | {100 * s['yahtzee_bonus']:.2f}%" if rid == "classic13"
                     else "– | –")
            print(f"| {rid} | {bot} | {s['mean']:.2f} | {s['sd']:.2f} | {s['se']:.2f} | {extra} | "
                  f"{100 * s['upper_bonus']:.1f}% | {s['min']} | {s['max']} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"games": args.games, "seconds": round(seconds, 1), "cells": summary}, fh, indent=1)


if __name__ == "__main__":
    main()
