"""The bot's reply turn, made cheaper for the service (fairdice/bots/space.py and base.py), decides as SPEC §4.5
says: for every one of the 7776 throws, the holds a bot weighs, their canonical positions, keeps and order
are those of the verifier's own implementation (verifier/turn.py, written from the SPEC alone)."""

from __future__ import annotations

import itertools

import numpy as np

from fairdice.bots import base, space
from fairdice.bots.base import Position
from fairdice.rules import ruleset
from verifier import turn as spec_turn


def test_hold_candidates_of_every_throw_are_the_verifiers():
    """The roll decisions the policies weigh (base.roll_decisions): positions, keeps and order."""
    for dice in itertools.product(range(1, 7), repeat=5):
        decisions, keeps = base.roll_decisions(dice)
        assert [(d.hold, int(k)) for d, k in zip(decisions, keeps)] == list(spec_turn.hold_candidates(dice)), dice


def test_candidates_carry_the_values_they_are_given():
    """Each hold's value is keep_values[its keep], each box's its gain for the roll, none of an illegal box."""
    rules = ruleset("classic13")
    dice = (3, 1, 3, 6, 3)
    position = Position(rules, {c: None for c in rules.category_ids}, dice, 1)
    keep_values = np.arange(len(space.KEEPS), dtype=float) / 7.0
    decisions, values = base.hold_choices(position, keep_values)
    assert [(d.action, d.hold) for d in decisions] == [("roll", p) for p, _ in spec_turn.hold_candidates(dice)]
    assert values == [keep_values[k] for _, k in spec_turn.hold_candidates(dice)]
    gains, ids = space.gain_matrix(rules, position.boxes)
    row = gains[space.ROLL_INDEX[tuple(sorted(dice))]].copy()
    row[0] = -np.inf  # an illegal box is left out
    decisions, values = base.score_choices(position, row[np.newaxis].repeat(len(space.ROLLS), axis=0), ids)
    assert [d.category for d in decisions] == list(ids[1:])
    assert values == [float(v) for v in row[1:]]
