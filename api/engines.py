"""The optimal engine's tables: built once per machine, in the background, while what needs them waits.

A table takes seconds to a minute to build.  Rather than hold a request (and
its worker) that long, the first request that needs a missing table starts
one background build in this process and is answered 503 with Retry-After;
`fairdice.adapters.table_cache` serialises builders across processes, so the other
workers and `fairdice tables build` wait for that one build instead of
repeating it.
"""

from __future__ import annotations

import logging
import threading

from fairdice.adapters import table_cache
from fairdice.game import Setup

from .errors import RefusalError

# The server's table source, passed to the core (play_bots, hint, analyze): the cache, never built into by a
# decision (require_table builds in the background); and the published bots made with it.
TABLES = table_cache.source(build=False)
BOTS = table_cache.bots(build=False)

RETRY_AFTER_SECONDS = 15
log = logging.getLogger("fairdice.api")

_building: set[str] = set()
_guard = threading.Lock()


class TableNotReadyError(RefusalError):
    """The table is being built: retry after `retry_after` seconds (HTTP 503 with Retry-After)."""
    kind = "unavailable"


def require_table(rules_id: str) -> None:
    """Return at once if the table is ready; else make sure it is being built and answer 503."""
    if table_cache.table_ready(rules_id):
        return
    with _guard:
        if rules_id not in _building:
            _building.add(rules_id)
            threading.Thread(target=_build, args=(rules_id,), name=f"optimal-{rules_id}", daemon=True).start()
    raise TableNotReadyError("engine_warming_up", f"the optimal engine's {rules_id} table is being built (once per "
                             "machine, up to a minute or two); retry shortly", retry_after=RETRY_AFTER_SECONDS)


def require_bot_tables(setup: Setup) -> None:
    """The tables every bot of this game will decide from."""
    if any(seat.is_bot and seat.bot == "optimal" for seat in setup.seats):
        require_table(setup.rules.id)


def _build(rules_id: str) -> None:
    try:
        table_cache.build_table(rules_id)
    except Exception:  # logged; the next request that needs the table starts another attempt
        log.exception("building the optimal %s table failed", rules_id)
    finally:
        with _guard:
            _building.discard(rules_id)
