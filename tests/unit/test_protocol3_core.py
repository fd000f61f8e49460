"""Protocol 3 in the core (SPEC §4.3, §5.7): every command of a human seat signed by the player's own key.

The signed bytes are written out here from SPEC §5.7 (with hashlib, json and `cryptography` directly), not taken
from fairdice.players, so a core that signed or checked the wrong bytes fails.  Every refusal is checked to
change nothing.
"""

from __future__ import annotations

import copy
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings, strategies as st

from fairdice.bots import play_bots
from fairdice.errors import FairdiceError
from fairdice.game import Game, Setup
from fairdice.log import Signer, header
from support.api_helpers import spec_canonical, spec_field

SEED = bytes(range(32))
ANN, BO, EV = {"type": "human", "name": "ann"}, {"type": "human", "name": "bo"}, {"type": "bot", "bot": "greedy"}
SIGNER = Signer.from_private_bytes(bytes(32))
COMMAND_FIELDS = {  # SPEC §5.7's table
    "client_seed_commit": ("type", "seat", "commitment", "player_key"),
    "client_seed": ("type", "seat", "client_seed", "player_key", "salt"),
    "roll": ("type", "seat", "turn", "roll", "hold"),
    "score": ("type", "seat", "turn", "category"),
    "abandon": ("type", "seat", "reason"),
}


def spec_chain(head: dict, events: list[dict]) -> bytes:
    """h_n of SPEC §5.6, written out."""
    digest = hashlib.sha256(spec_field("fairdice-chain/v2") + spec_field(head["game_id"]) + spec_canonical(head)).digest()
    for event in events:
        digest = hashlib.sha256(digest + spec_canonical(event)).digest()
    return digest


def signed_bytes(game_id: str, n: int, digest: bytes, command: dict) -> bytes:
    return spec_field("fairdice-move/v3") + spec_field(game_id) + n.to_bytes(4, "big") + digest + spec_canonical(command)


class Player:
    """A player's device: its own key, signing each command over the history it holds (the game's events)."""

    def __init__(self, game: Game, head: dict, seat: int):
        self.game, self.head, self.seat = game, head, seat
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key().public_bytes_raw().hex()

    def sign(self, command: dict, n: int | None = None, history: list[dict] | None = None) -> dict:
        history = self.game.events if history is None else history
        n = len(history) if n is None else n
        digest = spec_chain(self.head, history[:n])
        return {"player_signature": self.key.sign(signed_bytes(self.head["game_id"], n, digest, command)).hex(),
                "event_count": n}

    def seed(self, client_seed: str = "my seed") -> list[dict]:
        command = {"type": "client_seed", "seat": self.seat, "client_seed": client_seed, "player_key": self.public}
        return self.game.supply_client_seed(self.seat, client_seed, player_key=self.public, **self.sign(command))

    def roll(self, hold=()) -> list[dict]:
        g = self.game
        command = {"type": "roll", "seat": self.seat, "turn": g.turn, "roll": g.rolls_made + 1, "hold": sorted(hold)}
        return g.roll(self.seat, list(hold), **self.sign(command))

    def score(self, category: str) -> list[dict]:
        command = {"type": "score", "seat": self.seat, "turn": self.game.turn, "category": category}
        return self.game.score(self.seat, category, **self.sign(command))

    def abandon(self) -> list[dict]:
        return self.game.abandon(self.seat, "player", **self.sign({"type": "abandon", "seat": self.seat,
                                                                   "reason": "player"}))


def new_game(seats=(ANN, EV), game_id="p3-game", **kw) -> tuple[Game, dict]:
    setup = Setup.build(game_id, "yacht", list(seats), **kw)
    head = header(setup, Game(setup, SEED).commitment, SIGNER)
    return Game(setup, SEED, head), head


def refused(game, command, code):
    before = copy.deepcopy((game.events, game._s, game.chain))
    with pytest.raises(FairdiceError) as err:
        command()
    assert err.value.code == code, err.value.message
    assert copy.deepcopy((game.events, game._s, game.chain)) == before
    return err.value


def verifies(public_hex: str, event: dict, n: int, head: dict, history: list[dict]) -> bool:
    command = {k: event[k] for k in COMMAND_FIELDS[event["type"]] if k in event}
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex)).verify(
            bytes.fromhex(event["player_signature"]), signed_bytes(head["game_id"], n, spec_chain(head, history[:n]),
                                                                   command))
        return True
    except Exception:
        return False


