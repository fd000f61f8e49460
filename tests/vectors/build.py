"""Writes the test vectors and the generated parts of SPEC.md from one source.

    python tests/vectors/build.py          # rewrite tests/vectors/*.json and SPEC.md (§2.2's list, §8)
    python tests/vectors/build.py --check  # exit 1 if either is out of date

Scoring, joker and client seed vectors are written by hand from the rule book (below);
derivation vectors, the bot identities, the public-seed game, the short log (version 1) and the
hash chain of a version 2 game are computed by the core, then checked independently by the
verifier's tests.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from fairdice import derive  # noqa: E402
from fairdice.bots import BOTS, play_bots  # noqa: E402
from fairdice.game import Game, Setup  # noqa: E402
from fairdice.log import CHAIN_LABEL, Chain, Signer, build_log, canonical, header, open_log, receipt_message  # noqa: E402
from fairdice.players import PlayerKey, command_of, move_message  # noqa: E402
from fairdice.simulate import GameSpec, play_one, signer_for_seed  # noqa: E402

sys.path.insert(0, str(HERE))
from build_sessions import render_sessions, sessions_file  # noqa: E402  (SPEC §10's vectors)

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


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "big")


def stream_trace(seed: bytes, msg: bytes, count: int, bound: int) -> tuple[list[bytes], bytes]:
    """The blocks read and the bytes read from them to draw `count` values below `bound` (SPEC §2.3)."""
    limit, blocks, read, taken = 256 - 256 % bound, [], bytearray(), 0
    while taken < count:
        blocks.append(hmac.digest(seed, msg + _u32(len(blocks)), "sha256"))
        for b in blocks[-1]:
            read.append(b)
            taken += b < limit
            if taken == count:
                break
    return blocks, bytes(read)


def _first_vector(purpose, numbers_of, seed, client_seeds, game_id, count, bound, wanted):
    """The first message (numbers_of(1), numbers_of(2), ...) whose draw `wanted(blocks, bytes read)` likes."""
    for t in range(1, 10_000):
        msg = derive.message(purpose, game_id, client_seeds, *numbers_of(t))
        if wanted(*stream_trace(seed, msg, count, bound)):
            return purpose, numbers_of(t), seed, client_seeds, game_id, count, bound
    raise RuntimeError(f"no {purpose} vector found for m = {bound}")


def _rejected(bound):
    return lambda blocks, read: any(b >= 256 - 256 % bound for b in read)


def _vector_seed(label: bytes) -> bytes:
    return hashlib.sha256(b"fairdice vector " + label).digest()


def property_vectors():
    """Vectors that each show one property of the draw; some are found by trying turn numbers in order."""
    v = _vector_seed
    return [
        # five dice whose bytes cross a rejected one (252..255)
        _first_vector("roll", lambda t: [0, t, 1], v(b"rejection"), ["cs"], "reject-game", 5, 6, _rejected(6)),
        # m = 2 divides 256: no byte is ever rejected
        ("tiebreak", [1, 2, 1], v(b"6"), ["two"], "tb-2", 1, 2),
        # m = 43, the tie-break bound with the largest rejection zone (215..255), its first byte rejected
        _first_vector("tiebreak", lambda t: [0, t, 2], v(b"7"), ["forty three"], "tb-43", 1, 43,
                      lambda blocks, read: len(read) > 1),
        # m = 46, the largest number of candidates a bot can have tied
        ("tiebreak", [2, 15, 3], v(b"8"), ["forty six"], "tb-46", 1, 46),
        # 20 values below 129 (rejection zone 129..255): more than one block is read
        _first_vector("tiebreak", lambda t: [3, t, 1], v(b"9"), ["block one"], "tb-129", 20, 129,
                      lambda blocks, read: len(blocks) > 1),
    ]


def derivation_vectors():
    out = []
    for purpose, numbers, seed, client_seeds, game_id, count, bound in DERIVATION + property_vectors():
        msg = derive.message(purpose, game_id, client_seeds, *numbers)
        blocks, read = stream_trace(seed, msg, count, bound)
        limit = 256 - 256 % bound
        values = derive.uniform_ints(seed, msg, bound, count)
        out.append({
            "purpose": purpose, "numbers": numbers, "server_seed": seed.hex(),
            "commitment": derive.commitment(seed), "client_seeds": client_seeds, "game_id": game_id,
            "message": msg.hex(),
            **{f"block{i}": b.hex() for i, b in enumerate(blocks)},  # block0, and block1... when read
            "bound": bound, "count": count,
            "bytes_read": read.hex(), "rejected": [b for b in read if b >= limit],
            "values": [v + 1 for v in values] if bound == 6 else values,
            "values_are": "dice (value + 1)" if bound == 6 else "indices" if count == 1 else "integers",
        })
    return out


# SPEC §2.2: examples of the client seed rule, written from the rule, each with the reason for its verdict.
CLIENT_SEEDS_VALID = [
    ("a", "one code point, the shortest"),
    (" ", "U+0020, the one space character allowed, even alone"),
    ("ann's lucky seed", "ASCII with spaces"),
    ("x" * 256, "256 code points, the longest"),
    ("é" * 256, "256 code points in 512 UTF-8 bytes: the length counts code points, not bytes"),
    ("\U0001F600" * 256, "256 code points outside the BMP (512 UTF-16 code units): still 256"),
    ("\U0001FAE8", "U+1FAE8: unassigned in Unicode 14.0 (assigned in 15.0); unassigned code points are allowed"),
    ("\u0378", "U+0378: unassigned"),
    ("\u2065", "U+2065: unassigned, between refused format characters"),
    ("\U000EFFFD", "U+EFFFD: unassigned, the last code point before the refused planes 15 and 16"),
    ("e\u0301", "U+0301, a combining mark: allowed, and nothing is normalised"),
    ("\u2764\ufe0f", "U+FE0F, a variation selector: a mark, not a format character"),
    ("\U000E0100", "U+E0100, variation selector 17: allowed"),
    ("\u007e", "U+007E, the last character before the control U+007F"),
    ("\u00a1", "U+00A1, just after the no-break space U+00A0"),
    ("\uf900", "U+F900, just after the private use area"),
    ("\ufdcf", "U+FDCF, just below the noncharacters U+FDD0..U+FDEF"),
    ("\ufdf0", "U+FDF0, just above them"),
    ("\ufffd", "U+FFFD, the replacement character"),
    ("\U0001FFFD", "U+1FFFD: unassigned, not a noncharacter"),
    ("\U00020000", "U+20000, a CJK ideograph of plane 2"),
]
CLIENT_SEEDS_INVALID = [
    ("", "empty"),
    ("x" * 257, "257 code points"),
    ("\U0001F600" * 257, "257 code points outside the BMP"),
    ("\u0000", "U+0000, a control"),
    ("tab\there", "U+0009, a control"),
    ("two\nlines", "U+000A, a control"),
    ("\u001f", "U+001F, a control"),
    ("\u007f", "U+007F, a control"),
    ("\u0085", "U+0085 (next line), a control"),
    ("\u009f", "U+009F, a control"),
    ("no\u00a0break", "U+00A0, a space separator other than U+0020"),
    ("\u00ad", "U+00AD (soft hyphen), a format character"),
    ("\u061c", "U+061C (Arabic letter mark), a format character"),
    ("\u1680", "U+1680 (ogham space mark), a space separator"),
    ("zero\u200bwidth", "U+200B (zero width space), a format character"),
    ("\U0001F468\u200d\U0001F469", "U+200D (zero width joiner), a format character: emoji sequences joined "
                                   "by it are refused"),
    ("\u2028", "U+2028, the line separator"),
    ("\u2029", "U+2029, the paragraph separator"),
    ("\u2060", "U+2060 (word joiner), a format character"),
    ("\u3000", "U+3000 (ideographic space), a space separator"),
    ("\ufeff", "U+FEFF (byte order mark), a format character"),
    ("\U000110BD", "U+110BD (Kaithi number sign), a format character"),
    ("\U0001D173", "U+1D173 (musical symbol begin beam), a format character"),
    ("\U000E0001", "U+E0001 (language tag), a format character"),
    ("\U000E0041", "U+E0041 (tag letter A), a format character: emoji tag sequences are refused"),
    ("\ue000", "U+E000, private use"),
    ("\uf8ff", "U+F8FF, private use"),
    ("\U000F0000", "U+F0000, plane 15: private use"),
    ("\U0010FFFD", "U+10FFFD, plane 16: private use"),
    ("\ufdd0", "U+FDD0, a noncharacter"),
    ("\ufdef", "U+FDEF, a noncharacter"),
    ("\ufffe", "U+FFFE, a noncharacter"),
    ("\uffff", "U+FFFF, a noncharacter"),
    ("\U0001FFFE", "U+1FFFE, a noncharacter (low 16 bits FFFE)"),
    ("\U0010FFFF", "U+10FFFF, a noncharacter"),
]
SEAT_NAMES_VALID = [
    ("ann", "a short name"),
    ("x" * 40, "40 code points, the longest"),
    ("\U0001F600" * 40, "40 code points outside the BMP"),
    ("b\u00e9a \U0001FAE8", "letters, a space and an unassigned code point"),
]
SEAT_NAMES_INVALID = [
    ("", "empty"),
    ("x" * 41, "41 code points"),
    ("tab\there", "U+0009, a control"),
    ("a\u200bb", "U+200B, a format character"),
]
CLIENT_SEED_RULE_ABOUT = (
    "SPEC \u00a72.2: the client seed and seat name rule, fixed so that it does not depend on any Unicode version. "
    "A code point is refused when it lies in a range of 'generic_excluded' (controls, surrogates, private use, "
    "noncharacters) or of 'excluded_ranges' (the separators other than U+0020 and the format characters of the "
    "Unicode 14.0 database: general categories Zs, Zl, Zp, Cf); also refused: any code point whose low 16 bits "
    "are FFFE or FFFF. Every other code point, assigned or not, is allowed. Ranges are inclusive [lo, hi]. "
    "Lengths count code points. The examples give text and why: client seeds (1..256 code points) and seat "
    "names (1..40). Lone surrogates are refused too but left out of the examples: JSON parsers differ on them."
)
GENERIC_EXCLUDED = [[0x0000, 0x001F], [0x007F, 0x009F], [0xD800, 0xDFFF], [0xE000, 0xF8FF], [0xFDD0, 0xFDEF],
                    [0xF0000, 0x10FFFF]]
NONCHARACTER_LOW16 = [0xFFFE, 0xFFFF]


def _as_ranges(code_points) -> list[list[int]]:
    ranges: list[list[int]] = []
    for c in code_points:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return ranges


def _unicode14_refuses(c: int) -> bool:
    """The rule read straight from the Unicode 14.0 database (only meaningful when Python has that one)."""
    category = unicodedata.category(chr(c))
    noncharacter = 0xFDD0 <= c <= 0xFDEF or c & 0xFFFF in NONCHARACTER_LOW16
    return category in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") or (category == "Zs" and c != 0x20) or noncharacter


def client_seed_rule() -> dict:
    """The rule of SPEC §2.2 as data, with examples. The separators and format characters come from the
    Unicode 14.0 database when this Python has it (3.11); under another version the written list is kept."""
    if unicodedata.unidata_version == "14.0.0":
        excluded = _as_ranges(c for c in range(0x110000) if c != 0x20 and unicodedata.category(chr(c))
                              in ("Zs", "Zl", "Zp", "Cf"))
        for text, why in CLIENT_SEEDS_VALID + SEAT_NAMES_VALID:
            assert not any(_unicode14_refuses(ord(ch)) for ch in text), why
        for text, why in CLIENT_SEEDS_INVALID + SEAT_NAMES_INVALID:
            assert not text or len(text) > 40 or any(_unicode14_refuses(ord(ch)) for ch in text), why
    else:
        excluded = json.loads((HERE / "client_seed_rule.json").read_text())["excluded_ranges"]
    examples = lambda pairs: [{"text": t, "why": w} for t, w in pairs]  # noqa: E731
    return {"about": CLIENT_SEED_RULE_ABOUT, "client_seed_length": [1, derive.CLIENT_SEED_MAX],
            "seat_name_length": [1, 40], "generic_excluded": GENERIC_EXCLUDED,
            "noncharacter_low16": NONCHARACTER_LOW16, "excluded_ranges": excluded,
            "valid_examples": examples(CLIENT_SEEDS_VALID), "invalid_examples": examples(CLIENT_SEEDS_INVALID),
            "valid_seat_names": examples(SEAT_NAMES_VALID), "invalid_seat_names": examples(SEAT_NAMES_INVALID)}


def bot_identities() -> list[dict]:
    """Each published bot: the document its hash is taken of (SPEC §4.5), in canonical JSON, and the hash."""
    out = []
    for bot in BOTS.values():
        doc = {"id": bot.id, "version": bot.version, "params": bot.params()}
        text = canonical(doc).decode("ascii")
        out.append({**doc, "canonical": text, "hash": hashlib.sha256(text.encode("ascii")).hexdigest()})
    return out


PUBLIC_SEED = "spec example"


def public_seed_games() -> dict:
    """The first two games of `fairdice simulate --seed "spec example" --rules yacht --bots greedy` (SPEC §2.1)."""
    signer = signer_for_seed(PUBLIC_SEED)
    games = []
    for index in range(2):
        log = play_one(GameSpec("yacht", ("greedy",), index, PUBLIC_SEED), signer)
        games.append({"index": index, "server_seed": log["final"]["server_seed"],
                      "commitment": log["header"]["commitment"], "game_id": log["header"]["game_id"],
                      "client_seed": log["events"][0]["client_seed"],
                      "seat_name": log["header"]["seats"][0]["name"],
                      "seed_secret": log["header"]["seed_secret"]})
    return {"seed": PUBLIC_SEED, "rules": "yacht", "bots": ["greedy"],
            "private_key": signer.private_bytes().hex(), "public_key": signer.public_key.hex(),
            "key_id": signer.key_id, "games": games}


def short_log():
    """A complete one-seat game of yacht by the greedy bot, signed with the vector key: a version 1 log, kept
    as it was so that every verifier goes on reading version 1."""
    signer = Signer.from_private_bytes(VECTOR_KEY)
    game = Game(Setup.build("spec-example-1", "yacht", [{"type": "bot", "bot": "greedy", "name": "greedy"}],
                            version=1),
                hashlib.sha256(b"fairdice spec example server seed").digest())
    opened = open_log(game, signer, seed_secret=False)
    game.supply_client_seed(None, "spec example client seed")
    play_bots(game)
    return build_log(opened, game, signer)


CHAIN_SEEDS = {0: "ann's seed", 2: "bo's seed"}


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "big")


def _field(text: str) -> bytes:
    data = text.encode("utf-8")
    return _u32(len(data)) + data


def chain_vector() -> dict:
    """A version 2 game of two humans (seats 0 and 2) and a bot, abandoned by the second human on its first
    turn: both humans commit (seat 2 first) and reveal, seat 0 plays a turn, the bot its turn, seat 2 rolls and
    gives up.  With h_n after every event and two move receipts (SPEC §5.6)."""
    signer = Signer.from_private_bytes(VECTOR_KEY)
    seats = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}, {"type": "human", "name": "bo"}]
    game = Game(Setup.build("spec-example-2", "yacht", seats, version=2),
                hashlib.sha256(b"fairdice spec example 2").digest())
    opened = open_log(game, signer, seed_secret=False)
    salts = {s: hashlib.sha256(f"fairdice spec example salt {s}".encode()).hexdigest() for s in CHAIN_SEEDS}
    commitments = {s: hashlib.sha256(bytes.fromhex(salts[s]) + CHAIN_SEEDS[s].encode()).hexdigest()
                   for s in CHAIN_SEEDS}
    for seat in (2, 0):
        game.commit_client_seed(seat, commitments[seat])
    for seat in (0, 2):
        game.supply_client_seed(seat, CHAIN_SEEDS[seat], salts[seat])
    game.roll(0)
    game.roll(0, [0, 1])
    game.score(0, max(game.scoring_options(), key=lambda c: game.scoring_options()[c].points))
    play_bots(game)
    game.roll(2)
    game.abandon(2, "player")
    log = build_log(opened, game, signer)
    head = log["header"]
    steps, chain = [], Chain.start(head)
    for n, event in enumerate([None] + log["events"]):
        if event is not None:
            chain = chain.extend([event])
        steps.append({"events": n, "last_event": event and event["type"], "chain": chain.digest.hex()})
    receipts = [signer.sign_receipt(head["game_id"], n, bytes.fromhex(steps[n]["chain"]))
                for n in (5, len(log["events"]))]  # the answers to the last reveal and to the abandon
    return {
        "about": "SPEC \u00a75.6: the hash chain h_0..h_n of a version 2 log and two move receipts, signed with "
                 "the vector key of log_short.json. h_0 = SHA-256(h0_input); h_i = SHA-256(h_(i-1) || "
                 "canonical(event i-1)); a receipt signs receipt_message.",
        "private_key": VECTOR_KEY.hex(), "public_key": signer.public_key.hex(), "key_id": signer.key_id,
        "client_seeds": [{"seat": s, "client_seed": CHAIN_SEEDS[s], "salt": salts[s], "commitment": commitments[s]}
                         for s in CHAIN_SEEDS],
        "log": log,
        "h0_input": (_field(CHAIN_LABEL) + _field(head["game_id"]) + canonical(head)).hex(),
        "chain": steps,
        "receipts": [{"receipt": r, "message": receipt_message(r["game_id"], r["events"],
                                                               bytes.fromhex(r["chain"])).hex()}
                     for r in receipts],
    }


PLAYER_SEEDS = {0: "ann signs", 2: "bo signs"}


def _player_key(seat: int) -> PlayerKey:
    return PlayerKey.from_private_hex(hashlib.sha256(f"fairdice spec example player key {seat}".encode()).hexdigest())


def players_vector() -> dict:
    """A version 3 game of two signing humans (seats 0 and 2) and a bot (SPEC §5.7): both commit (seat 2
    first) to seed and key, reveal, seat 0 plays a turn, the bot its turn, seat 2 rolls once and abandons; every
    human event with n, h_n, its command, the bytes signed and the signature."""
    signer = Signer.from_private_bytes(VECTOR_KEY)
    seats = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}, {"type": "human", "name": "bo"}]
    setup = Setup.build("spec-example-3", "yacht", seats)
    seed = hashlib.sha256(b"fairdice spec example 3").digest()
    head = header(setup, Game(setup, seed).commitment, signer, seed_secret=False)
    game = Game(setup, seed, head)
    keys = {s: _player_key(s) for s in PLAYER_SEEDS}
    salts = {s: hashlib.sha256(f"fairdice spec example 3 salt {s}".encode()).hexdigest() for s in PLAYER_SEEDS}

    def signed(seat, command):
        n = len(game.events)
        return {"player_signature": keys[seat].sign(setup.game_id, n, game.chain.digest, command), "event_count": n}

    commitments = {s: derive.seed_commitment(salts[s], PLAYER_SEEDS[s], keys[s].public_hex) for s in PLAYER_SEEDS}
    for s in (2, 0):
        command = {"type": "client_seed_commit", "seat": s, "commitment": commitments[s],
                   "player_key": keys[s].public_hex}
        game.commit_client_seed(s, commitments[s], player_key=keys[s].public_hex, **signed(s, command))
    for s in (0, 2):
        command = {"type": "client_seed", "seat": s, "client_seed": PLAYER_SEEDS[s], "salt": salts[s],
                   "player_key": keys[s].public_hex}
        game.supply_client_seed(s, PLAYER_SEEDS[s], salts[s], player_key=keys[s].public_hex, **signed(s, command))
    game.roll(0, [], **signed(0, {"type": "roll", "seat": 0, "turn": 1, "roll": 1, "hold": []}))
    game.roll(0, [0, 1], **signed(0, {"type": "roll", "seat": 0, "turn": 1, "roll": 2, "hold": [0, 1]}))
    box = max(game.scoring_options(), key=lambda c: game.scoring_options()[c].points)
    game.score(0, box, **signed(0, {"type": "score", "seat": 0, "turn": 1, "category": box}))
    play_bots(game)
    game.roll(2, [], **signed(2, {"type": "roll", "seat": 2, "turn": 1, "roll": 1, "hold": []}))
    game.abandon(2, "player", **signed(2, {"type": "abandon", "seat": 2, "reason": "player"}))
    log = build_log(open_log(Game(setup, seed), signer, seed_secret=False), game, signer)
    chain_ = Chain.start(head)
    steps = []
    for n, event in enumerate(log["events"]):
        if "player_signature" in event:
            command = command_of(event)
            steps.append({"event": n, "seat": event["seat"], "chain": chain_.digest.hex(), "command": command,
                          "message": move_message(setup.game_id, n, chain_.digest, command).hex(),
                          "player_signature": event["player_signature"],
                          "checked": n == max(i for i, e in enumerate(log["events"]) if e.get("seat") == event["seat"]
                                              and e["type"] != "start")})
        chain_ = chain_.extend([event])
    return {
        "about": "SPEC \u00a75.7: a version 3 log whose human seats sign every command; for each signed event its "
                 "index n, h_n (SPEC \u00a75.6) of the events before it, the command, the bytes signed and the "
                 "signature; `checked` marks the one signature per seat that a verifier checks (the seat's last "
                 "event). Server key as in log_short.json.",
        "public_key": signer.public_key.hex(),
        "players": [{"seat": s, "private_key": keys[s].private_hex(), "player_key": keys[s].public_hex,
                     "client_seed": PLAYER_SEEDS[s], "salt": salts[s], "commitment": commitments[s]}
                    for s in PLAYER_SEEDS],
        "log": log,
        "signed_events": steps,
    }


def build() -> dict[str, str]:
    """File name -> content, for every vector file and SPEC.md."""
    files = {
        "derivation.json": derivation_vectors(),
        "scoring.json": [{"rules": r, "category": c, "dice": d, "points": p} for r, c, d, p in SCORING],
        "joker.json": JOKER,
        "log_short.json": short_log(),
        "bots.json": bot_identities(),
        "public_seed.json": public_seed_games(),
        "chain.json": chain_vector(),
        "players.json": players_vector(),
        "sessions.json": sessions_file(Signer.from_private_bytes(VECTOR_KEY)),
    }
    out = {HERE / name: json.dumps(doc, indent=1, ensure_ascii=False) + "\n" for name, doc in files.items()}
    files["client_seed_rule.json"] = client_seed_rule()  # escaped: its examples are made of invisible characters
    out[HERE / "client_seed_rule.json"] = json.dumps(files["client_seed_rule.json"], indent=1) + "\n"
    spec = ROOT / "SPEC.md"
    text = replace_region(spec.read_text(), "client-seed-rule", render_refused(files["client_seed_rule.json"]))
    out[spec] = replace_region(text, "vectors", render(files))
    return out


def replace_region(spec: str, name: str, content: str) -> str:
    """Put `content` between SPEC's <!-- name:begin --> and <!-- name:end --> markers."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = spec.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + content + end + tail


