"""Sessions in the core (SPEC §10): the notation, the derivation of each die, the state machine.

Expected values come from SPEC §10's vectors (tests/vectors/sessions.json, whose dice are traced from HMAC by
the vector builder, not by the core), from counting every candidate value, or from the rules as SPEC states them."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from fairdice import derive
from fairdice.errors import FairdiceError, NotNowError
from fairdice.log import Signer
from fairdice.notation import parse
from fairdice.sessions import (AppKey, Session, acceptance_bound, candidate_width, die_face, die_message,
                               face_from_blocks, receipt, revealed_events, roll_command, rotate_command,
                               session_header, session_log, start_chain)
from support import VECTORS as VECTOR_DIR

VECTORS = json.loads((VECTOR_DIR / "sessions.json").read_text())
SIGNER = Signer.from_private_bytes(hashlib.sha256(b"sessions core test key").digest())


def seed(p: int) -> bytes:
    return hashlib.sha256(f"core test seed {p}".encode()).digest()


def new_session(session_id: str = "core-1") -> Session:
    head = session_header(session_id, seed(0), seed(1), SIGNER.key_id, SIGNER.public_key.hex())
    return Session(head, {0: seed(0), 1: seed(1)})


# --- notation ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", VECTORS["notation"]["valid"], ids=lambda c: c["text"])
def test_valid_notation_parses_as_the_vector_says(case):
    spec = parse(case["text"])
    keep = None if spec.keep is None else f"{spec.keep_mode}{spec.keep}"
    assert (spec.count, spec.sides, keep, spec.modifier) == (case["count"], case["sides"], case["keep"],
                                                              case["modifier"])


@pytest.mark.parametrize("case", VECTORS["notation"]["invalid"], ids=lambda c: repr(c["text"]))
def test_malformed_notation_is_refused_with_the_code_of_the_rule_it_breaks(case):
    with pytest.raises(FairdiceError) as caught:
        parse(case["text"])
    assert caught.value.code == case["code"]


@pytest.mark.parametrize("text", [None, 6, ["1d6"], "1d6" + "0" * 40])
def test_notation_that_is_not_short_text_is_a_syntax_error(text):
    with pytest.raises(FairdiceError) as caught:
        parse(text)
    assert caught.value.code == "dice_syntax"


def test_keep_highest_and_lowest_drop_by_rank_ties_to_the_lower_index():
    # faces [3, 5, 3, 1]: kh2 keeps 5 (index 1) and the first 3 (index 0); kl2 keeps 1 (3) and the first 3 (0)
    assert parse("4d6kh2").dropped([3, 5, 3, 1]) == [2, 3]
    assert parse("4d6kl2").dropped([3, 5, 3, 1]) == [1, 2]
    assert parse("4d6kh2+3").total([3, 5, 3, 1]) == 11
    assert parse("4d6kl2-10").total([3, 5, 3, 1]) == -6
    assert parse("4d6").dropped([3, 5, 3, 1]) == []


# --- the derivation -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("vec", VECTORS["dice"], ids=lambda v: f"M{v['sides']}-i{v['index']}")
def test_each_die_vector(vec):
    msg = die_message(vec["session_id"], vec["client_seed"], vec["nonce"], vec["index"])
    assert msg.hex() == vec["message"]
    assert die_face(bytes.fromhex(vec["server_seed"]), msg, vec["sides"]) == vec["face"]
    assert (candidate_width(vec["sides"]), acceptance_bound(vec["sides"])) == (vec["width"], vec["accept_below"])


@pytest.mark.parametrize("sides", [2, 3, 6, 7, 20, 100, 129, 255, 256, 257, 999, 1000])
def test_every_face_is_reached_by_the_same_number_of_candidate_values(sides):
    """No modulo bias: over every value one candidate can take, each face is the answer equally often and every
    other value is rejected (the stream goes on)."""
    width = candidate_width(sides)
    faces = Counter()
    for value in range(256 ** width):
        block = value.to_bytes(width, "big") * (32 // width)
        try:
            faces[face_from_blocks([block], sides)] += 1
        except ValueError:  # every candidate of this block rejected, and no block after it
            faces["rejected"] += 1
    rejected = faces.pop("rejected", 0)
    assert set(faces) == set(range(1, sides + 1))
    assert set(faces.values()) == {(256 ** width - rejected) // sides}
    assert rejected == 256 ** width % sides


@pytest.mark.parametrize("sides, width", [(129, 1), (1000, 2)])
def test_a_wholly_rejected_block_goes_on_into_the_next(sides, width):
    rejected = (256 ** width - 1).to_bytes(width, "big") * (32 // width)
    accepted = (4).to_bytes(width, "big") + bytes(32 - width)  # 4 < L: face 5
    assert face_from_blocks([rejected, rejected, accepted], sides) == 5


# --- the state machine -------------------------------------------------------------------------------------

def test_a_roll_before_the_client_seed_is_refused():
    session = new_session()
    with pytest.raises(NotNowError) as caught:
        session.roll("1d6")
    assert caught.value.code == "client_seed_required" and session.tail.chain.count == 0


def test_a_pair_takes_one_client_seed():
    session = new_session()
    session.supply_client_seed("mine")
    with pytest.raises(NotNowError) as caught:
        session.supply_client_seed("again")
    assert caught.value.code == "client_seed_already_set"
    with pytest.raises(FairdiceError) as caught:
        new_session().supply_client_seed("bad\x00seed")
    assert caught.value.code == "invalid_client_seed"


def test_nonces_count_per_pair_serials_per_session_and_rotation_reveals_the_committed_seeds():
    session = new_session()
    head = session.header
    session.supply_client_seed("a")
    first = [session.roll("2d6")[0] for _ in range(3)]
    assert [(e["nonce"], e["serial"]) for e in first] == [(0, 1), (1, 2), (2, 3)]
    rotate, new_seed = session.rotate(seed(2), "b")
    assert rotate == {"type": "rotate", "pair": 0, "server_seed": seed(0).hex(),
                      "next_commitment": hashlib.sha256(seed(2)).hexdigest(), "app_signature": None}
    assert hashlib.sha256(bytes.fromhex(rotate["server_seed"])).hexdigest() == head["commitment"]
    assert new_seed == {"type": "client_seed", "pair": 1, "client_seed": "b", "app_key": None}
    later = [session.roll("d20")[0] for _ in range(2)]
    assert [(e["pair"], e["nonce"], e["serial"]) for e in later] == [(1, 0, 4), (1, 1, 5)]
    (rotate2,) = session.rotate(seed(3))
    assert hashlib.sha256(bytes.fromhex(rotate2["server_seed"])).hexdigest() == head["next_commitment"]
    with pytest.raises(NotNowError):
        session.roll("d20")  # pair 2 was started without a client seed: none is carried over


def test_the_dice_are_those_of_the_derivation_and_the_seed_pair():
    session = new_session()
    session.supply_client_seed("c")
    (event,) = session.roll("5d1000kl2+7")
    faces = [die_face(seed(0), derive.message("session-roll", "core-1", ["c"], 0, i), 1000) for i in range(5)]
    assert event["rolls"] == faces and event["total"] == sum(sorted(faces)[:2]) + 7


def test_restore_replays_to_the_same_tail():
    session = new_session()
    session.supply_client_seed("c")
    for dice in ("1d6", "3d8kh2", "d100"):
        session.roll(dice)
    session.rotate(seed(2), "d")
    session.roll("2d2")
    again = Session.restore(session.header, {0: seed(0), 1: seed(1)}, session.events)
    assert again.tail == session.tail
    assert again.tail.chain == start_chain(session.header).extend(session.events)


def test_an_app_key_requires_a_valid_signature_over_the_history_the_app_saw():
    app = AppKey.from_private_hex(hashlib.sha256(b"core app").hexdigest())
    session = new_session()
    session.supply_client_seed("c", app.public_hex)
    with pytest.raises(FairdiceError) as caught:
        session.roll("1d6")
    assert caught.value.code == "app_signature_required"
    wrong = app.sign("core-1", session.tail.chain, roll_command(0, 0, "1d20"))  # signed for other dice
    with pytest.raises(FairdiceError) as caught:
        session.roll("1d6", wrong)
    assert caught.value.code == "invalid_app_signature"
    good = app.sign("core-1", session.tail.chain, roll_command(0, 0, "1d6"))
    with pytest.raises(NotNowError) as caught:
        session.roll("1d6", good, event_count=0)
    assert caught.value.code == "stale_history" and caught.value.details == {"event_count": 1}
    (event,) = session.roll("1d6", good, event_count=1)
    assert event["app_signature"] == good
    with pytest.raises(FairdiceError) as caught:
        session.rotate(seed(2))
    assert caught.value.code == "app_signature_required"
    session.rotate(seed(2), app_signature=app.sign("core-1", session.tail.chain, rotate_command(0)))
    with pytest.raises(FairdiceError) as caught:  # the new pair has no key: a signature is refused
        session.supply_client_seed("e")
        session.roll("1d6", good)
    assert caught.value.code == "invalid_app_signature"


def test_an_app_key_that_is_not_a_key_is_refused():
    for bad in ("00" * 31, "zz" * 32, "AB" * 32):
        with pytest.raises(FairdiceError) as caught:
            new_session().supply_client_seed("c", bad)
        assert caught.value.code == "invalid_app_key"


def test_the_log_holds_the_revealed_pairs_only():
    session = new_session()
    session.supply_client_seed("c")
    session.roll("1d6")
    assert revealed_events(session.events) == []
    session.rotate(seed(2), "d")
    session.roll("1d6")
    doc = session_log(session.header, SIGNER.sign(derive_canonical(session.header)), session.events, SIGNER)
    assert [e["type"] for e in doc["events"]] == ["client_seed", "roll", "rotate"]
    assert set(doc) == {"format", "version", "header", "commitment_signature", "events", "signature"}


def derive_canonical(doc) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def test_the_core_reproduces_the_spec_session():
    vec = VECTORS["session"]
    log = vec["log"]
    seeds = [bytes.fromhex(s) for s in vec["server_seeds"]]
    session = Session(log["header"], {0: seeds[0], 1: seeds[1]})
    app = AppKey.from_private_hex(vec["app_private_key"])
    pair_events = log["events"]
    for event in pair_events:
        if event["type"] == "client_seed" and event["pair"] == 0:
            session.supply_client_seed(event["client_seed"], event["app_key"])
        elif event["type"] == "roll":
            signature = app.sign(session.session_id, session.tail.chain, roll_command(
                event["pair"], event["nonce"], event["dice"])) if session.tail.app_key else None
            assert session.roll(event["dice"], signature) == [event]
        elif event["type"] == "rotate":
            nxt = seeds[event["pair"] + 2]
            signature = app.sign(session.session_id, session.tail.chain, rotate_command(event["pair"])) \
                if session.tail.app_key else None
            follow = [e for e in pair_events if e["type"] == "client_seed" and e["pair"] == event["pair"] + 1]
            kwargs = {"client_seed": follow[0]["client_seed"], "app_key": follow[0]["app_key"]} if follow else {}
            session.rotate(nxt, app_signature=signature, **kwargs)
    assert session.events == pair_events
    assert [receipt(Signer.from_private_bytes(hashlib.sha256(b"fairdice test vector signing key").digest()),
                    session.session_id, start_chain(log["header"]).extend(pair_events[:r["receipt"]["events"]]))
            for r in vec["receipts"]] == [r["receipt"] for r in vec["receipts"]]
