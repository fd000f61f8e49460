"""The `optimal` policy, given solved tables: pure.  Where tables come from is the edges' business.

The policy asks a *table source* (`provide_tables`) for the table of a rule set: the server, `fairdice
simulate`, `fairdice tables` and the tests install `fairdice.edges.table_cache`, which verifies cached
tables against the manifest and builds missing ones where that edge allows it.  A decision never builds a
table.  Without a source the policy raises FairdiceError("table_unavailable").

The upper_first house rule is not covered by the tables: the policy raises
FairdiceError("unsupported_rules") (`fairdice.hint` falls back to `ev`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property, lru_cache

import numpy as np

from ...errors import FairdiceError
from ...rules import DICE, UPPER_BONUS_THRESHOLD, RuleSet, options, ruleset
from .. import space
from ..base import Candidate, Decision, Policy, Position
from . import programme
from .programme import OUTCOMES, POINT, StateSpace
from .table_format import manifest

TURN_CACHE = 4096  # states whose turn values a table keeps (a turn asks up to three times)


def state_of(rules: RuleSet, boxes: Mapping[str, int | None], threshold: int = UPPER_BONUS_THRESHOLD
             ) -> tuple[int, int, int]:
    """(mask of filled boxes, upper total capped at the threshold, Yahtzee-50 flag) of a card."""
    mask, upper = 0, 0
    for c, cat in enumerate(rules.categories):
        value = boxes.get(cat.id)
        if value is None:
            continue
        mask |= 1 << c
        if cat.upper:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 \
                    or value % cat.rule.face or value > DICE * cat.rule.face:
                raise FairdiceError("invalid_card", f"{cat.id} cannot hold {value!r}")
            upper += value
    flag = int(rules.forced_joker and rules.five_alike in rules.category_ids
               and (boxes.get(rules.five_alike) or 0) > 0)
    return mask, min(threshold, upper), flag


class SolvedTable:
    """A rule set's verified table: each card's value, and the values within a turn derived from it."""

    def __init__(self, rules, values: np.ndarray, threshold: int = UPPER_BONUS_THRESHOLD):
        self.states = rules if isinstance(rules, StateSpace) else StateSpace(ruleset(rules), threshold)
        self.values = np.asarray(values, dtype=float)
        self._turns: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._points_of_turns: dict[tuple[int, int, int], tuple[list[float], list[float]]] = {}

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
        return self._turn(self.state(boxes), boxes)

    def _turn(self, state, boxes):
        turn = self._turns.get(state)
        if turn is None:
            if len(self._turns) >= TURN_CACHE:
                self.forget_turns()
            turn = self._turns[state] = programme.state_turn(self.states, self.values, state,
                                                             self._joker_options(boxes, state))
        return turn

    def forget_turns(self) -> None:
        """Drop the turn values kept per state (they are recomputed when next asked)."""
        self._turns.clear()
        self._points_of_turns.clear()

    def _hold_points(self, state, boxes) -> tuple[list[float], list[float]]:
        """hold_values of a state with one and with two rolls to come, as Python floats."""
        points = self._points_of_turns.get(state)
        if points is None:
            points = self._points_of_turns[state] = tuple(
                (keep / OUTCOMES / POINT).tolist() for keep in self._turn(state, boxes))
        return points

    @cached_property
    def _points(self) -> list[list[int]]:
        """Plain points per roll (space order) and box, as Python ints."""
        return self.states.scores.astype(int).tolist()

    def last_roll_values(self, boxes) -> np.ndarray:
        """Each roll's value (252, space order, table units) after the last roll of a turn on this card."""
        state = self.state(boxes)
        return programme.last_roll_values(self.states, self.values, state, self._joker_options(boxes, state))

    def _joker_options(self, boxes, state):
        """For `programme.last_roll_values`: the legal boxes for five alike under the forced joker, read off
        the rules' own `options`, as (gain, upper total after, flag after)."""
        rules, threshold = self.rules, self.states.threshold
        _, upper, flag = state

        def of_face(face: int) -> dict[int, tuple[int, int, int]]:
            out = {}
            for cid, opt in options(rules, boxes, (face,) * DICE).items():
                c = rules.category_ids.index(cid)
                gain, after = opt.points + opt.yahtzee_bonus, upper
                if rules.categories[c].upper:
                    after = min(threshold, upper + opt.points)
                    gain += rules.upper_bonus if upper < threshold <= after else 0
                out[c] = (gain, after, flag)
            return out
        return of_face

    def score_values(self, boxes, dice, state=None) -> list[tuple[str, float]]:
        """(box, value in points: gain now plus the expected rest) for each legal box, in table order.

        The legal boxes and their points are `rules.options`'; except under the forced joker they are
        every open box with its plain points, read from the programme's score table (quicker)."""
        st, rs = self.states, self.rules
        mask, upper, flag = self.state(boxes) if state is None else state
        if st.tracks_five_alike and mask >> st.five_alike_box & 1 and len(set(dice)) == 1:
            legal = [(rs.category_ids.index(cid), opt.points + opt.yahtzee_bonus, opt.points)
                     for cid, opt in options(rs, boxes, dice).items()]
        else:
            row = self._points[space.ROLL_INDEX[tuple(sorted(dice))]]
            legal = [(c, row[c], row[c]) for c in range(st.boxes) if not mask >> c & 1]
        out = []
        for c, gain, points in legal:
            upper_after, flag_after = upper, flag
            if st.faces[c]:
                upper_after = min(st.threshold, upper + points)
                if upper < st.threshold <= upper_after:
                    gain += rs.upper_bonus
            elif c == st.five_alike_box and st.tracks_five_alike:
                flag_after = int(points > 0)
            out.append((rs.category_ids[c], (gain * POINT + self.values.item(mask | 1 << c, upper_after, flag_after))
                        / POINT))
        return out

    def hold_candidates(self, boxes, dice, state, rolls_left: int) -> list[Candidate]:
        """One candidate per distinct hold that rerolls something, in the canonical order of
        base.hold_candidates, valued as `hold_values`."""
        values = self._hold_points(state, boxes)[rolls_left - 1]
        decisions, keeps = _roll_decisions(dice)
        return list(map(Candidate, decisions, [values[k] for k in keeps]))


