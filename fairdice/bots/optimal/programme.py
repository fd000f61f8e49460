"""The optimal engine's dynamic programme: a rule set in, the value of every card out.  Pure: no I/O.

Between turns a card is a *state*: the mask of filled boxes, the upper total
capped at the bonus threshold, and (classic13) whether the Yahtzee box holds
50.  `values[state]` is the expected number of points still to come from that
state under optimal play, bonuses included; `second_moments[state]` is the
expected square of that future score (points^2), for the standard deviation.
States are solved by number of filled boxes, the fullest first.

**A turn** is solved backwards over the lattice of keeps (multisets of 0..5
dice): after the third roll each of the 252 rolls is worth its best box; a
keep is worth the mean over its completions (a keep of s dice: the mean of
its six keeps of s + 1 dice); one roll earlier a roll is worth its best
sub-keep, the whole roll (score now) included.  Each walk visits the 1,260
edges of the lattice once.

**Exact, machine-independent arithmetic.**  Values are fixed-point integers
(units of 2^-29 point, `POINT`) held in float64.  A keep's value is kept as
7776 times its mean, an integer below 2^53 (`EXACT_LIMIT` bounds the roll
values), so every sum, every division by 6 down the lattice and every maximum
is exact in any order.  A roll's value is divided back by 7776 and rounded
once per roll: the exact round-half-even of a rational.  The table is
therefore a mathematical function of the rules, bit for bit the same on every
IEEE machine and numpy version, and ties between decisions are exact.

**Batches.**  The kernel solves a few hundred states at once, every array laid
out (keep, state) so that one gather moves a keep's row for the whole batch;
work arrays are allocated once per solve.  Second moments run through the same
kernel on a second set of arrays, following the choices the values make (the
first box in table order, and the bigger keep, win a tie).  Upper totals from
which the same upper points lead to the same bonus are the same state in all
but name: one of them is solved and the others copy it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from math import factorial, prod

import numpy as np

from ...rules import DICE, FACES, UPPER_BONUS_THRESHOLD, RuleSet, Upper, counts_of
from .. import space

POINT_BITS = 29
POINT = float(1 << POINT_BITS)  # one point, in table units
OUTCOMES = 6 ** DICE  # 7776 equally likely throws of five dice
EXACT_LIMIT = 2.0 ** 53 / OUTCOMES  # roll values (table units) below this keep every keep value exact
BATCH = 384  # states a batch: enough to spread numpy's cost per call, few enough for the caches


def _ways(faces) -> int:
    """How many of the 6^len(faces) ordered throws show this multiset."""
    return factorial(len(faces)) // prod(factorial(faces.count(f)) for f in set(faces))


# --- the lattice of keeps ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Lattice:
    """The keeps by size in the kernel's order (kernel row = position in `order`), and the edges.

    Within a size, keeps with more distinct faces come first, so that a keep's j-th parent exists for
    a prefix of its size: `parents[s][j]` lists it for that prefix.  Edge indices are local to a size.
    """
    order: np.ndarray  # kernel row -> space.KEEPS index
    offsets: tuple[int, ...]  # rows of size s: offsets[s]:offsets[s + 1]
    children: tuple[tuple[np.ndarray, ...], ...]  # [s][f - 1]: the keep plus one f (size s + 1)
    parents: tuple[tuple[np.ndarray, ...], ...]  # [s][j]: the j-th keep one die smaller (size s - 1)

    @classmethod
    def build(cls) -> "Lattice":
        by_size = [sorted((k for k, keep in enumerate(space.KEEPS) if len(keep) == s),
                          key=lambda k: (-len(set(space.KEEPS[k])), k)) for s in range(DICE + 1)]
        local = {k: i for size in by_size for i, k in enumerate(size)}
        children = tuple(
            tuple(np.array([local[space.KEEP_INDEX[tuple(sorted(space.KEEPS[k] + (f,)))]] for k in by_size[s]],
                           dtype=np.intp) for f in FACES)
            for s in range(DICE))
        parents = [()]
        for s in range(1, DICE + 1):
            # a keep's parents in space order: the order the tie between equal parents is broken in
            lists = [[local[p] for p in sorted({space.KEEP_INDEX[keep[:i] + keep[i + 1:]] for i in range(s)})]
                     for keep in (space.KEEPS[k] for k in by_size[s])]
            parents.append(tuple(np.array([ps[j] for ps in lists if len(ps) > j], dtype=np.intp)
                                 for j in range(max(map(len, lists)))))
        offsets = tuple(np.cumsum([0] + [len(size) for size in by_size]).tolist())
        return cls(np.concatenate(by_size), offsets, children, tuple(parents))

    @property
    def rows(self) -> int:
        return self.offsets[-1]

    def size(self, s: int) -> slice:
        return slice(self.offsets[s], self.offsets[s + 1])


LATTICE = Lattice.build()
# the rolls in kernel order, and what the kernel needs to know of them
_ROLL_ORDER = LATTICE.order[LATTICE.size(DICE)] - space.KEEP_INDEX[space.ROLLS[0]]  # -> space.ROLLS index
_ROLLS = [space.ROLLS[r] for r in _ROLL_ORDER]
_FACE_COUNTS = np.array([[roll.count(f) for roll in _ROLLS] for f in FACES], dtype=np.intp)  # (6, 252)
_FIVE_ALIKE = np.array([_ROLLS.index((f,) * DICE) for f in FACES], dtype=np.intp)
_WAYS = np.array([float(_ways(roll)) for roll in _ROLLS])
_ROW_IDS = np.arange(LATTICE.rows, dtype=np.int16)[:, None]


# --- the rule set as the programme sees it --------------------------------------------------------

@dataclass(frozen=True, eq=False)
class StateSpace:
    """The states between turns of one rule set, and what each box scores.  `threshold` is a parameter
    so that tests can solve small games exactly."""
    rules: RuleSet
    threshold: int = UPPER_BONUS_THRESHOLD

    @property
    def boxes(self) -> int:
        return len(self.rules.categories)

    @cached_property
    def faces(self) -> tuple[int, ...]:
        """Each box's face if it is an upper box, else 0."""
        return tuple(c.rule.face if isinstance(c.rule, Upper) else 0 for c in self.rules.categories)

    @cached_property
    def five_alike_box(self) -> int:
        ids = self.rules.category_ids
        return ids.index(self.rules.five_alike) if self.rules.five_alike in ids else -1

    @property
    def tracks_five_alike(self) -> bool:
        """Whether the state records if the five-alike box holds points (the forced joker's bonus)."""
        return self.rules.forced_joker and self.five_alike_box >= 0

    @property
    def shape(self) -> tuple[int, int, int]:
        return (1 << self.boxes, self.threshold + 1, 2 if self.tracks_five_alike else 1)

    @cached_property
    def scores(self) -> np.ndarray:
        """Plain points of each box for each roll, (252 rolls in space.ROLLS order, boxes)."""
        return np.array([[c.rule.score(counts_of(r)) for c in self.rules.categories] for r in space.ROLLS],
                        dtype=float)

    @cached_property
    def upper_bits(self) -> int:
        return sum(1 << c for c, face in enumerate(self.faces) if face)

    @cached_property
    def upper_totals(self) -> dict[int, tuple[int, ...]]:
        """For each set of filled upper boxes (a mask), the upper totals (capped) it can hold."""
        out = {}
        for filled in range(1 << self.boxes):
            if filled & ~self.upper_bits or filled in out:
                continue
            totals = {0}
            for c, face in enumerate(self.faces):
                if filled >> c & 1:
                    totals = {min(self.threshold, t + face * k) for t in totals for k in range(DICE + 1)}
            out[filled] = tuple(sorted(totals))
        return out

    @cached_property
    def upper_groups(self) -> dict[int, list[list[int]]]:
        """For each set of filled upper boxes, its upper totals grouped so that totals in one group have
        the same future (the first of a group is the one solved).

        All an upper total still decides is which sums of the open upper boxes would earn the bonus;
        totals that agree on that are interchangeable (a total at the threshold, whose bonus is already
        counted, is like one too far below it to ever earn it)."""
        out = {}
        for filled, totals in self.upper_totals.items():
            still = {0}
            for c, face in enumerate(self.faces):
                if face and not filled >> c & 1:
                    still = {a + face * k for a in still for k in range(DICE + 1)}
            positive = sorted(a for a in still if a > 0)
            groups: dict[int, list[int]] = {}
            for total in totals:
                earning = 0 if total >= self.threshold else \
                    len(positive) - bisect.bisect_left(positive, self.threshold - total)
                groups.setdefault(earning, []).append(total)
            out[filled] = list(groups.values())
        return out

    @cached_property
    def lower_masks(self) -> dict[int, np.ndarray]:
        """For each count, every mask of that many filled boxes among the boxes that are not upper."""
        bits = [c for c, face in enumerate(self.faces) if not face]
        subsets = np.arange(1 << len(bits))
        masks = np.zeros_like(subsets)
        for i, c in enumerate(bits):
            masks |= ((subsets >> i) & 1) << c
        sizes = np.array([int(x).bit_count() for x in subsets])
        return {n: np.sort(masks[sizes == n]).astype(np.int64) for n in range(len(bits) + 1)}

    @cached_property
    def box_outcomes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(boxes, 252 rolls in space order): plain points, upper points added, and the five-alike flag
        after scoring the box (-1: unchanged)."""
        points = np.ascontiguousarray(self.scores.T)
        added = np.where(np.array(self.faces)[:, None] > 0, points, 0).astype(np.int64)
        flags = np.full(points.shape, -1, dtype=np.int64)
        if self.tracks_five_alike:
            flags[self.five_alike_box] = points[self.five_alike_box] > 0
        return points, added, flags

    @cached_property
    def successors(self) -> "Successors":
        """How scoring each box moves a card, for solving one state at a time (`score_table`)."""
        return Successors.of(self)

    def flat_index(self, masks, uppers, flags):
        """Positions of states in the flattened table."""
        _, width, depth = self.shape
        return (masks * width + uppers) * depth + flags


# --- a layer of states ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Layer:
    """The states with a given number of filled boxes, in mask order: those solved, and those that copy
    them (sorted by the state they copy).  `index`, `copy_index`: positions in the flattened table."""
    masks: np.ndarray
    uppers: np.ndarray
    flags: np.ndarray
    index: np.ndarray
    copy_index: np.ndarray
    copy_source: np.ndarray  # which solved state each copy copies

    def __len__(self) -> int:
        return len(self.masks)

    @classmethod
    def of(cls, states: StateSpace, filled: int) -> "Layer":
        solved, copies, count = [], [], 0
        for upper_mask, groups in states.upper_groups.items():
            lowers = states.lower_masks.get(filled - upper_mask.bit_count(), np.empty(0, dtype=np.int64))
            for flag in (0, 1) if states.tracks_five_alike else (0,):
                masks = (lowers if not flag else lowers[(lowers >> states.five_alike_box & 1) == 1]) | upper_mask
                for group in groups:
                    ids = count + np.arange(len(masks))
                    solved.append((masks, np.full(len(masks), group[0]), np.full(len(masks), flag)))
                    copies += [(states.flat_index(masks, total, flag), ids) for total in group[1:]]
                    count += len(masks)
        masks, uppers, flags = (np.concatenate(col) for col in zip(*solved))
        order = np.lexsort((flags, uppers, masks))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        copy_index, source = (np.concatenate(col) for col in zip(*copies)) if copies else \
            (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        source = rank[source]
        by_source = np.argsort(source, kind="stable")
        masks, uppers, flags = masks[order], uppers[order], flags[order]
        return cls(masks, uppers, flags, states.flat_index(masks, uppers, flags), copy_index[by_source],
                   source[by_source])

    def batches(self, width: int = BATCH) -> list[tuple[int, int]]:
        return [(lo, min(len(self), lo + width)) for lo in range(0, len(self), width)]


def layers(states: StateSpace) -> list[Layer]:
    """Layer f: the states with f boxes filled (the full card, worth 0, is not solved)."""
    return [Layer.of(states, filled) for filled in range(states.boxes)]


# --- the kernel: scoring a box ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Outcomes:
    """What scoring each box can lead to, as rows the kernel evaluates for a whole batch at once.

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
    def of(cls, states: StateSpace) -> "_Outcomes":
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


