"""The verifier installed alone (verifier/pyproject.toml, the `fairdice-verifier` distribution), as an auditor
installs it: a fresh virtual environment, `pip install -c requirements.lock <the verifier>`, and then nothing of
the server in it, only cryptography and what cryptography needs. Its `fairdice-verify` verifies the corpus' logs
and simulated games, every bot decision replayed, the optimal bot's from a table directory given by --tables.

The verifier's directory is copied into the test's temporary directory first: pip builds a local project in
place (build/, *.egg-info), and a test writes nowhere else (conftest)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import FORGED
from support import REPO as ROOT

CASES = {case["name"]: case for case in json.loads((FORGED / "index.json").read_text(encoding="ascii"))["cases"]}
LOCK = ROOT / "requirements.lock"
# the distribution, its one dependency and that one's own (cffi for its bindings, pycparser for cffi)
EXPECTED_DISTRIBUTIONS = {"fairdice-verifier", "cryptography", "cffi", "pycparser"}
SERVER_MODULES = ("fairdice", "api", "flask", "numpy", "requests", "gunicorn")
EXIT = {"ok": 0, "fail": 1, "error": 2}

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def locked_versions() -> dict[str, str]:
    pins = (re.match(r"([A-Za-z0-9._-]+)==(\S+)$", line.strip()) for line in LOCK.read_text().splitlines())
    return {normalized(m[1]): m[2] for m in pins if m}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run(cmd: list, env: dict, cwd: Path, timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


class Standalone:
    """A virtual environment holding the verifier's distribution only, and a bare environment to run it in."""

    def __init__(self, home: Path):
        self.home, self.venv = home, home / "venv"
        self.bin = self.venv / "bin"
        # no PYTHONPATH, no fairdice cache directory, a HOME of its own: the venv is all it has
        self.env = {"PATH": f"{self.bin}{os.pathsep}{os.defpath}", "HOME": str(home), "LC_ALL": "C.UTF-8"}

    def install(self) -> None:
        source = self.home / "src" / "verifier"
        shutil.copytree(ROOT / "verifier", source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        made = run([sys.executable, "-m", "venv", self.venv], self.env, self.home)
        assert made.returncode == 0, made.stderr
        pip_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        pip_env.update(PATH=self.env["PATH"], PIP_DISABLE_PIP_VERSION_CHECK="1")
        installed = run([self.bin / "python", "-m", "pip", "install", "-c", LOCK, source], pip_env, self.home, 600)
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    def python(self, code: str) -> str:
        done = run([self.bin / "python", "-I", "-c", code], self.env, self.home)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def verify(self, *args) -> subprocess.CompletedProcess:
        return run([self.bin / "fairdice-verify", *args], self.env, self.home)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory) -> Standalone:
    env = Standalone(tmp_path_factory.mktemp("standalone"))
    env.install()
    return env


def test_the_venv_holds_the_verifier_and_cryptography_with_its_dependencies_only(standalone):
    frozen = run([standalone.bin / "python", "-m", "pip", "freeze"], standalone.env, standalone.home)
    assert frozen.returncode == 0, frozen.stderr
    found = {}
    for line in frozen.stdout.splitlines():
        name, _, version = re.split(r"\s*(==| @ )\s*", line.strip(), maxsplit=1)
        found[normalized(name)] = version
    assert set(found) == EXPECTED_DISTRIBUTIONS, frozen.stdout
    pins = locked_versions()
    assert {n: found[n] for n in EXPECTED_DISTRIBUTIONS - {"fairdice-verifier"}} == \
        {n: pins[n] for n in EXPECTED_DISTRIBUTIONS - {"fairdice-verifier"}}, "-c requirements.lock was not honoured"


def test_nothing_of_the_server_is_importable_and_the_verifier_is_the_installed_copy(standalone):
    found = json.loads(standalone.python(
        "import importlib.util, json, verifier\n"
        f"print(json.dumps({{'file': verifier.__file__, 'found': [m for m in {SERVER_MODULES!r} "
        "if importlib.util.find_spec(m) is not None]}))"))
    assert found["found"] == []
    assert Path(found["file"]).is_relative_to(standalone.venv), found["file"]


@pytest.mark.parametrize("name", ["genuine-yacht-ann-vs-greedy", "genuine-yacht-ann-vs-bob", "future-reading-ev",
                                  "future-reading-greedy", "inflated-bot-score", "signed-by-another-key",
                                  "new-seed-old-commitment", "hostile-nan"])
def test_the_installed_verifier_gives_the_corpus_verdict(standalone, tmp_path, name):
    case = CASES[name]
    assert len(case["trusted_keys"]) == 1 and case["receipt"] is None and not case["allow_unsigned"]
    pubkey = tmp_path / "pubkey"
    pubkey.write_text(case["trusted_keys"][0])
    done = standalone.verify("--pubkey", pubkey, FORGED / case["file"])
    assert done.returncode == EXIT[case["verdict"]], (case["what"], done.stdout, done.stderr)
    if case["verdict"] == "fail":  # the failure is listed under its check id (SPEC §7)
        assert re.search(rf"^\s+{re.escape(case['check'])}\s+event ", done.stdout, re.M), done.stdout


@pytest.fixture(scope="module")
def bot_games(tmp_path_factory, optimal_table) -> tuple[Path, Path]:
    """(logs, tables): three yacht games of greedy, ev and optimal, simulated by the server's code in this venv, and
    a directory holding only the yacht table, copied from the run's cache."""
    from fairdice.adapters import table_cache

    optimal_table("yacht")
    where = tmp_path_factory.mktemp("bot-games")
    logs, tables = where / "logs", where / "tables"
    tables.mkdir()
    cached = table_cache.table_path("yacht")
    shutil.copy(cached, tables / cached.name)
    made = run([sys.executable, "-m", "fairdice", "simulate", "--rules", "yacht", "--bots", "greedy,ev,optimal",
                "--games", "3", "--seed", "s", "--out", logs], dict(os.environ), ROOT)
    assert made.returncode == 0, made.stderr
    return logs, tables


def test_every_bot_decision_is_replayed_with_the_tables_given(standalone, bot_games):
    logs, tables = bot_games
    done = standalone.verify("--check-bots", "--tables", tables, "--json", logs)
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads(done.stdout)["games"]
    assert len(games) == 3
    for game in games:
        assert game["ok"] and game["bots_checked"], game
        assert (game["checks"]["bot.identity"], game["checks"]["bot.decision"]) == ("pass", "pass"), game


def test_without_the_table_the_optimal_games_cannot_be_verified(standalone, bot_games):
    logs, _ = bot_games  # (no --tables, and the bare environment has no fairdice cache directory)
    done = standalone.verify(logs)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no optimal table for yacht" in done.stderr


def test_a_changed_optimal_decision_fails_bot_decision(standalone, bot_games, tmp_path):
    logs, tables = bot_games
    path = sorted(logs.glob("*.json"))[0]
    doc = json.loads(path.read_text())
    seat = next(s for s, seat in enumerate(doc["header"]["seats"]) if seat["type"] == "bot"
                and seat["bot"]["id"] == "optimal")
    at, ev = next((i, e) for i, e in enumerate(doc["events"])
                  if e["type"] == "roll" and e["seat"] == seat and e["roll"] == 2)
    ev["hold"] = [] if ev["hold"] else [0]  # another legal hold than the one the policy chose
    forged = tmp_path / path.name
    forged.write_text(json.dumps(doc))
    done = standalone.verify("--tables", tables, forged)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(rf"^\s+bot\.decision\s+event {at}\s+field hold: ", done.stdout, re.M), done.stdout
