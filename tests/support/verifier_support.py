"""Helpers shared by the verifier tests (no tests here): logs made by the core, re-signing."""

from __future__ import annotations

import atexit
import copy
import functools
import hashlib
import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairdice.bots import play_bots
from fairdice.game import Game, Setup
from fairdice.log import Signer, build_log, open_log
from fairdice.players import PlayerKey
from verifier.receipt import make_receipt
from verifier.spec import canonical
from support import REPO

SERVER_KEY = bytes(range(32))
SIGNER = Signer.from_private_bytes(SERVER_KEY)
PUBLIC_HEX = SIGNER.public_key.hex()

_tmp = Path(tempfile.mkdtemp(prefix="verifier-tests-"))
atexit.register(shutil.rmtree, _tmp, True)


def key_pem_file() -> Path:
    path = _tmp / "server-key.pem"
    if not path.exists():
        pem = Ed25519PrivateKey.from_private_bytes(SERVER_KEY).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        path.write_bytes(pem)
    return path


@functools.cache
def simulated(rules: str, bots: str, games: int, seed: int) -> Path:
    """A directory of finished, signed logs made by `fairdice simulate`, signed with SERVER_KEY."""
    out = _tmp / f"sim-{rules}-{bots.replace(',', '_')}-{games}-{seed}"
    subprocess.run(["fairdice", "simulate", "--rules", rules, "--bots", bots,
                    "--games", str(games), "--seed", str(seed), "--out", str(out), "--key", str(key_pem_file())],
                   check=True, capture_output=True)
    return out


def load(path) -> dict:
    return json.loads(Path(path).read_text())


def resign(doc: dict, signer: Signer = SIGNER) -> dict:
    """The document signed again by `signer` (SPEC §6), as the server would have signed it."""
    doc = copy.deepcopy(doc)
    doc["header"]["public_key"] = signer.public_key.hex()
    doc["header"]["key_id"] = signer.key_id
    doc["commitment_signature"] = signer.sign(canonical(doc["header"]))
    doc.pop("signature", None)
    doc["signature"] = signer.sign(canonical(doc))
    return doc


def write(directory: Path, name: str, doc) -> Path:
    path = Path(directory) / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def chase_hold(dice) -> list[int]:
    """Keep every die of the most common face: makes five alike (and so jokers) frequent."""
    best = max(range(1, 7), key=lambda f: (dice.count(f), f))
    return [p for p, d in enumerate(dice) if d == best]


def play_randomly(game: Game, rng: random.Random, on_options=None, stop_after: int | None = None) -> None:
    """Humans play random but plausible moves (bots play their policy) until the game is over,
    or until `stop_after` events. `on_options(game)` is called before every human score."""
    while game.status == "playing" and (stop_after is None or len(game.events) < stop_after):
        seat = game.current_seat
        if game.setup.seats[seat].is_bot:
            game_events = len(game.events)
            play_bots(game)
            if len(game.events) == game_events:
                break
            continue
        made = game.rolls_made
        if made == 0:
            game.roll(seat)
        elif made < 3 and len(set(game.dice)) > 1 and rng.random() < 0.8:
            hold = chase_hold(list(game.dice)) if rng.random() < 0.85 else sorted(rng.sample(range(5), rng.randint(0, 5)))
            game.roll(seat, hold)
        else:
            if on_options:
                on_options(game)
            legal = game.scoring_options()
            five = [c for c in ("yahtzee", "yacht", "yatzy") if c in legal and len(set(game.dice)) == 1]
            game.score(seat, five[0] if five and rng.random() < 0.8 else rng.choice(sorted(legal)))


def random_setup(rng: random.Random, game_id: str, rules: str | None = None) -> Setup:
    n = rng.randint(1, 4)
    seats = [{"type": "human", "name": f"h{i}"} if rng.random() < 0.6 else
             {"type": "bot", "bot": rng.choice(["greedy", "ev"])} for i in range(n)]
    first = "random" if rng.random() < 0.5 else rng.randrange(n)
    return Setup.build(game_id, rules or rng.choice(["yacht", "yatzy", "classic13"]), seats, first=first,
                       upper_first=rng.random() < 0.25)