class _Work:
    """Work arrays for batches of up to `width` states, allocated once; `views(b)` shapes them for b."""

    def __init__(self, width: int, moments: bool, next_rows: int):
        rolls = len(_ROLLS)
        self._next_rows = next_rows
        self._keeps = [np.empty(LATTICE.rows * width) for _ in range(2 if moments else 1)]
        self._rows = [np.empty(rolls * width) for _ in range(4)]
        self._wins = np.empty(rolls * width, dtype=bool)
        self._codes = [np.empty(rolls * width, dtype=np.int8) for _ in range(2)]
        self._where = np.empty(rolls * width, dtype=np.intp)
        self._chosen = [np.empty(LATTICE.rows * width, dtype=np.int16) for _ in range(2)] if moments else None
        self._variances = np.empty((next_rows + 1) * width) if moments else None

    def views(self, b: int) -> dict:
        rolls = len(_ROLLS)
        shaped = lambda buf, n: buf[:n * b].reshape(n, b)  # noqa: E731
        final, candidate, gather, gather2 = (shaped(buf, rolls) for buf in self._rows)
        views = dict(keeps=[shaped(buf, LATTICE.rows) for buf in self._keeps], final=final, candidate=candidate,
                     gather=gather, gather2=gather2, wins=shaped(self._wins, rolls), where=shaped(self._where, rolls))
        if self._chosen:
            views.update(choice=shaped(self._codes[0], rolls), code=shaped(self._codes[1], rolls),
                         chosen=shaped(self._chosen[0], LATTICE.rows), step=shaped(self._chosen[1], rolls),
                         variances=shaped(self._variances, self._next_rows + 1))
        return views


