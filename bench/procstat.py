"""CPU time of other processes, from /proc (Linux): what the API benchmarks charge to the servers."""

from __future__ import annotations

import os
from typing import NamedTuple


class ProcessTimes(NamedTuple):
    parent: int
    group: int
    ticks: int  # user + system, in clock ticks (os.sysconf("SC_CLK_TCK") a second)


def process_times() -> dict[int, ProcessTimes]:
    """pid -> (parent pid, process group, user + system ticks) of every process alive now."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        except OSError:
            continue
        out[int(entry)] = ProcessTimes(int(fields[1]), int(fields[2]), int(fields[11]) + int(fields[12]))
    return out


def seconds(ticks: int) -> float:
    return ticks / os.sysconf("SC_CLK_TCK")
