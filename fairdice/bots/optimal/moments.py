"""The optimal engine's second moments (the standard deviation of the final score): the programme's kernel
path for `TurnKernel` when it is given a table of second moments.  Pure: no I/O.

It solves the values too, the long way: every box and every parent in table order, a division by 6 a
level of the lattice, so that the moments follow the choices the values make, ties included (the first
box in table order, and the bigger keep, win a tie).  The value path of `programme` computes the same
values (`test_the_value_path_agrees_with_the_moment_path`).  Only the maintainers' `tools/write_manifest`
and `fairdice tables build --moments` come here: three times the work of the values alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...rules import DICE, FACES
from .. import space
from .programme import (EXACT_LIMIT, LATTICE, OUTCOMES, POINT, StateSpace, TurnKernel, _FIVE_ALIKE, _ROLL_ORDER,
                        _ROLLS, _WAYS)

_FACE_COUNTS = np.array([[roll.count(f) for roll in _ROLLS] for f in FACES], dtype=np.intp)  # (6, 252)
_ROW_IDS = np.arange(LATTICE.rows, dtype=np.int16)[:, None]


@dataclass(frozen=True)
class _Outcomes:
    """What scoring each box can lead to, as rows the moment path evaluates for a whole batch at once.

    A *next-state row* is one way a box moves the card: an upper box scoring k dice of its face (six
    rows), the five-alike box scoring or not (two), any other box (one).  A *candidate row* is one
    distinct outcome of a box: its points and its next-state row.  For each box, `rows` maps each roll
    (kernel order) to its candidate row and `codes` to its next-state row + 1: the choice's number for
    the moments, growing in table order."""
    box: np.ndarray  # per next-state row
    added: np.ndarray  # per next-state row: upper points added
    flag: np.ndarray  # per next-state row: the flag after, or -1 to keep it
    points: np.ndarray  # per candidate row
    next_row: np.ndarray  # per candidate row
    rows: tuple[np.ndarray, ...]  # per box: (252,)
    codes: tuple[np.ndarray, ...]  # per box: (252, 1) int8

    @classmethod
    def of(cls, states: StateSpace) -> _Outcomes:
        scores = states.scores[_ROLL_ORDER]
        box, added, flag, points, next_row, rows, codes = [], [], [], [], [], [], []
        for c, face in enumerate(states.faces):
            first = len(box)
            if face:
                per_roll = _FACE_COUNTS[face - 1]
                states_after = [(face * k, -1, [face * k]) for k in range(DICE + 1)]
            elif c == states.five_alike_box and states.tracks_five_alike:
                per_roll = (scores[:, c] > 0).astype(np.intp)
                states_after = [(0, 0, [0.0]), (0, 1, [float(scores[:, c].max())])]
            else:
                distinct, per_roll = np.unique(scores[:, c], return_inverse=True)
                states_after = [(0, -1, list(distinct))]
            next_of_roll = per_roll if len(states_after) > 1 else np.zeros_like(per_roll)
            rows.append(len(points) + np.asarray(per_roll, dtype=np.intp))
            codes.append((1 + first + next_of_roll).astype(np.int8)[:, None])
            for i, (upper_added, flag_after, outcome_points) in enumerate(states_after):
                box.append(c)
                added.append(upper_added)
                flag.append(flag_after)
                points += outcome_points
                next_row += [first + i] * len(outcome_points)
        if len(box) >= np.iinfo(np.int8).max:
            raise ValueError("too many outcomes for the kernel's choice codes")
        return cls(np.array(box), np.array(added), np.array(flag), np.array(points, dtype=float),
                   np.array(next_row, dtype=np.intp), tuple(rows), tuple(codes))

    @cached_property
    def upper_rows(self) -> np.ndarray:
        """Candidate rows of upper boxes (the ones that can cross the bonus threshold)."""
        return np.flatnonzero(self.added[self.next_row] > 0)


class _MomentWork:
    """Work arrays for batches of up to `width` states, allocated once; `views(b)` shapes them for b."""

    def __init__(self, width: int, next_rows: int):
        rolls = len(_ROLLS)
        self._next_rows = next_rows
        self._keeps = [np.empty(LATTICE.rows * width) for _ in range(2)]
        self._rows = [np.empty(rolls * width) for _ in range(4)]
        self._wins = np.empty(rolls * width, dtype=bool)
        self._codes = [np.empty(rolls * width, dtype=np.int8) for _ in range(2)]
        self._where = np.empty(rolls * width, dtype=np.intp)
        self._chosen = [np.empty(LATTICE.rows * width, dtype=np.int16) for _ in range(2)]
        self._variances = np.empty((next_rows + 1) * width)

    def views(self, b: int) -> dict:
        rolls = len(_ROLLS)
        shaped = lambda buf, n: buf[:n * b].reshape(n, b)  # noqa: E731
        final, candidate, gather, gather2 = (shaped(buf, rolls) for buf in self._rows)
        return dict(keeps=[shaped(buf, LATTICE.rows) for buf in self._keeps], final=final, candidate=candidate,
                    gather=gather, gather2=gather2, wins=shaped(self._wins, rolls), where=shaped(self._where, rolls),
                    choice=shaped(self._codes[0], rolls), code=shaped(self._codes[1], rolls),
                    chosen=shaped(self._chosen[0], LATTICE.rows), step=shaped(self._chosen[1], rolls),
                    variances=shaped(self._variances, self._next_rows + 1))


class MomentPath:
    """The values and second moments of a batch of states, every box and every parent walked in table
    order so that the moments follow the values' choices, ties included."""

    def __init__(self, kernel: TurnKernel):
        self.kernel, self.states = kernel, kernel.states
        self._outcomes = _Outcomes.of(self.states)
        self._work = _MomentWork(kernel.width, len(self._outcomes.box))

    def solve(self, masks, uppers, flags) -> tuple[np.ndarray, np.ndarray]:
        w = self._work.views(len(masks))
        keeps = w["keeps"]
        rolls = [k[LATTICE.size(DICE)] for k in keeps]
        self._final_values(masks, uppers, flags, w)
        np.multiply(w["final"], OUTCOMES, out=rolls[0])
        for rolls_left in (1, 2):
            for channel in keeps:
                _mean_over_completions(channel, w["gather"])
            _best_sub_keep(keeps, w)
            np.divide(rolls[0], OUTCOMES, out=rolls[0])  # a roll's value, rounded once
            np.rint(rolls[0], out=rolls[0])
            if rolls_left == 1:
                np.multiply(rolls[0], OUTCOMES, out=rolls[0])
        return _first_roll_mean(rolls, w["candidate"])

    def _final_values(self, masks, uppers, flags, w) -> None:
        """Each roll's value after the last roll of the turn, into `final` (table units): the best open
        box, gain plus the next state's value; and the rolls' second moments of the rest of the game:
        (gain + E[future])^2 + Var[future] of the box chosen."""
        final, candidate, wins = w["final"], w["candidate"], w["wins"]
        table = self._candidate_table(masks, uppers, flags, w["variances"])
        final.fill(-np.inf)
        w["choice"].fill(0)
        for c, (rows, codes) in enumerate(zip(self._outcomes.rows, self._outcomes.codes)):
            if (masks >> c & 1).all():
                continue
            table.take(rows, 0, candidate, "clip")
            # the last box to improve a roll is its choice, so the first box wins a tie
            np.greater(candidate, final, out=wins)
            np.multiply(wins, codes, out=w["code"])
            np.maximum(w["choice"], w["code"], out=w["choice"])
            np.maximum(final, candidate, out=final)
        variance = w["gather"]
        _pick_rows(w["variances"], w["choice"], w["where"], variance)
        if self.states.tracks_five_alike:
            self._forced_joker(masks, uppers, flags, final, variance)
        if not (final.min() > -np.inf and final.max() < EXACT_LIMIT):
            raise FloatingPointError("roll values out of the exact range")
        second = w["keeps"][1][LATTICE.size(DICE)]
        np.multiply(final, 1.0 / POINT, out=second)
        np.square(second, out=second)
        np.add(second, variance, out=second)

    def _candidate_table(self, masks, uppers, flags, variances) -> np.ndarray:
        """(candidate rows, batch): every outcome's gain plus its next state's value, -inf where its box
        is filled; the next states' variances into rows 1.. of `variances` (row 0: none)."""
        out, (after, bonus) = self._outcomes, space.upper_arrays(self.states.rules, self.states.threshold)
        totals = after[uppers[None, :], out.added[:, None]]
        index = self.states.flat_index(masks[None, :] | (1 << out.box)[:, None], totals,
                                       np.where(out.flag[:, None] < 0, flags[None, :], out.flag[:, None]))
        future, var = self.kernel.future(index)
        variances[0] = 0.0
        variances[1:] = var
        future[(masks[None, :] >> out.box[:, None] & 1) == 1] = -np.inf
        table = future[out.next_row]
        table += out.points[:, None] * POINT
        upper = out.upper_rows
        table[upper] += bonus[uppers[None, :], out.added[out.next_row[upper]][:, None]] * POINT
        return table

    def _forced_joker(self, masks, uppers, flags, final, variance) -> None:
        """Five alike with the five-alike box filled: the forced joker decides the legal boxes, and a box
        holding 50 earns the bonus.  Overwrites those rolls' values and variances for those states."""
        st = self.states
        rows = np.flatnonzero(masks >> st.five_alike_box & 1)
        if not rows.size:
            return
        m, u, y = masks[rows], uppers[rows], flags[rows]
        upper_after, upper_bonus = space.upper_arrays(st.rules, st.threshold)
        bonus = st.rules.yahtzee_bonus * y
        lower_open = np.zeros(rows.size, bool)
        for c in range(st.boxes):
            if not st.faces[c]:
                lower_open |= (m >> c & 1) == 0
        for f in FACES:
            own = st.faces.index(f) if f in st.faces else -1
            own_open = (m >> own & 1) == 0 if own >= 0 else np.zeros(rows.size, bool)
            best = np.full(rows.size, -np.inf)
            chosen_var = np.zeros(rows.size)
            for c in range(st.boxes):
                is_open = (m >> c & 1) == 0
                if c == own:
                    legal = is_open
                    totals, points = upper_after[u, DICE * f], DICE * f + upper_bonus[u, DICE * f]
                elif st.faces[c]:
                    legal = is_open & ~own_open & ~lower_open
                    totals, points = u, np.zeros(rows.size)
                else:
                    legal = is_open & ~own_open
                    joker = st.rules.categories[c].joker_points
                    totals, points = u, np.full(rows.size, float(DICE * f if joker is None else joker))
                if not legal.any():
                    continue
                future, var = self.kernel.future(st.flat_index(m | (1 << c), totals, y))
                candidate = np.where(legal, (points + bonus) * POINT + future, -np.inf)
                np.copyto(chosen_var, var, where=candidate > best)
                np.maximum(best, candidate, out=best)
            final[_FIVE_ALIKE[f - 1], rows] = best
            variance[_FIVE_ALIKE[f - 1], rows] = chosen_var