class TurnKernel:
    """Solves batches of states of one rule set into its tables.

    `values` (and `second_moments`, when given) are the tables being filled, contiguous: a batch reads
    the states after it, which must be solved already, and writes its own states and their copies.
    """

    def __init__(self, states: StateSpace, values: np.ndarray, second_moments: np.ndarray | None = None,
                 width: int = BATCH):
        self.states, self.width = states, width
        self.values, self.second_moments = values, second_moments
        self._flat_values = values.reshape(-1)
        self._flat_moments = second_moments.reshape(-1) if second_moments is not None else None
        self._outcomes = _Outcomes.of(states)
        self._work = _Work(width, second_moments is not None, len(self._outcomes.box))

    def solve_batch(self, layer: Layer, lo: int, hi: int) -> None:
        """Solve layer states lo:hi and the states that copy them."""
        w = self._work.views(hi - lo)
        keeps = w["keeps"]
        rolls = [k[LATTICE.size(DICE)] for k in keeps]
        self._final_values(layer.masks[lo:hi], layer.uppers[lo:hi], layer.flags[lo:hi], w)
        np.multiply(w["final"], OUTCOMES, out=rolls[0])
        for rolls_left in (1, 2):
            for channel in keeps:
                _mean_over_completions(channel, w["gather"])
            _best_sub_keep(keeps, w)
            np.divide(rolls[0], OUTCOMES, out=rolls[0])  # a roll's value, rounded once
            np.rint(rolls[0], out=rolls[0])
            if rolls_left == 1:
                np.multiply(rolls[0], OUTCOMES, out=rolls[0])
        self._store(layer, lo, hi, *_first_roll_mean(rolls, w["candidate"]))

    def _final_values(self, masks, uppers, flags, w) -> None:
        """Each roll's value after the last roll of the turn, into `final` (table units): the best open
        box, gain plus the next state's value.  With moments, the rolls' second moments of the rest of
        the game: (gain + E[future])^2 + Var[future] of the box chosen."""
        final, candidate, wins = w["final"], w["candidate"], w["wins"]
        moments = self.second_moments is not None
        table = self._candidate_table(masks, uppers, flags, w.get("variances"))
        final.fill(-np.inf)
        if moments:
            w["choice"].fill(0)
        for c, (rows, codes) in enumerate(zip(self._outcomes.rows, self._outcomes.codes)):
            if (masks >> c & 1).all():
                continue
            table.take(rows, 0, candidate, "clip")
            if moments:  # the last box to improve a roll is its choice, so the first box wins a tie
                np.greater(candidate, final, out=wins)
                np.multiply(wins, codes, out=w["code"])
                np.maximum(w["choice"], w["code"], out=w["choice"])
            np.maximum(final, candidate, out=final)
        variance = None
        if moments:
            variance = w["gather"]
            _pick_rows(w["variances"], w["choice"], w["where"], variance)
        if self.states.tracks_five_alike:
            self._forced_joker(masks, uppers, flags, final, variance)
        if not (final.min() > -np.inf and final.max() < EXACT_LIMIT):
            raise FloatingPointError("roll values out of the exact range")
        if moments:
            second = w["keeps"][1][LATTICE.size(DICE)]
            np.multiply(final, 1.0 / POINT, out=second)
            np.square(second, out=second)
            np.add(second, variance, out=second)

    def _candidate_table(self, masks, uppers, flags, variances) -> np.ndarray:
        """(candidate rows, batch): every outcome's gain plus its next state's value, -inf where its box
        is filled; with moments, the next states' variances into rows 1.. of `variances` (row 0: none)."""
        out, threshold = self._outcomes, self.states.threshold
        totals = np.minimum(threshold, uppers[None, :] + out.added[:, None])
        index = self.states.flat_index(masks[None, :] | (1 << out.box)[:, None], totals,
                                       np.where(out.flag[:, None] < 0, flags[None, :], out.flag[:, None]))
        future, var = self._future(index)
        if var is not None:
            variances[0] = 0.0
            variances[1:] = var
        future[(masks[None, :] >> out.box[:, None] & 1) == 1] = -np.inf
        table = future[out.next_row]
        table += out.points[:, None] * POINT
        upper = out.upper_rows
        crossed = (uppers[None, :] < threshold) & (totals[out.next_row[upper]] >= threshold)
        table[upper] += np.where(crossed, self.states.rules.upper_bonus * POINT, 0.0)
        return table

    def _future(self, index):
        """Value (table units) of the states at these flat positions, and the variance of their future
        score (points^2) when moments are solved."""
        value = self._flat_values.take(index)
        if self._flat_moments is None:
            return value, None
        return value, self._flat_moments.take(index) - np.square(value / POINT)

    def _forced_joker(self, masks, uppers, flags, final, variance) -> None:
        """Five alike with the five-alike box filled: the forced joker decides the legal boxes, and a box
        holding 50 earns the bonus.  Overwrites those rolls' values (and variances) for those states."""
        st = self.states
        rows = np.flatnonzero(masks >> st.five_alike_box & 1)
        if not rows.size:
            return
        m, u, y = masks[rows], uppers[rows], flags[rows]
        threshold = st.threshold
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
                    totals = np.minimum(threshold, u + DICE * f)
                    points = DICE * f + np.where((u < threshold) & (totals >= threshold), st.rules.upper_bonus, 0)
                elif st.faces[c]:
                    legal = is_open & ~own_open & ~lower_open
                    totals, points = u, np.zeros(rows.size)
                else:
                    legal = is_open & ~own_open
                    joker = st.rules.categories[c].joker_points
                    totals, points = u, np.full(rows.size, float(DICE * f if joker is None else joker))
                if not legal.any():
                    continue
                future, var = self._future(st.flat_index(m | (1 << c), totals, y))
                candidate = np.where(legal, (points + bonus) * POINT + future, -np.inf)
                if var is not None:
                    np.copyto(chosen_var, var, where=candidate > best)
                np.maximum(best, candidate, out=best)
            final[_FIVE_ALIKE[f - 1], rows] = best
            if variance is not None:
                variance[_FIVE_ALIKE[f - 1], rows] = chosen_var

    def _store(self, layer: Layer, lo: int, hi: int, value, moment) -> None:
        start, stop = np.searchsorted(layer.copy_source, [lo, hi])
        copies, source = layer.copy_index[start:stop], layer.copy_source[start:stop] - lo
        for table, result in ((self._flat_values, value), (self._flat_moments, moment)):
            if table is not None:
                table[layer.index[lo:hi]] = result
                table[copies] = result[source]


