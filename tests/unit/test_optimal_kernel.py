"""The optimal table's compiled walks (fairdice/bots/optimal/_walks.c, built by setup.py when a C compiler is there)
against numpy's walks, their reference: the same bits on random batches, on the real batches of small games of every
rule set, and on the three published tables (their manifest digests).

Without the extension these tests skip, unless FAIRDICE_REQUIRE_KERNEL=1 (CI), where a missing build fails."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

from fairdice.bots.optimal import programme, table_format
from fairdice.rules import RULESETS

REQUIRED = os.environ.get("FAIRDICE_REQUIRE_KERNEL") == "1"
needs_kernel = pytest.mark.skipif(not programme.COMPILED_WALKS and not REQUIRED,
                                  reason="the compiled walks are not built (no C compiler at install)")


def test_the_kernel_is_built_where_ci_requires_it():
    if not REQUIRED and not programme.COMPILED_WALKS:
        pytest.skip("the compiled walks are not built; FAIRDICE_REQUIRE_KERNEL=1 makes this a failure")
    assert programme.COMPILED_WALKS, "FAIRDICE_REQUIRE_KERNEL=1 but fairdice.bots.optimal._walks did not build"
    assert inspect.signature(programme.solve).parameters["compiled_walks"].default is True  # the kernel's default


def _numpy_walks(rolls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference: programme._Walks twice and the first roll's mean, as _ValuePath runs them."""
    b = rolls.shape[1]
    buffers = programme._Buffers(b, {"keeps": (programme.LATTICE.rows, float), "part": (252, float)})
    walks = programme._Walks(buffers.view("keeps", b), buffers.view("part", b))
    walks.rolls[:] = rolls
    walks.one_roll_earlier()
    walks.one_roll_earlier()
    return np.rint(np.dot(programme._WAYS, walks.rolls) / programme.OUTCOMES), walks.rolls.copy()


def _compiled_walks(rolls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b = rolls.shape[1]
    keeps, out = np.full((programme.LATTICE.rows, b), np.nan), np.empty(b)
    keeps[programme.LATTICE.size(5)] = rolls
    programme._walks.walks(keeps, out, *programme._COMPILED_LATTICE)
    return out, keeps[programme.LATTICE.size(5)]


@needs_kernel
@pytest.mark.parametrize("b", [1, 7, 16, 17, 100, programme.BATCH])
def test_random_batches_walk_to_the_same_bits(b):
    """Roll values anywhere in the exact range (below EXACT_LIMIT), ties included (a few distinct values), at
    widths that fill the C's blocks of 16 states exactly, partly, and not at all: the same first-roll values
    and the same rolls after the walks as numpy's."""
    rng = np.random.default_rng(b)
    for rolls in (rng.integers(0, int(programme.EXACT_LIMIT), (252, b)).astype(float),
                  rng.integers(0, 4, (252, b)) * float(programme.POINT)):
        want, want_rolls = _numpy_walks(rolls)
        got, got_rolls = _compiled_walks(rolls)
        assert np.array_equal(got, want) and np.array_equal(got_rolls, want_rolls)


@needs_kernel
def test_a_wrong_lattice_or_buffer_is_refused():
    """The C checks what it is handed before it reads or writes: a child out of range, a parent after its keep,
    a keeps buffer of the wrong size or type, are errors, not reads outside the buffers."""
    children, starts, parents, scales, ways = programme._COMPILED_LATTICE
    keeps, out = np.zeros((programme.LATTICE.rows, 4)), np.zeros(4)
    bad_child, bad_parent = children.copy(), parents.copy()
    bad_child[3, 2] = programme.LATTICE.rows
    bad_parent[-1] = programme.LATTICE.rows - 1
    for args in ((keeps, out, bad_child, starts, parents, scales, ways),
                 (keeps, out, children, starts, bad_parent, scales, ways),
                 (keeps[:-1], out, children, starts, parents, scales, ways),
                 (keeps.astype(np.float32), out, children, starts, parents, scales, ways),
                 (keeps, out, children.astype(np.int64), starts, parents, scales, ways)):
        with pytest.raises(ValueError):
            programme._walks.walks(*args)


def _mini(rules_id: str, category_ids):
    rs = RULESETS[rules_id]
    return type(rs)(id=f"{rules_id}-mini", name="mini", categories=tuple(rs.category(c) for c in category_ids),
                    upper_bonus=rs.upper_bonus, five_alike=rs.five_alike, yahtzee_bonus=rs.yahtzee_bonus)


@needs_kernel
@pytest.mark.parametrize("rules_id, cats", [
    ("yacht", ("fours", "sixes", "full_house", "yacht")),
    ("yatzy", ("twos", "threes", "one_pair", "two_pairs", "yatzy")),
    ("classic13", ("fives", "sixes", "chance", "yahtzee")),  # the forced joker and the Yahtzee bonus
    ("classic13", ("ones", "twos", "full_house", "small_straight", "yahtzee")),
])
@pytest.mark.parametrize("threshold", [10, 40])
def test_real_batches_solve_to_the_same_tables(rules_id, cats, threshold):
    """Every batch of a small game of each rule set, at the full width and at widths of 1 and 7 (the C's last
    block partly filled): the compiled walks and numpy's give the same table, bit for bit."""
    states = programme.StateSpace(_mini(rules_id, cats), threshold)
    expected, _ = programme.solve(states, compiled_walks=False)
    assert expected.any()
    for width in (1, 7, programme.BATCH):
        values, _ = programme.solve(states, width=width, compiled_walks=True)
        assert np.array_equal(values, expected), width


def test_asking_for_the_kernel_where_it_is_not_built_is_an_error(monkeypatch):
    monkeypatch.setattr(programme, "COMPILED_WALKS", False)
    with pytest.raises(ImportError, match="compiled_walks=False"):
        programme.TurnKernel(programme.StateSpace(RULESETS["yacht"]), np.zeros(1), compiled_walks=True)


@needs_kernel
@pytest.mark.slow  # the three published tables, a few seconds each
@pytest.mark.parametrize("rules_id", sorted(RULESETS))
def test_the_published_tables_build_to_the_manifest_with_the_kernel(rules_id):
    values, _ = programme.solve(programme.StateSpace(RULESETS[rules_id]), compiled_walks=True)
    assert table_format.table_digest(rules_id, values.astype(table_format.DTYPE)) == \
        table_format.expected_digest(rules_id)
