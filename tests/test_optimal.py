"""The optimal policy: its DP against brute force, the published start values, the table cache, play.

The tables come from conftest's `optimal_table`, built once per run into the run's own cache: yacht and
classic13 in seconds; yatzy's (about half a minute) only for the tests marked slow.
"""

from __future__ import annotations

import json
import shutil
import statistics
from functools import cache
from itertools import product

import numpy as np
import pytest

from fairdice.bots import BOTS, play_bots
from fairdice.bots import optimal, space
from fairdice.bots.base import Position
from fairdice.errors import FairdiceError
from fairdice.game import Game, Setup
from fairdice.hint import hint
from fairdice.rules import RULESETS, RuleSet, options

PUBLISHED = {  # start value (2 decimals) and standard deviation of the final score under optimal play
    "classic13": (254.59, 59.6),
    "yatzy": (248.44, 38.5),
    "yacht": (191.77, 37.9),
}


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
    ("yatzy", ("twos", "threes", "two_pairs"), 10),             # two upper boxes crossing the threshold
])
def test_dp_matches_brute_force(rules_id, cats, threshold):
    rules = mini(rules_id, cats)
    spec = optimal.Spec(rules, threshold)
    V, _ = optimal.solve(spec)
    expected = brute_force(rules, threshold)
    assert len(expected) > 4
    for (filled, upper, flag), value in expected.items():
        mask = sum(1 << i for i, c in enumerate(rules.category_ids) if c in filled)
        assert V[mask, upper, int(flag and spec.flag)] / optimal.SCALE == pytest.approx(value, abs=1e-6)


def test_parallel_solve_is_identical():
    spec = optimal.Spec(mini("classic13", ("fives", "sixes", "chance", "yahtzee")), 40)
    one, _ = optimal.solve(spec, chunk=64)
    two, _ = optimal.solve(spec, chunk=64, workers=2)
    assert np.array_equal(one, two)


def test_second_moment_is_exact_on_closed_form_games():
    # one box "sixes": each die independently ends a six with p = 1 - (5/6)^3 (keep every six)
    V, W = optimal.solve(optimal.Spec(mini("yacht", ("sixes",))), moments=True)
    p = 1 - (5 / 6) ** 3
    mean, var = 6 * 5 * p, 36 * 5 * p * (1 - p)
    assert V[0, 0, 0] / optimal.SCALE == pytest.approx(mean, abs=1e-7)
    assert W[0, 0, 0] - mean ** 2 == pytest.approx(var, abs=1e-6)
    # one box "yacht": the score is 0 or 50, so E[score^2] = 50 E[score]
    V, W = optimal.solve(optimal.Spec(mini("yacht", ("yacht",))), moments=True)
    assert W[0, 0, 0] == pytest.approx(50 * V[0, 0, 0] / optimal.SCALE, abs=1e-6)


# --- the full tables ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rules_id", by_rules(PUBLISHED))
def test_start_values_match_published(optimal_table, rules_id):
    table = optimal_table(rules_id)
    mean, sd = PUBLISHED[rules_id]
    assert round(table.start_value(), 2) == mean
    assert optimal.table_digest(rules_id, table.V) == optimal.manifest()["tables"][rules_id]["sha256"]
    assert optimal.manifest()["tables"][rules_id]["start_sd"] == pytest.approx(sd, abs=0.06)


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


def test_before_the_first_roll_the_only_candidate_is_to_roll(optimal_table):
    optimal_table("yacht")
    rs = RULESETS["yacht"]
    (cand,) = BOTS["optimal"].candidates(Position(rs, {c: None for c in rs.category_ids}, (), 0))
    assert cand.decision.action == "roll" and cand.decision.hold == ()
    assert cand.value == pytest.approx(191.7744, abs=1e-4)


def test_identity_does_not_build_tables(monkeypatch):
    monkeypatch.setattr(optimal, "_LOADED", {})
    monkeypatch.setattr(optimal, "solve", lambda *a, **k: pytest.fail("identity must not build tables"))
    monkeypatch.setattr(optimal, "load_table", lambda *a, **k: pytest.fail("identity must not load tables"))
    policy = optimal.Optimal()
    params = policy.params()
    assert sorted(params["table_sha256"]) == sorted(RULESETS)
    assert all(len(d) == 64 for d in params["table_sha256"].values())
    assert len(policy.identity_hash()) == 64 and not optimal._LOADED


