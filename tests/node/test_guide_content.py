"""The guide ("How to play & tips", api/static/guide.js) cannot teach a wrong score or leave a language behind.

Its facts (api/static/guide_data.js) and words (api/static/i18n/guide.en.js, guide.zh.js) are loaded by Node as
the page loads them, then held to the core: every box of every rule set of the page (api/static/rules.js, itself
the core's tables) has an example hand, and each hand scores what the guide says by `fairdice.rules.score`; the
forced-joker cases are what `fairdice.rules.options` allows and scores; the upper-bonus picture reaches the
threshold. Both languages have every word the guide shows, with the same placeholders and the same numbers; the
Chinese names the seed documents' twelve glossary terms and is Chinese. Needs Node, not a browser."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from fairdice import rules as core
from support import REPO
from support.node import NODE


pytestmark = pytest.mark.skipif(not Path(NODE).exists(), reason="Node (v20 or later) is not installed")

# Loads the page's modules as the browser does (ES modules), and prints what the tests need as JSON.
LOAD = """
import { pathToFileURL } from "node:url";
const at = (path) => import(pathToFileURL(process.argv[1] + "/api/static/" + path).href);
const data = await at("guide_data.js");
const { RULES } = await at("rules.js");
const { placeholders } = await at("i18n.js");
const en = (await at("i18n/guide.en.js")).default;
const zh = (await at("i18n/guide.zh.js")).default;
const names = (catalogue) => Object.fromEntries(Object.entries(catalogue).map(([k, v]) => [k, placeholders(v)]));
console.log(JSON.stringify({ ...data, RULES, en, zh, placeholders: { en: names(en), zh: names(zh) } }));
"""

# The seed documents' glossary (the Chinese rule pages the players know: "12 术语"), as the Chinese guide must name them.
SEED_TERMS = ["上区", "下区", "保留", "三条 / 四条", "葫芦", "小顺 / 大顺", "快艇", "机会", "快艇加成", "百搭", "写 0", "期望值"]
# Names a Chinese text writes as they are, and the command line (kept in .cmd entries).
NOT_TRANSLATED = {"Yahtzee", "Yatzy", "SHA", "fairdice", "verify"}
CJK = re.compile(r"[\u3400-\u9fff]")
LATIN_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2,}(?![A-Za-z0-9])")
NUMBER = re.compile(r"\d+")


@pytest.fixture(scope="module")
def guide():
    done = subprocess.run([NODE, "--input-type=module", "-e", LOAD, str(REPO)], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def texts(message) -> list[str]:
    """Every string of a message (a string, or a list of paragraphs)."""
    return [message] if isinstance(message, str) else list(message)


# ------------------------------------------------------------------ the example hands against the core

def test_the_pages_rule_sets_are_the_cores_boxes(guide):
    """The guide draws the boxes of rules.js: the same rule sets, boxes, order, sections and bonuses as the core."""
    assert sorted(guide["RULES"]) == sorted(core.RULESETS)
    for rules_id, page in guide["RULES"].items():
        rs = core.ruleset(rules_id)
        assert [(c["id"], c["section"]) for c in page["categories"]] == [(c.id, c.section) for c in rs.categories]
        assert (page["upper_bonus"], page["yahtzee_bonus"]) == (rs.upper_bonus, rs.yahtzee_bonus)
        assert page["upper_threshold"] == core.UPPER_BONUS_THRESHOLD


def test_every_box_of_every_rule_set_has_an_example_hand(guide):
    for rules_id, rs in core.RULESETS.items():
        assert list(guide["HANDS"][rules_id]) == list(rs.category_ids), rules_id


@pytest.mark.parametrize("rules_id", list(core.RULESETS))
def test_every_example_hand_scores_what_the_guide_says(guide, rules_id):
    """Each hand scores its stated points by the core; the first meets its box (scores above 0)."""
    wrong = []
    for box, hands in guide["HANDS"][rules_id].items():
        assert 1 <= len(hands) <= 2, (box, hands)
        for hand in hands:
            got = core.score(rules_id, box, hand["dice"])
            if got != hand["score"]:
                wrong.append(f"{rules_id}.{box} {hand['dice']}: the guide says {hand['score']}, the core {got}")
        assert hands[0]["score"] > 0, (box, hands[0])
    assert not wrong, "\n".join(wrong)


def test_the_forced_joker_cases_are_the_cores(guide):
    """Each case's five alike, on its card, may go exactly where the guide says, and its box scores the stated
    points and Yahtzee bonus (SPEC §3.3)."""
    assert {c["id"] for c in guide["JOKER_CASES"]} == {"upper", "lower", "scratched"}
    for case in guide["JOKER_CASES"]:
        assert len(set(case["dice"])) == 1, case
        offered = core.options("classic13", case["filled"], case["dice"])
        assert sorted(offered) == sorted(case["allowed"]), case["id"]
        option = offered[case["box"]]
        assert (option.points, option.yahtzee_bonus) == (case["score"], case["bonus"]), case["id"]
        assert option.joker == (case["id"] != "upper"), case["id"]


def test_three_of_each_face_earns_the_upper_bonus_exactly(guide):
    """The bonus picture: three dice of every face make the threshold, and the core then adds each rule set's bonus
    (one pip fewer would not)."""
    faces = guide["THREE_OF_EACH"]
    assert faces == list(core.FACES)
    card = {cid: 3 * face for cid, face in zip(core.FACE_CATEGORIES, faces)}
    assert sum(card.values()) == core.UPPER_BONUS_THRESHOLD
    for rs in core.RULESETS.values():
        assert core.totals(rs, card).upper_bonus == rs.upper_bonus
        assert core.totals(rs, {**card, "ones": 2}).upper_bonus == 0


def test_the_hold_picture_keeps_the_most_common_face(guide):
    """The tip "keep the face you have most of" raises exactly the dice of that face."""
    pictures = [tip["hold"] for tip in guide["TIPS"] if "hold" in tip]
    assert pictures
    for hold in pictures:
        face, count = Counter(hold["dice"]).most_common(1)[0]
        assert count > 1 and hold["keep"] == [i for i, d in enumerate(hold["dice"]) if d == face], hold


# ------------------------------------------------------------------ the words

def keys_shown(guide) -> set[str]:
    """Every catalogue key guide.js says (the lower boxes' rules by their own key or the generic one)."""
    keys = {"open", "openShort", "title", "close", "nav.label", "intro", "rules.turn", "rules.steps", "rules.sets",
            "rules.pick", "rules.upper", "rules.lower", "rules.upperBonus", "rules.hand", "rules.score", "box.upper",
            "joker.title", "joker.intro", "tip.askHint", "tip.hintLater"}
    for section in guide["SECTIONS"]:
        keys |= {f"nav.{section['id']}", f"{section['id']}.title"}
    for rules_id, rs in core.RULESETS.items():
        keys.add(f"rules.set.{rules_id}")
        for box in rs.lower_ids:
            specific = f"box.{rules_id}.{box}"
            keys.add(specific if specific in guide["en"] else f"box.{box}")
    keys |= {f"joker.{c['id']}" for c in guide["JOKER_CASES"]}
    for tip in guide["TIPS"]:
        keys |= {f"tip.{tip['id']}.title", f"tip.{tip['id']}.text"} | ({f"tip.{tip['id']}.picture"} if "hold" in tip else set())
    keys |= {f"faq.{q}.{part}" for q in guide["QUESTIONS"] for part in ("q", "a")}
    keys |= {f"term.{t}.{part}" for t in guide["TERMS"] for part in ("name", "text")}
    return keys


def test_both_languages_have_every_word_the_guide_shows(guide):
    shown = keys_shown(guide)
    assert not shown - set(guide["en"]), sorted(shown - set(guide["en"]))
    assert set(guide["zh"]) == set(guide["en"]), sorted(set(guide["zh"]) ^ set(guide["en"]))
    assert guide["placeholders"]["zh"] == guide["placeholders"]["en"]
    for key, message in guide["en"].items():  # a list stays a list of as many paragraphs
        assert type(message) is type(guide["zh"][key]) and len(texts(message)) == len(texts(guide["zh"][key])), key


def test_both_languages_say_the_same_numbers(guide):
    """A score, a bonus or a threshold said in one language is said in the other (the rule book's numbers)."""
    def numbers(message):
        return set(NUMBER.findall(" ".join(texts(message))))

    differ = {key: sorted(numbers(en) ^ numbers(guide["zh"][key])) for key, en in guide["en"].items()}
    assert not {key: found for key, found in differ.items() if found}


def test_the_chinese_guide_is_chinese(guide):
    """Every Chinese entry but the command line has Chinese in it and no English word but names."""
    for key, message in guide["zh"].items():
        if key.endswith(".cmd"):
            continue
        for line in texts(message):
            prose = re.sub(r"\{[A-Za-z0-9_]+\}", "", line)
            if prose.strip():
                assert CJK.search(prose), (key, line)
            assert set(LATIN_WORD.findall(prose)) <= NOT_TRANSLATED, (key, line)


def test_the_guide_holds_the_seeds_content_and_a_fair_sites_questions(guide):
    """The seeds' five strategy tips (and one more), their five questions and the three a provably fair site owes
    (who can see the dice in advance, what "verified" means, what to do when a check fails), their twelve terms."""
    zh = guide["zh"]
    assert len(guide["TIPS"]) >= 5 and [t["id"] for t in guide["TIPS"][:5]] == [
        "upper", "common", "straights", "sacrifice", "chance"]
    assert {t["id"] for t in guide["TIPS"] if t.get("hint")} == {"common", "sacrifice"}
    assert {"same", "rolls", "bonus", "nothing", "luck", "advance", "verified", "failed"} <= set(guide["QUESTIONS"])
    assert [zh[f"term.{t}.name"] for t in guide["TERMS"][:12]] == SEED_TERMS
    assert "SHA-256" in " ".join(texts(zh["faq.advance.a"])) and "{cmd}" in texts(zh["faq.failed.a"])
    assert "免费" in zh["intro"] and "不用注册" in zh["intro"]
