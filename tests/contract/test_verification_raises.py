"""Verification raises (issue 26): a forged signature or log is answered with an error that names the check it
fails (SPEC §7's ids), never with False or a falsy verdict that a caller could forget to look at.

- `fairdice.log.verify_signature` raises `SignatureError` (its `check`, its code `invalid_signature`);
- `fairdice.log.check_move_receipt` raises it for a receipt the game's key did not sign (`receipt.chain`);
- the client's `verify_log` returns a `Verification` only for a log that verifies and raises
  `VerificationError` (its `check`, every failed check in `checks`) for every other log, or the verifier's own
  error (a `VerifierError`) for a receipt it cannot use, where the command line exits 2.

Held to the adversarial corpus (tests/vectors/forged/, made by tests/forge.py as a dishonest operator who holds the
server key makes them), whose verdicts were set independently of this code by SPEC §7.
"""

from __future__ import annotations

import json

import pytest

from support import FORGED, forge
from fairdice.edges.client import ProtocolError, Verification, VerificationError, verify_log
from fairdice.errors import FairdiceError, SignatureError
from fairdice.log import canonical, chain, check_move_receipt, move_receipt, verify_signature
from verifier.errors import VerifierError

CASES = {case["name"]: case for case in json.loads((FORGED / "index.json").read_text(encoding="ascii"))["cases"]}
SIGNATURE_CHECKS = ("sig.commitment", "sig.final")


def load(case: dict):
    return json.loads((FORGED / case["file"]).read_bytes())


def signed_by_trusted_key(doc, check: str) -> tuple[str | None, bytes]:
    """The signature that `check` is about and the bytes it must sign (SPEC §5: the header; the whole document
    without its signature)."""
    if check == "sig.commitment":
        return doc.get("commitment_signature"), canonical(doc.get("header"))
    return doc.get("signature"), canonical({k: v for k, v in doc.items() if k != "signature"})


def forged_signature_cases() -> list[str]:
    """The corpus's logs whose signature check fails, one trusted key given: the forged, stale, missing,
    truncated and misplaced signatures."""
    return sorted(name for name, case in CASES.items()
                  if case["verdict"] == "fail" and case["check"] in SIGNATURE_CHECKS
                  and len(case["trusted_keys"]) == 1 and not case["allow_unsigned"])


@pytest.mark.parametrize("name", forged_signature_cases())
def test_a_forged_signature_raises_naming_its_check(name):
    case = CASES[name]
    signature, message = signed_by_trusted_key(load(case), case["check"])
    with pytest.raises(SignatureError) as refused:
        verify_signature(case["trusted_keys"][0], signature, message, case["check"])
    assert refused.value.check == case["check"] and refused.value.code == "invalid_signature"
    assert isinstance(refused.value, FairdiceError)  # the core's one base
    assert refused.value.as_dict()["check"] == case["check"]


def test_a_genuine_signature_returns_and_one_by_another_key_raises():
    case = CASES["genuine-yacht-ann-vs-greedy"]
    doc, key = load(case), case["trusted_keys"][0]
    for check in SIGNATURE_CHECKS:
        signature, message = signed_by_trusted_key(doc, check)
        assert verify_signature(key, signature, message, check) is None  # no bool to forget: it returns
        with pytest.raises(SignatureError) as refused:
            verify_signature(forge.OTHER_HEX, signature, message, check)
        assert refused.value.check == check
        with pytest.raises(SignatureError):  # the same signature over one byte more
            verify_signature(key, signature, message + b" ", check)


@pytest.mark.parametrize("key, signature", [("not hex", "00" * 64), ("00" * 31, "00" * 64), ("00" * 32, "zz"),
                                            ("00" * 32, None), (None, "00" * 64)])
def test_a_key_or_signature_that_is_not_one_raises_too(key, signature):
    with pytest.raises(SignatureError) as refused:
        verify_signature(key, signature, b"message", "sig.final")
    assert refused.value.check == "sig.final"


