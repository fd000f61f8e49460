"""Profile the workers of a real `fairdice serve` under the benchmark's load, without changing the server.

`environment(out_dir)` gives the environment variables that make every Python process of a server started
with them profile each thread it starts after forking (gunicorn's request threads: HTTP parsing, Flask, the
service, the store), timing by per-thread CPU time so that waiting for the GIL or a lock costs nothing, and
write `profile-<pid>.pstats` into `out_dir` when it exits.  It works through a generated `sitecustomize`
module on PYTHONPATH.  cProfile slows what it watches (most where calls are many and short), so read the
shares, not the absolute times.  `summary(out_dir)` merges the files and prints the top functions.
"""

from __future__ import annotations

import atexit
import cProfile
import io
import os
import pstats
import threading
import time
from pathlib import Path

ENV = "FAIRDICE_BENCH_PROFILE"
SITECUSTOMIZE = """import os, sys
if os.environ.get({env!r}):
    sys.path.insert(0, {bench!r})
    import bench_api_workerprof
    bench_api_workerprof.install(os.environ[{env!r}])
"""


def environment(out_dir: Path) -> dict:
    hook_dir = out_dir / "hook"
    hook_dir.mkdir(parents=True, exist_ok=True)
    (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE.format(env=ENV, bench=str(Path(__file__).parent)))
    path = os.environ.get("PYTHONPATH")
    return {ENV: str(out_dir), "PYTHONPATH": str(hook_dir) + (os.pathsep + path if path else "")}


def install(out_dir: str) -> None:
    """In this process: from each fork on, profile every new thread; write the stats at exit."""
    profiles: list[cProfile.Profile] = []

    def start(frame, event, arg):  # the first event of a new thread: hand it to a profiler of its own
        profile = cProfile.Profile(time.thread_time)
        profiles.append(profile)
        profile.enable()

    def after_fork():
        profiles.clear()
        threading.setprofile(start)
        atexit.register(dump)

    def dump():
        for profile in profiles:
            profile.disable()
        if profiles:
            stats = pstats.Stats(profiles[0])
            for profile in profiles[1:]:
                stats.add(profile)
            stats.dump_stats(os.path.join(out_dir, f"profile-{os.getpid()}.pstats"))

    os.register_at_fork(after_in_child=after_fork)


def summary(out_dir: Path, top: int = 40, sort: str = "tottime") -> str:
    files = sorted(str(p) for p in Path(out_dir).glob("profile-*.pstats"))
    if not files:
        return "bench: no worker profile was written"
    out = io.StringIO()
    stats = pstats.Stats(*files, stream=out)
    stats.strip_dirs().sort_stats(sort).print_stats(top)
    return out.getvalue()
