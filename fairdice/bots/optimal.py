"""The `optimal` policy: an exact dynamic programme that maximises the expected final score of the seat's own card.

Between turns a card is the state (open boxes, upper total capped at 63, and
for classic13 whether the Yahtzee box holds 50).  `V[state]` is the expected
number of points still to come from that state under optimal play, bonuses
included.  A turn is solved backwards over the 252 distinct rolls and 462
distinct holds, three rolls deep; states are solved by number of filled
boxes, a batch of states at a time (only reachable upper totals are solved).

Start values: classic13 254.5877 (sd 59.61), yatzy 248.4400 (sd 38.50), yacht
191.7744 (sd 37.86).  Classic13's often-quoted 254.5896 (Verhoeff) assumes a
looser joker convention; under the forced joker of RULES.md the optimum is
254.5877, and both round to 254.59.

**Exact, machine-independent arithmetic.**  Values are fixed-point integers
(units of 2^-29 point) held in float64.  A hold's value is kept as the integer
sum over its 7776 equally likely completions (a tree of sums over the keeps:
a keep of k dice sums the keeps of k + 1 dice), so every intermediate result
is an integer below 2^53 and float64 addition on it is exact in any order.  A
roll's value is divided back by 7776 and rounded once per roll; that rounding
is the exact round-half-even of a rational (the quotient's error is below
half the distance to a tie), so the table is a mathematical function of the
rules, bit for bit the same on every IEEE machine and numpy version (no BLAS,
no order-dependent sums).  Its SHA-256 is therefore a stable identity, shipped
in `tables/manifest.json`, and ties between decisions are exact.  The
accumulated rounding is below 5e-8 point per game.

**Tables** (one per rule set: 2 MB yacht, 8 MB classic13, 16 MB yatzy) are
built once (seconds to a minute) and cached on disk in the user cache
directory (`$FAIRDICE_CACHE_DIR`, else `$XDG_CACHE_HOME/fairdice`, else
`~/.cache/fairdice`) as a little-endian int64 .npy with a JSON sidecar.
Every load checks format, dtype, shape and SHA-256 against the manifest;
anything that does not match is rebuilt, and a rebuild that still does not
match the manifest raises FairdiceError("table_mismatch").

The `upper_first` house rule is not supported: the policy raises
FairdiceError("unsupported_rules") (`fairdice.hint` falls back to `ev`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import multiprocessing as mp
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    import fcntl
except ImportError:  # not POSIX: concurrent builders each build, and the atomic writes keep the cache whole
    fcntl = None

from ..errors import FairdiceError
from ..rules import DICE, RULESETS, UPPER_BONUS_THRESHOLD, RuleSet, Upper, counts_of, options, ruleset
from . import space
from .base import Candidate, Decision, Policy, Position, hold_candidates

FORMAT = 1
SCALE_BITS = 29
SCALE = float(1 << SCALE_BITS)  # one point, in table units
OUTCOMES = 6.0 ** DICE  # 7776: a hold's value is kept as (sum over 7776 equally likely completions)
MANIFEST_PATH = Path(__file__).with_name("tables") / "manifest.json"
_LIMIT = 2.0 ** 53 / OUTCOMES  # largest roll value (table units) whose hold sums stay exact

# --- the turn as a tree over keeps (from space.KEEPS, ordered by size) -----------------------------

_N_ROLLS, _N_KEEPS = len(space.ROLLS), len(space.KEEPS)
_SIZE = np.array([len(k) for k in space.KEEPS])
_OFF = [int(np.searchsorted(_SIZE, s)) for s in range(DICE + 2)]  # keeps of size s: _OFF[s]:_OFF[s+1]
_ROLL_AS_KEEP = _OFF[DICE]
assert all(space.KEEPS[_ROLL_AS_KEEP + r] == roll for r, roll in enumerate(space.ROLLS))
# a keep of size s < 5 and one more die of each face -> a keep of size s + 1
_CHILD = np.array([[space.KEEP_INDEX[tuple(sorted(k + (f,)))] for f in range(1, 7)]
                   for k in space.KEEPS[:_ROLL_AS_KEEP]], dtype=np.intp)


def _preds(keep):
    out = sorted({space.KEEP_INDEX[keep[:i] + keep[i + 1:]] for i in range(len(keep))})
    return out + [out[-1]] * (DICE - len(out))  # pad by repeating: harmless under max


# a keep of size s >= 1 less one die -> keeps of size s - 1 (row k - 1 for keep k)
_PRED = np.array([_preds(k) for k in space.KEEPS[1:]], dtype=np.intp)
_TO_COMMON = (6.0 ** _SIZE)[:, None]  # (sum over the 6^(5-s) completions) * 6^s = 7776 * mean
_COUNTS = np.array([counts_of(r)[1:] for r in space.ROLLS])  # (252, 6): dice showing each face
_FIVE_ALIKE = np.array(space.FIVE_ALIKE_ROLLS)


def _keep_sums(R: np.ndarray) -> np.ndarray:
    """Roll values R (252, B) -> every keep's value times 7776 (462, B), exactly."""
    S = np.empty((_N_KEEPS,) + R.shape[1:])
    S[_ROLL_AS_KEEP:] = R
    for s in range(DICE - 1, -1, -1):
        lo, hi = _OFF[s], _OFF[s + 1]
        ch = _CHILD[lo:hi]
        acc = S[ch[:, 0]]
        for j in range(1, 6):
            acc += S[ch[:, j]]
        S[lo:hi] = acc
    S *= _TO_COMMON
    return S


