"""Complete bot-only games with finished, signed logs: what `fairdice simulate` runs.

With a public `seed`, every server seed, game id, client seed and the signing
key are derived from it, so a run is reproducible; such logs say
`"seed_secret": false`.  Without one, fresh values come from `entropy`
(the caller passes `secrets.token_bytes`; the core draws nothing itself).
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import derive
from .bots import BOTS, play_bots
from .game import Game, Setup
from .log import Signer, build_log, open_log

if TYPE_CHECKING:
    from .bots.base import Policy


def _from_public_seed(seed: str, label: str, index: int = 0) -> bytes:
    return hashlib.sha256(derive.message(f"simulate-{label}", "", [seed], index)).digest()


def signer_for_seed(seed: str) -> Signer:
    return Signer.from_private_bytes(_from_public_seed(seed, "key"))


@dataclass(frozen=True)
class GameSpec:
    """How to make game `index` of a run."""
    rules: str
    bots: tuple[str, ...]
    index: int
    seed: str | None
    entropy: Callable[[int], bytes] | None = None


def play_one(spec: GameSpec, signer: Signer, bots: Mapping[str, Policy] = BOTS) -> dict:
    """One complete game played by these policies (an optimal seat needs a registry with a table source:
    `fairdice.adapters.table_cache.bots()`); returns its finished, signed log."""
    if spec.seed is not None:
        server_seed = _from_public_seed(spec.seed, "server", spec.index)
        game_id = f"sim-{_from_public_seed(spec.seed, 'run').hex()[:12]}-{spec.index:06d}"
        client_seed = f"simulate {spec.seed} #{spec.index}"
    else:
        server_seed = spec.entropy(derive.SEED_BYTES)
        game_id = "sim-" + spec.entropy(8).hex()
        client_seed = spec.entropy(16).hex()
    seats = [{"type": "bot", "bot": bot, "name": f"{bot} #{i}"} for i, bot in enumerate(spec.bots)]
    game = Game(Setup.build(game_id, spec.rules, seats, first=0), server_seed)
    opened = open_log(game, signer, seed_secret=spec.seed is None)
    game.supply_client_seed(None, client_seed)
    play_bots(game, bots)
    return build_log(opened, game, signer)


def summarize(rules: str, bots: tuple[str, ...], logs_final: list[dict]) -> dict:
    """Mean, standard deviation, min, max and wins per seat from the final blocks."""
    seats = []
    for i, bot in enumerate(bots):
        scores = [f["totals"][i]["total"] for f in logs_final]
        seats.append({
            "seat": i,
            "bot": bot,
            "mean": statistics.fmean(scores) if scores else 0.0,
            "stdev": statistics.stdev(scores) if len(scores) > 1 else 0.0,
            "min": min(scores, default=0),
            "max": max(scores, default=0),
            "wins": sum(f["winner"] == i for f in logs_final),
        })
    return {"rules": rules, "games": len(logs_final), "draws": sum(f["draw"] for f in logs_final),
            "seats": seats}
