"""`fairdice simulate`: the command users and auditors run first."""

import hashlib
import json
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def canonical(value) -> bytes:
    """SPEC §1's canonical JSON, written here from the spec's one-line definition."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def assert_signed(log: dict) -> None:
    """Both signatures of SPEC §6 verify under the header's key (cryptography raises InvalidSignature)."""
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(log["header"]["public_key"]))
    key.verify(bytes.fromhex(log["commitment_signature"]), canonical(log["header"]))
    key.verify(bytes.fromhex(log["signature"]), canonical({k: v for k, v in log.items() if k != "signature"}))


def run(*args):
    return subprocess.run([sys.executable, "-m", "fairdice", "simulate", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("rules", ["yacht", "yatzy", "classic13"])
def test_simulate_writes_one_signed_log_per_game_and_a_json_summary(tmp_path, rules):
    proc = run("--rules", rules, "--bots", "greedy,ev", "--games", "6", "--seed", "t", "--out",
               str(tmp_path), "--json", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["rules"] == rules and summary["games"] == 6
    assert [s["bot"] for s in summary["seats"]] == ["greedy", "ev"]
    assert set(summary["seats"][0]) >= {"bot", "mean", "stdev", "min", "max", "wins"}
    logs = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*.json"))]
    assert len(logs) == 6
    totals = [[log["final"]["totals"][i]["total"] for log in logs] for i in range(2)]
    for i, seat in enumerate(summary["seats"]):
        assert seat["min"] == min(totals[i]) and seat["max"] == max(totals[i])
        assert seat["mean"] == pytest.approx(sum(totals[i]) / 6)
        assert seat["wins"] == sum(log["final"]["winner"] == i for log in logs)
    for log in logs:
        assert log["header"]["seed_secret"] is False and log["final"]["status"] == "finished"
        assert hashlib.sha256(bytes.fromhex(log["final"]["server_seed"])).hexdigest() == log["header"]["commitment"]
        assert_signed(log)


@pytest.mark.slow  # four simulate runs
def test_simulate_is_reproducible_with_a_seed_and_not_without(tmp_path):
    outs = []
    for name, seed in (("a", ["--seed", "s"]), ("b", ["--seed", "s"]), ("c", [])):
        assert run("--rules", "yacht", "--bots", "ev", "--games", "3", "--out", str(tmp_path / name),
                   "--jobs", "2", *seed).returncode == 0
        outs.append(sorted(p.read_text() for p in (tmp_path / name).glob("*.json")))
    assert outs[0] == outs[1] != outs[2]
    assert json.loads(outs[2][0])["header"]["seed_secret"] is True


@pytest.mark.parametrize("args,message", [
    (["--rules", "poker", "--bots", "ev", "--games", "1"], "invalid choice: 'poker'"),
    (["--rules", "yacht", "--bots", "ev,cheater", "--games", "1"], "unknown bot 'cheater'"),
    (["--rules", "yacht", "--bots", "ev", "--games", "0"], "must be at least 1"),
    (["--rules", "yacht", "--bots", "ev", "--games", "x"], "not a whole number"),
])
def test_simulate_usage_errors(tmp_path, args, message):
    proc = run(*args, "--out", str(tmp_path))
    assert proc.returncode == 2 and message in proc.stderr
