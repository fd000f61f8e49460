"""Advice for a human seat: every alternative now, with the expected final score it leads to, best first.

Uses the `optimal` engine: a value is the expected final score of the seat's own card (points already
banked, bonuses included) if this alternative is taken and the rest of the game is played optimally.
Games with the upper-first house rule are not covered by the optimal tables: there the values are the
one-turn `ev` heuristic's expected points for this turn, and the answer says so (`engine`, `value_kind`).
"""

from __future__ import annotations

from .bots.base import TIE_TOLERANCE, Candidate, Position
from .bots.optimal import Optimal, TableSource
from .bots.policies import ExpectedValue
from .errors import FairdiceError
from .rules import check_dice, options, totals

_EV = ExpectedValue()


def hint(position: Position, tables: TableSource | None = None) -> dict:
    """Every distinct hold and every legal box for this position, valued, sorted best first.

    `tables` is the optimal engine's table source (`fairdice.adapters.table_cache.source()`); without
    one, only the upper-first house rule (valued by `ev`) can be advised.

    Returns a JSON-friendly dict: engine ("optimal" or "ev"), value_kind ("expected_final_score" or
    "expected_turn_points"), rules, roll, rolls_left, banked (the card's total now), best (the first
    alternative: on equal values the canonical order wins, holds by position mask, then boxes in table
    order), tied (how many alternatives share the best value), and alternatives, each
    {"action": "roll", "hold": [positions], "keep": [faces]} or {"action": "score", "category", "points",
    "upper_bonus", "yahtzee_bonus", "joker"}, plus "value" and "loss" (best value minus this one).
    Before the first roll of a turn the only alternative is to roll.
    """
    rules = position.rules
    if not isinstance(position.roll, int) or not 0 <= position.roll <= 3:
        raise FairdiceError("invalid_position", f"roll must be 0..3, got {position.roll!r}")
    banked = totals(rules, position.boxes, position.yahtzee_bonus).total
    engine = "ev" if position.upper_first else "optimal"
    out = {
        "engine": engine,
        "value_kind": "expected_turn_points" if engine == "ev" else "expected_final_score",
        "rules": rules.id,
        "roll": position.roll,
        "rolls_left": 3 - position.roll,
        "banked": banked,
    }
    if engine == "ev":
        out["note"] = ("the optimal engine does not cover the upper-first house rule; values are the one-turn "
                       "ev heuristic's expected points this turn")

    optimal = Optimal(tables)
    if position.roll == 0:
        value = None
        if engine == "optimal":
            value = round(banked + optimal.table(position).value(position.boxes), 4)
        alt = {"action": "roll", "hold": [], "keep": [], "value": value, "loss": 0.0}
        return {**out, "best": alt, "tied": 1, "alternatives": [alt]}

    dice = check_dice(position.dice)
    ranked: list[Candidate] = (_EV if engine == "ev" else optimal).candidates(position)
    offset = 0 if engine == "ev" else banked
    legal = options(rules, position.boxes, dice, position.upper_first)
    upper_now = sum(position.boxes.get(c.id) or 0 for c in rules.categories if c.upper)

    top = max(c.value for c in ranked)
    # canonical order among the tied best, then by value (a stable sort keeps the canonical order)
    order = sorted(range(len(ranked)), key=lambda i: (ranked[i].value < top - TIE_TOLERANCE, -ranked[i].value))
    alternatives = []
    for i in order:
        cand = ranked[i]
        d = cand.decision
        if d.action == "roll":
            alt = {"action": "roll", "hold": list(d.hold), "keep": sorted(dice[p] for p in d.hold)}
        else:
            opt = legal[d.category]
            upper_bonus = rules.upper_after(upper_now, opt.points)[1] if rules.category(d.category).upper else 0
            alt = {"action": "score", "category": d.category, "points": opt.points, "upper_bonus": upper_bonus,
                   "yahtzee_bonus": opt.yahtzee_bonus, "joker": opt.joker}
        alt["value"] = round(offset + cand.value, 4)
        alt["loss"] = round(top - cand.value, 4)
        alternatives.append(alt)
    tied = sum(1 for c in ranked if c.value >= top - TIE_TOLERANCE)
    return {**out, "best": alternatives[0], "tied": tied, "alternatives": alternatives}
