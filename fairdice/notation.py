"""Dice notation for sessions (SPEC §10.3): `NdM`, `dM`, keep highest/lowest, a modifier; nothing else.

    roll     = [count] "d" sides [keep] [modifier]
    keep     = ("kh" | "kl") number
    modifier = ("+" | "-") number

The grammar is small on purpose: every text is either one exact roll or refused with a stable code, so the
server, the log and every verifier read a notation the same way.  Refusals are `FairdiceError`s whose code says
which rule the text broke (`dice_syntax`, `dice_count`, `dice_sides`, `dice_keep`, `dice_modifier`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import FairdiceError

COUNT_MAX = 100  # N: 1..100 dice
SIDES_MIN, SIDES_MAX = 2, 1000  # M: 2..1000 faces
MODIFIER_MAX = 100_000  # |k| of +k / -k: 1..100000
NOTATION_MAX = 32  # characters; the longest valid text ("100d1000kh100+100000") has 20
GRAMMAR = "NdM (N 1..100, M 2..1000; dM is 1dM), then optionally khK or klK (1 <= K <= N), then +k or -k (1..100000)"
_NUMBER = r"0|[1-9][0-9]{0,6}"  # (0 parses, to be refused by the rule it breaks)
_SHAPE = re.compile(rf"({_NUMBER})?d({_NUMBER})(?:(kh|kl)({_NUMBER}))?(?:([+-])({_NUMBER}))?", re.ASCII)


@dataclass(frozen=True)
class RollSpec:
    """One parsed notation: `count` dice of `sides` faces, keep the `keep` highest ("kh") or lowest ("kl") of them
    (None: all), and add `modifier` (negative for "-k")."""
    count: int
    sides: int
    keep_mode: str | None = None
    keep: int | None = None
    modifier: int = 0

    def dropped(self, faces: list[int]) -> list[int]:
        """The indices of the dice the keep rule drops, ascending (SPEC §10.4): for kh the dice are ranked by
        value, highest first, ties by lower index first; kl ranks lowest first; the first `keep` are kept."""
        if self.keep_mode is None:
            return []
        sign = -1 if self.keep_mode == "kh" else 1
        ranked = sorted(range(len(faces)), key=lambda i: (sign * faces[i], i))
        return sorted(ranked[self.keep:])

    def total(self, faces: list[int]) -> int:
        """The sum of the kept dice plus the modifier."""
        dropped = set(self.dropped(faces))
        return sum(f for i, f in enumerate(faces) if i not in dropped) + self.modifier


def _refuse(code: str, text: str, why: str) -> FairdiceError:
    return FairdiceError(code, f"dice {text!r}: {why}; the notation is {GRAMMAR}", grammar=GRAMMAR)


def parse(text) -> RollSpec:
    """The roll a notation names; raise FairdiceError with the code of the rule it breaks."""
    if not isinstance(text, str):
        raise _refuse("dice_syntax", str(text)[:40], "must be a string")
    if len(text) > NOTATION_MAX:
        raise _refuse("dice_syntax", text[:NOTATION_MAX] + "…", f"is longer than {NOTATION_MAX} characters")
    match = _SHAPE.fullmatch(text)
    if match is None:
        raise _refuse("dice_syntax", text, "is not dice notation (digits without leading zeros, lowercase d, "
                                           "kh or kl, one sign; no spaces)")
    count_text, sides_text, mode, keep_text, sign, modifier_text = match.groups()
    count = int(count_text) if count_text else 1
    sides = int(sides_text)
    if not 1 <= count <= COUNT_MAX:
        raise _refuse("dice_count", text, f"{count} dice; roll 1 to {COUNT_MAX}")
    if not SIDES_MIN <= sides <= SIDES_MAX:
        raise _refuse("dice_sides", text, f"{sides} faces; a die has {SIDES_MIN} to {SIDES_MAX}")
    keep = int(keep_text) if keep_text else None
    if keep is not None and not 1 <= keep <= count:
        raise _refuse("dice_keep", text, f"keeps {keep} of {count} dice; keep 1 to {count}")
    modifier = int(modifier_text) if modifier_text else 0
    if modifier_text and not 1 <= modifier <= MODIFIER_MAX:
        raise _refuse("dice_modifier", text, f"adds {modifier}; a modifier is 1 to {MODIFIER_MAX}")
    return RollSpec(count, sides, mode, keep, -modifier if sign == "-" else modifier)
