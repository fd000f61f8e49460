"""The server's public documents: health, the OpenAPI document, rule sets, bots, public keys."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from urllib.parse import urlsplit

from flask import Blueprint, current_app

from fairdice.bots import BOTS, measured_scores
from fairdice.rules import RULESETS

from ..problems import UNAVAILABLE_RETRY_AFTER
from ..stores.base import Busy, Unavailable, is_postgres_url, redacted
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
    except (Unavailable, Busy) as exc:
        reason, detail = (exc.reason, exc.detail) if isinstance(exc, Unavailable) else ("busy", str(exc))
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