def _pick_rows(table: np.ndarray, rows: np.ndarray, where: np.ndarray, out: np.ndarray) -> None:
    """out[i, j] = table[rows[i, j], j]: a row of `table` picked per element."""
    b = table.shape[1]
    np.multiply(rows, np.intp(b), out=where, dtype=np.intp)
    np.add(where, np.arange(b), out=where)
    table.reshape(-1).take(where, out=out, mode="clip")


# --- the kernel: earlier in the turn --------------------------------------------------------------

def _mean_over_completions(keeps: np.ndarray, gather: np.ndarray) -> None:
    """Down the lattice: each keep of s dice gets the mean of its six keeps of s + 1 dice, from the rolls
    (size 5) down to the empty keep (on 7776 x values: exact)."""
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
    bigger keep, then the first parent).  With moments, the rolls then get the second moment of the
    sub-keep chosen: each keep tracks its choice (a row number) on the way up."""
    values, moments = keeps[0], keeps[1] if len(keeps) > 1 else None
    chosen = w.get("chosen")
    if moments is not None:
        np.copyto(chosen, _ROW_IDS)
    for s in range(1, DICE + 1):
        cur_all, prev = values[LATTICE.size(s)], values[LATTICE.size(s - 1)]
        for parent in LATTICE.parents[s]:
            n = len(parent)
            cur, part = cur_all[:n], w["gather"][:n]
            prev.take(parent, 0, part, "clip")
            if moments is not None:  # chosen = parent's choice where it is better (as exact arithmetic:
                better, step = w["wins"][:n], w["step"][:n]  # a masked copy is slow on random masks)
                np.greater(part, cur, out=better)
                mine = chosen[LATTICE.size(s)][:n]
                chosen[LATTICE.size(s - 1)].take(parent, 0, step, "clip")
                np.subtract(step, mine, out=step)
                np.multiply(step, better, out=step)
                np.add(mine, step, out=mine)
            np.maximum(cur, part, out=cur)
    if moments is not None:
        picked = w["gather2"]
        _pick_rows(moments, chosen[LATTICE.size(DICE)], w["where"], picked)
        np.copyto(moments[LATTICE.size(DICE)], picked)


def _first_roll_mean(rolls: list[np.ndarray], work: np.ndarray):
    """The turn's value before its first roll (rounded, table units): the roll values' mean over the
    7776 throws; and the second moment's mean."""
    np.multiply(rolls[0], _WAYS[:, None], out=work)
    value = np.rint(work.sum(axis=0) / OUTCOMES)
    if len(rolls) == 1:
        return value, None
    np.multiply(rolls[1], (_WAYS / OUTCOMES)[:, None], out=work)
    return value, work.sum(axis=0)


