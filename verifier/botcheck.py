"""--check-bots: replays each bot decision with the published policy the log names.

This is the one place where the verifier uses the server's code, and only on purpose: the
bot policies are published as code (`fairdice.bots`). It is imported lazily, when asked for."""

from __future__ import annotations


class PublishedBots:
    def __init__(self):
        from fairdice.bots import BOTS
        from fairdice.bots.base import Position
        from fairdice.rules import RULESETS
        self.policies, self.position, self.rulesets = BOTS, Position, RULESETS
        self.hashes: dict[str, str] = {}

    def identity_problem(self, bot: dict):
        """None when the header's {id, version, hash} name a published policy, else (field, expected, found)."""
        policy = self.policies.get(bot["id"])
        if policy is None:
            return "id", "a published policy: " + ", ".join(sorted(self.policies)), bot["id"]
        if policy.version != bot["version"]:
            return "version", policy.version, bot["version"]
        if bot["id"] not in self.hashes:
            self.hashes[bot["id"]] = policy.identity_hash()
        if self.hashes[bot["id"]] != bot["hash"]:
            return "hash", self.hashes[bot["id"]], bot["hash"]
        return None

    def decide(self, bot_id, rules, boxes, dice, roll, yahtzee_bonus, upper_first, tiebreak):
        """The policy's decision after a roll: ("roll", hold positions) or ("score", category)."""
        position = self.position(rules=self.rulesets[rules], boxes=boxes, dice=dice, roll=roll,
                                 yahtzee_bonus=yahtzee_bonus, upper_first=upper_first)
        d = self.policies[bot_id].decide(position, tiebreak)
        return ("roll", tuple(d.hold)) if d.action == "roll" else ("score", d.category)
