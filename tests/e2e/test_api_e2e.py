"""End to end: `fairdice serve` as a real process on a loopback port.

- full games of all three rule sets over HTTP with `requests`, every log verified
  (by fairdice.edges.client's checks and by the `fairdice-verify` CLI), and no answer
  before the reveal carrying the seed;
- 20 simultaneous rolls on one game (several worker processes) consume one roll;
- kill -9 of the whole server in the middle of games: restarted on the same
  files, the games go on, nothing acknowledged is lost, every log verifies.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from fairdice.edges.client import Client, VerificationError, verify_log
from fairdice.rules import RULESETS
from support.api_helpers import ServeProcess, best_option, choose_hold, installed_command

pytestmark = pytest.mark.e2e


class Recorder:
    """A requests session that keeps every answer body, in order."""

    def __init__(self):
        self.session = requests.Session()
        self.bodies: list[str] = []
        self.session.hooks["response"].append(lambda resp, *a, **k: self.bodies.append(resp.text))


def play_game(api: Client, rules: str, seats: list[dict]) -> tuple[dict, dict]:
    """Create, join every human seat, play to the end with a simple strategy; (created, last state)."""
    created = api.create_game(rules, seats, first="random")
    tokens = {t["seat"]: t["token"] for t in created["tokens"]}
    seeds = {seat: f"seat {seat} {uuid.uuid4().hex}" for seat in tokens}
    salt = uuid.uuid4().hex * 2  # 32 bytes, as hex
    if created["commit_reveal"]:  # two or more humans: commit, then reveal (SPEC §4.3)
        for seat, token in tokens.items():
            digest = hashlib.sha256(bytes.fromhex(salt) + seeds[seat].encode()).hexdigest()
            api.commit_client_seed(created["game_id"], token, digest)
    state = None
    for seat, token in tokens.items():
        state = api.send_client_seed(created["game_id"], token, seeds[seat],
                                     salt=salt if created["commit_reveal"] else None)
    while state["status"] == "playing":
        token = tokens[state["current_seat"]]
        gid = created["game_id"]
        state = api.roll(gid, token)
        while state["rolls_left"] and len(choose_hold(state["dice"])) < 5:
            state = api.roll(gid, token, choose_hold(state["dice"]))
        state = api.score(gid, token, best_option(state))
    return created, state


def test_full_games_over_http(server, tmp_path):
    rec = Recorder()
    api = Client(server.url, session=rec.session)
    logs_dir = tmp_path / "logs"
    logs_dir.mkdir()
    seeds = []
    line_up = {"yacht": [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}],
               "yatzy": [{"type": "human", "name": "ann"}, {"type": "human", "name": "bo"},
                         {"type": "bot", "bot": "greedy"}],
               "classic13": [{"type": "bot", "bot": "ev"}, {"type": "human", "name": "cy"}]}
    for rules in RULESETS:
        start = len(rec.bodies)
        created, state = play_game(api, rules, line_up[rules])
        assert state["status"] == "finished"
        seed = state["final"]["server_seed"]
        seeds.append(seed)
        before_reveal = rec.bodies[start:-1]
        assert before_reveal and not any(seed in body or seed.upper() in body for body in before_reveal)
        assert seed in rec.bodies[-1]
        log = api.log(created["game_id"])
        assert log["header"] == created["header"] and log["final"] == state["final"]
        n_boxes = len(RULESETS[rules].categories)
        assert sum(e["type"] == "score" for e in log["events"]) == n_boxes * len(line_up[rules])
        api.verify_log(log)  # raises VerificationError (naming the check) unless every check passes
        (logs_dir / f"{created['game_id']}.json").write_text(json.dumps(log))
    assert not any(seed in server.log_text() for seed in seeds)
    verify_with_cli(server, logs_dir, expected=len(RULESETS))


def verify_with_cli(server, logs_dir, expected: int) -> None:
    """`fairdice-verify` against the server's published keys: signatures required, bots replayed."""
    keys = logs_dir.parent / "keys.json"
    keys.write_text(requests.get(server.url + "/v1/keys", timeout=5).text)
    out = subprocess.run([installed_command("fairdice-verify"), "--pubkey", str(keys), "--check-bots", "--json",
                          "--jobs", "1", str(logs_dir)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["summary"]["games"] == report["summary"]["ok"] == expected
    assert report["trusted_key"] is True
    for game in report["games"]:
        assert game["ok"] and game["signed"] and game["checks"]["bot.decision"] == "pass", game


def test_twenty_simultaneous_rolls_consume_one(server):
    api = Client(server.url)
    created = api.create_game("classic13", [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}])
    gid, token = created["game_id"], created["tokens"][0]["token"]
    api.send_client_seed(gid, token, "race")
    barrier = threading.Barrier(20)
    key = uuid.uuid4().hex

    def roll(_):
        session = requests.Session()
        barrier.wait()
        return session.post(f"{server.url}/v1/games/{gid}/roll", json={"hold": []},
                            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key}, timeout=30)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(roll, range(20)))
    assert [a.status_code for a in answers] == [200] * 20
    assert len({a.text for a in answers}) == 1  # the same answer to every retry
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 19
    state = api.state(gid)
    assert state["rolls_made"] == 1 and [e["type"] for e in state["events"]].count("roll") == 1

    # without a shared key: every roll is a new command, and at most three go through this turn
    barrier.reset()

    def roll_fresh(_):
        session = requests.Session()
        barrier.wait()
        return session.post(f"{server.url}/v1/games/{gid}/roll", json={"hold": [0]},
                            headers={"Authorization": f"Bearer {token}"}, timeout=30)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(roll_fresh, range(20)))
    codes = sorted(a.status_code for a in answers)
    assert codes == [200] * 2 + [422] * 18
    state = api.state(gid)
    rolls = [e for e in state["events"] if e["type"] == "roll"]
    assert [r["roll"] for r in rolls] == [1, 2, 3]

    # twenty scores of one box: one is applied, then the bot moves; the rest are refused
    barrier.reset()

    def score(_):
        session = requests.Session()
        barrier.wait()
        return session.post(f"{server.url}/v1/games/{gid}/score", json={"category": "chance"},
                            headers={"Authorization": f"Bearer {token}"}, timeout=30)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(score, range(20)))
    assert sorted(a.status_code for a in answers) == [200] + [409] * 19
    state = api.state(gid)
    assert sum(e["type"] == "score" and e["seat"] == 0 for e in state["events"]) == 1