def _best_roll(K: np.ndarray) -> np.ndarray:
    """Keep values (462, B) -> for each roll, the best value over its sub-keeps (252, B), the whole roll included."""
    best = K.copy()
    for s in range(1, DICE + 1):
        lo, hi = _OFF[s], _OFF[s + 1]
        pr = _PRED[lo - 1:hi - 1]
        cur = best[lo:hi]
        for j in range(DICE):
            np.maximum(cur, best[pr[:, j]], out=cur)
    return best[_ROLL_AS_KEEP:]


def _earlier_roll(R: np.ndarray) -> np.ndarray:
    """Values of the rolls one roll earlier in the turn: score now or hold something (rounded to table units)."""
    return np.rint(_best_roll(_keep_sums(R)) / OUTCOMES)


def _turn_value(R3: np.ndarray) -> np.ndarray:
    """Values after the third roll (252, B) -> the value of the turn before its first roll (B,)."""
    R1 = _earlier_roll(_earlier_roll(R3))
    return np.rint(_keep_sums(R1)[0] / OUTCOMES)


# The same, carrying the second moment of the future score along the argmax (for the standard deviation).

def _keep_sums_m(R, M):
    S = np.empty((_N_KEEPS,) + R.shape[1:])
    Q = np.empty_like(S)
    S[_ROLL_AS_KEEP:], Q[_ROLL_AS_KEEP:] = R, M
    for s in range(DICE - 1, -1, -1):
        lo, hi = _OFF[s], _OFF[s + 1]
        ch = _CHILD[lo:hi]
        acc, qacc = S[ch[:, 0]], Q[ch[:, 0]]
        for j in range(1, 6):
            acc += S[ch[:, j]]
            qacc += Q[ch[:, j]]
        S[lo:hi], Q[lo:hi] = acc, qacc / 6.0
    S *= _TO_COMMON
    return S, Q


def _best_roll_m(K, Q):
    best, bq = K.copy(), Q.copy()
    for s in range(1, DICE + 1):
        lo, hi = _OFF[s], _OFF[s + 1]
        pr = _PRED[lo - 1:hi - 1]
        cur, cq = best[lo:hi], bq[lo:hi]
        for j in range(DICE):
            cand = best[pr[:, j]]
            better = cand > cur
            np.copyto(cur, cand, where=better)
            np.copyto(cq, bq[pr[:, j]], where=better)
    return best[_ROLL_AS_KEEP:], bq[_ROLL_AS_KEEP:]


def _turn_value_m(R3, M3):
    R, M = R3, M3
    for _ in range(2):
        K, Q = _keep_sums_m(R, M)
        R, M = _best_roll_m(K, Q)
        R = np.rint(R / OUTCOMES)
    K, Q = _keep_sums_m(R, M)
    return np.rint(K[0] / OUTCOMES), Q[0]


