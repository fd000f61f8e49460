"""The `optimal` policy, given solved tables: pure.  Where tables come from is the edges' business.

The policy is made with a *table source* (`Optimal(tables)`, a function from a rule set's id to its
SolvedTable), which it asks when a decision first needs a table: the server, `fairdice simulate`,
`fairdice analyze` and the tests pass `fairdice.adapters.table_cache.source()` (or the registry made with
it, `table_cache.bots()`), which verifies cached tables against the manifest and builds missing ones where
the caller allows it.  A decision never builds a table itself.  Made without a source (`BOTS["optimal"]`),
the policy still has its identity, and a decision raises FairdiceError("table_unavailable") saying how to
get one.

The upper_first house rule is not covered by the tables: the policy raises
FairdiceError("unsupported_rules") (`fairdice.hint` falls back to `ev`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

import numpy as np

from ...errors import FairdiceError
from ...rules import DICE, UPPER_BONUS_THRESHOLD, RuleSet, options, ruleset
from .. import space
from ..base import Decision, Policy, Position, roll_decisions, score_decision
from . import programme
from .programme import OUTCOMES, POINT, StateSpace
from .table_format import manifest

TURN_CACHE = 4096  # states whose turns a table keeps (a turn asks up to three times)
KEEP_POINT = OUTCOMES * POINT  # x / KEEP_POINT == x / OUTCOMES / POINT bit for bit (POINT is a power of two)


@lru_cache(maxsize=64)
def _card_layout(rules: RuleSet) -> tuple[tuple[tuple[str, int, int], ...], str | None]:
    """Each box as (id, bit in the mask, face if upper else 0), and the box whose points set the flag."""
    layout = tuple((cat.id, 1 << c, cat.rule.face if cat.upper else 0) for c, cat in enumerate(rules.categories))
    flagged = rules.five_alike if rules.forced_joker and rules.five_alike in rules.category_ids else None
    return layout, flagged


def state_of(rules: RuleSet, boxes: Mapping[str, int | None], threshold: int = UPPER_BONUS_THRESHOLD
             ) -> tuple[int, int, int]:
    """(mask of filled boxes, upper total capped at the threshold, Yahtzee-50 flag) of a card."""
    layout, flagged = _card_layout(rules)
    mask, upper = 0, 0
    for cid, bit, face in layout:
        value = boxes.get(cid)
        if value is None:
            continue
        mask |= bit
        if face:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 \
                    or value % face or value > DICE * face:
                raise FairdiceError("invalid_card", f"{cid} cannot hold {value!r}")
            upper += value
    flag = int(flagged is not None and (boxes.get(flagged) or 0) > 0)
    return mask, rules.upper_after(0, upper, threshold)[0], flag  # the upper total, capped


class _Turn:
    """One state's turn, solved as far as decisions have asked: what scoring each box is worth after each
    roll, then 7776 x each keep's value with one and with two rolls to come (all in table units)."""
    __slots__ = ("open_boxes", "score_decisions", "scores", "last", "keeps")

    def __init__(self, open_boxes: tuple[int, ...], score_decisions: tuple[Decision, ...], scores: np.ndarray,
                 last: np.ndarray):
        self.open_boxes = open_boxes  # in table order
        self.score_decisions = score_decisions  # one per open box
        self.scores = scores  # (boxes, 252 rolls), table units
        self.last = last  # each roll's value after the last roll (252, table units)
        self.keeps: list[np.ndarray | None] = [None, None]  # one roll to come, two rolls to come: when asked

    def score_points(self, roll: int) -> list[float]:
        """The value in points of scoring each open box after this roll (space.ROLLS index)."""
        row = (self.scores[:, roll] / POINT).tolist()
        return [row[c] for c in self.open_boxes]

    def keep_values(self, rolls_left: int) -> np.ndarray:
        """7776 x each keep's value (462, space order, table units) with `rolls_left` (1 or 2) rolls to come.
        (Each is set once, whole: two threads asking at once at worst both compute the same values.)"""
        one, two = self.keeps
        if one is None:
            one = self.keeps[0] = programme.keep_means(self.last)
        if rolls_left == 1:
            return one
        if two is None:
            two = self.keeps[1] = programme.keep_means(programme.earlier_roll_values(one))
        return two

    def hold_points(self, keeps: np.ndarray, rolls_left: int) -> list[float]:
        """The value in points of these keeps (space.KEEPS indices) with `rolls_left` rolls to come."""
        return (self.keep_values(rolls_left).take(keeps) / KEEP_POINT).tolist()


