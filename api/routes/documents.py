"""The server's public documents: health, the OpenAPI document, rule sets, bots, public keys, and the optimal
bot's tables (SPEC §4.6) for anyone to replay that bot with."""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
from flask import Blueprint, current_app

from fairdice.bots import BOTS, measured_scores
from fairdice.bots.optimal import table_format
from fairdice.adapters import table_cache
from fairdice.rules import RULESETS

from .. import engines
from ..assets import Asset, send
from ..problems import UNAVAILABLE_RETRY_AFTER, ApiError
from ..stores.base import BusyError, UnavailableError, is_postgres_url, redacted
from .common import games, json_response

OPENAPI_PATH = Path(__file__).resolve().parents[1] / "openapi.json"
HEALTHY = '{"status":"ok"}'

bp = Blueprint("documents", __name__)


@bp.get("/livez")
def livez():
    """The process answers (touches nothing): for a supervisor, and the no-op that benchmarks compare with."""
    return json_response(HEALTHY)


@bp.get("/healthz")
def healthz():
    """Whether this server can serve games now: the store's own probe (a load balancer's health check)."""
    try:
        games().store.health()
    except (UnavailableError, BusyError) as exc:
        reason, detail = (exc.reason, exc.detail) if isinstance(exc, UnavailableError) else ("busy", str(exc))
        doc = {"status": "unhealthy", "reason": reason, "detail": public_detail(detail)}
        return json_response(doc, 503, {"Retry-After": str(UNAVAILABLE_RETRY_AFTER)})
    return json_response(HEALTHY)


def public_detail(detail: str) -> str:
    """A store's account of a fault, fit for anyone to read: no path of a key file, no database password."""
    conf = current_app.config["FAIRDICE"]
    hidden = [(str(conf.seed_key_file), "<seed key file>"), (str(conf.key_dir), "<key directory>")]
    if is_postgres_url(conf.db):
        hidden.append((conf.db, redacted(conf.db)))
        password = urlsplit(conf.db).password
        if password:
            hidden.append((password, "***"))
    for secret, shown in hidden:
        detail = detail.replace(secret, shown)
    return detail


@bp.get("/openapi.json")
def openapi_doc():
    return json_response(_openapi_document())


@bp.get("/v1/rules")
def rules():
    return json_response(_rules_document())


@bp.get("/v1/bots")
def bots():
    return json_response(_bots_document())


@bp.get("/v1/keys")
def public_keys():
    return json_response({"keys": games().keys.public_keys()})


TABLE_TYPE = "application/octet-stream"
# A rule set's table is fixed by SPEC §4.6 to the byte, and its digest is part of the optimal bot's published
# identity: the bytes at this address change only with a new format of the table (another bot version, another
# digest the logs commit to), so a client may keep them for good and check them against that digest.
TABLE_CACHING = "public, max-age=31536000, immutable"
_tables: dict[str, Asset] = {}
_tables_lock = threading.Lock()


@bp.get("/v1/tables/<rules_id>")
def optimal_table(rules_id: str):
    """The canonical bytes of the rule set's optimal table (SPEC §4.6), gzipped on the wire when the client
    accepts it; ETag = its SHA-256, which the optimal bot's hash commits to. 404 for a rule set without one;
    503 with Retry-After while this machine builds it (once, in the background)."""
    if rules_id not in RULESETS:
        raise ApiError(404, "unknown_rules", f"no optimal table for rule set {rules_id!r}: the optimal bot plays "
                       f"{', '.join(RULESETS)} (without the upper-first house rule, which has no table)",
                       allowed=list(RULESETS))
    asset = _tables.get(rules_id)
    if asset is None:
        engines.require_table(rules_id)  # (503 and a background build while the table is missing)
        with _tables_lock:
            asset = _tables.get(rules_id) or _table_asset(rules_id)
            _tables[rules_id] = asset
    return send(asset, TABLE_CACHING)


def _table_asset(rules_id: str) -> Asset:
    """The table's canonical bytes, checked against the published digest, gzipped once; only the gzipped bytes are
    kept (4.5 MiB for yatzy's 16 MiB; a client that does not take gzip gets them decompressed again)."""
    cached, why = table_cache.read_cached(rules_id)  # (checks format, shape and the manifest's digest)
    if cached is None:
        raise engines.TableNotReadyError("table_unavailable", f"the optimal {rules_id} table cannot be read ({why}); "
                                         "retry shortly", retry_after=engines.RETRY_AFTER_SECONDS)
    table = np.ascontiguousarray(cached[0], dtype=table_format.DTYPE)
    body = table_format.header(rules_id, table.shape) + table.tobytes()
    return Asset.of(body, TABLE_TYPE, etag_hex=cached[1]["sha256"], keep_body=False)


def prepare() -> None:
    _openapi_document(), _rules_document(), _bots_document()


@functools.cache
def _openapi_document() -> str:
    """api/openapi.json, with the bot ids of this server's registry."""
    doc = json.loads(OPENAPI_PATH.read_text())
    doc["components"]["schemas"]["BotId"]["enum"] = list(BOTS)
    return json.dumps(doc, separators=(",", ":"))


@functools.cache
def _rules_document() -> str:
    return json.dumps({"rules": [
        {"id": r.id, "name": r.name, "summary": r.summary, "upper_bonus": r.upper_bonus,
         "yahtzee_bonus": r.yahtzee_bonus,
         "categories": [{"id": c.id, "label": c.label, "section": c.section} for c in r.categories]}
        for r in RULESETS.values()]}, separators=(",", ":"))


@functools.cache
def _bots_document() -> str:
    """GET /v1/bots: each bot with its measured solitaire score (mean, sd, ...) per rule set, where measured."""
    measured = measured_scores()
    scores = measured.get("bots", {})
    return json.dumps({
        "bots": [{"id": b.id, "version": b.version, "level": b.level, "description": b.description,
                  "hash": b.identity_hash(),
                  "measured": {rid: dict(scores[b.id][rid]) for rid in RULESETS if rid in scores.get(b.id, {})}}
                 for b in BOTS.values()],
        "measured_source": measured.get("source", ""),
        "measured_games": measured.get("games"),
    }, separators=(",", ":"))
