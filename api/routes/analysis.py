"""The coach over HTTP: GET /v1/games/{id}/analysis, every decision of a game that is over valued against
optimal play (`fairdice.analysis`, SPEC §4.7).

The analysis is computed from the game's log exactly as `fairdice analyze LOG` computes it offline, so the two
agree to the last digit.  Only a finished or abandoned game is analysed: its seed is revealed, so its dice are
public; a game being played is refused (409 `game_not_over`) whatever is asked.  Under the upper-first house
rule there is no optimal table to judge by: 422 `analysis_unavailable` with `reason` `upper_first`.
"""

from __future__ import annotations

import json

from flask import Blueprint

from fairdice.analysis import analyze, require_available

from ..engines import TABLES, require_table
from .common import games, json_response

bp = Blueprint("analysis", __name__)


@bp.get("/v1/games/<game_id>/analysis")
def game_analysis(game_id):
    return json_response(analysis_document(game_id))  # no token: a game that is over is public, log and all


def analysis_document(game_id: str) -> dict:
    """The analysis of a stored game: its log (404 if none), refused while playing, the table ready (503 while
    it is built)."""
    log = json.loads(games().log(game_id))
    if log["final"] is not None and not log["header"]["upper_first"]:
        require_table(log["header"]["rules"])
    return require_available(analyze(log, TABLES))
