"""Log format versions 1, 2 and 3: size and verification time of the same games.

    python bench/bench_versions.py [--games 200] [--repeat 5]

The same setups, seeds and moves under each version (two humans and the ev bot, classic13: version 2 adds the
client seed commitments, the salts, the header's abandon_timeout; version 3 every human event's signature and
each seat's key, SPEC §5.7); sizes are canonical bytes; times are the CPU time of `verify_document` (the bots
replayed too, as by default), best of --repeat interleaved runs, and the ratios v2 / v1 and v3 / v2 are what to
read (the machines are noisy)."""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # (the package `support`)

from fairdice.game import Game, Setup
from fairdice.log import Signer, build_log, canonical, open_log
from support.signing import SigningGame, player_key
from support.verifier_support import play_randomly
from verifier.botcheck import PublishedBots
from verifier.replay import verify_document

SIGNER = Signer.from_private_bytes(bytes(range(32)))
SEATS = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}, {"type": "human", "name": "bo"}]


def game_log(i: int, version: int) -> dict:
    setup = Setup.build(f"bench-{i}", "classic13", SEATS, version=version)
    seed_ = hashlib.sha256(b"bench %d" % i).digest()
    opened = open_log(Game(setup, seed_), SIGNER)
    game = Game(setup, seed_, opened["header"])
    keys = {s: player_key(f"bench {i} {s}") for s in setup.human_seats} if version >= 3 else {}
    game = SigningGame(game, keys) if keys else game
    seeds = {s: f"seed {i} {s}" for s in setup.human_seats}
    if setup.commits_client_seeds:
        salts = {s: hashlib.sha256(b"salt %d %d" % (i, s)).digest() for s in seeds}
        for s, seed in seeds.items():
            key = bytes.fromhex(keys[s].public_hex) if s in keys else b""
            game.commit_client_seed(s, hashlib.sha256(salts[s] + key + seed.encode()).hexdigest())
        for s, seed in seeds.items():
            game.supply_client_seed(s, seed, salts[s].hex())
    else:
        for s, seed in seeds.items():
            game.supply_client_seed(s, seed)
    play_randomly(game, random.Random(i))
    return build_log(opened, getattr(game, "game", game), SIGNER)


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    logs = {v: [game_log(i, v) for i in range(args.games)] for v in (1, 2, 3)}
    bots = PublishedBots()
    for v, docs in logs.items():
        bad = [d["header"]["game_id"] for d in docs if not verify_document(d, "-", bots=bots).ok]
        assert not bad, (v, bad[:3])
    size = {v: sum(len(canonical(d)) for d in docs) for v, docs in logs.items()}
    best = {v: float("inf") for v in logs}
    for _ in range(args.repeat):
        for v, docs in logs.items():
            best[v] = min(best[v], cpu(lambda: [verify_document(d, "-", bots=bots) for d in docs]))
    print(f"{args.games} classic13 games of two humans and the ev bot, verified with the bots replayed")
    for v in logs:
        print(f"  version {v}: {size[v] / args.games:,.0f} bytes per log, {best[v] / args.games * 1e3:.2f} ms "
              f"CPU per log ({args.games / best[v]:,.0f} logs/s)")
    for new, old in ((2, 1), (3, 2)):
        print(f"  version {new} / version {old}: size {size[new] / size[old]:.3f}, verification time "
              f"{best[new] / best[old]:.3f}")


if __name__ == "__main__":
    main()