# --- the rule set as the DP sees it -----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Spec:
    """What the DP needs from a rule set.  `threshold` is a parameter so tests can solve small games."""
    rules: RuleSet
    threshold: int = UPPER_BONUS_THRESHOLD

    def __post_init__(self):
        rs = self.rules
        n = len(rs.categories)
        face = [c.rule.face if isinstance(c.rule, Upper) else 0 for c in rs.categories]
        ids = rs.category_ids
        yz = ids.index(rs.five_alike) if rs.five_alike in ids else -1
        flag = rs.forced_joker and yz >= 0
        score = np.array([[c.rule.score(counts_of(r)) for c in rs.categories] for r in space.ROLLS], dtype=float)
        upper_bits = sum(1 << c for c in range(n) if face[c])
        by_upper = {}  # upper totals (capped) reachable for each set of filled upper boxes
        for m in range(1 << n):
            key = m & upper_bits
            if key not in by_upper:
                tot = {0}
                for c in range(n):
                    if key >> c & 1:
                        tot = {min(self.threshold, t + face[c] * k) for t in tot for k in range(DICE + 1)}
                by_upper[key] = tuple(sorted(tot))
        reach = [by_upper[m & upper_bits] for m in range(1 << n)]
        for name, value in (("n", n), ("face", face), ("yz", yz), ("flag", flag), ("score", score),
                            ("scaled", score * SCALE), ("reach", reach)):
            object.__setattr__(self, name, value)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (1 << self.n, self.threshold + 1, 2 if self.flag else 1)

    def flags(self, mask: int) -> tuple[int, ...]:
        return (0, 1) if self.flag and mask >> self.yz & 1 else (0,)


def _final_values(sp: Spec, V, masks, us, ys, W=None):
    """The value of each roll after the last roll of the turn: the best legal box, gain plus the next state.

    States are rows (masks, us, ys: arrays of length B); returns (B, 252) in table units, and the
    second moments of the future score along the same choices when W (next-state second moments) is given.
    """
    B = len(masks)
    R = np.full((B, _N_ROLLS), -np.inf)
    M = np.zeros((B, _N_ROLLS)) if W is not None else None
    T, k6 = sp.threshold, np.arange(DICE + 1)
    five = np.zeros(_N_ROLLS, bool)
    five[_FIVE_ALIKE] = True

    def var(nm, u, y):  # variance of the future score from the next states (points^2)
        return W[nm, u, y] - np.square(V[nm, u, y] / SCALE)

    def consider(val, var_next):
        # val: candidate values (B, 252), -inf where the box is filled.  Second moment of gain + future:
        # (gain + E[future])^2 + Var[future] = (val in points)^2 + var_next.
        if M is not None:
            better = val > R
            np.copyto(M, np.square(val * (1.0 / SCALE)) + var_next, where=better)
        np.maximum(R, val, out=R)

    for c in range(sp.n):
        bit = 1 << c
        filled = (masks & bit) != 0
        if filled.all():
            continue
        pen = np.where(filled, -np.inf, 0.0)
        nm = masks | bit
        if sp.face[c]:
            f = sp.face[c]
            u2 = np.minimum(T, us[:, None] + f * k6)  # (B, 6): upper total after scoring k dice of face f
            gain = (f * k6 + np.where((us[:, None] < T) & (u2 >= T), sp.rules.upper_bonus, 0)).astype(float)
            vn = V[nm[:, None], u2, ys[:, None]]
            cnt = _COUNTS[:, f - 1]
            val = (gain * SCALE + vn + pen[:, None])[:, cnt]
            consider(val, var(nm[:, None], u2, ys[:, None])[:, cnt] if M is not None else None)
        elif c == sp.yz and sp.flag:
            v1, v0 = V[nm, us, 1][:, None], V[nm, us, 0][:, None]
            gain = np.where(five, float(sp.score[_FIVE_ALIKE[0], c]), 0.0)
            vn = np.where(five, v1, v0)
            val = gain * SCALE + vn + pen[:, None]
            consider(val, np.where(five, var(nm, us, 1)[:, None], var(nm, us, 0)[:, None])
                     if M is not None else None)
        else:
            vn = V[nm, us, ys][:, None]
            val = sp.scaled[:, c] + (vn + pen[:, None])
            consider(val, var(nm, us, ys)[:, None] if M is not None else None)

    if sp.flag:  # five alike with the Yahtzee box filled: forced joker, +bonus if it holds 50
        idx = np.flatnonzero(masks >> sp.yz & 1)
        if idx.size:
            m, u, y = masks[idx], us[idx], ys[idx]
            bonus = sp.rules.yahtzee_bonus * y
            lower_open = np.zeros(idx.size, bool)
            for c in range(sp.n):
                if not sp.face[c]:
                    lower_open |= (m >> c & 1) == 0
            for f in range(1, 7):
                r = space.FIVE_ALIKE_ROLLS[f - 1]
                own = sp.face.index(f) if f in sp.face else -1
                own_open = (m >> own & 1) == 0 if own >= 0 else np.zeros(idx.size, bool)
                best = np.full(idx.size, -np.inf)
                mom = np.zeros(idx.size)
                for c in range(sp.n):
                    is_open = (m >> c & 1) == 0
                    if c == own:
                        legal = is_open
                        u2 = np.minimum(T, u + DICE * f)
                        pts = DICE * f + np.where((u < T) & (u2 >= T), sp.rules.upper_bonus, 0)
                    elif sp.face[c]:
                        legal = is_open & ~own_open & ~lower_open
                        u2, pts = u, np.zeros(idx.size)
                    else:
                        legal = is_open & ~own_open
                        jp = sp.rules.categories[c].joker_points
                        u2, pts = u, np.full(idx.size, float(DICE * f if jp is None else jp))
                    if not legal.any():
                        continue
                    nm = m | (1 << c)
                    gain = (pts + bonus).astype(float)
                    vn = V[nm, u2, y]
                    val = np.where(legal, gain * SCALE + vn, -np.inf)
                    better = val > best
                    if M is not None:
                        np.copyto(mom, np.square(val / SCALE) + var(nm, u2, y), where=better)
                    np.maximum(best, val, out=best)
                R[idx, r] = best
                if M is not None:
                    M[idx, r] = mom
    return R, M