# --- the whole programme ------------------------------------------------------------------------------

def solve(states: StateSpace, moments: bool = False, *, width: int = BATCH) -> tuple[np.ndarray, np.ndarray | None]:
    """Solve a rule set: (values, second moments or None).

    values: float64 holding integers (units 2^-29 point), shape (2^boxes, threshold + 1, flags); second
    moments in points^2.  Unreachable states hold 0.  (The table cache runs the same kernel over the
    same layers in several processes: `fairdice.edges.table_cache.solve`.)"""
    values = np.zeros(states.shape)
    second = np.zeros(states.shape) if moments else None
    kernel = TurnKernel(states, values, second, width=width)
    for layer in reversed(layers(states)):
        for lo, hi in layer.batches(width):
            kernel.solve_batch(layer, lo, hi)
    return values, second


# --- one state, for a decision ------------------------------------------------------------------------
#
# A decision solves the turn of one state: the kernel's arithmetic, in space order, on a single state.
# At that size numpy's cost is per call, not per element, so each step is a few calls on index arrays
# precomputed once (the whole turn is about twenty calls).

def _completion_weights():
    """Sparse (keep, roll) weights in space order, 6^s x the ways keep k (s dice) completes to roll r, so
    that a keep's weighted sum of roll values is 7776 x its mean.  (rolls, weights, row starts)."""
    rolls, weights, starts = [], [], []
    for keep in space.KEEPS:
        starts.append(len(rolls))
        for r, roll in enumerate(space.ROLLS):
            rest = list(roll)
            for die in keep:
                if die not in rest:
                    break
                rest.remove(die)
            else:
                rolls.append(r)
                weights.append(6 ** len(keep) * _ways(tuple(rest)))
    return np.array(rolls, dtype=np.intp), np.array(weights, dtype=float), np.array(starts, dtype=np.intp)


