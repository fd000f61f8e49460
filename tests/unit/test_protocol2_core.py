"""Protocol 2 in the core (SPEC §4.3, §5, §5.6): commit and reveal, who may abandon, version 1 replay, the chain.

Expected values come from SPEC.md (the rules, the formulas written out here with hashlib and json) and from
the vector files; each refusal is checked to change nothing.
"""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from fairdice.bots import play_bots
from fairdice.errors import FairdiceError, NotNowError
from fairdice.game import Game, Setup
from fairdice.log import Chain, Signer, build_log, chain, check_move_receipt, open_log, setup_from_header, \
    verify_signature
from support.api_helpers import spec_canonical, spec_field
from support import VECTORS

SEED = bytes(range(32))
ANN, BO, EV = {"type": "human", "name": "ann"}, {"type": "human", "name": "bo"}, {"type": "bot", "bot": "greedy"}
SALTS = {0: "a1" * 32, 1: "b2" * 32, 2: "c3" * 32}
SIGNER = Signer.from_private_bytes(bytes(32))


def vector(name: str):
    return json.loads((VECTORS / name).read_text())


canonical, field = spec_canonical, spec_field  # SPEC §1, written out in the helpers, not taken from fairdice.log


def commitment(seat: int, client_seed: str) -> str:
    """SPEC §4.3: hex(SHA-256(salt || UTF-8(client_seed)))."""
    return hashlib.sha256(bytes.fromhex(SALTS[seat]) + client_seed.encode("utf-8")).hexdigest()


def new_game(seats=(ANN, BO, EV), version=2, **kw) -> Game:
    return Game(Setup.build("p2-game", "yacht", list(seats), version=version, **kw), SEED)


def snapshot(game):
    return copy.deepcopy((game.events, game._s))


def refused(game, command, code):
    """`command` is refused with `code` and leaves the game exactly as it was."""
    before = snapshot(game)
    with pytest.raises(FairdiceError) as err:
        command()
    assert err.value.code == code, err.value.message
    assert snapshot(game) == before
    return err.value


def started(seats=(ANN, BO, EV)) -> Game:
    """Every human seat of a version 2 game committed and revealed `seed <seat>`."""
    game = new_game(seats)
    humans = game.setup.human_seats
    for seat in humans:
        game.commit_client_seed(seat, commitment(seat, f"seed {seat}"))
    for seat in humans:
        game.supply_client_seed(seat, f"seed {seat}", SALTS[seat])
    return game


# --- commit and reveal ------------------------------------------------------------------------

def test_two_humans_commit_before_any_reveal():
    game = new_game()
    refused(game, lambda: game.supply_client_seed(0, "seed 0"), "client_seed_commit_required")
    refused(game, lambda: game.supply_client_seed(0, "seed 0", SALTS[0]), "awaiting_commitments")
    game.commit_client_seed(0, commitment(0, "seed 0"))
    assert game.missing_commitments() == [1]
    err = refused(game, lambda: game.supply_client_seed(0, "seed 0", SALTS[0]), "awaiting_commitments")
    assert isinstance(err, NotNowError) and err.details["awaiting"] == [1]
    refused(game, lambda: game.supply_client_seed(0, "seed 0"), "client_seed_commit_required")
    game.commit_client_seed(1, commitment(1, "seed 1"))
    assert game.missing_commitments() == [] and game.commitments == {0: commitment(0, "seed 0"),
                                                                     1: commitment(1, "seed 1")}
    assert game.events == [{"type": "client_seed_commit", "seat": 0, "commitment": commitment(0, "seed 0")},
                           {"type": "client_seed_commit", "seat": 1, "commitment": commitment(1, "seed 1")}]


def test_a_reveal_must_open_its_commitment():
    game = new_game()
    for seat in (1, 0):
        game.commit_client_seed(seat, commitment(seat, f"seed {seat}"))
    refused(game, lambda: game.supply_client_seed(0, "seed 1", SALTS[0]), "client_seed_mismatch")
    refused(game, lambda: game.supply_client_seed(0, "seed 0", SALTS[1]), "client_seed_mismatch")
    refused(game, lambda: game.supply_client_seed(1, "seed 0", SALTS[0]), "client_seed_mismatch")  # seat 0's
    refused(game, lambda: game.supply_client_seed(0, "seed 0", SALTS[0].upper()), "invalid_salt")
    refused(game, lambda: game.supply_client_seed(0, "seed 0", SALTS[0][:-2]), "invalid_salt")
    refused(game, lambda: game.supply_client_seed(0, "seed 0", 17), "invalid_salt")
    refused(game, lambda: game.supply_client_seed(0, "bad\nseed", SALTS[0]), "invalid_client_seed")
    assert game.supply_client_seed(1, "seed 1", SALTS[1]) == [
        {"type": "client_seed", "seat": 1, "client_seed": "seed 1", "salt": SALTS[1]}]
    refused(game, lambda: game.supply_client_seed(1, "seed 1", SALTS[1]), "client_seed_already_set")
    events = game.supply_client_seed(0, "seed 0", SALTS[0])  # the last reveal starts the game
    assert events == [{"type": "client_seed", "seat": 0, "client_seed": "seed 0", "salt": SALTS[0]},
                      {"type": "start", "first": 0, "rolloff": []}]
    assert game.status == "playing" and game.client_seeds == ["seed 0", "seed 1"]  # seat order, not arrival


