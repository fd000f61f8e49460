"""The `optimal` bot of SPEC §4.6, for the verifier: its table read from a file and held to the published
digest (the trust anchor: the log's header commits to it), and each decision solved from the table values
of the states the turn can reach, in the same exact integers (units of 2^-29 point) the table was made in.

Table files are looked for in `--tables DIR`, else $FAIRDICE_CACHE_DIR, else $XDG_CACHE_HOME/fairdice, else
~/.cache/fairdice, and only read. A file is either the table's canonical bytes (SPEC §4.6: a header line,
then int64 little-endian; its SHA-256 is the digest) or numpy's .npy of the same array, as `fairdice tables
build` writes it into its cache (parsed here with the standard library)."""

from __future__ import annotations

import ast
import hashlib
import os
import struct
import sys
from array import array
from itertools import repeat
from operator import truediv
from pathlib import Path

from .errors import VerifierError
from .policies import Choices
from .spec import CATEGORIES, UPPER
from .turn import (FIVE_ALIKE_BOX, OUTCOMES, BoxValues, TurnCache, best_over_subkeeps, card_state, keep_sums,
                   round_half_even, roll_index, rounded_means, sub_keeps)

SCALE_BITS = 29
SCALE = 1 << SCALE_BITS  # one point in table units
THRESHOLD = 63  # upper totals are kept capped here
TIE_TOLERANCE = 1e-9  # in points, on the binary64 values (SPEC §4.6)
NPY_MAGIC = b"\x93NUMPY"
GET_IT = ("get it with `fairdice tables build --rules {rules}` (which writes it into fairdice's cache directory, "
          "where this verifier looks by default), or compute it from SPEC §4.6 with a programme of your own, and "
          "put it at that path (or pass --tables DIR); or pass --no-check-bots to leave bot decisions unchecked")


class TableError(VerifierError):
    """The table an optimal game needs is missing or not the published one: a usage error, not the log's fault."""

    def __init__(self, where: str, message: str):
        super().__init__(where, message)  # both in args: the error crosses process boundaries (pickled)
        self.where, self.message = where, message

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def shape(rules: str) -> tuple[int, int, int]:
    """(2^boxes masks, 64 capped upper totals, 2 Yahtzee-50 flags for classic13 else 1)."""
    return 1 << len(CATEGORIES[rules]), THRESHOLD + 1, 2 if rules in FIVE_ALIKE_BOX else 1


def canonical_header(rules: str) -> bytes:
    """The first line of a table's canonical bytes (SPEC §4.6)."""
    dims = "x".join(str(d) for d in shape(rules))
    return f"fairdice-optimal/1 {rules} int64-le {dims} scale=2^{SCALE_BITS}\n".encode("ascii")


def table_dirs(tables: str | None = None) -> list[Path]:
    """Where tables are looked for: the one directory given, else the fairdice cache directory."""
    if tables:
        return [Path(tables)]
    if os.environ.get("FAIRDICE_CACHE_DIR"):
        return [Path(os.environ["FAIRDICE_CACHE_DIR"])]
    if os.environ.get("XDG_CACHE_HOME"):
        return [Path(os.environ["XDG_CACHE_HOME"]) / "fairdice"]
    return [Path.home() / ".cache" / "fairdice"]


def table_file_names(rules: str) -> tuple[str, str]:
    return f"optimal-{rules}-v1.npy", f"optimal-{rules}-v1.bin"


def npy_payload(data: bytes, where: Path, rules: str) -> bytes:
    """The array bytes of a .npy file holding exactly the table's int64 little-endian C-order array."""
    if len(data) < 12 or data[:6] != NPY_MAGIC or data[6] not in (1, 2, 3):
        raise TableError(str(where), "neither the canonical bytes of a table (SPEC §4.6) nor a .npy file; "
                         + GET_IT.format(rules=rules))
    if data[6] == 1:
        (length,), start = struct.unpack("<H", data[8:10]), 10
    else:
        (length,), start = struct.unpack("<I", data[8:12]), 12
    try:
        header = ast.literal_eval(data[start:start + length].decode("latin-1"))
    except (ValueError, SyntaxError):
        raise TableError(str(where), "unreadable .npy header; " + GET_IT.format(rules=rules)) from None
    want = {"descr": "<i8", "fortran_order": False, "shape": shape(rules)}
    if not isinstance(header, dict) or header != want:
        raise TableError(str(where), f"the .npy header is {header!r}, expected {want!r}; " + GET_IT.format(rules=rules))
    return data[start + length:]


