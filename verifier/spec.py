"""SPEC.md §1-§3 written out again, independently of the server: canonical JSON,
the HMAC-SHA256 derivation of every number, and the scoring of the three rule sets."""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
from functools import lru_cache, cache
from operator import itemgetter

SCHEME = "fairdice/v1"

# ---------------------------------------------------------------- §1 notation


# (parsed JSON cannot contain itself: no need for the encoder's cycle check, a tenth of its time)
CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False,
                             check_circular=False)


def canonical(doc) -> bytes:
    """Canonical JSON: sorted keys, no white space, ASCII only (SPEC §1)."""
    return CANONICAL.encode(doc).encode("ascii")


def canonical_object(members: dict[str, bytes]) -> bytes:
    """canonical() of an object whose members are given as their canonical JSON already."""
    return b"{" + b",".join(canonical_key(k) + b":" + v for k, v in sorted(members.items())) + b"}"


@lru_cache(maxsize=256)
def canonical_key(key: str) -> bytes:
    return canonical(key)


HOLDS = {tuple(p for p in range(5) if mask >> p & 1) for mask in range(32)}  # every sorted set of positions
HOLD_JSON = {hold: canonical(list(hold)).decode("ascii") for hold in HOLDS}


class _Decimal(dict):
    """str(n) of an integer; those below 1024 (most numbers of a log) written once, at import."""

    def __missing__(self, n: int) -> str:
        return str(n)


DECIMAL = _Decimal((n, str(n)) for n in range(1024))  # (a lookup is cheaper than formatting the integer)


class _DiceJSON(dict):
    """The canonical JSON of five dice (a tuple of integers 1..6), written once per distinct roll (at most 6^5)."""

    def __missing__(self, dice: tuple) -> str:
        text = self[dice] = "[%d,%d,%d,%d,%d]" % dice  # noqa: UP031 (one C call: the verifier's hottest line)
        return text


DICE_JSON = _DiceJSON()


ROLL_VALUES = itemgetter("dice", "hold", "roll", "seat", "turn")  # the fields of a roll, keys in code point order
SCORE_VALUES = itemgetter("category", "joker", "points", "seat", "total", "turn", "upper_bonus", "yahtzee_bonus")


def canonical_events(events: list[dict]) -> bytes:
    """canonical(events), in under half the time, for events that have exactly the fields and JSON types of
    SPEC §5.3, a valid hold and a known category: the replay checks all of that first (see canonical_event_texts)."""
    return b"[" + b",".join(canonical_event_texts(events)) + b"]"


def canonical_event_texts(events: list[dict]) -> list[bytes]:
    """canonical(event) of each event, for events that have exactly the fields and JSON types of SPEC §5.3, a
    valid hold and a known category: the replay checks all of that first. A roll and a score are written out
    (keys in code point order; a human seat's `player_signature` of version 3 among them), their numbers looked
    up rather than formatted; values of other types would be written wrongly (True as 1). The tests compare the
    two on many logs."""
    texts, d = [], DECIMAL
    for e in events:
        kind = e["type"]
        if kind == "roll":
            dice, hold, roll, seat, turn = ROLL_VALUES(e)
            texts.append(f'{{"dice":{DICE_JSON[tuple(dice)]},"hold":{HOLD_JSON[tuple(hold)]},'
                         f'{_player_signature(e) if len(e) == 7 else ""}"roll":{d[roll]},'
                         f'"seat":{d[seat]},"turn":{d[turn]},"type":"roll"}}'.encode("ascii"))
        elif kind == "score":
            category, joker, points, seat, total, turn, ub, yb = SCORE_VALUES(e)
            texts.append(f'{{"category":"{category}","joker":{"true" if joker else "false"},'
                         f'{_player_signature(e) if len(e) == 10 else ""}"points":{d[points]},'
                         f'"seat":{d[seat]},"total":{d[total]},"turn":{d[turn]},"type":"score",'
                         f'"upper_bonus":{d[ub]},"yahtzee_bonus":{d[yb]}}}'.encode("ascii"))
        else:
            texts.append(canonical(e))
    return texts


def _player_signature(event: dict) -> str:
    """The member `"player_signature":...,` of a human seat's roll or score: a string (hex digits, written as they
    are; any other, escaped as canonical JSON escapes it), or null."""
    signature = event["player_signature"]
    if signature is None:
        return '"player_signature":null,'
    if signature.isascii() and signature.isalnum():
        return f'"player_signature":"{signature}",'
    return f'"player_signature":{canonical(signature).decode("ascii")},'


def u32(n: int) -> bytes:
    return struct.pack(">I", n)


