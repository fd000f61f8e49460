"""The space a bot's turn lives in (SPEC §4.5, §4.6), for the verifier's own replay of the house bots.

The 462 **keeps** (multisets of 0..5 faces, by size, then in lexicographic order) include the 252
**rolls** (the keeps of five dice, the last 252). Everything a bot computes is exact integer arithmetic
over them: `keep_sums` gives each keep 7776 times the mean of roll values over its rerolls,
`best_over_subkeeps` each roll the best keep inside it. Built once at import, standard library only.

A turn depends on its card only through a few numbers (`card_state`, and for the one-turn bots the coarser
`gain_state`): what a bot computes for a turn is kept in a `TurnCache` under them, so that a position met in
one log costs a lookup in every later log of the run."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from itertools import combinations_with_replacement
from operator import itemgetter
from typing import NamedTuple

from .spec import CATEGORIES, UPPER, UPPER_BONUS_AT, hand_points, options, upper_bonus, yahtzee_bonus

DICE, FACES, OUTCOMES = 5, (1, 2, 3, 4, 5, 6), 6 ** 5  # 7776 equally likely throws of five dice
HALF = OUTCOMES // 2
KEEPS = tuple(k for size in range(DICE + 1) for k in combinations_with_replacement(FACES, size))
KEEP_INDEX = {k: i for i, k in enumerate(KEEPS)}
FIRST_ROLL = KEEP_INDEX[(1,) * DICE]  # the rolls are KEEPS[FIRST_ROLL:]
ROLLS = KEEPS[FIRST_ROLL:]
ROLL_INDEX = {r: i for i, r in enumerate(ROLLS)}
CHILDREN = tuple(tuple(KEEP_INDEX[tuple(sorted(k + (f,)))] for f in FACES) for k in KEEPS[:FIRST_ROLL])
PARENTS = tuple(tuple(sorted({KEEP_INDEX[k[:i] + k[i + 1:]] for i in range(len(k))})) for k in KEEPS)
# (the same, flat, in the order keep_sums and best_over_subkeeps walk them)
FAMILIES = tuple((k, *CHILDREN[k]) for k in range(FIRST_ROLL - 1, -1, -1))  # by decreasing size
PARENT_PAIRS = tuple((k, p) for k in range(1, len(KEEPS)) for p in PARENTS[k])  # by increasing size


def roll_index(dice) -> int:
    """The index of a roll (five dice in any order) among ROLLS."""
    return ROLL_INDEX[tuple(sorted(dice))]


def keep_sums(roll_values) -> list[int]:
    """Roll values (252, by roll index) -> for every keep, 7776 × the mean value of the roll it leads to
    when the other dice are rerolled: the sum over the 6^(5−s) ordered rerolls, times 6^s. Exact."""
    s = [0] * FIRST_ROLL + [v * OUTCOMES for v in roll_values]
    for k, a, b, c, d, e, f in FAMILIES:  # by decreasing size: a keep's children (one die more) come first
        s[k] = (s[a] + s[b] + s[c] + s[d] + s[e] + s[f]) // 6  # (a child's sum is 6^(s+1) × its raw sum)
    return s


def best_over_subkeeps(keep_values) -> list[int]:
    """Keep values (462) -> for every roll (252) the highest value of a keep inside it, ∅ and the roll included."""
    best = list(keep_values)
    for k, p in PARENT_PAIRS:  # by increasing size: a keep's parents (one die less) come first
        if best[p] > best[k]:
            best[k] = best[p]
    return best[FIRST_ROLL:]


def round_half_even(n: int, d: int) -> int:
    """n / d rounded to the nearest integer, halves to the even one (d > 0)."""
    q, r = divmod(n, d)
    return q + 1 if 2 * r > d or (2 * r == d and q % 2) else q


def rounded_means(sums) -> list[int]:
    """[round_half_even(s, 7776) for s in sums], written out: (s + 3888) // 7776 rounds a half up, and a half just
    above an even quotient (s − 3888 a multiple of 2 · 7776) goes back down to it."""
    return [(s + HALF) // OUTCOMES - ((s - HALF) % (2 * OUTCOMES) == 0) for s in sums]


@cache
def sub_keeps(roll: int) -> tuple[int, ...]:
    """The keep index of every distinct hold of roll `roll` (an index among ROLLS) that rerolls at least one die:
    every multiset of faces inside the roll but the roll itself."""
    subs = {()}
    for die in ROLLS[roll]:  # (in increasing order: each multiset stays sorted)
        subs |= {s + (die,) for s in subs}
    subs.discard(ROLLS[roll])
    return tuple(sorted(KEEP_INDEX[k] for k in subs))


def hold_positions(keep: int, dice) -> tuple[int, ...]:
    """The hold of the multiset of faces KEEPS[keep] in these dice: the lowest positions showing it (SPEC §4.5)."""
    wanted, positions = list(KEEPS[keep]), []
    for p, die in enumerate(dice):
        if die in wanted:
            wanted.remove(die)
            positions.append(p)
    return tuple(positions)


def canonical_order(positions: tuple[int, ...]) -> int:
    """Where a hold comes among the candidates of its throw (SPEC §4.5): by Σ 2^position."""
    return sum(1 << p for p in positions)


@lru_cache(maxsize=8192)
def hold_candidates(dice: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], int], ...]:
    """(positions, keep index) of every distinct hold that rerolls at least one die: a multiset of kept faces
    written as the lowest positions showing it, in the canonical order of SPEC §4.5 (by Σ 2^position)."""
    holds = ((hold_positions(k, dice), k) for k in sub_keeps(roll_index(dice)))
    return tuple(sorted(holds, key=lambda h: canonical_order(h[0])))


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


# ------------------------------------------------------------------ what a turn depends on in a card

FIVE_ALIKE_BOX = {"classic13": "yahtzee"}  # the rule sets whose Yahtzee box, at 50, earns bonuses (SPEC §3.3)
CARD_VALUES = {rules: itemgetter(*cats) for rules, cats in CATEGORIES.items()}  # a card's points in table order
UPPER_BOXES = len(UPPER)  # (the first boxes of every rule set)


def card_state(rules: str, boxes: dict) -> tuple[int, int, int]:
    """(the filled boxes as a mask, bit c for the c-th box in table order; the upper total capped at 63; 1 when
    the Yahtzee box holds 50): SPEC §4.6's state. Every rule of a turn (the legal boxes, the forced joker, the
    upper bonus, the Yahtzee bonus) reads the card only through these three numbers."""
    values = CARD_VALUES[rules](boxes)
    mask = 0
    for c, v in enumerate(values):
        if v is not None:
            mask |= 1 << c
    upper = sum(filter(None, values[:UPPER_BOXES]))
    five_alike = FIVE_ALIKE_BOX.get(rules)
    return mask, min(UPPER_BONUS_AT, upper), int(five_alike is not None and boxes[five_alike] == 50)


def gain_state(rules: str, boxes: dict) -> tuple[int, int, int]:
    """card_state with the upper total replaced by what this turn's gains can see of it: the points still
    needed for the upper bonus when one open upper box can bring them (an upper box takes at most five times
    its face), else 0 (nothing this turn reaches it, or it is reached). Enough for the one-turn bots (greedy,
    ev), whose values are this turn's gains; the optimal bot looks further (card_state)."""
    mask, upper, flag = card_state(rules, boxes)
    need = UPPER_BONUS_AT - upper
    most = max((5 * face for face in FACES if not mask >> (face - 1) & 1), default=0)  # (upper boxes: bits 0-5)
    return mask, need if need <= most else 0, flag


