"""The three rule sets as data: a table of categories per game, a few scoring rules.

A category's scoring rule sees the dice as face counts; nothing here knows
about turns or seats.  `options()` adds the card context that plain scoring
cannot see: which boxes are open, the forced joker and the Yahtzee bonus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import NamedTuple

from .errors import FairdiceError

FACES = range(1, 7)
DICE = 5
UPPER_BONUS_THRESHOLD = 63
FACE_CATEGORIES = ("ones", "twos", "threes", "fours", "fives", "sixes")


def counts_of(dice: Sequence[int]) -> tuple[int, ...]:
    """How many dice show each face; index 0 is unused so that counts[face] reads naturally."""
    counts = [0] * 7
    for die in dice:
        counts[die] += 1
    return tuple(counts)


# --- conditions on face counts -------------------------------------------------

def _at_least_alike(n):
    return lambda counts: max(counts) >= n


def _all_present(*faces):
    return lambda counts: all(counts[f] for f in faces)


def _any_run(*runs):
    return lambda counts: any(all(counts[f] for f in run) for run in runs)


def _full_house(five_alike_counts: bool):
    def condition(counts):
        shape = sorted(c for c in counts if c)
        return shape == [2, 3] or (five_alike_counts and shape == [5])
    return condition


SMALL_RUNS = ((1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6))
LARGE_RUNS = ((1, 2, 3, 4, 5), (2, 3, 4, 5, 6))


# --- scoring rules ---------------------------------------------------------------

@dataclass(frozen=True)
class Upper:
    """Sum of the dice showing one face."""
    face: int

    def score(self, counts):
        return self.face * counts[self.face]


@dataclass(frozen=True)
class SumIf:
    """Sum of all five dice when the condition holds (always, without one)."""
    condition: object = None

    def score(self, counts):
        if self.condition is None or self.condition(counts):
            return sum(face * counts[face] for face in FACES)
        return 0


@dataclass(frozen=True)
class FixedIf:
    """Fixed points when the condition holds."""
    points: int
    condition: object

    def score(self, counts):
        return self.points if self.condition(counts) else 0


@dataclass(frozen=True)
class SetsOf:
    """Yatzy's pair, two pairs, three and four of a kind: only the matching dice count.

    `size` dice of one face make a set; `sets` different faces are needed, and
    the highest faces are taken.
    """
    size: int
    sets: int = 1

    def score(self, counts):
        faces = [face for face in reversed(FACES) if counts[face] >= self.size]
        if len(faces) < self.sets:
            return 0
        return self.size * sum(faces[: self.sets])


@dataclass(frozen=True)
class Category:
    id: str
    section: str  # "upper" or "lower"
    rule: object
    label: str
    joker_points: int | None = None  # classic13: fixed points as a joker; None means the sum of the dice
    # whether it is in the upper section: a plain attribute, set once, since totals and options ask it for
    # every box of every card
    upper: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "upper", self.section == "upper")


@dataclass(frozen=True, eq=False)  # identity equality: a rule set is hashed on every cached bot lookup
class RuleSet:
    id: str
    name: str
    categories: tuple[Category, ...]
    upper_bonus: int
    five_alike: str  # the category that scores five alike
    yahtzee_bonus: int = 0  # 0: no bonus and no forced joker
    summary: str = ""

    @cached_property
    def category_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.categories)

    @property
    def forced_joker(self) -> bool:
        return self.yahtzee_bonus > 0

    @cached_property
    def upper_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.categories if c.upper)

    @cached_property
    def lower_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.categories if not c.upper)

    @cached_property
    def _index(self) -> dict[str, Category]:
        return {c.id: c for c in self.categories}

    def upper_after(self, total: int, points: int, threshold: int = UPPER_BONUS_THRESHOLD) -> tuple[int, int]:
        """(the upper total after `points` more in an upper box, capped at the threshold; the upper bonus this
        earns now): the bonus is earned once, by the box whose points reach the threshold.

        The one place the bonus rule is computed: `totals`, the bots, the hint and the optimal engine ask here
        (array code through `fairdice.bots.space.upper_arrays`, a table of these answers).  `threshold` other
        than the rule book's only for the optimal engine's small test games.
        """
        after = total + points
        bonus = self.upper_bonus if total < threshold <= after else 0
        return min(threshold, after), bonus

    def category(self, category_id: str) -> Category:
        try:
            return self._index[category_id]
        except (KeyError, TypeError):
            raise FairdiceError(
                "unknown_category",
                f"unknown category {category_id!r} for {self.id}; valid: {', '.join(self.category_ids)}",
                allowed=list(self.category_ids),
            ) from None


def _upper_categories():
    labels = ("Ones", "Twos", "Threes", "Fours", "Fives", "Sixes")
    return tuple(Category(cid, "upper", Upper(face), label)
                 for face, cid, label in zip(FACES, FACE_CATEGORIES, labels))


YACHT = RuleSet(
    id="yacht",
    name="Yacht",
    upper_bonus=35,
    five_alike="yacht",
    summary="12 boxes; full house and four of a kind score all five dice; no joker.",
    categories=_upper_categories() + (
        Category("choice", "lower", SumIf(), "Choice"),
        Category("four_of_a_kind", "lower", SumIf(_at_least_alike(4)), "Four of a kind"),
        Category("full_house", "lower", SumIf(_full_house(five_alike_counts=True)), "Full house"),
        Category("small_straight", "lower", FixedIf(15, _any_run(*SMALL_RUNS)), "Small straight"),
        Category("large_straight", "lower", FixedIf(30, _any_run(*LARGE_RUNS)), "Large straight"),
        Category("yacht", "lower", FixedIf(50, _at_least_alike(5)), "Yacht"),
    ),
)

YATZY = RuleSet(
    id="yatzy",
    name="Yatzy",
    upper_bonus=50,
    five_alike="yatzy",
    summary="15 boxes (Scandinavian); sets score only the matching dice; fixed straights; bonus 50.",
    categories=_upper_categories() + (
        Category("one_pair", "lower", SetsOf(2), "One pair"),
        Category("two_pairs", "lower", SetsOf(2, sets=2), "Two pairs"),
        Category("three_of_a_kind", "lower", SetsOf(3), "Three of a kind"),
        Category("four_of_a_kind", "lower", SetsOf(4), "Four of a kind"),
        Category("small_straight", "lower", FixedIf(15, _all_present(1, 2, 3, 4, 5)), "Small straight"),
        Category("large_straight", "lower", FixedIf(20, _all_present(2, 3, 4, 5, 6)), "Large straight"),
        Category("full_house", "lower", SumIf(_full_house(five_alike_counts=False)), "Full house"),
        Category("chance", "lower", SumIf(), "Chance"),
        Category("yatzy", "lower", FixedIf(50, _at_least_alike(5)), "Yatzy"),
    ),
)

CLASSIC13 = RuleSet(
    id="classic13",
    name="Classic 13",
    upper_bonus=35,
    five_alike="yahtzee",
    yahtzee_bonus=100,
    summary="13 boxes (Yahtzee-style); fixed full house and straights; +100 Yahtzee bonus and forced joker.",
    categories=_upper_categories() + (
        Category("three_of_a_kind", "lower", SumIf(_at_least_alike(3)), "Three of a kind"),
        Category("four_of_a_kind", "lower", SumIf(_at_least_alike(4)), "Four of a kind"),
        Category("full_house", "lower", FixedIf(25, _full_house(five_alike_counts=False)), "Full house",
                 joker_points=25),
        Category("small_straight", "lower", FixedIf(30, _any_run(*SMALL_RUNS)), "Small straight",
                 joker_points=30),
        Category("large_straight", "lower", FixedIf(40, _any_run(*LARGE_RUNS)), "Large straight",
                 joker_points=40),
        Category("yahtzee", "lower", FixedIf(50, _at_least_alike(5)), "Yahtzee"),
        Category("chance", "lower", SumIf(), "Chance"),
    ),
)

RULESETS: Mapping[str, RuleSet] = MappingProxyType({r.id: r for r in (YACHT, YATZY, CLASSIC13)})


def ruleset(rules: str | RuleSet) -> RuleSet:
    if isinstance(rules, RuleSet):
        return rules
    try:
        return RULESETS[rules]
    except (KeyError, TypeError):
        raise FairdiceError(
            "unknown_rules",
            f"unknown rule set {rules!r}; valid: {', '.join(RULESETS)}",
            allowed=list(RULESETS),
        ) from None


def check_dice(dice) -> tuple[int, ...]:
    """Five integers 1..6, or a FairdiceError saying what is wrong."""
    if not _is_sequence(dice) or len(dice) != DICE:
        raise FairdiceError("invalid_dice", f"dice must be a list of {DICE} integers 1..6, got {dice!r}")
    for die in dice:
        if isinstance(die, bool) or not isinstance(die, int) or not 1 <= die <= 6:
            raise FairdiceError("invalid_dice", f"dice must be a list of {DICE} integers 1..6, got {dice!r}")
    return tuple(dice)


def _is_sequence(value) -> bool:
    """A list, a tuple or another sequence that is not text (the ABC check last: it is slow)."""
    return type(value) in (tuple, list) or (not isinstance(value, (str, bytes)) and isinstance(value, Sequence))


def score(rules: str | RuleSet, category: str, dice: Sequence[int]) -> int:
    """Plain scoring of five dice in one category, without card context (no joker, no bonus)."""
    rs = ruleset(rules)
    return rs.category(category).rule.score(counts_of(check_dice(dice)))


class Option(NamedTuple):  # (a tuple: options are made for every box after every roll)
    """What recording the current dice in one open box would do."""
    category: str
    points: int
    yahtzee_bonus: int = 0
    joker: bool = False


def options(rules: str | RuleSet, card: Mapping[str, int | None], dice: Sequence[int],
            upper_first: bool = False) -> dict[str, Option]:
    """The legal boxes for these dice on this card, with what each would score.

    `card` maps category id to its points, or None (or absence) while open.
    Applies the forced joker and Yahtzee bonus of classic13 and the optional
    house rule that the upper section is completed first.
    """
    rs = ruleset(rules)
    counts = counts_of(check_dice(dice))
    open_cats = [c for c in rs.categories if card.get(c.id) is None]
    if upper_first and any(c.upper for c in open_cats):
        open_cats = [c for c in open_cats if c.upper]

    five_alike = max(counts) == DICE
    if rs.forced_joker and five_alike and card.get(rs.five_alike) is not None:
        face = counts.index(DICE)
        bonus = rs.yahtzee_bonus if card[rs.five_alike] > 0 else 0
        own_box = FACE_CATEGORIES[face - 1]
        if any(c.id == own_box for c in open_cats):
            return {own_box: Option(own_box, DICE * face, bonus)}
        lower = [c for c in open_cats if not c.upper]
        if lower:
            total = DICE * face
            return {c.id: Option(c.id, total if c.joker_points is None else c.joker_points, bonus, joker=True)
                    for c in lower}
        return {c.id: Option(c.id, 0, bonus) for c in open_cats}

    plain = _plain_options(rs, counts)
    return {c.id: plain[c.id] for c in open_cats}


@lru_cache(maxsize=1024)  # 252 distinct throws per rule set
def _plain_options(rs: RuleSet, counts: tuple[int, ...]) -> dict[str, Option]:
    """Every box's plain score of these face counts: what `options` offers but for the joker (read only)."""
    return {c.id: Option(c.id, c.rule.score(counts)) for c in rs.categories}


class Totals(NamedTuple):
    upper: int
    upper_bonus: int
    lower: int
    yahtzee_bonus: int

    @property
    def total(self) -> int:
        return self.upper + self.upper_bonus + self.lower + self.yahtzee_bonus

    def as_dict(self) -> dict[str, int]:
        return {"upper": self.upper, "upper_bonus": self.upper_bonus, "lower": self.lower,
                "yahtzee_bonus": self.yahtzee_bonus, "total": self.total}


def totals(rules: str | RuleSet, card: Mapping[str, int | None], yahtzee_bonus: int = 0) -> Totals:
    rs = ruleset(rules)
    upper = sum([card.get(cid) or 0 for cid in rs.upper_ids])
    lower = sum([card.get(cid) or 0 for cid in rs.lower_ids])
    _, bonus = rs.upper_after(0, upper)  # the upper boxes' points, as if scored at once
    return Totals(upper, bonus, lower, yahtzee_bonus)
