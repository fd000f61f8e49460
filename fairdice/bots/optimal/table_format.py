"""How an optimal table is written down and known: canonical bytes, header, SHA-256, the shipped manifest.

Pure: functions of a table, and of package data (`fairdice/bots/tables/manifest.json`, read through
importlib.resources).  The canonical bytes (SPEC §4.6) are a header line naming the format, the rule set
and the shape, then the values as int64 little-endian; their SHA-256 is the table's identity, which the
optimal bot's identity hash commits to.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources

import numpy as np

from ...errors import FairdiceError
from ...rules import RULESETS, ruleset
from .programme import POINT, POINT_BITS, StateSpace

FORMAT = 1
DTYPE = np.dtype("<i8")


def header(rules_id: str, shape) -> bytes:
    dims = "x".join(str(d) for d in shape)
    return f"fairdice-optimal/{FORMAT} {rules_id} int64-le {dims} scale=2^{POINT_BITS}\n".encode()


def table_digest(rules_id: str, table: np.ndarray) -> str:
    """SHA-256 (hex) of a table's canonical bytes."""
    data = np.ascontiguousarray(table, dtype=DTYPE)
    digest = hashlib.sha256(header(rules_id, data.shape))
    digest.update(data.data)
    return digest.hexdigest()


def published_rules(rules_id) -> str:
    """The id of a published rule set (the only ones with tables); FairdiceError otherwise."""
    rs = ruleset(rules_id)
    if RULESETS.get(rs.id) is not rs:
        raise FairdiceError("unknown_rules", f"no optimal table for a custom rule set {rs.id!r}")
    return rs.id


@cache
def manifest() -> dict:
    """The shipped manifest: each rule set's table digest, shape, start value and standard deviation."""
    text = resources.files("fairdice.bots").joinpath("tables").joinpath("manifest.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    if doc.get("format") != FORMAT:
        raise FairdiceError("table_format", f"the table manifest is format {doc.get('format')}, expected {FORMAT}")
    return doc


def expected_digest(rules_id: str) -> str | None:
    return manifest()["tables"].get(rules_id, {}).get("sha256")


def check_array(rules_id: str, table: np.ndarray) -> str | None:
    """Why this array cannot be the table of `rules_id` (dtype, shape), or None."""
    shape = StateSpace(RULESETS[rules_id]).shape
    if table.dtype != DTYPE or table.shape != shape:
        return f"wrong dtype/shape {table.dtype} {table.shape}, expected {DTYPE} {shape}"
    return None


def describe(rules_id: str, table: np.ndarray, second_moments: np.ndarray | None = None) -> dict:
    """The table's metadata: format, rules, sha256, shape, start value and (from the second moments, when
    given) the start's standard deviation, in points."""
    start = float(table[0, 0, 0]) / POINT
    meta = {"format": FORMAT, "rules": rules_id, "sha256": table_digest(rules_id, table),
            "shape": list(table.shape), "start_value": round(start, 6)}
    if second_moments is not None:
        meta["start_sd"] = round(float(np.sqrt(second_moments[0, 0, 0] - start * start)), 6)
    return meta
