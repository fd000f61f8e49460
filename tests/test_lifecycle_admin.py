"""`fairdice admin stats|prune` (issue 14, part 2) on a store made by the app: counts that agree with what the
API says the store holds, pruning of Idempotency-Key answers past FAIRDICE_IDEMPOTENCY_TTL, and one clear
line (exit 2) when there is no store to read; an administrative command never makes a database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_api_helpers import REPO
from test_serve_slow import QUIET

HUMAN_AND_BOT = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]
BOTS_ONLY = [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "greedy"}]


def admin(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairdice", "admin", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **QUIET, **(env or {})})


@pytest.fixture
def populated(tmp_path):
    """A data directory with 3 unfinished games (2 keyed moves each) and 1 finished: (dir, what the API says)."""
    from api import create_app

    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path), **QUIET})
    client = app.test_client()
    ids = []
    for i in range(3):
        created = client.post("/v1/games", json={"rules": "yacht", "seats": HUMAN_AND_BOT}).get_json()
        auth = {"Authorization": f"Bearer {created['tokens'][0]['token']}"}
        for action, body in (("client-seed", {"client_seed": f"seed {i}"}), ("roll", {"hold": []})):
            answer = client.post(f"/v1/games/{created['game_id']}/{action}", json=body,
                                 headers={**auth, "Idempotency-Key": f"{action}-{i}"})
            assert answer.status_code == 200, answer.get_json()
        ids.append(created["game_id"])
    created = client.post("/v1/games", json={"rules": "yacht", "seats": BOTS_ONLY}).get_json()
    done = client.post(f"/v1/games/{created['game_id']}/client-seed", json={"client_seed": "bots"},
                       headers={"Authorization": f"Bearer {created['tokens'][0]['token']}"}).get_json()
    assert done["status"] == "finished"
    ids.append(created["game_id"])
    events = sum(len(client.get(f"/v1/games/{gid}/log").get_json()["events"]) for gid in ids)
    app.extensions["fairdice"].store.close()
    return tmp_path, {"games": 4, "unfinished": 3, "events": events, "idempotency_records": 6}


def test_stats_counts_what_the_api_shows(populated):
    data, expected = populated
    out = admin("stats", "--json", "--data-dir", str(data))
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)
    assert {k: stats[k] for k in expected} == expected
    assert stats["backend"] == "sqlite" and stats["database"] == str(data / "fairdice.sqlite3")
    assert stats["bytes"] >= (data / "fairdice.sqlite3").stat().st_size > 0


def test_stats_for_people(populated):
    data, expected = populated
    out = admin("stats", "--data-dir", str(data))
    assert out.returncode == 0, out.stderr
    assert "games:               4 (3 unfinished)" in out.stdout
    assert f"events:              {expected['events']}" in out.stdout
    assert "idempotency answers: 6" in out.stdout


def test_prune_deletes_the_answers_past_their_ttl(populated):
    data, _ = populated
    kept = admin("prune", "--json", "--data-dir", str(data))  # the default TTL is a day: nothing is old enough
    assert kept.returncode == 0, kept.stderr
    assert json.loads(kept.stdout)["idempotency_records"] == 0
    time.sleep(1.1)  # the store keeps whole seconds: "older than 0 s" is from the second before
    pruned = admin("prune", "--json", "--data-dir", str(data), env={"FAIRDICE_IDEMPOTENCY_TTL": "0"})
    assert pruned.returncode == 0, pruned.stderr
    report = json.loads(pruned.stdout)
    assert report["idempotency_records"] == 6 and report["idempotency_ttl"] == 0
    assert report["wal_bytes"] == 0
    after = json.loads(admin("stats", "--json", "--data-dir", str(data)).stdout)
    assert after["idempotency_records"] == 0 and after["games"] == 4  # games are never pruned


def test_prune_for_people(populated):
    data, _ = populated
    time.sleep(1.1)
    out = admin("prune", "--data-dir", str(data), env={"FAIRDICE_IDEMPOTENCY_TTL": "0"})
    assert out.returncode == 0, out.stderr
    assert "deleted 6 idempotency answers" in out.stdout and "FAIRDICE_IDEMPOTENCY_TTL=0 s" in out.stdout


@pytest.mark.parametrize("action", ["stats", "prune"])
def test_no_database_is_one_line_and_none_is_made(tmp_path, action):
    out = admin(action, "--data-dir", str(tmp_path / "var"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.splitlines() == [f"fairdice admin {action}: no database at {tmp_path / 'var' / 'fairdice.sqlite3'} "
                                       f"(fairdice serve makes it; --data-dir or --db names another)"]
    assert not (tmp_path / "var").exists()


def test_an_unreachable_postgresql_server_is_one_line(tmp_path):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = admin("stats", "--db", f"postgresql://fairdice:hunter2@127.0.0.1:{port}/fairdice")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1 and "PostgreSQL" in out.stderr and "hunter2" not in out.stderr


def test_a_corrupt_database_is_one_line(tmp_path):
    Path(tmp_path / "fairdice.sqlite3").write_bytes(b"not sqlite" * 500)
    out = admin("stats", "--data-dir", str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.splitlines()) == 1 and "not a database" in out.stderr
