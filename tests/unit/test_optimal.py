"""The optimal engine: its programme against brute force and closed forms, the published start values and
digests, the policy's own turn against the table, the table cache (an adapter), play, and the import rules.

The tables come from conftest's `optimal_table`, built once per run into the run's own cache (yacht in a
second or two; classic13 and yatzy in several seconds, only for the tests marked slow), and are handed to the
policy as its table source (`table_cache.source()`, the registry `table_cache.bots()`), as the edges do.
"""

from __future__ import annotations

import ast
import json
import random
import shutil
import statistics
import subprocess
import sys
from functools import cache
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from fairdice.adapters import table_cache
from fairdice import bots as core_bots
from fairdice.bots import play_bots, position_of, space
from fairdice.bots.base import TIE_TOLERANCE, Decision, Position
from fairdice.bots.optimal import policy, programme, table_format
from fairdice.errors import FairdiceError
from fairdice.game import Game, Setup
from fairdice.hint import hint
from fairdice.rules import RULESETS, UPPER_BONUS_THRESHOLD, RuleSet, options
from support import REPO as ROOT

PUBLISHED = {  # start value (2 decimals) and standard deviation of the final score under optimal play
    "classic13": (254.59, 59.6),
    "yatzy": (248.44, 38.5),
    "yacht": (191.77, 37.9),
}


TABLES = table_cache.source()  # the run's cache (conftest), as the command line passes it
BOTS = table_cache.bots()  # the published bots, the optimal one made with that source

SLOW_TABLE = {"yatzy", "classic13"}  # the tables that take long to build on 2 cores (yacht: seconds)


def by_rules(rules_ids):
    """Parameters for rule sets, those whose table is slow to build marked slow."""
    return [pytest.param(r, marks=pytest.mark.slow) if r in SLOW_TABLE else r for r in sorted(rules_ids)]


# --- brute force on reduced games ---------------------------------------------------------------------

def mini(rules_id: str, category_ids, upper_bonus=None) -> RuleSet:
    rs = RULESETS[rules_id]
    return RuleSet(id=f"{rules_id}-mini", name="mini", categories=tuple(rs.category(c) for c in category_ids),
                   upper_bonus=rs.upper_bonus if upper_bonus is None else upper_bonus,
                   five_alike=rs.five_alike, yahtzee_bonus=rs.yahtzee_bonus)


def brute_force(rules: RuleSet, threshold: int) -> dict:
    """Expected remaining score of every reachable card, by plain recursion over real dice.

    Independent of the DP: dice outcomes are enumerated as 6^n ordered throws, holds as subsets of
    positions, legality and points come from rules.options(); states are keyed by what matters next
    (open boxes, upper total capped at the threshold, whether the five-alike box holds points).
    """
    values = {}
    upper_ids = {c.id for c in rules.categories if c.upper}

    def key(card):
        upper = sum(card[c.id] or 0 for c in rules.categories if c.upper)
        filled = frozenset(c for c, v in card.items() if v is not None)
        return filled, min(threshold, upper), bool(card.get(rules.five_alike))

    def value(card):
        k = key(card)
        if k in values:
            return values[k]
        if all(v is not None for v in card.values()):
            values[k] = 0.0
            return 0.0
        upper = sum(card[c.id] or 0 for c in rules.categories if c.upper)

        @cache
        def score_now(dice):
            best = -np.inf
            for cid, opt in options(rules, card, dice).items():
                gain = opt.points + opt.yahtzee_bonus
                if cid in upper_ids and upper < threshold <= upper + opt.points:
                    gain += rules.upper_bonus
                best = max(best, gain + value({**card, cid: opt.points}))
            return best

        @cache
        def keep_value(keep, rolls_left):
            throws = list(product(range(1, 7), repeat=5 - len(keep)))
            return sum(roll_value(tuple(sorted(keep + t)), rolls_left) for t in throws) / len(throws)

        @cache
        def roll_value(dice, rolls_left):
            best = score_now(dice)
            if rolls_left:
                for held in product((0, 1), repeat=5):
                    if not all(held):
                        keep = tuple(sorted(d for d, h in zip(dice, held) if h))
                        best = max(best, keep_value(keep, rolls_left - 1))
            return best

        values[k] = keep_value((), 2)
        return values[k]

    value({c: None for c in rules.category_ids})
    return values


