"""The coach (issue 23, SPEC §4.7): every decision of a game that is over valued against optimal play, in the
core (`fairdice.analysis`), offline (`fairdice analyze LOG`) and over HTTP (GET /v1/games/{id}/analysis).

Expected values come from the rule book and the vectors: the §4.6 worked example's candidate values
(tests/vectors/optimal_decision.json), the tables' start values of SPEC §4.6, and the identity that makes the
analysis an account of a game: a card's final total is its start value, minus the expected points lost, plus
the luck of the dice (which averages 0).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess

import pytest

from fairdice.adapters import table_cache
from fairdice.analysis import analyze
from fairdice.bots import play_bots, position_of
from fairdice.edges.coachtext import EN as COACH_EN, ZH as COACH_ZH, render_analysis
from fairdice.edges.playtext import Words
from fairdice.errors import FairdiceError, NotNowError
from fairdice.game import Game, Setup
from fairdice.hint import hint
from fairdice.log import Signer, build_log, open_log
from fairdice.rules import options
from support.api_helpers import installed_command, openapi_checker, play_session, play_turn
from support import VECTORS

TABLES = table_cache.source()  # the run's cache (conftest's optimal_table builds into it), as the edges pass it
SIGNER = Signer.from_private_bytes(bytes(range(32)))
YACHT_START = 102958080485 / 2 ** 29  # SPEC §4.6: V[0][0][0] of yacht, 191.774369 points
HUMAN = {"type": "human", "name": "ann"}


@pytest.fixture(scope="module")
def yacht(optimal_table):
    return optimal_table("yacht")


# --- games played in the core ---------------------------------------------------------------------------

def _solitaire(decide, index: int = 0, rules: str = "yacht", upper_first: bool = False) -> dict:
    """A one-human game played to its end by `decide(game) -> ("roll", hold) | ("score", box)`: its signed log."""
    seed = bytes([index % 256, index // 256]) + bytes(30)
    game = Game(Setup.build(f"coach-{index}", rules, [HUMAN], upper_first=upper_first), seed)
    opened = open_log(game, SIGNER)
    game.supply_client_seed(0, f"coach {index}", player_key=None)
    while game.status == "playing":
        if game.rolls_made == 0:
            game.roll(0)
            continue
        action, arg = decide(game)
        game.roll(0, arg) if action == "roll" else game.score(0, arg)
    return build_log(opened, game, SIGNER)


def follow_the_hint(game):
    best = hint(position_of(game), TABLES)["best"]
    return ("roll", best["hold"]) if best["action"] == "roll" else ("score", best["category"])


def first_roll_first_box(game):
    """Score the first roll in the first open box (table order) the dice may go in."""
    return "score", next(iter(options(game.rules, game.card(0).boxes, game.dice, game.setup.upper_first)))


def _decisions_in(log: dict, seat: int = 0) -> list[int]:
    """Indices of the events that are decisions of `seat`: every reroll and every score (SPEC §4.7)."""
    return [i for i, e in enumerate(log["events"]) if e.get("seat") == seat and
            (e["type"] == "score" or (e["type"] == "roll" and e["roll"] > 1))]


def test_a_game_that_always_follows_the_hint_loses_nothing(yacht):
    log = _solitaire(follow_the_hint)
    seat = analyze(log, TABLES)["seats"][0]
    assert [d["event"] for d in seat["decisions"]] == _decisions_in(log)
    assert seat["total_expected_loss"] < 1e-9 and seat["mistakes"] == 0
    assert all(d["choice"] == d["best"] and d["expected_made"] == d["expected_best"] for d in seat["decisions"])
    assert seat["total"] == log["final"]["totals"][0]["total"]


def test_scoring_every_first_roll_in_the_first_open_box_loses_at_least_20_points(yacht):
    log = _solitaire(first_roll_first_box)
    seat = analyze(log, TABLES)["seats"][0]
    assert seat["total_expected_loss"] >= 20
    assert [d["kind"] for d in seat["decisions"]] == ["box"] * 12 and all(d["position"]["rolls_left"] == 2
                                                                          for d in seat["decisions"])
    for d in seat["decisions"]:
        assert d["loss"] == pytest.approx(d["expected_best"] - d["expected_made"], abs=1e-9) and d["loss"] >= 0
        assert (d["loss"] == 0) == (d["choice"] == d["best"])


def test_final_total_is_the_start_value_minus_the_loss_plus_luck_that_averages_zero(yacht):
    """Σ over a game of (what the dice added to the expected final score) has mean 0 under any play, so the mean of
    total + total_expected_loss is the table's start value (SPEC §4.6).  A loss that mis-valued choices would
    move this mean by the mis-valuation.  120 games of a poor policy: standard error about 3 points."""
    kept = [_solitaire(first_roll_first_box, i) for i in range(120)]
    sums = [s["total"] + s["total_expected_loss"] for s in (analyze(log, TABLES)["seats"][0] for log in kept)]
    se = statistics.stdev(sums) / math.sqrt(len(sums))
    assert abs(statistics.fmean(sums) - YACHT_START) < 4 * se, (statistics.fmean(sums), se)


# --- the worked example of SPEC §4.6 and §4.7 -------------------------------------------------------------

def _dice_for(rules: str, box: str, points: int) -> list[int]:
    from itertools import combinations_with_replacement
    for roll in combinations_with_replacement(range(1, 7), 5):
        if options(rules, {}, roll)[box].points == points:
            return list(roll)
    raise AssertionError((box, points))


def _hand_log(card: dict, turn_events: list[dict], rules: str = "yacht", upper_first: bool = False) -> dict:
    """A log that fills `card` one box a turn (first roll, score), then plays `turn_events` as the next turn."""
    events = [{"type": "client_seed", "seat": 0, "client_seed": "x"}, {"type": "start", "first": 0, "rolloff": []}]
    turn, total = 0, 0
    for box, points in card.items():
        if points is None:
            continue
        turn += 1
        total += points
        events.append({"type": "roll", "seat": 0, "turn": turn, "roll": 1, "hold": [],
                       "dice": _dice_for(rules, box, points)})
        events.append({"type": "score", "seat": 0, "turn": turn, "category": box, "points": points, "joker": False,
                       "yahtzee_bonus": 0, "upper_bonus": 0, "total": total})
    for e in turn_events:
        events.append({"seat": 0, "turn": turn + 1, **e})
    return {"format": "fairdice-log", "version": 3, "header": {"game_id": "hand", "rules": rules,
            "upper_first": upper_first, "seats": [HUMAN]}, "events": events,
            "final": {"status": "abandoned"}}


def test_the_worked_example_values_every_decision_as_the_vector_does(yacht):
    vector = json.loads((VECTORS / "optimal_decision.json").read_text())
    after_roll_1 = next(d for d in vector["decisions"] if d["dice"] == [1, 1, 2, 3, 5] and d["roll"] == 1)
    values = {tuple(c["keep"]): c["value"] for c in after_roll_1["candidates"] if "keep" in c}
    log = _hand_log(vector["card"], [
        {"type": "roll", "roll": 1, "hold": [], "dice": [1, 1, 2, 3, 5]},
        {"type": "roll", "roll": 2, "hold": [0], "dice": [1, 1, 2, 3, 5]},   # keeps [1]: not the best
        {"type": "roll", "roll": 3, "hold": [0, 1, 2, 3, 4], "dice": [1, 1, 2, 3, 5]},  # keeps all five
        {"type": "score", "category": "small_straight", "points": 0}])
    banked = sum(v for v in vector["card"].values() if v) + 35  # SPEC §3.1: the upper section made 63
    held, kept_all, scored = analyze(log, TABLES)["seats"][0]["decisions"][-3:]
    best = max(values.values())
    assert held["kind"] == "hold" and held["choice"]["keep"] == [1] and held["position"]["banked"] == banked == 175
    assert held["best"] == {"action": "roll", "hold": [2, 3], "keep": [2, 3]}  # the first of the tied, as §4.6
    assert held["loss"] == best - values[(1,)] and held["expected_made"] == banked + values[(1,)]
    assert held["expected_best"] == banked + best
    # a hold of all five after roll 2 is worth the roll as it stands after roll 3: R3(11235) of §4.6
    after_roll_2 = next(d for d in vector["decisions"] if d["dice"] == [1, 1, 2, 3, 5] and d["roll"] == 2)
    best_2 = max(c["value"] for c in after_roll_2["candidates"])
    assert kept_all["expected_made"] == banked + 4956196137 / 2 ** 29
    assert kept_all["loss"] == best_2 - 4956196137 / 2 ** 29 and kept_all["best"]["keep"] == [1, 2, 3]
    # after roll 3 nothing fits: 0 in small_straight leaves yacht open (worth 2.30, §4.6), 0 in yacht leaves
    # small_straight open (worth 9.23)
    assert scored["kind"] == "box" and scored["position"]["rolls_left"] == 0
    assert scored["choice"]["category"] == "small_straight" and scored["best"]["category"] == "yacht"
    assert scored["loss"] == 4956196137 / 2 ** 29 - 1235571965 / 2 ** 29


def test_a_tied_choice_loses_nothing_and_is_its_own_best(yacht):
    vector = json.loads((VECTORS / "optimal_decision.json").read_text())
    log = _hand_log(vector["card"], [{"type": "roll", "roll": 1, "hold": [], "dice": [1, 1, 2, 3, 4]},
                                     {"type": "score", "category": "small_straight", "points": 15}])
    decision = analyze(log, TABLES)["seats"][0]["decisions"][-1]
    assert decision["loss"] == 0 and decision["best"] == decision["choice"]  # tied with hold [0, 2, 3, 4] (§4.6)


# --- bots, upper_first, refusals -------------------------------------------------------------------------------

def _bot_game(bots: tuple[str, ...], index: int, rules: str = "yacht") -> dict:
    seats = [{"type": "bot", "bot": b, "name": b} for b in bots]
    game = Game(Setup.build(f"bots-{index}", rules, seats), bytes([index]) * 32)
    opened = open_log(game, SIGNER)
    game.supply_client_seed(None, f"bots {index}")
    play_bots(game, table_cache.bots())
    return build_log(opened, game, SIGNER)


def test_bot_seats_are_analysed_and_the_optimal_bot_loses_nothing(yacht):
    losses = {"greedy": [], "ev": [], "optimal": []}
    for i in range(6):
        log = _bot_game(("greedy", "ev", "optimal"), i)
        doc = analyze(log, TABLES)
        for seat in doc["seats"]:
            assert [d["event"] for d in seat["decisions"]] == _decisions_in(log, seat["seat"])
            assert seat["type"] == "bot" and seat["total"] == log["final"]["totals"][seat["seat"]]["total"]
            losses[seat["bot"]].append(seat["total_expected_loss"])
    assert losses["optimal"] == [0.0] * 6  # it always takes one of the best candidates (SPEC §4.5)
    assert min(losses["greedy"]) > 0 and min(losses["ev"]) > 0
    assert statistics.fmean(losses["greedy"]) > statistics.fmean(losses["ev"])


def test_upper_first_cannot_be_judged():
    log = _solitaire(first_roll_first_box, rules="classic13", upper_first=True)
    doc = analyze(log, TABLES)
    assert doc["available"] is False and doc["reason"] == "upper_first" and doc["seats"] == []
    assert "upper-first" in doc["detail"]
    assert "upper-first" in render_analysis(doc) and "先填上半区" in render_analysis(doc, Words("zh"))


def test_a_game_being_played_is_not_analysed():
    log = _solitaire(first_roll_first_box)
    log["final"] = None
    with pytest.raises(NotNowError) as caught:
        analyze(log, TABLES)
    assert caught.value.code == "game_not_over"


@pytest.mark.parametrize("break_it, event, field", [
    (lambda ev: ev[4].update(dice=[1, 2, 3, 4, 7]), 4, "dice"),
    (lambda ev: ev[5].update(points=ev[5]["points"] + 1), 5, "points"),
    (lambda ev: ev[5].update(category="no_such_box"), 5, "category"),
    (lambda ev: ev[4].update(hold=[3, 1]), 4, "hold"),
    (lambda ev: ev[4].update(seat=1), 4, "seat"),
    (lambda ev: ev[4].update(type="dance"), 4, "type"),
])
def test_events_that_are_not_a_game_are_refused_naming_event_and_field(yacht, break_it, event, field):
    log = _hand_log({"ones": 3}, [{"type": "roll", "roll": 1, "hold": [], "dice": [1, 1, 2, 3, 5]},
                                  {"type": "score", "category": "twos", "points": 2}])
    assert [e["type"] for e in log["events"][2:6]] == ["roll", "score", "roll", "score"]
    break_it(log["events"])
    with pytest.raises(FairdiceError) as caught:
        analyze(log, TABLES)
    assert caught.value.code == "invalid_log"
    assert (caught.value.details["event"], caught.value.details["field"]) == (event, field)


# --- the words -------------------------------------------------------------------------------------------------

def test_both_catalogues_of_the_coach_say_the_same_things():
    assert set(COACH_EN) == set(COACH_ZH)
    fields = re.compile(r"\{(\w+)")
    assert {k: set(fields.findall(v)) for k, v in COACH_EN.items()} == \
        {k: set(fields.findall(v)) for k, v in COACH_ZH.items()}


def test_the_summary_shows_the_costliest_decisions_first(yacht):
    vector = json.loads((VECTORS / "optimal_decision.json").read_text())
    doc = analyze(_hand_log(vector["card"], [
        {"type": "roll", "roll": 1, "hold": [], "dice": [1, 1, 2, 3, 5]},
        {"type": "roll", "roll": 2, "hold": [0], "dice": [1, 1, 2, 3, 5]},
        {"type": "score", "category": "yacht", "points": 0}]), TABLES)
    text = render_analysis(doc, top=20)  # the hand-made fills before turn 11 lose points too
    lines = [line for line in text.splitlines() if line.startswith("  \u2212") and "turn 11," in line]
    assert lines[0].endswith("turn 11, roll 2 of 3, dice 1 1 2 3 5: scored yacht for 0; best was to keep 1-2-3")
    assert "turn 11, roll 1 of 3, dice 1 1 2 3 5: kept 1; best was 2-3" in lines[1]
    assert float(lines[0].split()[0][1:]) > float(lines[1].split()[0][1:])
    zh = render_analysis(doc, Words("zh"), top=20)
    assert "第 11 回合第 1/3 掷，骰子 1 1 2 3 5：保留了 1；最好是保留 2-3" in zh and "在快艇记了 0 分" in zh


# --- offline and over HTTP --------------------------------------------------------------------------------------

def _human_turns(client, gid, token):
    def roll(hold):
        return client.post(f"/v1/games/{gid}/roll", json={"hold": hold}, headers={"Authorization": f"Bearer {token}"}
                           ).get_json()

    def score(category):
        return client.post(f"/v1/games/{gid}/score", json={"category": category},
                           headers={"Authorization": f"Bearer {token}"}).get_json()
    return roll, score


def _offline(tmp_path, log: dict, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / f"{log['header']['game_id']}.json"
    path.write_text(json.dumps(log))
    return subprocess.run([installed_command("fairdice"), "analyze", *args, str(path)], capture_output=True,
                          text=True, timeout=120)


def _created(client, seats, rules="yacht", **extra):
    created = client.post("/v1/games", json={"rules": rules, "seats": seats, **extra}).get_json()
    gid, token = created["game_id"], created["tokens"][0]["token"]
    state = client.post(f"/v1/games/{gid}/client-seed", json={"client_seed": "coach"},
                        headers={"Authorization": f"Bearer {token}"}).get_json()
    return gid, token, state


def test_the_server_and_the_offline_analysis_agree_to_the_last_digit(client, yacht, tmp_path):
    check = openapi_checker(client)
    finished, abandoned = [], []
    gid, token, state = _created(client, [HUMAN, {"type": "bot", "bot": "ev"}, {"type": "bot", "bot": "optimal"}])
    roll, score = _human_turns(client, gid, token)
    while state["status"] == "playing":
        state = play_turn(roll, score, state)
    finished.append(gid)
    gid, token, state = _created(client, [HUMAN, {"type": "bot", "bot": "greedy"}])
    roll, score = _human_turns(client, gid, token)
    for _ in range(4):
        state = play_turn(roll, score, state)
    roll([])
    roll([0])
    client.post(f"/v1/games/{gid}/abandon", json={}, headers={"Authorization": f"Bearer {token}"})
    abandoned.append(gid)
    for gid in finished + abandoned:
        served = client.get(f"/v1/games/{gid}/analysis")
        assert served.status_code == 200 and served.mimetype == "application/json"
        check("Analysis", served.get_json())
        run = _offline(tmp_path, client.get(f"/v1/games/{gid}/log").get_json(), "--json")
        assert run.returncode == 0, run.stderr
        offline = json.loads(run.stdout)
        assert offline == served.get_json()  # every float equal: the same binary64 values
        assert _floats(offline) == _floats(served.get_json()) and len(_floats(offline)) > 20
        human = offline["seats"][0]
        assert human["type"] == "human" and human["decision_count"] == len(_decisions_in(
            client.get(f"/v1/games/{gid}/log").get_json()))
    assert offline["status"] == "abandoned" and offline["seats"][0]["decisions"][-1]["kind"] == "hold"


def _floats(doc) -> list[str]:
    """Every number of a document as the text JSON writes it (repr: the shortest that reads back the same)."""
    if isinstance(doc, float):
        return [repr(doc)]
    if isinstance(doc, dict):
        return [x for v in doc.values() for x in _floats(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in _floats(v)]
    return []


def test_the_server_refuses_what_it_cannot_analyse(client, yacht):
    from support.api_helpers import assert_problem

    assert_problem(client.get("/v1/games/no-such-game/analysis"), 404, "game_not_found")
    gid, token, state = _created(client, [HUMAN, {"type": "bot", "bot": "ev"}])
    client.post(f"/v1/games/{gid}/roll", json={}, headers={"Authorization": f"Bearer {token}"})
    resp = client.get(f"/v1/games/{gid}/analysis")
    body = assert_problem(resp, 409, "game_not_over")
    assert resp.headers["Cache-Control"] == "no-store"
    seed_free = resp.get_data(as_text=True)
    assert not re.search(r"[0-9a-f]{64}", seed_free)  # no seed, no commitment: nothing of the dice to come
    assert body["detail"].startswith("the game is still being played")
    assert_problem(client.post(f"/v1/games/{gid}/analysis"), 405)
    gid, token, state = _created(client, [HUMAN, {"type": "bot", "bot": "ev"}], "classic13", upper_first=True)
    client.post(f"/v1/games/{gid}/abandon", json={}, headers={"Authorization": f"Bearer {token}"})
    body = assert_problem(client.get(f"/v1/games/{gid}/analysis"), 422, "analysis_unavailable")
    assert body["reason"] == "upper_first" and "upper-first" in body["detail"]


def test_the_command_line_names_file_event_and_field(tmp_path, yacht):
    log = _solitaire(first_roll_first_box)
    log["events"][6]["dice"] = [0, 1, 2, 3, 4]
    run = _offline(tmp_path, log)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (f"fairdice analyze: {tmp_path / 'coach-0.json'}: event 6: field dice: must be 5 "
                                  "integers 1..6, got [0, 1, 2, 3, 4]")
    (tmp_path / "junk.json").write_text("{not json")
    run = subprocess.run([installed_command("fairdice"), "analyze", str(tmp_path / "junk.json")], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2 and "junk.json: not a JSON log" in run.stderr and "Traceback" not in run.stderr
    log = _solitaire(first_roll_first_box, rules="classic13", upper_first=True)
    run = _offline(tmp_path, log)
    assert run.returncode == 1 and run.stdout.startswith("coach: cannot judge this game")
    run = _offline(tmp_path, _solitaire(first_roll_first_box, 1))
    assert run.returncode == 0 and "points left on the table" in run.stdout, run.stderr


@pytest.mark.e2e
def test_fairdice_play_ends_with_the_coach(app_url, yacht):
    code, out = play_session(app_url, ["r", "r 0", "q"], ["--rules", "yacht", "--bot", "ev"])
    assert code == 0, out
    assert "game abandoned" in out
    tail = out.split("game abandoned")[1]
    assert "coach (optimal engine)" in tail and re.search(r"\nyou: [\d.]+ points left on the table; \d+ of 1 ", tail)
    code, out = play_session(app_url, ["r", "r 0", "q"], ["--rules", "yacht", "--bot", "ev", "--lang", "zh"])
    assert code == 0 and "教练（optimal 引擎）" in out and re.search(r"\n你：丢掉 [\d.]+ 分", out), out
