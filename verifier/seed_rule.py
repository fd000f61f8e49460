"""SPEC §2.2: which text may be a client seed or a seat name.

The refused code points are written out here as data, as SPEC §2.2 lists them, rather than
asked of the Unicode database of whichever Python runs the verifier: the rule must not change
with the Unicode version (a test holds this copy to tests/vectors/client_seed_rule.json)."""

from __future__ import annotations

import re

CLIENT_SEED_LENGTH = (1, 256)
SEAT_NAME_LENGTH = (1, 40)

# Inclusive ranges of refused code points.
GENERIC_REFUSED = (
    (0x0000, 0x001F), (0x007F, 0x009F),  # controls
    (0xD800, 0xDFFF),  # surrogates
    (0xE000, 0xF8FF), (0xF0000, 0x10FFFF),  # private use (planes 15 and 16 entirely)
    (0xFDD0, 0xFDEF),  # noncharacters (with every U+xxFFFE and U+xxFFFF: NONCHARACTER_LOW16)
)
NONCHARACTER_LOW16 = (0xFFFE, 0xFFFF)
# The separators other than U+0020 and the format characters of Unicode 14.0 (Zs, Zl, Zp, Cf).
SEPARATORS_AND_FORMAT = (
    (0x00A0, 0x00A0), (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x1680, 0x1680), (0x180E, 0x180E),
    (0x2000, 0x200F), (0x2028, 0x202F), (0x205F, 0x2064), (0x2066, 0x206F), (0x3000, 0x3000),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)
_NONCHARACTERS = tuple((plane + low, plane + low) for plane in range(0, 0x110000, 0x10000)
                       for low in NONCHARACTER_LOW16)
_REFUSED = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in
                                    GENERIC_REFUSED + SEPARATORS_AND_FORMAT + _NONCHARACTERS) + "]")


def text_ok(text, length: tuple[int, int]) -> bool:
    """A string of length[0]..length[1] code points, none of them refused. (Of the ASCII characters, exactly the
    printable ones are allowed: that is asked first, in C.)"""
    return isinstance(text, str) and length[0] <= len(text) <= length[1] and (
        text.isprintable() if text.isascii() else _REFUSED.search(text) is None)
