"""The space a bot's turn lives in (SPEC §4.5, §4.6), for the verifier's own replay of the house bots.

The 462 **keeps** (multisets of 0..5 faces, by size, then in lexicographic order) include the 252
**rolls** (the keeps of five dice, the last 252). Everything a bot computes is exact integer arithmetic
over them: `keep_sums` gives each keep 7776 times the mean of roll values over its rerolls,
`best_over_subkeeps` each roll the best keep inside it. Built once at import, standard library only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from itertools import combinations_with_replacement
from typing import NamedTuple

from .spec import CATEGORIES, UPPER, hand_points, options, upper_bonus, yahtzee_bonus

DICE, FACES, OUTCOMES = 5, (1, 2, 3, 4, 5, 6), 6 ** 5  # 7776 equally likely throws of five dice
KEEPS = tuple(k for size in range(DICE + 1) for k in combinations_with_replacement(FACES, size))
KEEP_INDEX = {k: i for i, k in enumerate(KEEPS)}
FIRST_ROLL = KEEP_INDEX[(1,) * DICE]  # the rolls are KEEPS[FIRST_ROLL:]
ROLLS = KEEPS[FIRST_ROLL:]
ROLL_INDEX = {r: i for i, r in enumerate(ROLLS)}
CHILDREN = tuple(tuple(KEEP_INDEX[tuple(sorted(k + (f,)))] for f in FACES) for k in KEEPS[:FIRST_ROLL])
PARENTS = tuple(tuple(sorted({KEEP_INDEX[k[:i] + k[i + 1:]] for i in range(len(k))})) for k in KEEPS)
COMPLETIONS_FACTOR = tuple(6 ** len(k) for k in KEEPS)  # (sum over the 6^(5-s) rerolls) * 6^s = 7776 * mean


def keep_sums(roll_values) -> list[int]:
    """Roll values (252, by roll index) -> for every keep, 7776 × the mean value of the roll it leads to
    when the other dice are rerolled: the sum over the 6^(5−s) ordered rerolls, times 6^s. Exact."""
    s = [0] * FIRST_ROLL + list(roll_values)
    for k in range(FIRST_ROLL - 1, -1, -1):  # by decreasing size: a keep's children (one die more) come first
        a, b, c, d, e, f = CHILDREN[k]
        s[k] = s[a] + s[b] + s[c] + s[d] + s[e] + s[f]
    return [v * w for v, w in zip(s, COMPLETIONS_FACTOR)]


def best_over_subkeeps(keep_values) -> list[int]:
    """Keep values (462) -> for every roll (252) the highest value of a keep inside it, ∅ and the roll included."""
    best = list(keep_values)
    for k in range(1, len(KEEPS)):  # by increasing size: a keep's parents (one die less) come first
        for p in PARENTS[k]:
            if best[p] > best[k]:
                best[k] = best[p]
    return best[FIRST_ROLL:]


def round_half_even(n: int, d: int) -> int:
    """n / d rounded to the nearest integer, halves to the even one (d > 0)."""
    q, r = divmod(n, d)
    return q + 1 if 2 * r > d or (2 * r == d and q % 2) else q


@lru_cache(maxsize=8192)
def hold_candidates(dice: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], int], ...]:
    """(positions, keep index) of every distinct hold that rerolls at least one die: a multiset of kept faces
    written as the lowest positions showing it, in the canonical order of SPEC §4.5 (by Σ 2^position)."""
    subs = {()}
    for die in sorted(dice):
        subs |= {tuple(sorted(s + (die,))) for s in subs}
    holds = []
    for keep in subs - {tuple(sorted(dice))}:
        wanted, positions = Counter(keep), []
        for p, die in enumerate(dice):
            if wanted[die]:
                wanted[die] -= 1
                positions.append(p)
        holds.append((tuple(positions), KEEP_INDEX[keep]))
    return tuple(sorted(holds, key=lambda h: sum(1 << p for p in h[0])))


class Box(NamedTuple):
    """A legal box for a roll: its points, and its immediate gain (points, upper bonus reached, Yahtzee bonus)."""
    category: str
    points: int
    gain: int


def card_key(rules: str, boxes: dict) -> tuple:
    return tuple(boxes.get(c) for c in CATEGORIES[rules])


def roll_boxes(rules: str, boxes: dict, dice, upper_first: bool) -> tuple[Box, ...]:
    """The legal boxes for these dice, in table order, by the verifier's own scoring (spec.options:
    the forced joker and upper_first included), each with its immediate gain."""
    upper = sum(boxes[c] or 0 for c in UPPER)
    bonus = yahtzee_bonus(rules, boxes, dice)
    return tuple(Box(c, pts, pts + bonus + upper_bonus(rules, upper, c, pts))
                 for c, (pts, _joker) in options(rules, boxes, dice, upper_first).items())


@lru_cache(maxsize=None)
def points_columns(rules: str) -> dict[str, list[int]]:
    """The points of every box for every roll (by roll index), by the verifier's own scoring."""
    return {c: [hand_points(rules, roll)[c] for roll in ROLLS] for c in CATEGORIES[rules]}


FIVE_ALIKE_ROLLS = tuple(ROLL_INDEX[(f,) * DICE] for f in FACES)
ORDINARY_ROLL = (1, 2, 3, 4, 6)  # not five alike


def best_per_roll(rules: str, boxes: dict, upper_first: bool, value: Callable[[str, int, int], int]) -> list[int]:
    """For every roll (by roll index), the highest value(category, points, gain) over its legal boxes.

    Which boxes are legal depends on the dice only for five alike (the forced joker, §3.3): the other 246
    rolls have the legal boxes of any one of them, and are done a box at a time; five alike one by one."""
    upper = sum(boxes[c] or 0 for c in UPPER)
    columns = []
    for box in roll_boxes(rules, boxes, ORDINARY_ROLL, upper_first):
        points = points_columns(rules)[box.category]
        of_points = {p: value(box.category, p, p + upper_bonus(rules, upper, box.category, p)) for p in set(points)}
        columns.append([of_points[p] for p in points])
    best = list(map(max, zip(*columns)))
    for r in FIVE_ALIKE_ROLLS:
        best[r] = max(value(b.category, b.points, b.gain) for b in roll_boxes(rules, boxes, ROLLS[r], upper_first))
    return best
