"""The verifier's own bots (verifier.policies, verifier.optimal: SPEC §4.5, §4.6), without the server's code.

Held against the core's policies on every decision of whole games (candidates, values, ties, decision),
against the worked example of §4.6 (tests/vectors/optimal_decision.json), against the table itself (each
stored value is the turn solved from its successors), and as a command with fairdice and api unimportable:
genuine bot games verify, bots that read the dice to come fail, a table that is not the published one is
refused."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from fairdice.adapters import table_cache
from fairdice.bots import position_of
from fairdice.bots.base import TIE_TOLERANCE
from fairdice.game import Game, Setup
from support.verifier_support import server_code_blocked_env, simulated
from verifier import optimal
from verifier.botcheck import HASHES, PUBLISHED, PublishedBots
from verifier.policies import EV_UNIT, POLICIES, decide, ranked
from verifier.spec import CATEGORIES, UPPER, Deriver, canonical
from verifier.turn import card_key
from support import VECTORS
from support import REPO as ROOT

FORGED = VECTORS / "forged"
EXAMPLE = json.loads((VECTORS / "optimal_decision.json").read_text())
BOTS = table_cache.bots()  # the core's bots, the optimal one with the run's cached tables (conftest)


# ------------------------------------------------------------------ against the core, decision by decision

def core_candidates(bot: str, position) -> list[tuple]:
    """The core's candidates as (decision, value), decisions written as the verifier writes them."""
    return [(("roll", tuple(c.decision.hold)) if c.decision.action == "roll" else ("score", c.decision.category),
             c.value) for c in BOTS[bot].candidates(position)]


def own_candidates(bot: str, tables: PublishedBots, rules: str, boxes: dict, dice: tuple, roll: int,
                   upper_first: bool) -> list[tuple]:
    if bot == "optimal":
        return [tuple(c) for c in ranked(optimal.choices(tables.table(rules), boxes, dice, roll), dice)]
    return [tuple(c) for c in ranked(POLICIES[bot](rules, boxes, dice, roll, upper_first), dice)]


def tied(candidates, tolerance) -> list:
    best = max(v for _, v in candidates)
    return [d for d, v in candidates if v >= best - tolerance]


def same_values(bot: str, core: list, own: list) -> bool:
    """greedy: integer gains (its lone hold has no value to compare); ev: exact integers in units of 6^-10
    against the core's floats; optimal: the same binary64 numbers, bit for bit."""
    if bot == "greedy":
        return len(own) == 1 or all(o == c for (_, c), (_, o) in zip(core, own))
    if bot == "ev":
        return all(abs(o / EV_UNIT - c) < 1e-9 for (_, c), (_, o) in zip(core, own))
    return all(o == c for (_, c), (_, o) in zip(core, own))


def play_compared(rules: str, bot: str, seed: int, tables: PublishedBots, upper_first: bool = False) -> tuple[int, int]:
    """One solitaire game of `bot`, played by the core; at every decision the verifier's candidates (order and
    values), tied set and decision (with the game's own derived tie-break) must be the core's.
    Returns (decisions, decisions with a tie)."""
    game = Game(Setup.build(f"policies-{seed}", rules, [{"type": "bot", "bot": bot}], upper_first=upper_first),
                server_seed=seed.to_bytes(32, "big"))
    game.supply_client_seed(None, f"client seed {seed}")
    decisions = ties = 0
    while game.status == "playing":
        if game.rolls_made == 0:
            game.roll(0)
            continue
        position = position_of(game)
        boxes = {c: position.boxes.get(c) for c in CATEGORIES[rules]}
        core = core_candidates(bot, position)
        own = own_candidates(bot, tables, rules, boxes, position.dice, position.roll, upper_first)
        where = (rules, bot, seed, boxes, position.dice, position.roll)
        assert [d for d, _ in own] == [d for d, _ in core], where
        assert same_values(bot, core, own), where
        tolerance = optimal.TIE_TOLERANCE if bot == "optimal" else 0
        assert tied(own, tolerance) == tied(core, TIE_TOLERANCE), where
        d = BOTS[bot].decide(position, game.tiebreak)
        expected = ("roll", tuple(d.hold)) if d.action == "roll" else ("score", d.category)
        found = tables.decide(bot, rules, boxes, position.dice, position.roll, position.yahtzee_bonus, upper_first,
                              game.tiebreak)
        assert found == expected, where
        decisions += 1
        ties += len(tied(own, tolerance)) > 1
        if d.action == "roll":
            game.roll(0, d.hold)
        else:
            game.score(0, d.category)
    return decisions, ties