class Table:
    """One rule set's table, checked against its published digest: V[state] in units of 2^-29 point; and the
    turns solved from it so far (`turns`: the within-turn solve of each state met, for the logs that follow)."""

    def __init__(self, rules: str, values: array):
        self.rules, self.values = rules, values
        self.flags = shape(rules)[2]
        self.five_alike = FIVE_ALIKE_BOX.get(rules)  # the box of the Yahtzee-50 axis, if the table has one
        self.bits = {category: 1 << c for c, category in enumerate(CATEGORIES[rules])}  # in the mask
        self.turns = TurnCache(Turn)

    @classmethod
    def load(cls, rules: str, digest: str, tables: str | None = None) -> Table:
        """The table of `rules` whose canonical bytes have SHA-256 `digest`; TableError if none is found."""
        tried = []
        for directory in table_dirs(tables):
            for name in table_file_names(rules):
                path = directory / name
                if path.is_file():
                    return cls(rules, read_table(path, rules, digest))
                tried.append(str(path))
        raise TableError(" or ".join(tried), f"no optimal table for {rules}; " + GET_IT.format(rules=rules))

    def index(self, mask: int, upper: int, flag: int) -> int:
        return (mask * (THRESHOLD + 1) + upper) * self.flags + flag

    def state(self, boxes: dict) -> tuple[int, int, int]:
        """(filled boxes as a mask, bit c for the c-th box in table order; upper total capped at 63;
        1 when the Yahtzee box holds 50): turn.card_state."""
        return card_state(self.rules, boxes)

    def turn(self, boxes: dict) -> Turn:
        """The turn on this card solved, once per state."""
        return self.turns.get(self.state(boxes), self, boxes)

    def successors(self, state: tuple[int, int, int], category: str, points: tuple[int, ...]) -> list[int]:
        """The table value of the state after writing each of `points` into `category`."""
        mask, upper, flag = state
        values, flags, row = self.values, self.flags, self.index(mask | self.bits[category], 0, 0)
        if category in UPPER:
            return [values[row + min(THRESHOLD, upper + p) * flags + flag] for p in points]
        if category == self.five_alike:
            return [values[row + upper * flags + (p > 0)] for p in points]
        return [values[row + upper * flags + flag]] * len(points)


def read_table(path: Path, rules: str, digest: str) -> array:
    """The table values in `path`, after checking that its canonical bytes have SHA-256 `digest`."""
    head, (m, u, f) = canonical_header(rules), shape(rules)
    size = 8 * m * u * f  # bytes of values
    try:
        if path.stat().st_size > len(head) + size + 65536:  # (a .npy header is at most 64 KiB)
            raise TableError(str(path), f"larger than a {rules} table; " + GET_IT.format(rules=rules))
        data = path.read_bytes()
    except OSError as e:
        raise TableError(str(path), f"cannot be read ({e.strerror or e}); " + GET_IT.format(rules=rules)) from None
    payload = data[len(head):] if data.startswith(head) else npy_payload(data, path, rules)
    if len(payload) != size:
        raise TableError(str(path), f"{len(payload)} bytes of values, expected {size}; " + GET_IT.format(rules=rules))
    found = hashlib.sha256(head + payload).hexdigest()
    if found != digest:
        raise TableError(str(path), f"the SHA-256 of its canonical bytes is {found}, but the published {rules} "
                         f"table (the one the log's bot identity commits to) has {digest}; "
                         + GET_IT.format(rules=rules))
    values = array("q")
    values.frombytes(payload)
    if sys.byteorder == "big":
        values.byteswap()
    return values


# ------------------------------------------------------------------ the within-turn solve


def box_values(table: Table, boxes: dict) -> BoxValues:
    """Every legal box of every roll on this card, worth gain · 2^29 plus the table value of the state it leads to."""
    state = table.state(boxes)
    return BoxValues(table.rules, boxes, False, lambda category, points, gains: [
        gain * SCALE + value for gain, value in zip(gains, table.successors(state, category, points))])


def final_values(table: Table, card: tuple) -> list[int]:
    """R3: for every roll (252), its value after the turn's last roll: the best legal box."""
    return box_values(table, dict(zip(CATEGORIES[table.rules], card))).best_per_roll()


def best_keeps(sums: list[int]) -> list[int]:
    """Keep sums (7776 × value, all 462) -> the roll values one roll earlier: the best keep inside each roll
    (keeping all five is scoring now, or rolling on), each keep's mean rounded half-even to table units."""
    return rounded_means(best_over_subkeeps(sums))


def earlier_roll(roll_values: list[int]) -> list[int]:
    """Roll values one roll later -> one roll earlier (best_keeps of their keep sums)."""
    return best_keeps(keep_sums(roll_values))


class Turn:
    """The optimal bot's turn on one card, solved from the table: every legal box of every roll with its value
    (box_values), and every keep's sum (7776 × its value in table units) with one roll and with two rolls to
    come (`hold_sums[rolls_left]`)."""

    __slots__ = ("boxes", "hold_sums")

    def __init__(self, table: Table, boxes: dict):
        self.boxes = box_values(table, boxes)
        one = keep_sums(self.boxes.best_per_roll())
        two = keep_sums(best_keeps(one))
        self.hold_sums = (None, array("q", one), array("q", two))


def turn_value(table: Table, card: tuple) -> int:
    """The value of the card before its turn's first roll, as the table must hold it for that state."""
    return round_half_even(keep_sums(earlier_roll(earlier_roll(final_values(table, card))))[0], OUTCOMES)


def choices(table: Table, boxes: dict, dice: tuple, roll: int) -> Choices:
    """The holds (while rolls remain) and the legal boxes, valued in points as binary64 exactly as SPEC §4.6 says:
    a hold (K / 7776) / 2^29, a box (gain · 2^29 + V[next]) / 2^29."""
    turn, r = table.turn(boxes), roll_index(dice)
    categories, values = turn.boxes.of_roll(r)
    scores = list(map(truediv, values, repeat(SCALE)))
    if roll == 3:
        return Choices((), (), categories, scores)
    holds = sub_keeps(r)
    sums = map(float, map(turn.hold_sums[3 - roll].__getitem__, holds))
    return Choices(holds, list(map(truediv, map(truediv, sums, repeat(OUTCOMES)), repeat(SCALE))), categories, scores)
