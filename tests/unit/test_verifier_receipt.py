"""`fairdice-verify --receipt`: the log is held to what the player kept when it sent its client seed (SPEC §5.5).

Against the operator, who can re-sign any log: a log re-derived from a new server seed, or with the player's
client seed swapped for one the server chose, verifies on its own; only the player's receipt shows it."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from fairdice.game import Game, Setup
from fairdice.log import build_log, open_log
from support.verifier_support import PUBLIC_HEX, SIGNER, play_randomly, resign, write
from verifier.cli import main
from verifier.receipt import ReceiptError, check_receipt, make_receipt

SEED_OF = {0: "ann's own words", 2: "cho's own words"}


def play(server_seed: bytes, seeds=SEED_OF, game_id="receipt-game") -> tuple[dict, dict]:
    """A finished two-human game (seats 0 and 2) against a greedy bot: (log, {seat: receipt})."""
    setup = Setup.build(game_id, "yacht", [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"},
                                           {"type": "human", "name": "cho"}])
    game = Game(setup, server_seed=server_seed)
    opened = open_log(game, SIGNER)
    salts = {seat: hashlib.sha256(f"salt of seat {seat}".encode()).hexdigest() for seat in seeds}
    for seat, seed in seeds.items():  # two humans: commit, then reveal (SPEC §4.3)
        game.commit_client_seed(seat, hashlib.sha256(bytes.fromhex(salts[seat]) + seed.encode()).hexdigest())
    for seat, seed in seeds.items():
        game.supply_client_seed(seat, seed, salts[seat])
    play_randomly(game, random.Random(7))
    log = build_log(opened, game, SIGNER)
    receipts = {seat: make_receipt(opened["header"], opened["commitment_signature"], seat, SEED_OF[seat])
                for seat in seeds}
    return log, receipts


@pytest.fixture(scope="module")
def game():
    return play(bytes(range(100, 132)))


def verify(capsys, tmp_path, logs: list[dict], receipts: list[dict], *extra) -> tuple[int, str]:
    paths = [str(write(tmp_path, f"log{i}.json", log)) for i, log in enumerate(logs)]
    args = [a for i, rc in enumerate(receipts) for a in ("--receipt", str(write(tmp_path, f"r{i}.json", rc)))]
    code = main([*args, *extra, *paths])
    return code, capsys.readouterr().out


def test_the_genuine_log_matches_every_players_receipt(capsys, tmp_path, game):
    log, receipts = game
    code, out = verify(capsys, tmp_path, [log], list(receipts.values()))
    assert code == 0, out
    assert "matches the receipt" in out and "trusted key" in out  # the receipt's key is the trusted one


def test_four_fields_are_a_receipt_enough(capsys, tmp_path, game):
    log, receipts = game
    short = {k: receipts[2][k] for k in ("game_id", "seat", "commitment", "client_seed")}
    code, out = verify(capsys, tmp_path, [log], [short], "--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX)))
    assert code == 0, out


def test_a_new_server_seed_chosen_after_the_client_seeds_fails_the_receipt(capsys, tmp_path, game):
    _, receipts = game
    forged, _ = play(bytes(range(200, 232)))  # the operator re-derived the whole game and re-signed it all
    code, out = verify(capsys, tmp_path, [forged], [receipts[0]], "--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX)))
    assert code == 1 and "receipt.match  event -  field commitment" in out
    code, out = verify(capsys, tmp_path, [forged], [], "--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX)))
    assert code == 0  # without the receipt nothing can tell: why the page and the clients keep one


def test_a_swapped_client_seed_fails_the_receipt(capsys, tmp_path, game):
    _, receipts = game
    forged, _ = play(bytes(range(100, 132)), seeds={0: "the server's choice", 2: SEED_OF[2]})
    code, out = verify(capsys, tmp_path, [forged], [receipts[0]])
    # event 2: the two commitments come first, then seat 0's reveal (SPEC §4.3)
    assert code == 1 and "receipt.match  event 2  field client_seed" in out
    code, out = verify(capsys, tmp_path, [forged], [receipts[2]])
    assert code == 0, out  # the other player's seed was left alone: its receipt has nothing to object


def test_a_receipt_of_another_game(capsys, tmp_path, game):
    log, receipts = game
    other, _ = play(bytes(range(100, 132)), game_id="another-game")
    code, out = verify(capsys, tmp_path, [other], [receipts[0]])
    assert code == 1 and "receipt.match  event -  field game_id" in out
    # a batch: each receipt applies to the log of its game, and a receipt whose game is missing fails
    code, out = verify(capsys, tmp_path, [other, log], [receipts[0]])
    assert code == 0, out
    code, out = verify(capsys, tmp_path, [other, other], [receipts[0]])
    assert code == 1 and "no log of this receipt's game" in out


def test_a_log_signed_by_another_key_than_the_receipts(capsys, tmp_path, game):
    from fairdice.log import Signer
    log, receipts = game
    code, out = verify(capsys, tmp_path, [resign(log, Signer.from_private_bytes(bytes(32)))], [receipts[0]])
    assert code == 1 and "log.key" in out


@pytest.mark.parametrize("change, problem", [
    (lambda rc: rc.pop("client_seed"), "client_seed: missing"),
    (lambda rc: rc.update(tip="x"), "tip: no such field"),
    (lambda rc: rc.update(seat="0"), "seat:"),
    (lambda rc: rc.update(commitment="AB" * 32), "commitment:"),
    (lambda rc: rc.update(version=3), "format/version"),
    (lambda rc: rc.update(version=2), "log_version: missing"),
    (lambda rc: rc["header"].update(rules="yatzy"), "commitment_signature: not a valid signature"),
    (lambda rc: rc.update(game_id="elsewhere"), "header.game_id: differs"),
])
def test_an_unusable_receipt_is_a_usage_error_naming_the_field(capsys, tmp_path, game, change, problem):
    log, receipts = game
    rc = json.loads(json.dumps(receipts[0]))
    change(rc)
    with pytest.raises(ReceiptError, match=problem.split(":")[0]):
        check_receipt(rc)
    path = write(tmp_path, "bad-receipt.json", rc)
    code = main(["--receipt", str(path), str(write(tmp_path, "log.json", log))])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and problem in err


def test_a_receipt_that_is_not_json_is_a_usage_error(capsys, tmp_path, game):
    log, _ = game
    path = tmp_path / "r.json"
    path.write_text('{"game_id": "a", "game_id": "b"}')
    assert main(["--receipt", str(path), str(write(tmp_path, "log.json", log))]) == 2
    assert "the key \"game_id\" twice" in capsys.readouterr().err
