"""The space a turn lives in: the 252 distinct rolls, the 462 distinct holds, and how one leads to the other.

Rolls and holds are sorted face tuples (multisets).  `TRANSITION[k, r]` is the
probability that keeping hold k and rerolling the rest gives roll r.  Every
expected-value bot is a few matrix products over these tables.
"""

from __future__ import annotations

from collections import Counter
from functools import cache, lru_cache
from itertools import combinations_with_replacement
from math import factorial

import numpy as np

from ..rules import DICE, FACES, UPPER_BONUS_THRESHOLD, RuleSet, counts_of, options

ROLLS: tuple[tuple[int, ...], ...] = tuple(combinations_with_replacement(FACES, DICE))
ROLL_INDEX = {r: i for i, r in enumerate(ROLLS)}
KEEPS: tuple[tuple[int, ...], ...] = tuple(
    k for size in range(DICE + 1) for k in combinations_with_replacement(FACES, size))
KEEP_INDEX = {k: i for i, k in enumerate(KEEPS)}


def _multiset_probability(faces: tuple[int, ...]) -> float:
    """Probability that len(faces) fresh dice show exactly this multiset."""
    ways = factorial(len(faces))
    for n in Counter(faces).values():
        ways //= factorial(n)
    return ways / 6 ** len(faces)


def _sub_multisets(roll: tuple[int, ...]) -> set[tuple[int, ...]]:
    subs = {()}
    for die in roll:
        subs |= {tuple(sorted(s + (die,))) for s in subs}
    return subs


def _build_tables():
    transition = np.zeros((len(KEEPS), len(ROLLS)))
    for k, keep in enumerate(KEEPS):
        for fresh in combinations_with_replacement(FACES, DICE - len(keep)):
            transition[k, ROLL_INDEX[tuple(sorted(keep + fresh))]] += _multiset_probability(fresh)
    subkeeps = np.zeros((len(ROLLS), 32), dtype=np.intp)
    for r, roll in enumerate(ROLLS):
        subs = sorted(KEEP_INDEX[s] for s in _sub_multisets(roll))
        subkeeps[r, :] = subs + [subs[-1]] * (32 - len(subs))  # pad by repeating: harmless under max
    return transition, subkeeps


TRANSITION, SUBKEEPS = _build_tables()
SUBKEEPS_BY_COLUMN = np.ascontiguousarray(SUBKEEPS.T)  # (32, 252): a maximum over axis 0 runs at C speed
FIRST_ROLL = TRANSITION[KEEP_INDEX[()]]


@cache
def score_table(rules: RuleSet) -> np.ndarray:
    """Plain scores, shape (252 rolls, categories in table order)."""
    table = np.zeros((len(ROLLS), len(rules.categories)))
    for r, roll in enumerate(ROLLS):
        counts = counts_of(roll)
        for c, category in enumerate(rules.categories):
            table[r, c] = category.rule.score(counts)
    return table


FIVE_ALIKE_ROLLS = tuple(ROLL_INDEX[(f,) * DICE] for f in FACES)


@lru_cache(maxsize=64)
def upper_arrays(rules: RuleSet, threshold: int = UPPER_BONUS_THRESHOLD) -> tuple[np.ndarray, np.ndarray]:
    """`RuleSet.upper_after` as two read-only integer arrays indexed [capped upper total, upper box points]:
    the total after (capped) and the upper bonus earned now, for code that moves whole arrays of cards."""
    table = np.array([[rules.upper_after(total, points, threshold) for points in range(DICE * FACES[-1] + 1)]
                      for total in range(threshold + 1)], dtype=np.intp)
    after, bonus = table[..., 0], table[..., 1]
    after.flags.writeable = bonus.flags.writeable = False
    return after, bonus


def gain_matrix(rules: RuleSet, boxes, upper_first: bool = False) -> tuple[np.ndarray, tuple[str, ...]]:
    """Immediate gain (points, upper bonus reached, Yahtzee bonus) of each legal box for every roll.

    Shape (252, open boxes), column-major; an illegal box for a roll is -inf (the forced joker
    and the upper-first house rule make some boxes illegal for some rolls).
    Cached per card, since a turn asks up to three times; the array is read-only.
    """
    return card_gains(rules, card_key(rules, boxes), upper_first)


