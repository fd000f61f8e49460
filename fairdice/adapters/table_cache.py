"""The optimal engine's table cache: where the tables live on disk, and how they are checked and built.

An adapter (`fairdice.adapters`): it reads the environment, reads and writes files, takes file locks and
forks worker processes.  `source()` is a table source to make the optimal policy with, and `bots()` the
published policies made with it: the command line, the server (`api.engines`) and the tests pass them to
the core (`play_bots`, `hint`, `analyze`), which reads no file itself.  A table is loaded when a decision
first needs it, never before.

Tables (2 MB yacht, 8 MB classic13, 16 MB yatzy) are built once per machine and kept in
`$FAIRDICE_CACHE_DIR`, else `$XDG_CACHE_HOME/fairdice`, else `~/.cache/fairdice`, as a little-endian int64
.npy (`optimal-<rules>-v1.npy`, which the verifier reads too) with a JSON sidecar.  Every load checks
format, dtype, shape and SHA-256 against the shipped manifest; anything that does not match is rebuilt,
and a rebuild that still does not match raises FairdiceError("table_mismatch").  Builders are serialised
across processes by a lock file: a second one waits, then finds the first one's table.

A build solves the values (the table the digest names); the start's standard deviation is then the
manifest's, which a table with that digest has by construction.  `moments=True` computes the second
moments too (the maintainers' `tools/write_manifest` does): about twice the work.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import multiprocessing as mp
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..bots import BOTS, PolicyRegistry
from ..bots.optimal import SolvedTable, TableSource, programme, table_format
from ..errors import FairdiceError
from ..rules import RULESETS

try:
    import fcntl
except ImportError:  # not POSIX: concurrent builders each build, and the atomic writes keep the cache whole
    fcntl = None



def cache_dir() -> Path:
    """Where tables are cached: $FAIRDICE_CACHE_DIR, else $XDG_CACHE_HOME/fairdice, else ~/.cache/fairdice."""
    if os.environ.get("FAIRDICE_CACHE_DIR"):
        return Path(os.environ["FAIRDICE_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "fairdice"
    return Path.home() / ".cache" / "fairdice"


def table_path(rules_id: str) -> Path:
    return cache_dir() / f"optimal-{rules_id}-v{table_format.FORMAT}.npy"


# --- solving ------------------------------------------------------------------------------------------

DEFAULT_WORKERS = 1  # on two cores shared with other work, a second process costs more CPU than it saves time


def solve(states: programme.StateSpace, moments: bool = False, workers: int = DEFAULT_WORKERS):
    """programme.solve, its batches shared among `workers` forked processes when more than one and fork is
    available in this (single-threaded) process: the tables in shared memory, the result identical."""
    if workers <= 1 or "fork" not in mp.get_all_start_methods() or threading.active_count() > 1:
        return programme.solve(states, moments)
    return _solve_in_processes(states, moments, workers)


_JOB = None  # (kernel, layers) inherited by the forked workers


def _solve_batch(task) -> None:
    kernel, layers = _JOB
    index, lo, hi = task
    kernel.solve_batch(layers[index], lo, hi)


def _shared_zeros(shape) -> np.ndarray:
    buffer = mmap.mmap(-1, int(np.prod(shape)) * 8)  # anonymous MAP_SHARED: visible to forked workers
    return np.frombuffer(buffer, dtype=float).reshape(shape)


def _solve_in_processes(states, moments: bool, workers: int):
    global _JOB
    values = _shared_zeros(states.shape)
    second = _shared_zeros(states.shape) if moments else None
    kernel = programme.TurnKernel(states, values, second)
    layers = programme.layers(states)
    _JOB = (kernel, layers)
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            for index in range(len(layers) - 1, -1, -1):
                tasks = [(index, lo, hi) for lo, hi in layers[index].batches(kernel.width)]
                if len(tasks) > 1:
                    for _ in pool.imap_unordered(_solve_batch, tasks):
                        pass
                else:
                    for task in tasks:
                        _solve_batch(task)
    finally:
        _JOB = None
    return np.array(values), (np.array(second) if second is not None else None)


def compute_table(rules_id: str, moments: bool = False, workers: int | None = None) -> tuple[np.ndarray, dict]:
    """Solve a rule set from scratch: (table as int64, metadata with digest, start value, build seconds and,
    with `moments`, the computed standard deviation)."""
    rules_id = table_format.published_rules(rules_id)
    started = time.perf_counter()
    values, second = solve(programme.StateSpace(RULESETS[rules_id]), moments,
                           DEFAULT_WORKERS if workers is None else workers)
    table = values.astype(table_format.DTYPE)
    meta = table_format.describe(rules_id, table, second)
    meta["build_seconds"] = round(time.perf_counter() - started, 2)
    return table, meta


# --- the cache ------------------------------------------------------------------------------------------

def _atomic_write(path: Path, write: Callable) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _with_manifest_sd(meta: dict) -> dict:
    """A table with the manifest's digest has the manifest's standard deviation."""
    entry = table_format.manifest()["tables"].get(meta["rules"], {})
    if "start_sd" not in meta and entry.get("sha256") == meta["sha256"] and "start_sd" in entry:
        return {**meta, "start_sd": entry["start_sd"]}
    return meta


def read_cached(rules_id: str) -> tuple[tuple[np.ndarray, dict] | None, str]:
    """The cached table (and its sidecar) if it is exactly the manifest's; else None, and why."""
    path = table_path(rules_id)
    if not path.exists():
        return None, "missing"
    try:
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        if meta.get("format") != table_format.FORMAT or meta.get("rules") != rules_id:
            return None, "stale format"
        table = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        return None, f"unreadable ({exc.__class__.__name__})"
    problem = table_format.check_array(rules_id, table)
    if problem:
        return None, problem
    digest, expected = table_format.table_digest(rules_id, table), table_format.expected_digest(rules_id)
    if digest != meta.get("sha256") or (expected is not None and digest != expected):
        return None, "hash mismatch"
    return (table, meta), "ok"