def test_a_move_receipt_signed_by_another_key_raises_receipt_chain():
    """The operator answers a move with a receipt its published key did not sign (made by another key, the key id
    the game's): the client's check names receipt.chain, and it is still a ValueError for its callers."""
    doc = load(CASES["genuine-yacht-ann-vs-greedy"])
    head, events = doc["header"], doc["events"][:3]
    genuine = move_receipt(forge.OPERATOR, head, events)
    check_move_receipt(genuine, forge.OPERATOR_HEX, head["game_id"], 3, expected_chain=chain(head, events))
    forged = {**move_receipt(forge.OTHER, head, events), "key_id": genuine["key_id"]}
    with pytest.raises(SignatureError) as refused:
        check_move_receipt(forged, forge.OPERATOR_HEX, head["game_id"], 3, expected_chain=chain(head, events))
    assert refused.value.check == "receipt.chain" and isinstance(refused.value, ValueError)


def client_cases() -> list[str]:
    """The cases the client's verify_log can be given as they are: at most one trusted key, signatures required
    (the client never allows an unsigned log), one log at a time."""
    return sorted(name for name, case in CASES.items()
                  if len(case["trusted_keys"]) <= 1 and not case["allow_unsigned"] and "audit_with" not in case)


@pytest.fixture(scope="module")
def yacht_table(optimal_table):
    """Some games of the corpus are played by the optimal bot (yacht): the verifier replays its decisions."""
    optimal_table("yacht")


@pytest.mark.parametrize("name", client_cases())
def test_the_client_raises_for_every_log_the_corpus_says_is_false(name, yacht_table):
    case = CASES[name]
    data = (FORGED / case["file"]).read_bytes()
    key = case["trusted_keys"][0] if case["trusted_keys"] else None
    verify = lambda: verify_log(data, key, case["receipt"], case.get("move_receipts") or ())  # noqa: E731
    if case["verdict"] == "ok":
        assert isinstance(verify(), Verification)
        return
    unusable_evidence = case["verdict"] == "error" and (case["receipt"] is not None or "move_receipts" in case)
    if unusable_evidence:  # the player's own receipts, not usable: the verifier's error, as the CLI's exit 2
        with pytest.raises(VerifierError):
            verify()
        return
    with pytest.raises(VerificationError) as refused:
        verify()
    failed = refused.value
    assert isinstance(failed, ProtocolError)  # a false log is the server breaking the protocol
    assert failed.problems and failed.check == failed.checks[0] == failed.problems[0].split(":")[0]
    if case["verdict"] == "fail":
        assert case["check"] in failed.checks, (case["what"], failed.problems)
    else:  # a file that is not a log at all
        assert failed.check == "log.format", (case["what"], failed.problems)


def test_a_verdict_has_no_truth_value_to_forget():
    """sigstore-python's move: nothing is left that is falsy for a false log, so `if verify_log(...)` cannot
    be the check; a Verification is made only for a log that verified."""
    assert "__bool__" not in vars(Verification) and "ok" not in Verification.__dataclass_fields__


@pytest.mark.e2e
@pytest.mark.parametrize("honest", [True, False])
def test_fairdice_play_says_and_exits_as_before(app_url, honest):
    """`fairdice play`'s end of game is unchanged by the raise: a log that verifies prints the verified line and
    exits 0; one that does not (here held to a receipt whose client seed the player never sent) prints the
    heading and one line per failed check, and exits 1."""
    import argparse
    import io

    from fairdice.edges import play
    from fairdice.edges.client import Client
    from fairdice.edges.playtext import ENGLISH, EN

    game = Client(app_url).new_game("yacht", bot=None)
    game.join()
    state = game.abandon()
    if not honest:
        game.receipt = {**game.receipt, "client_seed": "what the player never sent"}
    out = io.StringIO()
    term = play.Terminal(out=out, words=ENGLISH)
    code = play._finish(game, state, argparse.Namespace(save_log=None, save_receipts=None), term)
    lines = out.getvalue().splitlines()
    verified = EN["verified"].split("(")[0]
    if honest:
        assert code == 0 and any(line.startswith(verified) for line in lines), lines
        assert EN["not_verified"] not in lines
    else:
        assert code == 1 and not any(line.startswith(verified) for line in lines), lines
        heading = lines.index(EN["not_verified"])
        assert lines[heading + 1].startswith("  receipt.match: event 0 client_seed"), lines
