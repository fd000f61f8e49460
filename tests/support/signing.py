"""The players' devices for tests and benchmarks: a game whose human seats sign their commands (SPEC §5.7).

`SigningGame(game, keys)` is the game as its players drive it: `roll`, `score` and `abandon` of a seat that has a
key are signed over the game's history (its chain) before the core checks them; everything else is the game's.
Code written for an unsigned game (play_randomly, play_bots) then plays a version 3 game unchanged.
"""

from __future__ import annotations

import hashlib

from fairdice.game import Game
from fairdice.players import PlayerKey


def player_key(label: str) -> PlayerKey:
    """A reproducible key pair: its private key is SHA-256 of `label`."""
    return PlayerKey.from_private_hex(hashlib.sha256(label.encode()).hexdigest())


class SigningGame:
    def __init__(self, game: Game, keys: dict[int, PlayerKey]):
        if game.chain is None:
            raise ValueError("a game whose players sign needs its header (Game(setup, seed, header))")
        self.game, self.keys = game, keys

    def __getattr__(self, name):
        return getattr(self.game, name)

    def _signed(self, seat, command: dict) -> dict:
        key = self.keys.get(seat)
        if key is None:
            return {}
        g = self.game
        n = len(g.events)
        return {"player_signature": key.sign(g.setup.game_id, n, g.chain.digest, command), "event_count": n}

    def supply_client_seed(self, seat, client_seed, salt=None):
        key = self.keys.get(seat)
        public = key.public_hex if key else None
        command = {"type": "client_seed", "seat": seat, "client_seed": client_seed, "player_key": public,
                   **({"salt": salt} if salt is not None else {})}
        return self.game.supply_client_seed(seat, client_seed, salt, player_key=public, **self._signed(seat, command))

    def commit_client_seed(self, seat, commitment):
        key = self.keys.get(seat)
        public = key.public_hex if key else None
        command = {"type": "client_seed_commit", "seat": seat, "commitment": commitment, "player_key": public}
        return self.game.commit_client_seed(seat, commitment, player_key=public, **self._signed(seat, command))

    def roll(self, seat, hold=()):
        g = self.game
        command = {"type": "roll", "seat": seat, "turn": g.turn, "roll": g.rolls_made + 1, "hold": sorted(hold)}
        return g.roll(seat, list(hold), **self._signed(seat, command))

    def score(self, seat, category):
        command = {"type": "score", "seat": seat, "turn": self.game.turn, "category": category}
        return self.game.score(seat, category, **self._signed(seat, command))

    def abandon(self, seat=None, reason="player"):
        command = {"type": "abandon", "seat": seat, "reason": reason}
        return self.game.abandon(seat, reason, **self._signed(seat, command))
