"""fairdice.edges.client and `fairdice play` against the API served on a loopback port (in a thread)."""

from __future__ import annotations

import itertools
import json

import pytest
import requests
from requests.adapters import HTTPAdapter

from fairdice.edges import play as play_mod
from fairdice.edges.client import ApiResponseError, Client, VerificationError, verify_log
from fairdice.rules import RULESETS
from support.api_helpers import play_out, play_session
from support.verifier_support import PUBLIC_HEX, resign
from verifier.cli import main as verifier_main


pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def url(app_url, optimal_table):
    optimal_table("yacht")  # the hints are asked in yacht games
    return app_url


def test_a_whole_game_and_its_log(url):
    api = Client(url)
    assert api.health() == {"status": "ok"}
    assert [r["id"] for r in api.rules()] == list(RULESETS)
    game = api.new_game("classic13", bot="ev", name="ann", first="random")
    state = game.join()
    assert len(game.client_seed) == 32 and state["status"] == "playing"
    state = play_out(game)
    assert state["status"] == "finished" and state["final"]["server_seed"]
    result = game.verify()  # a log that fails a check raises
    assert result.checked_by == ["verifier"]
    receipt = game.receipt  # kept when the seed was sent: what this player saw and said
    assert receipt["game_id"] == game.game_id and receipt["seat"] == 0 and receipt["client_seed"] == game.client_seed
    assert receipt["header"] == game.created["header"] and receipt["commitment"] == game.commitment
    # the verdict is held to the receipt: a log that does not carry this seat's seed fails
    game.receipt = {**receipt, "client_seed": "what the player never sent"}
    with pytest.raises(VerificationError) as failed:
        game.verify()
    assert failed.value.check == "receipt.match"
    assert any(p.startswith("receipt.match: event 0 client_seed") for p in failed.value.problems)


def test_refusals_raise_api_error(url):
    api = Client(url)
    game = api.new_game("yatzy", bot="greedy")
    with pytest.raises(ApiResponseError) as err:
        game.roll()
    assert err.value.status == 409 and err.value.code == "not_playing"
    game.join("my seed")
    game.roll()
    with pytest.raises(ApiResponseError) as err:
        game.score("yahtzee")
    assert err.value.status == 422 and err.value.code == "unknown_category" and "yatzy" in err.value.allowed
    with pytest.raises(ApiResponseError) as err:
        api.state("no-such-game")
    assert err.value.status == 404
    with pytest.raises(ApiResponseError) as err:
        api.create_game("yacht", [{"type": "bot", "bot": "nobody"}])
    assert err.value.code == "unknown_bot"
    state = game.abandon()
    assert state["status"] == "abandoned"
    game.verify()


def test_hint(url):
    api = Client(url)
    game = api.new_game("yacht", bot="ev")
    with pytest.raises(ApiResponseError) as err:
        game.hint()
    assert err.value.status == 409 and err.value.code == "not_playing"
    game.join()
    advice = game.hint()
    assert advice["game_id"] == game.game_id and advice["seat"] == game.seat
    # before the first roll: roll all five, worth yacht's optimal start value (test_optimal's published 191.77)
    assert advice["best"] == {"action": "roll", "hold": [], "keep": [], "value": pytest.approx(191.7744, abs=1e-3),
                              "loss": 0.0}
    state = game.roll()
    advice = api.hint(game.game_id)
    assert advice["dice"] == state["dice"] and advice["roll"] == 1
    assert advice["best"] == advice["alternatives"][0] and advice["engine"] == "optimal"
    with pytest.raises(ApiResponseError) as err:
        api.hint("no-such-game")
    assert err.value.status == 404
    game.abandon()


class LoseFirstAnswer(HTTPAdapter):
    """Delivers each POST to the server, then pretends the connection dropped (once per request)."""

    def __init__(self):
        super().__init__()
        self.dropped = set()

    def send(self, request, **kwargs):
        response = super().send(request, **kwargs)
        key = request.headers.get("Idempotency-Key")
        if request.method == "POST" and key and key not in self.dropped:
            self.dropped.add(key)
            raise requests.ConnectionError("connection reset after the server answered")
        return response


def test_lost_answers_are_retried_without_a_second_roll(url):
    session = requests.Session()
    adapter = LoseFirstAnswer()
    session.mount("http://", adapter)
    api = Client(url, session=session, backoff=0.0)
    game = api.new_game("classic13", bot="ev")
    game.join()
    state = game.roll()
    assert state["rolls_made"] == 1
    state = game.roll([0, 1])
    assert state["rolls_made"] == 2
    plain = Client(url)
    events = plain.state(game.game_id)["events"]
    assert [e["roll"] for e in events if e["type"] == "roll"] == [1, 2]
    assert len(adapter.dropped) == 3  # client seed, two rolls: each delivered twice, applied once


