"""SPEC §8.9 (`tests/vectors/players.json`): the players' signatures of a version 3 log, as a contract that the
core and the independent verifier are both held to (verify.js is held to it under Node, tests/node).

The bytes each signature covers are recomputed here from SPEC §5.6 and §5.7 with hashlib and json, and the
signatures checked with `cryptography` directly, so neither implementation vouches for itself.
"""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fairdice.errors import FairdiceError
from fairdice.game import Game
from fairdice.log import setup_from_header
from support.api_helpers import spec_canonical, spec_field
from verifier.replay import verify_document
from support import VECTORS

VECTOR = json.loads((VECTORS / "players.json").read_text(encoding="utf-8"))
LOG = VECTOR["log"]
SERVER_KEY = bytes.fromhex(VECTOR["public_key"])
COMMAND_FIELDS = {"client_seed_commit": ("type", "seat", "commitment", "player_key"),
                  "client_seed": ("type", "seat", "client_seed", "player_key", "salt"),
                  "roll": ("type", "seat", "turn", "roll", "hold"), "score": ("type", "seat", "turn", "category"),
                  "abandon": ("type", "seat", "reason")}


def chain_before(n: int) -> bytes:
    head = LOG["header"]
    digest = hashlib.sha256(spec_field("fairdice-chain/v2") + spec_field(head["game_id"]) + spec_canonical(head)).digest()
    for event in LOG["events"][:n]:
        digest = hashlib.sha256(digest + spec_canonical(event)).digest()
    return digest


def test_each_signed_message_is_the_spec_formula_and_each_signature_verifies():
    keys = {p["seat"]: p["player_key"] for p in VECTOR["players"]}
    assert [s["event"] for s in VECTOR["signed_events"]] == [
        i for i, e in enumerate(LOG["events"]) if e["type"] != "start" and e.get("seat") in keys]
    for step in VECTOR["signed_events"]:
        event = LOG["events"][step["event"]]
        command = {k: event[k] for k in COMMAND_FIELDS[event["type"]] if k in event}
        digest = chain_before(step["event"])
        message = (spec_field("fairdice-move/v3") + spec_field(LOG["header"]["game_id"])
                   + step["event"].to_bytes(4, "big") + digest + spec_canonical(command))
        assert step["command"] == command and step["chain"] == digest.hex() and step["message"] == message.hex()
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(keys[event["seat"]])).verify(
            bytes.fromhex(event["player_signature"]), message)
    checked = [(s["seat"], s["event"]) for s in VECTOR["signed_events"] if s["checked"]]
    assert checked == [(0, 7), (2, 11)]  # each seat's last event: one check per seat


def test_the_commitments_cover_each_players_key():
    for p in VECTOR["players"]:
        expected = hashlib.sha256(bytes.fromhex(p["salt"]) + bytes.fromhex(p["player_key"])
                                  + p["client_seed"].encode()).hexdigest()
        assert p["commitment"] == expected
        commit = next(e for e in LOG["events"] if e["type"] == "client_seed_commit" and e["seat"] == p["seat"])
        assert commit["commitment"] == expected and commit["player_key"] == p["player_key"]


def test_the_core_replays_the_vector_log_and_accepts_each_signature_exactly():
    """Fed the log's commands with their signatures, the core writes the log's events, byte for byte; with any
    one signature changed, it refuses that command."""
    head = LOG["header"]
    setup = setup_from_header(head, LOG["version"])
    seed = bytes.fromhex(LOG["final"]["server_seed"])

    def replay(events, tamper_at=None):
        game = Game(setup, seed, head)
        for i, e in enumerate(events):  # (i: the event's index in the log, its n)
            if e["type"] == "start":
                continue  # the core writes it after the last client seed
            sig = e.get("player_signature")
            if i == tamper_at:
                sig = sig[:-2] + ("00" if sig[-2:] != "00" else "01")
            signed = {"player_signature": sig, "event_count": i} if "player_signature" in e else {}
            kind = e["type"]
            if kind == "client_seed_commit":
                game.commit_client_seed(e["seat"], e["commitment"], player_key=e["player_key"], **signed)
            elif kind == "client_seed":
                game.supply_client_seed(e["seat"], e["client_seed"], e.get("salt"), player_key=e["player_key"], **signed)
            elif kind == "roll":
                game.roll(e["seat"], e["hold"], **signed)
            elif kind == "score":
                game.score(e["seat"], e["category"], **signed)
            elif kind == "abandon":
                game.abandon(e["seat"], e["reason"], **signed)
        return game

    assert replay(LOG["events"]).events == LOG["events"]
    humans = [i for i, e in enumerate(LOG["events"]) if "player_signature" in e]
    for i in humans:
        with pytest.raises(FairdiceError) as err:
            replay(LOG["events"][:i + 1], tamper_at=i)
        assert err.value.code == "invalid_player_signature"


def test_the_verifier_verifies_the_vector_and_refuses_a_change_to_a_checked_signature():
    assert verify_document(copy.deepcopy(LOG), "players.json", trusted_keys=[SERVER_KEY]).ok
    for step in VECTOR["signed_events"]:
        doc = copy.deepcopy(LOG)
        sig = doc["events"][step["event"]]["player_signature"]
        doc["events"][step["event"]]["player_signature"] = sig[:-2] + ("00" if sig[-2:] != "00" else "01")
        result = verify_document(doc, "players.json", trusted_keys=[SERVER_KEY], require_signature=False)
        failed = {f.check for f in result.failures}
        # a checked signature fails itself; an earlier one breaks the chain the seat's last signature covers
        assert "player.signature" in failed, (step, failed)


def test_the_vector_key_is_a_real_ed25519_key_pair():
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    for p in VECTOR["players"]:
        private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(p["private_key"]))
        assert private.public_key().public_bytes_raw().hex() == p["player_key"]
        with pytest.raises(InvalidSignature):
            private.public_key().verify(b"\0" * 64, b"not signed")
