"""The state document written from kept fragments (api.games.StateText) is, byte for byte, the document built
field by field from the game and encoded by json.dumps, as the service wrote it before (the reference below),
in every state a game passes through: awaiting seeds, commitments, a roll-off, play, a joker, the end, an
abandon, a version 1 game, other event windows.

The reference takes the game as restored from the store by the core (`Game.restore`), not the service's
copy, and signs its own move receipt (Ed25519 signatures are deterministic), so a fragment kept from an
outdated state, or a receipt of the wrong history, shows as a difference.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from api.games import EVENTS_PAGE_MAX
from fairdice.game import Game
from fairdice.log import final_block, move_receipt, setup_from_header

from support.api_helpers import store_version_1_game

ANN, BO = {"type": "human", "name": "ann"}, {"type": "human", "name": "Bø 🎲"}
EV, GREEDY = {"type": "bot", "bot": "ev"}, {"type": "bot", "bot": "greedy"}


def reference_state(game: Game, opened: dict, receipt: dict, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> dict:
    """The GameState document, field by field (api/openapi.json), as the service used to build it."""
    setup, header = game.setup, opened["header"]
    missing, commitments, current = game.missing_client_seeds(), game.commitments, game.current_seat
    seats = [{"seat": i, "type": seat.type, "name": seat.name, "bot": seat.bot,
              "awaiting_client_seed": i in missing, "committed": i in commitments,
              "commitment": commitments.get(i), "revealed": game.has_client_seed(i),
              "player_key": game.player_key(i),
              "card": dict(game.card(i).boxes), "yahtzee_bonus": game.card(i).yahtzee_bonus,
              "totals": game.totals(i).as_dict()} for i, seat in enumerate(setup.seats)]
    options = {}
    if current is not None and not setup.seats[current].is_bot:
        options = {cid: {"points": o.points, "yahtzee_bonus": o.yahtzee_bonus, "joker": o.joker}
                   for cid, o in game.scoring_options().items()}
    since = max(0, since)
    return {
        "game_id": setup.game_id, "version": setup.version, "rules": setup.rules.id,
        "upper_first": setup.upper_first, "status": game.status, "first": setup.first, "first_seat": game.first,
        "commit_reveal": setup.commits_client_seeds, "awaiting_commitments": game.missing_commitments(),
        "awaiting_client_seeds": missing, "abandon_timeout": setup.abandon_timeout, "seats": seats,
        "current_seat": current, "turn": game.turn if current is not None else None,
        "rolls_made": game.rolls_made if current is not None else 0, "rolls_left": game.rolls_left,
        "dice": list(game.dice), "options": options, "commitment": header["commitment"],
        "commitment_signature": opened["commitment_signature"], "key_id": header["key_id"],
        "event_count": len(game.events), "events_from": since, "events": game.events[since:since + limit],
        "receipt": receipt, "final": final_block(game) if game.over else None,
    }


def encoded(doc: dict) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


class Checker:
    """Every answer of the service compared with the reference built from the stored game."""

    def __init__(self, games):
        self.games = games
        self.answers = 0

    def stored(self, game_id: str) -> tuple[Game, dict]:
        snap = self.games.store.snapshot(game_id)
        record = snap.record
        seed = (bytes.fromhex(record.seed_revealed) if record.seed_revealed
                else self.games.keys.seed_box.open(game_id, record.seed_sealed))
        setup = setup_from_header(record.opened["header"], record.opened["version"])
        return Game.restore(setup, seed, snap.events, record.opened["header"]), record.opened

    def expected(self, game_id: str, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> str:
        game, opened = self.stored(game_id)
        receipt = move_receipt(self.games.keys.signer, opened["header"], game.events)
        return encoded(reference_state(game, opened, receipt, since, limit))

    def move(self, game_id: str, reply, before: int) -> dict:
        """A move answer: the state after it, with the events from `before` (the count the move found)."""
        assert not reply.replayed
        assert reply.body == self.expected(game_id, since=before)
        self.answers += 1
        return json.loads(reply.body)

    def read(self, game_id: str, since: int = 0, limit: int = EVENTS_PAGE_MAX) -> None:
        assert self.games.state(game_id, since, limit) == self.expected(game_id, since, limit)
        self.answers += 1


def play_out(games, check: Checker, game_id: str, tokens: dict, rng: random.Random, abandon_at: int | None = None):
    """Human seats move (random holds, a random legal box) until the game ends; every answer checked."""
    state = json.loads(games.state(game_id))
    moves = 0
    while state["status"] == "playing":
        seat, before = state["current_seat"], state["event_count"]
        token = tokens[seat]
        if moves == abandon_at:
            return check.move(game_id, games.abandon(game_id, token), before)
        if state["rolls_made"] == 0 or (state["rolls_left"] and rng.random() < 0.6):
            hold = [] if state["rolls_made"] == 0 else sorted(rng.sample(range(5), rng.randint(0, 4)))
            state = check.move(game_id, games.roll(game_id, token, hold), before)
        else:
            state = check.move(game_id, games.score(game_id, token, rng.choice(sorted(state["options"]))), before)
        moves += 1
        if moves % 7 == 0:
            check.read(game_id, since=rng.randint(0, state["event_count"]), limit=rng.randint(0, 5))
    return state


def create(games, rules, seats, **options):
    created = games.create(rules, seats, **options)
    return created["game_id"], {t["seat"]: t["token"] for t in created["tokens"]}


@pytest.mark.parametrize("rules, seats, options", [
    ("classic13", [ANN, EV], {}),
    ("yacht", [GREEDY, ANN, EV], {"first": "random"}),
    ("yatzy", [ANN], {"upper_first": True}),
])
def test_one_seed_games_answer_the_reference_document(app, rules, seats, options):
    games, rng = app.extensions["fairdice"], random.Random(f"{rules}-{len(seats)}")
    check = Checker(games)
    game_id, tokens = create(games, rules, seats, **options)
    check.read(game_id)
    human = next(seat for seat in tokens)
    check.move(game_id, games.client_seed(game_id, tokens[human], "seed ✓ \"quoted\""), 0)
    final = play_out(games, check, game_id, tokens, rng)
    assert final["status"] == "finished" and final["final"]["server_seed"]
    check.read(game_id)
    assert check.answers > 20


def test_commit_reveal_and_abandon_answer_the_reference_document(app):
    games, rng = app.extensions["fairdice"], random.Random(7)
    check = Checker(games)
    game_id, tokens = create(games, "classic13", [ANN, EV, BO], first="random")
    salt = "5a" * 32
    commitment = {seat: hashlib.sha256(bytes.fromhex(salt) + f"s{seat}".encode()).hexdigest() for seat in tokens}
    count = 0
    for seat in tokens:
        state = check.move(game_id, games.commit_client_seed(game_id, tokens[seat], commitment[seat]), count)
        count = state["event_count"]
    for seat in tokens:
        state = check.move(game_id, games.client_seed(game_id, tokens[seat], f"s{seat}", salt), count)
        count = state["event_count"]
    final = play_out(games, check, game_id, tokens, rng, abandon_at=9)
    assert final["status"] == "abandoned"
    check.read(game_id)


def test_a_bot_only_game_and_a_version_1_game_answer_the_reference_document(app):
    games = app.extensions["fairdice"]
    check = Checker(games)
    game_id, tokens = create(games, "yacht", [EV, GREEDY])
    final = check.move(game_id, games.client_seed(game_id, tokens[None], "operator"), 0)
    assert final["status"] == "finished"

    old_id = "old-v1-game"
    tokens = store_version_1_game(games, old_id, [ANN, BO])
    check.read(old_id)
    check.move(old_id, games.client_seed(old_id, tokens[1], "one"), 0)
    check.move(old_id, games.client_seed(old_id, tokens[0], "zero"), 1)
    play_out(games, check, old_id, tokens, random.Random(3))


def test_an_answer_after_another_process_moved_is_of_the_stored_game(app, tmp_path):
    """A second service on the same store (another worker) moves the game: the first one's kept copy and
    fragments are outdated, and its next answer must still be the stored game's."""
    from api.games import Games

    games = app.extensions["fairdice"]
    other = Games(games.store, games.keys)
    check = Checker(games)
    game_id, tokens = create(games, "classic13", [ANN, EV])
    check.move(game_id, games.client_seed(game_id, tokens[0], "s"), 0)
    state = check.move(game_id, games.roll(game_id, tokens[0], []), 2)
    other.score(game_id, tokens[0], sorted(state["options"])[0])  # the bot plays its turn there
    before = games.store.event_count(game_id)
    state = check.move(game_id, games.roll(game_id, tokens[0], []), before)
    assert state["turn"] == 2 and state["rolls_made"] == 1