def first_box(game: Game) -> str:
    return next(iter(game.scoring_options()))


# --- a signing seat ------------------------------------------------------------------------------------------

def test_every_event_of_a_signing_seat_carries_its_signature_over_its_history():
    game, head = new_game()
    ann = Player(game, head, 0)
    ann.seed()
    for _ in range(3):
        ann.roll()
        ann.roll([0, 2])
        ann.score(first_box(game))  # the bot's turn follows in play_bots below
        play_bots(game)
    events = game.events
    human = [(i, e) for i, e in enumerate(events) if e.get("seat") == 0]
    assert [e["type"] for _, e in human][:4] == ["client_seed", "roll", "roll", "score"]
    assert human[0][1]["player_key"] == ann.public
    assert all(verifies(ann.public, e, i, head, events) for i, e in human)
    assert all("player_signature" not in e for e in events if e.get("seat") != 0)  # start and the bot's: none
    assert game.chain.digest == spec_chain(head, events) and game.chain.count == len(events)


def test_a_command_without_the_seats_signature_is_refused():
    game, head = new_game()
    ann = Player(game, head, 0)
    ann.seed()
    refused(game, lambda: game.roll(0, []), "player_signature_required")
    refused(game, lambda: game.roll(0, [], player_signature="ab" * 63, event_count=len(game.events)),
            "invalid_player_signature")


@pytest.mark.parametrize("forgery", ["another_key", "another_command", "another_history", "another_game"])
def test_a_signature_of_anything_else_is_refused(forgery):
    game, head = new_game()
    ann = Player(game, head, 0)
    ann.seed()
    ann.roll()
    n = len(game.events)
    command = {"type": "roll", "seat": 0, "turn": 1, "roll": 2, "hold": [1, 3]}
    if forgery == "another_key":
        signed = Player(game, head, 0).sign(command)
    elif forgery == "another_command":
        signed = ann.sign({**command, "hold": [1, 4]})
    elif forgery == "another_history":
        signed = ann.sign(command, history=game.events[:-1] + [{**game.events[-1], "dice": [6, 6, 6, 6, 6]}])
    else:
        other = dict(head, game_id="another-game")
        signed = {"player_signature": ann.key.sign(signed_bytes("another-game", n, spec_chain(other, game.events),
                                                                command)).hex(), "event_count": n}
    refused(game, lambda: game.roll(0, [1, 3], **signed), "invalid_player_signature")
    ann.roll([1, 3])  # the genuine command still goes through


def test_a_signature_over_a_stale_history_is_refused_with_the_current_count():
    game, head = new_game()
    ann = Player(game, head, 0)
    ann.seed()
    n = len(game.events)
    signed = ann.sign({"type": "roll", "seat": 0, "turn": 1, "roll": 1, "hold": []}, n=n - 1)
    err = refused(game, lambda: game.roll(0, [], **signed), "stale_history")
    assert err.details["event_count"] == n


def test_the_abandon_of_a_seat_is_signed_and_the_servers_timeout_is_not():
    game, head = new_game()
    ann = Player(game, head, 0)
    ann.seed()
    refused(game, lambda: game.abandon(0, "player"), "player_signature_required")
    ann.abandon()
    assert verifies(ann.public, game.events[-1], len(game.events) - 1, head, game.events)
    game2, head2 = new_game(game_id="p3-timeout")
    Player(game2, head2, 0).seed()
    game2.abandon(None, "timeout")
    assert game2.events[-1] == {"type": "abandon", "seat": None, "reason": "timeout"}


# --- a seat without a key; older versions -------------------------------------------------------------------

def test_a_seat_without_a_key_signs_nothing_and_its_events_say_so():
    game, _ = new_game()
    game.supply_client_seed(0, "no key")
    assert game.events[0] == {"type": "client_seed", "seat": 0, "client_seed": "no key", "player_key": None,
                              "player_signature": None}
    refused(game, lambda: game.roll(0, [], player_signature="ab" * 64, event_count=len(game.events)),
            "invalid_player_signature")
    game.roll(0, [])
    assert game.events[-1]["player_signature"] is None


@pytest.mark.parametrize("version", [1, 2])
def test_older_versions_take_no_keys_or_signatures(version):
    game, _ = new_game(version=version)
    refused(game, lambda: game.supply_client_seed(0, "s", player_key="11" * 32), "invalid_player_key")
    game.supply_client_seed(0, "s")
    refused(game, lambda: game.roll(0, [], player_signature="ab" * 64, event_count=2), "invalid_player_signature")
    game.roll(0, [])
    assert "player_signature" not in game.events[-1] and "player_key" not in game.events[0]