_COMPLETION_ROLLS, _COMPLETION_WEIGHTS, _COMPLETION_STARTS = _completion_weights()


def _sub_keep_lists():
    """Each roll's distinct sub-keeps (space order), one roll after another: (keeps, row starts)."""
    keeps, starts = [], []
    for subs in space.SUBKEEPS.tolist():
        starts.append(len(keeps))
        keeps += sorted(set(subs))
    return np.array(keeps, dtype=np.intp), np.array(starts, dtype=np.intp)


_SUB_KEEPS, _SUB_KEEP_STARTS = _sub_keep_lists()


def keep_means(roll_values: np.ndarray) -> np.ndarray:
    """Roll values (252, space order) -> 7776 x each keep's mean over its completions (462), exactly."""
    terms = roll_values.take(_COMPLETION_ROLLS)
    np.multiply(terms, _COMPLETION_WEIGHTS, out=terms)
    return np.add.reduceat(terms, _COMPLETION_STARTS)


def earlier_roll_values(keep_values: np.ndarray) -> np.ndarray:
    """7776 x keep means (462) -> the rolls' values one roll earlier (252, table units): the best sub-keep."""
    best = np.maximum.reduceat(keep_values.take(_SUB_KEEPS), _SUB_KEEP_STARTS)
    np.divide(best, OUTCOMES, out=best)
    return np.rint(best, out=best)