@pytest.fixture(scope="module")
def bots():
    return PublishedBots()


@pytest.mark.parametrize("rules", sorted(CATEGORIES))
@pytest.mark.parametrize("bot", ["greedy", "ev"])
def test_one_turn_bots_decide_as_the_core(bots, rules, bot):
    counts = [play_compared(rules, bot, seed, bots) for seed in range(2)]
    assert sum(n for n, _ in counts) > 40


@pytest.mark.parametrize("rules", ["yacht", "classic13"])
def test_one_turn_bots_decide_as_the_core_under_upper_first(bots, rules):
    for bot in ("greedy", "ev"):
        play_compared(rules, bot, 7, bots, upper_first=True)


def test_optimal_decides_as_the_core_in_yacht(bots, optimal_table):
    optimal_table("yacht")
    assert sum(play_compared("yacht", "optimal", seed, bots)[0] for seed in range(2)) > 40


@pytest.mark.slow  # about 2,400 decisions of each bot, and classic13's table (built in some 15 s when not cached)
def test_many_games_decide_as_the_core(bots, optimal_table):
    optimal_table("yacht")
    optimal_table("classic13")
    for rules in sorted(CATEGORIES):
        for bot in ("greedy", "ev"):
            decisions, ties = map(sum, zip(*(play_compared(rules, bot, 1000 + s, bots) for s in range(60))))
            assert decisions > 2000 and ties > 0, (rules, bot)
        for bot in ("greedy", "ev"):
            for s in range(10):
                play_compared(rules, bot, 2000 + s, bots, upper_first=True)
    for rules in ("yacht", "classic13"):
        decisions, ties = map(sum, zip(*(play_compared(rules, "optimal", 3000 + s, bots) for s in range(40))))
        assert decisions > 1200 and ties > 0, rules


# ------------------------------------------------------------------ the worked example of SPEC §4.6

def example_table(values: dict[int, int]) -> optimal.Table:
    """A yacht table that holds only the given elements (the rest 0): all the example needs."""
    table = optimal.Table("yacht", array("q", [0]) * (4096 * 64))
    for index, value in values.items():
        table.values[index] = value
    return table


def test_the_successor_values_of_the_example_are_one_turn_each_from_the_full_card():
    """V of each one-box state is its turn value from a full card worth 0 (SPEC §4.6, TV)."""
    for s in EXAMPLE["successors"]:
        card = {**EXAMPLE["card"], s["box"]: 0}
        assert optimal.turn_value(example_table({}), card_key("yacht", card)) == s["value"], s["box"]


def test_the_example_decisions_follow_from_two_successor_values():
    table = example_table({s["index"]: s["value"] for s in EXAMPLE["successors"]})
    card = EXAMPLE["card"]
    key = card_key("yacht", card)
    assert table.state(card) == (EXAMPLE["state"]["mask"], EXAMPLE["state"]["upper"], EXAMPLE["state"]["flag"])
    assert table.index(*table.state(card)) == EXAMPLE["state"]["index"]
    assert optimal.final_values(table, key) == EXAMPLE["final_values"]
    assert optimal.earlier_roll(EXAMPLE["final_values"]) == EXAMPLE["second_roll_values"]
    assert optimal.turn_value(table, key) == EXAMPLE["state"]["value"]
    ctx = EXAMPLE["tiebreak_context"]
    derive = Deriver(bytes.fromhex(ctx["server_seed"]), ctx["game_id"], ctx["client_seeds"])
    assert len(EXAMPLE["decisions"]) >= 2 and all(d["m"] > 1 for d in EXAMPLE["decisions"])
    for d in EXAMPLE["decisions"]:
        dice = tuple(d["dice"])
        choices = optimal.choices(table, card, dice, d["roll"])
        candidates = ranked(choices, dice)
        expected = [(("roll", tuple(c["hold"])) if "hold" in c else ("score", c["box"]), c["value"])
                    for c in d["candidates"]]
        assert [tuple(c) for c in candidates] == expected
        for c, got in zip(d["candidates"], candidates):  # each value is its exact numerator over its denominator
            assert got.value == (c["numerator"] / 7776 / (1 << 29) if "hold" in c else c["numerator"] / (1 << 29))
        drawn = []
        decision = decide(choices, dice, lambda m: drawn.append(m) or derive.tiebreak(0, ctx["turn"], d["roll"], m),
                          optimal.TIE_TOLERANCE)
        assert drawn == [d["m"]]
        assert decision == (("roll", tuple(d["decision"]["hold"])) if "hold" in d["decision"]
                            else ("score", d["decision"]["box"]))


