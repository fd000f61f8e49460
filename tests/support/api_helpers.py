"""Shared helpers for the API tests (no tests here): servers, games and checks.

- `app_server(app)`: the Flask app on a loopback port in a thread (fast, for client tests).
- `ServeProcess`: `fairdice serve` as a real process group on a free loopback port.
- `LIMITS_OFF`: the settings under which every test server runs unless a test turns limits on.
- `play_turn` / `play_out`: a human seat's simple strategy over any HTTP-ish client.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests
from werkzeug.serving import make_server
from support import REPO

# Rate limits off and no quota of unfinished games: tests create games and move as fast as they like.  Set in the
# environment of the test run (conftest.py) and of every ServeProcess; a test turns a limit on with its own value
# (a create_app config, or ServeProcess's extra_env).
LIMITS_OFF = {"FAIRDICE_RATE_CREATE": "off", "FAIRDICE_RATE_MOVES_CLIENT": "off", "FAIRDICE_RATE_MOVES_TOKEN": "off",
              "FAIRDICE_MAX_UNFINISHED": "0"}


@contextlib.contextmanager
def app_server(app):
    """Serve a WSGI app on 127.0.0.1:<free port> in a thread; yields the base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


class ServeProcess:
    """`fairdice serve` in its own process group (port 0: a free one); the address is read from its output.
    Rate limits are off and there is no quota unless `extra_env` sets them."""

    def __init__(self, data_dir: Path, workers: int = 2, threads: int = 4, port: int = 0,
                 extra_env: dict | None = None, args: list[str] | None = None):
        self.data_dir = Path(data_dir)
        self.args = list(args or [])  # more `fairdice serve` options, e.g. ["--db", "postgresql://..."]
        self.workers, self.threads, self.port = workers, threads, port
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **LIMITS_OFF, **(extra_env or {})}
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self.output: list[str] = []
        self._reader: threading.Thread | None = None

    def start(self, timeout: float = 30.0) -> ServeProcess:
        cmd = [sys.executable, "-m", "fairdice", "serve", "--host", "127.0.0.1", "--port", str(self.port),
               "--data-dir", str(self.data_dir), "--workers", str(self.workers), "--threads", str(self.threads),
               *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=self.env, cwd=REPO, start_new_session=True)
        found = threading.Event()

        def read():
            for line in self.proc.stdout:
                self.output.append(line)
                match = re.search(r"serving at (http://[\d.]+:\d+)", line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not found.wait(timeout):
            self.kill()
            raise RuntimeError("fairdice serve did not start:\n" + "".join(self.output))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # workers booted and answering
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except requests.ConnectionError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError("fairdice serve does not answer:\n" + "".join(self.output))

    def kill(self, sig=signal.SIGKILL) -> None:
        """Signal the whole process group (master and workers): kill -9 by default."""
        if self.proc and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(15)
        if self.proc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # no orphaned worker survives
        if self._reader:
            self._reader.join(5)
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()

    def stop(self) -> None:
        self.kill(signal.SIGTERM)

    def log_text(self) -> str:
        return "".join(self.output)


def installed_command(name: str) -> str:
    """The path of a command this repository installs (`fairdice`, `fairdice-verify`): the suite runs on an
    installed checkout (README), so a missing command fails the test that needs it instead of skipping it."""
    exe = shutil.which(name) or str(Path(sys.executable).with_name(name))
    assert Path(exe).is_file(), f"{name} is not installed (pip install -e . in the project's venv)"
    return exe


def best_option(state: dict) -> str:
    """The legal category worth most now (ties: table order)."""
    options = state["options"]
    return max(options, key=lambda c: (options[c]["points"] + options[c]["yahtzee_bonus"],
                                       -list(state["seats"][state["current_seat"]]["card"]).index(c)))


def choose_hold(dice: list[int]) -> list[int]:
    """Keep every die of the most common face (the higher on equal counts)."""
    face = max(set(dice), key=lambda f: (dice.count(f), f))
    return [i for i, d in enumerate(dice) if d == face]


def play_turn(roll, score, state: dict, rerolls: int = 2) -> dict:
    """One turn for the human seat to move: roll, up to `rerolls` rerolls, then the best category."""
    state = roll([])
    for _ in range(rerolls):
        hold = choose_hold(state["dice"])
        if len(hold) == 5 or state["rolls_left"] == 0:
            break
        state = roll(hold)
    return score(best_option(state))


def play_out(game) -> dict:
    """A `PlayerGame` played to its end: a roll, one reroll towards the most common face, the best box."""
    state = game.state
    while state["status"] == "playing":
        state = game.roll()
        if state["rolls_left"] and len(choose_hold(state["dice"])) < 5:
            state = game.roll(choose_hold(state["dice"]))
        state = game.score(best_option(state))
    return state


def play_session(url: str, lines: list[str], argv: list[str]) -> tuple[int, str]:
    """`fairdice play --url URL ARGV...` fed `lines` as the player's input (then end of input): (exit code, output)."""
    import argparse
    import io

    from fairdice.edges import play as play_mod
    from fairdice.edges.client import Client

    parser = argparse.ArgumentParser()
    play_mod.configure(parser)
    args = parser.parse_args(["--url", url, *argv])
    feed = iter(lines)

    def read(prompt):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    out = io.StringIO()
    return play_mod.play(Client(url), args, play_mod.Terminal(read, out)), out.getvalue()


def spec_canonical(doc) -> bytes:
    """SPEC §1's canonical JSON, written out here rather than taken from the code under test."""
    import json
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def spec_field(text: str) -> bytes:
    """SPEC §1's field(s): u32(length) || UTF-8 bytes."""
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def openapi_checker(client):
    """check(schema_name, instance): validate an answer against the server's own /openapi.json (JSON Schema 2020-12)."""
    import jsonschema
    import referencing

    doc = client.get("/openapi.json").get_json()
    resource = referencing.Resource.from_contents(doc, default_specification=referencing.jsonschema.DRAFT202012)
    registry = referencing.Registry().with_resource("urn:fairdice:openapi", resource)

    def check(name, instance):
        schema = {"$ref": f"urn:fairdice:openapi#/components/schemas/{name}"}
        jsonschema.Draft202012Validator(schema, registry=registry).validate(instance)

    return check


def store_version_1_game(games, game_id: str, seats: list[dict]) -> dict:
    """Put a game as a version-1 server made it (two humans, no client-seed commitments) straight into the
    store of `games` (api.games.Games); its seats' tokens by seat."""
    import hashlib
    import secrets

    from api.store import GameRecord
    from fairdice.game import Game, Setup
    from fairdice.log import open_log

    setup = Setup.build(game_id, "yacht", seats, version=1)
    game = Game(setup, secrets.token_bytes(32))
    tokens = {seat: f"token-{seat}" for seat in range(len(seats))}
    games.store.create_game(GameRecord(
        game_id=game_id, opened=open_log(game, games.keys.signer), key_id=games.keys.key_id, seed_revealed=None,
        tokens=[{"seat": s, "sha256": hashlib.sha256(t.encode()).hexdigest()} for s, t in tokens.items()],
        seed_sealed=games.keys.seed_box.seal(game_id, game._server_seed), status=game.status))
    return tokens


# --- games through Flask's test client (tests/unit/test_api.py and its neighbours) -------------------------------

HUMAN = {"type": "human", "name": "ann"}


EV = {"type": "bot", "bot": "ev"}


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def create(client, seats=(HUMAN, EV), rules="classic13", **extra):
    resp = client.post("/v1/games", json={"rules": rules, "seats": list(seats), **extra})
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


SALT = "5a" * 32


def seed_commitment(client_seed: str, salt: str = SALT) -> str:
    """SPEC §4.3: hex(SHA-256(salt || UTF-8(client_seed)))."""
    return hashlib.sha256(bytes.fromhex(salt) + client_seed.encode("utf-8")).hexdigest()


def started(client, seats=(HUMAN, EV), rules="classic13", **extra):
    """A created game whose human seats have all sent their client seeds (`seed <seat>`; with two or more
    humans, committed to and then revealed): (created, tokens by seat, state)."""
    created = create(client, seats, rules, **extra)
    tokens = {t["seat"]: t["token"] for t in created["tokens"]}
    url = f"/v1/games/{created['game_id']}/client-seed"
    if created["commit_reveal"]:
        for seat, token in tokens.items():
            resp = client.post(url, json={"commitment": seed_commitment(f"seed {seat}")}, headers=bearer(token))
            assert resp.status_code == 200, resp.get_json()
    state = None
    for seat, token in tokens.items():
        body = {"client_seed": f"seed {seat}", **({"salt": SALT} if created["commit_reveal"] else {})}
        resp = client.post(url, json=body, headers=bearer(token))
        assert resp.status_code == 200, resp.get_json()
        state = resp.get_json()
    return created, tokens, state


def assert_problem(resp, status, code=None):
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    body = resp.get_json()
    assert body["status"] == status
    assert body["type"].startswith("urn:fairdice:problem:") and body["title"] and body["detail"]
    if code:
        assert body["code"] == code
    assert "Traceback" not in resp.get_data(as_text=True)
    return body
