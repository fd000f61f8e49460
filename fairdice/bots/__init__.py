"""Bot policies and the loop that lets bots take their turns inside a game.

`BOTS` names every published policy; a policy's module (numpy, tables) is imported the first time the
policy itself is wanted, so that checking a seat's bot id costs no import.  `BOTS` has no table source (the
core reads no file): its `optimal` names itself in a log, and refuses to decide.  What plays the optimal bot
passes a registry made with one (`BOTS.with_tables(source)`; the edges' is `fairdice.adapters.table_cache.bots()`)
to `play_bots`."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..game import Game
    from .base import Policy, Position
    from .optimal import TableSource

_PUBLISHED = {  # id -> (module, class), in the order the bots are listed
    "greedy": ("fairdice.bots.policies", "Greedy"),
    "ev": ("fairdice.bots.policies", "ExpectedValue"),
    "optimal": ("fairdice.bots.optimal", "Optimal"),
}


class PolicyRegistry(Mapping):
    """The published policies by id, each made on first use, those that decide from tables with `tables`."""

    def __init__(self, published: Mapping[str, tuple[str, str]], tables: TableSource | None = None):
        self._published = dict(published)
        self._tables = tables
        self._made: dict[str, Policy] = {}

    def with_tables(self, tables: TableSource) -> PolicyRegistry:
        """The same policies, the table-driven ones (optimal) asking `tables(rules_id)` for their tables."""
        return PolicyRegistry(self._published, tables)

    def __getitem__(self, bot_id: str) -> Policy:
        policy = self._made.get(bot_id)
        if policy is None:
            module, name = self._published[bot_id]
            cls = getattr(importlib.import_module(module), name)
            policy = self._made.setdefault(bot_id, cls(self._tables) if cls.uses_tables else cls())
        return policy

    def __iter__(self) -> Iterator[str]:
        return iter(self._published)

    def __len__(self) -> int:
        return len(self._published)

    def __contains__(self, bot_id) -> bool:
        return bot_id in self._published


BOTS = PolicyRegistry(_PUBLISHED)


def measured_scores() -> dict:
    """Mean and standard deviation of each bot's solitaire score per rule set, from `bench/tiers.py`."""
    return json.loads(resources.files(__package__).joinpath("measured.json").read_text(encoding="utf-8"))


def position_of(game: Game) -> Position:
    from .base import Position

    seat = game.current_seat
    card = game.card(seat)
    return Position(game.rules, dict(card.boxes), game.dice, game.rolls_made, card.yahtzee_bonus,
                    game.setup.upper_first)


def play_bots(game: Game, bots: Mapping[str, Policy] = BOTS) -> list[dict]:
    """Play every bot turn due now, until a human is to move or the game is over, with these policies (a
    game with an optimal bot needs a registry made with a table source: `BOTS.with_tables`)."""
    events = []
    while game.status == "playing" and game.setup.seats[game.current_seat].is_bot:
        seat = game.current_seat
        if game.rolls_made == 0:
            events += game.roll(seat)
            continue
        decision = bots[game.setup.seats[seat].bot].decide(position_of(game), game.tiebreak)
        if decision.action == "roll":
            events += game.roll(seat, decision.hold)
        else:
            events += game.score(seat, decision.category)
    return events


__all__ = ["BOTS", "PolicyRegistry", "measured_scores", "play_bots", "position_of"]
