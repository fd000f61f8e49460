"""Scoring: against a naive reference on every hand, and the laws that hold for all cards."""

from collections import Counter
from itertools import product

import pytest
from hypothesis import assume, given, strategies as st

import fairdice
from fairdice.errors import FairdiceError
from fairdice.rules import RULESETS, options, ruleset, totals

ALL_HANDS = list(product(range(1, 7), repeat=5))
# The rule book's names and bonuses (SPEC §3), written here rather than read from the core's tables.
UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")
CATEGORY_IDS = {
    "yacht": UPPER + ("choice", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yacht"),
    "yatzy": UPPER + ("one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind", "small_straight",
                      "large_straight", "full_house", "chance", "yatzy"),
    "classic13": UPPER + ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight",
                          "yahtzee", "chance"),
}
UPPER_BONUS = {"yacht": 35, "yatzy": 50, "classic13": 35}
dice_st = st.lists(st.integers(1, 6), min_size=5, max_size=5)


def reference(rules, category, dice):
    """The rule book read literally, written without the core's helpers."""
    c = Counter(dice)
    total = sum(dice)
    faces = set(dice)
    if category in UPPER:
        face = UPPER.index(category) + 1
        return face * c[face]
    four_run = any(set(r) <= faces for r in ({1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}))
    five_run = faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6})
    shape = sorted(c.values())
    if rules == "yacht":
        return {
            "choice": total,
            "four_of_a_kind": total if max(c.values()) >= 4 else 0,
            "full_house": total if shape in ([2, 3], [5]) else 0,
            "small_straight": 15 if four_run else 0,
            "large_straight": 30 if five_run else 0,
            "yacht": 50 if shape == [5] else 0,
        }[category]
    if rules == "yatzy":
        pairs = sorted((f for f in c if c[f] >= 2), reverse=True)
        return {
            "one_pair": 2 * pairs[0] if pairs else 0,
            "two_pairs": 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0,
            "three_of_a_kind": next((3 * f for f in c if c[f] >= 3), 0),
            "four_of_a_kind": next((4 * f for f in c if c[f] >= 4), 0),
            "small_straight": 15 if sorted(dice) == [1, 2, 3, 4, 5] else 0,
            "large_straight": 20 if sorted(dice) == [2, 3, 4, 5, 6] else 0,
            "full_house": total if shape == [2, 3] else 0,
            "chance": total,
            "yatzy": 50 if shape == [5] else 0,
        }[category]
    return {
        "three_of_a_kind": total if max(c.values()) >= 3 else 0,
        "four_of_a_kind": total if max(c.values()) >= 4 else 0,
        "full_house": 25 if shape == [2, 3] else 0,
        "small_straight": 30 if four_run else 0,
        "large_straight": 40 if five_run else 0,
        "yahtzee": 50 if shape == [5] else 0,
        "chance": total,
    }[category]


@pytest.mark.parametrize("rules", list(CATEGORY_IDS))
def test_score_matches_reference_on_every_hand(rules):
    for category in CATEGORY_IDS[rules]:
        for hand in ALL_HANDS:
            assert fairdice.score(rules, category, list(hand)) == reference(rules, category, hand), (category, hand)


def test_category_counts_and_ids_are_the_public_names():
    assert {r: len(ids) for r, ids in CATEGORY_IDS.items()} == {"yacht": 12, "yatzy": 15, "classic13": 13}
    assert {r: rs.category_ids for r, rs in RULESETS.items()} == CATEGORY_IDS  # the rule book's ids, in its order
    assert {r: rs.upper_bonus for r, rs in RULESETS.items()} == UPPER_BONUS


def test_issue_example():
    assert fairdice.score("yatzy", "two_pairs", [3, 3, 5, 5, 6]) == 16