@dataclass(frozen=True)
class Successors:
    """How scoring a box moves a card, in space order, for solving one state at a time.

    A *successor row* is one way a box moves the card (the kernel's next-state rows): an upper box
    scoring k dice of its face, the tracked five-alike box scoring or not, any other box.  Where a row
    leads from a state (mask m, upper total u, flag f) is `m * stride + offsets[u, f]` in the flattened
    table, and `bonuses[u]` is the upper bonus it earns (table units).  For each box and roll, `row_of`
    names the row it leads to and `points` holds its plain points (table units)."""
    bits: np.ndarray  # per row: the box's bit in the mask
    stride: int  # flat positions from one mask to the next
    offsets: np.ndarray  # (upper totals, flags, rows)
    bonuses: np.ndarray  # (upper totals, rows), table units
    row_of: np.ndarray  # (boxes, 252 rolls)
    points: np.ndarray  # (boxes, 252 rolls), table units
    plain_row: tuple[int, ...]  # per box: its row when it scores nothing (upper total and flag as they were)
    lower_boxes: tuple[int, ...]  # the boxes that are not upper boxes
    joker_points: tuple[dict[int, int], ...]  # per face - 1: each lower box's points as a joker

    @classmethod
    def of(cls, states: StateSpace) -> "Successors":
        points, added, flags = states.box_outcomes  # each (boxes, 252)
        rows = []  # (box, upper points added, flag after or -1)
        row_of = np.empty(points.shape, dtype=np.intp)
        for c in range(states.boxes):
            outcomes = [(c, *o) for o in zip(added[c].tolist(), flags[c].tolist())]
            index = {o: len(rows) + i for i, o in enumerate(sorted(set(outcomes)))}
            row_of[c] = [index[o] for o in outcomes]
            rows += sorted(index)
        box, add, flag_after = (np.array(column, dtype=np.int64) for column in zip(*rows))
        _, width, depth = states.shape
        uppers, flags = np.arange(width)[:, None, None], np.arange(depth)[None, :, None]
        totals = np.minimum(states.threshold, uppers + add)  # (upper totals, 1, rows)
        offsets = states.flat_index(1 << box, totals, np.where(flag_after < 0, flags, flag_after))
        crossed = (uppers < states.threshold) & (totals >= states.threshold)
        bonuses = np.where(crossed[:, 0], states.rules.upper_bonus * POINT, 0.0)
        plain_row = tuple(rows.index(next(r for r in rows if r[0] == c and r[1] == 0)) for c in range(states.boxes))
        lower = tuple(c for c, face in enumerate(states.faces) if not face)
        categories = states.rules.categories
        jokers = tuple({c: DICE * f if categories[c].joker_points is None else categories[c].joker_points
                        for c in lower} for f in FACES)
        return cls(np.int64(1) << box, width * depth, offsets, bonuses, row_of, points * POINT, plain_row,
                   lower, jokers)


