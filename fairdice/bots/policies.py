"""The two one-turn policies: `greedy` (easy) and `ev` (medium)."""

from __future__ import annotations

import numpy as np

from ..rules import FixedIf
from . import space
from .base import Candidate, Decision, Policy, Position, hold_candidates, score_candidates


class Greedy(Policy):
    """Scores a made fixed-points hand at once; otherwise keeps the most common face
    (the higher face on equal counts) and rerolls the rest; at the end takes the best immediate gain."""
    id = "greedy"
    version = "1"
    level = "easy"
    description = "Keeps the most common face and takes the best score on the table."

    def candidates(self, position: Position) -> list[Candidate]:
        gains, ids = space.gain_matrix(position.rules, position.boxes, position.upper_first)
        scores = score_candidates(position, gains, ids)
        if position.rolls_left == 0 or any(self._made(position, c) for c in scores):
            return scores
        face = max(set(position.dice), key=lambda f: (position.dice.count(f), f))
        hold = tuple(i for i, die in enumerate(position.dice) if die == face)
        if len(hold) == len(position.dice):
            return scores
        return [Candidate(Decision("roll", hold=hold), np.inf)]

    @staticmethod
    def _made(position: Position, candidate: Candidate) -> bool:
        category = position.rules.category(candidate.decision.category)
        return isinstance(category.rule, FixedIf) and candidate.value > 0


class ExpectedValue(Policy):
    """For every hold, the exact expected best immediate gain by the end of this turn."""
    id = "ev"
    version = "1"
    level = "medium"
    description = "Weighs every hold by the exact expected best score of this turn."

    def candidates(self, position: Position) -> list[Candidate]:
        gains, ids = space.gain_matrix(position.rules, position.boxes, position.upper_first)
        scores = score_candidates(position, gains, ids)
        if position.rolls_left == 0:
            return scores
        values = gains.max(axis=1)
        for _ in range(position.rolls_left - 1):
            values = np.maximum(values, (space.TRANSITION @ values)[space.SUBKEEPS].max(axis=1))
        return hold_candidates(position, space.TRANSITION @ values) + scores
