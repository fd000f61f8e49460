"""The verifier agrees with the vectors of SPEC.md §8 (tests/vectors/*.json)."""

from __future__ import annotations

import hashlib
import hmac
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from verifier import seed_rule
from verifier.replay import client_seed_ok, seat_name_ok, verify_document
from verifier.spec import CATEGORIES, Deriver, options, points, yahtzee_bonus
from support import vectors



def u32(n: int) -> bytes:
    """SPEC §1's u32, written here so that the stream below does not lean on the verifier's own."""
    return struct.pack(">I", n)


def stream_trace(seed: bytes, msg: bytes, k: int, m: int) -> tuple[bytes, list[int]]:
    """The bytes read to draw k values below m, and the rejected ones (SPEC §2.3, by hand)."""
    read, rejected, taken, i = bytearray(), [], 0, 0
    while taken < k:
        for b in hmac.digest(seed, msg + u32(i), "sha256"):
            read.append(b)
            if b >= 256 - 256 % m:
                rejected.append(b)
            else:
                taken += 1
                if taken == k:
                    break
        i += 1
    return bytes(read), rejected


def test_derivation_vectors():
    for v in vectors("derivation.json"):
        seed = bytes.fromhex(v["server_seed"])
        d = Deriver(seed, v["game_id"], v["client_seeds"])
        msg = d.message(v["purpose"], *v["numbers"])
        assert msg.hex() == v["message"]
        assert hashlib.sha256(seed).hexdigest() == v["commitment"]
        assert hmac.digest(seed, msg + u32(0), "sha256").hex() == v["block0"]
        k = len(v["values"])
        read, rejected = stream_trace(seed, msg, k, v["bound"])
        assert (read.hex(), rejected) == (v["bytes_read"], v["rejected"])
        assert k == v["count"]
        if v["purpose"] == "roll":
            assert d.roll(*v["numbers"]) == v["values"]
        elif v["purpose"] == "rolloff":
            assert d.rolloff(*v["numbers"]) == v["values"]
        elif k == 1:
            assert d.tiebreak(*v["numbers"], v["bound"]) == v["values"][0]
        else:  # more values than the game draws from one message: the draw itself
            assert d.draw(msg, k, v["bound"]) == v["values"]
        if len(read) > 32:
            assert hmac.digest(seed, msg + u32(1), "sha256").hex() == v["block1"]
    assert any(v["rejected"] for v in vectors("derivation.json"))
    assert any(len(v["bytes_read"]) > 64 for v in vectors("derivation.json"))  # some vector reads block(1)


def test_the_verifier_keeps_the_client_seed_rule_of_the_vector_file():
    rule = vectors("client_seed_rule.json")
    assert sorted(map(list, seed_rule.GENERIC_REFUSED)) == sorted(rule["generic_excluded"])
    assert list(map(list, seed_rule.SEPARATORS_AND_FORMAT)) == rule["excluded_ranges"]
    assert list(seed_rule.NONCHARACTER_LOW16) == rule["noncharacter_low16"]
    assert list(seed_rule.CLIENT_SEED_LENGTH) == rule["client_seed_length"]
    assert list(seed_rule.SEAT_NAME_LENGTH) == rule["seat_name_length"]
    for e in rule["valid_examples"]:
        assert client_seed_ok(e["text"]), e["why"]
    for e in rule["invalid_examples"]:
        assert not client_seed_ok(e["text"]), e["why"]
    for e in rule["valid_seat_names"]:
        assert seat_name_ok(e["text"]), e["why"]
    for e in rule["invalid_seat_names"] + rule["invalid_examples"]:
        assert not seat_name_ok(e["text"]), e["why"]


def test_unassigned_code_points_verify_and_a_refused_seat_name_fails_the_format():
    from fairdice.game import Game, Setup
    from fairdice.log import build_log, open_log
    from support.verifier_support import SIGNER, resign

    setup = Setup.build("unicode-15", "yacht", [{"type": "human", "name": "\U0001FAE8 ann"},
                                                {"type": "bot", "bot": "greedy"}])
    game = Game(setup, hashlib.sha256(b"unicode 15").digest())
    opened = open_log(game, SIGNER)
    game.supply_client_seed(0, "\U0001FAE8 unassigned in Unicode 14 \u2065")
    game.roll(0)
    game.abandon(0)
    doc = build_log(opened, game, SIGNER)
    assert verify_document(doc, "u.json", trusted_keys=[SIGNER.public_key]).ok
    doc["header"]["seats"][0]["name"] = "a\u200bb"
    r = verify_document(resign(doc), "u.json", trusted_keys=[SIGNER.public_key])
    assert [(f.check, f.event, f.field) for f in r.failures] == [("log.format", None, "header.seats")]


def test_scoring_vectors():
    seen = set()
    for v in vectors("scoring.json"):
        assert points(v["rules"], v["category"], v["dice"]) == v["points"], v
        seen.add((v["rules"], v["category"]))
    assert seen == {(r, c) for r, cats in CATEGORIES.items() for c in cats}  # every category of every rule set


def test_joker_vectors():
    for v in vectors("joker.json"):
        card = v["card"]
        assert set(card) == set(CATEGORIES[v["rules"]])
        mine = options(v["rules"], card, v["dice"], v["upper_first"])
        expected = {c: (o["points"], o["joker"]) for c, o in v["legal"].items()}
        assert mine == expected, v["name"]
        for o in v["legal"].values():
            assert yahtzee_bonus(v["rules"], card, v["dice"]) == o["yahtzee_bonus"], v["name"]


def test_short_log_vector():
    doc = vectors("log_short.json")
    r = verify_document(doc, "log_short.json", verbose=True)
    assert r.ok, r.failures
    assert r.signed and r.status == "finished"
    # the vector key of tests/vectors/build.py, given as the trusted key
    key = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"fairdice test vector signing key").digest())
    trusted = [key.public_key().public_bytes_raw()]
    assert trusted[0].hex() == doc["header"]["public_key"]
    assert verify_document(doc, "log_short.json", trusted_keys=trusted).ok
    assert sum(line.startswith("  seat ") for line in r.replay) == len(CATEGORIES[doc["header"]["rules"]])


def test_the_stream_goes_on_past_block0_and_the_fast_roll_is_the_plain_one():
    import random
    rng = random.Random(11)
    for _ in range(300):
        d = Deriver(rng.randbytes(32), f"g{rng.random()}", [str(rng.random()) for _ in range(rng.randint(1, 3))])
        seat, turn, roll = rng.randrange(6), rng.randint(1, 15), rng.randint(1, 3)
        assert d.roll(seat, turn, roll) == d.five_dice("roll", seat, turn, roll)
        msg = d.message("tiebreak", seat, turn, roll)
        values = []
        for b in (hmac.digest(d.key, msg + u32(0), "sha256") + hmac.digest(d.key, msg + u32(1), "sha256")
                  + hmac.digest(d.key, msg + u32(2), "sha256")):
            if b < 256 - 256 % 7:
                values.append(b % 7)
        assert d.draw(msg, 40, 7) == values[:40]  # 40 values need more than one block
