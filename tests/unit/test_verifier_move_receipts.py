"""`fairdice-verify --receipts FILE LOG`: the final log is held to the server's signed receipts of every move
(SPEC §5.6). The receipts are made by the core (fairdice.log), checked by the verifier's own chain code."""

from __future__ import annotations

import copy
import json
import random

import pytest

from fairdice.game import Game, Setup
from fairdice.log import build_log, move_receipt, open_log
from support.verifier_support import PUBLIC_HEX, SIGNER, play_randomly, resign, write
from verifier.chain import MoveReceiptError, chain_digests, load_move_receipts
from verifier.cli import main


def played(game_id="chain-game", server_seed=bytes(range(32))) -> tuple[dict, list[dict]]:
    """A finished game of a human against a bot, and the move receipt the server gave after each command."""
    setup = Setup.build(game_id, "yacht", [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}])
    game = Game(setup, server_seed=server_seed)
    opened = open_log(game, SIGNER)
    receipts = []

    def keep(*_):
        receipts.append(move_receipt(SIGNER, opened["header"], list(game.events)))

    game.supply_client_seed(0, "ann's seed")
    keep()
    play_randomly(game, random.Random(3), on_options=keep)
    keep()
    return build_log(opened, game, SIGNER), receipts


@pytest.fixture(scope="module")
def game():
    return played()


def verify(capsys, tmp_path, log, receipts) -> tuple[int, str]:
    code = main(["--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX)), "--receipts",
                 str(write(tmp_path, "receipts.json", json.dumps(receipts))), str(write(tmp_path, "log.json", log))])
    return code, capsys.readouterr().out


def test_the_chain_is_the_cores(game):
    log, receipts = game
    digests = chain_digests(log["header"], log["events"])
    assert len({rc["events"] for rc in receipts}) > 10
    assert all(digests[rc["events"]].hex() == rc["chain"] for rc in receipts)


def test_the_genuine_log_matches_every_move_receipt(capsys, tmp_path, game):
    code, out = verify(capsys, tmp_path, *game)
    assert code == 0, out


def test_a_rewritten_move_departs_from_its_receipt(capsys, tmp_path, game):
    """The operator rewrites an answered roll (and everything after it), re-signing the log: every receipt
    from that roll on departs; the log alone cannot show it."""
    log, receipts = game
    forged = copy.deepcopy(log)
    i = next(k for k, e in enumerate(forged["events"]) if e["type"] == "roll" and e["seat"] == 0)
    forged["events"][i]["hold"] = [0] if forged["events"][i]["hold"] != [0] else []
    forged = resign(forged)
    code = main(["--json", "--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX)), "--receipts",
                 str(write(tmp_path, "receipts.json", json.dumps(receipts))), str(write(tmp_path, "log.json", forged))])
    failures = json.loads(capsys.readouterr().out)["games"][0]["failures"]
    departed = [f["field"] for f in failures if f["check"] == "receipt.chain"]
    expected = [f"receipts[{k}].chain" for k, rc in enumerate(receipts) if rc["events"] > i]
    assert code == 1 and departed[:10] == expected[:10] and len(expected) > 3  # (10 listed per check)


def test_a_log_shorter_than_what_the_server_acknowledged(capsys, tmp_path, game):
    log, receipts = game
    cut = resign({**log, "events": log["events"][:-5]})
    code, out = verify(capsys, tmp_path, cut, receipts)
    assert code == 1 and "(the server acknowledged more)" in out


def test_receipts_of_another_game_or_another_key(capsys, tmp_path, game):
    log, _ = game
    _, other = played("another-game", bytes(range(1, 33)))
    code, out = verify(capsys, tmp_path, log, other[:3])
    assert code == 1 and "field receipts[0].game_id" in out
    _, receipts = game
    forged = [{**rc, "signature": SIGNER.sign(b"something else")} for rc in receipts[:2]]
    code, out = verify(capsys, tmp_path, log, forged)
    assert code == 1 and "field receipts[0].signature" in out


@pytest.mark.parametrize("content, problem", [
    ('{"game_id": "x"}', "a JSON array"),
    ('[{"game_id": "x", "events": 1}]', "exactly the fields"),
    ('[{"game_id": "x", "events": 1, "chain": "00", "key_id": "00", "signature": "00"}]', ".chain"),
    ('[1, 1, 1] [', "not JSON"),
])
def test_an_unusable_receipts_file_is_a_usage_error(capsys, tmp_path, game, content, problem):
    path = tmp_path / "receipts.json"
    path.write_text(content)
    with pytest.raises(MoveReceiptError, match=problem):
        load_move_receipts(str(path))
    assert main(["--receipts", str(path), str(write(tmp_path, "log.json", game[0]))]) == 2
    assert problem in capsys.readouterr().err
