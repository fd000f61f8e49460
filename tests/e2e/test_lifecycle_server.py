"""Data upkeep in a real `fairdice serve` (issue 14, part 2): every worker's api.lifecycle.Maintenance abandons
idle games as the server (reason "timeout", signed and revealed: the log verifies with `fairdice-verify`
against the published keys), leaves games that are being played alone, forgets Idempotency-Key answers
after FAIRDICE_IDEMPOTENCY_TTL, and cuts the SQLite WAL back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import requests

from support.api_helpers import REPO, ServeProcess, installed_command
from support.serve import QUIET

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AGAINST_A_BOT = {"rules": "yacht", "seats": [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]}


@pytest.fixture(scope="module")
def hasty(tmp_path_factory):
    """Games are abandoned after 2 s without a move; maintenance every second."""
    proc = ServeProcess(tmp_path_factory.mktemp("hasty"), workers=2, threads=2,
                        extra_env={**QUIET, "FAIRDICE_ABANDON_TIMEOUT": "2", "FAIRDICE_MAINTENANCE_INTERVAL": "1"})
    yield proc.start()
    proc.stop()


@pytest.fixture(scope="module")
def forgetful(tmp_path_factory):
    """Idempotency-Key answers kept 3 s; maintenance every second; the default (a day) for abandoning."""
    proc = ServeProcess(tmp_path_factory.mktemp("forgetful"), workers=2, threads=2,
                        extra_env={**QUIET, "FAIRDICE_IDEMPOTENCY_TTL": "3", "FAIRDICE_MAINTENANCE_INTERVAL": "1"})
    yield proc.start()
    proc.stop()


class Player:
    def __init__(self, server: ServeProcess, body: dict = AGAINST_A_BOT):
        self.url = server.url
        created = requests.post(self.url + "/v1/games", json=body, timeout=10)
        assert created.status_code == 201, created.text
        self.game_id = created.json()["game_id"]
        self.auth = {"Authorization": f"Bearer {created.json()['tokens'][0]['token']}"}

    def move(self, action: str, body: dict, key: str | None = None) -> dict:
        headers = {**self.auth, **({"Idempotency-Key": key} if key else {})}
        answer = requests.post(f"{self.url}/v1/games/{self.game_id}/{action}", json=body, headers=headers, timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def state(self) -> dict:
        return requests.get(f"{self.url}/v1/games/{self.game_id}", timeout=10).json()

    def log(self) -> dict:
        return requests.get(f"{self.url}/v1/games/{self.game_id}/log", timeout=10).json()


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s: {what}")


def verify(server: ServeProcess, log: dict, tmp_path) -> dict:
    """`fairdice-verify --pubkey <the server's /v1/keys>` on the log: its JSON report (exit 0 required)."""
    keys, path = tmp_path / "keys.json", tmp_path / "log.json"
    keys.write_text(requests.get(server.url + "/v1/keys", timeout=10).text)
    path.write_text(json.dumps(log))
    out = subprocess.run([installed_command("fairdice-verify"), "--pubkey", str(keys), "--json", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.mark.parametrize("moves", [0, 2], ids=["just created", "after its first roll"])
def test_an_idle_game_is_abandoned_by_the_server_and_its_log_verifies(hasty, tmp_path, moves):
    player = Player(hasty)
    if moves:
        player.move("client-seed", {"client_seed": "lifecycle"})
        player.move("roll", {"hold": []})
    assert player.state()["status"] != "abandoned"
    wait_for(lambda: player.state()["status"] == "abandoned", 15, "the idle game abandoned")
    log = player.log()
    assert log["events"][-1] == {"type": "abandon", "seat": None, "reason": "timeout"}
    assert sum(event["type"] == "abandon" for event in log["events"]) == 1  # one worker's, not one per worker
    assert log["final"]["status"] == "abandoned" and log["signature"]
    report = verify(hasty, log, tmp_path)
    assert report["summary"]["ok"] == report["summary"]["games"] == 1 and report["trusted_key"] is True


def test_a_game_being_played_is_left_alone(hasty):
    """Moves every 0.6 s for 6 s: three abandon timeouts, but never 2 s without a move."""
    player = Player(hasty)
    state = player.move("client-seed", {"client_seed": "busy"})
    ended = time.monotonic() + 6
    while time.monotonic() < ended:
        time.sleep(0.6)
        if state["rolls_left"]:
            state = player.move("roll", {"hold": []})
        else:
            state = player.move("score", {"category": next(iter(state["options"]))})
        assert state["status"] == "playing", state["status"]


def admin(server: ServeProcess, action: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "fairdice", "admin", action, "--json", "--data-dir",
                          str(server.data_dir)], cwd=REPO, capture_output=True, text=True, timeout=60,
                         env={**os.environ, **QUIET})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_idempotency_answers_are_forgotten_after_their_ttl(forgetful):
    before = admin(forgetful, "stats")["idempotency_records"]
    player = Player(forgetful)
    player.move("client-seed", {"client_seed": "keyed"}, key="seed-1")
    player.move("roll", {"hold": []}, key="roll-1")
    assert admin(forgetful, "stats")["idempotency_records"] >= before + 2  # (kept 3 s: still there)
    wait_for(lambda: admin(forgetful, "stats")["idempotency_records"] == 0, 15, "the answers pruned")


def test_the_wal_is_cut_back(forgetful):
    wal = forgetful.data_dir / "fairdice.sqlite3-wal"
    for _ in range(40):  # each a few pages of WAL
        player = Player(forgetful)
        player.move("client-seed", {"client_seed": "wal"})
    assert wal.stat().st_size > 100_000
    wait_for(lambda: wal.stat().st_size == 0, 15, "the WAL truncated")
