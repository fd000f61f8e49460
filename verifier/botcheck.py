"""Bot decisions replayed (SPEC §4.5, §4.6): the published identities, and each policy written again from
the SPEC (verifier.policies, verifier.optimal), so that no code of the server vouches for its own bots.

`optimal` needs its table (a file, checked against the published digest); it is read when the first
optimal game of a rule set is replayed, and a missing or different one raises TableError."""

from __future__ import annotations

from collections.abc import Callable

from . import optimal
from .policies import POLICIES, decide
from .spec import canonical, sha256_hex

PUBLISHED = {  # SPEC §8.6: each bot's version and params; its hash is SHA-256 of canonical {id, version, params}
    "greedy": ("1", {}),
    "ev": ("1", {}),
    "optimal": ("1", {"table_sha256": {
        "classic13": "c5af1b3cc3f5220933a02df699c8d0a6bb9e80a2590e0f125a12f6f05384fab9",
        "yacht": "7470ab98086c464a58f9ca4bf43a65ea1b71c631c3e20fbedc95c7cae26d07d1",
        "yatzy": "2444817579155613f19f42757e2a253a9906b0ee983ecb5fe25e7969f11eff5d"}}),
}
TableError = optimal.TableError


def identity_hash(bot_id: str) -> str:
    version, params = PUBLISHED[bot_id]
    return sha256_hex(canonical({"id": bot_id, "version": version, "params": params}))


HASHES = {bot_id: identity_hash(bot_id) for bot_id in PUBLISHED}


class PublishedBots:
    """The published policies, replayed. `tables`: the directory of the optimal tables (default: the
    fairdice cache directory, SPEC §4.6), only read."""

    def __init__(self, tables: str | None = None):
        self.tables_dir = tables
        self.tables: dict[str, optimal.Table] = {}

    def identity_problem(self, bot: dict):
        """None when the header's {id, version, hash} name a published policy, else (field, expected, found)."""
        if bot["id"] not in PUBLISHED:
            return "id", "a published policy: " + ", ".join(sorted(PUBLISHED)), bot["id"]
        if PUBLISHED[bot["id"]][0] != bot["version"]:
            return "version", PUBLISHED[bot["id"]][0], bot["version"]
        if HASHES[bot["id"]] != bot["hash"]:
            return "hash", HASHES[bot["id"]], bot["hash"]
        return None

    def table(self, rules: str) -> optimal.Table:
        """The optimal table of `rules`, read once and held to its published digest."""
        if rules not in self.tables:
            digest = PUBLISHED["optimal"][1]["table_sha256"][rules]
            self.tables[rules] = optimal.Table.load(rules, digest, self.tables_dir)
        return self.tables[rules]

    def decide(self, bot_id: str, rules: str, boxes: dict, dice: tuple, roll: int, yahtzee_bonus: int,
               upper_first: bool, tiebreak: Callable[[int], int]) -> tuple:
        """The policy's decision after roll `roll` (1..3): ("roll", hold positions) or ("score", category).
        `tiebreak(m)` draws the index among m tied candidates (SPEC §2.3). (`yahtzee_bonus`, the bonuses
        earned so far, decides nothing: it is accepted for the replay's sake.)"""
        dice = tuple(dice)
        if bot_id != "optimal":
            return decide(POLICIES[bot_id](rules, boxes, dice, roll, upper_first), dice, tiebreak)
        if upper_first:
            raise ValueError("the optimal bot does not play the upper_first house rule (SPEC §4.5)")
        return decide(optimal.choices(self.table(rules), boxes, dice, roll), dice, tiebreak, optimal.TIE_TOLERANCE)