def test_the_example_is_what_the_published_table_holds(bots, optimal_table):
    optimal_table("yacht")
    table = bots.table("yacht")
    for s in [EXAMPLE["state"], EXAMPLE["full_card"], *EXAMPLE["successors"]]:
        assert table.values[s["index"]] == s["value"]


# ------------------------------------------------------------------ the table against SPEC §4.6's definition

def reach(rules: str, mask: int) -> set[int]:
    """SPEC §4.6's reach(m): the capped upper totals the filled upper boxes can make."""
    totals = {0}
    for face, c in enumerate(UPPER, 1):
        if mask >> CATEGORIES[rules].index(c) & 1:
            totals = {min(63, t + face * k) for t in totals for k in range(6)}
    return totals


def a_card(rules: str, mask: int, upper: int, flag: int) -> dict | None:
    """Some card in state (mask, upper, flag), or None when SPEC §4.6 calls that state unreachable."""
    cats = CATEGORIES[rules]
    yahtzee_open = rules != "classic13" or not mask >> cats.index("yahtzee") & 1
    if upper not in reach(rules, mask) or (flag and yahtzee_open):
        return None
    filled_upper = [c for c in UPPER if mask >> cats.index(c) & 1]
    for counts in itertools.product(range(6), repeat=len(filled_upper)):
        values = {c: (UPPER.index(c) + 1) * k for c, k in zip(filled_upper, counts)}
        if min(63, sum(values.values())) == upper:
            card = {c: (values.get(c, 0) if mask >> i & 1 else None) for i, c in enumerate(cats)}
            if not yahtzee_open:
                card["yahtzee"] = 50 * flag
            return card
    raise AssertionError("reach() promised a card")


@pytest.mark.parametrize("rules", ["yacht", pytest.param("classic13", marks=pytest.mark.slow)])
def test_each_table_value_is_the_turn_solved_from_its_successors(bots, optimal_table, rules):
    """On random states: a reachable one holds TV(s), an unreachable one 0 (SPEC §4.6)."""
    optimal_table(rules)
    table, rng = bots.table(rules), random.Random(46)
    n, flags = len(CATEGORIES[rules]), optimal.shape(rules)[2]
    solved = unreachable = 0
    while solved < 25 or unreachable < 25:
        mask, upper, flag = rng.randrange((1 << n) - 1), rng.randrange(64), rng.randrange(flags)
        card = a_card(rules, mask, upper, flag)
        value = table.values[table.index(mask, upper, flag)]
        if card is None:
            assert value == 0, (mask, upper, flag)
            unreachable += 1
        elif solved < 25:
            assert optimal.turn_value(table, card_key(rules, card)) == value, (mask, upper, flag)
            solved += 1
    assert table.values[table.index((1 << n) - 1, 63, 0)] == 0  # the full card


# ------------------------------------------------------------------ identities

def test_published_identities_are_the_spec_vectors():
    for v in json.loads((VECTORS / "bots.json").read_text()):
        assert PUBLISHED[v["id"]] == (v["version"], v["params"])
        assert canonical({"id": v["id"], "version": v["version"], "params": v["params"]}).decode() == v["canonical"]
        assert HASHES[v["id"]] == v["hash"]


# ------------------------------------------------------------------ the command, without the server's code

@pytest.fixture(scope="module")
def blocked_env(tmp_path_factory):
    """The environment of a process in which fairdice, api, flask and numpy cannot be imported."""
    return server_code_blocked_env(tmp_path_factory.mktemp("blocker"))


def verify(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "verifier", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd or ROOT, timeout=300)


def test_the_environment_really_blocks_the_server_code(blocked_env):
    p = subprocess.run([sys.executable, "-c", "import fairdice"], capture_output=True, text=True, env=blocked_env)
    assert p.returncode != 0 and "blocked: fairdice" in p.stderr


@pytest.fixture(scope="module")
def bot_games(optimal_table):
    optimal_table("yacht")  # into the run's cache, where the verifier looks ($FAIRDICE_CACHE_DIR)
    return simulated("yacht", "greedy,ev,optimal", 3, 461)