def _u(c: int) -> str:
    return f"U+{c:04X}"


def render_refused(rule: dict) -> str:
    """SPEC §2.2's list of the separators and format characters, from the same data as the vector file."""
    listed = ", ".join(_u(lo) if lo == hi else f"{_u(lo)}–{_u(hi)}" for lo, hi in rule["excluded_ranges"])
    return f"The separators and format characters refused: {listed}.\n"


def _shown(text: str) -> str:
    """An example as a quoted string, every character outside printable ASCII written \\u{hex}; repeats shortened."""
    def char(ch: str) -> str:
        return ch if " " <= ch <= "~" and ch not in '"\\' else f"\\u{{{ord(ch):X}}}"
    if len(text) > 8 and len(set(text)) == 1:
        return f'"{char(text[0])}" × {len(text)}'
    return '"' + "".join(map(char, text)) + '"'


def render_log(log: dict) -> str:
    """The whole log as JSON that parses to the document: a line per header field, event and final field."""
    dumps = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731

    def members(obj: dict, indent: str) -> list[str]:
        return [f"{indent}{dumps(k)}: {dumps(v)}," for k, v in obj.items()]

    lines = [f'{{"format": {dumps(log["format"])}, "version": {log["version"]},', ' "header": {']
    lines += members(log["header"], "  ")
    lines[-1] = lines[-1].rstrip(",")
    lines += [" },", f' "commitment_signature": {dumps(log["commitment_signature"])},', ' "events": [']
    lines += [f"  {dumps(e)}," for e in log["events"]]
    lines[-1] = lines[-1].rstrip(",")
    lines += [" ],", ' "final": {']
    lines += members(log["final"], "  ")
    lines[-1] = lines[-1].rstrip(",")
    lines += [" },", f' "signature": {dumps(log["signature"])}}}']
    text = "\n".join(lines)
    assert json.loads(text) == log and list(json.loads(text)) == list(log)
    return text