def test_each_human_seat_commits_once_with_a_well_formed_commitment():
    game = new_game()
    good = commitment(0, "seed 0")
    for bad in (good.upper(), good[:-1], good + "0", "zz" * 32, None, 5, ["x"]):
        refused(game, lambda bad=bad: game.commit_client_seed(0, bad), "invalid_commitment")
    refused(game, lambda: game.commit_client_seed(2, good), "invalid_seat")  # a bot
    refused(game, lambda: game.commit_client_seed(None, good), "invalid_seat")  # no operator in a human game
    refused(game, lambda: game.commit_client_seed(3, good), "invalid_seat")
    game.commit_client_seed(0, good)
    refused(game, lambda: game.commit_client_seed(0, good), "commitment_already_set")
    refused(game, lambda: game.commit_client_seed(0, commitment(0, "other")), "commitment_already_set")


def test_no_commitment_once_play_has_started():
    game = started()
    refused(game, lambda: game.commit_client_seed(0, commitment(0, "late")), "client_seed_closed")
    refused(game, lambda: game.supply_client_seed(0, "seed 0", SALTS[0]), "client_seed_closed")


@pytest.mark.parametrize("seats, seat", [((ANN, EV), 0), ((EV,), None), ((EV, ANN), 1)])
def test_one_human_or_none_sends_its_seed_in_one_step(seats, seat):
    game = new_game(seats)
    assert not game.setup.commits_client_seeds and game.missing_commitments() == []
    refused(game, lambda: game.commit_client_seed(seat, commitment(0, "s")), "commitment_not_used")
    refused(game, lambda: game.supply_client_seed(seat, "s", SALTS[0]), "commitment_not_used")
    events = game.supply_client_seed(seat, "s")
    assert events[0] == {"type": "client_seed", "seat": seat, "client_seed": "s"}  # no salt
    assert events[1]["type"] == "start"


def test_the_derivation_is_the_same_after_commit_and_reveal():
    """Version 2 changes how the seeds arrive, not what they derive (SPEC §2.3): a version 1 game with the
    same id, server seed and client seeds rolls the same dice."""
    v2 = started((ANN, BO))
    v1 = new_game((ANN, BO), version=1)
    for seat in (0, 1):
        v1.supply_client_seed(seat, f"seed {seat}")
    for game in (v1, v2):
        game.roll(0)
        game.roll(0, [0])
    assert v1.dice == v2.dice and v1.client_seeds == v2.client_seeds == ["seed 0", "seed 1"]


# --- abandon ------------------------------------------------------------------------------------

def test_a_human_seat_abandons_for_itself_before_the_start():
    for seat in (0, 1):
        game = new_game()
        game.commit_client_seed(0, commitment(0, "seed 0"))
        assert game.abandon(seat, "player") == [{"type": "abandon", "seat": seat, "reason": "player"}]
        assert game.status == "abandoned" and game.abandoned_by == seat and game.abandon_reason == "player"


def test_a_human_seat_abandons_only_on_its_own_turn():
    game = started()
    err = refused(game, lambda: game.abandon(1, "player"), "not_your_turn")
    assert isinstance(err, NotNowError) and err.details["current_seat"] == 0
    game.roll(0)
    game.score(0, "choice")
    refused(game, lambda: game.abandon(0, "player"), "not_your_turn")  # seat 1's turn now
    assert game.abandon(1) == [{"type": "abandon", "seat": 1, "reason": "player"}]  # "player" by default


@pytest.mark.parametrize("seat, reason, code", [
    (2, "player", "invalid_seat"),  # a bot never abandons
    (5, "player", "invalid_seat"),  # no such seat
    (None, "player", "invalid_abandon"),  # the operator only of a game without humans
    (0, "timeout", "invalid_abandon"),  # a timeout is the server's (seat null)
    (0, "bored", "invalid_abandon"),
    (None, None, "invalid_abandon"),
])
def test_abandons_the_rules_do_not_allow_are_refused(seat, reason, code):
    for game in (new_game(), started()):
        err = refused(game, lambda: game.abandon(seat, reason), code)
        if code == "invalid_abandon" and reason not in ("player", "timeout"):
            assert err.details["allowed"] == ["player", "timeout"]


