"""What every bot policy shares: the position it sees, the decision it makes, the tie-break rule.

A policy is public and deterministic.  It ranks candidate decisions in the
canonical order of SPEC.md (holds by position mask, then boxes in table
order); among those within TIE_TOLERANCE of the best, a derived tie-break
picks one.  Its identity hash covers its id, version and parameters, so a
log names exactly which policy played.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..rules import RuleSet
from . import space

TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Position:
    """A seat's view after a roll: its card, the dice, and how many rolls it made this turn."""
    rules: RuleSet
    boxes: Mapping[str, int | None]
    dice: tuple[int, ...]
    roll: int
    yahtzee_bonus: int = 0
    upper_first: bool = False

    @property
    def rolls_left(self) -> int:
        return 3 - self.roll


class Decision(NamedTuple):  # a tuple, not a dataclass: a bot builds dozens per decision
    action: str  # "roll" or "score"
    hold: tuple[int, ...] = ()
    category: str | None = None

    def as_dict(self) -> dict:
        if self.action == "roll":
            return {"action": "roll", "hold": list(self.hold)}
        return {"action": "score", "category": self.category}


class Candidate(NamedTuple):
    decision: Decision
    value: float


class Policy:
    id: str = ""
    version: str = ""
    level: str = ""
    description: str = ""
    plays_upper_first: bool = True  # whether the policy can play the upper-first house rule

    def params(self) -> dict:
        """What besides id and version defines the policy (a table digest, say)."""
        return {}

    def identity(self) -> dict:
        return {"id": self.id, "version": self.version, "hash": self.identity_hash()}

    def identity_hash(self) -> str:
        doc = {"id": self.id, "version": self.version, "params": self.params()}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    def candidates(self, position: Position) -> list[Candidate]:
        raise NotImplementedError

    def decide(self, position: Position, tiebreak: Callable[[int], int]) -> Decision:
        ranked = self.candidates(position)
        best = max(c.value for c in ranked)
        tied = [c for c in ranked if c.value >= best - TIE_TOLERANCE]
        return tied[tiebreak(len(tied))].decision


def score_candidates(position: Position, gains: np.ndarray, ids: list[str],
                     future: Mapping[str, float] | None = None) -> list[Candidate]:
    """One candidate per legal box, in table order, valued by gain (plus a future value per box)."""
    row = gains[space.ROLL_INDEX[tuple(sorted(position.dice))]].tolist()  # the same values, as Python floats
    return [Candidate(_score_decision(cid), gain + (future[cid] if future else 0.0))
            for gain, cid in zip(row, ids) if gain != -math.inf]


def hold_candidates(position: Position, keep_values: np.ndarray) -> list[Candidate]:
    """One candidate per distinct hold that rerolls something, valued by keep_values[keep]."""
    holds = space.hold_masks(position.dice)
    values = keep_values.take([keep for _, keep in holds]).tolist()  # the same values, as Python floats
    return [Candidate(_ROLL_DECISIONS[mask], value) for (mask, _), value in zip(holds, values)]


_ROLL_DECISIONS = tuple(Decision("roll", hold=positions) for positions in space.POSITIONS_OF_MASK)  # by mask


@lru_cache(maxsize=64)
def _score_decision(category: str) -> Decision:
    return Decision("score", category=category)