def render(files: dict) -> str:
    lines = ["### 8.1 Derivation (`derivation.json`)", "",
             "D1–D5 are the game's own draws; D6–D8 tie-breaks with other bounds; D9 draws 20 integers (more "
             "than the game ever draws from one message) to show the stream going on into block(1).", ""]
    for i, v in enumerate(files["derivation.json"], 1):
        blocks = [k for k in v if k.startswith("block") and k != "block0"]
        lines += [
            f"**D{i}** — purpose `{v['purpose']}`, numbers {v['numbers']}, game id `{v['game_id']}`, "
            f"client seeds {json.dumps(v['client_seeds'], ensure_ascii=False)}, m = {v['bound']}"
            + (f", k = {v['count']}" if v["count"] not in (1, 5) else ""),
            "",
            f"- server seed `{v['server_seed']}`",
            f"- commitment `{v['commitment']}`",
            f"- message `{v['message']}`",
            f"- block(0) `{v['block0']}`",
            *[f"- block({k[5:]}) `{v[k]}`" for k in blocks],
            f"- bytes read `{v['bytes_read']}`" + (f", rejected {v['rejected']}" if v["rejected"] else "")
            + (f" ({len(v['bytes_read']) // 2} bytes)" if blocks else ""),
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
              f"{log['final']['totals'][0]['total']}, signed with the Ed25519 private key "
              f"`{VECTOR_KEY.hex()}`. Its server seed is public (SHA-256 of the ASCII text `fairdice spec example "
              "server seed`), hence `seed_secret` false. The whole document, with white space added (it is "
              "signed as canonical JSON, §1):", "", "```json", render_log(log), "```", ""]
    rule = files["client_seed_rule.json"]
    lines += ["### 8.5 Client seeds (`client_seed_rule.json`)", "",
              "Each example is written between quotes with every character outside printable ASCII as "
              "`\\u{hex}` (its code point), and `× n` for n repeats. The same rule holds for seat names, "
              "with 1..40 code points. Valid:", ""]
    lines += [f"- `{_shown(e['text'])}` — {e['why']}" for e in rule["valid_examples"]]
    lines += ["", "Refused:", ""]
    lines += [f"- `{_shown(e['text'])}` — {e['why']}" for e in rule["invalid_examples"]]
    lines += ["", "### 8.6 Bot identities (`bots.json`)", "",
              "Each `hash` is SHA-256 of the canonical JSON shown (§4.5).", ""]
    for b in files["bots.json"]:
        lines += [f"- `{b['id']}` version `{b['version']}`: `{b['hash']}`", "", f"  `{b['canonical']}`", ""]
    pub = files["public_seed.json"]
    lines += ["### 8.7 A public seed (`public_seed.json`)", "",
              f"`fairdice simulate --seed \"{pub['seed']}\" --rules {pub['rules']} --bots {','.join(pub['bots'])}`"
              f" (§2.1): signing key `{pub['private_key']}` (public key `{pub['public_key']}`, key id "
              f"`{pub['key_id']}`).", "",
              "| game | game id | server seed | client seed |", "|---|---|---|---|"]
    lines += [f"| {g['index']} | `{g['game_id']}` | `{g['server_seed']}` | `{g['client_seed']}` |"
              for g in pub["games"]]
    lines += [""] + render_chain(files["chain.json"]) + [""] + render_players(files["players.json"])
    lines += [""] + render_sessions(files["sessions.json"])
    return "\n".join(lines) + "\n\n"


