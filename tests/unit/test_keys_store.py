"""Keys over a real store: games played through the service (api.games.Games over a SQLiteStore) before and
after a rotation verify with `fairdice-verify --pubkey` of the key they were signed with, and a server that
would lose a key that stored games need refuses to start (`open_keyring`) naming the file."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api import create_app
from api.config import settings
from api.games import Games
from api.keys import KeyFileError, open_keyring
from api.store import SQLiteStore
from fairdice.edges.cli import main as fairdice
from support.api_helpers import openapi_checker, play_turn
from verifier.cli import main as verify

HUMAN_AND_BOT = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]
BOTS_ONLY = [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "greedy"}]
HEX_KEY = "cd" * 32


@pytest.fixture
def conf(tmp_path):
    return settings({"data_dir": str(tmp_path / "data")}, environ={})


@pytest.fixture
def store(conf):
    store = SQLiteStore(conf.db)
    yield store
    store.close()


def server(conf, store, environ=None) -> Games:
    """What a server start does with the keys: the ring `open_keyring` gives, under the game service."""
    return Games(store, open_keyring(conf, store, environ={} if environ is None else environ))


def finished_game(games: Games) -> str:
    """A bot game played to the end: its id."""
    created = games.create("yacht", BOTS_ONLY)
    reply = games.client_seed(created["game_id"], created["tokens"][0]["token"], "a seed")
    assert json.loads(reply.body)["status"] == "finished"
    return created["game_id"]


def started_game(games: Games) -> tuple[str, str]:
    """A human-and-bot game with its client seed in and a first roll made: (game id, token)."""
    created = games.create("yacht", HUMAN_AND_BOT)
    game_id, token = created["game_id"], created["tokens"][0]["token"]
    games.client_seed(game_id, token, "ann's seed")
    games.roll(game_id, token, [])
    return game_id, token


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def verdict(capsys, log: Path, pubkey: Path) -> tuple[int, str]:
    code = verify(["--pubkey", str(pubkey), str(log)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def rotate(conf, capsys) -> str:
    assert fairdice(["keys", "rotate", "--key-dir", str(conf.key_dir)]) == 0
    return capsys.readouterr().out.strip()


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# --- rotation ----------------------------------------------------------------------------------------

def test_rotation_keeps_old_logs_verifiable_with_the_old_key(tmp_path, conf, store, capsys):
    before = server(conf, store)
    old_log = write(tmp_path / "old.json", before.log(finished_game(before)))
    old_key = write(tmp_path / "old.pub", before.keys.signer.public_key.hex())
    new_id = rotate(conf, capsys)
    after = server(conf, store)  # the restart
    assert after.keys.key_id == new_id != before.keys.key_id
    new_log = write(tmp_path / "new.json", after.log(finished_game(after)))
    new_key = write(tmp_path / "new.pub", after.keys.signer.public_key.hex())
    assert json.loads(new_log.read_text())["header"]["key_id"] == new_id
    assert verdict(capsys, old_log, old_key)[0] == 0
    assert verdict(capsys, new_log, new_key)[0] == 0
    code, out = verdict(capsys, old_log, new_key)  # the check can fail: the new key did not sign the old log
    assert code == 1 and "log.key" in out
    published = write(tmp_path / "keys.json", json.dumps({"keys": after.keys.public_keys()}))
    assert verdict(capsys, old_log, published)[0] == verdict(capsys, new_log, published)[0] == 0


def test_a_game_started_before_a_rotation_finishes_with_its_own_key(tmp_path, conf, store, capsys):
    before = server(conf, store)
    old_id = before.keys.key_id
    game_id, token = started_game(before)
    rotate(conf, capsys)
    after = server(conf, store)
    assert after.keys.key_id != old_id

    def roll(hold):
        state = json.loads(after.roll(game_id, token, hold).body)
        assert state["receipt"]["key_id"] == old_id  # every move receipt too
        return state

    def score(category):
        return json.loads(after.score(game_id, token, category).body)

    state = json.loads(after.state(game_id))
    while state["status"] == "playing":
        state = play_turn(roll, score, state)
    assert state["status"] == "finished"
    log = json.loads(after.log(game_id))
    assert log["header"]["key_id"] == old_id
    log_file = write(tmp_path / "log.json", json.dumps(log))
    assert verdict(capsys, log_file, write(tmp_path / "old.pub", before.keys.signer.public_key.hex()))[0] == 0
    code, out = verdict(capsys, log_file, write(tmp_path / "new.pub", after.keys.signer.public_key.hex()))
    assert code == 1 and "log.key" in out
    assert after.create("yacht", HUMAN_AND_BOT)["key_id"] == after.keys.key_id  # new games: the new key


def test_v1_keys_publishes_every_key_with_its_date_the_current_one_first(tmp_path, capsys):
    data = str(tmp_path / "data")
    first = create_app({"FAIRDICE_DATA_DIR": data}).test_client().get("/v1/keys").get_json()["keys"]
    new_id = rotate(settings({"data_dir": data}, environ={}), capsys)
    client = create_app({"FAIRDICE_DATA_DIR": data}).test_client()
    document = client.get("/v1/keys").get_json()
    openapi_checker(client)("KeyList", document)
    keys = document["keys"]
    assert [(k["key_id"], k["current"]) for k in keys] == [(new_id, True), (first[0]["key_id"], False)]
    assert keys[1]["public_key"] == first[0]["public_key"]
    for key in keys:
        assert key["key_id"] == hashlib.sha256(bytes.fromhex(key["public_key"])).hexdigest()[:16]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", key["created"])


# --- start-up refusals -------------------------------------------------------------------------------

def refusal(conf, store, environ=None) -> str:
    with pytest.raises(KeyFileError) as info:
        open_keyring(conf, store, environ={} if environ is None else environ)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_fresh_store_gets_its_keys(conf, store):
    games = server(conf, store)
    assert sorted(tree(conf.key_dir)) == ["seed-encryption.key", "signing-ed25519.pem"]
    assert finished_game(games)


def test_a_deleted_signing_key_with_games_in_the_store_is_refused_naming_the_file(conf, store):
    finished_game(server(conf, store))
    (conf.key_dir / "signing-ed25519.pem").unlink()
    left = tree(conf.key_dir)
    message = refusal(conf, store)
    assert message.startswith(f"{conf.key_dir / 'signing-ed25519.pem'} is missing: games in the store were signed")
    assert tree(conf.key_dir) == left  # no key made in its place


def test_a_replaced_signing_key_is_refused(conf, store):
    lost = server(conf, store)
    finished_game(lost)
    other = Ed25519PrivateKey.generate()
    (conf.key_dir / "signing-ed25519.pem").write_bytes(other.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    other_id = hashlib.sha256(other.public_key().public_bytes_raw()).hexdigest()[:16]
    message = refusal(conf, store)
    assert message.startswith(f"{conf.key_dir / 'signing'}/<YYYYMMDDTHHMMSSZ>-{lost.keys.key_id}.pem is missing "
                              f"(signing-ed25519.pem holds key {other_id}, not this one): games in the store")


def test_a_deleted_rotated_key_with_unfinished_games_under_it_is_refused(conf, store, capsys):
    server(conf, store)
    rotate(conf, capsys)
    games = server(conf, store)
    started_game(games)
    lost = next((conf.key_dir / "signing").glob(f"*-{games.keys.key_id}.pem"))
    lost.unlink()
    assert str(lost.parent / f"<YYYYMMDDTHHMMSSZ>-{games.keys.key_id}.pem") in refusal(conf, store)


def test_a_deleted_key_directory_with_games_is_refused(conf, store):
    import shutil

    finished_game(server(conf, store))
    shutil.rmtree(conf.key_dir)
    assert refusal(conf, store).startswith(f"{conf.key_dir / 'signing-ed25519.pem'} is missing")
    assert not conf.key_dir.exists()


def test_a_deleted_seed_key_with_unfinished_games_is_refused(conf, store):
    games = server(conf, store)
    started_game(games)
    started_game(games)
    finished_game(games)
    seed_file = conf.key_dir / "seed-encryption.key"
    seed_file.unlink()
    assert refusal(conf, store) == (f"seed encryption key file {seed_file} is missing: 2 unfinished games were "
                                    f"sealed with it; restore it from a backup, or point FAIRDICE_SEED_KEY_FILE "
                                    f"at it")
    assert not seed_file.exists()


def test_a_replaced_seed_key_with_unfinished_games_is_refused_showing_no_key(conf, store):
    games = server(conf, store)
    game_id, _ = started_game(games)
    seed_file = conf.key_dir / "seed-encryption.key"
    original = seed_file.read_bytes()
    seed_file.write_bytes(os.urandom(32))
    replaced = seed_file.read_bytes()
    message = refusal(conf, store)
    assert message.startswith(f"the seed encryption key from file {seed_file} does not open the sealed seeds of "
                              f"unfinished games (1 of the 1 checked, e.g. game {game_id}): 1 unfinished game was "
                              f"sealed with another key")
    for secret in (original, replaced):
        assert secret.hex() not in message.lower()
    seed_file.write_bytes(original)
    assert open_keyring(conf, store, environ={}).seed_box  # the right key back: it starts


def test_a_lost_seed_key_is_made_anew_when_no_unfinished_game_needs_it(conf, store):
    games = server(conf, store)
    done = finished_game(games)
    seed_file = conf.key_dir / "seed-encryption.key"
    old = seed_file.read_bytes()
    seed_file.unlink()
    again = server(conf, store)
    assert seed_file.read_bytes() != old and oct(seed_file.stat().st_mode & 0o777) == "0o600"
    assert json.loads(again.log(done)) == json.loads(games.log(done))
    assert finished_game(again)


def test_the_environment_seed_key_seals_games_and_no_file_is_written(conf, store):
    env = {"FAIRDICE_SEED_KEY": HEX_KEY}
    games = server(conf, store, env)
    game_id, token = started_game(games)
    assert sorted(tree(conf.key_dir)) == ["signing-ed25519.pem"]
    again = server(conf, store, env)  # a restart with the same variable opens the seeds
    assert json.loads(again.roll(game_id, token, []).body)["rolls_made"] == 2
    assert refusal(conf, store) == (f"seed encryption key file {conf.key_dir / 'seed-encryption.key'} is missing: "
                                    f"1 unfinished game was sealed with it; restore it from a backup, or point "
                                    f"FAIRDICE_SEED_KEY_FILE at it")
    message = refusal(conf, store, {"FAIRDICE_SEED_KEY": "ef" * 32})
    assert "FAIRDICE_SEED_KEY environment variable does not open" in message and "ef" * 8 not in message
    assert sorted(tree(conf.key_dir)) == ["signing-ed25519.pem"]


def test_a_seed_key_file_outside_the_data_directory(tmp_path, store):
    outside = tmp_path / "secrets" / "seed.key"
    conf = settings({"data_dir": str(tmp_path / "data"), "seed_key_file": str(outside)}, environ={})
    games = server(conf, store)
    started_game(games)
    assert len(outside.read_bytes()) == 32 and not (conf.key_dir / "seed-encryption.key").exists()
    outside.unlink()
    assert refusal(conf, store).startswith(f"seed encryption key file {outside} is missing: 1 unfinished game")


@pytest.mark.e2e
@pytest.mark.parametrize("lost", ["signing-ed25519.pem", "seed-encryption.key"])
def test_fairdice_serve_refuses_to_start_without_a_key_games_need(tmp_path, conf, store, lost):
    import signal
    import subprocess
    import sys

    started_game(server(conf, store))
    store.close()
    (conf.key_dir / lost).unlink()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRDICE_") or k == "FAIRDICE_CACHE_DIR"}
    proc = subprocess.Popen([sys.executable, "-m", "fairdice", "serve", "--data-dir", str(conf.data_dir), "--port", "0",
                             "--workers", "1", "--tables", "lazy"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("fairdice serve started although a key that games need is missing")
    assert proc.returncode == 2, err
    assert str(conf.key_dir / lost) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert not (conf.key_dir / lost).exists()