def core_game(setup: Setup, seed: bytes, rng: random.Random, on_options=None, abandon_after=None,
              finish: bool = True) -> tuple[Game, dict]:
    """Play a game with the core and return (game, opened log header part)."""
    game = Game(setup, server_seed=seed)
    opened = open_log(game, SIGNER)
    seeds = {s: f"client seed {rng.random()} \u00e9\u4e2d\U0001F3B2" for s in setup.human_seats or [None]}
    salts = {s: hashlib.sha256(seed.encode()).hexdigest() for s, seed in seeds.items()}
    if setup.commits_client_seeds:  # two or more humans: commit, then reveal (SPEC §4.3)
        for s, text in seeds.items():
            game.commit_client_seed(s, hashlib.sha256(bytes.fromhex(salts[s]) + text.encode()).hexdigest())
    for s, text in seeds.items():
        game.supply_client_seed(s, text, salts[s] if setup.commits_client_seeds else None)
    if abandon_after is not None:
        play_randomly(game, rng, on_options, stop_after=abandon_after)
        if game.status == "playing":  # the seat to move gives up, or the server after a timeout (SPEC §4.3)
            mover = game.current_seat if game.current_seat in setup.human_seats else None
            who = rng.choice([None, mover] if mover is not None else [None])
            game.abandon(who, "player" if who is not None or not setup.human_seats else "timeout")
    elif finish:
        play_randomly(game, rng, on_options)
    return game, opened


def core_log(setup: Setup, seed: bytes, rng: random.Random, **kw) -> dict:
    game, opened = core_game(setup, seed, rng, **kw)
    return build_log(opened, game, SIGNER)


