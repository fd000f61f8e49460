"""The game state machine: complete games, refusals that change nothing, the roll-off."""

import copy
import hashlib

import pytest
from hypothesis import given, settings, strategies as st

from fairdice.bots import play_bots
from fairdice.errors import FairdiceError, NotNowError
from fairdice.game import Game, Setup
from fairdice.rules import RULESETS

SEED = bytes(range(32))


def new_game(rules="classic13", seats=None, first=0, upper_first=False, seed=SEED):
    seats = seats or [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "ev"}]
    return Game(Setup.build("test-game", rules, seats, first, upper_first), seed)


def snapshot(game):
    return copy.deepcopy((game.events, game._s))


@pytest.mark.parametrize("rules", list(RULESETS))
@pytest.mark.parametrize("n_seats", [1, 3])
def test_complete_bot_games_take_exactly_one_turn_per_box(rules, n_seats):
    seats = [{"type": "bot", "bot": ("greedy", "ev")[i % 2]} for i in range(n_seats)]
    game = new_game(rules, seats, first="random")
    game.supply_client_seed(None, "operator seed")
    play_bots(game)
    assert game.status == "finished"
    n_boxes = len(RULESETS[rules].categories)
    scores = [e for e in game.events if e["type"] == "score"]
    assert len(scores) == n_seats * n_boxes
    for seat in range(n_seats):
        assert [e["turn"] for e in scores if e["seat"] == seat] == list(range(1, n_boxes + 1))
        assert scores[[e["seat"] for e in scores].index(seat)]["turn"] == 1
        assert game.totals(seat).total == [e for e in scores if e["seat"] == seat][-1]["total"]
    order = [e["seat"] for e in scores]
    assert order == [(game.first + i) % n_seats for i in range(len(order))]
    finals = [[e for e in scores if e["seat"] == seat][-1]["total"] for seat in range(n_seats)]
    assert game.winners() == [seat for seat in range(n_seats) if finals[seat] == max(finals)]


def test_human_turn_flow_and_bot_reply():
    game = new_game()
    assert game.status == "awaiting_client_seed" and game.missing_client_seeds() == [0]
    game.supply_client_seed(0, "my seed")
    assert game.status == "playing" and game.current_seat == 0 and game.rolls_left == 3
    game.roll(0)
    first = game.dice
    game.roll(0, [0, 1])
    assert game.dice[:2] == first[:2]
    option = next(iter(game.scoring_options()))
    game.score(0, option)
    assert game.current_seat == 1
    play_bots(game)
    assert game.current_seat == 0 and game.turn == 2


def test_derived_dice_do_not_depend_on_hold_for_unheld_positions():
    a, b = new_game(), new_game()
    for g in (a, b):
        g.supply_client_seed(0, "s")
        g.roll(0)
    a.roll(0, [0])
    b.roll(0, [0, 1, 2])
    assert a.dice[3:] == b.dice[3:]


def test_client_seeds_enter_in_seat_order_whatever_the_arrival():
    seats = [{"type": "human", "name": "a"}, {"type": "human", "name": "b"}]
    g1, g2 = new_game(seats=seats), new_game(seats=seats)
    seeds, salt = {0: "first", 1: "second"}, "ab" * 32  # two humans: commit, then reveal (SPEC §4.3)
    for game, order in ((g1, (0, 1)), (g2, (1, 0))):
        for seat in order:
            game.commit_client_seed(seat, hashlib.sha256(bytes.fromhex(salt) + seeds[seat].encode()).hexdigest())
        for seat in order:
            game.supply_client_seed(seat, seeds[seat], salt)
    g1.roll(0)
    g2.roll(0)
    assert g1.client_seeds == g2.client_seeds == ["first", "second"]
    assert g1.dice == g2.dice


def test_random_first_player_is_a_derived_rolloff():
    seats = [{"type": "bot", "bot": "greedy"}] * 4
    firsts = set()
    for i in range(40):
        game = new_game(seats=seats, first="random", seed=bytes([i]) * 32)
        game.supply_client_seed(None, "x")
        start = game.events[-1]
        final_round = start["rolloff"][-1]
        best = max(sum(t["dice"]) for t in final_round)
        assert [t["seat"] for t in final_round if sum(t["dice"]) == best] == [start["first"]]
        firsts.add(start["first"])
    assert firsts == {0, 1, 2, 3}


REFUSALS = [
    ("supply_client_seed", (0, ""), "invalid_client_seed"),
    ("supply_client_seed", (0, "x" * 257), "invalid_client_seed"),
    ("supply_client_seed", (0, "bad\nseed"), "invalid_client_seed"),
    ("supply_client_seed", (1, "bot seat"), "invalid_seat"),
    ("roll", (0, []), "not_playing"),
]


@pytest.mark.parametrize("command,args,code", REFUSALS)
def test_refusals_before_play_change_nothing(command, args, code):
    game = new_game()
    before = snapshot(game)
    with pytest.raises(FairdiceError) as err:
        getattr(game, command)(*args)
    assert err.value.code == code
    assert snapshot(game) == before


