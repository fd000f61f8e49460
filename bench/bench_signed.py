"""What a player's signature costs a command (SPEC §5.7): server CPU per move, signed against unsigned.

    python bench/bench_signed.py [--turns 150] [--rounds 5]

Plays the same moves (one human seat against the greedy bot, yacht: roll, a reroll keeping the most common
face, score the best box, the bot's turn inside the score request) through the Flask app's test client on a
SQLite store, in three kinds of game: version 3 with a player key (every command carries `player_signature`
and `event_count`, checked by the server), version 3 without a key (the seat chose not to sign), and the core
alone (`Game`, no store, no HTTP) signed and unsigned.  Only the server's work is timed: the client's signing
(Ed25519 over h_n, which the client computes itself) happens outside the timed region and is reported apart.
Rounds are interleaved and the best round of each kind kept; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api import create_app
from fairdice.bots import play_bots
from fairdice.chain import Chain
from fairdice.game import Game, Setup
from fairdice.log import Signer, header
from fairdice.players import PlayerKey

SEATS = [{"type": "human", "name": "bench"}, {"type": "bot", "bot": "greedy"}]


def most_common(dice: list[int]) -> list[int]:
    face = max(set(dice), key=dice.count)
    return [i for i, d in enumerate(dice) if d == face]


class Seat:
    """One human seat through the test client; `server` accumulates the CPU seconds of the server calls."""

    def __init__(self, client, signs: bool):
        self.client, self.signs = client, signs
        created = client.post("/v1/games", json={"rules": "yacht", "seats": SEATS}).get_json()
        self.game_id, self.token = created["game_id"], created["tokens"][0]["token"]
        self.chain = Chain.start(created["header"])
        self.key = PlayerKey.generate() if signs else None
        self.server = self.signing = 0.0
        self.commands = 0
        self.state = self.post("client-seed", {"client_seed": "bench"},
                               {"type": "client_seed", "seat": 0, "client_seed": "bench"})

    def post(self, action: str, body: dict, command: dict) -> dict:
        if self.signs:
            start = time.process_time()
            if "player_key" not in body and action == "client-seed":
                body["player_key"] = command["player_key"] = self.key.public_hex
            body = {**body, "player_signature": self.key.sign(self.game_id, self.chain.count, self.chain.digest,
                                                              command), "event_count": self.chain.count}
            self.signing += time.process_time() - start
        start = time.process_time()
        resp = self.client.post(f"/v1/games/{self.game_id}/{action}", json=body,
                                headers={"Authorization": f"Bearer {self.token}"})
        self.server += time.process_time() - start
        state = resp.get_json()
        assert resp.status_code == 200, state
        self.chain = self.chain.extend(state["events"])
        self.commands += 1
        return state

    def turn(self) -> bool:
        s = self.state
        if s["status"] != "playing":
            return False
        s = self.post("roll", {"hold": []}, {"type": "roll", "seat": 0, "turn": s["turn"], "roll": 1, "hold": []})
        hold = most_common(s["dice"])
        s = self.post("roll", {"hold": hold}, {"type": "roll", "seat": 0, "turn": s["turn"], "roll": 2,
                                               "hold": hold})
        box = max(s["options"], key=lambda c: s["options"][c]["points"])
        self.state = self.post("score", {"category": box}, {"type": "score", "seat": 0, "turn": s["turn"],
                                                            "category": box})
        return True


def api_round(client, signs: bool, turns: int) -> tuple[float, float, int]:
    """(server CPU, client signing CPU, commands) over `turns` turns, games started as needed."""
    server = signing = 0.0
    commands = done = 0
    while done < turns:
        seat = Seat(client, signs)
        while done < turns and seat.turn():
            done += 1
        server, signing, commands = server + seat.server, signing + seat.signing, commands + seat.commands
    return server, signing, commands


def core_round(signs: bool, turns: int) -> tuple[float, int]:
    """CPU of the core's commands alone (a fresh game per 12 turns), signed or not."""
    signer = Signer.from_private_bytes(bytes(32))
    cpu, commands, done, i = 0.0, 0, 0, 0
    while done < turns:
        i += 1
        setup = Setup.build(f"bench-{i}", "yacht", SEATS)
        seed = hashlib.sha256(b"%d" % i).digest()
        game = Game(setup, seed, header(setup, Game(setup, seed).commitment, signer))
        key = PlayerKey.generate() if signs else None

        def run(method, *args, command):
            nonlocal cpu, commands
            extra = {}
            if key is not None:
                extra = {"player_signature": key.sign(setup.game_id, len(game.events), game.chain.digest, command),
                         "event_count": len(game.events)}
            start = time.process_time()
            method(*args, **extra)
            play_bots(game)
            cpu += time.process_time() - start
            commands += 1

        pk = key.public_hex if key else None
        run(lambda **kw: game.supply_client_seed(0, "bench", player_key=pk, **kw),
            command={"type": "client_seed", "seat": 0, "client_seed": "bench", "player_key": pk})
        while game.status == "playing" and done < turns:
            run(lambda **kw: game.roll(0, [], **kw), command={"type": "roll", "seat": 0, "turn": game.turn, "roll": 1,
                                                              "hold": []})
            box = max(game.scoring_options(), key=lambda c: game.scoring_options()[c].points)
            run(lambda **kw: game.score(0, box, **kw), command={"type": "score", "seat": 0, "turn": game.turn,
                                                                "category": box})
            done += 1
    return cpu, commands


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=150)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as data:
        client = create_app({"FAIRDICE_DATA_DIR": data, "FAIRDICE_RATE_CREATE": "off",
                             "FAIRDICE_RATE_MOVES_CLIENT": "off", "FAIRDICE_RATE_MOVES_TOKEN": "off",
                             "FAIRDICE_MAX_UNFINISHED": "0"}).test_client()
        api_round(client, True, 10), api_round(client, False, 10)  # warm up
        best = {"api signed": float("inf"), "api unsigned": float("inf"), "core signed": float("inf"),
                "core unsigned": float("inf")}
        signing = float("inf")
        for _ in range(args.rounds):
            for signs in (True, False):
                server, sign_cpu, n = api_round(client, signs, args.turns)
                label = "api signed" if signs else "api unsigned"
                best[label] = min(best[label], server / n)
                if signs:
                    signing = min(signing, sign_cpu / n)
                cpu, n = core_round(signs, args.turns)
                label = "core signed" if signs else "core unsigned"
                best[label] = min(best[label], cpu / n)
    print(f"CPU per command, best of {args.rounds} interleaved rounds of {args.turns} turns (yacht, greedy bot):")
    for label, value in best.items():
        print(f"  {label:14} {value * 1e6:8.0f} us")
    print(f"  signed / unsigned: through the app {best['api signed'] / best['api unsigned']:.3f}, "
          f"the core alone {best['core signed'] / best['core unsigned']:.3f} "
          f"(+{(best['api signed'] - best['api unsigned']) * 1e6:.0f} us a command)")
    print(f"  the client's signing, per command: {signing * 1e6:.0f} us")


if __name__ == "__main__":
    main()
