"""What the verification of one log finds (SPEC §7): the check ids, a failure, the result, and `Checks`, the one
place every check writes its verdict through."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NoReturn

CHECKS = (
    "log.format", "log.key", "sig.commitment", "sig.final", "seed.revealed", "seed.commitment",
    "client_seed.valid", "start.first", "turn.order", "roll.count", "roll.hold", "roll.dice",
    "score.category", "score.points", "game.complete", "final.totals", "final.winner",
    "bot.identity", "bot.decision", "receipt.match", "client_seed.commit", "game.abandon", "receipt.chain",
    "player.signature",
)  # (in the order of SPEC §7's table; verifier.replay runs them in the order §7 gives)
MAX_LISTED = 10  # failures listed per check and game; the rest are counted


@dataclass
class Failure:
    check: str
    event: int | None  # index into "events", None for the whole log
    field: str
    expected: Any
    found: Any

    def as_dict(self) -> dict:
        return {"check": self.check, "event": self.event, "field": self.field,
                "expected": self.expected, "found": self.found}


@dataclass
class Result:
    file: str
    game_id: str | None = None
    rules: str | None = None
    status: str | None = None  # "finished", "abandoned" or "in progress"
    error: str | None = None  # set when the input is not a log at all
    evidence_error: bool = False  # ... and is a player's evidence (a receipt, move receipts, a key file) not usable
    checks: dict = field(default_factory=lambda: dict.fromkeys(CHECKS, "skip"))
    failures: list = field(default_factory=list)
    unlisted: dict = field(default_factory=dict)  # check -> failures beyond MAX_LISTED
    signed: bool = False  # both signatures present (and then checked)
    trusted: bool = False  # checked against a --pubkey key, not only the embedded one
    seed_secret: bool | None = None  # False: the seed came from a public value (§2.1)
    bots: list = field(default_factory=list)  # the bot ids of the log's bot seats
    bots_checked: bool = False  # their decisions were replayed (bot.identity, bot.decision)
    abandoned_by: str | None = None  # who abandoned, in words ("seat 1", "THE SERVER, on a timeout", ...)
    version: int | None = None  # of the log format, once it is known to be one
    unsigned_seats: list = field(default_factory=list)  # human seats with moves their player did not sign (§5.7)
    final_digest: str | None = None  # with audit: SHA-256 of the bytes a valid final signature covers
    final_key: str | None = None  # ... and the key that signed them (hex)
    replay: list | None = None  # with verbose: the game turn by turn
    audit: dict | None = None  # with audit: the numbers the audit aggregates
    kind: str = "game"  # or "session": a session log of SPEC §10 (its checks are verifier.sessions.SESSION_CHECKS)
    notes: list = field(default_factory=list)  # a session's warnings and notes, in words

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failures and not self.unlisted


def unsigned_warning(r: Result) -> str | None:
    """The plain warning of a verdict on a log with human seats whose moves no player signed (SPEC §7), or None."""
    if not r.unsigned_seats:
        return None
    seats = ", ".join(str(s) for s in r.unsigned_seats)
    why = ("the seat sent no player key" if len(r.unsigned_seats) == 1 else "these seats sent no player key") \
        if r.version is not None and r.version >= 3 else f"log version {r.version} has no players' signatures"
    return (f"the moves of human seat{'s' if len(r.unsigned_seats) > 1 else ''} {seats} are NOT signed by the "
            f"player ({why}): the operator could have written them")


class StopReplay(Exception):
    """Not an error but control flow: a failure is recorded (`Checks.stop`) after which the replay cannot
    meaningfully go on, so it ends here.  Always caught by the replay that raised it; the verdict is in the
    Result, never in an exception (hence not a `VerifierError`)."""


class Checks:
    """The verdicts of one log's checks, written into its Result: a check that ran and did not fail passes."""

    def __init__(self, result: Result):
        self.r = result

    def fail(self, check: str, event: int | None, fld: str, expected, found) -> None:
        r = self.r
        r.checks[check] = "fail"
        if sum(f.check == check for f in r.failures) < MAX_LISTED:
            r.failures.append(Failure(check, event, fld, expected, found))
        else:
            r.unlisted[check] = r.unlisted.get(check, 0) + 1

    def stop(self, check: str, event: int | None, fld: str, expected, found) -> NoReturn:
        """A failure after which nothing meaningful can be checked: the replay ends here."""
        self.fail(check, event, fld, expected, found)
        raise StopReplay

    def passed(self, *checks: str) -> None:
        for c in checks:
            if self.r.checks[c] == "skip":
                self.r.checks[c] = "pass"

    def expect(self, check: str, event: int | None, fld: str, expected, found) -> bool:
        """A failure unless `found` is `expected`, of the same JSON type (1 is not true here)."""
        if expected == found and type(expected) is type(found):
            return True
        self.fail(check, event, fld, expected, found)
        return False

    def failed(self, check: str) -> bool:
        return self.r.checks[check] == "fail"

    @contextmanager
    def placed_at(self, position: int):
        """The failures found inside the block are listed at `position` (a check run later than its place in
        SPEC §7's order, once what it needs is known, is still reported there)."""
        failures = self.r.failures
        before = len(failures)
        try:
            yield
        finally:
            found = failures[before:]
            del failures[before:]
            failures[position:position] = found
