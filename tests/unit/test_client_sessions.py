"""The Python client's `Session` against a real HTTP server on 127.0.0.1 (SPEC §10): it rolls, rotates, keeps
every receipt and verifies the log with its own app key; it refuses an answer whose receipt signs another history."""

from __future__ import annotations

import json

import pytest

from fairdice.edges.client import Client, ProtocolError, Session
from verifier.cli import main as verify


def test_a_signed_session_rolls_rotates_and_verifies(app_url, tmp_path, capsys):
    dice = Session.open(Client(app_url))
    dice.seed()
    totals = [dice.roll(n)["total"] for n in ("4d6kh3", "2d20kl1", "d100", "3d6+2", "10d2") * 4]
    assert len(totals) == 20
    dice.rotate()
    dice.roll("d1000")
    dice.rotate()
    report = dice.verify()  # raises VerificationError unless every check passes
    assert report.warnings == []  # every pair signed by the app: no roll could be added or dropped
    dice.save_receipts(tmp_path / "receipts.json")
    (tmp_path / "log.json").write_text(json.dumps(dice.log()))
    (tmp_path / "keys.json").write_text(json.dumps({"keys": Client(app_url).keys()}))
    assert verify(["--pubkey", str(tmp_path / "keys.json"), "--session-receipts", str(tmp_path / "receipts.json"),
                   "--app-key", dice.app_key.public_hex, str(tmp_path / "log.json")]) == 0
    assert "21 rolls" in capsys.readouterr().out


def test_an_unsigned_session_verifies_with_the_warning(app_url):
    dice = Session.open(Client(app_url), sign=False)
    dice.seed("my seed")
    dice.roll("2d6")
    dice.rotate()
    report = dice.verify()
    assert any("could have added or dropped rolls" in w for w in report.warnings)


def test_an_answer_whose_receipt_signs_another_history_is_refused(app_url):
    client = Client(app_url)
    dice = Session.open(client)
    dice.seed()
    real = client.request

    def lying(method, path, body=None, **kw):  # the server shows the app a total other than the one it signed
        answer = real(method, path, body, **kw)
        if path.endswith("/rolls"):
            answer["events"][0]["total"] += 1
        return answer

    client.request = lying
    with pytest.raises(ProtocolError, match="other than the one shown"):
        dice.roll("3d6")