def card_key(rules: RuleSet, boxes) -> tuple:
    """A card as a hashable value, for the per-card caches."""
    return tuple([boxes.get(c) for c in rules.category_ids])


@lru_cache(maxsize=1024)
def card_gains(rules: RuleSet, card: tuple, upper_first: bool):
    """gain_matrix of the card `card_key` made."""
    boxes = dict(zip(rules.category_ids, card))
    open_cols = [c for c, cat in enumerate(rules.categories) if boxes.get(cat.id) is None]
    if upper_first and any(rules.categories[c].upper for c in open_cols):
        open_cols = [c for c in open_cols if rules.categories[c].upper]
    ids = [rules.categories[c].id for c in open_cols]
    gains = np.asfortranarray(score_table(rules)[:, open_cols])  # (a copy: the score table stays as it is)
    upper_now, _ = rules.upper_after(0, sum(boxes.get(c.id) or 0 for c in rules.categories if c.upper))  # capped
    upper_open = [j for j, c in enumerate(open_cols) if rules.categories[c].upper]
    if upper_open:
        upper_gains = gains[:, upper_open]
        gains[:, upper_open] = upper_gains + upper_arrays(rules)[1][upper_now, upper_gains.astype(np.intp)]
    if rules.forced_joker and boxes.get(rules.five_alike) is not None:
        for r in FIVE_ALIKE_ROLLS:
            legal = options(rules, boxes, ROLLS[r], upper_first)
            for j, cid in enumerate(ids):
                opt = legal.get(cid)
                if opt is None:
                    gains[r, j] = -np.inf
                else:
                    bonus = rules.upper_after(upper_now, opt.points)[1] if rules.category(cid).upper else 0
                    gains[r, j] = opt.points + opt.yahtzee_bonus + bonus
    gains.flags.writeable = False
    return gains, tuple(ids)


def canonical_hold(dice, keep: tuple[int, ...]) -> tuple[int, ...]:
    """The lowest positions of `dice` that show the kept multiset."""
    wanted = Counter(keep)
    positions = []
    for pos, die in enumerate(dice):
        if wanted[die]:
            wanted[die] -= 1
            positions.append(pos)
    return tuple(positions)


POSITIONS_OF_MASK = tuple(tuple(p for p in range(DICE) if mask >> p & 1) for mask in range(1 << DICE))


def hold_masks(dice) -> list[tuple[int, int]]:
    """(position mask, keep index) for every distinct hold that rerolls at least one die, by mask (bit i =
    position i held): the tie-break order of SPEC.md.  The hold of a kept multiset is its canonical
    positions, the lowest ones showing it."""
    order = tuple(sorted(range(len(dice)), key=dice.__getitem__))  # stable: a face's positions stay in order
    to_positions = _index_masks_to_positions(order)
    return sorted([(to_positions[kept], keep) for kept, keep in _roll_holds(tuple(sorted(dice)))])


@lru_cache(maxsize=len(ROLLS))
def _roll_holds(roll: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The holds of a sorted roll that reroll at least one die: (mask of the kept indices of the roll, keep
    index).  Index i of the roll is the i-th die of the dice in face order, a face's dice in position order,
    so the first dice of a face in the roll are its lowest positions in the dice."""
    return tuple((sum(1 << i for i in canonical_hold(roll, keep)), KEEP_INDEX[keep])
                 for keep in _sub_multisets(roll) if len(keep) < DICE)


@cache  # one per order of five dice: 120
def _index_masks_to_positions(order: tuple[int, ...]) -> tuple[int, ...]:
    """For dice whose positions in face order are `order`: each mask of roll indices as a mask of positions."""
    return tuple(sum(1 << order[i] for i in range(len(order)) if mask >> i & 1) for mask in range(1 << len(order)))
