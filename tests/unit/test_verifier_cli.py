"""fairdice-verify as a command: outputs, exit codes, keys, unsigned / unfinished / abandoned logs,
garbage input, the audit, and the independence of the verifier package."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fairdice.game import Game, Setup
from fairdice.log import build_log, open_log
from support.verifier_support import PUBLIC_HEX, SERVER_KEY, SIGNER, core_log, load, server_code_blocked_env, simulated, write
from support.verifier_support import resign as resign_all
from verifier import audit
from verifier.cli import main
from verifier.files import find_logs
from support import REPO as ROOT

HUMANS = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def sim_dir():
    return simulated("yacht", "greedy,ev", 6, 301)


@pytest.fixture(scope="module")
def one_log(sim_dir):
    return find_logs([str(sim_dir)])[0][0]


def unsigned(doc):
    return {k: v for k, v in doc.items() if k not in ("signature", "commitment_signature")}


# ----------------------------------------------------------------- plain verification

def test_a_directory_verifies(capsys, sim_dir):
    code, out, err = run(capsys, sim_dir)
    assert code == 0
    lines = out.splitlines()
    assert sum(line.startswith("OK ") for line in lines) == 6
    assert "6 games: 6 OK, 0 FAIL" in lines[-1]
    assert "ORIGIN WAS NOT CHECKED" in lines[-1]  # no --pubkey: the origin is not established


def test_failure_names_check_event_field_expected_found(capsys, tmp_path, one_log):
    doc = load(one_log)
    i = next(k for k, e in enumerate(doc["events"]) if e["type"] == "roll")
    doc["events"][i]["dice"][2] = doc["events"][i]["dice"][2] % 6 + 1
    path = write(tmp_path, "bad.json", doc)
    code, out, _ = run(capsys, path)
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("FAIL") and doc["header"]["game_id"] in first and str(path) in first
    assert f"roll.dice  event {i}  field dice[2]: expected " in out
    assert "sig.final  event -  field signature" in out


def test_verbose_prints_the_game_turn_by_turn(capsys, one_log):
    code, out, _ = run(capsys, "-v", one_log)
    assert code == 0
    doc = load(one_log)
    turns = [line for line in out.splitlines() if line.startswith("  seat ")]
    assert len(turns) == sum(e["type"] == "score" for e in doc["events"])
    score = next(e for e in doc["events"] if e["type"] == "score")
    assert f"{score['category']} {score['points']}" in turns[0]
    held = next(e for e in doc["events"] if e["type"] == "roll" and e["hold"])
    assert f"[{held['dice'][held['hold'][0]]}]" in out  # held dice are marked


def test_json_output(capsys, sim_dir):
    code, out, err = run(capsys, "--json", sim_dir)
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"]["games"] == doc["summary"]["ok"] == 6
    game = doc["games"][0]
    assert game["ok"] and game["checks"]["roll.dice"] == "pass" and game["checks"]["bot.decision"] == "pass"
    assert "OK" in err  # human text goes to stderr


def test_python_dash_m(sim_dir):
    p = subprocess.run([sys.executable, "-m", "verifier", str(sim_dir)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "6 OK" in p.stdout


# ------------------------------------------------------------------- signatures, keys

def test_an_unsigned_log_fails_unless_allowed(capsys, tmp_path, one_log):
    path = write(tmp_path, "unsigned.json", unsigned(load(one_log)))
    code, out, _ = run(capsys, path)
    assert code == 1 and "sig.final" in out and "sig.commitment" in out
    code, out, _ = run(capsys, "--require-signature", path)  # the old flag: the default now
    assert code == 1 and "sig.final" in out and "sig.commitment" in out
    code, out, _ = run(capsys, "--allow-unsigned", path)
    assert code == 0 and "UNSIGNED" in out and "1 unsigned" in out and "not that the server made them" in out


def test_an_unsigned_log_is_still_replayed_in_full(capsys, tmp_path, one_log):
    doc = unsigned(load(one_log))
    doc["events"][-1]["total"] += 1
    code, out, _ = run(capsys, "--allow-unsigned", write(tmp_path, "u.json", doc))
    assert code == 1 and "score.points" in out and "sig.final" not in out


@pytest.mark.parametrize("form", ["hex", "pem", "keys-json"])
def test_pubkey_forms(capsys, tmp_path, form):
    rng = random.Random(1)
    log = write(tmp_path, "g.json", core_log(Setup.build("k1", "yatzy", HUMANS), rng.randbytes(32), rng))
    if form == "hex":
        key = write(tmp_path, "key.hex", PUBLIC_HEX + "\n")
    elif form == "pem":
        pem = Ed25519PrivateKey.from_private_bytes(SERVER_KEY).public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        key = tmp_path / "key.pem"
        key.write_bytes(pem)
    else:
        key = write(tmp_path, "keys.json", {"keys": [{"key_id": SIGNER.key_id, "public_key": PUBLIC_HEX,
                                                      "algorithm": "Ed25519"}]})
    code, out, _ = run(capsys, "--pubkey", key, log)
    assert code == 0 and "trusted key" in out


def test_a_log_signed_by_another_key_fails_against_the_trusted_one(capsys, tmp_path, one_log):
    other = Ed25519PrivateKey.from_private_bytes(bytes(32)).public_key().public_bytes_raw().hex()
    key = write(tmp_path, "other.hex", other)
    code, out, _ = run(capsys, "--pubkey", key, one_log)
    assert code == 1 and "log.key  event -  field header.public_key" in out


def test_bad_key_file_is_a_usage_error(capsys, tmp_path, one_log):
    key = write(tmp_path, "nonsense.txt", "hello")
    code, _, err = run(capsys, "--pubkey", key, one_log)
    assert code == 2 and "nonsense.txt: --pubkey: neither" in err and "event -" not in err  # nothing to name there


def test_key_id_must_derive_from_the_key(capsys, tmp_path, one_log):
    doc = load(one_log)
    doc["header"]["key_id"] = "0" * 16
    code, out, _ = run(capsys, write(tmp_path, "kid.json", doc))
    assert code == 1 and "log.key  event -  field header.key_id" in out


# ------------------------------------------------ unfinished, abandoned, random first

def human_game(first=0, rules="classic13"):
    game = Game(Setup.build("h1", rules, HUMANS, first=first), server_seed=bytes(32))
    return game, open_log(game, SIGNER)


def test_unfinished_game_fails_plainly(capsys, tmp_path):
    game, opened = human_game()
    game.supply_client_seed(0, "seed")
    game.roll(0)
    game.roll(0, hold=[1, 2])
    game.score(0, "chance")
    doc = build_log(opened, game, SIGNER)
    assert doc["final"] is None
    code, out, _ = run(capsys, write(tmp_path, "open.json", doc))
    assert code == 1
    assert "not over" in out and "server seed is not revealed" in out
    # the rest was still checked with the logged dice: a wrong total is found
    doc["events"][-1]["total"] += 5
    code, out, _ = run(capsys, write(tmp_path, "open2.json", doc))
    assert "score.points" in out


@pytest.mark.parametrize("moves", [0, 1, 2, 7])
def test_abandoned_game_verifies_up_to_the_abandon(capsys, tmp_path, moves):
    game, opened = human_game(first="random")
    if moves:
        game.supply_client_seed(0, "my seed")
    from fairdice.bots import play_bots
    play_bots(game)
    for _ in range(moves - 1):
        if game.current_seat == 0:
            game.roll(0) if game.rolls_made == 0 else game.score(0, sorted(game.scoring_options())[0])
        play_bots(game)
    if moves % 2:  # SPEC §4.3: the seat to move gives up, or the server after a timeout
        game.abandon(0, "player")
    else:
        game.abandon(None, "timeout")
    doc = build_log(opened, game, SIGNER)
    code, out, _ = run(capsys, write(tmp_path, "ab.json", doc))
    assert code == 0, out
    assert "abandoned" in out and "verified up to the abandon event" in out
    doc["events"].pop()  # an abandoned game must end with its abandon event
    code, out, _ = run(capsys, write(tmp_path, "ab2.json", doc))
    assert code == 1 and "game.complete" in out


def test_random_first_rolloff_is_rederived(capsys, tmp_path):
    seats = [{"type": "human", "name": n} for n in "abcd"]
    rng = random.Random(5)
    rolloffs = 0
    for k in range(6):
        doc = core_log(Setup.build(f"ro{k}", "yacht", seats, first="random"), rng.randbytes(32), rng,
                       abandon_after=8)
        start = next(e for e in doc["events"] if e["type"] == "start")
        rolloffs += len(start["rolloff"])
        code, out, _ = run(capsys, write(tmp_path, f"ro{k}.json", doc))
        assert code == 0, out
        start["rolloff"][0][0]["dice"][0] = start["rolloff"][0][0]["dice"][0] % 6 + 1
        code, out, _ = run(capsys, write(tmp_path, f"ro{k}.json", doc))
        assert code == 1 and "start.first" in out
    assert rolloffs >= 6


@pytest.mark.parametrize("seed", ["", "x" * 257, "tab\there", "zero\u200dwidth", "\ud800", "\U000f0000"])
def test_invalid_client_seeds_are_flagged(tmp_path, seed):
    from verifier.replay import verify_document
    rng = random.Random(2)
    doc = core_log(Setup.build("cs", "yacht", HUMANS), rng.randbytes(32), rng, abandon_after=4)
    doc["events"][0]["client_seed"] = seed
    r = verify_document(resign_all(doc), "cs")
    assert [f.check for f in r.failures][:1] == ["client_seed.valid"]
    assert r.failures[0].event == 0 and r.failures[0].field == "client_seed"


def test_client_seed_problems(tmp_path):
    from verifier.replay import verify_document
    rng = random.Random(4)
    seats = [{"type": "human", "name": "a"}, {"type": "human", "name": "b"}]
    # version 1: the two client seeds are the first events (version 2 puts the commitments first)
    doc = core_log(Setup.build("cs2", "yacht", seats, version=1), rng.randbytes(32), rng, abandon_after=6)
    seed_events = doc["events"][:2]
    dup = resign_all({**doc, "events": [seed_events[0]] + doc["events"]})
    assert [(f.check, f.event, f.field) for f in verify_document(dup, "x").failures][:1] == [
        ("client_seed.valid", 1, "seat")]
    # seat 0's seed after the start: a client seed out of place is client_seed.valid (SPEC §7), found at the start
    late = resign_all({**doc, "events": doc["events"][1:3] + [seed_events[0]] + doc["events"][3:]})
    assert [(f.check, f.event) for f in verify_document(late, "x").failures][:1] == [("client_seed.valid", 1)]
    operator = resign_all({**doc, "events": [{**seed_events[0], "seat": None}] + doc["events"][1:]})
    assert verify_document(operator, "x").failures[0].check == "client_seed.valid"


# ---------------------------------------------------------------------- bad input

@pytest.mark.parametrize("content,why", [
    ("", "empty file"), ("   \n", "empty file"), ("{not json", "not JSON"), ("[1, 2]", "not a JSON object"),
    ('"log"', "not a JSON object"), ("null", "not a JSON object"), (b"\xff\xfe\x00", "not UTF-8"),
    ('{"a": NaN}', "not JSON"),
])
def test_garbage_is_exit_2(capsys, tmp_path, content, why):
    path = tmp_path / "garbage.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, out, _ = run(capsys, path)
    assert code == 2
    assert f"ERROR {path}: {why}" in out and "event -" not in out


def test_unreadable_file_and_missing_path(capsys, tmp_path):
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere")
    code, out, _ = run(capsys, tmp_path)
    assert code == 2 and "cannot read the file" in out
    code, _, err = run(capsys, tmp_path / "missing.json")
    assert code == 2 and "missing.json: no such file" in err


def test_garbage_beats_failure_and_usage_errors(capsys, tmp_path, one_log):
    doc = load(one_log)
    doc["final"]["totals"][0]["total"] += 1
    failing = write(tmp_path, "failing.json", doc)
    assert run(capsys, failing)[0] == 1  # on its own: a failed check
    (tmp_path / "garbage").mkdir()
    write(tmp_path / "garbage", "a.json", "]")
    code, out, _ = run(capsys, tmp_path / "garbage", failing, one_log)
    assert code == 2 and "2 games: 1 OK, 1 FAIL; 1 files are not logs" in out  # the other two still verified
    assert main([]) == 2
    assert main(["--no-such-option", one_log]) == 2
    code, _, err = run(capsys, tmp_path / "empty-dir")  # not there
    assert code == 2 and "empty-dir: no such file" in err


def test_an_object_that_is_not_a_log_fails_log_format(capsys, tmp_path):
    code, out, _ = run(capsys, write(tmp_path, "obj.json", {"hello": "world"}))
    assert code == 1 and "log.format" in out


# ------------------------------------------------------------------------- audit

def test_chi_square_survival_function():
    # reference values of the chi-square distribution with 5 degrees of freedom
    for x, p in [(1.145476, 0.95), (4.35146, 0.5), (11.0705, 0.05), (15.0863, 0.01), (20.515, 0.001)]:
        assert audit.chi2_sf_df5(x) == pytest.approx(p, rel=1e-4)
    assert audit.chi2_sf_df5(0) == 1.0 and audit.chi2_sf_df5(200) < 1e-35


def test_biased_faces_are_flagged():
    a = audit.Audit()
    a.faces["seat"][0] = [1000, 1000, 1000, 1000, 1000, 1250]
    a.faces["roll"][0] = [1000, 1000, 1000, 1000, 1000, 1250]
    a.faces["position"][2] = [1000, 1000, 1000, 1000, 1000, 1250]
    rep = a.report()
    verdicts = {t["group"]: t["verdict"] for t in rep["uniformity"]}
    assert verdicts["overall"] == verdicts["seat 0"] == verdicts["roll 1"] == verdicts["position 2"] == "NOT UNIFORM"
    assert verdicts["seat 1"] == verdicts["position 0"] == "too few dice"
    # chi-square 50 on 5 degrees of freedom: p = 1.39e-9, far below 0.001 / 15
    assert rep["findings"] == [f"faces not uniform: {group} (p = 1.39e-09)"
                               for group in ("overall", "seat 0", "roll 1", "position 2")]


def test_audit_text_json_html(capsys, tmp_path, sim_dir):
    html = tmp_path / "audit.html"
    code, out, _ = run(capsys, "--audit", "--html", html, sim_dir)
    assert code == 0, out
    assert "uniformity of faces" in out and "Bonferroni" in out and "seed reuse: none" in out
    assert "yacht     greedy" in out and "yacht     ev" in out
    page = html.read_text()
    assert page.startswith("<!doctype html>") and "<svg" in page and "<style>" in page
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page and "src=" not in page
    code, out, err = run(capsys, "--audit", "--json", sim_dir)
    rep = json.loads(out)["audit"]
    assert rep["verified"] == 6 and rep["thresholds"]["tests"] == 15
    assert rep["fresh_dice"] == rep["uniformity"][0]["dice"] > 0
    # the face counts, counted here straight from the logs: only dice that were not held
    counts = {"overall": [0] * 6, "roll 1": [0] * 6, "roll 2": [0] * 6, "roll 3": [0] * 6, "position 4": [0] * 6}
    for path in find_logs([str(sim_dir)])[0]:
        for e in load(path)["events"]:
            if e["type"] == "roll":
                for p, face in enumerate(e["dice"]):
                    if p not in e["hold"]:
                        counts["overall"][face - 1] += 1
                        counts[f"roll {e['roll']}"][face - 1] += 1
                        if p == 4:
                            counts["position 4"][face - 1] += 1
    by_group = {t["group"]: t["counts"] for t in rep["uniformity"]}
    assert {g: by_group[g] for g in counts} == counts
    assert {s["player"] for s in rep["scores"]} == {"greedy", "ev"}
    assert set(rep["scores"][0]["quantiles"]) == {"p5", "p25", "p50", "p75", "p95"}


def test_audit_finds_seed_reuse(capsys, tmp_path):
    rng = random.Random(9)
    seed = rng.randbytes(32)
    for k in range(2):
        write(tmp_path, f"r{k}.json", core_log(Setup.build(f"reuse-{k}", "yatzy", HUMANS), seed, rng))
    write(tmp_path, "copy.json", load(tmp_path / "r0.json"))  # the same game twice is only noted
    code, out, _ = run(capsys, "--audit", tmp_path)
    assert code == 1
    assert "same commitment" in out and "same server_seed" in out and "reuse-0" in out and "reuse-1" in out
    assert "note: game reuse-0 appears in 2 files" in out
    assert "same game_id" not in out
    other = core_log(Setup.build("reuse-1", "yatzy", HUMANS), rng.randbytes(32), rng)  # another game, same id
    write(tmp_path, "r2.json", other)
    code, out, _ = run(capsys, "--audit", tmp_path)
    assert code == 1 and "same game_id: reuse-1" in out


@pytest.mark.slow  # 80 simulated games, audited twice: about 4 seconds
def test_audit_on_all_cores_matches_one_core(capsys):
    logs = simulated("classic13", "greedy,greedy", 80, 302)
    code1, out1, _ = run(capsys, "--audit", "--json", "--jobs", "1", logs)
    code2, out2, _ = run(capsys, "--audit", "--json", "--jobs", "2", logs)
    assert code1 == code2 == 0
    assert json.loads(out1) == json.loads(out2)


def test_a_missing_table_met_by_a_worker_process_is_a_usage_error(capsys, tmp_path, optimal_table):
    """With 64 logs or more the logs are shared among worker processes, each handed the run's options as an
    argument; an optimal game whose table is not where --tables says is met there, not in the first log (which
    this process verifies before the workers start), and still ends the run with one error line and exit 2,
    as it does on one process."""
    optimal_table("yacht")  # the bots play from the run's cache; the verifier is pointed at an empty directory
    logs = tmp_path / "logs"
    logs.mkdir()
    (greedy,) = sorted(simulated("yacht", "greedy", 1, 303).glob("*.json"))
    (logs / "a-greedy.json").write_bytes(greedy.read_bytes())  # sorted first: verified here, needs no table
    for path in simulated("yacht", "optimal", 64, 304).glob("*.json"):
        (logs / path.name).write_bytes(path.read_bytes())
    empty = tmp_path / "no-tables"
    empty.mkdir()
    for jobs in ("1", "2"):
        code, _, err = run(capsys, "--jobs", jobs, "--tables", empty, logs)
        assert code == 2, (jobs, err)
        assert err.startswith("fairdice-verify: error: ") and "no optimal table for yacht" in err, (jobs, err)
        assert "Traceback" not in err


# ------------------------------------------------------------------ independence

def test_verifier_imports_nothing_of_the_server():
    """Only the standard library and cryptography: the bots too are the verifier's own (botcheck)."""
    stdlib = set(sys.stdlib_module_names)
    for path in sorted((ROOT / "verifier").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in stdlib or top == "cryptography", f"{path.name} imports {name}"


def test_verifier_runs_with_the_server_code_unavailable(sim_dir, tmp_path):
    env = server_code_blocked_env(tmp_path)
    p = subprocess.run([sys.executable, "-m", "verifier", "--no-check-bots", "--audit", "--html",
                        str(tmp_path / "a.html"), str(sim_dir)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "bot decisions NOT checked" in p.stdout
    for checking in ([], ["--check-bots"]):  # checked by default, by the verifier's own policies (SPEC §4.5)
        p = subprocess.run([sys.executable, "-m", "verifier", *checking, str(sim_dir)],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
        assert p.returncode == 0 and "NOT checked" not in p.stdout, p.stdout + p.stderr