def render_chain(vec: dict) -> list[str]:
    """SPEC §8.8: a version 2 log with commit and reveal, its hash chain and two move receipts."""
    log = vec["log"]
    seeds = "; ".join(f"seat {c['seat']}: client seed `{c['client_seed']}`, salt `{c['salt']}`, commitment "
                      f"`{c['commitment']}`" for c in vec["client_seeds"])
    lines = ["### 8.8 Commit and reveal, the hash chain, move receipts (`chain.json`)", "",
             "A version 2 game of `yacht`: two humans (seats 0 and 2) and the `greedy` bot (seat 1). Both humans "
             "commit (seat 2 first), then reveal; seat 0 plays a turn, the bot its turn, and seat 2 rolls once and "
             f"abandons. Signed with the key of §8.4 (public key `{vec['public_key']}`); its server seed is SHA-256 "
             "of the ASCII text `fairdice spec example 2`. The salt of seat s is SHA-256 of the ASCII text "
             f"`fairdice spec example salt s`. {seeds}.", "", "```json", render_log(log), "```", "",
             "`h_0` is SHA-256 of `field(\"fairdice-chain/v2\") || field(game_id) || canonical(header)`, these "
             f"{len(vec['h0_input']) // 2} bytes:", "", f"`{vec['h0_input']}`", "",
             "| n | event n−1 | h_n |", "|---|---|---|"]
    lines += [f"| {s['events']} | {s['last_event'] and '`' + s['last_event'] + '`' or '—'} | `{s['chain']}` |"
              for s in vec["chain"]]
    lines += ["", "Two move receipts, each with the bytes it signs "
                  "(`field(\"fairdice-receipt/v2\") || field(game_id) || u32(n) || h_n`):", ""]
    for r in vec["receipts"]:
        lines += [f"- `{json.dumps(r['receipt'])}`", "", f"  signed message `{r['message']}`", ""]
    return lines[:-1]


