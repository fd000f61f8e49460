"""`fairdice admin stats|prune` (issue 14, part 2) on a store made by the app: counts that agree with what the
API says the store holds, pruning of Idempotency-Key answers past FAIRDICE_IDEMPOTENCY_TTL, and one clear
line (exit 2) when there is no store to read; an administrative command never makes a database."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pytest

from api.admin import client_key, describe_stats
from api.stores.sqlite import SQLiteStore
from support.serve import QUIET
from support.serve import admin

HUMAN_AND_BOT = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]
BOTS_ONLY = [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "greedy"}]


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


def test_stats_measure_each_table(populated):
    data, _ = populated
    stats = json.loads(admin("stats", "--json", "--data-dir", str(data)).stdout)
    tables = stats["table_bytes"]
    assert {"games", "events", "idempotency", "rate_limits", "client_quotas"} <= set(tables)
    assert sum(tables.values()) <= stats["bytes"]
    people = describe_stats({**stats, "table_bytes": {"events": 3 << 20, "games": 4096}})
    assert "size by table:       events 3.0 MiB, games 4.0 KiB" in people.splitlines()


# --- one client's quota ---------------------------------------------------------------------------------------

def test_a_quota_set_by_admin_is_applied_by_a_running_app_to_that_client(tmp_path):
    """`fairdice admin quota` writes to the store; the app, another process, applies it to the next game."""
    from api import create_app

    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path), **QUIET, "FAIRDICE_MAX_UNFINISHED": "2"})
    client = app.test_client()  # REMOTE_ADDR 127.0.0.1

    def create():
        return client.post("/v1/games", json={"rules": "yacht", "seats": HUMAN_AND_BOT})

    assert [create().status_code for _ in range(3)] == [201, 201, 429]
    out = admin("quota", "--client", "127.0.0.1", "--max", "3", "--data-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["127.0.0.1: at most 3 unfinished games"]
    assert [create().status_code for _ in range(2)] == [201, 429]
    assert create().get_json()["max_unfinished"] == 3
    assert admin("quota", "--client", "127.0.0.1", "--lift", "--data-dir", str(tmp_path)).returncode == 0
    assert [create().status_code for _ in range(3)] == [201] * 3
    listed = json.loads(admin("quota", "--json", "--data-dir", str(tmp_path),
                              env={"FAIRDICE_MAX_UNFINISHED": "2"}).stdout)
    assert listed["quotas"] == {"127.0.0.1": 0} and listed["max_unfinished"] == 2
    assert admin("quota", "--client", "127.0.0.1", "--reset", "--data-dir", str(tmp_path)).returncode == 0
    refused = create()
    assert refused.status_code == 429 and refused.get_json()["max_unfinished"] == 2
    app.extensions["fairdice"].store.close()


@pytest.mark.parametrize("written, client", [
    ("203.0.113.7", "203.0.113.7"),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),  # an IPv6 client is its /64
    ("2001:db8:1:2::/64", "2001:db8:1:2::/64"),
    ("2001:DB8:1:2:ffff::/64", "2001:db8:1:2::/64"),
    ("::ffff:198.51.100.4", "198.51.100.4"),  # an IPv4-mapped address is the IPv4 one
])
def test_a_quota_names_a_client_as_the_limits_do(written, client):
    from api.limits import client_address

    assert client_key(written) == client
    if "/" not in written:
        assert client_address(written, (), ()) == client  # what the rate limits and the quota count


@pytest.mark.parametrize("written", ["not-an-address", "2001:db8::/48", "198.51.100.0/24", ""])
def test_what_is_not_a_client_is_refused(written):
    with pytest.raises(argparse.ArgumentTypeError):
        client_key(written)


@pytest.mark.parametrize("args, complaint", [
    (["--client", "2001:db8::/48", "--max", "3"], "not an IPv6 /64 network"),
    (["--max", "3"], "need --client"),
])
def test_a_quota_that_cannot_be_set_is_one_line(populated, args, complaint):
    data, _ = populated
    out = admin("quota", *args, "--data-dir", str(data))
    assert out.returncode == 2 and "Traceback" not in out.stderr and complaint in out.stderr
    store = SQLiteStore(data / "fairdice.sqlite3")
    assert store.client_quotas() == {}
    store.close()