TableSource = Callable[[str], SolvedTable]
_source: TableSource | None = None


def provide_tables(source: TableSource | None) -> None:
    """Where the optimal policy gets its tables: `source(rules_id)` returns the SolvedTable (or raises a
    FairdiceError).  Set by the edges; None removes it."""
    global _source
    _source = source


def table_for(rules_id: str) -> SolvedTable:
    if _source is None:
        raise FairdiceError("table_unavailable", "the optimal policy has no table source; an edge installs one "
                                                 "(fairdice.edges.table_cache.install())")
    return _source(rules_id)


class Optimal(Policy):
    """Exact expected-final-score maximiser over the whole card (a precomputed table per rule set)."""
    id = "optimal"
    version = "1"
    level = "hard"
    description = "Plays the whole card to maximise the expected final score (exact dynamic programme)."
    plays_upper_first = False

    def params(self) -> dict:
        return {"table_sha256": {rid: entry["sha256"] for rid, entry in sorted(manifest()["tables"].items())}}

    def table(self, position: Position) -> SolvedTable:
        if position.upper_first:
            raise FairdiceError("unsupported_rules", "the optimal bot does not play the upper-first house rule")
        return table_for(position.rules.id)

    def candidates(self, position: Position) -> list[Candidate]:
        table = self.table(position)
        if position.roll == 0:  # before the first roll the only move is to throw all five
            return [Candidate(Decision("roll", hold=()), table.value(position.boxes))]
        state = table.state(position.boxes)
        scores = [Candidate(_score_decision(cid), value)
                  for cid, value in table.score_values(position.boxes, position.dice, state)]
        if position.rolls_left == 0:
            return scores
        return table.hold_candidates(position.boxes, position.dice, state, position.rolls_left) + scores


@lru_cache(maxsize=None)
def _score_decision(category: str) -> Decision:
    return Decision("score", category=category)


@lru_cache(maxsize=8192)
def _roll_decisions(dice: tuple[int, ...]) -> tuple[tuple[Decision, ...], tuple[int, ...]]:
    """The roll decisions of base.hold_candidates for these dice, and the keep each one keeps."""
    holds = space.hold_candidates(tuple(dice))
    return tuple(Decision("roll", hold=positions) for positions, _ in holds), tuple(k for _, k in holds)
