"""fairdice-verify on session logs (SPEC §10.9): its own notation and derivation held to SPEC §10's vectors, the
adversarial corpus of sessions (tests/vectors/forged_sessions/, made by tests/support/forge_sessions.py), a session of
200 mixed notations over two seed pairs, and the audit's uniformity test per die size."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from support import forge_sessions
from fairdice.notation import parse
from verifier import sessions as vs
from verifier.cli import main
from verifier.session_audit import chi2_sf, uniformity
from support import VECTORS as VECTOR_DIR

VECTORS = json.loads((VECTOR_DIR / "sessions.json").read_text())
FORGED = VECTOR_DIR / "forged_sessions"
INDEX = json.loads((FORGED / "index.json").read_text(encoding="ascii"))
CASES = {case["name"]: case for case in INDEX["cases"]}
EXIT = {"ok": 0, "fail": 1}


def run(tmp_path: Path, capsys, doc_or_file, trusted: list[str] = (), receipts=None, app_key=None,
        extra=()) -> tuple[int, dict]:
    """fairdice-verify --json on one session log; (exit code, the log's result)."""
    if isinstance(doc_or_file, Path):
        path = doc_or_file
    else:
        path = tmp_path / "session.json"
        path.write_text(json.dumps(doc_or_file))
    args = ["--json", *extra]
    if trusted:
        (tmp_path / "pubkey").write_text(trusted[0])
        args += ["--pubkey", str(tmp_path / "pubkey")]
    if receipts:
        (tmp_path / "receipts.json").write_text(json.dumps(receipts))
        args += ["--session-receipts", str(tmp_path / "receipts.json")]
    if app_key:
        args += ["--app-key", app_key]
    code = main([*args, str(path)])
    out = json.loads(capsys.readouterr().out)
    return code, out["games"][0] if out["games"] else out


def failed_checks(result: dict) -> set[str]:
    return {f["check"] for f in result["failures"]} | set(result["unlisted_failures"])


# --- SPEC §10's vectors, by the verifier's own implementation ----------------------------------------------------

@pytest.mark.parametrize("vec", VECTORS["dice"], ids=lambda v: f"M{v['sides']}-i{v['index']}")
def test_the_verifier_derives_each_die_vector(vec):
    assert vs.die(bytes.fromhex(vec["server_seed"]), vec["session_id"], vec["client_seed"], vec["nonce"],
                  vec["index"], vec["sides"]) == vec["face"]


@pytest.mark.parametrize("case", VECTORS["notation"]["valid"], ids=lambda c: c["text"])
def test_the_verifier_reads_valid_notation(case):
    count, sides, mode, keep, modifier = vs.parse_notation(case["text"])
    assert (count, sides, None if keep is None else f"{mode}{keep}", modifier) == (
        case["count"], case["sides"], case["keep"], case["modifier"])


@pytest.mark.parametrize("case", VECTORS["notation"]["invalid"], ids=lambda c: repr(c["text"]))
def test_the_verifier_refuses_malformed_notation_with_the_same_code(case):
    assert vs.parse_notation(case["text"]) == case["code"]


@pytest.mark.parametrize("text", ["4d6kh3", "d7", "1d6kh1", "100d1000kh99+5", "1d6+1-1", "1d6 kh1", "d06", "dd6",
                                  "1d6k3", "+3", "6d", "3d6kh", "3d6-", "７d6", "1d6\n", "999d6", "1d6kl7"])
def test_the_two_notation_readers_agree(text):
    from fairdice.errors import FairdiceError
    try:
        s = parse(text)
        core = (s.count, s.sides, s.keep_mode, s.keep, s.modifier)
    except FairdiceError as e:
        core = e.code
    assert vs.parse_notation(text) == core


def test_the_verifier_continues_into_the_next_block():
    rejected = b"\xff" * 32
    assert vs.face_of_stream(iter([rejected, rejected, bytes([4]) + bytes(31)]), 129, 1, 129) == 5
    assert vs.face_of_stream(iter([rejected, (1004).to_bytes(2, "big") * 16]), 1000, 2, 65000) == 5


def test_the_spec_session_verifies_and_warns_about_its_unsigned_pair(tmp_path, capsys):
    vec = VECTORS["session"]
    code, result = run(tmp_path, capsys, vec["log"], [vec["public_key"]], [r["receipt"] for r in vec["receipts"]])
    assert code == 0, result["failures"]
    assert result["checks"]["session.receipt"] == "pass"
    assert any("pair 0" in w and "could have added or dropped rolls" in w for w in result["warnings"])


def test_the_spec_session_with_the_app_key_fails_its_unsigned_pair(tmp_path, capsys):
    vec = VECTORS["session"]
    code, result = run(tmp_path, capsys, vec["log"], [vec["public_key"]], app_key=vec["app_key"])
    assert code == 1
    assert [(f["check"], f["event"], f["field"]) for f in result["failures"]] == [
        ("session.app_signature", 0, "app_key")]


# --- the adversarial corpus ------------------------------------------------------------------------------------

def test_the_corpus_is_up_to_date():
    assert forge_sessions.main(["--check"]) == 0, "run python tests/support/forge_sessions.py"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verifier_gives_each_forged_session_its_verdict(name, tmp_path, capsys):
    case = CASES[name]
    code, result = run(tmp_path, capsys, FORGED / case["file"], case["trusted_keys"], case["session_receipts"],
                       case["app_key"])
    assert code == EXIT[case["verdict"]], (case["what"], result["failures"])
    if case["verdict"] == "fail":
        assert case["check"] in failed_checks(result), (case["what"], result["failures"])


def test_every_session_check_is_exercised_by_the_corpus():
    failing = {case["check"] for case in INDEX["cases"] if case["verdict"] == "fail"}
    assert failing == set(vs.SESSION_CHECKS)


# --- a session of 200 mixed notations over two seed pairs ---------------------------------------------------------

NOTATIONS = ["4d6kh3", "2d20kl1", "d100", "3d6+2", "1d1000-7", "10d2", "6d6kl2", "d257", "2d129+1", "5d8",
             "d20", "100d6", "2d12kh1-3", "d1000", "8d10kl8"]


def two_hundred_rolls():
    notations = [NOTATIONS[i % len(NOTATIONS)] for i in range(200)]
    return forge_sessions.play("two-hundred", [("first pair", None, notations[:120]),
                                               ("second pair", None, notations[120:])])


def test_a_session_of_200_mixed_rolls_over_two_seed_pairs_verifies(tmp_path, capsys):
    played = two_hundred_rolls()
    rolls = [e for e in played.log["events"] if e["type"] == "roll"]
    assert len(rolls) == 200 and {e["pair"] for e in rolls} == {0, 1}
    code, result = run(tmp_path, capsys, played.log, [forge_sessions.OPERATOR_HEX], played.receipts)
    assert code == 0, result["failures"]
    assert result["status"] == "2 revealed pairs, 200 rolls"


@pytest.mark.parametrize("change", ["rolls", "total", "dice", "nonce"])
def test_a_changed_roll_fails(change, tmp_path, capsys):
    played = two_hundred_rolls()
    doc = copy.deepcopy(played.log)
    roll = [e for e in doc["events"] if e["type"] == "roll"][150]  # a roll of the second pair
    if change == "rolls":
        roll["rolls"][0] = roll["rolls"][0] % 6 + 1
    elif change == "total":
        roll["total"] -= 1
    elif change == "dice":
        roll["dice"] = "1d6"
    else:
        roll["nonce"] += 1
    code, result = run(tmp_path, capsys, forge_sessions.resigned(doc), [forge_sessions.OPERATOR_HEX])
    assert code == 1
    expected = {"rolls": "session.dice", "total": "session.total", "dice": "session.dice", "nonce": "session.nonce"}
    assert expected[change] in failed_checks(result)


def test_a_receipts_file_that_is_not_receipts_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "r.json").write_text(json.dumps([{"session_id": "x"}]))
    (tmp_path / "log.json").write_text(json.dumps(VECTORS["session"]["log"]))
    assert main(["--session-receipts", str(tmp_path / "r.json"), str(tmp_path / "log.json")]) == 2
    assert "--session-receipts: receipt 0" in capsys.readouterr().err
    assert main(["--app-key", "xyz", str(tmp_path / "log.json")]) == 2