@pytest.mark.parametrize("rules_id, cats, threshold", [
    ("yacht", ("yacht", "full_house"), 63),
    ("classic13", ("sixes", "full_house", "yahtzee"), 18),      # forced joker, +100, upper bonus
    ("classic13", ("ones", "small_straight", "yahtzee"), 3),
    pytest.param("yatzy", ("twos", "threes", "two_pairs"), 10,  # two upper boxes crossing the threshold
                 marks=pytest.mark.slow),  # (3 s: the largest of these sub-games)
])
def test_dp_matches_brute_force(rules_id, cats, threshold):
    rules = mini(rules_id, cats)
    states = programme.StateSpace(rules, threshold)
    V, _ = programme.solve(states)
    expected = brute_force(rules, threshold)
    assert len(expected) > 4
    for (filled, upper, flag), value in expected.items():
        mask = sum(1 << i for i, c in enumerate(rules.category_ids) if c in filled)
        flag = int(flag and states.tracks_five_alike)
        assert V[mask, upper, flag] / programme.POINT == pytest.approx(value, abs=1e-6)


def test_batch_width_and_processes_do_not_change_the_result():
    states = programme.StateSpace(mini("classic13", ("fives", "sixes", "chance", "yahtzee")), 40)
    values, moments = programme.solve(states, moments=True)
    narrow, narrow_moments = programme.solve(states, moments=True, width=7)
    assert np.array_equal(values, narrow) and np.array_equal(moments, narrow_moments)
    shared, _ = table_cache.solve(states, workers=2)
    assert np.array_equal(values, shared)


@pytest.mark.parametrize("cats, threshold", [
    (("fives", "sixes", "chance", "yahtzee"), 40),  # the forced joker: own box, a lower box, upper boxes at 0
    (("ones", "twos", "full_house", "small_straight", "yahtzee"), 6),  # boxes that score on few rolls
])
def test_the_value_path_agrees_with_the_moment_path(cats, threshold):
    """Two kernels compute the values: the moment path (every box, every parent, a division by 6 a level)
    and the value path (the best zero and the entries, sums without division, plans per batch).  Same
    values to the bit, at every batch width (a width of 1 and 7 make plans of single states and of few)."""
    states = programme.StateSpace(mini("classic13", cats), threshold)
    expected, _ = programme.solve(states, moments=True)
    for width in (1, 7, programme.BATCH):
        values, none = programme.solve(states, width=width)
        assert none is None and np.array_equal(values, expected), width


def reach(states: programme.StateSpace, mask: int) -> set[int]:
    """SPEC §4.6's reach(m): every capped sum the filled upper boxes can hold (0 to 5 dice of their face)."""
    faces = [f for c, f in enumerate(states.faces) if f and mask >> c & 1]
    return {min(states.threshold, sum(f * k for f, k in zip(faces, ks))) for ks in product(range(6), repeat=len(faces))}


@pytest.mark.parametrize("rules_id, cats, threshold", [
    ("classic13", ("fives", "sixes", "chance", "yahtzee"), 40),
    pytest.param("yacht", RULESETS["yacht"].category_ids, UPPER_BONUS_THRESHOLD, marks=pytest.mark.slow),  # 6 s
])
def test_the_layers_hold_every_reachable_state_once(rules_id, cats, threshold):
    """Solved or copied, each reachable state between turns (the full card aside) is in exactly one layer,
    once, and no unreachable one is: SPEC §4.6's reach(m) and flag, enumerated here on their own."""
    states = programme.StateSpace(mini(rules_id, cats), threshold)
    held = np.concatenate([np.concatenate([layer.index, layer.copy_index]) for layer in programme.layers(states)])
    expected = [states.flat_index(mask, total, flag) for mask in range((1 << states.boxes) - 1)
                for total in sorted(reach(states, mask))
                for flag in ((0, 1) if states.tracks_five_alike and mask >> states.five_alike_box & 1 else (0,))]
    assert len(held) == len(set(held.tolist())) and sorted(held.tolist()) == sorted(expected)


def test_second_moment_is_exact_on_closed_form_games():
    # one box "sixes": each die independently ends a six with p = 1 - (5/6)^3 (keep every six)
    V, W = programme.solve(programme.StateSpace(mini("yacht", ("sixes",))), moments=True)
    p = 1 - (5 / 6) ** 3
    mean, var = 6 * 5 * p, 36 * 5 * p * (1 - p)
    assert V[0, 0, 0] / programme.POINT == pytest.approx(mean, abs=1e-7)
    assert W[0, 0, 0] - mean ** 2 == pytest.approx(var, abs=1e-6)
    # one box "yacht": the score is 0 or 50, so E[score^2] = 50 E[score]
    V, W = programme.solve(programme.StateSpace(mini("yacht", ("yacht",))), moments=True)
    assert W[0, 0, 0] == pytest.approx(50 * V[0, 0, 0] / programme.POINT, abs=1e-6)