def _pick_rows(table: np.ndarray, rows: np.ndarray, where: np.ndarray, out: np.ndarray) -> None:
    """out[i, j] = table[rows[i, j], j]: a row of `table` picked per element."""
    b = table.shape[1]
    np.multiply(rows, np.intp(b), out=where, dtype=np.intp)
    np.add(where, np.arange(b), out=where)
    table.reshape(-1).take(where, out=out, mode="clip")


def _mean_over_completions(keeps: np.ndarray, gather: np.ndarray) -> None:
    """Down the lattice: each keep of s dice gets the mean of its six keeps of s + 1 dice, from the rolls
    (size 5) down to the empty keep (on 7776 x values: exact for the values)."""
    for s in range(DICE - 1, -1, -1):
        out, src = keeps[LATTICE.size(s)], keeps[LATTICE.size(s + 1)]
        part = gather[:len(out)]
        first, *rest = LATTICE.children[s]
        src.take(first, 0, out, "clip")
        for child in rest:
            src.take(child, 0, part, "clip")
            np.add(out, part, out=out)
        np.divide(out, 6.0, out=out)


def _best_sub_keep(keeps: list[np.ndarray], w: dict) -> None:
    """Up the lattice: each keep gets the best value among itself and its sub-keeps (a tie keeps the
    bigger keep, then the first parent); the rolls then get the second moment of the sub-keep chosen:
    each keep tracks its choice (a row number) on the way up."""
    values, moments = keeps
    chosen = w["chosen"]
    np.copyto(chosen, _ROW_IDS)
    for s in range(1, DICE + 1):
        cur_all, prev = values[LATTICE.size(s)], values[LATTICE.size(s - 1)]
        for parent in LATTICE.parents[s]:
            n = len(parent)
            cur, part = cur_all[:n], w["gather"][:n]
            prev.take(parent, 0, part, "clip")
            # chosen = parent's choice where it is better (as exact arithmetic: a masked copy is slow on
            # random masks)
            better, step = w["wins"][:n], w["step"][:n]
            np.greater(part, cur, out=better)
            mine = chosen[LATTICE.size(s)][:n]
            chosen[LATTICE.size(s - 1)].take(parent, 0, step, "clip")
            np.subtract(step, mine, out=step)
            np.multiply(step, better, out=step)
            np.add(mine, step, out=mine)
            np.maximum(cur, part, out=cur)
    picked = w["gather2"]
    _pick_rows(moments, chosen[LATTICE.size(DICE)], w["where"], picked)
    np.copyto(moments[LATTICE.size(DICE)], picked)


def _first_roll_mean(rolls: list[np.ndarray], work: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The turn's value before its first roll (rounded, table units): the roll values' mean over the
    7776 throws; and the second moment's mean."""
    np.multiply(rolls[0], _WAYS[:, None], out=work)
    value = np.rint(work.sum(axis=0) / OUTCOMES)
    np.multiply(rolls[1], (_WAYS / OUTCOMES)[:, None], out=work)
    return value, work.sum(axis=0)
