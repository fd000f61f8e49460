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
values, and `StateSpace.most_points`, checked once per rule set, bounds them
all): the sum S of the roll values over the keep's 6^(5 - s) ordered
completions, times 6^s.  Every such sum, product and maximum is exact in any
order.  A roll's value is divided back by 7776 and rounded once per roll: the
exact round-half-even of a rational.  (The kernel rounds the keeps of four
dice before the maximum over a roll's sub-keeps: rounding is monotone, so it
is the same number.)  The table is therefore a mathematical function of the
rules, bit for bit the same on every IEEE machine and numpy version, and ties
between decisions are exact.

**Batches.**  The kernel solves a few hundred states at once, every array laid
out (keep, state) so that one gather moves a keep's row for the whole batch;
work arrays are allocated once per solve, aligned for the vector units, and a
gather moves at most `PIECE` rows, so that a batch's arrays stay in the core's
own cache (that, more than the arithmetic, sets the kernel's speed).  The
values take the short way (`_ValuePath`): a roll's best box is the best of the
few candidates that score points for it and of one shared best zero; keeps
are summed down the lattice without a division.  Second moments (`moments`)
follow the choices the values make (the first box in table order, and the
bigger keep, win a tie), so they walk every box and every parent in that
order.  Upper totals from which the same upper points lead to
the same bonus are the same state in all but name: one of them is solved and
the others copy it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from math import factorial, prod

import numpy as np

from ...rules import DICE, FACES, UPPER_BONUS_THRESHOLD, RuleSet, Upper, counts_of
from .. import space

try:  # the walks compiled (setup.py builds them where a C compiler is): the same bits, a few times faster
    from . import _walks
except ImportError:  # built without a compiler: numpy's walks, the reference
    _walks = None
COMPILED_WALKS = _walks is not None  # the kernel's default: the compiled walks when they are built

POINT_BITS = 29
POINT = float(1 << POINT_BITS)  # one point, in table units
OUTCOMES = 6 ** DICE  # 7776 equally likely throws of five dice
EXACT_LIMIT = 2.0 ** 53 / OUTCOMES  # roll values (table units) below this keep every keep value exact
BATCH = 192  # states a batch: enough to spread numpy's cost per call, few enough for the caches (192 took
# 4% less CPU than 256 for the two larger rule sets, and as much for the smallest, measured side by side)
ALIGN = 64  # bytes: work arrays start on a cache line (unaligned vector loads cost up to twice as much)
# rows a gather moves at most (the keeps of four dice): the gathered rows, the batch's keeps and the rows
# they are merged into then fit the core's own cache together (a gather of every roll at once does not)
PIECE = 126


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
    def build(cls) -> Lattice:
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
_FIVE_ALIKE = np.array([_ROLLS.index((f,) * DICE) for f in FACES], dtype=np.intp)
_WAYS = np.array([float(_ways(roll)) for roll in _ROLLS])


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
    def most_points(self) -> int:
        """The most points a game can score: each box its best (as a joker too), the upper bonus, and a
        Yahtzee bonus on every turn but the first.  Every value the kernel handles is a mean of points
        still to come, so none is bigger: checking this once bounds every roll value of every batch."""
        best = self.scores.max(axis=0).tolist()
        bonuses = self.rules.upper_bonus
        if self.tracks_five_alike:
            jokers = [0 if c.upper else DICE * FACES[-1] if c.joker_points is None else c.joker_points
                      for c in self.rules.categories]
            best = [max(points, joker) for points, joker in zip(best, jokers)]
            bonuses += (self.boxes - 1) * self.rules.yahtzee_bonus
        return int(sum(best)) + bonuses

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
                    totals = {self.rules.upper_after(t, face * k, self.threshold)[0]
                              for t in totals for k in range(DICE + 1)}
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
    def upper_rows(self) -> dict[int, _UpperRows]:
        """For each count of filled upper boxes, the groups of `upper_groups` and the totals that copy them."""
        return _UpperRows.by_count(self)

    @cached_property
    def box_order(self) -> tuple[int, ...]:
        """The boxes, those that score on the most rolls first.  States are sorted on these bits in this
        order, so that the states of a batch share the costly boxes filled (`_BestBoxPlan` leaves a box
        out when no state of the batch has it open)."""
        scoring = (self.scores > 0).sum(axis=0)
        return tuple(sorted(range(self.boxes), key=lambda c: (-scoring[c], c)))

    def sort_key(self, masks: np.ndarray) -> np.ndarray:
        """The masks with their bits reordered by `box_order`, the first box as the highest bit."""
        return self._mask_keys.take(masks)

    @cached_property
    def _mask_keys(self) -> np.ndarray:
        """`sort_key` of every mask, computed once: a layer's keys are then one lookup, not a pass over
        its masks for each box."""
        masks = np.arange(1 << self.boxes, dtype=np.int64)
        key = np.zeros_like(masks)
        for place, c in enumerate(reversed(self.box_order)):
            key |= (masks >> c & 1) << place
        return key

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
    def successors(self) -> Successors:
        """How scoring each box moves a card: for one state at a time (`score_table`), and for the
        kernel's batches (`_Candidates`)."""
        return Successors.of(self)

    def flat_index(self, masks, uppers, flags):
        """Positions of states in the flattened table."""
        _, width, depth = self.shape
        return (masks * width + uppers) * depth + flags


@dataclass(frozen=True)
class _UpperRows:
    """The upper side of the states with a given number of filled upper boxes: each group of
    interchangeable totals (its upper mask and the total solved), and each other total of a group (its
    mask, its total, and its group's row)."""
    masks: np.ndarray
    totals: np.ndarray
    copy_masks: np.ndarray
    copy_totals: np.ndarray
    copy_groups: np.ndarray

    @classmethod
    def by_count(cls, states: StateSpace) -> dict[int, _UpperRows]:
        rows: dict[int, tuple[list, list]] = {}
        for upper_mask, groups in states.upper_groups.items():
            solved, copies = rows.setdefault(upper_mask.bit_count(), ([], []))
            for group in groups:
                copies += [(upper_mask, total, len(solved)) for total in group[1:]]
                solved.append((upper_mask, group[0]))
        out = {}
        for count, (solved, copies) in rows.items():
            copy_columns = [np.array(col, dtype=np.int64) for col in zip(*copies)] if copies else \
                [np.empty(0, dtype=np.int64)] * 3
            out[count] = cls(*(np.array(col, dtype=np.int64) for col in zip(*solved)), *copy_columns)
        return out


# --- a layer of states ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Layer:
    """The states with a given number of filled boxes, sorted on their masks (`StateSpace.sort_key`),
    then upper total and flag: those solved, and those that copy them (sorted by the state they copy).
    `index`, `copy_index`: positions in the flattened table."""
    masks: np.ndarray
    uppers: np.ndarray
    flags: np.ndarray
    index: np.ndarray
    copy_index: np.ndarray
    copy_source: np.ndarray  # which solved state each copy copies

    def __len__(self) -> int:
        return len(self.masks)

    @classmethod
    def of(cls, states: StateSpace, filled: int) -> Layer:
        solved, copies, count = [], [], 0
        for flag in (0, 1) if states.tracks_five_alike else (0,):
            for uppers_filled, upper in states.upper_rows.items():
                lowers = states.lower_masks.get(filled - uppers_filled)
                if lowers is None:
                    continue
                if flag:
                    lowers = lowers[(lowers >> states.five_alike_box & 1) == 1]
                # every lower mask i with every group g, solved as state `count + i * groups + g`
                groups = len(upper.masks)
                first = count + np.arange(len(lowers))[:, None] * groups
                masks = lowers[:, None] | upper.masks
                solved.append((masks.ravel(), np.broadcast_to(upper.totals, masks.shape).ravel(),
                               np.full(masks.size, flag)))
                copy_index = states.flat_index(lowers[:, None] | upper.copy_masks, upper.copy_totals, flag)
                copies.append((copy_index.ravel(), (first + upper.copy_groups).ravel()))
                count += len(lowers) * groups
        masks, uppers, flags = (np.concatenate(col) for col in zip(*solved))
        _, width, depth = states.shape
        order = np.argsort((states.sort_key(masks) * width + uppers) * depth + flags)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        copy_index, source = (np.concatenate(col) for col in zip(*copies))
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


# --- the kernel -------------------------------------------------------------------------------------

class TurnKernel:
    """Solves batches of states of one rule set into its tables.

    `values` (and `second_moments`, when given) are the tables being filled, contiguous: a batch reads
    the states after it, which must be solved already, and writes its own states and their copies.
    `compiled_walks`: the values' lattice walks by the C extension `_walks` (the default when it is built)
    rather than numpy's `_Walks`, their reference; the same bits (tests/unit/test_optimal_kernel.py).
    """

    def __init__(self, states: StateSpace, values: np.ndarray, second_moments: np.ndarray | None = None,
                 width: int = BATCH, compiled_walks: bool = COMPILED_WALKS):
        if compiled_walks and not COMPILED_WALKS:
            raise ImportError("the compiled walks (fairdice.bots.optimal._walks) are not built: install with a "
                              "C compiler, or solve with compiled_walks=False")
        self.states, self.width, self.compiled_walks = states, width, compiled_walks
        self.values, self.second_moments = values, second_moments
        self._flat_values = values.reshape(-1)
        self._flat_moments = second_moments.reshape(-1) if second_moments is not None else None
        if second_moments is None:
            self._path = _ValuePath(self)
        else:  # the maintainers' path (tools/write_manifest), in a module of its own
            from .moments import MomentPath
            self._path = MomentPath(self)

    def solve_batch(self, layer: Layer, lo: int, hi: int) -> None:
        """Solve layer states lo:hi and the states that copy them."""
        value, moment = self._path.solve(layer.masks[lo:hi], layer.uppers[lo:hi], layer.flags[lo:hi])
        start, stop = np.searchsorted(layer.copy_source, [lo, hi])
        copies, source = layer.copy_index[start:stop], layer.copy_source[start:stop] - lo
        for table, result in ((self._flat_values, value), (self._flat_moments, moment)):
            if table is not None:
                table[layer.index[lo:hi]] = result
                table[copies] = result[source]

    def future(self, index):
        """Value (table units) of the states at these flat positions, and the variance of their future
        score (points^2) when moments are solved."""
        value = self._flat_values.take(index)
        if self._flat_moments is None:
            return value, None
        return value, self._flat_moments.take(index) - np.square(value / POINT)


def _aligned(n: int, dtype=float) -> np.ndarray:
    """An empty 1-d array of n elements whose data starts on an ALIGN-byte boundary."""
    size = np.dtype(dtype).itemsize
    raw = np.empty(n * size + ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start:start + n * size].view(dtype)


class _Buffers:
    """Work arrays for batches of up to `width` states, allocated once and aligned: `view(name, b)` is
    the named array shaped (rows, b) for a batch of b states (rows start aligned when b is a multiple
    of 8)."""

    def __init__(self, width: int, rows: dict[str, tuple[int, type]]):
        self._rows = {name: n for name, (n, _) in rows.items()}
        self._buffers = {name: _aligned(n * width, dtype) for name, (n, dtype) in rows.items()}

    def view(self, name: str, b: int) -> np.ndarray:
        return self._buffers[name][:self._rows[name] * b].reshape(self._rows[name], b)


# --- the values: each roll's best box ---------------------------------------------------------------

@dataclass(frozen=True)
class _Candidates:
    """Each distinct way to score a box after the last roll: the box, its points (table units) and its
    successor row (`Successors`).  `of_roll[c, r]` is box c's candidate for roll r (kernel order)."""
    box: np.ndarray
    points: np.ndarray
    next_row: np.ndarray
    of_roll: np.ndarray  # (boxes, 252)

    @classmethod
    def of(cls, states: StateSpace) -> _Candidates:
        rows = states.successors.row_of[:, _ROLL_ORDER]
        points = states.successors.points[:, _ROLL_ORDER]
        box = np.broadcast_to(np.arange(states.boxes)[:, None], rows.shape)
        keys = np.stack([box.ravel(), rows.ravel(), points.ravel()], axis=1)
        distinct, of_roll = np.unique(keys, axis=0, return_inverse=True)
        return cls(distinct[:, 0].astype(np.intp), distinct[:, 2], distinct[:, 1].astype(np.intp),
                   of_roll.reshape(rows.shape))


@dataclass(frozen=True)
class _BestBoxPlan:
    """How a batch finds each roll's best box, for a batch whose states all have the boxes of a mask
    filled (those boxes are left out).

    The batch's candidate table has a row per candidate of the other boxes, those worth no points
    first, then a last row: their best, the *best zero*.  Writing nothing in a box is worth the same
    after every roll that scores nothing there, and never more than writing the points of a roll that
    scores there: the points still to come plus the upper bonus already earned never fall as the upper
    total or the flag rises (by induction over the layers: every candidate rises with them, and the
    turn's arithmetic, rounding included, is monotone), so points now never cost points later
    (`test_points_now_never_cost_points_later` checks it on the tables).  So a roll's best box is the
    best of the best zero and of its *entries*, the candidates that score points for it.

    Slot j holds the j-th entry of each roll that has more than j, the rolls with the most entries first
    (`inverse`: kernel roll -> position in that order), so that every slot is a prefix; the first slot
    has every roll, the best zero's row standing in for a missing entry.  The other slots are cut in
    `pieces` (the first roll's position, the rows) of at most `PIECE` rows."""
    next_rows: np.ndarray  # the successor rows the candidates lead to
    offsets: np.ndarray  # (next rows, upper totals x flags): `Successors.offsets` of those rows
    bonuses: np.ndarray  # (next rows, upper totals): `Successors.bonuses` of those rows
    bits: np.ndarray  # (next rows, 1): the bit of each row's box
    candidate_next: np.ndarray  # per candidate row: its position among next_rows
    candidate_points: np.ndarray  # (candidate rows, 1), table units
    zeros: int  # candidate rows 0..zeros - 1 are worth no points
    first_slot: np.ndarray  # candidate rows
    pieces: tuple[tuple[int, np.ndarray], ...]
    inverse: np.ndarray
    joker: _JokerPlan | None

    @classmethod
    def of(cls, states: StateSpace, candidates: _Candidates, filled: int) -> _BestBoxPlan:
        is_open = (filled >> np.arange(states.boxes) & 1) == 0
        used = is_open[candidates.box]
        table_rows = np.concatenate([np.flatnonzero(used & (candidates.points == 0)),
                                     np.flatnonzero(used & (candidates.points > 0))])
        position = np.full(len(candidates.box), -1)
        position[table_rows] = np.arange(len(table_rows))
        next_rows, candidate_next = np.unique(candidates.next_row[table_rows], return_inverse=True)
        slots, inverse = _slots(position, candidates, is_open, len(table_rows))
        succ = states.successors
        offsets = succ.offsets.reshape(-1, len(succ.bits)).T[next_rows]
        joker = _JokerPlan.of(states, next_rows) if states.tracks_five_alike else None
        return cls(next_rows, np.ascontiguousarray(offsets), np.ascontiguousarray(succ.bonuses.T[next_rows]),
                   succ.bits[next_rows][:, None], candidate_next.reshape(-1),
                   candidates.points[table_rows][:, None], int((candidates.points[table_rows] == 0).sum()),
                   slots[0], _pieces(slots[1:]), inverse, joker)


def _pieces(slots: tuple[np.ndarray, ...]) -> tuple[tuple[int, np.ndarray], ...]:
    """The slots cut in pieces of at most PIECE rows: (the first roll's position, the rows)."""
    return tuple((lo, slot[lo:lo + PIECE]) for slot in slots for lo in range(0, len(slot), PIECE))


def _slots(position: np.ndarray, candidates: _Candidates, is_open: np.ndarray, zero_row: int):
    """`_BestBoxPlan.slots` and `inverse` from each candidate's row in the batch's table (`zero_row`: the
    best zero's)."""
    of_roll = candidates.of_roll[is_open]  # (open boxes, 252)
    scoring = candidates.points[of_roll] > 0
    rolls = np.broadcast_to(np.arange(len(_ROLLS)), of_roll.shape)[scoring]
    rows = position[of_roll][scoring]
    counts = np.bincount(rolls, minlength=len(_ROLLS))
    inverse = np.empty(len(_ROLLS), dtype=np.intp)
    inverse[np.argsort(-counts, kind="stable")] = np.arange(len(_ROLLS))
    by_place = np.argsort(inverse[rolls], kind="stable")
    places, rows = inverse[rolls][by_place], rows[by_place]
    rank = np.arange(len(rows)) - np.searchsorted(places, places)  # j: the roll's j-th entry
    first = np.full(len(_ROLLS), zero_row, dtype=np.intp)
    first[:(counts > 0).sum()] = rows[rank == 0]
    return (first, *(rows[rank == j].astype(np.intp) for j in range(1, counts.max(initial=0)))), inverse


@dataclass(frozen=True)
class _JokerPlan:
    """Five alike under the forced joker (`forced_joker_values` says the rule), read from a batch's
    successor rows (positions among the plan's `next_rows`; a box filled in every state of the batch has
    none): per face the row of its own upper box scoring five dice, else -1; the only row of each lower
    box, with its joker points per face; the row of each upper box scoring 0."""
    own: np.ndarray  # (6,)
    own_points: np.ndarray  # (6, 1), table units
    lower: np.ndarray  # (lower boxes,)
    lower_points: np.ndarray  # (6, lower boxes, 1), table units
    upper: np.ndarray  # (upper boxes,)

    @classmethod
    def of(cls, states: StateSpace, next_rows: np.ndarray) -> _JokerPlan:
        succ = states.successors
        where = {row: i for i, row in enumerate(next_rows.tolist())}
        own = [where.get(int(succ.row_of[states.faces.index(f), space.FIVE_ALIKE_ROLLS[f - 1]]), -1)
               if f in states.faces else -1 for f in FACES]
        lower = [c for c in succ.lower_boxes if succ.plain_row[c] in where]
        upper = [c for c, face in enumerate(states.faces) if face and succ.plain_row[c] in where]
        points = [[succ.joker_points[f - 1][c] * POINT for c in lower] for f in FACES]
        return cls(np.array(own, dtype=np.intp), np.array([[DICE * f * POINT] for f in FACES]),
                   np.array([where[succ.plain_row[c]] for c in lower], dtype=np.intp),
                   np.array(points).reshape(len(FACES), len(lower), 1),
                   np.array([where[succ.plain_row[c]] for c in upper], dtype=np.intp))

    def values(self, future: np.ndarray, bonus: np.ndarray) -> np.ndarray:
        """(6 faces, states): the best legal box for five alike, from the states' successor values (-inf
        for a filled box) and their Yahtzee bonus (table units): the own upper box if open, else the
        best open lower box, else the best open upper box (at 0)."""
        states = future.shape[1]
        own = np.full((len(FACES), states), -np.inf)
        has_own = self.own >= 0
        own[has_own] = future[self.own[has_own]] + self.own_points[has_own]
        lower = np.full_like(own, -np.inf)
        if len(self.lower):
            np.max(future[self.lower] + self.lower_points, axis=1, out=lower)
        upper = future[self.upper].max(axis=0) if len(self.upper) else np.full(states, -np.inf)
        best = np.where(own > -np.inf, own, np.where(lower > -np.inf, lower, upper))
        return best + bonus


class _ValuePath:
    """The values of a batch of states: each roll's best box, then two rolls earlier, then the mean."""

    def __init__(self, kernel: TurnKernel):
        self.states = kernel.states
        self._flat_values = kernel.values.reshape(-1)
        self._candidates = _Candidates.of(self.states)
        self._plans: dict[int, _BestBoxPlan] = {}
        self._walk_views: dict[int, _Walks] = {}
        self._compiled = kernel.compiled_walks
        if self.states.most_points * POINT >= EXACT_LIMIT:
            raise FloatingPointError("the rule set's points are out of the exact range")
        scoring = (self.states.scores > 0).sum(axis=0)
        # the boxes a plan may leave out: those that score on half the rolls or more (leaving out one that
        # scores on fewer saves less than making more plans costs)
        self._costly = sum(1 << c for c in range(self.states.boxes) if 2 * scoring[c] >= len(_ROLLS))
        next_rows = len(self.states.successors.bits)
        self._buffers = _Buffers(kernel.width, {
            "keeps": (LATTICE.rows, float), "part": (len(_ROLLS), float), "best": (len(_ROLLS), float),
            "table": (len(self._candidates.box) + 1, float), "future": (next_rows, float),
            "index": (next_rows, np.int64), "filled": (next_rows, bool), "value": (1, float)})

    def solve(self, masks, uppers, flags) -> tuple[np.ndarray, None]:
        b = len(masks)
        plan = self._plan(int(np.bitwise_and.reduce(masks)) & self._costly)
        walks = self._walks(b)
        rolls = walks.rolls
        future = self._future(plan, masks, uppers, flags, b)
        _best_boxes(plan, self._candidate_table(plan, future, b), rolls, self._buffers.view("part", b),
                    self._buffers.view("best", b))
        if plan.joker is not None:
            self._forced_joker(plan.joker, masks, flags, future, rolls)
        if self._compiled:  # both walks and the mean in C, into the same work arrays
            value = self._buffers.view("value", b)[0]
            _walks.walks(self._buffers.view("keeps", b), value, *_COMPILED_LATTICE)
            return value, None
        for _ in range(2):  # after the second roll, then after the first
            walks.one_roll_earlier()
        return self._mean(rolls, b), None

    def _mean(self, rolls: np.ndarray, b: int) -> np.ndarray:
        """The first roll's value, rounded: 7776 x its mean is the ways-weighted sum of the rolls' values,
        exact in any order (every partial sum below 2^53), so a matrix-vector product gives it, in half
        the time of einsum's loop.  The result is a work array: valid until the next batch."""
        value = self._buffers.view("value", b)[0]
        np.dot(_WAYS, rolls, out=value)
        np.divide(value, OUTCOMES, out=value)
        return np.rint(value, out=value)

    def _walks(self, b: int) -> _Walks:
        """The walks for a batch of b states (a few widths a solve: the full one, and each layer's last)."""
        walks = self._walk_views.get(b)
        if walks is None:
            views = (self._buffers.view(name, b) for name in ("keeps", "part"))
            walks = self._walk_views[b] = _Walks(*views)
        return walks

    def _plan(self, filled: int) -> _BestBoxPlan:
        """The plan of a batch whose states all have these boxes filled (a few hundred masks a solve)."""
        plan = self._plans.get(filled)
        if plan is None:
            plan = self._plans[filled] = _BestBoxPlan.of(self.states, self._candidates, filled)
        return plan

    def _future(self, plan: _BestBoxPlan, masks, uppers, flags, b: int) -> np.ndarray:
        """(plan's successor rows, states): the upper bonus each row earns plus the value of the state it
        leads to, -inf where its box is filled."""
        rows = len(plan.next_rows)
        index, future, filled = (self._buffers.view(name, b)[:rows] for name in ("index", "future", "filled"))
        plan.offsets.take(uppers * self.states.shape[2] + flags, 1, index, "clip")
        np.add(index, masks * self.states.successors.stride, out=index)
        self._flat_values.take(index, None, future, "clip")  # clip: filled boxes
        np.add(future, plan.bonuses.take(uppers, 1), out=future)
        np.bitwise_and(masks, plan.bits, out=index)
        np.not_equal(index, 0, out=filled)
        np.copyto(future, -np.inf, where=filled)
        return future

    def _candidate_table(self, plan: _BestBoxPlan, future: np.ndarray, b: int) -> np.ndarray:
        """(plan's candidate rows + 1, states): each candidate's points plus its successor's future; the
        last row, the best of those worth no points (-inf if none), the *best zero*.  The candidates that
        score points are raised to the best zero: a roll's best box is then the best of its entries alone
        (there are fewer candidates than rolls)."""
        table = self._buffers.view("table", b)[:len(plan.candidate_next) + 1]
        candidates, best_zero = table[:-1], table[-1]
        future.take(plan.candidate_next, 0, candidates, "clip")
        np.add(candidates, plan.candidate_points, out=candidates)
        if plan.zeros:
            np.max(candidates[:plan.zeros], axis=0, out=best_zero)
            np.maximum(candidates[plan.zeros:], best_zero, out=candidates[plan.zeros:])
        else:
            best_zero.fill(-np.inf)
        return table

    def _forced_joker(self, joker: _JokerPlan, masks, flags, future, rolls) -> None:
        """Five alike with the five-alike box filled: overwrite those rolls' values for those states."""
        st = self.states
        states = np.flatnonzero(masks >> st.five_alike_box & 1)
        if states.size:
            bonus = flags[states] * (st.rules.yahtzee_bonus * POINT)
            rolls[_FIVE_ALIKE[:, None], states] = joker.values(future[:, states], bonus)


def _best_boxes(plan: _BestBoxPlan, table: np.ndarray, rolls: np.ndarray, part: np.ndarray,
                best: np.ndarray) -> None:
    """Each roll's value after the last roll of the turn, into `rolls` (kernel order): the best of the
    roll's entries, already raised to the best zero, or the best zero if it has none (`_BestBoxPlan`,
    `_candidate_table`)."""
    table.take(plan.first_slot, 0, best, "clip")
    for lo, rows in plan.pieces:
        n = len(rows)
        table.take(rows, 0, part[:n], "clip")
        np.maximum(best[lo:lo + n], part[:n], out=best[lo:lo + n])
    best.take(plan.inverse, 0, rolls, "clip")


_SCALES = tuple((LATTICE.size(s), float(6 ** s)) for s in range(1, DICE))  # 6^s for a keep of s dice
SMALL = 3  # the keeps of fewer dice are summed in one matrix product from the keeps of this many


def _completion_counts(top: int) -> np.ndarray:
    """(keeps of fewer than `top` dice, keeps of `top` dice), kernel rows: in how many orders the dice
    still to add make each bigger keep of each smaller one.  Its product with the sums S of the keeps of
    `top` dice is the sums of the smaller keeps, the same integers the walk down the lattice adds."""
    counts = np.eye(LATTICE.offsets[top + 1] - LATTICE.offsets[top])
    below = []
    for s in range(top - 1, -1, -1):
        step = np.zeros((LATTICE.offsets[s + 1] - LATTICE.offsets[s], len(counts)))
        for child in LATTICE.children[s]:
            step[np.arange(len(step)), child] += 1
        counts = step @ counts
        below.insert(0, counts)
    return np.vstack(below)


_SMALL_COUNTS = _completion_counts(SMALL)


def _compiled_lattice() -> tuple[np.ndarray, ...]:
    """LATTICE as the compiled walks (`_walks.c`) read it, in kernel rows: each keep's six children (face
    order, as `_Walks` adds them), each keep's parents (row starts, then rows), 6^s for a keep of s dice,
    and the rolls' ways.  The C checks every index before it uses one."""
    children = np.empty((LATTICE.offsets[DICE], len(FACES)), dtype=np.int32)
    for s in range(DICE):
        for f, child in enumerate(LATTICE.children[s]):
            children[LATTICE.size(s), f] = child + LATTICE.offsets[s + 1]
    lists: list[list[int]] = [[] for _ in range(LATTICE.rows)]
    for s in range(1, DICE + 1):
        for parent in LATTICE.parents[s]:
            for i, row in enumerate(parent.tolist()):
                lists[LATTICE.offsets[s] + i].append(row + LATTICE.offsets[s - 1])
    starts = np.cumsum([0] + [len(rows) for rows in lists]).astype(np.int32)
    parents = np.array([row for rows in lists for row in rows], dtype=np.int32)
    scales = np.repeat(6.0 ** np.arange(DICE), np.diff(LATTICE.offsets[:DICE + 1]))
    return children, starts, parents, scales, _WAYS


_COMPILED_LATTICE = _compiled_lattice() if COMPILED_WALKS else None


class _Walks:
    """The two lattice walks of a turn for batches of one width, on the value path's work arrays: every
    view and index array they use prepared once, so that a batch only calls numpy (a few hundred calls,
    whose own cost is a tenth of a batch's)."""

    def __init__(self, keeps: np.ndarray, part: np.ndarray):
        self.rolls = keeps[LATTICE.size(DICE)]
        self._down = []
        for s in range(DICE - 1, SMALL - 1, -1):
            out = keeps[LATTICE.size(s)]
            first, *rest = LATTICE.children[s]
            self._down.append((out, keeps[LATTICE.size(s + 1)], part[:len(out)], first, tuple(rest)))
        self._small = keeps[:LATTICE.offsets[SMALL]], keeps[LATTICE.size(SMALL)]
        self._scales = tuple((keeps[size], scale) for size, scale in _SCALES)
        self._up = tuple((keeps[LATTICE.size(s)][:len(parent)], keeps[LATTICE.size(s - 1)], part[:len(parent)],
                          parent) for s in range(1, DICE) for parent in LATTICE.parents[s])
        self._below = keeps[LATTICE.size(DICE - 1)]
        self._roll_parents = tuple((self.rolls[lo:lo + len(rows)], part[:len(rows)], rows)
                                   for parent in LATTICE.parents[DICE]
                                   for lo in range(0, len(parent), PIECE) for rows in [parent[lo:lo + PIECE]])

    def one_roll_earlier(self) -> None:
        """The rolls' values one roll earlier, in place: each roll's best of scoring now (or rolling on:
        its value as it is) and of its sub-keeps, each divided by 7776 and rounded.  The keeps of four
        dice are rounded, not the rolls: rounding is monotone, so it commutes with the maximum (a roll's
        value being an integer), and there are half as many of them."""
        self._sum_down()
        self._best_below()
        np.divide(self._below, OUTCOMES, out=self._below)
        np.rint(self._below, out=self._below)
        for rolls, gathered, parent in self._roll_parents:
            self._below.take(parent, 0, gathered, "clip")
            np.maximum(rolls, gathered, out=rolls)

    def _sum_down(self) -> None:
        """Down the lattice: each keep of s < 5 dice gets 7776 x its mean over its completions, exactly.
        First the sums S (a roll's S is its value; a keep's, the sum of its six keeps one die bigger, so
        the sum over its 6^(5 - s) ordered completions); then each size times 6^s, without a division.
        The keeps of fewer than SMALL dice, a few rows that would cost a third of the walk's numpy calls,
        take one matrix product instead: its terms are integer counts times sums, every partial sum below
        2^53 (`EXACT_LIMIT`), so exact in any order."""
        for out, bigger, gathered, first, rest in self._down:
            bigger.take(first, 0, out, "clip")
            for child in rest:
                bigger.take(child, 0, gathered, "clip")
                np.add(out, gathered, out=out)
        small, top = self._small
        np.dot(_SMALL_COUNTS, top, out=small)
        for keeps, scale in self._scales:
            np.multiply(keeps, scale, out=keeps)

    def _best_below(self) -> None:
        """Up the lattice: each keep of 1 to 4 dice gets the best value among itself and its sub-keeps."""
        for keeps, smaller, gathered, parent in self._up:
            smaller.take(parent, 0, gathered, "clip")
            np.maximum(keeps, gathered, out=keeps)


# --- the whole programme ------------------------------------------------------------------------------

def solve(states: StateSpace, moments: bool = False, *, width: int = BATCH,
          compiled_walks: bool = COMPILED_WALKS) -> tuple[np.ndarray, np.ndarray | None]:
    """Solve a rule set: (values, second moments or None).  `compiled_walks`: the values' walks in C
    (`TurnKernel`); the same bits either way.

    values: float64 holding integers (units 2^-29 point), shape (2^boxes, threshold + 1, flags); second
    moments in points^2.  Unreachable states hold 0.  (The table cache runs the same kernel over the
    same layers in several processes: `fairdice.adapters.table_cache.solve`.)"""
    values = np.zeros(states.shape)
    second = np.zeros(states.shape) if moments else None
    kernel = TurnKernel(states, values, second, width=width, compiled_walks=compiled_walks)
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
    def of(cls, states: StateSpace) -> Successors:
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
        after, bonus = space.upper_arrays(states.rules, states.threshold)
        totals = after[uppers, add]  # (upper totals, 1, rows)
        offsets = states.flat_index(1 << box, totals, np.where(flag_after < 0, flags, flag_after))
        bonuses = bonus[uppers[:, 0], add] * POINT
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

    The legal boxes (SPEC §3.3; the batch kernel reads the same rule its own way): the face's upper box if
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


def first_roll_value(two_left: np.ndarray) -> float:
    """The state's value (table units) from 7776 x its keep values with two rolls to come, as the table
    computes it: the first roll's values averaged and rounded."""
    return float(np.rint(keep_means(earlier_roll_values(two_left))[space.KEEP_INDEX[()]] / OUTCOMES))