def test_second_moments_give_the_published_deviation():
    """The moments path on a whole rule set: the same values, and the manifest's standard deviation."""
    table, meta = table_cache.compute_table("yacht", moments=True)
    entry = table_format.manifest()["tables"]["yacht"]
    assert meta["sha256"] == entry["sha256"]
    assert meta["start_sd"] == entry["start_sd"] and round(meta["start_sd"], 1) == PUBLISHED["yacht"][1]


def test_interchangeable_upper_totals_really_are():
    """The programme solves one upper total of each group and copies it: solving them all agrees."""
    rules = mini("yatzy", ("fours", "fives", "sixes", "chance"))
    states = programme.StateSpace(rules, 40)
    values, _ = programme.solve(states)
    for filled, groups in states.upper_groups.items():
        for group in groups:
            for mask in (filled, filled | 1 << 3):
                if mask == (1 << states.boxes) - 1:
                    continue
                layer = programme.Layer(*(np.array([x]) for x in (mask, group[-1], 0)),
                                        np.array([states.flat_index(mask, group[-1], 0)]),
                                        np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
                alone = values.copy()
                alone[mask, group[-1], 0] = -1
                programme.TurnKernel(states, alone).solve_batch(layer, 0, 1)
                assert alone[mask, group[-1], 0] == values[mask, group[0], 0], (mask, group)


# --- the full tables ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rules_id", by_rules(PUBLISHED))
def test_points_now_never_cost_points_later(optimal_table, rules_id):
    """What the kernel's best zero rests on (`programme._BestBoxPlan`): on every card, the points still to
    come plus the upper bonus already earned never fall as the upper total rises, nor as the flag does
    (a Yahtzee box holding 50 rather than 0)."""
    table = optimal_table(rules_id)
    states, values = table.states, table.values
    masks = np.arange(1 << states.boxes)
    for upper_mask, totals in states.upper_totals.items():
        cards = values[masks[(masks & states.upper_bits) == upper_mask]][:, list(totals)]  # (cards, totals, flags)
        earned = np.where(np.array(totals) >= states.threshold, states.rules.upper_bonus * programme.POINT, 0.0)
        assert (np.diff(cards + earned[:, None], axis=1) >= 0).all(), upper_mask
    if states.tracks_five_alike:
        filled = values[masks[(masks >> states.five_alike_box & 1) == 1]]
        assert (filled[..., 1] >= filled[..., 0]).all()


@pytest.mark.parametrize("rules_id", by_rules(PUBLISHED))
def test_start_values_match_published(optimal_table, rules_id):
    table = optimal_table(rules_id)
    mean, sd = PUBLISHED[rules_id]
    assert round(table.start_value(), 2) == mean
    assert table_format.table_digest(rules_id, table.values) == table_format.manifest()["tables"][rules_id]["sha256"]
    assert table_format.manifest()["tables"][rules_id]["start_sd"] == pytest.approx(sd, abs=0.06)


def test_the_policy_turn_rebuilds_the_table_exactly(optimal_table):
    """The policy solves a turn on its own (rules.options for the joker, dense arrays in space order):
    its value before the first roll is the table's element, bit for bit, on random reachable cards."""
    table = optimal_table("yacht")
    _check_turns_against_the_table(table, random.Random(12), 60)


def _check_turns_against_the_table(table, rng, n):
    rs = table.rules
    for _ in range(n):
        boxes = {}
        for c in rs.categories:
            if rng.random() < 0.5:
                boxes[c.id] = c.rule.face * rng.randrange(6) if c.upper else rng.choice((0, c.rule.score(
                    tuple(rng.randrange(6) for _ in range(7)))))
        if len(boxes) == len(rs.categories):
            continue
        one_left, two_left = table.turn(boxes)
        assert programme.first_roll_value(two_left) == table.values[table.state(boxes)], boxes


def random_table(rules_id: str, seed: int = 0) -> policy.SolvedTable:
    """A table of the rule set's shape holding random values (table units, well inside the exact range):
    what a turn makes of its successors' values does not depend on their being the optimum, and random
    values leave no two boxes or holds accidentally equal."""
    shape = programme.StateSpace(RULESETS[rules_id]).shape
    values = np.random.default_rng(seed).integers(0, 300 << programme.POINT_BITS, shape).astype(float)
    return policy.SolvedTable(rules_id, values)


def random_card(rules: RuleSet, rng: random.Random, filled: float = 0.5) -> dict:
    """A card with about `filled` of its boxes filled, each with points it could hold."""
    card = {}
    for c in rules.categories:
        if rng.random() < filled:
            card[c.id] = c.rule.face * rng.randrange(6) if c.upper else rng.choice(
                (0, c.rule.score(tuple(rng.randrange(6) for _ in range(7)))))
    if len(card) == len(rules.categories):
        del card[rng.choice(rules.category_ids)]
    return card


def best_box_by_the_rules(table: policy.SolvedTable, card: dict, roll: tuple[int, ...]) -> float:
    """SPEC §4.6's value of a roll after the last roll of a turn, from rules.options: the best legal box's
    immediate gain (points, Yahtzee bonus, the upper bonus it reaches) plus the value of the card after it."""
    rules, values = table.rules, table.values
    mask, upper, flag = policy.state_of(rules, card)
    best = -np.inf
    for cid, opt in options(rules, card, roll).items():
        c = rules.category_ids.index(cid)
        gain, upper_after, flag_after = opt.points + opt.yahtzee_bonus, upper, flag
        if rules.categories[c].upper:
            upper_after = min(UPPER_BONUS_THRESHOLD, upper + opt.points)
            gain += rules.upper_bonus if upper < UPPER_BONUS_THRESHOLD <= upper_after else 0
        if cid == rules.five_alike and rules.forced_joker:
            flag_after = int(opt.points > 0)
        best = max(best, gain * programme.POINT + values[mask | 1 << c, upper_after, flag_after])
    return best


@pytest.mark.parametrize("rules_id", sorted(RULESETS))
def test_last_roll_values_are_the_best_legal_box(rules_id):
    """The policy's one-state turn (successor rows, score table, its own reading of the forced joker)
    against rules.options roll by roll, on random cards of a random table: bit for bit."""
    table, rng = random_table(rules_id), random.Random(5)
    for _ in range(25):
        card = random_card(table.rules, rng)
        expected = [best_box_by_the_rules(table, card, roll) for roll in space.ROLLS]
        assert table.last_roll_values(card).tolist() == expected, card


def test_the_forced_joker_on_every_card():
    """Five alike under the forced joker on every set of filled boxes (the Yahtzee box filled, with 50 and
    with 0), against rules.options: own upper box, else the lower boxes as jokers, else the upper boxes at 0."""
    table, rng = random_table("classic13", seed=1), random.Random(6)
    rules, states = table.rules, table.states
    five_alike = [space.ROLL_INDEX[(f,) * 5] for f in range(1, 7)]
    checked = 0
    for mask in range(1 << states.boxes):
        if not mask >> states.five_alike_box & 1 or mask == (1 << states.boxes) - 1:
            continue
        for yahtzee in (0, 50):
            card = {c: (yahtzee if c == rules.five_alike else 0) for i, c in enumerate(rules.category_ids)
                    if mask >> i & 1}
            upper_box = [c for c in card if rules.category(c).upper]
            if upper_box:  # some upper total the filled upper boxes can hold, near the threshold or not
                box = rng.choice(upper_box)
                card[box] = rules.category(box).rule.face * rng.randrange(6)
            state = policy.state_of(rules, card)
            successors = programme.successor_values(states, table.values.reshape(-1), state)
            got = programme.forced_joker_values(states, successors, state)
            assert got == [best_box_by_the_rules(table, card, space.ROLLS[r]) for r in five_alike], card
            checked += 1
    assert checked == 2 * (1 << (states.boxes - 1)) - 2


def test_a_keep_divided_once_is_divided_twice():
    """The policy divides a keep's 7776 x value by 7776 * 2^29 at once: the same double as dividing by 7776
    and then by 2^29 (a power of two), for integers over the whole exact range."""
    rng = np.random.default_rng(3)
    keeps = np.concatenate([rng.integers(0, 1 << 53, 100_000), rng.integers(0, 1 << 40, 100_000)]).astype(float)
    assert np.array_equal(keeps / policy.KEEP_POINT, keeps / programme.OUTCOMES / programme.POINT)


@pytest.mark.parametrize("rules_id", sorted(RULESETS))
def test_decide_is_the_policy_rule_on_the_candidates(rules_id, monkeypatch):
    """Optimal.decide (which makes no Candidate) against SPEC's rule applied to Optimal.candidates, with
    tie-breaks that pick the first, the last and a middle one of the tied, and ask exactly once, as often."""
    table, rng = random_table(rules_id, seed=2), random.Random(7)
    bot = policy.Optimal(lambda rules_id: table)
    rules = table.rules
    for _ in range(150):
        card = random_card(rules, rng)
        roll = rng.randrange(4)
        dice = () if roll == 0 else tuple(rng.randrange(1, 7) for _ in range(5))
        if rng.random() < 0.1 and roll:
            dice = (dice[0],) * 5
        position = Position(rules, card, dice, roll)
        candidates = bot.candidates(position)
        for pick in (lambda n: 0, lambda n: n - 1, lambda n: n // 2):
            asked_fast, asked_rule = [], []
            fast = bot.decide(position, lambda n: asked_fast.append(n) or pick(n))
            by_rule = decide_by_rule(candidates, lambda n: asked_rule.append(n) or pick(n))
            assert fast == by_rule and asked_fast == asked_rule, (card, dice, roll)


def test_decide_breaks_real_ties_as_the_policy_rule(optimal_table):
    """The same on the real yacht table, whose positions do tie (equal holds, equal boxes)."""
    table = optimal_table("yacht")
    bot, ties = BOTS["optimal"], 0
    for seed in range(3):
        game = Game(Setup.build("t", "yacht", [{"type": "bot", "bot": "optimal"}]),
                    server_seed=(seed + 40).to_bytes(32, "big"))
        game.supply_client_seed(None, f"ties {seed}")
        while game.status == "playing":
            if game.rolls_made == 0:
                game.roll(0)
                continue
            position = position_of(game)
            candidates = bot.candidates(position)
            best = max(c.value for c in candidates)
            ties += sum(c.value >= best - TIE_TOLERANCE for c in candidates) > 1
            for pick in (lambda n: 0, lambda n: n - 1):
                assert bot.decide(position, pick) == decide_by_rule(candidates, pick)
            d = bot.decide(position, game.tiebreak)
            game.roll(0, d.hold) if d.action == "roll" else game.score(0, d.category)
    assert ties > 0 and table.rules.id == "yacht"


def test_decide_counts_near_ties_as_ties(monkeypatch):
    """Candidates within TIE_TOLERANCE of the best are tied (base.py), and only those: a table whose
    candidates differ by less and by more than the tolerance."""
    values = [1.0, 1.0 - TIE_TOLERANCE / 2, 1.0 - 2 * TIE_TOLERANCE, 1.0, 1.0 - TIE_TOLERANCE]
    decisions = tuple(Decision("score", category=c) for c in ("a", "b", "c", "d", "e"))

    class Table:
        def choices(self, boxes, dice, rolls_left):
            return decisions, list(values)

    bot = policy.Optimal(lambda rules_id: Table())
    position = Position(RULESETS["yacht"], {}, (1, 2, 3, 4, 5), 3)
    asked = []
    picked = [bot.decide(position, lambda n, i=i: asked.append(n) or i).category for i in range(4)]
    assert asked == [4] * 4 and picked == ["a", "b", "d", "e"]


def decide_by_rule(candidates, tiebreak) -> Decision:
    """SPEC §4.5's rule, written here apart from base.Policy.decide: the candidates within TIE_TOLERANCE of
    the best, in their order, and the tie-break's pick among them (asked once, with their number)."""
    best = max(c.value for c in candidates)
    tied = [c.decision for c in candidates if c.value >= best - TIE_TOLERANCE]
    return tied[tiebreak(len(tied))]


@pytest.mark.slow  # the classic13 table
def test_policy_values_agree_with_the_table(optimal_table):
    # E over the first roll of the best candidate = the table's value of the card
    table = optimal_table("classic13")
    policy = BOTS["optimal"]
    rs = RULESETS["classic13"]
    for boxes in ({c: None for c in rs.category_ids},
                  {**{c: None for c in rs.category_ids}, "yahtzee": 50, "sixes": 24, "fives": 15, "chance": 22}):
        expected = sum(p * max(c.value for c in policy.candidates(Position(rs, boxes, roll, 1)))
                       for roll, p in zip(space.ROLLS, space.FIRST_ROLL))
        assert expected == pytest.approx(table.value(boxes), abs=1e-6)
    _check_turns_against_the_table(table, random.Random(13), 40)  # the forced joker and its bonus too
    joker = {**{c: None for c in rs.category_ids}, "yahtzee": 50, "sixes": 24, "chance": 22, "full_house": 25}
    assert programme.first_roll_value(table.turn(joker)[1]) == table.values[table.state(joker)]


def test_before_the_first_roll_the_only_candidate_is_to_roll(optimal_table):
    optimal_table("yacht")
    rs = RULESETS["yacht"]
    (cand,) = BOTS["optimal"].candidates(Position(rs, {c: None for c in rs.category_ids}, (), 0))
    assert cand.decision.action == "roll" and cand.decision.hold == ()
    assert cand.value == pytest.approx(191.7744, abs=1e-4)


def test_identity_needs_no_table():
    bot = policy.Optimal(lambda rules_id: pytest.fail("identity must not ask for tables"))
    params = bot.params()
    assert params["table_sha256"] == {r: e["sha256"] for r, e in table_format.manifest()["tables"].items()}
    assert sorted(params["table_sha256"]) == sorted(RULESETS)
    assert len(bot.identity_hash()) == 64


def test_without_a_table_source_a_decision_says_how_to_get_one():
    """The core's registry has no table source (the core reads no file): its optimal bot names itself, and a
    decision, a hint or an analysis that needs a table says how to make the bot with one."""
    rs = RULESETS["yacht"]
    with pytest.raises(FairdiceError) as err:
        core_bots.BOTS["optimal"].candidates(Position(rs, {}, (1, 2, 3, 4, 5), 1))
    assert err.value.code == "table_unavailable"
    assert "table_cache.bots()" in err.value.message and "fairdice tables build" in err.value.message
    with pytest.raises(FairdiceError) as err:
        hint(Position(rs, {}, (1, 2, 3, 4, 5), 1))
    assert err.value.code == "table_unavailable"


def test_a_fresh_script_gets_the_same_answer_whatever_ran_before():
    """No module-global source: in a fresh interpreter, after the edges made their own registry with the
    cache, the core's `BOTS["optimal"]` still has none (nothing was installed into it)."""
    code = ("from fairdice.adapters import table_cache\n"
            "from fairdice.bots import BOTS\nfrom fairdice.bots.base import Position\n"
            "from fairdice.rules import RULESETS\nfrom fairdice.errors import FairdiceError\n"
            "table_cache.bots()\n"
            "try:\n    BOTS['optimal'].candidates(Position(RULESETS['yacht'], {}, (1, 2, 3, 4, 5), 1))\n"
            "except FairdiceError as e:\n    print(e.code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["table_unavailable"], done.stderr


def test_the_registry_makes_the_optimal_bot_with_its_source_and_asks_it_only_to_decide():
    """`with_tables` hands the source to the table-driven policy and to no other; making the registry, and
    the bot's identity, ask nothing (a table is loaded when a decision first needs it)."""
    table, asked = random_table("yacht", seed=5), []
    bots = core_bots.BOTS.with_tables(lambda rules_id: asked.append(rules_id) or table)
    assert bots["optimal"].identity() == core_bots.BOTS["optimal"].identity() and asked == []
    assert bots["ev"].identity() == core_bots.BOTS["ev"].identity() and asked == []
    bots["optimal"].candidates(Position(RULESETS["yacht"], {}, (1, 2, 3, 4, 5), 1))
    assert asked == ["yacht"]


def test_a_source_that_may_not_build_refuses_a_missing_table(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRDICE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(table_cache, "CACHE", table_cache.TableCache())
    monkeypatch.setattr(table_cache, "compute_table", lambda *a, **k: pytest.fail("a decision built a table"))
    with pytest.raises(FairdiceError) as err:
        table_cache.bots(build=False)["optimal"].candidates(Position(RULESETS["yacht"], {}, (1, 2, 3, 4, 5), 1))
    assert err.value.code == "table_unavailable"


def test_state_of_rejects_impossible_cards():
    rs = RULESETS["classic13"]
    with pytest.raises(FairdiceError):
        policy.state_of(rs, {"sixes": 7})
    assert policy.state_of(rs, {"sixes": 30, "fives": 25, "fours": 20})[1] == 63  # capped
    mask, upper, flag = policy.state_of(rs, {"sixes": 30, "fives": 25, "yahtzee": 50})
    assert upper == 55 and flag == 1 and mask == (1 << 5) | (1 << 4) | (1 << rs.category_ids.index("yahtzee"))


# --- the cache --------------------------------------------------------------------------------------------

@pytest.fixture
def cache_copy(optimal_table, tmp_path, monkeypatch):
    """A private cache dir holding a copy of the good yacht table, and nothing in memory; compute_table
    counted, not run."""
    optimal_table("yacht")
    src = table_cache.table_path("yacht")
    monkeypatch.setenv("FAIRDICE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(table_cache, "CACHE", table_cache.TableCache())
    shutil.copy(src, table_cache.table_path("yacht"))
    shutil.copy(src.with_suffix(".json"), table_cache.table_path("yacht").with_suffix(".json"))
    good = np.load(src)
    meta = json.loads(src.with_suffix(".json").read_text())
    calls = []

    def fake_compute(rules_id, moments=False, workers=None):
        calls.append(rules_id)
        return good.copy(), dict(meta)

    monkeypatch.setattr(table_cache, "compute_table", fake_compute)
    return table_cache.table_path("yacht"), calls


def _corrupt_byte(path):
    data = bytearray(path.read_bytes())
    data[-1000] ^= 1
    path.write_bytes(bytes(data))


def _wrong_shape(path):
    np.save(path, np.zeros((4096, 64, 2), dtype="<i8"))


def _float_table(path):
    np.save(path, np.load(path).astype(float))


def _truncated(path):
    path.write_bytes(path.read_bytes()[:5000])


def _stale_format(path):
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    side.write_text(json.dumps({**meta, "format": table_format.FORMAT - 1}))


def _no_sidecar(path):
    path.with_suffix(".json").unlink()


@pytest.mark.parametrize("damage", [_corrupt_byte, _wrong_shape, _float_table, _truncated, _stale_format,
                                    _no_sidecar])
def test_damaged_cache_is_detected_and_rebuilt(cache_copy, damage):
    path, calls = cache_copy
    assert table_cache.build_table("yacht")["built"] is False and calls == []
    damage(path)
    assert not table_cache.TableCache().ready("yacht")
    info = table_cache.build_table("yacht")
    assert info["built"] is True and calls == ["yacht"]
    assert info["reason"] != "ok"
    assert table_format.table_digest("yacht", np.load(path)) == table_format.expected_digest("yacht")
    assert table_cache.build_table("yacht")["built"] is False and calls == ["yacht"]


def test_cache_consistent_with_itself_but_not_the_manifest_is_rebuilt(cache_copy):
    path, calls = cache_copy
    other = np.load(path)
    other[1, 0, 0] += 1
    np.save(path, other)
    meta = json.loads(path.with_suffix(".json").read_text())
    path.with_suffix(".json").write_text(json.dumps({**meta, "sha256": table_format.table_digest("yacht", other)}))
    assert table_cache.build_table("yacht")["built"] is True and calls == ["yacht"]


def test_rebuild_that_still_mismatches_raises(cache_copy, monkeypatch):
    path, _ = cache_copy
    _corrupt_byte(path)

    def wrong_compute(rules_id, moments=False, workers=None):
        table = np.zeros((4096, 64, 1), dtype="<i8")
        return table, {"rules": rules_id, "sha256": table_format.table_digest(rules_id, table)}

    monkeypatch.setattr(table_cache, "compute_table", wrong_compute)
    with pytest.raises(FairdiceError) as err:
        table_cache.build_table("yacht")
    assert err.value.code == "table_mismatch"
    assert table_format.table_digest("yacht", np.load(path)) != table_format.expected_digest("yacht")  # kept


@pytest.mark.slow
def test_real_rebuild_into_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRDICE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(table_cache, "CACHE", table_cache.TableCache())
    info = table_cache.build_table("yacht")  # the real programme: a second or two
    assert info["built"] and info["sha256"] == table_format.expected_digest("yacht")
    assert info["start_sd"] == table_format.manifest()["tables"]["yacht"]["start_sd"]  # the digest's own
    assert table_cache.load_table("yacht").start_value() == pytest.approx(191.7744, abs=1e-4)
    side = json.loads(table_cache.table_path("yacht").with_suffix(".json").read_text())
    assert side["sha256"] == info["sha256"] and side["rules"] == "yacht"


# --- play -----------------------------------------------------------------------------------------------------

def play(rules_id, bot, seed: int) -> Game:
    game = Game(Setup.build("g", rules_id, [{"type": "bot", "bot": bot}]), server_seed=seed.to_bytes(32, "big"))
    game.supply_client_seed(None, f"client seed {seed}")
    play_bots(game, BOTS)
    return game


@pytest.mark.parametrize("rules_id", by_rules(RULESETS))
def test_decisions_are_legal_in_whole_games(optimal_table, rules_id):
    optimal_table(rules_id)
    for seed in range(5):
        game = play(rules_id, "optimal", seed)  # Game refuses any illegal move
        assert game.status == "finished"


@pytest.mark.slow  # the classic13 table
def test_joker_positions_offer_only_legal_boxes(optimal_table):
    optimal_table("classic13")
    rs = RULESETS["classic13"]
    boxes = {**{c: None for c in rs.category_ids}, "yahtzee": 50, "sixes": 18}
    cands = BOTS["optimal"].candidates(Position(rs, boxes, (6, 6, 6, 6, 6), 3))
    legal = options(rs, boxes, (6, 6, 6, 6, 6))
    assert {c.decision.category for c in cands} == set(legal)
    assert all(c.decision.category not in ("ones", "twos") for c in cands)
    boxes["fives"] = None
    cands = BOTS["optimal"].candidates(Position(rs, boxes, (5, 5, 5, 5, 5), 3))
    assert [c.decision.category for c in cands] == ["fives"]


def test_upper_first_is_refused_and_hint_falls_back():
    rs = RULESETS["classic13"]
    pos = Position(rs, {c: None for c in rs.category_ids}, (1, 2, 3, 4, 6), 1, upper_first=True)
    with pytest.raises(FairdiceError) as err:
        BOTS["optimal"].candidates(pos)
    assert err.value.code == "unsupported_rules"
    h = hint(pos, TABLES)
    assert h["engine"] == "ev" and h["value_kind"] == "expected_turn_points"
    # SPEC §3.4: no lower box while an upper box is open, so the boxes offered are exactly the six upper ones
    assert {a["category"] for a in h["alternatives"] if a["action"] == "score"} == {
        "ones", "twos", "threes", "fours", "fives", "sixes"}


@pytest.mark.slow  # the classic13 table
def test_hint(optimal_table):
    optimal_table("classic13")
    rs = RULESETS["classic13"]
    boxes = {**{c: None for c in rs.category_ids}, "chance": 20, "sixes": 24}
    pos = Position(rs, boxes, (2, 3, 4, 5, 5), 2)
    h = hint(pos, TABLES)
    json.dumps(h)
    assert h["engine"] == "optimal" and h["banked"] == 44
    values = [a["value"] for a in h["alternatives"]]
    assert values == sorted(values, reverse=True) and h["best"] == h["alternatives"][0]
    holds = [a for a in h["alternatives"] if a["action"] == "roll"]
    boxes_offered = [a["category"] for a in h["alternatives"] if a["action"] == "score"]
    assert len({tuple(a["keep"]) for a in holds}) == len(holds)  # each distinct hold once
    assert sorted(boxes_offered) == sorted(options(rs, boxes, pos.dice))
    assert h["alternatives"][-1]["loss"] > 0 and h["best"]["loss"] == 0
    # values are expected final scores: banked + the policy's candidate values
    best = max(c.value for c in BOTS["optimal"].candidates(pos))
    assert h["best"]["value"] == pytest.approx(44 + best, abs=1e-4)
    start = hint(Position(rs, {c: None for c in rs.category_ids}, (), 0), TABLES)
    assert start["best"]["value"] == pytest.approx(254.5877, abs=1e-4)


@pytest.mark.slow
def test_optimal_beats_ev_beats_greedy(optimal_table):
    optimal_table("classic13")
    games = 200
    means = {bot: statistics.mean(play("classic13", bot, seed).totals(0).total for seed in range(games))
             for bot in ("greedy", "ev", "optimal")}
    assert means["optimal"] > means["ev"] > means["greedy"], means
    assert means["optimal"] > 240, means


# --- the import rules -----------------------------------------------------------------------------------------

IO_MODULES = {"os", "io", "sys", "pathlib", "tempfile", "shutil", "fcntl", "mmap", "multiprocessing", "threading",
              "subprocess", "socket", "signal", "glob", "sqlite3", "concurrent"}


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(top-level modules imported, names called) in a source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules, calls = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.add(node.func.id)
    return modules, calls


def test_only_the_edge_module_touches_the_world():
    """The engine (fairdice/bots, the optimal package included) imports no module that does I/O and opens no
    file; the table cache, which does, lives in fairdice/adapters, which no engine module imports."""
    engine = sorted((ROOT / "fairdice" / "bots").rglob("*.py"))
    assert {p.name for p in engine} >= {"programme.py", "table_format.py", "policy.py", "policies.py"}
    for path in engine:
        modules, calls = _imports(path)
        tops = {m.lstrip(".").split(".")[0] for m in modules if not m.startswith(".")}
        assert not tops & IO_MODULES, (path, tops & IO_MODULES)
        assert "open" not in calls, path
        reaches_edges = any({"edges", "adapters"} & set(m.split(".")) for m in modules)
        assert not reaches_edges, path
    edge, _ = _imports(ROOT / "fairdice" / "adapters" / "table_cache.py")
    assert {"os", "fcntl", "mmap", "multiprocessing", "tempfile"} <= {m.split(".")[0] for m in edge}


def test_checking_seats_loads_no_numpy():
    """`import fairdice.game` and validating a game's seats, bots included, import no numpy: a bot's
    module (and its tables) is loaded when the bot is first asked to play."""
    code = ("import sys, fairdice.game as g\n"
            "g.Setup.build('x', 'yacht', [{'type': 'human', 'name': 'ann'}, {'type': 'bot', 'bot': 'optimal'},"
            " {'type': 'bot', 'bot': 'ev'}])\n"
            "assert 'numpy' not in sys.modules, sorted(m for m in sys.modules if m.startswith(('numpy', 'fairdice')))\n"
            "from fairdice.bots import BOTS\n"
            "assert BOTS['ev'].id == 'ev' and 'numpy' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("rules_id, most", [("yatzy", 374), ("classic13", 1575)])
def test_the_kernels_bound_is_the_best_game_the_rule_book_allows(rules_id, most):
    """The best possible games, known from the rule books: Yatzy 374; Yahtzee 1575 (twelve Yahtzee bonuses).
    The kernel's exactness check rests on this bound (programme.StateSpace.most_points)."""
    assert programme.StateSpace(RULESETS[rules_id]).most_points == most
