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
from collections.abc import Callable, Mapping, Sequence
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
    uses_tables: bool = False  # whether it is made with a table source (`Policy(tables)`: the registry passes it)

    def params(self) -> dict:
        """What besides id and version defines the policy (a table digest, say)."""
        return {}

    def identity(self) -> dict:
        return {"id": self.id, "version": self.version, "hash": self.identity_hash()}

    def identity_hash(self) -> str:
        doc = {"id": self.id, "version": self.version, "params": self.params()}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    def choices(self, position: Position) -> tuple[Sequence[Decision], list[float]]:
        """Every candidate decision after a roll and its value, in the canonical order (holds by position
        mask, then boxes in table order): what `candidates` and `decide` are made of."""
        raise NotImplementedError

    def candidates(self, position: Position) -> list[Candidate]:
        return list(map(Candidate, *self.choices(position)))

    def decide(self, position: Position, tiebreak: Callable[[int], int]) -> Decision:
        """The derived pick among the choices within TIE_TOLERANCE of the best (no Candidate made: a bot
        decides several times a turn, inside the answer to a move)."""
        decisions, values = self.choices(position)
        floor = max(values) - TIE_TOLERANCE
        tied = [i for i, value in enumerate(values) if value >= floor]
        return decisions[tied[tiebreak(len(tied))]]


def score_choices(position: Position, gains: np.ndarray, ids: tuple[str, ...]
                  ) -> tuple[tuple[Decision, ...], list[float]]:
    """One choice per legal box, in table order, valued by its gain (-inf in `gains`: not legal)."""
    row = gains[space.ROLL_INDEX[tuple(sorted(position.dice))]].tolist()  # the same values, as Python floats
    decisions = _score_decisions(ids)
    if -math.inf not in row:
        return decisions, row
    legal = [i for i, gain in enumerate(row) if gain != -math.inf]
    return tuple(decisions[i] for i in legal), [row[i] for i in legal]


def hold_choices(position: Position, keep_values: np.ndarray) -> tuple[tuple[Decision, ...], list[float]]:
    """One choice per distinct hold that rerolls something, valued by keep_values[keep]."""
    decisions, keeps = roll_decisions(tuple(position.dice))
    return decisions, keep_values.take(keeps).tolist()  # the same values, as Python floats


@lru_cache(maxsize=8192)
def roll_decisions(dice: tuple[int, ...]) -> tuple[tuple[Decision, ...], np.ndarray]:
    """The decision to keep each distinct hold of these dice that rerolls something, by position mask
    (space.hold_masks), and the keep index of each."""
    holds = space.hold_masks(dice)
    return (tuple(_ROLL_DECISIONS[mask] for mask, _ in holds),
            np.array([keep for _, keep in holds], dtype=np.intp))


@lru_cache(maxsize=1024)
def _score_decisions(ids: tuple[str, ...]) -> tuple[Decision, ...]:
    return tuple(score_decision(cid) for cid in ids)


_ROLL_DECISIONS = tuple(Decision("roll", hold=positions) for positions in space.POSITIONS_OF_MASK)  # by mask


@lru_cache(maxsize=64)
def score_decision(category: str) -> Decision:
    """The decision to fill `category` (one object per box, shared by every policy)."""
    return Decision("score", category=category)
