"""The verifier's bots keep what a turn computes for a card (verifier.turn.TurnCache) under what that turn depends
on: card_state for the optimal bot, the coarser gain_state for greedy and ev. Held here: a card met after another
card of the same state is answered from the cache, and the answer is what that card computed on its own gives
(candidates, order, values, decision); the space's arithmetic against its definitions written out naively; and a
second log in a run reuses the turns of the first."""

from __future__ import annotations

import itertools
import random

import pytest

from support.verifier_support import simulated
from verifier import optimal, policies
from verifier.botcheck import PublishedBots
from verifier.files import find_logs, verify_file
from verifier.policies import POLICIES, decide, ranked
from verifier.spec import CATEGORIES, UPPER, points
from verifier.turn import (FIRST_ROLL, KEEP_INDEX, KEEPS, ROLLS, TurnCache, best_over_subkeeps, gain_state,
                           keep_sums, round_half_even, rounded_means)

ONE_TURN_BOTS = sorted(POLICIES)


# ------------------------------------------------------------------ the arithmetic, against its definitions

def test_keep_sums_are_the_sums_over_every_reroll():
    """7776 × the mean over the ordered rerolls of the dice not kept, counted one reroll at a time."""
    rng = random.Random(1)
    values = [rng.randrange(-2 ** 45, 2 ** 45) for _ in ROLLS]
    sums = keep_sums(values)
    for k, keep in enumerate(KEEPS):
        rerolls = itertools.product(range(1, 7), repeat=5 - len(keep))
        total = sum(values[KEEP_INDEX[tuple(sorted(keep + reroll))] - FIRST_ROLL] for reroll in rerolls)
        assert sums[k] == total * 6 ** len(keep), keep


def test_best_over_subkeeps_is_the_best_multiset_inside_each_roll():
    rng = random.Random(2)
    values = [rng.randrange(10 ** 12) for _ in KEEPS]
    best = best_over_subkeeps(values)
    for r, roll in enumerate(ROLLS):
        inside = {tuple(sorted(c)) for n in range(6) for c in itertools.combinations(roll, n)}
        assert best[r] == max(values[KEEP_INDEX[keep]] for keep in inside), roll


def test_rounded_means_round_halves_to_even_as_round_half_even_does():
    rng = random.Random(3)
    sums = [7776 * q + rest for q in (-3, -2, -1, 0, 1, 2, 3, 2 ** 40, 2 ** 40 + 1)
            for rest in (0, 1, 3887, 3888, 3889, 7775)]
    sums += [rng.randrange(-2 ** 55, 2 ** 55) for _ in range(5000)]
    assert rounded_means(sums) == [round_half_even(s, 7776) for s in sums]


def test_a_turn_cache_holds_at_most_its_size_and_drops_the_oldest_first():
    made = []
    cache = TurnCache(lambda key: made.append(key) or key.upper(), size=2)
    assert [cache.get((k,), k) for k in "abab"] == list("ABAB") and made == ["a", "b"]
    cache.get(("c",), "c")  # a is dropped
    assert cache.get(("b",), "b") == "B" and made == ["a", "b", "c"]
    cache.get(("a",), "a")
    assert made == ["a", "b", "c", "a"] and cache.made == 4 and len(cache.turns) == 2


# ------------------------------------------------------------------ cards answered from one another's turns

def box_points(rng: random.Random, rules: str, category: str) -> int:
    """The points of some throw in `category`; an upper box mostly with several of its face (upper totals near the
    bonus, where they matter), classic13's Yahtzee box 50 or 0."""
    if category in UPPER:
        return (UPPER.index(category) + 1) * rng.choice((0, 1, 2, 3, 3, 4, 4, 5))
    if rules == "classic13" and category == "yahtzee":
        return rng.choice((0, 50))
    return points(rules, category, [rng.randint(1, 6) for _ in range(5)])


def card_family(rng: random.Random, rules: str, size: int) -> list[dict]:
    """A card as a game could leave it (each box open or holding the points of some throw, one open at least), and
    `size` - 1 cards with the same boxes filled, some of them rescored: many share a state, many differ only in
    their upper total, or in the Yahtzee box's 50."""
    cats = CATEGORIES[rules]
    base = {c: None if rng.random() < 0.45 else box_points(rng, rules, c) for c in cats}
    base[rng.choice(cats)] = None
    return [base] + [{c: v if v is None or rng.random() < 0.5 else box_points(rng, rules, c) for c, v in base.items()}
                     for _ in range(size - 1)]


