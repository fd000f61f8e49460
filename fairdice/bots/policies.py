"""The two one-turn policies: `greedy` (easy) and `ev` (medium)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..rules import FixedIf
from . import space
from .base import Decision, Policy, Position, hold_choices, score_choices


class Greedy(Policy):
    """Scores a made fixed-points hand at once; otherwise keeps the most common face
    (the higher face on equal counts) and rerolls the rest; at the end takes the best immediate gain."""
    id = "greedy"
    version = "1"
    level = "easy"
    description = "Keeps the most common face and takes the best score on the table."

    def choices(self, position: Position) -> tuple[tuple[Decision, ...], list[float]]:
        gains, ids = space.gain_matrix(position.rules, position.boxes, position.upper_first)
        scores = score_choices(position, gains, ids)
        if position.rolls_left == 0 or any(self._made(position, *choice) for choice in zip(*scores)):
            return scores
        face = max(set(position.dice), key=lambda f: (position.dice.count(f), f))
        hold = tuple(i for i, die in enumerate(position.dice) if die == face)
        if len(hold) == len(position.dice):
            return scores
        return (Decision("roll", hold=hold),), [np.inf]

    @staticmethod
    def _made(position: Position, decision: Decision, value: float) -> bool:
        category = position.rules.category(decision.category)
        return isinstance(category.rule, FixedIf) and value > 0


class ExpectedValue(Policy):
    """For every hold, the exact expected best immediate gain by the end of this turn."""
    id = "ev"
    version = "1"
    level = "medium"
    description = "Weighs every hold by the exact expected best score of this turn."

    def choices(self, position: Position) -> tuple[tuple[Decision, ...], list[float]]:
        card = space.card_key(position.rules, position.boxes)
        gains, ids = space.card_gains(position.rules, card, position.upper_first)
        scores = score_choices(position, gains, ids)
        if position.rolls_left == 0:
            return scores
        keep_values = _keep_values(position.rules, card, position.upper_first)[position.rolls_left - 1]
        holds = hold_choices(position, keep_values)
        return holds[0] + scores[0], holds[1] + scores[1]


@lru_cache(maxsize=256)
def _keep_values(rules, card: tuple, upper_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """Expected best gain of every hold with one and with two rolls left: computed once per card and turn."""
    gains, _ = space.card_gains(rules, card, upper_first)
    last = gains.max(axis=1)  # (gains is column-major: a maximum across columns, row by row at C speed)
    one_left = space.TRANSITION @ last
    second_last = np.maximum(last, one_left[space.SUBKEEPS_BY_COLUMN].max(axis=0))
    return one_left, space.TRANSITION @ second_last
