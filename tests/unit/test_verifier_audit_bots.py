"""`fairdice-verify --audit`: the house's bots are held to their published score distributions (SPEC §7.1).

The operator's cheat here: a house bot that plays better than its published policy. With its decisions replayed
(the default) that is a `bot.decision` failure; the audit catches it even where the decisions are not replayed,
from the scores alone."""

from __future__ import annotations

import json

import pytest

from support.verifier_support import load, resign, simulated, write
from verifier import audit
from verifier.cli import main
from support import REPO as ROOT

GREEDY = next(b for b in json.loads((ROOT / "tests/vectors/bots.json").read_text()) if b["id"] == "greedy")


def audit_of(capsys, *argv) -> tuple[int, dict]:
    code = main(["--json", "--audit", *map(str, argv)])
    return code, json.loads(capsys.readouterr().out)["audit"]


def test_the_verifiers_published_distributions_are_the_projects_measured_ones():
    measured = json.loads((ROOT / "fairdice/bots/measured.json").read_text())
    assert audit.PUBLISHED_GAMES == measured["games"]
    assert audit.PUBLISHED == {bot: {rules: (cell["mean"], cell["sd"]) for rules, cell in by_rules.items()}
                               for bot, by_rules in measured["bots"].items()}


def test_genuine_bots_score_as_published(capsys):
    code, rep = audit_of(capsys, simulated("yacht", "greedy,ev", 40, 911))
    assert code == 0, rep["findings"]
    assert {(b["bot"], b["n"], b["verdict"]) for b in rep["bots"]} == {("greedy", 40, "as published"),
                                                                       ("ev", 40, "as published")}


def test_a_bot_that_plays_better_than_published_is_a_finding(capsys, tmp_path):
    """ev's games passed off as greedy's (a stronger policy under the weaker one's name, re-signed): every die
    and score is right, and the decisions are not replayed, yet the scores give the bot away."""
    for path in sorted(simulated("yacht", "ev", 40, 912).glob("*.json")):
        doc = load(path)
        doc["header"]["seats"][0]["bot"] = {k: GREEDY[k] for k in ("id", "version", "hash")}
        write(tmp_path, path.name, resign(doc))
    code, rep = audit_of(capsys, "--no-check-bots", tmp_path)
    (test,) = rep["bots"]
    assert test["bot"] == "greedy" and test["n"] == 40 and test["verdict"] == "DEVIATES" and test["z"] > 3
    assert code == 1 and any("greedy bot's scores in yacht deviate" in f for f in rep["findings"])
    code, out = main(["--audit", str(tmp_path)]), capsys.readouterr().out
    assert code == 1 and "bot.decision" in out  # replayed (the default), each game fails on its own


@pytest.mark.parametrize("n, expected", [(audit.MIN_BOT_GAMES - 1, 0), (audit.MIN_BOT_GAMES, 1)])
def test_too_few_games_are_not_tested(n, expected):
    a = audit.Audit()
    a.scores[("yacht", "greedy")] = [134] * n
    assert len(a.bot_tests()) == expected


def abandon_games(tmp_path, selective: bool, games: int = 30):
    """Games of a human against the greedy bot, each ended by the server on a "timeout" at some turn: either the
    first moment the human leads from turn 4 on (the dishonest server's lever), or a turn fixed in advance."""
    import random

    from fairdice.bots import play_bots
    from fairdice.game import Game, Setup
    from fairdice.log import build_log, open_log
    from support.verifier_support import SIGNER
    rng = random.Random(5)
    for g in range(games):
        setup = Setup.build(f"abandon-{g}", "yacht", [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}])
        game = Game(setup, server_seed=bytes([g]) * 32)
        opened = open_log(game, SIGNER)
        game.supply_client_seed(0, f"seed {g}")
        stop_at = rng.randint(4, 11)
        while not game.over:
            if game.turn >= 4 and game.current_seat == 0 and game.rolls_made == 0:
                human_ahead = game.totals(0).total > game.totals(1).total
                if (selective and human_ahead) or (not selective and game.turn == stop_at):
                    game.abandon(None, "timeout")
                    break
            if game.current_seat == 1:
                play_bots(game)
            elif game.rolls_made == 0:
                game.roll(0)
            else:
                game.score(0, max(game.scoring_options(), key=lambda c: game.scoring_options()[c].points))
        write(tmp_path, f"g{g}.json", build_log(opened, game, SIGNER))


@pytest.mark.parametrize("selective", [True, False])
def test_a_server_that_abandons_the_games_its_bot_is_losing_is_a_finding(capsys, tmp_path, selective):
    abandon_games(tmp_path, selective)
    code, rep = audit_of(capsys, "--no-check-bots", tmp_path)
    test = rep["abandons"]["selective"]
    assert test["unsigned_abandons"] >= 5 and 0 < test["baseline_bot_behind"] < 1
    assert test["by"] == {"server": test["unsigned_abandons"]}
    if selective:
        assert test["bot_behind"] == test["unsigned_abandons"] and test["verdict"] == "SELECTIVE" and code == 1
        assert any("abandons the games its bot is losing" in f for f in rep["findings"])
    else:
        assert test["verdict"] == "as often as the bot is behind" and not any("abandon" in f for f in rep["findings"])