def test_the_server_abandons_for_a_timeout_at_any_point():
    """The core cannot tell the time: whoever calls it (the API's expire) has checked abandon_timeout."""
    for game in (new_game(), started()):
        assert game.abandon(None, "timeout") == [{"type": "abandon", "seat": None, "reason": "timeout"}]
        assert game.status == "abandoned" and game.abandoned_by is None and game.abandon_reason == "timeout"
        refused(game, lambda: game.abandon(None, "timeout"), "game_over")


def test_the_operator_abandons_a_game_without_humans():
    game = new_game((EV, EV))
    assert game.abandon(None, "player") == [{"type": "abandon", "seat": None, "reason": "player"}]
    game = new_game((EV, EV))
    game.supply_client_seed(None, "op")
    play_bots(game)
    assert game.status == "finished"
    refused(game, lambda: game.abandon(None, "player"), "game_over")


# --- versions -----------------------------------------------------------------------------------

def test_new_logs_are_version_3_with_a_signed_abandon_timeout():
    opened = open_log(Game(Setup.build("p3-game", "yacht", [ANN]), SEED), SIGNER)
    assert opened["version"] == 3 and opened["header"]["abandon_timeout"] == 86400  # SPEC §5.1's default
    assert open_log(new_game(), SIGNER)["version"] == 2  # the version 2 rules are still those of version 2 games
    verify_signature(SIGNER.public_key.hex(), opened["commitment_signature"], canonical(opened["header"]),
                     "sig.commitment")
    assert open_log(new_game(abandon_timeout=600), SIGNER)["header"]["abandon_timeout"] == 600
    for bad in (0, -5, True, 1.5, "86400", None):
        with pytest.raises(FairdiceError) as err:
            Setup.build("g", "yacht", [ANN], abandon_timeout=bad)
        assert err.value.code == "invalid_options"
    with pytest.raises(FairdiceError) as err:
        Setup.build("g", "yacht", [ANN], version=4)
    assert err.value.code == "invalid_version"


def test_version_1_games_keep_the_version_1_rules():
    game = new_game((ANN, BO, EV), version=1)
    opened = open_log(game, SIGNER)
    assert opened["version"] == 1 and "abandon_timeout" not in opened["header"]
    assert setup_from_header(opened["header"]).version == 1
    refused(game, lambda: game.commit_client_seed(0, commitment(0, "s")), "commitment_not_used")
    game.supply_client_seed(1, "b")  # one step, in any order
    game.supply_client_seed(0, "a")
    assert game.events[0] == {"type": "client_seed", "seat": 1, "client_seed": "b"}
    assert game.current_seat == 0
    assert game.abandon(1) == [{"type": "abandon", "seat": 1}]  # anyone, at any moment, no reason


def test_version_1_vector_log_restores_and_rebuilds_to_the_byte():
    """tests/vectors/log_short.json (version 1) replays through the version 2 core into the same signed log."""
    log = vector("log_short.json")
    assert log["version"] == 1
    setup = setup_from_header(log["header"])
    assert setup.version == 1 and setup.abandon_timeout is None
    seed = hashlib.sha256(b"fairdice spec example server seed").digest()  # SPEC §8.4
    game = Game.restore(setup, seed, log["events"])
    assert game.status == "finished" and [game.totals(0).as_dict()] == log["final"]["totals"]
    signer = Signer.from_private_bytes(hashlib.sha256(b"fairdice test vector signing key").digest())  # SPEC §8.4
    opened = {k: log[k] for k in ("format", "version", "header", "commitment_signature")}
    assert canonical(build_log({**opened, "events": [], "final": None}, game, signer)) == canonical(log)


def test_version_2_vector_log_restores_and_rebuilds_to_the_byte():
    vec = vector("chain.json")
    log = vec["log"]
    assert log["version"] == 2
    setup = setup_from_header(log["header"])
    assert setup.version == 2 and setup.abandon_timeout == log["header"]["abandon_timeout"]
    game = Game.restore(setup, hashlib.sha256(b"fairdice spec example 2").digest(), log["events"])  # SPEC §8.8
    assert game.status == "abandoned" and game.abandoned_by == 2 and game.abandon_reason == "player"
    assert game.commitments == {c["seat"]: c["commitment"] for c in vec["client_seeds"]}
    signer = Signer.from_private_bytes(bytes.fromhex(vec["private_key"]))
    opened = {k: log[k] for k in ("format", "version", "header", "commitment_signature")}
    assert canonical(build_log({**opened, "events": [], "final": None}, game, signer)) == canonical(log)
    for c in vec["client_seeds"]:  # SPEC §4.3's commitment, from its salt and seed
        assert hashlib.sha256(bytes.fromhex(c["salt"]) + c["client_seed"].encode()).hexdigest() == c["commitment"]