class Player(threading.Thread):
    """Plays one game to the end, retrying through a server crash with the same Idempotency-Key."""

    def __init__(self, holder: dict, rules: str, restarted: threading.Event):
        super().__init__(daemon=True)
        self.holder, self.rules, self.restarted = holder, rules, restarted
        self.session = requests.Session()
        self.acknowledged: list[dict] = []  # every successful command answer
        self.moves = 0
        self.error: BaseException | None = None
        self.created: dict | None = None
        self.final: dict | None = None
        self.retried_over_crash = 0

    def call(self, method, path, body=None, key=None, token=None):
        headers = {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if key:
            headers["Idempotency-Key"] = key
        while True:
            try:
                resp = self.session.request(method, self.holder["url"] + path, json=body, headers=headers, timeout=10)
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError):
                # killed before, during or after the command: the same key makes the retry safe
                self.retried_over_crash += 1
                self.restarted.wait(60)
                self.session = requests.Session()
                time.sleep(0.05)
                continue
            if resp.status_code == 503:
                time.sleep(0.1)
                continue
            assert resp.status_code < 300, (resp.status_code, resp.text)
            return resp.json()

    def move(self, action, body, token):
        answer = self.call("POST", f"/v1/games/{self.created['game_id']}/{action}", body, uuid.uuid4().hex, token)
        self.acknowledged.append(answer)
        self.moves += 1
        return answer

    def run(self):
        try:
            self.created = self.call("POST", "/v1/games", {"rules": self.rules, "seats": [
                {"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}]})
            token = self.created["tokens"][0]["token"]
            state = self.move("client-seed", {"client_seed": uuid.uuid4().hex}, token)
            while state["status"] == "playing":
                state = self.move("roll", {"hold": []}, token)
                if state["rolls_left"] and len(choose_hold(state["dice"])) < 5:
                    state = self.move("roll", {"hold": choose_hold(state["dice"])}, token)
                state = self.move("score", {"category": best_option(state)}, token)
            self.final = state
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_kill_9_mid_game_loses_nothing(tmp_path):
    data = tmp_path / "crash"
    server = ServeProcess(data, workers=2, threads=4).start()
    port = int(server.url.rsplit(":", 1)[1])
    holder = {"url": server.url}
    restarted = threading.Event()
    players = [Player(holder, rules, restarted) for rules in list(RULESETS) * 2]
    try:
        for p in players:
            p.start()
        deadline = time.monotonic() + 30
        while sum(p.moves for p in players) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()  # kill -9, master and workers, with requests in flight
        moves_at_crash = sum(p.moves for p in players)
        assert moves_at_crash >= 40 and not all(p.final for p in players), "the games ended before the crash"
        server = ServeProcess(data, workers=2, threads=4, port=port).start()  # same files, same port
        holder["url"] = server.url
        restarted.set()
        for p in players:
            p.join(90)
        for p in players:
            assert p.error is None, repr(p.error)
            assert p.final and p.final["status"] == "finished"
        assert sum(p.retried_over_crash for p in players) > 0
        api = Client(server.url)
        logs_dir = tmp_path / "logs"
        logs_dir.mkdir()
        for p in players:
            log = api.log(p.created["game_id"])
            api.verify_log(log)
            for answer in p.acknowledged:  # every acknowledged event is in the final log, in its place
                start = answer["events_from"]
                assert log["events"][start:start + len(answer["events"])] == answer["events"]
            (logs_dir / f"{p.created['game_id']}.json").write_text(json.dumps(log))
        verify_with_cli(server, logs_dir, expected=len(players))
    finally:
        restarted.set()
        server.kill()


def test_client_verify_rejects_tampering(server):
    api = Client(server.url)
    created, state = play_game(api, "yacht", [{"type": "human", "name": "ann"}])
    log = api.log(created["game_id"])
    verify_log(log, api.keys()[0]["public_key"])
    forged = json.loads(json.dumps(log))
    roll = next(e for e in forged["events"] if e["type"] == "roll")
    roll["dice"] = [6, 6, 6, 6, 6] if roll["dice"] != [6] * 5 else [1] * 5
    with pytest.raises(VerificationError) as failed:
        verify_log(forged)
    assert failed.value.check == "roll.dice" and failed.value.problems[0].startswith("roll.dice:"), failed.value
    with pytest.raises(VerificationError) as failed:
        verify_log(log, "00" * 32)  # a key other than the log's
    assert "log.key" in failed.value.checks, failed.value.problems