@contextlib.contextmanager
def _build_lock(rules_id: str):
    """One builder per table across processes: a second one waits, then finds the first one's table."""
    path = table_path(rules_id).with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        if fcntl is not None:
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh, fcntl.LOCK_UN)


class TableCache:
    """The verified tables of this process: in memory, else from the disk cache, else built (and cached)."""

    def __init__(self):
        self._loaded: dict[str, SolvedTable] = {}
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Drop the tables held in memory (the disk cache stays)."""
        self._loaded.clear()

    def ready(self, rules_id: str) -> bool:
        """Whether the verified table is in memory, or valid in the cache (then loaded).  Never builds."""
        rules_id = table_format.published_rules(rules_id)
        if rules_id not in self._loaded:
            with self._lock:
                if rules_id not in self._loaded:
                    cached, _ = read_cached(rules_id)
                    if cached is None:
                        return False
                    self._loaded[rules_id] = SolvedTable(rules_id, cached[0])
        return True

    def load(self, rules_id: str, build: bool = True) -> SolvedTable:
        """The verified table; built now if missing and `build`, else FairdiceError("table_unavailable")."""
        table = self._loaded.get(rules_id)
        if table is None:
            rules_id = table_format.published_rules(rules_id)
            if not build and not self.ready(rules_id):
                raise FairdiceError("table_unavailable", f"the optimal {rules_id} table is not built yet "
                                                         "(`fairdice tables build` builds it)")
            with self._lock:
                if rules_id not in self._loaded:
                    self.build(rules_id)
                table = self._loaded[rules_id]
        return table

    def build(self, rules_id: str, force: bool = False, moments: bool = False, workers: int | None = None) -> dict:
        """Build (or verify) the cached table of one rule set; returns a JSON-friendly dict: rules, path,
        sha256, shape, start_value, start_sd, build_seconds (when built), built (bool) and reason ("ok" when
        the cache was valid, else why it was rebuilt).  Without `force` a valid cached table is kept; a
        freshly computed table that does not have the manifest's digest raises
        FairdiceError("table_mismatch"), and then nothing is written."""
        rules_id = table_format.published_rules(rules_id)
        with _build_lock(rules_id):
            path, reason = table_path(rules_id), "forced"
            if not force:
                cached, reason = read_cached(rules_id)
                if cached is not None:
                    table, meta = cached
                    self._loaded[rules_id] = SolvedTable(rules_id, table)
                    return {**_with_manifest_sd(meta), "path": str(path), "built": False, "reason": reason}
            table, meta = compute_table(rules_id, moments=moments, workers=workers)
            expected = table_format.expected_digest(rules_id)
            if expected is not None and meta["sha256"] != expected:
                raise FairdiceError("table_mismatch", f"the computed {rules_id} table has SHA-256 {meta['sha256']}, "
                                                      f"the manifest says {expected}")
            meta = _with_manifest_sd(meta)
            _write(path, table, meta)
            self._loaded[rules_id] = SolvedTable(rules_id, table)
            return {**meta, "path": str(path), "built": True, "reason": reason}


def _write(path: Path, table: np.ndarray, meta: dict) -> None:
    _atomic_write(path, lambda fh: np.save(fh, table, allow_pickle=False))
    _atomic_write(path.with_suffix(".json"), lambda fh: fh.write(json.dumps(meta, indent=1).encode()))


CACHE = TableCache()


def source(build: bool = True) -> TableSource:
    """This process's cache as a table source: with `build`, a missing table is built when first needed
    (seconds); without (the server, whose requests must not wait for a build), the policy raises
    FairdiceError("table_unavailable") until it is built.  (It asks `CACHE` at each call, so a test that
    swaps the cache swaps it for every source made before.)"""
    return lambda rules_id: CACHE.load(rules_id, build=build)


def bots(build: bool = True) -> PolicyRegistry:
    """The published policies, the optimal one made with this cache as its table source (`source`)."""
    return BOTS.with_tables(source(build))


def build_table(rules_id: str, force: bool = False, moments: bool = False, workers: int | None = None) -> dict:
    return CACHE.build(rules_id, force=force, moments=moments, workers=workers)


def table_ready(rules_id: str) -> bool:
    return CACHE.ready(rules_id)


def load_table(rules_id: str) -> SolvedTable:
    return CACHE.load(rules_id)