# --- the audit: uniformity per die size -----------------------------------------------------------------------

def test_the_chi_square_tail_matches_known_quantiles():
    # upper 5 % points of the chi-square distribution (tables): df 1: 3.841, df 5: 11.070, df 19: 30.144,
    # df 99: 123.225, df 999: 1073.643
    for df, x in ((1, 3.841), (5, 11.070), (19, 30.144), (99, 123.225), (999, 1073.643)):
        assert chi2_sf(x, df) == pytest.approx(0.05, abs=2e-4)


def test_the_audit_tests_each_die_size_and_rejects_a_loaded_one():
    fair = {6: [1000] * 6, 20: [300] * 20, 1000: [1] * 1000}
    tests = {t["sides"]: t for t in uniformity(fair)}
    assert tests[6]["verdict"] == tests[20]["verdict"] == "uniform"
    assert tests[1000]["verdict"] == "too few dice"
    loaded = {6: [1000, 1000, 1000, 1000, 1000, 1200]}
    assert uniformity(loaded)[0]["verdict"] == "NOT UNIFORM"


def test_the_audit_of_session_logs_reports_their_dice(tmp_path, capsys):
    played = two_hundred_rolls()
    (tmp_path / "s.json").write_text(json.dumps(played.log))
    (tmp_path / "pub").write_text(forge_sessions.OPERATOR_HEX)
    code = main(["--audit", "--json", "--pubkey", str(tmp_path / "pub"), str(tmp_path / "s.json")])
    audit = json.loads(capsys.readouterr().out)["audit"]
    assert code == 0
    sizes = {t["sides"]: t for t in audit["session_uniformity"]}
    notations = [NOTATIONS[i % len(NOTATIONS)] for i in range(200)]
    six = sum(parse(text).count for text in notations if parse(text).sides == 6)
    assert sizes[6]["dice"] == six and sizes[6]["verdict"] == "uniform"


