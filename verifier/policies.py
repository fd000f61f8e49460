"""The `greedy` and `ev` bots of SPEC §4.5, written from the SPEC for the verifier (no code of the server).

A policy turns a position (rules, card, dice, rolls made, upper_first) into its candidates in canonical
order, each with a value; `choose` takes the best, and among several tied ones the derived tie-break's.
`ev`'s values are exact integers (in units of 6^-10 point), so its ties are exact equalities."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from .spec import CATEGORIES
from .turn import OUTCOMES, best_over_subkeeps, best_per_roll, card_key, hold_candidates, keep_sums, roll_boxes

FIXED_POINTS = {  # the boxes whose rule scores fixed points (greedy's "made hands")
    "yacht": {"small_straight", "large_straight", "yacht"},
    "yatzy": {"small_straight", "large_straight", "yatzy"},
    "classic13": {"full_house", "small_straight", "large_straight", "yahtzee"},
}
EV_UNIT = OUTCOMES * OUTCOMES  # 6^10: every ev value is an integer number of 6^-10 point


class Candidate(NamedTuple):
    decision: tuple  # ("roll", positions held) or ("score", category)
    value: int | float


def choose(candidates: list[Candidate], tiebreak: Callable[[int], int], tolerance: float = 0) -> tuple:
    """The best candidate's decision; with m > 1 within `tolerance` of the best, the one at index
    tiebreak(m) among them, in canonical order (SPEC §4.5). Nothing is drawn for a single best."""
    best = max(c.value for c in candidates)
    tied = [c for c in candidates if c.value >= best - tolerance]
    return tied[tiebreak(len(tied)) if len(tied) > 1 else 0].decision


def box_candidates(rules: str, boxes: dict, dice: tuple, upper_first: bool, unit: int = 1) -> list[Candidate]:
    """Every legal box for the dice, in table order, valued by its immediate gain (times `unit`)."""
    return [Candidate(("score", b.category), b.gain * unit) for b in roll_boxes(rules, boxes, dice, upper_first)]


def greedy(rules: str, boxes: dict, dice: tuple, roll: int, upper_first: bool) -> list[Candidate]:
    """A made fixed-points hand is scored (the best gain, which need not be that box); else the most common
    face is kept (the higher on equal counts) and the rest rerolled; after roll 3, the best gain."""
    scores = box_candidates(rules, boxes, dice, upper_first)
    if roll == 3 or any(c.decision[1] in FIXED_POINTS[rules] and c.value > 0 for c in scores):
        return scores
    face = max(set(dice), key=lambda f: (dice.count(f), f))
    hold = tuple(p for p, die in enumerate(dice) if die == face)
    return scores if len(hold) == len(dice) else [Candidate(("roll", hold), 0)]


def ev(rules: str, boxes: dict, dice: tuple, roll: int, upper_first: bool) -> list[Candidate]:
    """Holds valued V2 (after roll 1) or V1 (after roll 2), boxes by their gain: all in units of 6^-10."""
    scores = box_candidates(rules, boxes, dice, upper_first, EV_UNIT)
    if roll == 3:
        return scores
    values = ev_hold_values(rules, card_key(rules, boxes), upper_first)[roll - 1]
    return [Candidate(("roll", positions), values[k]) for positions, k in hold_candidates(dice)] + scores


@lru_cache(maxsize=256)
def ev_hold_values(rules: str, card: tuple, upper_first: bool) -> tuple[list[int], list[int]]:
    """(V2, V1) of every keep on this card, in units of 6^-10 point: V2 for after roll 1, V1 after roll 2.
    G(r) is the best gain of roll r; 7776·V1 = keep_sums(G); 7776·G2 = the best 7776·V1 inside a roll (the
    roll itself, worth 7776·G, included); 6^10·V2 = keep_sums(7776·G2)."""
    best_gain = best_per_roll(rules, dict(zip(CATEGORIES[rules], card)), upper_first, lambda c, p, gain: gain)
    v1 = keep_sums(best_gain)  # 7776 · V1
    v2 = keep_sums(best_over_subkeeps(v1))  # 6^10 · V2
    return v2, [v * OUTCOMES for v in v1]


POLICIES = {"greedy": greedy, "ev": ev}