def _states(sp: Spec, filled: int):
    """All reachable states with `filled` boxes filled, as arrays (masks, us, ys), sorted by mask."""
    masks, us, ys = [], [], []
    for mask in range(1 << sp.n):
        if mask.bit_count() != filled:
            continue
        reach = sp.reach[mask]
        for y in sp.flags(mask):
            masks += [mask] * len(reach)
            us += reach
            ys += [y] * len(reach)
    return np.array(masks, np.int64), np.array(us, np.int64), np.array(ys, np.int64)


def _solve_chunk(sp: Spec, V, W, masks, us, ys) -> None:
    """Solve one batch of states of a layer, writing V (and W) in place."""
    R3, M3 = _final_values(sp, V, masks, us, ys, W)
    if not (np.isfinite(R3).all() and R3.max() < _LIMIT):
        raise FloatingPointError("roll values out of the exact range")
    if W is not None:
        v, w = _turn_value_m(R3.T.copy(), M3.T.copy())
        W[masks, us, ys] = w
    else:
        v = _turn_value(R3.T.copy())
    V[masks, us, ys] = v


_JOB = None  # (spec, V, W, layers) inherited by forked workers


def _solve_task(task) -> None:
    layer, lo, hi = task
    sp, V, W, layers = _JOB
    masks, us, ys = layers[layer]
    _solve_chunk(sp, V, W, masks[lo:hi], us[lo:hi], ys[lo:hi])


def _shared_zeros(shape) -> np.ndarray:
    buf = mmap.mmap(-1, int(np.prod(shape)) * 8)  # anonymous MAP_SHARED: visible to forked workers
    return np.frombuffer(buf, dtype=float).reshape(shape)


def default_workers() -> int:
    """Worker processes for a build: up to 2 where fork is available and this process runs one thread."""
    if "fork" not in mp.get_all_start_methods() or threading.active_count() > 1:
        return 1
    return max(1, min(2, os.cpu_count() or 1))