def server_code_blocked_env(directory: Path) -> dict:
    """The environment of a process in which fairdice, api, flask and numpy cannot be imported (a
    sitecustomize in `directory` refuses them): the verifier as an auditor installs it, alone."""
    (Path(directory) / "sitecustomize.py").write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('fairdice', 'api', 'flask', 'numpy'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n")
    return {**os.environ, "PYTHONPATH": f"{directory}{os.pathsep}{REPO}"}


# --- version 3 games as the players' devices play them (tests/unit/test_verifier_v3.py and its neighbours)

ANN, BOB = {"type": "human", "name": "ann"}, {"type": "human", "name": "bob"}
GREEDY = {"type": "bot", "bot": "greedy"}


class Table:
    """A game as the players' devices play it: each human seat with a key of its own (None: an API user that does
    not sign) signs every command over the history it was shown; the server's move receipt of each answer is kept."""

    def __init__(self, game_id: str, seats: list[dict], version: int = 3, unsigned: tuple = ()):
        setup = Setup.build(game_id, "yacht", seats, version=version)
        self.server_seed = seed = hashlib.sha256(game_id.encode()).digest()
        self.opened = open_log(Game(setup, seed), SIGNER)
        self.game = Game(setup, seed, self.opened["header"])
        self.keys = {s: None if s in unsigned or version < 3 else PlayerKey.generate() for s in setup.human_seats}
        self.seeds = {s: f"seed of seat {s}" for s in setup.human_seats or [None]}  # (None: the operator's)
        self.move_receipts: list[dict] = []

    @property
    def head(self) -> dict:
        return self.opened["header"]

    def signature(self, seat: int, command: dict) -> dict:
        key, g = self.keys[seat], self.game
        if key is None:
            return {}
        return {"player_signature": key.sign(g.setup.game_id, len(g.events), g.chain.digest, command),
                "event_count": len(g.events)}

    def answered(self) -> None:
        """The server's move receipt of the game as it stands (SPEC §5.6), over the chain the game keeps."""
        g = self.game
        self.move_receipts.append(SIGNER.sign_receipt(g.setup.game_id, len(g.events), g.chain.digest))

    def join(self) -> None:
        """Every human sends its client seed (committing first in a game of several humans, SPEC §4.3)."""
        g = self.game
        public = {s: k.public_hex if k else None for s, k in self.keys.items()}
        if g.setup.commits_client_seeds:
            salts = {s: hashlib.sha256(str(s).encode()).hexdigest() for s in self.keys}
            for s, text in self.seeds.items():  # SPEC §4.3: SHA-256(salt || player_key || UTF-8(client_seed))
                key_bytes = bytes.fromhex(public[s]) if public[s] else b""
                commitment = hashlib.sha256(bytes.fromhex(salts[s]) + key_bytes + text.encode()).hexdigest()
                g.commit_client_seed(s, commitment, **self.keyed(s, public[s], {
                    "type": "client_seed_commit", "seat": s, "commitment": commitment}))
                self.answered()
            for s, text in self.seeds.items():
                g.supply_client_seed(s, text, salts[s], **self.keyed(s, public[s], {
                    "type": "client_seed", "seat": s, "client_seed": text, "salt": salts[s]}))
                self.answered()
        else:
            for s, text in self.seeds.items():
                g.supply_client_seed(s, text, **(self.keyed(s, public[s], {
                    "type": "client_seed", "seat": s, "client_seed": text}) if s is not None else {}))
                self.answered()

    def keyed(self, seat: int, public: str | None, command: dict) -> dict:
        if self.game.setup.version < 3:
            return {}
        return {"player_key": public, **self.signature(seat, {**command, "player_key": public})}

    def roll(self, seat: int, hold=()) -> None:
        g = self.game
        g.roll(seat, list(hold), **self.signature(seat, {"type": "roll", "seat": seat, "turn": g.turn,
                                                          "roll": g.rolls_made + 1, "hold": sorted(hold)}))
        self.answered()

    def score(self, seat: int, category: str) -> None:
        g = self.game
        g.score(seat, category, **self.signature(seat, {"type": "score", "seat": seat, "turn": g.turn,
                                                         "category": category}))
        self.answered()

    def abandon(self, seat: int) -> None:
        self.game.abandon(seat, "player", **self.signature(seat, {"type": "abandon", "seat": seat,
                                                                   "reason": "player"}))
        self.answered()

    def play(self, rng: random.Random, until=lambda game: False) -> None:
        """Humans make random legal moves, bots play their policy, until the game is over or `until(game)`."""
        g = self.game
        while g.status == "playing" and not until(g):
            seat = g.current_seat
            if g.setup.seats[seat].is_bot:
                play_bots(g)
                self.answered()
            elif g.rolls_made == 0:
                self.roll(seat)
            elif g.rolls_made < 3 and rng.random() < 0.6:
                self.roll(seat, sorted(rng.sample(range(5), rng.randint(0, 4))))
            else:  # half the time the box of the most points: ann leads against the greedy bot now and then
                options = g.scoring_options()
                best = max(sorted(options), key=lambda c: options[c].points)
                self.score(seat, best if rng.random() < 0.5 else rng.choice(sorted(options)))

    def log(self) -> dict:
        return build_log(self.opened, self.game, SIGNER)

    def receipt(self, seat: int, receipt_version: int = 2) -> dict:
        """The player's receipt of `seat` (SPEC §5.5), as its device makes it when it sends its client seed."""
        extra = {} if receipt_version == 1 else {"log_version": self.game.setup.version,
                                                 "player_key": self.keys[seat] and self.keys[seat].public_hex}
        return make_receipt(self.head, self.opened["commitment_signature"], seat, self.seeds[seat], **extra)


def played(game_id="v3-game", seats=(ANN, GREEDY), rng_seed=1, **kw) -> Table:
    table = Table(game_id, list(seats), **kw)
    table.join()
    table.play(random.Random(rng_seed))
    return table