def successor_values(states: StateSpace, flat_values: np.ndarray, state: tuple[int, int, int]) -> np.ndarray:
    """What each successor row leads to from `state` (table units): the upper bonus it earns plus the value
    of the state after; -inf for a filled box."""
    mask, upper, flag = state
    rows = states.successors
    future = flat_values.take(rows.offsets[upper, flag] + mask * rows.stride, mode="clip")  # clip: filled boxes
    future += rows.bonuses[upper]
    np.putmask(future, rows.bits & mask, -np.inf)
    return future


def score_table(states: StateSpace, successors: np.ndarray) -> np.ndarray:
    """What scoring each box is worth after each roll: (boxes, 252 rolls in space order), table units, its
    points plus what its successor row leads to (`successor_values`); -inf for a filled box.  These are
    the plain rules: five alike under the forced joker is `forced_joker_values`'."""
    table = successors.take(states.successors.row_of)
    table += states.successors.points
    return table


def joker_applies(states: StateSpace, mask: int) -> bool:
    """Whether five alike falls under the forced joker on a card with these boxes filled."""
    return states.tracks_five_alike and bool(mask >> states.five_alike_box & 1)


def forced_joker_values(states: StateSpace, successors: np.ndarray, state: tuple[int, int, int]) -> list[float]:
    """Five alike of each face (1..6) under the forced joker (`joker_applies`), best box, table units.

    The legal boxes (RULES.md; the batch kernel reads the same rule its own way): the face's upper box if
    open; else every open lower box, at its joker points; else every open upper box, at 0.  A five-alike
    box holding 50 adds the Yahtzee bonus."""
    mask, _, flag = state
    rows, after = states.successors, successors.tolist()
    bonus = states.rules.yahtzee_bonus * flag * POINT
    lower_open = [c for c in rows.lower_boxes if not mask >> c & 1]
    out = []
    for f in FACES:
        own = states.faces.index(f) if f in states.faces else -1
        if own >= 0 and not mask >> own & 1:
            best = DICE * f * POINT + after[rows.row_of[own, space.FIVE_ALIKE_ROLLS[f - 1]]]
        elif lower_open:
            best = max(rows.joker_points[f - 1][c] * POINT + after[rows.plain_row[c]] for c in lower_open)
        else:
            best = max(after[rows.plain_row[c]] for c, face in enumerate(states.faces) if face)  # filled: -inf
        out.append(best + bonus)
    return out


def last_roll_values(states: StateSpace, values: np.ndarray, state: tuple[int, int, int],
                     scores: np.ndarray | None = None, successors: np.ndarray | None = None) -> np.ndarray:
    """Each roll's value (252, space order, table units) after the last roll of a turn in `state`: its best
    box (from the state's `successor_values` and `score_table` when the caller has them)."""
    if successors is None:
        successors = successor_values(states, values.reshape(-1), state)
    if scores is None:
        scores = score_table(states, successors)
    best = scores.max(axis=0)
    if joker_applies(states, state[0]):
        best[list(space.FIVE_ALIKE_ROLLS)] = forced_joker_values(states, successors, state)
    return best


def state_turn(states: StateSpace, values: np.ndarray, state: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """7776 x each keep's value (462, space order) with one and with two rolls to come, for one state."""
    one_left = keep_means(last_roll_values(states, values, state))
    return one_left, keep_means(earlier_roll_values(one_left))


def first_roll_value(two_left: np.ndarray) -> float:
    """The state's value (table units) from 7776 x its keep values with two rolls to come, as the table
    computes it: the first roll's values averaged and rounded."""
    return float(np.rint(keep_means(earlier_roll_values(two_left))[space.KEEP_INDEX[()]] / OUTCOMES))