def test_genuine_bot_games_verify_without_the_server_code(blocked_env, bot_games):
    p = verify(blocked_env, "--jobs", "1", bot_games)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sum(line.startswith("OK ") for line in p.stdout.splitlines()) == 3
    assert "NOT checked" not in p.stdout


@pytest.mark.parametrize("case", ["genuine-yacht-optimal", "genuine-classic13-ann-vs-ev", "genuine-yatzy-bot"])
def test_genuine_corpus_games_verify_without_the_server_code(blocked_env, optimal_table, case):
    optimal_table("yacht")
    p = verify(blocked_env, "--json", FORGED / f"{case}.json")
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["games"][0]["checks"]["bot.decision"] == "pass"


@pytest.mark.parametrize("case", ["future-reading-greedy", "future-reading-ev", "future-reading-once",
                                  "tie-broken-by-hand", "stronger-bot-than-named"])
def test_bots_that_do_not_follow_their_policy_fail_without_the_server_code(blocked_env, case):
    p = verify(blocked_env, "--json", FORGED / f"{case}.json")
    assert p.returncode == 1, p.stdout + p.stderr
    failures = json.loads(p.stdout)["games"][0]["failures"]
    assert any(f["check"] == "bot.decision" for f in failures), failures


@pytest.fixture
def yacht_table_copy(optimal_table, tmp_path, bots):
    """A directory with a copy of the yacht table file as fairdice's cache holds it."""
    optimal_table("yacht")
    source = next(d / "optimal-yacht-v1.npy" for d in optimal.table_dirs())
    directory = tmp_path / "tables"
    directory.mkdir()
    shutil.copy(source, directory)
    return directory / "optimal-yacht-v1.npy"


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


def test_a_table_that_is_not_the_published_one_is_refused(blocked_env, yacht_table_copy):
    flip_last_byte(yacht_table_copy)  # one value changed: a consistent-looking, different table
    p = verify(blocked_env, "--tables", yacht_table_copy.parent, FORGED / "genuine-yacht-optimal.json")
    assert p.returncode == 2, p.stdout + p.stderr
    assert str(yacht_table_copy) in p.stderr and PUBLISHED["optimal"][1]["table_sha256"]["yacht"] in p.stderr
    assert "fairdice tables build" in p.stderr and "OK" not in p.stdout


def test_a_table_damaged_in_its_header_is_refused(yacht_table_copy):
    data = yacht_table_copy.read_bytes()
    yacht_table_copy.write_bytes(data.replace(b"'<i8'", b"'<f8'", 1))
    with pytest.raises(optimal.TableError, match="descr"):
        optimal.Table.load("yacht", PUBLISHED["optimal"][1]["table_sha256"]["yacht"], str(yacht_table_copy.parent))


def test_a_missing_table_is_a_usage_error_unless_bots_are_not_checked(blocked_env, tmp_path):
    game = FORGED / "genuine-yacht-optimal.json"
    p = verify(blocked_env, "--tables", tmp_path, game)
    assert p.returncode == 2 and str(tmp_path / "optimal-yacht-v1.npy") in p.stderr
    assert "--no-check-bots" in p.stderr and "fairdice tables build" in p.stderr
    p = verify(blocked_env, "--tables", tmp_path, "--no-check-bots", game)
    assert p.returncode == 0 and "bot decisions NOT checked" in p.stdout


def test_the_canonical_bytes_serve_as_a_table_file(blocked_env, yacht_table_copy):
    """A table written from SPEC §4.6 alone: the header line, then the values (its SHA-256 is the digest)."""
    npy = yacht_table_copy.read_bytes()
    values = npy[-8 * 4096 * 64:]
    yacht_table_copy.unlink()
    (yacht_table_copy.parent / "optimal-yacht-v1.bin").write_bytes(optimal.canonical_header("yacht") + values)
    p = verify(blocked_env, "--tables", yacht_table_copy.parent, FORGED / "genuine-yacht-optimal.json")
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_tables_are_only_read(bots, optimal_table, tmp_path):
    optimal_table("yacht")
    directory = tmp_path / "read-only"
    directory.mkdir()
    source = next(d / "optimal-yacht-v1.npy" for d in optimal.table_dirs())
    shutil.copy(source, directory)
    directory.chmod(0o555)
    before = sorted(os.listdir(directory))
    table = PublishedBots(str(directory)).table("yacht")
    assert table.values[0] == 102958080485  # SPEC §4.6: yacht's start value
    assert sorted(os.listdir(directory)) == before  # no lock, no sidecar, no rewrite
