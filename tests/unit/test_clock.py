"""The server's stamps (api/clock.py) are the formatted second, re-formatted as soon as the second changes."""

from __future__ import annotations

import time

from api.clock import SecondStamp
from api.stores.base import now
from api.worker import http_date


def test_a_stamp_is_its_second_formatted_and_changes_with_the_second(monkeypatch):
    clock = iter([1796184000.1, 1796184000.9, 1796184001.0, 0.5])
    monkeypatch.setattr(time, "time", lambda: next(clock))
    stamp = SecondStamp("%Y-%m-%dT%H:%M:%SZ")
    assert [stamp(), stamp(), stamp(), stamp()] == ["2026-12-02T04:00:00Z", "2026-12-02T04:00:00Z",
                                                    "2026-12-02T04:00:01Z", "1970-01-01T00:00:00Z"]


def test_the_stores_and_the_date_header_use_their_formats(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: 1796184000.5)
    assert now() == "2026-12-02T04:00:00Z"
    assert http_date() == "Wed, 02 Dec 2026 04:00:00 GMT"
