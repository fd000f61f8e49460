"""The rule sets as data in one place: every other file that lists them agrees with the core's tables.

`fairdice.rules` is the source: its rule sets (`RULESETS`), their boxes in table order, their upper bonus and
the one computation of the upper bonus (`RuleSet.upper_after`).  The files below list the rule sets again, on
purpose (the page, the OpenAPI document, the two languages' words, the independent verifiers SPEC requires, the
optimal tables, the published measurements, the rule book itself); `PLACES` names each with a reader, and
`lacks` says, per place, which rule set or box it misses or has extra, naming the file.  Adding a rule set to
the core makes the first test fail once per place that lacks it, which is the list of files to change; and a
file that starts listing the rule sets without being a place here fails
`test_every_file_naming_the_rule_sets_is_a_place`.

The page's modules are loaded by Node as the browser loads them (ES modules); the few tables a module keeps to
itself (not exported) are read from its source.  Needs Node, not a browser.
"""

from __future__ import annotations

import dataclasses
import json
import re
import runpy
import shutil
import subprocess
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from fairdice.bots import space
from fairdice.rules import (CLASSIC13, FACE_CATEGORIES, RULESETS, UPPER_BONUS_THRESHOLD, YACHT, Category, FixedIf,
                            RuleSet, totals)
from support import REPO
from verifier import audit, botcheck, logformat, policies, spec, turn

NODE = shutil.which("node") or "/usr/bin/node"

# Loads the page's modules as the browser does and prints their rule tables as JSON.
LOAD = """
import { pathToFileURL } from "node:url";
const at = (path) => import(pathToFileURL(process.argv[1] + "/api/static/" + path).href);
console.log(JSON.stringify({
  rules: (await at("rules.js")).RULES,
  en: (await at("i18n/en.js")).default,
  zh: (await at("i18n/zh.js")).default,
  guide_en: (await at("i18n/guide.en.js")).default,
  guide_zh: (await at("i18n/guide.zh.js")).default,
  hands: (await at("guide_data.js")).HANDS,
  verify_categories: (await at("verify/rules.js")).CATEGORIES,
  verify_bots: (await at("verify/bots.js")).PUBLISHED_BOTS,
}));
"""