@pytest.mark.parametrize("bad", [[1, 2, 3, 4], [1, 2, 3, 4, 7], [0, 1, 2, 3, 4], [1, 2, 3, 4, "5"], "12345",
                                 [1, 2, 3, 4, 5, 6], [1.0, 2, 3, 4, 5], [True, 2, 3, 4, 5], None])
def test_bad_dice_are_refused(bad):
    with pytest.raises(FairdiceError) as err:
        fairdice.score("yacht", "choice", bad)
    assert err.value.code == "invalid_dice"


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(FairdiceError) as err:
        fairdice.score("poker", "choice", [1, 2, 3, 4, 5])
    assert "yacht, yatzy, classic13" in str(err.value)
    with pytest.raises(FairdiceError) as err:
        fairdice.score("yatzy", "yahtzee", [1, 2, 3, 4, 5])
    assert "one_pair" in str(err.value) and err.value.details["allowed"] == list(CATEGORY_IDS["yatzy"])


@given(st.sampled_from(list(RULESETS)), dice_st, st.randoms())
def test_score_is_non_negative_and_order_invariant(rules, dice, rnd):
    shuffled = list(dice)
    rnd.shuffle(shuffled)
    for category in ruleset(rules).category_ids:
        value = fairdice.score(rules, category, dice)
        assert value >= 0
        assert fairdice.score(rules, category, shuffled) == value


def cards(rules):
    ids = ruleset(rules).category_ids
    return st.fixed_dictionaries({c: st.one_of(st.none(), st.integers(0, 50)) for c in ids})


@given(st.sampled_from(list(RULESETS)).flatmap(lambda r: st.tuples(st.just(r), cards(r))), dice_st,
       st.booleans())
def test_options_only_open_boxes_and_never_negative(rules_card, dice, upper_first):
    rules, card = rules_card
    legal = options(rules, card, dice, upper_first)
    open_boxes = {c for c, v in card.items() if v is None}
    assert set(legal) <= open_boxes
    assert bool(legal) == bool(open_boxes)
    for cid, opt in legal.items():
        assert opt.points >= 0 and opt.yahtzee_bonus >= 0
        if not opt.joker and (rules != "classic13" or card["yahtzee"] is None or len(set(dice)) > 1):
            assert opt.points == fairdice.score(rules, cid, dice)


@given(cards("classic13"), st.integers(1, 6))
def test_forced_joker_priority(card, face):
    assume(card["yahtzee"] is not None)  # the joker applies once the yahtzee box is filled
    dice = [face] * 5
    legal = options("classic13", card, dice)
    own = UPPER[face - 1]
    bonus = 100 if card["yahtzee"] > 0 else 0
    assert all(o.yahtzee_bonus == bonus for o in legal.values())
    lower_open = [c for c in CATEGORY_IDS["classic13"][6:] if card[c] is None]
    if card[own] is None:
        assert list(legal) == [own] and legal[own].points == 5 * face
    elif lower_open:
        assert sorted(legal) == sorted(lower_open) and all(o.joker for o in legal.values())
        expected = {"full_house": 25, "small_straight": 30, "large_straight": 40}
        assert all(o.points == expected.get(c, 5 * face) for c, o in legal.items())
    else:
        assert sorted(legal) == sorted(c for c in UPPER if card[c] is None)  # a 0 in any open upper box
        assert all(o.points == 0 and not o.joker for o in legal.values())


@given(st.sampled_from(list(RULESETS)).flatmap(lambda r: st.tuples(st.just(r), cards(r))), st.integers(0, 900))
def test_totals_are_the_sum_of_their_parts(rules_card, yahtzee_bonus):
    rules, card = rules_card
    t = totals(rules, card, yahtzee_bonus)
    upper = sum(card[c] or 0 for c in UPPER)
    assert t.upper == upper
    assert t.upper_bonus == (UPPER_BONUS[rules] if upper >= 63 else 0)
    assert t.total == sum(v or 0 for v in card.values()) + t.upper_bonus + yahtzee_bonus
