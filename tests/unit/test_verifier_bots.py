"""--check-bots: every bot decision replayed with the published policy the log names."""

from __future__ import annotations

import hmac
import itertools
import struct

import pytest

from support.verifier_support import load, resign, simulated, write
from verifier.cli import main
from verifier.files import find_logs
from verifier.replay import verify_document
from verifier.spec import Deriver
from support import VECTORS



@pytest.fixture(scope="module")
def logs():
    files, _ = find_logs([str(simulated("classic13", "greedy,ev", 4, 401))])
    return [load(f) for f in files]


def invisible_hold_change(doc):
    """(event index, new hold) of a bot's roll whose hold can be changed without changing any die:
    position p was rerolled but its new value equals the old one, so holding p gives the same dice."""
    events = doc["events"]
    for i, e in enumerate(events):
        if e["type"] == "roll" and e["roll"] > 1:
            before = events[i - 1]["dice"]
            for p in range(5):
                if p not in e["hold"] and e["dice"][p] == before[p]:
                    return i, sorted(e["hold"] + [p])
    raise AssertionError("no such roll")


def test_simulated_bots_follow_their_policy(capsys, logs):
    directory = simulated("classic13", "greedy,ev", 4, 401)
    assert main(["--check-bots", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "4 OK" in out


def test_a_resigned_log_whose_bot_hold_differs_is_flagged(capsys, tmp_path, logs):
    doc = logs[0]
    i, hold = invisible_hold_change(doc)
    doc = resign({**doc, "events": [*doc["events"][:i], {**doc["events"][i], "hold": hold}, *doc["events"][i + 1:]]})
    path = write(tmp_path, "bot-hold.json", doc)
    assert main(["--no-check-bots", str(path)]) == 0  # the dice and scores are consistent: only the policy can tell
    capsys.readouterr()
    for checking in ([], ["--check-bots"]):  # bots are checked by default
        assert main([*checking, str(path)]) == 1
        out = capsys.readouterr().out
        assert f"bot.decision  event {i}  field hold: expected " in out  # the event that carries the decision


def test_a_bot_that_scores_instead_of_rolling_is_flagged(logs):
    from verifier.botcheck import PublishedBots
    doc = logs[1]
    events = doc["events"]
    # drop the last roll of a bot's turn: the same seat then scores earlier than its policy did. Most such
    # logs fail the replay (the points change); take the first whose dice and scores still verify
    dropped = (resign({**doc, "events": events[:i] + events[i + 1:]}) for i, e in enumerate(events)
               if e["type"] == "roll" and e["roll"] == 3)
    mutated = next((m for m in dropped if verify_document(m, "x", bots=None).ok), None)
    assert mutated is not None, "the sample logs have no turn where dropping the third roll keeps the score"
    r = verify_document(mutated, "x", bots=PublishedBots())
    assert r.checks["bot.decision"] == "fail"
    assert any(f.check == "bot.decision" and f.field == "type" for f in r.failures)


@pytest.mark.parametrize("field,value,expected", [
    ("version", "999", "1"), ("hash", "0" * 64, None), ("id", "nobody", None)])
def test_bot_identity(capsys, tmp_path, logs, field, value, expected):
    doc = logs[2]
    doc = resign({**doc, "header": {**doc["header"], "seats": [
        {**doc["header"]["seats"][0], "bot": {**doc["header"]["seats"][0]["bot"], field: value}},
        doc["header"]["seats"][1]]}})
    path = write(tmp_path, "identity.json", doc)
    assert main(["--check-bots", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"bot.identity  event -  field header.seats[0].bot.{field}" in out
    if expected:
        assert f'expected "{expected}"' in out


def spec_tiebreak(server_seed: bytes, game_id: str, client_seeds, seat: int, turn: int, roll: int, k: int) -> int:
    """SPEC §2.3 written out here: the first byte of the stream of msg("tiebreak", seat, turn, roll) below
    256 - 256 mod k, taken mod k."""
    def field(text):
        data = text.encode()
        return struct.pack(">I", len(data)) + data
    msg = (field("fairdice/v1") + field("tiebreak") + field(game_id) + struct.pack(">I", len(client_seeds))
           + b"".join(field(c) for c in client_seeds) + struct.pack(">III", seat, turn, roll))
    for block in itertools.count():
        for byte in hmac.digest(server_seed, msg + struct.pack(">I", block), "sha256"):
            if byte < 256 - 256 % k:
                return byte % k


def test_tiebreak_is_derived_as_the_spec_says():
    """The index among k tied candidates: one draw with m = k from msg("tiebreak", seat, turn, roll)."""
    d4 = next(v for v in load(VECTORS / "derivation.json") if v["purpose"] == "tiebreak" and v["count"] == 1)
    seed = bytes.fromhex(d4["server_seed"])
    assert Deriver(seed, d4["game_id"], d4["client_seeds"]).tiebreak(*d4["numbers"], d4["bound"]) == d4["values"][0]
    d = Deriver(bytes(32), "g", ["s", "t\u00e9"])
    positions = [(s, t, r) for s in range(2) for t in range(1, 14) for r in (1, 2, 3)]
    for k in (2, 3, 5, 7, 13, 43):  # 43: 256 mod 43 = 41 bytes rejected, the largest zone of a tie-break
        values = [d.tiebreak(*position, k) for position in positions]
        assert values == [spec_tiebreak(bytes(32), "g", ["s", "t\u00e9"], *position, k) for position in positions]
        if k <= 13:  # 78 draws: every index comes up (not all 43 of the largest k)
            assert set(values) == set(range(k))