@cache
def page() -> dict:
    """The page modules' tables (one Node run per test process)."""
    if not Path(NODE).exists():
        pytest.skip("Node (v20 or later) is not installed")
    done = subprocess.run([NODE, "--input-type=module", "-e", LOAD, str(REPO)], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ------------------------------------------------------------------ what a place says about a rule set

class Found(NamedTuple):
    """What one place says about one rule set: its boxes, upper bonus and number of boxes, where it says them."""
    boxes: tuple[str, ...] | None = None
    upper_bonus: int | None = None
    count: int | None = None


@dataclasses.dataclass(frozen=True)
class Place:
    """A file that lists the rule sets, what in it does, and how to read it.

    `boxes` says how its boxes must match the core's: "in order" (the same boxes in table order), "all" (at
    least the core's: a shared table of names), "among" (only boxes of that rule set: a subset by design), ""
    (it lists rule sets only).  `joker_only`: it lists only the rule sets with the forced joker, and their
    five-alike box."""
    file: str
    what: str
    read: Callable[[], Mapping[str, Found]]
    boxes: str = ""
    bonus: bool = False
    joker_only: bool = False

    @property
    def id(self) -> str:
        return f"{self.file}:{self.what.split(' ')[0]}"


def expected(place: Place, rule_sets: Mapping[str, RuleSet]) -> dict[str, RuleSet]:
    """The rule sets the place must list."""
    return {rid: rs for rid, rs in rule_sets.items() if rs.forced_joker or not place.joker_only}


def lacks(place: Place, found: Mapping[str, Found], rule_sets: Mapping[str, RuleSet] = RULESETS) -> list[str]:
    """What the place misses or has extra against these rule sets, one line each, naming the file."""
    where = f"{place.file} ({place.what})"
    want = expected(place, rule_sets)
    out = [f"{where} lacks the rule set {rid!r}" for rid in want if rid not in found]
    out += [f"{where} has the rule set {rid!r}, which the core does not" for rid in found if rid not in want]
    for rid in [r for r in want if r in found]:
        out += _box_lacks(place, where, rid, want[rid], found[rid])
        if place.bonus and found[rid].upper_bonus != want[rid].upper_bonus:
            out.append(f"{where}: {rid!r} has upper bonus {found[rid].upper_bonus}, the core "
                       f"{want[rid].upper_bonus}")
        if found[rid].count is not None and found[rid].count != len(want[rid].categories):
            out.append(f"{where}: {rid!r} says {found[rid].count} boxes, the core has {len(want[rid].categories)}")
    return out


def _box_lacks(place: Place, where: str, rid: str, rs: RuleSet, found: Found) -> list[str]:
    if not place.boxes:
        return []
    core = (rs.five_alike,) if place.joker_only else rs.category_ids
    got = found.boxes or ()
    missing = [b for b in core if b not in got] if place.boxes != "among" else []
    extra = [b for b in got if b not in core] if place.boxes != "all" else []
    out = [f"{where}: {rid!r} lacks the box {b!r}" for b in missing]
    out += [f"{where}: {rid!r} has the box {b!r}, which the core's {rid} does not" for b in extra]
    if place.boxes == "in order" and not out and tuple(got) != core:
        out.append(f"{where}: {rid!r} has its boxes in the order {list(got)}, the core {list(core)}")
    return out


# ------------------------------------------------------------------ readers

def ids_only(ids) -> dict[str, Found]:
    return {rid: Found() for rid in ids}


def in_order(table: Mapping[str, object]) -> dict[str, Found]:
    """{rule set: its boxes} (a list of ids, or a mapping keyed by them) as found boxes."""
    return {rid: Found(tuple(boxes)) for rid, boxes in table.items()}


def page_rules() -> dict[str, Found]:
    return {rid: Found(tuple(c["id"] for c in r["categories"]), r["upper_bonus"]) for rid, r in page()["rules"].items()}


def catalogue(words: Mapping[str, object], names: str, also: tuple[str, ...], upper: tuple[str, ...],
              lower: tuple[str, ...]) -> dict[str, Found]:
    """The rule sets a message catalogue has words for (keys `names` % id and every `also` % id) and, for each,
    the boxes it has words for: every kind of `upper` (an upper box) or `lower` (a lower box), as
    `<kind>.<rules>.<box>` or `<kind>.<box>` ("box.upper": one key for all six)."""
    rule_sets = [m[1] for k in words if (m := re.fullmatch(names.replace(".", r"\.") % r"(\w+)", k))]
    box_ids = {k.rsplit(".", 1)[1] for k in words if k.startswith("box.")} | set(FACE_CATEGORIES)

    def says(kind: str, rid: str, box: str) -> bool:
        return kind in words or f"{kind}.{rid}.{box}" in words or f"{kind}.{box}" in words

    def named(rid: str, box: str) -> bool:
        return all(says(kind, rid, box) for kind in (upper if box in FACE_CATEGORIES else lower))

    return {rid: Found(tuple(sorted(b for b in box_ids if named(rid, b))))
            for rid in rule_sets if all(a % rid in words for a in also)}


def page_words(lang: str) -> dict[str, Found]:
    """The page's words (its rules dialog): each box's name, and a lower box's condition and score."""
    return catalogue(page()[lang], "rules.%s.name", ("rules.%s.blurb", "rules.%s.notes"), ("box",),
                     ("box", "when", "score"))


def guide_words(lang: str) -> dict[str, Found]:
    """The guide's words: a rule set's paragraph, and each box's rule (one for the six upper boxes)."""
    return catalogue(page()[f"guide_{lang}"], "rules.set.%s", (), ("box.upper",), ("box",))


def js_const(file: str, name: str) -> dict:
    """An object literal a page module keeps to itself (`const NAME = {...}`, not exported), as JSON: keys quoted,
    comments and trailing commas dropped (the literals read here hold strings, numbers and lists of strings)."""
    text = (REPO / file).read_text()
    found = re.search(rf"\bconst {name} = ", text)
    assert found, f"{file}: no `const {name} = ` any more; update tests/test_rules_everywhere.py's reader"
    start = text.index("{", found.end())
    depth = 0
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    literal = re.sub(r"//[^\n]*", "", text[start:end + 1])
    literal = re.sub(r"([{,]\s*)([A-Za-z_$][\w$]*)\s*:", r'\1"\2":', literal)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", literal))


def spec_text(section: str) -> str:
    """One numbered section of SPEC.md ("3" or "5.1"), up to the next heading of its level or above."""
    text = (REPO / "SPEC.md").read_text()
    level = "##" if "." not in section else "###"
    start = re.search(rf"^{level} {re.escape(section)}[. ]", text, re.M)
    assert start, f"SPEC.md has no section {section}"
    end = re.compile(rf"^#{{2,{len(level)}}} ", re.M).search(text, start.end())
    return text[start.start():end.start() if end else len(text)]


def spec_rule_sets() -> dict[str, Found]:
    """SPEC §3's sections per rule set: `### 3.N \\`id\\` — N boxes, upper bonus B` and the table of boxes
    (its first row, "`ones` … `sixes`", stands for the six upper boxes)."""
    out = {}
    pattern = r"^### 3\.\d+ `(\w+)` — (\d+) boxes, upper bonus (\d+)\n(.*?)(?=^### |\Z)"
    for m in re.finditer(pattern, spec_text("3"), re.M | re.S):
        boxes: list[str] = []
        for first, last in re.findall(r"^\| `(\w+)`(?: … `(\w+)`)? \|", m[4], re.M):
            boxes += FACE_CATEGORIES if (first, last) == ("ones", "sixes") else [first]
        out[m[1]] = Found(tuple(boxes), int(m[3]), int(m[2]))
    return out


def spec_ids_sentence() -> dict[str, Found]:
    listed = re.search(r"rule sets, ids ((?:`\w+`(?:, )?)+)", spec_text("3"))
    return ids_only(re.findall(r"`(\w+)`", listed[1]) if listed else ())


def spec_header_rules() -> dict[str, Found]:
    row = re.search(r"^\| `rules` \| (.*?) \| [^|]*\|$", spec_text("5.1"), re.M)
    return ids_only(re.findall(r'`"(\w+)"`', row[1]) if row else ())


def readme_rule_sets() -> dict[str, Found]:
    listed = re.search(r"^Rule sets: (.*?)SPEC\.md §3", (REPO / "README.md").read_text(), re.M | re.S)
    return {rid: Found(count=int(n)) for rid, n in re.findall(r"`(\w+)` \((\d+)", listed[1] if listed else "")}


def json_file(path: str) -> dict:
    return json.loads((REPO / path).read_text())


def scoring_vectors() -> dict[str, Found]:
    out: dict[str, list[str]] = {}
    for case in json_file("tests/vectors/scoring.json"):
        boxes = out.setdefault(case["rules"], [])
        if case["category"] not in boxes:
            boxes.append(case["category"])
    return in_order(out)


def rule_book_oracle() -> dict[str, Found]:
    """tests/test_rules.py's own copy of the rule book (its names and bonuses, written apart from the core)."""
    oracle = runpy.run_path(str(next(REPO.glob("tests/**/test_rules.py"))))
    return {rid: Found(tuple(boxes), oracle["UPPER_BONUS"].get(rid)) for rid, boxes in oracle["CATEGORY_IDS"].items()}


def playtext(name: str) -> Mapping:
    from fairdice.edges import playtext as module
    return getattr(module, name)


def openapi() -> dict:
    return json_file("api/openapi.json")


def logformat_rules() -> dict[str, Found]:
    """The words of the verifier's refusal of an unknown rule set ("yacht, yatzy or classic13")."""
    return ids_only(re.split(r", | or ", logformat.HEADER_FIELDS["rules"][0]))


PLACES = [
    Place("api/static/rules.js", "RULES: the page's rule sets, boxes and bonuses", page_rules, "in order", True),
    Place("api/openapi.json", "components.schemas.RulesId.enum",
          lambda: ids_only(openapi()["components"]["schemas"]["RulesId"]["enum"])),
    Place("api/static/i18n/en.js", "rules.<id>.name/.blurb/.notes and box./when./score. words",
          lambda: page_words("en"), "all"),
    Place("api/static/i18n/zh.js", "rules.<id>.name/.blurb/.notes and box./when./score. words",
          lambda: page_words("zh"), "all"),
    Place("api/static/i18n/guide.en.js", "rules.set.<id> and box. words of the guide",
          lambda: guide_words("en"), "all"),
    Place("api/static/i18n/guide.zh.js", "rules.set.<id> and box. words of the guide",
          lambda: guide_words("zh"), "all"),
    Place("api/static/guide_data.js", "HANDS: an example hand per box", lambda: in_order(page()["hands"]),
          "in order"),
    Place("fairdice/edges/playtext.py", "RULES_ZH: the terminal's Chinese rule-set names",
          lambda: ids_only(playtext("RULES_ZH"))),
    Place("fairdice/edges/playtext.py", "BOXES_ZH: the terminal's Chinese box names",
          lambda: in_order(playtext("BOXES_ZH")), "all"),
    Place("fairdice/bots/tables/manifest.json", "tables: an optimal table per rule set",
          lambda: ids_only(json_file("fairdice/bots/tables/manifest.json")["tables"])),
    *(Place("fairdice/bots/measured.json", f"bots.{bot}: measured scores",
            lambda bot=bot: ids_only(json_file("fairdice/bots/measured.json")["bots"][bot]))
      for bot in json_file("fairdice/bots/measured.json")["bots"]),
    Place("verifier/spec.py", "CATEGORIES: the verifier's boxes", lambda: in_order(spec.CATEGORIES), "in order"),
    Place("verifier/spec.py", "UPPER_BONUS: the verifier's bonuses",
          lambda: {rid: Found(upper_bonus=b) for rid, b in spec.UPPER_BONUS.items()}, bonus=True),
    Place("verifier/logformat.py", "the header's rules field: its refusal's words", logformat_rules),
    Place("verifier/policies.py", "FIXED_POINTS: greedy's made hands", lambda: in_order(policies.FIXED_POINTS),
          "among"),
    Place("verifier/botcheck.py", "PUBLISHED optimal table_sha256",
          lambda: ids_only(botcheck.PUBLISHED["optimal"][1]["table_sha256"])),
    *(Place("verifier/audit.py", f"PUBLISHED[{bot!r}]: the published scores",
            lambda bot=bot: ids_only(audit.PUBLISHED[bot])) for bot in audit.PUBLISHED),
    Place("verifier/turn.py", "FIVE_ALIKE_BOX: the forced joker's box",
          lambda: in_order({rid: (box,) for rid, box in turn.FIVE_ALIKE_BOX.items()}), "in order", joker_only=True),
    Place("api/static/verify/rules.js", "CATEGORIES: verify.js's boxes",
          lambda: in_order(page()["verify_categories"]), "in order"),
    Place("api/static/verify/rules.js", "UPPER_BONUS: verify.js's bonuses",
          lambda: {rid: Found(upper_bonus=b)
                   for rid, b in js_const("api/static/verify/rules.js", "UPPER_BONUS").items()}, bonus=True),
    Place("api/static/verify/bots.js", "FIXED_POINTS: verify.js's greedy made hands",
          lambda: in_order(js_const("api/static/verify/bots.js", "FIXED_POINTS")), "among"),
    Place("api/static/verify/bots.js", "PUBLISHED_BOTS optimal table_sha256",
          lambda: ids_only(page()["verify_bots"]["optimal"]["params"]["table_sha256"])),
    Place("api/static/verify/optimal.js", "FIVE_ALIKE_AXIS: the forced joker's box",
          lambda: in_order({rid: (box,) for rid, box in
                            js_const("api/static/verify/optimal.js", "FIVE_ALIKE_AXIS").items()}),
          "in order", joker_only=True),
    Place("SPEC.md", "§3: a section per rule set, its boxes and bonus", spec_rule_sets, "in order", True),
    Place("SPEC.md", "§3: the sentence listing the ids", spec_ids_sentence),
    Place("SPEC.md", "§5.1: the header's rules field", spec_header_rules),
    Place("tests/vectors/scoring.json", "hands per box (SPEC §8.2)", scoring_vectors, "in order"),
    Place("tests/test_rules.py", "CATEGORY_IDS and UPPER_BONUS: the rule book as the scoring tests write it",
          rule_book_oracle, "in order", True),
    Place("README.md", "the 'Rule sets:' sentence and box counts", readme_rule_sets),
]
PLACE_FILES = {p.file for p in PLACES}

# Files that name every rule set without listing them as a table: why each is not a place.
NOT_PLACES = {
    "fairdice/rules.py": "the source itself",
    "fairdice/bots/optimal/__init__.py": "its docstring quotes the manifest's start values",
    "fairdice/adapters/table_cache.py": "its docstring gives the tables' sizes",
    "bench/bench_page.py": "a benchmark of the page over each rule set",
    "bench/bench_simulate.py": "a benchmark over each rule set",
    "bench/bench_verify.py": "a benchmark over each rule set",
    "bench/bench_ev.py": "a benchmark over each rule set",
}
SCANNED = ("api", "fairdice", "verifier", "bench", "tools", "SPEC.md", "README.md")
SCANNED_SUFFIXES = {".py", ".js", ".mjs", ".json", ".md", ".html"}


# ------------------------------------------------------------------ the tests

@pytest.mark.parametrize("place", PLACES, ids=lambda p: p.id)
def test_every_place_lists_the_cores_rule_sets(place):
    assert lacks(place, place.read()) == []


def _with(extra: RuleSet) -> dict[str, RuleSet]:
    return {**RULESETS, extra.id: extra}


# a rule set no file knows: classic13's rules (so that it has the forced joker too) under a new id
PIG = dataclasses.replace(CLASSIC13, id="pig", name="Pig")
# classic13 with a box no file knows
CLASSIC13_PLUS = dataclasses.replace(CLASSIC13, categories=CLASSIC13.categories + (
    Category("pig_out", "lower", FixedIf(7, lambda counts: True), "Pig out"),))


@pytest.mark.parametrize("place", PLACES, ids=lambda p: p.id)
def test_a_new_rule_set_is_named_with_every_file_that_lacks_it(place):
    """Every place would name a rule set the core gained and the place did not: the file and the id."""
    found = place.read()
    assert f"{place.file} ({place.what}) lacks the rule set 'pig'" in lacks(place, found, _with(PIG))


@pytest.mark.parametrize("place", PLACES, ids=lambda p: p.id)
def test_a_rule_set_the_core_dropped_is_named_with_every_file_that_keeps_it(place):
    without = {rid: rs for rid, rs in RULESETS.items() if rid != "classic13"}
    assert f"{place.file} ({place.what}) has the rule set 'classic13', which the core does not" in \
        lacks(place, place.read(), without)


@pytest.mark.parametrize("place", [p for p in PLACES if p.boxes in ("in order", "all") and not p.joker_only],
                         ids=lambda p: p.id)
def test_a_new_box_is_named_with_every_file_that_lists_boxes(place):
    got = lacks(place, place.read(), {**RULESETS, "classic13": CLASSIC13_PLUS})
    assert f"{place.file} ({place.what}): 'classic13' lacks the box 'pig_out'" in got


def test_lacks_names_order_bonus_and_count():
    """The other differences a place can have, on a made-up reading of one place."""
    place = Place("x.js", "T", dict, "in order", True)
    found = {"yacht": Found(tuple(reversed(YACHT.category_ids)), 36, 11),
             "yatzy": Found(RULESETS["yatzy"].category_ids + ("pig_out",), 50),
             "classic13": Found(CLASSIC13.category_ids, 35)}
    assert lacks(place, found) == [
        f"x.js (T): 'yacht' has its boxes in the order {list(reversed(YACHT.category_ids))}, the core "
        f"{list(YACHT.category_ids)}",
        "x.js (T): 'yacht' has upper bonus 36, the core 35",
        "x.js (T): 'yacht' says 11 boxes, the core has 12",
        "x.js (T): 'yatzy' has the box 'pig_out', which the core's yatzy does not",
    ]


def test_every_file_naming_the_rule_sets_is_a_place():
    """A file (outside tests/) that names every rule set is either read here or says why it is not a table."""
    words = [re.compile(rf"\b{re.escape(rid)}\b") for rid in RULESETS]
    unlisted = []
    for root in SCANNED:
        paths = [REPO / root] if (REPO / root).is_file() else sorted((REPO / root).rglob("*"))
        for path in paths:
            if path.suffix not in SCANNED_SUFFIXES or "__pycache__" in path.parts or not path.is_file():
                continue
            rel = path.relative_to(REPO).as_posix()
            text = path.read_text(errors="replace")
            if all(w.search(text) for w in words) and rel not in PLACE_FILES and rel not in NOT_PLACES:
                unlisted.append(rel)
    assert unlisted == [], "name every rule set but are neither PLACES nor NOT_PLACES: " + ", ".join(unlisted)


def test_the_openapi_sections_are_the_cores():
    sections = openapi()["components"]["schemas"]["Category"]["properties"]["section"]["enum"]
    assert sorted(sections) == sorted({c.section for rs in RULESETS.values() for c in rs.categories})


# ------------------------------------------------------------------ the one upper-bonus rule

# The rule book (SPEC §3): 63 or more in the six upper boxes earns the rule set's bonus, once, on the score
# that reaches 63.  Written here, not read from the core.
RULE_BOOK = {"threshold": 63, "bonus": {"yacht": 35, "yatzy": 50, "classic13": 35}}


@pytest.mark.parametrize("rules_id", list(RULESETS))
def test_upper_after_earns_the_bonus_once_on_the_score_that_reaches_63(rules_id):
    rs, bonus = RULESETS[rules_id], RULE_BOOK["bonus"][rules_id]
    assert UPPER_BONUS_THRESHOLD == RULE_BOOK["threshold"]
    assert rs.upper_after(60, 3) == (63, bonus)
    assert rs.upper_after(60, 2) == (62, 0)
    assert rs.upper_after(0, 30) == (30, 0)
    assert rs.upper_after(40, 30) == (63, bonus)  # capped
    assert rs.upper_after(63, 30) == (63, 0)  # already earned
    assert rs.upper_after(70, 5) == (63, 0)  # an uncapped total past the threshold
    assert rs.upper_after(62, 0) == (62, 0)


@pytest.mark.parametrize("rules_id", list(RULESETS))
def test_the_bonus_earned_along_a_card_is_what_totals_count(rules_id):
    """Upper boxes filled one by one in every order of a few cards: the bonuses `upper_after` hands out add up to
    the rule book's bonus exactly when the six boxes reach 63, and to `totals`' upper bonus."""
    rs = RULESETS[rules_id]
    rng = np.random.default_rng(7)
    for _ in range(200):
        scores = [face * int(k) for face, k in zip(range(1, 7), rng.integers(0, 6, size=6), strict=True)]
        running, earned = 0, 0
        for points in rng.permutation(scores).tolist():
            running, bonus = rs.upper_after(running, points)
            earned += bonus
        card = dict(zip(FACE_CATEGORIES, scores, strict=True))
        assert earned == (RULE_BOOK["bonus"][rules_id] if sum(scores) >= 63 else 0), scores
        assert totals(rs, card).upper_bonus == earned


def test_the_table_and_the_arrays_are_upper_after():
    """The array form the optimal engine and the bots read is `upper_after`, entry by entry (small threshold
    included, as the engine's test games use)."""
    for rs in RULESETS.values():
        for threshold in (UPPER_BONUS_THRESHOLD, 10):
            after, bonus = space.upper_arrays(rs, threshold)
            assert after.shape == bonus.shape == (threshold + 1, 31)
            for total in range(threshold + 1):
                for points in range(31):
                    assert (after[total, points], bonus[total, points]) == rs.upper_after(total, points, threshold)
            assert not after.flags.writeable and not bonus.flags.writeable
