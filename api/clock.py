"""Time as the server writes it: a stamp that changes once a second is formatted once a second.

Every write is stamped and every answer carries a Date header; `time.strftime` for each of them was measurable
(issue 21), so each format keeps the last second's text.  The cache is replaced whole, one tuple, so threads read
it without a lock."""

from __future__ import annotations

import time


class SecondStamp:
    """`stamp()`: this second in UTC in `fmt` (a `time.strftime` format), formatted at most once a second."""

    def __init__(self, fmt: str):
        self._fmt = fmt
        self._last: tuple[int, str] = (-1, "")

    def __call__(self) -> str:
        second = int(time.time())
        last = self._last
        if last[0] != second:
            last = self._last = (second, time.strftime(self._fmt, time.gmtime(second)))
        return last[1]
