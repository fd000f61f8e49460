"""fairdice-verify and log version 3 (SPEC §4.3, §5.3, §5.5, §5.7, §7, §7.1): the players' own signatures
(player.signature), receipts of version 2, unsigned abandons held to the player's move receipts, one key per
signature, and the audit's equivocation and unsigned-abandon tests.

The games are played by the core (fairdice.game) with each human's key on its "device" (fairdice.players); the
operator's attempts are made here as the operator would make them, holding the server's key but not the players'."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairdice.chain import Chain
from fairdice.game import Game
from fairdice.log import Signer, build_log, move_receipt
from fairdice.players import PlayerKey, command_of
from support.verifier_support import PUBLIC_HEX, SIGNER, resign, write
from verifier.cli import main
from verifier.receipt import ReceiptError, check_receipt
from verifier.results import CHECKS
from support.verifier_support import ANN, BOB, GREEDY, played, Table
from support import REPO as ROOT



def human_ahead_at_own_turn(game: Game) -> bool:
    """The moment a dishonest operator would like to end a game of ann (seat 0) against a bot: her turn begins
    and she leads."""
    return game.turn >= 3 and game.current_seat == 0 and game.rolls_made == 0 and \
        game.totals(0).total > game.totals(1).total


def cut_while_ahead(game_id="v3-cut", rng_seed=2, **kw) -> Table:
    for attempt in range(50):
        table = Table(f"{game_id}-{attempt}", [ANN, GREEDY], **kw)
        table.join()
        table.play(random.Random(rng_seed + attempt), until=lambda g: human_ahead_at_own_turn(g) or g.turn > 5)
        if table.game.status == "playing" and human_ahead_at_own_turn(table.game):
            return table
    raise AssertionError("ann never led at the start of her turn")


def sign_again(doc: dict, seat: int, key: PlayerKey, only_last: bool = False) -> dict:
    """The operator's (or, only_last, a player's) rewrite: the seat's events signed with `key` over the history
    as it now stands (the chain written out with the core's fairdice.chain), the seat's key replaced by it; then
    the log signed again by the server's key."""
    doc = copy.deepcopy(doc)
    head, events = doc["header"], doc["events"]
    mine = [n for n, e in enumerate(events) if e.get("seat") == seat and "player_signature" in e]
    chain = Chain.start(head)
    for n, ev in enumerate(events):
        if n in mine and (not only_last or n == mine[-1]):
            if "player_key" in ev:
                ev["player_key"] = key.public_hex
            ev["player_signature"] = key.sign(head["game_id"], n, chain.digest, command_of(ev))
        chain = chain.extend([ev])
    return resign(doc)


def as_version_2(doc: dict) -> dict:
    """A version 3 log rewritten as version 2, the players' keys and signatures dropped, and signed again."""
    doc = copy.deepcopy(doc)
    doc["version"] = 2
    for ev in doc["events"]:
        ev.pop("player_key", None)
        ev.pop("player_signature", None)
    return resign(doc)


def verify(capsys, tmp_path, log, receipt=None, receipts=None, pubkey=True, extra=()) -> tuple[int, dict, str]:
    """fairdice-verify --json on one log: (exit code, the game's JSON result, the text lines on stderr)."""
    args = ["--json", *extra]
    if pubkey:
        args += ["--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX))]
    if receipt is not None:
        args += ["--receipt", str(write(tmp_path, "receipt.json", receipt))]
    if receipts is not None:
        args += ["--receipts", str(write(tmp_path, "receipts.json", receipts))]
    code = main(args + [str(write(tmp_path, "log.json", log))])
    captured = capsys.readouterr()
    return code, json.loads(captured.out)["games"][0], captured.err


def failed(game: dict) -> set[str]:
    return {f["check"] for f in game["failures"]} | set(game["unlisted_failures"])


@pytest.fixture(scope="module")
def genuine() -> Table:
    return played()


# ------------------------------------------------------------------ the genuine game

def test_the_check_id_is_listed_where_the_checks_are():
    assert CHECKS[-1] == "player.signature"


def test_a_genuine_version_3_game_verifies_with_its_receipts(capsys, tmp_path, genuine):
    log = genuine.log()
    assert log["version"] == 3 and all("player_signature" in e for e in log["events"] if e.get("seat") == 0)
    code, game, text = verify(capsys, tmp_path, log, genuine.receipt(0), genuine.move_receipts)
    assert code == 0, game["failures"]
    assert game["checks"]["player.signature"] == game["checks"]["receipt.match"] == "pass"
    assert game["unsigned_seats"] == [] and game["warnings"] == [] and "WARNING" not in text


def test_a_game_of_two_signing_humans_with_commitments_verifies(capsys, tmp_path):
    table = played("v3-duo", (ANN, GREEDY, BOB), rng_seed=4)
    log = table.log()
    assert any(e["type"] == "client_seed_commit" and e["player_key"] for e in log["events"])
    for seat in (0, 2):
        code, game, _ = verify(capsys, tmp_path, log, table.receipt(seat), table.move_receipts)
        assert code == 0 and game["checks"]["player.signature"] == "pass", game["failures"]


def test_a_reveal_must_name_its_commitments_key(capsys, tmp_path):
    """The operator swaps bob's key in his reveal for one of its own, re-signing bob's events with it: the
    commitment promised the first key (SPEC §4.3), so the reveal fails client_seed.commit."""
    table = played("v3-duo-key", (ANN, GREEDY, BOB), rng_seed=5)
    log = table.log()
    reveal = next(n for n, e in enumerate(log["events"]) if e["type"] == "client_seed" and e["seat"] == 2)
    operator = PlayerKey.generate()
    forged = sign_again(log, 2, operator)
    forged["events"][next(n for n, e in enumerate(forged["events"]) if e["type"] == "client_seed_commit"
                          and e["seat"] == 2)]["player_key"] = table.keys[2].public_hex
    forged = sign_again(forged, 2, operator, only_last=True)  # (the commitment keeps bob's key)
    code, game, _ = verify(capsys, tmp_path, forged)
    assert code == 1
    assert {"check": "client_seed.commit", "event": reveal, "field": "player_key"}.items() <= \
        next(f for f in game["failures"] if f["check"] == "client_seed.commit").items()


def test_only_the_last_signature_of_a_seat_is_checked_it_vouches_for_the_others(capsys, tmp_path, genuine):
    """SPEC §5.7: one Ed25519 check per seat, of its last event. A player who signed its last move over a history
    in which an earlier signature of its own is garbage vouched for that history: the log verifies. (A verifier
    that checked every signature would fail it.)"""
    log = copy.deepcopy(genuine.log())
    earlier = next(n for n, e in enumerate(log["events"]) if e.get("seat") == 0 and e["type"] == "roll")
    log["events"][earlier]["player_signature"] = "ab" * 64
    code, game, _ = verify(capsys, tmp_path, sign_again(log, 0, genuine.keys[0], only_last=True))
    assert code == 0, game["failures"]


def test_a_changed_earlier_event_breaks_the_last_signature(capsys, tmp_path, genuine):
    log = genuine.log()
    earlier = next(n for n, e in enumerate(log["events"]) if e.get("seat") == 0 and e["type"] == "roll")
    forged = copy.deepcopy(log)
    forged["events"][earlier]["player_signature"] = "ab" * 64  # nothing else changes: the chain does
    code, game, _ = verify(capsys, tmp_path, resign(forged))
    last = max(n for n, e in enumerate(log["events"]) if e.get("seat") == 0)
    assert code == 1 and failed(game) == {"player.signature"}
    assert [(f["event"], f["field"]) for f in game["failures"]] == [(last, "player_signature")]


# ------------------------------------------------------------------ the operator's attempts

@pytest.fixture(scope="module")
def cut() -> Table:
    return cut_while_ahead()


@pytest.mark.parametrize("signature", ["null", "another event's", "the operator's key"])
def test_an_abandon_written_in_the_players_name_fails(capsys, tmp_path, cut, signature):
    """The game is cut as ann's turn begins while she leads, {"abandon", seat 0, "player"} appended and the log
    re-signed by the server's key: whatever it puts in player_signature, it cannot make ann's."""
    log = cut.log()
    events = log["events"]
    n = len(events)
    abandon = {"type": "abandon", "seat": 0, "reason": "player"}
    if signature == "null":
        abandon["player_signature"] = None
    elif signature == "another event's":
        abandon["player_signature"] = next(e["player_signature"] for e in reversed(events) if e.get("seat") == 0)
    else:
        chain = Chain.start(log["header"]).extend(events)
        abandon["player_signature"] = PlayerKey.generate().sign(log["header"]["game_id"], n, chain.digest, abandon)
    game_over = Game.restore(cut.game.setup, cut.server_seed, events + [abandon], log["header"])
    forged = resign({**log, "events": events + [abandon], "final": build_log(cut.opened, game_over)["final"]})
    code, game, _ = verify(capsys, tmp_path, forged, cut.receipt(0), cut.move_receipts)
    assert code == 1 and "player.signature" in failed(game), game["failures"]
    assert any(f["check"] == "player.signature" and f["event"] == n for f in game["failures"])


def test_a_human_move_with_another_moves_signature_fails(capsys, tmp_path, genuine):
    log = copy.deepcopy(genuine.log())
    mine = [n for n, e in enumerate(log["events"]) if e.get("seat") == 0 and e["type"] == "score"]
    log["events"][mine[-1]]["player_signature"] = log["events"][mine[-2]]["player_signature"]
    code, game, _ = verify(capsys, tmp_path, resign(log))
    assert code == 1 and failed(game) == {"player.signature"}


def test_a_replaced_player_key_passes_only_without_the_players_receipt(capsys, tmp_path, genuine):
    """The operator replaces ann's key with one of its own and signs all her events again with it: the log is
    self-consistent, but her receipt names her key, with which her signatures are checked."""
    forged = sign_again(genuine.log(), 0, PlayerKey.generate())
    code, game, _ = verify(capsys, tmp_path, forged)
    assert code == 0, game["failures"]
    code, game, _ = verify(capsys, tmp_path, forged, genuine.receipt(0))
    assert code == 1 and {"receipt.match", "player.signature"} <= failed(game)
    assert any(f["check"] == "receipt.match" and f["field"] == "player_key" for f in game["failures"])


def test_a_replaced_player_key_with_the_original_signatures_fails(capsys, tmp_path, genuine):
    log = copy.deepcopy(genuine.log())
    seed_event = next(e for e in log["events"] if e["type"] == "client_seed")
    seed_event["player_key"] = PlayerKey.generate().public_hex
    code, game, _ = verify(capsys, tmp_path, resign(log))
    assert code == 1 and failed(game) == {"player.signature"}


def test_a_version_3_game_re_signed_as_version_2_fails_the_receipt_of_version_2(capsys, tmp_path, genuine):
    downgraded = as_version_2(genuine.log())
    code, game, text = verify(capsys, tmp_path, downgraded)
    assert code == 0 and game["unsigned_seats"] == [0] and "operator could have written" in text
    code, game, _ = verify(capsys, tmp_path, downgraded, genuine.receipt(0))
    assert code == 1 and failed(game) == {"receipt.match"}
    assert [(f["field"], f["expected"], f["found"]) for f in game["failures"]] == [("version", 3, 2)]
    code, game, _ = verify(capsys, tmp_path, downgraded, genuine.receipt(0, receipt_version=1))
    assert code == 0  # a receipt of version 1 records no log version: it cannot tell


def test_a_seat_without_a_key_signs_nothing(capsys, tmp_path):
    table = played("v3-no-key", unsigned=(0,))
    log = table.log()
    assert all(e.get("player_signature", None) is None for e in log["events"])
    code, game, text = verify(capsys, tmp_path, log, table.receipt(0))
    assert code == 0 and game["checks"]["player.signature"] == "pass"
    assert game["unsigned_seats"] == [0] and "operator could have written them" in game["warnings"][0]
    forged = copy.deepcopy(log)  # a signature where the seat has no key
    last = max(n for n, e in enumerate(forged["events"]) if e.get("seat") == 0)
    forged["events"][last]["player_signature"] = "ab" * 64
    code, game, _ = verify(capsys, tmp_path, resign(forged))
    assert code == 1 and [(f["check"], f["event"]) for f in game["failures"]] == [("player.signature", last)]


# ------------------------------------------------------------------ plain warnings

@pytest.mark.parametrize("version", [1, 2])
def test_every_verdict_on_unsigned_human_moves_says_so(capsys, tmp_path, version):
    log = played(f"v{version}-warned", version=version).log()
    code, game, text = verify(capsys, tmp_path, log)
    assert code == 0 and game["unsigned_seats"] == [0]
    assert f"log version {version} has no players' signatures" in game["warnings"][0]
    assert "WARNING: the moves of human seat 0 are NOT signed" in text
    assert "1 with human moves the players did not sign" in text
    main(["--pubkey", str(write(tmp_path, "k.pub", PUBLIC_HEX)), str(write(tmp_path, "log.json", log))])
    assert "operator could have written them" in capsys.readouterr().out  # (the text output, without --json)


def test_a_game_of_bots_has_no_warning(capsys, tmp_path):
    log = played("bots-only", (GREEDY, GREEDY)).log()
    code, game, text = verify(capsys, tmp_path, log)
    assert code == 0 and game["warnings"] == [] and "WARNING" not in text


# ------------------------------------------------------------------ receipts of version 2

def test_a_receipt_of_version_2_is_well_formed():
    table = Table("receipts", [ANN, GREEDY])
    good = table.receipt(0)
    assert good["version"] == 2 and good["log_version"] == 3 and good["player_key"] == table.keys[0].public_hex
    for change, problem in [({"player_key": "AB" * 32}, "player_key"), ({"log_version": 4}, "log_version"),
                            ({"log_version": 2}, "player_key: a game of log version 2"),
                            ({"version": 1}, "log_version: no such field in a receipt of version 1")]:
        with pytest.raises(ReceiptError, match=problem):
            check_receipt({**good, **change})
    without = dict(good)
    del without["player_key"]
    with pytest.raises(ReceiptError, match="player_key: missing"):
        check_receipt(without)


def test_a_receipt_of_version_2_matches_a_version_2_log(capsys, tmp_path):
    table = played("v2-receipt", version=2)
    assert table.receipt(0)["player_key"] is None
    code, game, _ = verify(capsys, tmp_path, table.log(), table.receipt(0))
    assert code == 0, game["failures"]
    code, game, _ = verify(capsys, tmp_path, table.log(), {**table.receipt(0), "log_version": 1})
    assert code == 1 and failed(game) == {"receipt.match"}


# ------------------------------------------------------------------ unsigned abandons and move receipts

def framed(version: int, **kw) -> tuple[Table, dict]:
    """A game cut at ann's turn while she leads and abandoned in her name, unsigned (version 2, or a version 3
    seat without a key), with the move receipts the server answered before: those ann holds."""
    table = cut_while_ahead(f"framed-v{version}", version=version, **kw)
    held = list(table.move_receipts)
    table.abandon(0)
    table.move_receipts = held
    return table, table.log()


@pytest.mark.parametrize("version, unsigned", [(2, ()), (3, (0,))])
def test_an_unsigned_abandon_needs_a_move_receipt_of_it(capsys, tmp_path, version, unsigned):
    table, log = framed(version, unsigned=unsigned)
    abandon = len(log["events"]) - 1
    code, game, _ = verify(capsys, tmp_path, log, receipts=table.move_receipts)
    assert code == 1 and failed(game) == {"game.abandon"}
    f = game["failures"][0]
    assert f["event"] == abandon and "you hold no receipt of this abandon" in f["found"]
    code, game, _ = verify(capsys, tmp_path, log, table.receipt(0), table.move_receipts)  # her seat by her receipt
    assert code == 1 and failed(game) == {"game.abandon"}
    acknowledged = table.move_receipts + [move_receipt(SIGNER, log["header"], log["events"])]
    code, game, _ = verify(capsys, tmp_path, log, receipts=acknowledged)
    assert code == 0, game["failures"]
    code, game, _ = verify(capsys, tmp_path, log)  # without move receipts there is nothing to hold it to
    assert code == 0 and "operator could have written them" in game["warnings"][0]


def test_a_version_1_abandon_is_held_to_the_move_receipts_too(capsys, tmp_path):
    table, log = framed(1)
    code, game, _ = verify(capsys, tmp_path, log, receipts=table.move_receipts)
    assert code == 1 and failed(game) == {"game.abandon"}


def test_a_signed_abandon_needs_no_move_receipt(capsys, tmp_path):
    table, log = framed(3)
    assert log["events"][-1]["player_signature"]
    code, game, _ = verify(capsys, tmp_path, log, table.receipt(0), table.move_receipts)
    assert code == 0, game["failures"]


def test_with_several_humans_and_no_players_receipt_no_seat_is_the_players(capsys, tmp_path):
    table = Table("v2-two-humans", [ANN, BOB], version=2)
    table.join()
    table.play(random.Random(3), until=lambda g: g.turn >= 2 and g.rolls_made == 0)
    held = list(table.move_receipts)
    table.abandon(table.game.current_seat)
    code, game, _ = verify(capsys, tmp_path, table.log(), receipts=held)
    assert code == 0, game["failures"]
    code, game, _ = verify(capsys, tmp_path, table.log(), table.receipt(table.game.abandoned_by), held)
    assert code == 1 and failed(game) == {"game.abandon"}


# ------------------------------------------------------------------ one key per signature

def test_a_receipt_naming_no_trusted_key_fails_without_a_verification(capsys, tmp_path, genuine):
    bogus = [{**genuine.move_receipts[3], "key_id": "0" * 16}]
    code, game, _ = verify(capsys, tmp_path, genuine.log(), receipts=bogus)
    assert code == 1 and [(f["check"], f["field"]) for f in game["failures"]] == [("receipt.chain",
                                                                                    "receipts[0].key_id")]


def test_a_log_whose_key_id_names_no_trusted_key_fails_its_signatures(capsys, tmp_path, genuine):
    log = copy.deepcopy(genuine.log())
    log["header"]["key_id"] = "0" * 16
    log["commitment_signature"] = SIGNER.sign(json.dumps(log["header"], sort_keys=True, separators=(",", ":"))
                                              .encode())
    log.pop("signature")
    log["signature"] = SIGNER.sign(json.dumps(log, sort_keys=True, separators=(",", ":")).encode())
    code, game, _ = verify(capsys, tmp_path, log)
    assert code == 1 and {"log.key", "sig.commitment", "sig.final"} <= failed(game)


@pytest.mark.timeout(120)
def test_many_trusted_keys_and_many_bogus_receipts_answer_in_seconds(tmp_path, genuine):
    """SPEC §7: 12,000 trusted keys and 2,000 receipts cost 2,000 verifications at most (the issue found the CLI
    still running after 300 s with 600). Half the receipts name random key ids (no verification at all), half the
    server's (one verification each, failing)."""
    rng = random.Random(12)
    keys = [{"public_key": rng.randbytes(32).hex()} for _ in range(12_000)] + [{"public_key": PUBLIC_HEX}]
    (tmp_path / "keys.json").write_text(json.dumps({"keys": keys}, separators=(",", ":")))
    game_id = genuine.head["game_id"]
    receipts = [{"game_id": game_id, "events": 1, "chain": rng.randbytes(32).hex(),
                 "key_id": rng.randbytes(8).hex() if i % 2 else SIGNER.key_id, "signature": rng.randbytes(64).hex()}
                for i in range(2_000)]
    (tmp_path / "receipts.json").write_text(json.dumps(receipts))
    write(tmp_path, "log.json", genuine.log())
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "verifier", "--pubkey", str(tmp_path / "keys.json"), "--receipts",
                           str(tmp_path / "receipts.json"), "--jobs", "1", str(tmp_path / "log.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, env={**os.environ})
    elapsed = time.monotonic() - start
    assert done.returncode == 1 and "receipt.chain" in done.stdout, done.stderr[-2000:]
    assert "... and 1990 more receipt.chain failures" in done.stdout
    assert elapsed < 10, elapsed


# ------------------------------------------------------------------ the audit

def audit(capsys, *args) -> tuple[int, dict]:
    code = main(["--json", "--audit", "--no-check-bots", "--jobs", "1", *map(str, args)])
    return code, json.loads(capsys.readouterr().out)["audit"]


def test_two_signed_logs_of_one_game_that_differ_are_equivocation(capsys, tmp_path, genuine):
    log = genuine.log()
    cut_short = Game.restore(genuine.game.setup, genuine.server_seed, log["events"][:20], log["header"])
    cut_short.abandon(None, "timeout")
    other = build_log(genuine.opened, cut_short, SIGNER)
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs, "a.json", log)
    write(logs, "b.json", log)
    pubkey = write(tmp_path, "k.pub", PUBLIC_HEX)
    code, rep = audit(capsys, "--pubkey", pubkey, logs)  # (the copies' faces count twice: the exit code may say so)
    assert rep["equivocation"] == [] and rep["duplicate_files"]  # identical copies: a note
    assert not any("equivocation" in f for f in rep["findings"])
    write(logs, "b.json", other)
    code, rep = audit(capsys, "--pubkey", pubkey, logs)
    assert code == 1 and rep["equivocation"] == [{"game_id": log["header"]["game_id"], "histories": 2,
                                                  "files": [str(logs / "a.json"), str(logs / "b.json")]}]
    assert any(f.startswith("log.equivocation") for f in rep["findings"]) and rep["duplicate_files"] == []
    code, rep = audit(capsys, logs)  # without a trusted key: two histories signed by one key
    assert code == 1 and len(rep["equivocation"]) == 1
    write(logs, "b.json", resign(other, signer=Signer.from_private_bytes(bytes(range(1, 33)))))
    code, rep = audit(capsys, logs)  # ... but a log signed by some other key is nobody's equivocation
    assert rep["equivocation"] == []


def abandoned_while_ahead(directory: Path, version: int, games: int, unsigned: tuple) -> None:
    """Games of ann against the greedy bot, each abandoned in ann's name as her turn begins while she leads."""
    for g in range(games):
        table = cut_while_ahead(f"sel-v{version}-{g}", rng_seed=100 * g, version=version, unsigned=unsigned)
        table.abandon(0)
        write(directory, f"g{g}.json", table.log())


@pytest.mark.parametrize("version, unsigned", [(2, ()), (3, (0,)), (3, ())])
def test_the_selective_abandon_test_counts_every_unsigned_abandon(capsys, tmp_path, version, unsigned):
    """Version 2, or a version 3 seat without a key: abandons in ann's name are unsigned, the operator could have
    written them: all with a human ahead, a finding. Version 3 with her key: ann signed them; they are her own and
    left out."""
    counted = version == 2 or bool(unsigned)
    games = 25 if counted else 6  # (a human leads at about 0.7 of all moments of these games: 0.7^25 < 0.001)
    abandoned_while_ahead(tmp_path, version, games, unsigned)
    code, rep = audit(capsys, tmp_path)
    test = rep["abandons"]["selective"]
    if counted:
        assert test["unsigned_abandons"] == test["bot_behind"] == games and test["by"] == {"seat": games}
        assert test["verdict"] == "SELECTIVE" and code == 1
        assert any("unsigned abandons" in f and "in a player's name, unsigned" in f for f in rep["findings"])
    else:
        assert test["unsigned_abandons"] == 0 and test["verdict"] == "too few unsigned abandons" and code == 0
        assert [row["signed"] for row in rep["abandons"]["games"]] == [True]
    main(["--audit", "--no-check-bots", "--jobs", "1", str(tmp_path)])
    assert "unsigned abandons (the server's, and those in a player's name that no player signed" in \
        capsys.readouterr().out