def render_players(vec: dict) -> list[str]:
    """SPEC §8.9: a version 3 log, every human event signed, and what each signature covers."""
    players = "; ".join(f"seat {p['seat']}: private key `{p['private_key']}`, player key `{p['player_key']}`, "
                        f"client seed `{p['client_seed']}`, salt `{p['salt']}`, commitment `{p['commitment']}`"
                        for p in vec["players"])
    lines = ["### 8.9 Players' signatures (`players.json`)", "",
             "A version 3 game of `yacht` as in §8.8, its humans signing: both commit (seat 2 first) with their "
             "keys, reveal, seat 0 plays a turn, the bot its turn, seat 2 rolls once and abandons. Server key of "
             "§8.4; server seed SHA-256 of `fairdice spec example 3`; the private key of seat s SHA-256 of "
             "`fairdice spec example player key s`, its salt SHA-256 of `fairdice spec example 3 salt s`. "
             f"{players}.", "", "```json", render_log(vec["log"]), "```", "",
             "Each signed event: its index n, h_n, the command (§5.7) and the bytes signed, "
             "`field(\"fairdice-move/v3\") || field(game_id) || u32(n) || h_n || canonical(command)`. "
             "A verifier checks the signature of each seat's last event only (**checked**).", ""]
    for st in vec["signed_events"]:
        mark = " — **checked**" if st["checked"] else ""
        lines += [f"- event {st['event']}, seat {st['seat']}{mark}: h_n `{st['chain']}`, command "
                  f"`{json.dumps(st['command'], separators=(',', ':'), sort_keys=True)}`", "",
                  f"  signed message `{st['message']}`", ""]
    return lines[:-1]


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
