"""End to end on PostgreSQL: three `fairdice serve` processes on one database, as behind a load balancer.

Games are played through all three (every request to a server picked at random: no sticky sessions), one
server is killed with SIGKILL (master and workers) while it answers requests, and every game still
finishes on the two that are left: every command carries an Idempotency-Key, so a request cut off by the
kill is retried on another server without being applied twice.  Every acknowledged event is in the final
log in its place, and every log verifies with `fairdice-verify --pubkey` against the key the three
servers share (one key directory).
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
import requests

from support.api_helpers import ServeProcess, best_option, choose_hold, installed_command

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LINE_UPS = {"yacht": [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}],
            "yatzy": [{"type": "bot", "bot": "greedy"}, {"type": "human", "name": "bo"}],
            "classic13": [{"type": "bot", "bot": "ev"}, {"type": "human", "name": "cy"}]}


class Cluster:
    """The servers as a client behind a load balancer sees them: each request goes to a random one, and
    one that does not answer (or answers 503) is tried again on another, with the same Idempotency-Key."""

    def __init__(self, servers: list[ServeProcess]):
        self.servers = servers
        self.lock = threading.Lock()
        self.answered = [0] * len(servers)   # successful answers per server
        self.in_flight = [0] * len(servers)  # requests being answered right now, per server
        self.retried = 0

    def call(self, method, path, body=None, token=None, key=None) -> dict:
        headers = {"Idempotency-Key": key} if key else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            i = random.randrange(len(self.servers))
            with self.lock:
                self.in_flight[i] += 1
            try:
                resp = requests.request(method, self.servers[i].url + path, json=body, headers=headers, timeout=20)
            except (requests.ConnectionError, requests.Timeout):
                resp = None
            finally:
                with self.lock:
                    self.in_flight[i] -= 1
            if resp is None or resp.status_code == 503:
                with self.lock:
                    self.retried += 1
                time.sleep(0.02)
                continue
            assert resp.status_code < 300, (self.servers[i].url, resp.status_code, resp.text)
            with self.lock:
                self.answered[i] += 1
            return resp.json()
        raise AssertionError(f"no server answered {method} {path} within 60 s")


def play(cluster: Cluster, rules: str) -> tuple[dict, dict, list[dict]]:
    """One game to the end through the cluster: (created, final state, every acknowledged answer)."""
    created = cluster.call("POST", "/v1/games", {"rules": rules, "seats": LINE_UPS[rules], "first": "random"})
    gid, tokens = created["game_id"], {t["seat"]: t["token"] for t in created["tokens"]}
    answers = []

    def move(action, body, seat):
        answers.append(cluster.call("POST", f"/v1/games/{gid}/{action}", body, tokens[seat], uuid.uuid4().hex))
        return answers[-1]

    for seat in tokens:
        state = move("client-seed", {"client_seed": f"seat {seat} {uuid.uuid4().hex}"}, seat)
    while state["status"] == "playing":
        seat = state["current_seat"]
        state = move("roll", {"hold": []}, seat)
        while state["rolls_left"] and len(choose_hold(state["dice"])) < 5:
            state = move("roll", {"hold": choose_hold(state["dice"])}, seat)
        state = move("score", {"category": best_option(state)}, seat)
    return created, state, answers


def kill_while_answering(cluster: Cluster, victim: int, after: int, done) -> dict:
    """SIGKILL server `victim` once `after` requests were answered in all, at a moment it has requests in
    flight; what was seen then."""
    deadline = time.monotonic() + 60
    while sum(cluster.answered) < after and time.monotonic() < deadline and not done():
        time.sleep(0.005)
    while cluster.in_flight[victim] == 0 and time.monotonic() < deadline and not done():
        time.sleep(0.0005)
    in_flight, answered = cluster.in_flight[victim], list(cluster.answered)
    cluster.servers[victim].kill()
    return {"in_flight": in_flight, "answered": answered}


def test_three_servers_on_one_database_survive_losing_one(database_url, tmp_path):
    keys = tmp_path / "keys"  # one key directory for all: they sign with one key
    servers = [ServeProcess(tmp_path / f"server-{i}", workers=2, threads=2,
                            args=["--db", database_url, "--key-dir", str(keys)]) for i in range(3)]
    try:
        with ThreadPoolExecutor(3) as pool:  # starting together: the schema and the keys are made once
            list(pool.map(ServeProcess.start, servers))
        cluster = Cluster(servers)
        games = list(LINE_UPS) * 2
        with ThreadPoolExecutor(len(games)) as pool:
            played = [pool.submit(play, cluster, rules) for rules in games]
            at_kill = kill_while_answering(cluster, victim=2, after=60, done=lambda: all(f.done() for f in played))
            results = [f.result(timeout=240) for f in played]
        survivors = servers[:2]
        assert all(n > 0 for n in at_kill["answered"]) and at_kill["in_flight"] > 0, at_kill  # killed under load
        assert sum(at_kill["answered"]) < sum(cluster.answered), "the games were over before the kill"
        assert cluster.retried > 0  # some requests met the dead server and went elsewhere

        logs_dir = tmp_path / "logs"
        logs_dir.mkdir()
        for created, final, answers in results:
            assert final["status"] == "finished"
            text = requests.get(f"{random.choice(survivors).url}/v1/games/{created['game_id']}/log", timeout=10).text
            log = json.loads(text)
            assert log["header"] == created["header"] and log["final"] == final["final"]
            for answer in answers:  # every acknowledged event is in the final log, in its place
                start = answer["events_from"]
                assert log["events"][start:start + len(answer["events"])] == answer["events"]
            (logs_dir / f"{created['game_id']}.json").write_text(text)
        published = [requests.get(s.url + "/v1/keys", timeout=5).text for s in survivors]
        assert published[0] == published[1]
        verify_with_cli(published[0], logs_dir, expected=len(games), tmp_path=tmp_path)
        for server in servers:
            assert urlsplit(database_url).password not in server.log_text()  # the URL is shown without it
            assert not list(server.data_dir.glob("*.sqlite3*"))  # nothing kept on the server itself
    finally:
        for server in servers:
            server.kill()


def verify_with_cli(keys_json: str, logs_dir, expected: int, tmp_path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(keys_json)
    out = subprocess.run([installed_command("fairdice-verify"), "--pubkey", str(keys), "--json", "--jobs", "1",
                          str(logs_dir)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["summary"]["games"] == report["summary"]["ok"] == expected
    assert report["trusted_key"] is True
    assert all(game["ok"] and game["signed"] for game in report["games"]), report["games"]
