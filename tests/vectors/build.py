"""Writes the test vectors and the worked examples of SPEC.md §8 from one source.

    python tests/vectors/build.py          # rewrite tests/vectors/*.json and SPEC.md §8
    python tests/vectors/build.py --check  # exit 1 if either is out of date

Scoring and joker vectors are written by hand from the rule book (below);
derivation vectors and the short log are computed by the core, then checked
independently by the verifier's tests.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from fairdice import derive  # noqa: E402
from fairdice.bots import play_bots  # noqa: E402
from fairdice.game import Game, Setup  # noqa: E402
from fairdice.log import Signer, build_log, open_log  # noqa: E402

VECTOR_KEY = hashlib.sha256(b"fairdice test vector signing key").digest()

# (rules, category, dice, points): at least one scoring and one scratched hand per category.
SCORING = [
    ("yacht", "ones", [1, 1, 3, 4, 6], 2), ("yacht", "twos", [2, 2, 2, 5, 6], 6),
    ("yacht", "threes", [3, 1, 3, 4, 4], 6), ("yacht", "fours", [4, 4, 4, 2, 1], 12),
    ("yacht", "fives", [5, 5, 1, 2, 3], 10), ("yacht", "sixes", [6, 6, 6, 6, 1], 24),
    ("yacht", "sixes", [1, 2, 3, 4, 5], 0), ("yacht", "choice", [6, 5, 4, 3, 2], 20),
    ("yacht", "four_of_a_kind", [4, 4, 4, 4, 2], 18), ("yacht", "four_of_a_kind", [3, 3, 3, 3, 3], 15),
    ("yacht", "four_of_a_kind", [4, 4, 4, 2, 2], 0), ("yacht", "full_house", [5, 5, 5, 2, 2], 19),
    ("yacht", "full_house", [6, 6, 6, 6, 6], 30), ("yacht", "full_house", [5, 5, 5, 5, 2], 0),
    ("yacht", "small_straight", [1, 2, 3, 4, 6], 15), ("yacht", "small_straight", [3, 4, 5, 6, 6], 15),
    ("yacht", "small_straight", [1, 2, 3, 5, 6], 0), ("yacht", "large_straight", [2, 3, 4, 5, 6], 30),
    ("yacht", "large_straight", [5, 4, 3, 2, 1], 30), ("yacht", "large_straight", [1, 2, 3, 4, 6], 0),
    ("yacht", "yacht", [2, 2, 2, 2, 2], 50), ("yacht", "yacht", [2, 2, 2, 2, 3], 0),

    ("yatzy", "ones", [1, 1, 1, 4, 6], 3), ("yatzy", "twos", [2, 3, 4, 5, 6], 2),
    ("yatzy", "threes", [3, 3, 3, 3, 3], 15), ("yatzy", "fours", [1, 2, 3, 5, 6], 0),
    ("yatzy", "fives", [5, 5, 5, 5, 1], 20), ("yatzy", "sixes", [6, 6, 1, 1, 1], 12),
    ("yatzy", "one_pair", [3, 3, 5, 5, 6], 10), ("yatzy", "one_pair", [4, 4, 4, 4, 4], 8),
    ("yatzy", "one_pair", [1, 2, 3, 4, 6], 0), ("yatzy", "two_pairs", [3, 3, 5, 5, 6], 16),
    ("yatzy", "two_pairs", [2, 2, 2, 6, 6], 16), ("yatzy", "two_pairs", [4, 4, 4, 4, 2], 0),
    ("yatzy", "two_pairs", [5, 5, 5, 5, 5], 0), ("yatzy", "three_of_a_kind", [4, 4, 4, 1, 2], 12),
    ("yatzy", "three_of_a_kind", [6, 6, 6, 6, 6], 18), ("yatzy", "three_of_a_kind", [4, 4, 1, 1, 2], 0),
    ("yatzy", "four_of_a_kind", [5, 5, 5, 5, 1], 20), ("yatzy", "four_of_a_kind", [2, 2, 2, 2, 2], 8),
    ("yatzy", "four_of_a_kind", [5, 5, 5, 1, 1], 0), ("yatzy", "small_straight", [5, 4, 3, 2, 1], 15),
    ("yatzy", "small_straight", [2, 3, 4, 5, 6], 0), ("yatzy", "large_straight", [2, 3, 4, 5, 6], 20),
    ("yatzy", "large_straight", [1, 2, 3, 4, 5], 0), ("yatzy", "full_house", [5, 5, 5, 2, 2], 19),
    ("yatzy", "full_house", [3, 3, 3, 3, 3], 0), ("yatzy", "full_house", [5, 5, 5, 5, 2], 0),
    ("yatzy", "chance", [1, 3, 4, 5, 6], 19), ("yatzy", "yatzy", [6, 6, 6, 6, 6], 50),
    ("yatzy", "yatzy", [6, 6, 6, 6, 5], 0),

    ("classic13", "ones", [1, 1, 1, 1, 6], 4), ("classic13", "twos", [2, 2, 3, 4, 5], 4),
    ("classic13", "threes", [3, 3, 3, 2, 2], 9), ("classic13", "fours", [4, 1, 1, 1, 1], 4),
    ("classic13", "fives", [1, 2, 3, 4, 6], 0), ("classic13", "sixes", [6, 6, 6, 6, 6], 30),
    ("classic13", "three_of_a_kind", [4, 4, 4, 5, 3], 20), ("classic13", "three_of_a_kind", [2, 2, 2, 2, 2], 10),
    ("classic13", "three_of_a_kind", [4, 4, 5, 5, 3], 0), ("classic13", "four_of_a_kind", [5, 5, 5, 5, 2], 22),
    ("classic13", "four_of_a_kind", [5, 5, 5, 2, 2], 0), ("classic13", "full_house", [3, 3, 3, 6, 6], 25),
    ("classic13", "full_house", [6, 6, 6, 6, 6], 0), ("classic13", "full_house", [3, 3, 3, 3, 6], 0),
    ("classic13", "small_straight", [3, 4, 5, 6, 1], 30), ("classic13", "small_straight", [1, 2, 3, 4, 5], 30),
    ("classic13", "small_straight", [1, 2, 4, 5, 6], 0), ("classic13", "large_straight", [1, 2, 3, 4, 5], 40),
    ("classic13", "large_straight", [6, 5, 4, 3, 2], 40), ("classic13", "large_straight", [1, 2, 3, 4, 6], 0),
    ("classic13", "yahtzee", [1, 1, 1, 1, 1], 50), ("classic13", "yahtzee", [1, 1, 1, 1, 2], 0),
    ("classic13", "chance", [6, 6, 5, 4, 1], 22),
]

_ALL_CLASSIC = ["ones", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind", "four_of_a_kind",
                "full_house", "small_straight", "large_straight", "yahtzee", "chance"]


def _card(**filled):
    return {c: filled.get(c) for c in _ALL_CLASSIC}


def _joker(name, card, dice, legal, upper_first=False):
    return {"name": name, "rules": "classic13", "card": card, "dice": dice, "upper_first": upper_first,
            "legal": {cid: {"points": p, "yahtzee_bonus": b, "joker": j} for cid, (p, b, j) in legal.items()}}


# Forced joker cases (classic13): card (null = open), dice, and the legal boxes with what each scores;
# the last one shows the upper-first house rule, under which the joker cannot arise.
JOKER = [
    _joker("yahtzee box open: scored normally", _card(), [4, 4, 4, 4, 4],
           {"ones": (0, 0, False), "twos": (0, 0, False), "threes": (0, 0, False), "fours": (20, 0, False),
            "fives": (0, 0, False), "sixes": (0, 0, False), "three_of_a_kind": (20, 0, False),
            "four_of_a_kind": (20, 0, False), "full_house": (0, 0, False), "small_straight": (0, 0, False),
            "large_straight": (0, 0, False), "yahtzee": (50, 0, False), "chance": (20, 0, False)}),
    _joker("yahtzee 50, own upper box open: must go there, +100", _card(yahtzee=50), [6, 6, 6, 6, 6],
           {"sixes": (30, 100, False)}),
    _joker("yahtzee 0, own upper box open: must go there, no bonus", _card(yahtzee=0), [2, 2, 2, 2, 2],
           {"twos": (10, 0, False)}),
    _joker("yahtzee 50, own upper box filled: any open lower box as a joker, +100",
           _card(yahtzee=50, threes=9, full_house=25, chance=20), [3, 3, 3, 3, 3],
           {"three_of_a_kind": (15, 100, True), "four_of_a_kind": (15, 100, True),
            "small_straight": (30, 100, True), "large_straight": (40, 100, True)}),
    _joker("yahtzee 0, own upper box filled: joker without bonus", _card(yahtzee=0, fives=15), [5, 5, 5, 5, 5],
           {"three_of_a_kind": (25, 0, True), "four_of_a_kind": (25, 0, True), "full_house": (25, 0, True),
            "small_straight": (30, 0, True), "large_straight": (40, 0, True), "chance": (25, 0, True)}),
    _joker("yahtzee 50, own upper box and every lower box filled: 0 in an open upper box, +100",
           _card(yahtzee=50, ones=3, fours=12, three_of_a_kind=20, four_of_a_kind=22, full_house=25,
                 small_straight=30, large_straight=40, chance=21),
           [1, 1, 1, 1, 1],
           {"twos": (0, 100, False), "threes": (0, 100, False), "fives": (0, 100, False),
            "sixes": (0, 100, False)}),
    _joker("upper_first (no joker): lower boxes closed while upper boxes are open", _card(ones=3, sixes=24),
           [2, 3, 4, 5, 6],
           {"twos": (2, 0, False), "threes": (3, 0, False), "fours": (4, 0, False), "fives": (5, 0, False)},
           upper_first=True),
]

# Derivation vectors: (purpose, numbers, server seed, client seeds, game id, how many values, bound).
DERIVATION = [
    ("roll", [0, 1, 1], bytes(range(32)), ["ann's lucky seed"], "game-0001", 5, 6),
    ("roll", [1, 7, 3], hashlib.sha256(b"fairdice vector 2").digest(), ["alpha", "béta ✓"], "g-2", 5, 6),
    ("rolloff", [1, 2], hashlib.sha256(b"fairdice vector 3").digest(), ["operator"], "rolloff-game", 5, 6),
    ("tiebreak", [0, 4, 2], hashlib.sha256(b"fairdice vector 4").digest(), ["x"], "tb-game", 1, 7),
]


def _rejecting_vector():
    """The first roll message (over turns) whose accepted bytes cross a rejected one."""
    seed = hashlib.sha256(b"fairdice vector rejection").digest()
    for turn in range(1, 10_000):
        msg = derive.message("roll", "reject-game", ["cs"], 0, turn, 1)
        block = derive.hmac.digest(seed, msg + bytes(4), "sha256")
        accepted = [b for b in block if b < 252]
        first_five_end = next(i for i in range(32) if sum(b < 252 for b in block[: i + 1]) == 5)
        if any(b >= 252 for b in block[: first_five_end + 1]):
            return ("roll", [0, turn, 1], seed, ["cs"], "reject-game", 5, 6)
    raise RuntimeError("no rejecting vector found")


def derivation_vectors():
    out = []
    for purpose, numbers, seed, client_seeds, game_id, count, bound in DERIVATION + [_rejecting_vector()]:
        msg = derive.message(purpose, game_id, client_seeds, *numbers)
        block0 = derive.hmac.digest(seed, msg + bytes(4), "sha256")
        limit = 256 - 256 % bound
        values = derive.uniform_ints(seed, msg, bound, count)
        used = []
        for b in block0:
            used.append(b)
            if sum(x < limit for x in used) == count:
                break
        out.append({
            "purpose": purpose, "numbers": numbers, "server_seed": seed.hex(),
            "commitment": derive.commitment(seed), "client_seeds": client_seeds, "game_id": game_id,
            "message": msg.hex(), "block0": block0.hex(), "bound": bound,
            "bytes_read": bytes(used).hex(), "rejected": [b for b in used if b >= limit],
            "values": [v + 1 for v in values] if bound == 6 else values,
            "values_are": "dice (value + 1)" if bound == 6 else "indices",
        })
    return out


def short_log():
    """A complete one-seat game of yacht by the greedy bot, signed with the vector key."""
    signer = Signer.from_private_bytes(VECTOR_KEY)
    game = Game(Setup.build("spec-example-1", "yacht", [{"type": "bot", "bot": "greedy", "name": "greedy"}]),
                hashlib.sha256(b"fairdice spec example server seed").digest())
    opened = open_log(game, signer, seed_secret=False)
    game.supply_client_seed(None, "spec example client seed")
    play_bots(game)
    return build_log(opened, game, signer)


def build() -> dict[str, str]:
    """File name -> content, for every vector file and SPEC.md."""
    files = {
        "derivation.json": derivation_vectors(),
        "scoring.json": [{"rules": r, "category": c, "dice": d, "points": p} for r, c, d, p in SCORING],
        "joker.json": JOKER,
        "log_short.json": short_log(),
    }
    out = {HERE / name: json.dumps(doc, indent=1, ensure_ascii=False) + "\n" for name, doc in files.items()}
    spec = ROOT / "SPEC.md"
    out[spec] = render_into_spec(spec.read_text(), files)
    return out


def render_into_spec(spec: str, files: dict) -> str:
    begin, end = "<!-- vectors:begin -->", "<!-- vectors:end -->"
    head, rest = spec.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + render(files) + end + tail


def render(files: dict) -> str:
    lines = ["### 8.1 Derivation (`derivation.json`)", ""]
    for i, v in enumerate(files["derivation.json"], 1):
        lines += [
            f"**D{i}** — purpose `{v['purpose']}`, numbers {v['numbers']}, game id `{v['game_id']}`, "
            f"client seeds {json.dumps(v['client_seeds'], ensure_ascii=False)}, m = {v['bound']}",
            "",
            f"- server seed `{v['server_seed']}`",
            f"- commitment `{v['commitment']}`",
            f"- message `{v['message']}`",
            f"- block(0) `{v['block0']}`",
            f"- bytes read `{v['bytes_read']}`" + (f", rejected {v['rejected']}" if v["rejected"] else ""),
            f"- result: {v['values_are']} **{v['values']}**",
            "",
        ]
    lines += ["### 8.2 One hand per category (`scoring.json`)", "",
              "| rules | category | dice | points |", "|---|---|---|---|"]
    for v in files["scoring.json"]:
        lines.append(f"| {v['rules']} | `{v['category']}` | {v['dice']} | {v['points']} |")
    lines += ["", "### 8.3 Forced joker (`joker.json`, classic13)", ""]
    for v in files["joker.json"]:
        filled = {k: p for k, p in v["card"].items() if p is not None}
        legal = ", ".join(f"`{c}` {o['points']}" + (" joker" if o["joker"] else "")
                          + (f" +{o['yahtzee_bonus']}" if o["yahtzee_bonus"] else "")
                          for c, o in v["legal"].items())
        rule = " (upper_first)" if v["upper_first"] else ""
        lines += [f"- {v['name']}{rule}: filled {json.dumps(filled)}, dice {v['dice']} → {legal}"]
    log = files["log_short.json"]
    lines += ["", "### 8.4 A short complete log (`log_short.json`)", "",
              f"A solitaire game of `yacht` by the `greedy` bot: {len(log['events'])} events, total "
              f"{log['final']['totals'][0]['total']}. Its signing key is the Ed25519 private key "
              f"`{VECTOR_KEY.hex()}` (public key `{log['header']['public_key']}`). The full document is "
              "`tests/vectors/log_short.json`; its first turn:", "", "```json"]
    first_turn = [e for e in log["events"] if e.get("turn") in (None, 1)]
    lines += [json.dumps(e, ensure_ascii=False) for e in first_turn]
    lines += ["```", ""]
    return "\n".join(lines) + "\n"


def main(argv) -> int:
    stale = [path for path, text in build().items() if not path.exists() or path.read_text() != text]
    if "--check" in argv:
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path, text in build().items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
