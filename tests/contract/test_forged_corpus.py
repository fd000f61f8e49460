"""fairdice-verify held to the adversarial corpus (tests/vectors/forged/, made by tests/support/forge.py).

Each case is a log file, the keys to trust, maybe the player's receipt (and the move receipts the player kept:
version 2's signed hash chain), whether unsigned logs are allowed, and the verdict SPEC §7 (and the protocol 2
contract) calls for: exit 0 (ok), 1 with the named check among the failures (fail), or 2 (not a log at all)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import forge
from verifier.cli import main
from support import FORGED

INDEX = json.loads((FORGED / "index.json").read_text(encoding="ascii"))
CASES = {case["name"]: case for case in INDEX["cases"]}
EXIT = {"ok": 0, "fail": 1, "error": 2}
CHECK_IDS = ("log.format log.key sig.commitment sig.final seed.revealed seed.commitment client_seed.valid "
             "start.first turn.order roll.count roll.hold roll.dice score.category score.points game.complete "
             "final.totals final.winner bot.identity bot.decision receipt.match "
             "client_seed.commit game.abandon receipt.chain player.signature log.equivocation").split()  # SPEC §7
ENTRY_FIELDS = {"name", "file", "what", "trusted_keys", "receipt", "allow_unsigned", "verdict", "check"}


@pytest.fixture(scope="module", autouse=True)
def yacht_table(optimal_table):
    """Some games of the corpus are played by the optimal bot (yacht): the verifier replays its decisions."""
    optimal_table("yacht")


def cli_args(case: dict, tmp_path: Path) -> list[str]:
    """fairdice-verify's arguments for one case: the trusted keys, receipt and move receipts written to files."""
    args = ["--json"]
    keys = case["trusted_keys"]
    if keys:
        pubkey = tmp_path / "pubkey"
        pubkey.write_text(keys[0] if len(keys) == 1 else json.dumps({"keys": [{"public_key": k} for k in keys]}))
        args += ["--pubkey", str(pubkey)]
    if case["receipt"] is not None:
        receipt = tmp_path / "receipt.json"
        receipt.write_text(json.dumps(case["receipt"]))
        args += ["--receipt", str(receipt)]
    if case.get("move_receipts") is not None:
        receipts = tmp_path / "move-receipts.json"
        receipts.write_text(json.dumps(case["move_receipts"]))
        args += ["--receipts", str(receipts)]
    if case["allow_unsigned"]:
        args.append("--allow-unsigned")
    if "audit_with" in case:  # two logs audited together (SPEC §7.1)
        return ["--audit", *args, str(FORGED / case["file"]), str(FORGED / case["audit_with"])]
    return args + [str(FORGED / case["file"])]


def assert_verdict(case: dict, code: int, out: str) -> None:
    assert code == EXIT[case["verdict"]], (case["what"], out[-2000:])
    if case["verdict"] == "fail" and "audit_with" in case:
        findings = json.loads(out)["audit"]["findings"]
        assert any(f.startswith(case["check"]) for f in findings), (case["what"], findings)
    elif case["verdict"] == "fail":
        game = json.loads(out)["games"][0]
        found = {f["check"] for f in game["failures"]} | set(game["unlisted_failures"])
        assert case["check"] in found, (case["what"], game["failures"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verifier_gives_each_case_its_verdict(name, tmp_path, capsys):
    case = CASES[name]
    code = main(cli_args(case, tmp_path))
    assert_verdict(case, code, capsys.readouterr().out)


EXECUTABLE_CASES = ("genuine-yacht-ann-vs-greedy", "relabelled-bot-turns-yacht-ann-vs-greedy",
                    "new-commitment-yacht-ann-vs-greedy", "no-final-signature-allowed", "duplicate-key-final",
                    "genuine-v2-yacht-ann-vs-bob", "v2-history-rewritten-after-receipts",
                    "v2-move-receipts-not-an-array")


@pytest.mark.parametrize("name", EXECUTABLE_CASES)
def test_the_installed_command_gives_the_same_verdicts(name, tmp_path):
    exe = shutil.which("fairdice-verify", path=str(Path(sys.executable).parent)) or shutil.which("fairdice-verify")
    assert exe, "fairdice-verify is not installed"
    case = CASES[name]
    run = subprocess.run([exe, *cli_args(case, tmp_path)], capture_output=True, text=True, timeout=120)
    assert_verdict(case, run.returncode, run.stdout)


def test_the_index_is_well_formed():
    assert INDEX["server_public_key"] and len(CASES) == len(INDEX["cases"]) >= 200
    for case in INDEX["cases"]:
        assert set(case) - {"move_receipts", "audit_with"} == ENTRY_FIELDS, case["name"]  # (where there are some)
        assert case.get("move_receipts", []) is not None, case["name"]
        assert (FORGED / case["file"]).is_file(), case["name"]
        assert case["verdict"] in EXIT and case["what"].strip()
        assert (case["check"] in CHECK_IDS) if case["verdict"] == "fail" else case["check"] is None, case["name"]
    files = {case["file"] for case in INDEX["cases"]} | {c["audit_with"] for c in INDEX["cases"] if "audit_with" in c}
    files |= {"index.json"}
    assert files == {p.name for p in FORGED.iterdir()}  # no stray file


def test_the_legacy_games_are_version_1_and_the_new_ones_version_2():
    """SPEC promises that version 1 logs keep verifying: the corpus keeps its version 1 games as version 1 logs
    (and their cases as they were), beside games of version 2."""
    genuine = {name[len("genuine-"):]: json.loads((FORGED / case["file"]).read_bytes()) for name, case in CASES.items()
               if name.startswith("genuine-") and name[len("genuine-"):] in forge.BASES}
    assert set(genuine) == set(forge.BASES)
    for name, doc in genuine.items():
        version = 2 if name.startswith("v2-") else 1
        assert doc["version"] == version and ("abandon_timeout" in doc["header"]) == (version == 2), name
    assert {name for name in genuine if not name.startswith("v2-")} == set(forge.V1_BASES)
    assert set(forge.V2_BASES) < set(genuine)


def test_every_check_is_exercised_and_every_verdict():
    expected = {case["check"] for case in INDEX["cases"] if case["verdict"] == "fail"}
    assert expected == set(CHECK_IDS)
    assert {case["verdict"] for case in INDEX["cases"]} == set(EXIT)


@pytest.mark.slow
def test_the_corpus_is_what_forge_writes_now():
    built = forge.build()
    on_disk = {p.name: p.read_bytes() for p in FORGED.iterdir()}
    assert sorted(built) == sorted(on_disk)
    stale = [name for name in built if built[name] != on_disk[name]]
    assert not stale, f"run python tests/support/forge.py: {stale[:10]}"
