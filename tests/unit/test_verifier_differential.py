"""Differential tests: the verifier (an independent implementation of SPEC.md) and the core agree
on every die and every score, over thousands of games."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from support.verifier_support import core_log, random_setup, simulated
from verifier import CHECKS, verify_file
from verifier.botcheck import PublishedBots
from verifier.files import find_logs
from verifier.replay import verify_document
from verifier.spec import options, yahtzee_bonus
from support import REPO

# 1,510 games across the three rule sets and the three bots, made by `fairdice simulate` (a seed per run).
RUNS = [("yacht", "greedy,ev", 500, 101), ("yatzy", "ev,greedy", 500, 102), ("classic13", "ev,ev", 500, 103),
        ("classic13", "optimal,greedy", 10, 104)]


pytestmark = pytest.mark.slow  # 1,510 simulated games


@pytest.fixture(scope="session")
def simulated_logs():
    files = []
    for run in RUNS:
        found, missing = find_logs([str(simulated(*run))])
        assert not missing and len(found) == run[2]
        files += found
    return files


def test_every_simulated_game_verifies(simulated_logs):
    dice = scores = 0
    for path in simulated_logs:
        r = verify_file(path, audit=True)
        assert r.ok, (path, r.failures)
        assert r.signed and r.status == "finished"
        # every die re-derived and every score recomputed by the verifier equals the core's
        for check in ("roll.dice", "score.points", "score.category", "final.totals", "final.winner",
                      "seed.commitment", "sig.commitment", "sig.final"):
            assert r.checks[check] == "pass", (path, check)
        dice += r.audit["rolls"] * 5
        scores += 1
    assert scores == sum(run[2] for run in RUNS)
    assert dice > 100_000


def test_bot_decisions_of_simulated_games_replay(simulated_logs):
    """--check-bots: the tiebreak index derived by the verifier is the one the core used."""
    bots = PublishedBots()
    sample = simulated_logs[::25]
    assert any("-optimal_" in Path(path).parent.name for path in sample)  # every bot's decisions are replayed
    for path in sample:
        r = verify_file(path, bots=bots)
        assert r.ok, (path, r.failures)
        assert r.checks["bot.identity"] == r.checks["bot.decision"] == "pass"


def test_random_play_agrees_with_core_options():
    """Human seats playing random moves (scratches, jokers, upper_first, roll-offs, up to 4 seats):
    before every score the verifier's legal boxes and points equal the core's, and the log verifies."""
    rng = random.Random(7)
    compared = jokers = 0

    def compare(game):
        nonlocal compared, jokers
        seat = game.current_seat
        card = game.card(seat)
        boxes = dict(card.boxes)
        mine = options(game.rules.id, boxes, list(game.dice), game.setup.upper_first)
        core = game.scoring_options()
        assert sorted(mine) == sorted(core), (game.dice, boxes)
        for cat, opt in core.items():
            assert mine[cat] == (opt.points, opt.joker), (cat, game.dice, boxes)
            assert yahtzee_bonus(game.rules.id, boxes, list(game.dice)) == opt.yahtzee_bonus
        compared += 1
        jokers += any(j for _, j in mine.values())

    for i in range(400):
        rules = ["yacht", "yatzy", "classic13", "classic13"][i % 4]
        setup = random_setup(rng, f"rand-{i}", rules)
        log = core_log(setup, rng.randbytes(32), rng, on_options=compare)
        r = verify_document(log, f"rand-{i}")
        assert r.ok, (i, r.failures)
        assert r.checks["start.first"] == "pass"
    assert compared > 5000 and jokers >= 10


def test_checks_are_the_spec_ids():
    """The verifier's check ids are exactly the rows of SPEC §7's table, in its order."""
    import re
    spec = (REPO / "SPEC.md").read_text()
    section = spec[spec.index("## 7. Verifier checks"):spec.index("### 7.1 Audit")]
    assert CHECKS == tuple(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", section, re.M))