class SolvedTable:
    """A rule set's verified table: each card's value, and the values within a turn derived from it."""

    def __init__(self, rules, values: np.ndarray, threshold: int = UPPER_BONUS_THRESHOLD):
        self.states = rules if isinstance(rules, StateSpace) else StateSpace(ruleset(rules), threshold)
        self.values = np.ascontiguousarray(values, dtype=float)
        self._flat_values = self.values.reshape(-1)
        self._turns: dict[tuple[int, int, int], _Turn] = {}

    @property
    def rules(self) -> RuleSet:
        return self.states.rules

    def state(self, boxes) -> tuple[int, int, int]:
        return state_of(self.rules, boxes, self.states.threshold)

    def value(self, boxes) -> float:
        """Expected points still to come from a card between turns (bonuses included)."""
        return float(self.values[self.state(boxes)] / POINT)

    def start_value(self) -> float:
        return float(self.values[0, 0, 0] / POINT)

    def hold_values(self, boxes, rolls_left: int) -> np.ndarray:
        """Value in points of each of the 462 holds (space.KEEPS order) with `rolls_left` (1 or 2) rolls to come."""
        return self.turn(boxes)[rolls_left - 1] / OUTCOMES / POINT

    def turn(self, boxes) -> tuple[np.ndarray, np.ndarray]:
        """7776 x each hold's value (table units) with one and with two rolls to come; kept per state."""
        turn = self._turn(self.state(boxes))
        return turn.keep_values(1), turn.keep_values(2)

    def _turn(self, state) -> _Turn:
        turn = self._turns.get(state)
        if turn is None:
            if len(self._turns) >= TURN_CACHE:
                self.forget_turns()
            turn = self._turns[state] = self._solve_turn(state)
        return turn

    def _solve_turn(self, state) -> _Turn:
        successors = programme.successor_values(self.states, self._flat_values, state)
        scores = programme.score_table(self.states, successors)
        last = programme.last_roll_values(self.states, self.values, state, scores, successors)
        return _Turn(*_open_boxes(self.rules, state[0]), scores, last)

    def forget_turns(self) -> None:
        """Drop the turns kept per state (they are solved again when next asked)."""
        self._turns.clear()

    def last_roll_values(self, boxes) -> np.ndarray:
        """Each roll's value (252, space order, table units) after the last roll of a turn on this card."""
        return self._turn(self.state(boxes)).last.copy()

    def choices(self, boxes, dice, rolls_left: int) -> tuple[tuple[Decision, ...], list[float]]:
        """Every candidate decision after a roll and its value in points, in the canonical order of
        base.hold_choices and score_choices: the distinct holds that reroll something (none when
        `rolls_left` is 0), valued as `hold_values`, then the legal boxes, each valued as its gain now plus the
        expected rest."""
        state = self.state(boxes)
        turn = self._turn(state)
        roll = tuple(sorted(dice))
        if roll[0] == roll[-1] and programme.joker_applies(self.states, state[0]):
            scored = self._joker_score_values(boxes, roll, state)
            decisions, values = tuple(score_decision(cid) for cid, _ in scored), [value for _, value in scored]
        else:
            decisions, values = turn.score_decisions, turn.score_points(space.ROLL_INDEX[roll])
        if rolls_left == 0:
            return decisions, values
        holds, keeps = roll_decisions(dice)
        return holds + decisions, turn.hold_points(keeps, rolls_left) + values

    def _joker_score_values(self, boxes, dice, state) -> list[tuple[str, float]]:
        """(box, value in points: gain now plus the expected rest) for each legal box of five alike under the
        forced joker, where the legal boxes and their points are `rules.options`'."""
        st, rs = self.states, self.rules
        mask, upper, flag = state
        out = []
        for cid, opt in options(rs, boxes, dice).items():
            c, gain, upper_after = rs.category_ids.index(cid), opt.points + opt.yahtzee_bonus, upper
            if st.faces[c]:
                upper_after, upper_bonus = rs.upper_after(upper, opt.points, st.threshold)
                gain += upper_bonus
            out.append((cid, (gain * POINT + self.values.item(mask | 1 << c, upper_after, flag)) / POINT))
        return out


TableSource = Callable[[str], SolvedTable]

NO_TABLES = ("the optimal policy was made without a table source: make it with one, as the command line and "
             "the server do (fairdice.adapters.table_cache.bots(), or Optimal(table_cache.source())); "
             "`fairdice tables build` builds the tables ahead")


class Optimal(Policy):
    """Exact expected-final-score maximiser over the whole card (a precomputed table per rule set)."""
    id = "optimal"
    version = "1"
    level = "hard"
    description = "Plays the whole card to maximise the expected final score (exact dynamic programme)."
    plays_upper_first = False
    uses_tables = True

    def __init__(self, tables: TableSource | None = None):
        """`tables(rules_id)` returns the SolvedTable (or raises a FairdiceError); asked when a decision first
        needs it, so that making the policy (to name it in a log, say) loads nothing."""
        self._tables = tables

    def params(self) -> dict:
        return {"table_sha256": {rid: entry["sha256"] for rid, entry in sorted(manifest()["tables"].items())}}

    def table(self, position: Position) -> SolvedTable:
        if position.upper_first:
            raise FairdiceError("unsupported_rules", "the optimal bot does not play the upper-first house rule")
        if self._tables is None:
            raise FairdiceError("table_unavailable", NO_TABLES)
        return self._tables(position.rules.id)

    def choices(self, position: Position) -> tuple[tuple[Decision, ...], list[float]]:
        table = self.table(position)
        if position.roll == 0:  # before the first roll the only move is to throw all five
            return (_THROW_ALL,), [table.value(position.boxes)]
        return table.choices(position.boxes, position.dice, position.rolls_left)


_THROW_ALL = Decision("roll", hold=())


@lru_cache(maxsize=4096)
def _open_boxes(rules: RuleSet, mask: int) -> tuple[tuple[int, ...], tuple[Decision, ...]]:
    """The open boxes of a card (table order), and the decision to score each."""
    open_boxes = tuple(c for c in range(len(rules.categories)) if not mask >> c & 1)
    return open_boxes, tuple(score_decision(rules.category_ids[c]) for c in open_boxes)

