"""`fairdice simulate` throughput: complete signed games per second on one core.

    python bench/bench_simulate.py [--games 300]

Next to it, in the same run, the floor: deriving the same games' dice alone
(one HMAC-SHA256 per roll plus rejection sampling), so the ratio says what
the game engine, the bots, the signing and the JSON cost on top.
"""

import argparse
import json
import time

from fairdice import derive
from fairdice.simulate import GameSpec, play_one, signer_for_seed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=300)
    args = parser.parse_args()
    signer = signer_for_seed("bench")
    print(f"{'rules':<10} {'bots':<10} {'games/s':>8} {'floor games/s':>14} {'x floor':>8}")
    for rules in ("yacht", "yatzy", "classic13"):
        for bots in (("greedy", "ev"), ("ev",)):
            t = time.perf_counter()
            logs = [json.dumps(play_one(GameSpec(rules, bots, i, "bench"), signer)) for i in range(args.games)]
            games_per_s = args.games / (time.perf_counter() - t)
            rolls = [(json.loads(doc), e) for doc in logs for e in json.loads(doc)["events"] if e["type"] == "roll"]
            t = time.perf_counter()
            for log, e in rolls:
                derive.five_dice(bytes.fromhex(log["final"]["server_seed"]),
                                 derive.message("roll", log["header"]["game_id"], ["x"], e["seat"], e["turn"], e["roll"]))
            floor = args.games / (time.perf_counter() - t)
            print(f"{rules:<10} {','.join(bots):<10} {games_per_s:>8.0f} {floor:>14.0f} {floor / games_per_s:>8.1f}")


if __name__ == "__main__":
    main()