def positions(rng: random.Random, rules: str, families: int, size: int = 8):
    """Families of cards, each card with dice (a tenth five alike: the forced joker) and a roll."""
    for _ in range(families):
        yield [(card, (rng.randint(1, 6),) * 5 if rng.random() < 0.1 else tuple(rng.randint(1, 6) for _ in range(5)),
                rng.randint(1, 3)) for card in card_family(rng, rules, size)]


def tiebreaks(choices, dice, tolerance=0.0):
    """decide's answer for every index the tie-break could draw (one call per index, the same m each time)."""
    drawn = []
    first = decide(choices, dice, lambda m: drawn.append(m) or 0, tolerance)
    return [first] + [decide(choices, dice, lambda m, i=i: i, tolerance) for i in range(1, drawn[0] if drawn else 1)]


def assert_same_answers(cached, alone, dice, tolerance=0.0):
    assert ranked(cached, dice) == ranked(alone, dice)  # every candidate, in order, with its value
    assert tiebreaks(cached, dice, tolerance) == tiebreaks(alone, dice, tolerance)


@pytest.mark.parametrize("rules", sorted(CATEGORIES))
@pytest.mark.parametrize("bot", ONE_TURN_BOTS)
def test_a_one_turn_bot_answers_each_card_from_the_cache_as_that_card_alone(rules, bot):
    """Each family's cards go through one cache, in turn; each answer is what its card gives with nothing cached."""
    rng, policy = random.Random(f"{rules}-{bot}"), POLICIES[bot]
    reused = upper_differs = 0
    for family in positions(rng, rules, 60):
        upper_first = rng.random() < 0.2
        policies.TURNS.clear()
        cached = []
        for card, dice, roll in family:
            made = policies.TURNS.made
            cached.append(policy(rules, card, dice, roll, upper_first))
            reused += policies.TURNS.made == made
        for (card, dice, roll), answer in zip(family, cached):
            policies.TURNS.clear()
            assert_same_answers(answer, policy(rules, card, dice, roll, upper_first), dice)
        states = {gain_state(rules, card) for card, _, _ in family}
        upper_differs += len(states) > len({(mask, flag) for mask, _, flag in states})
    assert reused > 60 and upper_differs > 10  # turns found in the cache; cards told apart by their upper total


@pytest.mark.parametrize("rules", ["yacht", pytest.param("classic13", marks=pytest.mark.slow)])
def test_the_optimal_bot_answers_each_card_from_the_cache_as_that_card_alone(bots, optimal_table, rules):
    optimal_table(rules)
    values = bots.table(rules).values
    rng, reused = random.Random(f"optimal-{rules}"), 0
    for family in positions(rng, rules, 40 if rules == "yacht" else 15):
        table = optimal.Table(rules, values)  # nothing solved yet
        cached = []
        for card, dice, roll in family:
            made = table.turns.made
            cached.append(optimal.choices(table, card, dice, roll))
            reused += table.turns.made == made
        for (card, dice, roll), answer in zip(family, cached):
            alone = optimal.choices(optimal.Table(rules, values), card, dice, roll)
            assert_same_answers(answer, alone, dice, optimal.TIE_TOLERANCE)
    assert reused > 20


# ------------------------------------------------------------------ across the logs of a run

@pytest.fixture
def bots():
    policies.TURNS.clear()
    return PublishedBots()


def test_a_second_log_reuses_the_turns_of_the_first(bots, optimal_table):
    optimal_table("yacht")
    first, second = find_logs([str(simulated("yacht", "ev,optimal", 2, 2501))])[0]
    made = lambda: (policies.TURNS.made, bots.table("yacht").turns.made)  # noqa: E731
    assert verify_file(first, bots=bots).checks["bot.decision"] == "pass"
    after_first = made()
    assert verify_file(first, bots=bots).checks["bot.decision"] == "pass"
    assert made() == after_first  # the same log again: every turn is found
    assert verify_file(second, bots=bots).checks["bot.decision"] == "pass"
    after_second = made()
    fresh = PublishedBots()
    policies.TURNS.clear()
    before = policies.TURNS.made
    verify_file(second, bots=fresh)
    alone = (policies.TURNS.made - before, fresh.table("yacht").turns.made)
    # the second log after the first solved fewer turns than alone (at least the empty card's, for each bot)
    assert all(then - now < by_itself for then, now, by_itself in zip(after_second, after_first, alone))