def test_refusals_in_play_change_nothing():
    game = new_game(rules="yatzy")
    game.supply_client_seed(0, "seed")
    def refused(cases):
        for command, code in cases:
            before = snapshot(game)
            with pytest.raises(FairdiceError) as err:
                command()
            assert err.value.code == code
            assert snapshot(game) == before

    refused([
        (lambda: game.score(0, "chance"), "roll_first"),
        (lambda: game.roll(0, [1]), "invalid_hold"),
        (lambda: game.roll(1), "not_your_turn"),
        (lambda: game.supply_client_seed(0, "again"), "client_seed_closed"),
    ])
    game.roll(0)
    refused([
        (lambda: game.roll(0, [5]), "invalid_hold"),
        (lambda: game.roll(0, [0, 0]), "invalid_hold"),
        (lambda: game.roll(0, "01"), "invalid_hold"),
        (lambda: game.score(0, "yahtzee"), "unknown_category"),
        (lambda: game.score(0, None), "unknown_category"),
    ])
    game.roll(0)
    game.roll(0)
    before = snapshot(game)
    with pytest.raises(FairdiceError) as err:
        game.roll(0)
    assert err.value.code == "no_rolls_left" and set(err.value.details["allowed"]) == set(RULESETS["yatzy"].category_ids)
    assert snapshot(game) == before
    game.score(0, "chance")
    play_bots(game)
    game.roll(0)
    with pytest.raises(FairdiceError) as err:
        game.score(0, "chance")
    assert err.value.code == "illegal_category" and "already filled" in err.value.message
    assert "chance" not in err.value.details["allowed"]


def test_nothing_is_accepted_after_the_end():
    game = new_game(seats=[{"type": "human", "name": "a"}])
    game.supply_client_seed(0, "s")
    with pytest.raises(NotNowError):
        game.revealed_seed()
    game.abandon(0)
    assert game.status == "abandoned" and game.revealed_seed() == SEED
    for command in (lambda: game.roll(0), lambda: game.score(0, "chance"), lambda: game.abandon(0)):
        before = snapshot(game)
        with pytest.raises(NotNowError):
            command()
        assert snapshot(game) == before


VALID_SETUP = {"rules": "yacht", "seats": [{"type": "human", "name": "a"}, {"type": "bot", "bot": "ev"}],
               "first": 0, "upper_first": False}


def build_setup(**changes):
    args = {**VALID_SETUP, **changes}
    return Setup.build("g", args["rules"], args["seats"], args["first"], args["upper_first"])


def test_the_setup_the_refusals_start_from_is_valid():
    assert build_setup().rules.id == "yacht"  # so each refusal below is caused by its one change


@pytest.mark.parametrize("changes, code", [
    (dict(rules="poker"), "unknown_rules"), (dict(seats=[]), "invalid_seats"),
    (dict(seats=[{"type": "human", "name": "x"}] * 7), "invalid_seats"),
    (dict(seats=[{"type": "bot", "bot": "cheater"}]), "unknown_bot"), (dict(seats=[{"type": "alien"}]), "invalid_seats"),
    (dict(first=2), "invalid_first"), (dict(first="me"), "invalid_first"), (dict(upper_first="yes"), "invalid_options"),
    (dict(seats=[{"type": "bot", "bot": "optimal"}], upper_first=True), "unsupported_bot"),
    (dict(seats=[{"type": "bot", "bot": "ev", "name": ""}]), "invalid_seats"),
    (dict(seats=[{"type": "bot", "bot": "ev", "name": 0}]), "invalid_seats"),
    (dict(seats=[{"type": "human", "name": {}}]), "invalid_seats"),
    (dict(seats=[{"type": "bot", "bot": ["ev"]}]), "unknown_bot"),
    (dict(seats=[{"type": "human", "name": "tab\there"}]), "invalid_seats"),
])
def test_setup_refusals(changes, code):
    with pytest.raises(FairdiceError) as err:
        build_setup(**changes)
    assert err.value.code == code


def test_restore_replays_to_the_same_state():
    game = new_game()
    game.supply_client_seed(0, "seed")
    for _ in range(3):
        game.roll(0)
        game.score(0, next(iter(game.scoring_options())))
        play_bots(game)
    again = Game.restore(game.setup, SEED, game.events)
    assert snapshot(again) == snapshot(game)


commands = st.lists(st.one_of(
    st.tuples(st.just("roll"), st.integers(-1, 2), st.lists(st.integers(-1, 5), max_size=6)),
    st.tuples(st.just("score"), st.integers(-1, 2), st.sampled_from(list(RULESETS["classic13"].category_ids) + ["x"])),
    st.tuples(st.just("bots"), st.just(0), st.just(None)),
), max_size=60)


@settings(max_examples=60, deadline=None)
@given(commands)
def test_any_command_sequence_keeps_the_state_consistent(cmds):
    game = new_game()
    game.supply_client_seed(0, "s")
    for name, seat, arg in cmds:
        before = snapshot(game)
        try:
            if name == "roll":
                game.roll(seat, arg)
            elif name == "score":
                game.score(seat, arg)
            else:
                play_bots(game)
        except FairdiceError:
            assert snapshot(game) == before
    assert snapshot(Game.restore(game.setup, SEED, game.events)) == snapshot(game)