def field(text: str) -> bytes:
    b = text.encode("utf-8", "surrogatepass")  # (a lone surrogate is no valid client seed, but must not crash)
    return u32(len(b)) + b


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -------------------------------------------------------------- §2.3 derivation


PURPOSE_HEADS = {p: field(SCHEME) + field(p) for p in ("roll", "rolloff", "tiebreak")}
PACK_4_U32 = struct.Struct(">IIII").pack
FACE_OF_BYTE = bytes(b % 6 + 1 for b in range(256))
REJECTED_BYTES = bytes(range(252, 256))


class Deriver:
    """Draws the numbers of one game from its server seed, game id and client seeds."""

    def __init__(self, server_seed: bytes, game_id: str, client_seeds: list[str]):
        self.key = server_seed
        tail = field(game_id) + u32(len(client_seeds)) + b"".join(field(c) for c in client_seeds)
        self.prefix = {p: head + tail for p, head in PURPOSE_HEADS.items()}  # msg(purpose) up to the numbers
        self.roll_prefix = self.prefix["roll"]

    def message(self, purpose: str, *numbers: int) -> bytes:
        """msg(purpose, n1, n2, ...) of SPEC §2.3 (without the block counter)."""
        return self.prefix[purpose] + b"".join(u32(n) for n in numbers)

    def draw(self, msg: bytes, k: int, m: int) -> list[int]:
        """k integers uniform in 0..m-1 from the byte stream of msg, by rejection."""
        limit = 256 - 256 % m
        out: list[int] = []
        i = 0
        while True:
            for b in hmac.digest(self.key, msg + u32(i), "sha256"):
                if b < limit:
                    out.append(b % m)
                    if len(out) == k:
                        return out
            i += 1

    def five_dice(self, purpose: str, *numbers: int) -> list[int]:
        return [d + 1 for d in self.draw(self.message(purpose, *numbers), 5, 6)]

    def roll(self, seat: int, turn: int, roll: int) -> list[int]:
        # the same as five_dice("roll", seat, turn, roll), with block(0) inlined: it is the hot path
        block = hmac.digest(self.key, self.roll_prefix + PACK_4_U32(seat, turn, roll, 0), "sha256")
        faces = block.translate(FACE_OF_BYTE, REJECTED_BYTES)  # drop bytes 252..255, map b to b % 6 + 1
        return list(faces[:5]) if len(faces) >= 5 else self.five_dice("roll", seat, turn, roll)

    def rolloff(self, round_: int, seat: int) -> list[int]:
        return self.five_dice("rolloff", round_, seat)

    def tiebreak(self, seat: int, turn: int, roll: int, k: int) -> int:
        return self.draw(self.message("tiebreak", seat, turn, roll), 1, k)[0]


# ------------------------------------------------------------------- §3 rules

UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")
CATEGORIES = {
    "yacht": UPPER + ("choice", "four_of_a_kind", "full_house", "small_straight",
                      "large_straight", "yacht"),
    "yatzy": UPPER + ("one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind",
                      "small_straight", "large_straight", "full_house", "chance", "yatzy"),
    "classic13": UPPER + ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight",
                          "large_straight", "yahtzee", "chance"),
}
UPPER_BONUS = {"yacht": 35, "yatzy": 50, "classic13": 35}
UPPER_BONUS_AT = 63
YAHTZEE_BONUS = 100
JOKER_POINTS = {"full_house": 25, "small_straight": 30, "large_straight": 40}  # others: sum of dice


RUNS = {n: [set(range(lo, lo + n)) for lo in range(1, 8 - n)] for n in (4, 5)}  # 1234, 2345, 3456; 12345, 23456


def has_run(faces: set[int], length: int) -> bool:
    """Some `length` consecutive faces are all present."""
    return any(run <= faces for run in RUNS[length])


