"""Running the reference verifier on what the Node suites check: `fairdice-verify` as a command (cli_verdicts)
or in this process (reference_verdict) on logs written by write_logs, and the options of a corpus case."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from support import FORGED, REPO
from support.verifier_support import PUBLIC_HEX
from verifier.cli import main as cli_main

NODE = shutil.which("node") or "/usr/bin/node"


def cli_verdicts(files: list[Path], tmp: Path, *, trusted: list[str] = (PUBLIC_HEX,), receipt: dict | None = None,
                 move_receipts: list | None = None, allow_unsigned: bool = False) -> dict[str, tuple] | None:
    """file -> (ok, checks) of `fairdice-verify --json`, or (None, error) for input that is not a log;
    None when it refuses its options (a receipt that is no evidence: exit 2 before any log is read)."""
    args = [sys.executable, "-m", "verifier", "--json", "--jobs", "2"]
    if trusted:
        keys = tmp / "trusted-keys.json"
        keys.write_text(json.dumps({"keys": [{"public_key": k} for k in trusted]}))
        args += ["--pubkey", str(keys)]
    if receipt is not None:
        path = tmp / "receipt.json"
        path.write_text(json.dumps(receipt))
        args += ["--receipt", str(path)]
    if move_receipts is not None:
        path = tmp / "move-receipts.json"
        path.write_text(json.dumps(move_receipts))
        args += ["--receipts", str(path)]
    if allow_unsigned:
        args.append("--allow-unsigned")
    done = subprocess.run(args + [str(f) for f in files], capture_output=True, text=True, timeout=600, cwd=REPO)
    if not done.stdout and done.returncode == 2:
        return None
    assert done.stdout, done.stderr
    games = json.loads(done.stdout)["games"]
    return {g["file"]: (None, g["error"]) if g.get("error") else (g["ok"], g["checks"]) for g in games}


def write_logs(directory: Path, docs: dict[str, dict]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, doc in docs.items():
        path = directory / f"{name}.json"
        path.write_text(json.dumps(doc, ensure_ascii=False))
        paths.append(path)
    return paths


def case_options(case: dict, tmp: Path) -> list[str]:
    """fairdice-verify's options for one corpus case: its trusted keys, receipt and move receipts written to files."""
    args = []
    if case["trusted_keys"]:
        keys = tmp / "trusted-keys.json"
        keys.write_text(json.dumps({"keys": [{"public_key": k} for k in case["trusted_keys"]]}))
        args += ["--pubkey", str(keys)]
    if case["receipt"] is not None:
        receipt = tmp / "receipt.json"
        receipt.write_text(json.dumps(case["receipt"]))
        args += ["--receipt", str(receipt)]
    if case.get("move_receipts") is not None:
        receipts = tmp / "move-receipts.json"
        receipts.write_text(json.dumps(case["move_receipts"]))
        args += ["--receipts", str(receipts)]
    if case["allow_unsigned"]:
        args.append("--allow-unsigned")
    return args


def reference_verdict(case: dict, tmp: Path, capsys) -> tuple:
    """(ok, checks) of fairdice-verify (its main(), run in this process) on one corpus case, or (None, why)
    when it exits 2: the input is not a log, or the receipt is no evidence."""
    code = cli_main(["--json", "--jobs", "1", *case_options(case, tmp), str(FORGED / case["file"])])
    out = capsys.readouterr().out
    games = json.loads(out)["games"] if out.strip() else []
    if code == 2:
        return None, games[0]["error"] if games else "usage error"
    return games[0]["ok"], games[0]["checks"]