def test_verify_log_catches_tampering(url):
    api = Client(url)
    game = api.new_game("yacht", bot=None)
    game.join()
    play_out(game)
    log = game.log()
    key = api.keys()[0]["public_key"]
    verify_log(log, key)

    def broken(change):
        doc = json.loads(json.dumps(log))
        change(doc)
        return lambda: verify_log(doc, key)

    def dice(doc):
        roll = next(e for e in doc["events"] if e["type"] == "roll")
        roll["dice"] = [1, 2, 3, 4, 5] if roll["dice"] != [1, 2, 3, 4, 5] else [2, 3, 4, 5, 6]

    def total(doc):
        doc["final"]["totals"][0]["total"] += 1

    def unsigned(doc):
        del doc["signature"]

    def seed(doc):
        doc["final"]["server_seed"] = "00" * 32

    def header(doc):
        doc["header"]["rules"] = "yatzy"

    def failed(verify):
        """The ids of the checks a verification fails (it must raise)."""
        with pytest.raises(VerificationError) as refused:
            verify()
        assert refused.value.check == refused.value.problems[0].split(":")[0]
        return set(refused.value.checks)

    # each change is named by the check it breaks: with the signature left stale, and re-signed by the
    # operator (who holds the key), when only the replay can tell
    for change, check in ((dice, "roll.dice"), (total, "final.totals"), (seed, "seed.commitment"),
                          (header, "score.category")):
        assert check in failed(broken(change)), change.__name__
        doc = json.loads(json.dumps(log))
        change(doc)
        resigned = failed(lambda: verify_log(resign(doc), PUBLIC_HEX))
        assert check in resigned and not resigned & {"sig.commitment", "sig.final", "log.key"}, (change.__name__,
                                                                                                 resigned)
    assert "sig.final" in failed(broken(unsigned))
    assert "log.key" in failed(lambda: verify_log(log, "11" * 32))
    assert "log.format" in failed(lambda: verify_log({"format": "something else"}))


def test_check_commitment_refuses_a_foreign_key(url):
    api = Client(url)
    game = api.new_game("yacht", bot="ev")
    game.created["header"] = {**game.created["header"], "public_key": "22" * 32}
    with pytest.raises(ValueError):
        game.join()


# --- fairdice play ------------------------------------------------------------------------------

def session(url, lines, **extra):
    argv = []
    for name, value in extra.items():
        argv += ["--" + name.replace("_", "-")] + ([] if value is True else [str(value)])
    return play_session(url, lines, argv)


def test_play_a_whole_game_in_the_terminal(url, tmp_path):
    lines = ["?", "c", "r 0", "x", "s"]
    for category in RULESETS["yacht"].category_ids:  # yacht has no forced joker: every box in turn is legal
        lines += ["r", "r 0 1", f"s {category}"]
    saved, receipt = tmp_path / "game.json", tmp_path / "receipt.json"
    code, out = session(url, lines, rules="yacht", bot="greedy", save_log=str(saved), save_receipt=str(receipt),
                        client_seed="terminal")
    assert code == 0, out
    assert f"your receipt: {receipt}" in out
    assert json.loads(receipt.read_text())["client_seed"] == "terminal"
    assert verifier_main(["--receipt", str(receipt), str(saved)]) == 0
    assert "the server committed to its seed" in out and "your client seed: terminal" in out
    assert "commands:" in out and "refused:" in out and "unknown command 'x'" in out
    assert "dice " in out and "options:" in out and "greedy bot rolled" in out
    assert "server seed revealed:" in out and "log verified" in out
    log = json.loads(saved.read_text())
    assert log["final"]["status"] == "finished" and log["header"]["rules"] == "yacht"
    final, names = log["final"], [seat["name"] for seat in log["header"]["seats"]]
    said = "a draw" if final["draw"] else "you win" if final["winner"] == 0 else f"{names[final['winner']]} wins"
    assert said in out and "you wins" not in out  # the result the log says, in English
    seeds = [e for e in log["events"] if e["type"] == "client_seed"]
    assert [(e["seat"], e["client_seed"]) for e in seeds] == [(0, "terminal")]
    assert isinstance(seeds[0]["player_key"], str) and isinstance(seeds[0]["player_signature"], str)  # signed


def test_play_hint_command(url):
    code, out = session(url, ["h", "r", "hint", "q"], rules="yacht", bot="ev", client_seed="hints")
    assert code == 0, out
    assert "type ? for help, h for a hint" in out
    first, second = out.split("hint (optimal engine; values: expected final score)")[1:3]
    best = first.splitlines()[1].split()
    assert best[:5] == ["best", "roll", "all", "five", "r"]  # before the first roll: roll
    assert float(best[5]) == pytest.approx(191.77, abs=0.01)
    rows = list(itertools.takewhile(lambda line: line.strip() and not line.strip().startswith("("),
                                    second.splitlines()[1:]))
    assert rows[0].split()[0] == "best" and 2 <= len(rows) <= 1 + play_mod.HINT_ALTERNATIVES
    values = [float(row.split()[-1]) for row in rows[:1]] + [float(row.split()[-2]) for row in rows[1:]]
    assert values == sorted(values, reverse=True)  # best first, each with its expected final score
    assert all(row.split()[-1].startswith("-") for row in rows[1:])  # and how much less than the best
    assert all(" r" in row or " s " in row for row in rows)  # the command that plays it
    assert "more alternatives" in second and "game abandoned" in out


def test_play_prefixes_quit_and_eof(url):
    code, out = session(url, ["r", "s f", "s full", "q"], rules="classic13", bot="ev", first="1")
    assert code == 0
    assert "ambiguous: fours, fives, four_of_a_kind, full_house" in out  # classic13's boxes that start with f
    assert "full_house:" in out and "game abandoned" in out and "server seed revealed" in out
    assert out.index("ev bot rolled") < out.index("your turn 1")  # first=1: the bot played first
    code, out = session(url, ["r"], rules="yatzy", bot="ev")  # input ends: the game is abandoned
    assert code == 0 and "game abandoned" in out and "log verified" in out


def test_play_without_a_server_or_with_an_unknown_bot(url):
    code, out = session("http://127.0.0.1:9", [], rules="yacht")
    assert code == 2 and "fairdice serve" in out
    code, out = session(url, [], rules="yacht", bot="oracle")
    assert code == 2 and "unknown bot 'oracle'" in out