def points(rules: str, category: str, dice) -> int:  # noqa: C901 (allow-listed in pyproject.toml: the rule book, box by box)
    """The normal score of `category` for five dice (no joker), SPEC §3.1-§3.3."""
    if category in UPPER:
        face = UPPER.index(category) + 1
        return face * list(dice).count(face)
    total = sum(dice)
    count = {f: list(dice).count(f) for f in set(dice)}
    most = max(count.values())
    shape = sorted(count.values())
    faces = set(dice)
    if rules == "yacht":
        if category == "choice":
            return total
        if category == "four_of_a_kind":
            return total if most >= 4 else 0
        if category == "full_house":
            return total if shape in ([2, 3], [5]) else 0
        if category == "small_straight":
            return 15 if has_run(faces, 4) else 0
        if category == "large_straight":
            return 30 if has_run(faces, 5) else 0
        if category == "yacht":
            return 50 if most == 5 else 0
    elif rules == "yatzy":
        pairs = sorted(f for f, c in count.items() if c >= 2)
        if category == "one_pair":
            return 2 * pairs[-1] if pairs else 0
        if category == "two_pairs":
            return 2 * (pairs[-1] + pairs[-2]) if len(pairs) >= 2 else 0
        if category == "three_of_a_kind":
            return next((3 * f for f, c in count.items() if c >= 3), 0)
        if category == "four_of_a_kind":
            return next((4 * f for f, c in count.items() if c >= 4), 0)
        if category == "small_straight":
            return 15 if sorted(dice) == [1, 2, 3, 4, 5] else 0
        if category == "large_straight":
            return 20 if sorted(dice) == [2, 3, 4, 5, 6] else 0
        if category == "full_house":
            return total if shape == [2, 3] else 0
        if category == "chance":
            return total
        if category == "yatzy":
            return 50 if most == 5 else 0
    elif rules == "classic13":
        if category == "three_of_a_kind":
            return total if most >= 3 else 0
        if category == "four_of_a_kind":
            return total if most >= 4 else 0
        if category == "full_house":
            return 25 if shape == [2, 3] else 0
        if category == "small_straight":
            return 30 if has_run(faces, 4) else 0
        if category == "large_straight":
            return 40 if has_run(faces, 5) else 0
        if category == "yahtzee":
            return 50 if most == 5 else 0
        if category == "chance":
            return total
    raise KeyError(f"{category!r} is not a category of {rules!r}")


@cache
def hand_points(rules: str, hand: tuple) -> dict[str, int]:
    """points() of every category for one hand, given as its sorted dice. Computed once per hand:
    a rule set has 252 hands."""
    return {c: points(rules, c, hand) for c in CATEGORIES[rules]}


class _RollPoints(dict):
    """hand_points() of each roll (five dice as rolled, a tuple): found without sorting the dice, as the replay
    asks for every box filled (at most 6^5 rolls per rule set)."""

    def __init__(self, rules: str):
        super().__init__()
        self.rules = rules

    def __missing__(self, dice: tuple) -> dict[str, int]:
        points = self[dice] = hand_points(self.rules, tuple(sorted(dice)))
        return points


ROLL_POINTS = {rules: _RollPoints(rules) for rules in CATEGORIES}


def score_box(rules: str, boxes: dict, dice, category: str, upper_first: bool):
    """(points, joker) for recording the dice in `category` now, or None when that box is not
    legal: filled, closed by the house rule upper_first (§3.4), or excluded by the forced joker (§3.3).
    `boxes` maps every category of the rule set to its points, or None while open."""
    if boxes[category] is not None:
        return None
    lower_closed = upper_first and None in (boxes[c] for c in UPPER)
    if lower_closed and category not in UPPER:
        return None
    if rules == "classic13" and boxes["yahtzee"] is not None and dice.count(dice[0]) == 5:
        face_box = UPPER[dice[0] - 1]
        if boxes[face_box] is None:  # the upper box of that face, if open, is the only legal box
            return (5 * dice[0], False) if category == face_box else None
        if category not in UPPER:  # any open lower box, scored as a joker
            return JOKER_POINTS.get(category, sum(dice)), True
        lower_open = not lower_closed and None in (boxes[c] for c in CATEGORIES[rules] if c not in UPPER)
        return None if lower_open else (0, False)  # an upper box only when no lower box may be used
    return ROLL_POINTS[rules][tuple(dice)][category], False


def options(rules: str, boxes: dict, dice, upper_first: bool) -> dict[str, tuple[int, bool]]:
    """Every box the dice may legally go into now: {category: (points, joker)}."""
    return {c: o for c in CATEGORIES[rules] if (o := score_box(rules, boxes, dice, c, upper_first))}


def yahtzee_bonus(rules: str, boxes: dict, dice) -> int:
    """The Yahtzee bonus that recording these dice earns (classic13, §3.3 item 2)."""
    if rules == "classic13" and boxes["yahtzee"] == 50 and len(set(dice)) == 1:
        return YAHTZEE_BONUS
    return 0


def upper_bonus(rules: str, upper_before: int, category: str, pts: int) -> int:
    """The upper bonus earned by the event that writes `pts` into `category`, when the upper
    boxes filled before add up to `upper_before`."""
    if category not in UPPER:
        return 0
    return UPPER_BONUS[rules] if upper_before < UPPER_BONUS_AT <= upper_before + pts else 0
