"""The `greedy` and `ev` bots of SPEC §4.5, written from the SPEC for the verifier (no code of the server).

A policy turns a position (rules, card, dice, rolls made, upper_first) into its `Choices`: every distinct hold
(a multiset of kept faces) and every legal box, each with a value. `decide` takes the best, and among several
tied ones the derived tie-break's, in the canonical order of SPEC §4.5 (`ranked` writes all of them in that
order, holds as positions). `ev`'s values are exact integers (in units of 6^-10 point), so its ties are exact
equalities. What a turn computes once for its card (every box's gain for every roll, ev's value of every keep)
is kept per process across the logs of a run (`TURNS`), under what it depends on (turn.gain_state)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import chain, compress, repeat
from operator import ge, mul
from typing import NamedTuple

from .turn import (KEEP_INDEX, OUTCOMES, BoxValues, TurnCache, best_over_subkeeps, canonical_order, gain_state,
                   hold_positions, keep_sums, roll_index, sub_keeps)

FIXED_POINTS = {  # the boxes whose rule scores fixed points (greedy's "made hands")
    "yacht": {"small_straight", "large_straight", "yacht"},
    "yatzy": {"small_straight", "large_straight", "yatzy"},
    "classic13": {"full_house", "small_straight", "large_straight", "yahtzee"},
}
EV_UNIT = OUTCOMES * OUTCOMES  # 6^10: every ev value is an integer number of 6^-10 point


class Choices(NamedTuple):
    """A position's candidates: the distinct holds (keep indices) and their values, the legal boxes (categories,
    in table order) and theirs."""
    holds: Sequence[int]
    hold_values: Sequence
    boxes: Sequence[str]
    box_values: Sequence


class Candidate(NamedTuple):
    decision: tuple  # ("roll", positions held) or ("score", category)
    value: int | float


def held(keeps, dice: tuple) -> list[tuple[int, ...]]:
    """The holds of these multisets of faces (keep indices) in these dice, in canonical order (SPEC §4.5): each as
    the lowest positions showing it, by Σ 2^position."""
    return sorted(map(hold_positions, keeps, repeat(dice)), key=canonical_order)


def ranked(choices: Choices, dice: tuple) -> list[Candidate]:
    """Every candidate in the canonical order of SPEC §4.5: the holds (held), then the boxes in table order."""
    value = dict(zip(map(hold_positions, choices.holds, repeat(dice)), choices.hold_values))
    return [Candidate(("roll", positions), value[positions]) for positions in held(choices.holds, dice)] + \
        [Candidate(("score", category), v) for category, v in zip(choices.boxes, choices.box_values)]


def decide(choices: Choices, dice: tuple, tiebreak: Callable[[int], int], tolerance: float = 0) -> tuple:
    """The best candidate's decision; with m > 1 within `tolerance` of the best, the one at index tiebreak(m)
    among them, in canonical order (ranked). Nothing is drawn for a single best."""
    holds, hold_values, boxes, box_values = choices
    least = max(chain(hold_values, box_values)) - tolerance
    tied = [("roll", positions) for positions in held(compress(holds, map(ge, hold_values, repeat(least))), dice)]
    tied += [("score", category) for category in compress(boxes, map(ge, box_values, repeat(least)))]
    return tied[tiebreak(len(tied)) if len(tied) > 1 else 0]


class OneTurn:
    """What greedy and ev compute for a turn on one card: every box's gain for every roll and, once ev asks,
    every keep's value in units of 6^-10 point after roll 1 (V2) and after roll 2 (V1). G(r) is the best gain
    of roll r; 7776·V1 = keep_sums(G); 7776·G2 = the best 7776·V1 inside a roll (the roll itself, worth 7776·G,
    included); 6^10·V2 = keep_sums(7776·G2)."""

    __slots__ = ("gains", "holds")

    def __init__(self, rules: str, boxes: dict, upper_first: bool):
        self.gains = BoxValues(rules, boxes, upper_first, lambda category, points, gains: gains)
        self.holds: tuple[array, array] | None = None

    def hold_values(self, roll: int) -> array:
        """Every keep's value after roll `roll` (1 or 2), in units of 6^-10 point."""
        if self.holds is None:
            v1 = keep_sums(self.gains.best_per_roll())  # 7776 · V1
            v2 = keep_sums(best_over_subkeeps(v1))  # 6^10 · V2
            self.holds = array("q", v2), array("q", map(mul, v1, repeat(OUTCOMES)))
        return self.holds[roll - 1]


TURNS = TurnCache(OneTurn)  # (rules, upper_first, gain_state) -> OneTurn, across the logs of a run


def one_turn(rules: str, boxes: dict, upper_first: bool) -> OneTurn:
    return TURNS.get((rules, upper_first, *gain_state(rules, boxes)), rules, boxes, upper_first)


def greedy(rules: str, boxes: dict, dice: tuple, roll: int, upper_first: bool) -> Choices:
    """A made fixed-points hand is scored (the best gain, which need not be that box); else the most common
    face is kept (the higher on equal counts) and the rest rerolled; after roll 3, the best gain."""
    categories, gains = one_turn(rules, boxes, upper_first).gains.of_roll(roll_index(dice))
    scores = Choices((), (), categories, gains)
    if roll == 3 or any(category in FIXED_POINTS[rules] and gain > 0 for category, gain in zip(categories, gains)):
        return scores
    face = max(set(dice), key=lambda f: (dice.count(f), f))
    held = dice.count(face)
    return scores if held == len(dice) else Choices((KEEP_INDEX[(face,) * held],), (0,), (), ())


def ev(rules: str, boxes: dict, dice: tuple, roll: int, upper_first: bool) -> Choices:
    """Holds valued V2 (after roll 1) or V1 (after roll 2), boxes by their gain: all in units of 6^-10."""
    turn, r = one_turn(rules, boxes, upper_first), roll_index(dice)
    categories, gains = turn.gains.of_roll(r)
    scores = list(map(mul, gains, repeat(EV_UNIT)))
    if roll == 3:
        return Choices((), (), categories, scores)
    holds = sub_keeps(r)
    return Choices(holds, list(map(turn.hold_values(roll).__getitem__, holds)), categories, scores)


POLICIES = {"greedy": greedy, "ev": ev}