@pytest.mark.parametrize("key", ["11" * 31, "AB" * 32, 5, "zz" * 32])
def test_a_malformed_player_key_is_refused(key):
    game, _ = new_game()
    refused(game, lambda: game.supply_client_seed(0, "s", player_key=key), "invalid_player_key")


# --- commit and reveal ----------------------------------------------------------------------------------------

def commit_reveal_game():
    game, head = new_game((ANN, EV, BO), game_id="p3-commit")
    players = {seat: Player(game, head, seat) for seat in (0, 2)}
    salts = {0: "a1" * 32, 2: "c3" * 32}

    def commitment(seat, seed, key):  # SPEC §4.3, version 3: SHA-256(salt || key || UTF-8(seed))
        return hashlib.sha256(bytes.fromhex(salts[seat]) + bytes.fromhex(key) + seed.encode()).hexdigest()

    for seat in (2, 0):
        p = players[seat]
        c = commitment(seat, f"seed {seat}", p.public)
        command = {"type": "client_seed_commit", "seat": seat, "commitment": c, "player_key": p.public}
        game.commit_client_seed(seat, c, player_key=p.public, **p.sign(command))
    return game, head, players, salts


def reveal(game, players, salts):
    for seat in (0, 2):
        p = players[seat]
        command = {"type": "client_seed", "seat": seat, "client_seed": f"seed {seat}", "player_key": p.public,
                   "salt": salts[seat]}
        game.supply_client_seed(seat, f"seed {seat}", salts[seat], player_key=p.public, **p.sign(command))


def test_a_commitment_covers_the_key_and_the_reveal_must_name_the_same_key():
    game, head, players, salts = commit_reveal_game()
    p0 = players[0]
    stranger = Player(game, head, 0)
    for key, signer in ((stranger.public, stranger), (None, p0)):
        command = {"type": "client_seed", "seat": 0, "client_seed": "seed 0", "player_key": key, "salt": salts[0]}
        refused(game, lambda: game.supply_client_seed(0, "seed 0", salts[0], player_key=key, **signer.sign(command)),
                "client_seed_mismatch")
    reveal(game, players, salts)
    assert game.status == "playing"
    for i, event in enumerate(game.events):
        if event["type"] != "start":
            assert verifies(players[event["seat"]].public, event, i, head, game.events)


# --- restored games and the law for all play -----------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 4), unique=True)), min_size=1, max_size=30))
def test_a_restored_game_checks_signatures_as_the_one_played(moves):
    """For any play: a game restored from its events (with its header) holds the same chain and keys, and takes
    the next signed command exactly as the original would."""
    game, head, players, salts = commit_reveal_game()
    reveal(game, players, salts)
    ann, bo = players[0], players[2]
    for score_now, hold in moves:
        if game.over:
            break
        seat = game.current_seat
        if seat == 1:
            play_bots(game)
            continue
        player = players[seat]
        if game.rolls_made and (score_now or game.rolls_left == 0):
            player.score(first_box(game))
        else:
            player.roll(hold if game.rolls_made else [])
    restored = Game.restore(game.setup, SEED, game.events, head)
    assert restored.chain == game.chain and restored.chain.digest == spec_chain(head, game.events)
    assert [restored.player_key(s) for s in (0, 1, 2)] == [ann.public, None, bo.public]
    if restored.status == "playing" and restored.current_seat != 1:
        player = players[restored.current_seat]
        player.game = restored
        refused(restored, lambda: restored.abandon(player.seat, "player", player_signature="00" * 64,
                                                   event_count=len(restored.events)), "invalid_player_signature")
        player.abandon()


def test_a_game_restored_with_a_known_chain_is_the_game_restored_without():
    """The server restores a stored game from the chain it computed before over a prefix of its events."""
    game, head = new_game()
    ann = Player(game, head, 0)
    ann.seed()
    ann.roll()
    prefix = Game.restore(game.setup, SEED, game.events[:2], head).chain
    ann.roll([1])
    ann.score(first_box(game))
    again = Game.restore(game.setup, SEED, game.events, head, known=prefix)
    assert again.chain == game.chain and again.chain.digest == spec_chain(head, game.events)
    assert again.events == game.events and again.player_key(0) == ann.public