def solve(sp: Spec | RuleSet | str, moments: bool = False, chunk: int = 1024, workers: int = 1, progress=None):
    """Solve a rule set: returns (V, W) with V the table (float64 holding integers, units 2^-29 point,
    shape (2^n masks, threshold + 1 upper totals, yahtzee-50 flag)) and W the second moments of the
    future score in points^2 (None unless `moments`).  Unreachable states hold 0.

    States are solved by number of filled boxes, `chunk` states at a time; with workers > 1, the
    chunks of each layer are shared among forked processes (the result is identical)."""
    global _JOB
    if not isinstance(sp, Spec):
        sp = Spec(ruleset(sp))
    zeros = _shared_zeros if workers > 1 else np.zeros
    V = zeros(sp.shape)
    W = zeros(sp.shape) if moments else None
    layers = [_states(sp, filled) for filled in range(sp.n)]
    pool = None
    if workers > 1:
        _JOB = (sp, V, W, layers)
        pool = mp.get_context("fork").Pool(workers)
    try:
        for filled in range(sp.n - 1, -1, -1):
            n = len(layers[filled][0])
            tasks = [(filled, lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]
            if pool is not None and len(tasks) > 1:
                for _ in pool.imap_unordered(_solve_task, tasks):
                    pass
            else:
                for layer, lo, hi in tasks:
                    masks, us, ys = layers[layer]
                    _solve_chunk(sp, V, W, masks[lo:hi], us[lo:hi], ys[lo:hi])
            if progress:
                progress(filled)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        _JOB = None
    if workers > 1:  # copy out of the shared mappings
        V, W = np.array(V), (np.array(W) if W is not None else None)
    return V, W


# --- canonical bytes, cache, manifest ----------------------------------------------------------------

def _header(rules_id: str, shape) -> bytes:
    dims = "x".join(str(d) for d in shape)
    return f"fairdice-optimal/{FORMAT} {rules_id} int64-le {dims} scale=2^{SCALE_BITS}\n".encode()


def table_digest(rules_id: str, table: np.ndarray) -> str:
    """SHA-256 (hex) of a table's canonical bytes: a header naming format, rule set and shape, then int64 LE."""
    data = np.ascontiguousarray(table, dtype="<i8")
    h = hashlib.sha256(_header(rules_id, data.shape))
    h.update(data.tobytes())
    return h.hexdigest()


def cache_dir() -> Path:
    """Where tables are cached: $FAIRDICE_CACHE_DIR, else $XDG_CACHE_HOME/fairdice, else ~/.cache/fairdice."""
    if os.environ.get("FAIRDICE_CACHE_DIR"):
        return Path(os.environ["FAIRDICE_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "fairdice"
    return Path.home() / ".cache" / "fairdice"


def table_path(rules_id: str) -> Path:
    return cache_dir() / f"optimal-{rules_id}-v{FORMAT}.npy"


_MANIFEST: dict = {}


def manifest() -> dict:
    """The shipped manifest: expected digest, shape, start value and sd of each rule set's table."""
    if not _MANIFEST:
        with open(MANIFEST_PATH, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc.get("format") != FORMAT:
            raise FairdiceError("table_format",
                                f"{MANIFEST_PATH} is format {doc.get('format')}, expected {FORMAT}")
        _MANIFEST.update(doc)
    return _MANIFEST


def _rules_id(rules_id) -> str:
    rs = ruleset(rules_id)
    if RULESETS.get(rs.id) is not rs:
        raise FairdiceError("unknown_rules", f"no optimal table for a custom rule set {rs.id!r}")
    return rs.id


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_cached(rules_id: str, expected: str | None):
    """The cached table if it is exactly the expected one; None (and why) otherwise."""
    path = table_path(rules_id)
    side = path.with_suffix(".json")
    if not path.exists():
        return None, "missing"
    try:
        meta = json.loads(side.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT or meta.get("rules") != rules_id:
            return None, "stale format"
        table = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        return None, f"unreadable ({exc.__class__.__name__})"
    shape = Spec(RULESETS[rules_id]).shape
    if table.dtype != np.dtype("<i8") or table.shape != shape:
        return None, f"wrong dtype/shape {table.dtype} {table.shape}"
    digest = table_digest(rules_id, table)
    if digest != meta.get("sha256") or (expected is not None and digest != expected):
        return None, "hash mismatch"
    return (table, meta), "ok"


def compute_table(rules_id: str, moments: bool = True, workers: int | None = None) -> tuple[np.ndarray, dict]:
    """Solve a rule set from scratch: (table as int64, metadata with digest, start value and sd, seconds)."""
    rules_id = _rules_id(rules_id)
    start = time.perf_counter()
    V, W = solve(rules_id, moments=moments, workers=default_workers() if workers is None else workers)
    seconds = time.perf_counter() - start
    table = V.astype("<i8")
    v0 = float(V[0, 0, 0] / SCALE)
    meta = {"format": FORMAT, "rules": rules_id, "sha256": table_digest(rules_id, table),
            "shape": list(table.shape), "start_value": round(v0, 6), "build_seconds": round(seconds, 2)}
    if W is not None:
        meta["start_sd"] = round(float(np.sqrt(W[0, 0, 0] - v0 * v0)), 6)
    return table, meta


def build_table(rules_id: str, force: bool = False, moments: bool = True, workers: int | None = None) -> dict:
    """Build (or verify) the cached optimal table of one rule set; returns info about it.

    Without `force`, a valid cached table (format, shape and SHA-256 matching the shipped manifest) is
    kept; otherwise the table is computed (10 s to a minute), checked against the manifest, and written
    atomically with a JSON sidecar.  Returns a JSON-friendly dict: rules, path, sha256, shape,
    start_value, start_sd (when known), build_seconds, built (bool) and reason ("ok" when the cache was
    valid, else why it was rebuilt).  Raises FairdiceError("table_mismatch") when a freshly computed
    table does not have the manifest's digest (then nothing is written).
    """
    rules_id = _rules_id(rules_id)
    with _build_lock(rules_id):
        return _build_locked(rules_id, force, moments, workers)


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


def table_ready(rules_id: str) -> bool:
    """Whether the verified table is in memory, or valid in the cache (then loaded). Never builds."""
    rules_id = _rules_id(rules_id)
    if rules_id in _LOADED:
        return True
    with _LOCK:
        if rules_id not in _LOADED:
            cached, _ = _read_cached(rules_id, manifest()["tables"].get(rules_id, {}).get("sha256"))
            if cached is None:
                return False
            _LOADED[rules_id] = _Table(rules_id, cached[0])
    return True


def _build_locked(rules_id: str, force: bool, moments: bool, workers: int | None) -> dict:
    expected = manifest()["tables"].get(rules_id, {}).get("sha256")
    path = table_path(rules_id)
    reason = "forced"
    if not force:
        cached, reason = _read_cached(rules_id, expected)
        if cached is not None:
            table, meta = cached
            _LOADED[rules_id] = _Table(rules_id, table)
            return {**meta, "path": str(path), "built": False, "reason": reason}
    table, meta = compute_table(rules_id, moments=moments, workers=workers)
    if expected is not None and meta["sha256"] != expected:
        raise FairdiceError("table_mismatch", f"the computed {rules_id} table has SHA-256 {meta['sha256']}, "
                                              f"the manifest says {expected}")
    _atomic_write(path, lambda fh: np.save(fh, table, allow_pickle=False))
    _atomic_write(path.with_suffix(".json"), lambda fh: fh.write(json.dumps(meta, indent=1).encode()))
    _LOADED[rules_id] = _Table(rules_id, table)
    return {**meta, "path": str(path), "built": True, "reason": reason}


def write_manifest(rules_ids=None) -> dict:
    """For maintainers, after changing the DP: solve the rule sets, cache them, and write the manifest."""
    doc = {"format": FORMAT, "scale_bits": SCALE_BITS, "tables": {}}
    if MANIFEST_PATH.exists():
        old = json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
        if old.get("format") == FORMAT:
            doc["tables"] = old.get("tables", {})
    for rid in rules_ids or RULESETS:
        table, meta = compute_table(rid)
        path = table_path(rid)
        _atomic_write(path, lambda fh: np.save(fh, table, allow_pickle=False))
        _atomic_write(path.with_suffix(".json"), lambda fh: fh.write(json.dumps(meta, indent=1).encode()))
        doc["tables"][rid] = {k: meta[k] for k in ("sha256", "shape", "start_value", "start_sd")}
    doc["tables"] = dict(sorted(doc["tables"].items()))
    _atomic_write(MANIFEST_PATH, lambda fh: fh.write((json.dumps(doc, indent=1) + "\n").encode()))
    _MANIFEST.clear()
    return doc


_LOADED: dict[str, "_Table"] = {}
_LOCK = threading.Lock()


def load_table(rules_id: str) -> "_Table":
    """The verified table of a rule set, from memory, else the disk cache, else built now (and cached)."""
    rules_id = _rules_id(rules_id)
    table = _LOADED.get(rules_id)
    if table is None:
        with _LOCK:
            if rules_id not in _LOADED:
                build_table(rules_id)
            table = _LOADED[rules_id]
    return table


# --- using a table --------------------------------------------------------------------------------

def state_of(rules: RuleSet, boxes, threshold: int = UPPER_BONUS_THRESHOLD) -> tuple[int, int, int]:
    """(mask of filled boxes, upper total capped at the threshold, Yahtzee-50 flag) of a card."""
    mask, upper = 0, 0
    for c, cat in enumerate(rules.categories):
        value = boxes.get(cat.id)
        if value is None:
            continue
        mask |= 1 << c
        if cat.upper:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 \
                    or value % cat.rule.face or value > DICE * cat.rule.face:
                raise FairdiceError("invalid_card", f"{cat.id} cannot hold {value!r}")
            upper += value
    flag = int(rules.forced_joker and rules.five_alike in rules.category_ids
               and (boxes.get(rules.five_alike) or 0) > 0)
    return mask, min(threshold, upper), flag


class _Table:
    """A solved rule set: the state values, and the within-turn values derived from them on demand."""

    def __init__(self, rules, table: np.ndarray, threshold: int = UPPER_BONUS_THRESHOLD):
        self.spec = Spec(ruleset(rules), threshold) if not isinstance(rules, Spec) else rules
        self.V = np.asarray(table, dtype=float)

    def value(self, boxes) -> float:
        """Expected points still to come from a card between turns (bonuses included)."""
        return float(self.V[state_of(self.spec.rules, boxes, self.spec.threshold)] / SCALE)

    def start_value(self) -> float:
        return float(self.V[0, 0, 0] / SCALE)

    def final_values(self, boxes) -> np.ndarray:
        """Value (table units) of each of the 252 rolls after the last roll of a turn on this card."""
        m, u, y = state_of(self.spec.rules, boxes, self.spec.threshold)
        R, _ = _final_values(self.spec, self.V, np.array([m]), np.array([u]), np.array([y]))
        return R[0]

    def keep_values(self, boxes, rolls_left: int) -> np.ndarray:
        """Value in points of each of the 462 holds with `rolls_left` (1 or 2) rolls still to come."""
        R = self.final_values(boxes)[:, None]
        for _ in range(rolls_left - 1):
            R = _earlier_roll(R)
        return _keep_sums(R)[:, 0] / OUTCOMES / SCALE

    def score_values(self, boxes, dice) -> list[tuple[str, float]]:
        """(box, value in points: gain now plus the expected rest) for each legal box, in table order."""
        rs, T = self.spec.rules, self.spec.threshold
        m, u, y = state_of(rs, boxes, T)
        out = []
        for cid, opt in options(rs, boxes, dice).items():
            c = rs.category_ids.index(cid)
            gain, u2, y2 = opt.points + opt.yahtzee_bonus, u, y
            if rs.categories[c].upper:
                u2 = min(T, u + opt.points)
                if u < T <= u2:
                    gain += rs.upper_bonus
            elif c == self.spec.yz and self.spec.flag:
                y2 = int(opt.points > 0)
            out.append((cid, float((gain * SCALE + self.V[m | 1 << c, u2, y2]) / SCALE)))
        return out


class Optimal(Policy):
    """Exact expected-final-score maximiser over the whole card (a precomputed table per rule set)."""
    id = "optimal"
    version = "1"
    level = "hard"
    description = "Plays the whole card to maximise the expected final score (exact dynamic programme)."
    plays_upper_first = False

    def params(self) -> dict:
        return {"table_sha256": {rid: entry["sha256"] for rid, entry in sorted(manifest()["tables"].items())}}

    def candidates(self, position: Position) -> list[Candidate]:
        if position.upper_first:
            raise FairdiceError("unsupported_rules", "the optimal bot does not play the upper-first house rule")
        table = load_table(position.rules.id)
        if position.roll == 0:  # before the first roll the only move is to throw all five
            return [Candidate(Decision("roll", hold=()), table.value(position.boxes))]
        scores = [Candidate(Decision("score", category=cid), value)
                  for cid, value in table.score_values(position.boxes, position.dice)]
        if position.rolls_left == 0:
            return scores
        return hold_candidates(position, table.keep_values(position.boxes, position.rolls_left)) + scores