def test_in_a_batch_each_receipt_applies_to_its_own_session(tmp_path, capsys):
    one, two = two_hundred_rolls(), forge_sessions.play("other", [("x", None, ["1d6", "2d6"])])
    for name, played in (("one.json", one), ("two.json", two)):
        (tmp_path / name).write_text(json.dumps(played.log))
    (tmp_path / "receipts.json").write_text(json.dumps(one.receipts))
    (tmp_path / "pub").write_text(forge_sessions.OPERATOR_HEX)
    args = ["--json", "--pubkey", str(tmp_path / "pub"), "--session-receipts", str(tmp_path / "receipts.json")]
    assert main([*args, str(tmp_path / "one.json"), str(tmp_path / "two.json")]) == 0
    games = json.loads(capsys.readouterr().out)["games"]
    assert [g["checks"]["session.receipt"] for g in games] == ["pass", "skip"]
    assert main([*args, str(tmp_path / "two.json")]) == 1  # one log: every receipt must be its session's


def test_the_summary_counts_games_and_dice_sessions_apart(tmp_path, capsys):
    (tmp_path / "session.json").write_text(json.dumps(VECTORS["session"]["log"]))
    (tmp_path / "game.json").write_text((VECTOR_DIR / "log_short.json").read_text())
    main(["--allow-unsigned", str(tmp_path / "session.json"), str(tmp_path / "game.json")])
    assert "1 games, 1 dice sessions: " in capsys.readouterr().out.splitlines()[-1]
    main(["--json", "--allow-unsigned", str(tmp_path / "session.json"), str(tmp_path / "game.json")])
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["games"], summary["sessions"]) == (1, 1)