def test_restore_replays_commitments_reveals_and_the_abandon_reason():
    game = started()
    game.roll(0)
    game.abandon(0)
    again = Game.restore(game.setup, SEED, game.events)
    assert snapshot(again) == snapshot(game)
    assert again.commitments == game.commitments and again.abandon_reason == "player"


# --- the chain and move receipts (SPEC §5.6) ----------------------------------------------------

def spec_chain(head: dict, events: list[dict]) -> list[bytes]:
    """h_0 .. h_n, from the formulas of SPEC §5.6."""
    hashes = [hashlib.sha256(field("fairdice-chain/v2") + field(head["game_id"]) + canonical(head)).digest()]
    for event in events:
        hashes.append(hashlib.sha256(hashes[-1] + canonical(event)).digest())
    return hashes


def test_the_chain_vector_is_the_formula_of_the_spec():
    vec = vector("chain.json")
    head, events = vec["log"]["header"], vec["log"]["events"]
    expected = spec_chain(head, events)
    assert bytes.fromhex(vec["h0_input"]) == field("fairdice-chain/v2") + field(head["game_id"]) + canonical(head)
    assert [bytes.fromhex(step["chain"]) for step in vec["chain"]] == expected
    assert [step["events"] for step in vec["chain"]] == list(range(len(events) + 1))
    for n, h in enumerate(expected):  # and the core computes the same, event by event and at once
        assert chain(head, events[:n]) == h
        assert Chain.start(head).extend(events[:n]) == Chain(h, n)


def test_the_receipt_vectors_are_signed_over_the_bytes_of_the_spec():
    vec = vector("chain.json")
    head = vec["log"]["header"]
    signer = Signer.from_private_bytes(bytes.fromhex(vec["private_key"]))
    assert signer.public_key.hex() == vec["public_key"] == head["public_key"]
    hashes = spec_chain(head, vec["log"]["events"])
    for item in vec["receipts"]:
        receipt = item["receipt"]
        n = receipt["events"]
        message = field("fairdice-receipt/v2") + field(head["game_id"]) + n.to_bytes(4, "big") + hashes[n]
        assert bytes.fromhex(item["message"]) == message and receipt["chain"] == hashes[n].hex()
        verify_signature(vec["public_key"], receipt["signature"], message, "receipt.chain")
        assert receipt["key_id"] == hashlib.sha256(bytes.fromhex(vec["public_key"])).hexdigest()[:16]
        assert signer.sign_receipt(head["game_id"], n, hashes[n]) == receipt  # Ed25519 is deterministic


def test_any_change_to_the_history_changes_the_chain():
    vec = vector("chain.json")
    head, events = vec["log"]["header"], vec["log"]["events"]
    real = chain(head, events)
    altered = copy.deepcopy(events)
    altered[5]["dice"][0] = 7 - altered[5]["dice"][0]
    variants = [altered, events[:-1], events + [events[-1]], [events[1], events[0]] + events[2:],
                [e for i, e in enumerate(events) if i != 7]]
    assert len({real} | {chain(head, v) for v in variants}) == 1 + len(variants)
    assert chain({**head, "abandon_timeout": 1}, events) != real
    assert chain({**head, "game_id": "another"}, events) != real


def test_check_move_receipt_refuses_what_does_not_verify():
    vec = vector("chain.json")
    receipt, key, gid = vec["receipts"][-1]["receipt"], vec["public_key"], vec["log"]["header"]["game_id"]
    check_move_receipt(receipt, key, gid, receipt["events"])
    bad = [
        ({**receipt, "events": receipt["events"] - 1}, gid, None),
        ({**receipt, "chain": vec["chain"][-2]["chain"]}, gid, None),
        ({**receipt, "signature": vec["receipts"][0]["receipt"]["signature"]}, gid, None),
        ({**receipt, "game_id": "another"}, "another", None),
        (receipt, "another", None),
        (receipt, gid, receipt["events"] + 1),
        ({**receipt, "extra": 1}, gid, None),
        ({k: v for k, v in receipt.items() if k != "key_id"}, gid, None),
        ({**receipt, "events": True}, gid, None),
        ({**receipt, "chain": receipt["chain"].upper()}, gid, None),
        (None, gid, None),
    ]
    for doc, game_id, events in bad:
        with pytest.raises(ValueError):
            check_move_receipt(doc, key, game_id, events)
    with pytest.raises(ValueError):
        check_move_receipt(receipt, SIGNER.public_key.hex(), gid)  # signed by another key
