"""Bot policies and the loop that lets bots take their turns inside a game."""

from __future__ import annotations

import json
from importlib import resources

from ..game import Game
from .base import Decision, Policy, Position
from .optimal import Optimal
from .policies import ExpectedValue, Greedy

BOTS: dict[str, Policy] = {p.id: p for p in (Greedy(), ExpectedValue(), Optimal())}


def measured_scores() -> dict:
    """Mean and standard deviation of each bot's solitaire score per rule set, from `bench/tiers.py`."""
    return json.loads(resources.files(__package__).joinpath("measured.json").read_text(encoding="utf-8"))


def position_of(game: Game) -> Position:
    seat = game.current_seat
    card = game.card(seat)
    return Position(game.rules, dict(card.boxes), game.dice, game.rolls_made, card.yahtzee_bonus,
                    game.setup.upper_first)


def play_bots(game: Game) -> list[dict]:
    """Play every bot turn due now, until a human is to move or the game is over."""
    events = []
    while game.status == "playing" and game.setup.seats[game.current_seat].is_bot:
        seat = game.current_seat
        if game.rolls_made == 0:
            events += game.roll(seat)
            continue
        decision = BOTS[game.setup.seats[seat].bot].decide(position_of(game), game.tiebreak)
        if decision.action == "roll":
            events += game.roll(seat, decision.hold)
        else:
            events += game.score(seat, decision.category)
    return events


__all__ = ["BOTS", "Decision", "Policy", "Position", "measured_scores", "play_bots", "position_of"]