# ------------------------------------------------------------------ every box of every roll, for one card

FIVE_ALIKE_ROLLS = tuple(ROLL_INDEX[(f,) * DICE] for f in FACES)
ORDINARY_ROLL = (1, 2, 3, 4, 6)  # not five alike


@cache
def point_codes(rules: str) -> dict[str, tuple[tuple[int, ...], tuple[int, ...], Callable]]:
    """Per box: (its distinct points over the 252 rolls, each roll's index into them, a gather of a tuple of
    values by those indices), by the verifier's own scoring."""
    codes = {}
    for c in CATEGORIES[rules]:
        column = [hand_points(rules, roll)[c] for roll in ROLLS]
        distinct = tuple(sorted(set(column)))
        by_roll = tuple(distinct.index(p) for p in column)
        codes[c] = distinct, by_roll, itemgetter(*by_roll)
    return codes


def elementwise_max(columns: list[tuple[int, ...]]) -> list[int]:
    """The highest value at each index over the columns: a comparison at a time for a few columns, else max()
    over all of them (cheaper per column once there are more than six)."""
    if len(columns) > 6:
        return list(map(max, *columns))
    best = columns[0]
    for column in columns[1:]:
        best = [a if a > b else b for a, b in zip(best, column)]
    return list(best)


class BoxValues:
    """The legal boxes of every roll on one card, each with its value to a bot: `worth(category, points, gains)`
    gives the values of writing each of `points` (whose gains are `gains`) into `category`.

    Which boxes are legal depends on the dice only for five alike once the Yahtzee box is filled (the forced
    joker, and the Yahtzee bonus, §3.3): the other rolls have the legal boxes of any one of them, and a box's
    value depends on the roll only through its points, so each box keeps one value per distinct points; those
    five alike are done one by one."""

    __slots__ = ("categories", "columns", "five_alike")

    def __init__(self, rules: str, boxes: dict, upper_first: bool,
                 worth: Callable[[str, tuple[int, ...], tuple[int, ...]], list[int]]):
        upper = sum(boxes[c] or 0 for c in UPPER)
        codes = point_codes(rules)
        legal = roll_boxes(rules, boxes, ORDINARY_ROLL, upper_first)
        self.categories = tuple(box.category for box in legal)  # the legal boxes of the other rolls, in table order
        self.columns = []  # per legal box: (its values by distinct points, each roll's index into them, a gather)
        for c in self.categories:
            distinct, by_roll, gather = codes[c]
            # (only an upper box earns a bonus on an ordinary roll)
            gains = tuple(p + upper_bonus(rules, upper, c, p) for p in distinct) if c in UPPER else distinct
            self.columns.append((tuple(worth(c, distinct, gains)), by_roll, gather))
        five_alike = FIVE_ALIKE_BOX.get(rules)
        self.five_alike = {}  # roll index -> (its legal boxes, their values)
        for r in (FIVE_ALIKE_ROLLS if five_alike and boxes[five_alike] is not None else ()):
            legal = roll_boxes(rules, boxes, ROLLS[r], upper_first)
            self.five_alike[r] = (tuple(b.category for b in legal),
                                  [worth(b.category, (b.points,), (b.gain,))[0] for b in legal])

    def of_roll(self, r: int) -> tuple[tuple[str, ...], list[int]]:
        """(the legal boxes for roll index r, in table order; their values)."""
        five_alike = self.five_alike.get(r)
        if five_alike is not None:
            return five_alike
        return self.categories, [values[by_roll[r]] for values, by_roll, _ in self.columns]

    def best_per_roll(self) -> list[int]:
        """For every roll (by roll index), the highest value over its legal boxes."""
        best = elementwise_max([gather(values) for values, _, gather in self.columns])
        for r, (_, values) in self.five_alike.items():
            best[r] = max(values)
        return best


class TurnCache:
    """Per process: what a bot computed for a turn, under the key of what that turn depends on (card_state or
    gain_state, with whatever else the bot reads). Filled as the logs are replayed and kept for the logs that
    follow (in the same process: every worker of a run has its own); at most `size` turns, the oldest going
    first. `made` counts the turns computed."""

    def __init__(self, make: Callable, size: int = 4096):
        self.make, self.size, self.turns, self.made = make, size, {}, 0

    def get(self, key: tuple, *args):
        """The turn under `key`, made by make(*args) the first time."""
        turn = self.turns.get(key)
        if turn is None:
            if len(self.turns) >= self.size:
                del self.turns[next(iter(self.turns))]
            turn = self.turns[key] = self.make(*args)
            self.made += 1
        return turn

    def clear(self) -> None:
        """Forget every turn (`made` goes on counting)."""
        self.turns.clear()