def test_state_of_rejects_impossible_cards():
    rs = RULESETS["classic13"]
    with pytest.raises(FairdiceError):
        optimal.state_of(rs, {"sixes": 7})
    assert optimal.state_of(rs, {"sixes": 30, "fives": 25, "fours": 20})[1] == 63  # capped
    mask, upper, flag = optimal.state_of(rs, {"sixes": 30, "fives": 25, "yahtzee": 50})
    assert upper == 55 and flag == 1 and mask == (1 << 5) | (1 << 4) | (1 << rs.category_ids.index("yahtzee"))


# --- the cache --------------------------------------------------------------------------------------------

@pytest.fixture
def cache_copy(optimal_table, tmp_path, monkeypatch):
    """A private cache dir holding a copy of the good yacht table; compute_table counted, not run."""
    optimal_table("yacht")
    src = optimal.table_path("yacht")
    monkeypatch.setenv("FAIRDICE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(optimal, "_LOADED", {})
    shutil.copy(src, optimal.table_path("yacht"))
    shutil.copy(src.with_suffix(".json"), optimal.table_path("yacht").with_suffix(".json"))
    good = np.load(src)
    meta = json.loads(src.with_suffix(".json").read_text())
    calls = []

    def fake_compute(rules_id, moments=True, workers=None):
        calls.append(rules_id)
        return good.copy(), dict(meta)

    monkeypatch.setattr(optimal, "compute_table", fake_compute)
    return optimal.table_path("yacht"), calls


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
    side.write_text(json.dumps({**meta, "format": optimal.FORMAT - 1}))


def _no_sidecar(path):
    path.with_suffix(".json").unlink()


@pytest.mark.parametrize("damage", [_corrupt_byte, _wrong_shape, _float_table, _truncated, _stale_format,
                                    _no_sidecar])
def test_damaged_cache_is_detected_and_rebuilt(cache_copy, damage):
    path, calls = cache_copy
    assert optimal.build_table("yacht")["built"] is False and calls == []
    damage(path)
    info = optimal.build_table("yacht")
    assert info["built"] is True and calls == ["yacht"]
    assert info["reason"] != "ok"
    assert optimal.table_digest("yacht", np.load(path)) == optimal.manifest()["tables"]["yacht"]["sha256"]
    assert optimal.build_table("yacht")["built"] is False and calls == ["yacht"]


def test_cache_consistent_with_itself_but_not_the_manifest_is_rebuilt(cache_copy):
    path, calls = cache_copy
    other = np.load(path)
    other[1, 0, 0] += 1
    np.save(path, other)
    meta = json.loads(path.with_suffix(".json").read_text())
    path.with_suffix(".json").write_text(json.dumps({**meta, "sha256": optimal.table_digest("yacht", other)}))
    assert optimal.build_table("yacht")["built"] is True and calls == ["yacht"]


def test_rebuild_that_still_mismatches_raises(cache_copy, monkeypatch):
    path, _ = cache_copy
    _corrupt_byte(path)

    def wrong_compute(rules_id, moments=True, workers=None):
        table = np.zeros((4096, 64, 1), dtype="<i8")
        return table, {"sha256": optimal.table_digest(rules_id, table)}

    monkeypatch.setattr(optimal, "compute_table", wrong_compute)
    with pytest.raises(FairdiceError) as err:
        optimal.build_table("yacht")
    assert err.value.code == "table_mismatch"


@pytest.mark.slow
def test_real_rebuild_into_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRDICE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(optimal, "_LOADED", {})
    info = optimal.build_table("yacht", moments=False)  # the real DP: a few seconds
    assert info["built"] and info["sha256"] == optimal.manifest()["tables"]["yacht"]["sha256"]
    assert optimal.load_table("yacht").start_value() == pytest.approx(191.7744, abs=1e-4)


# --- play -----------------------------------------------------------------------------------------------------

def play(rules_id, bot, seed: int) -> Game:
    game = Game(Setup.build("g", rules_id, [{"type": "bot", "bot": bot}]), server_seed=seed.to_bytes(32, "big"))
    game.supply_client_seed(None, f"client seed {seed}")
    play_bots(game)
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
    h = hint(pos)
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
    h = hint(pos)
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
    start = hint(Position(rs, {c: None for c in rs.category_ids}, (), 0))
    assert start["best"]["value"] == pytest.approx(254.5877, abs=1e-4)


@pytest.mark.slow
def test_optimal_beats_ev_beats_greedy(optimal_table):
    optimal_table("classic13")
    games = 200
    means = {bot: statistics.mean(play("classic13", bot, seed).totals(0).total for seed in range(games))
             for bot in ("greedy", "ev", "optimal")}
    assert means["optimal"] > means["ev"] > means["greedy"], means
    assert means["optimal"] > 240, means
