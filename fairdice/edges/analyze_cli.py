"""`fairdice analyze LOG [--json]`: the coach, offline: every decision of a finished or abandoned game's log
valued against optimal play (`fairdice.analysis`, SPEC §4.7), with the optimal tables of this machine's cache
(built there if missing, once).  No server is asked; the figures are those of GET /v1/games/{id}/analysis.

Exit status: 0 analysed; 1 the game cannot be judged (the upper-first house rule has no optimal table);
2 unusable input (a file that is not a log of a game that is over) or usage.  The log is not verified here:
`fairdice-verify LOG` does that.
"""

from __future__ import annotations

import json
import os
import sys

from ..errors import FairdiceError
from ..rules import RULESETS
from ..adapters.argtypes import positive_int
from .coachtext import TOP, render_analysis
from .playtext import LANGUAGES, Words

NOT_JUDGED = 1
UNUSABLE = 2


def configure(parser) -> None:
    parser.add_argument("log", metavar="LOG", help="a finished or abandoned game's log (GET /v1/games/{id}/log)")
    parser.add_argument("--json", action="store_true", help="the whole analysis as one JSON object on stdout")
    parser.add_argument("--top", type=positive_int, default=TOP,
                        help=f"costliest decisions shown per seat (default {TOP}; --json has them all)")
    parser.add_argument("--lang", choices=LANGUAGES, default=os.environ.get("FAIRDICE_LANG") or "en",
                        help="the language of the summary: en or zh (FAIRDICE_LANG; default en)")


def run(args) -> int:
    from ..adapters import table_cache
    from ..analysis import analyze

    def refuse(message: str) -> int:
        print(f"fairdice analyze: {args.log}: {message}", file=sys.stderr)
        return UNUSABLE

    try:
        with open(args.log, "rb") as fh:
            log = json.loads(fh.read())
    except OSError as exc:
        return refuse(f"cannot read it ({exc.strerror or exc})")
    except ValueError as exc:  # not UTF-8, or not JSON
        return refuse(f"not a JSON log ({exc})")
    head = log.get("header") if isinstance(log, dict) else None
    rules = head.get("rules") if isinstance(head, dict) and head.get("upper_first") is False else None
    if rules in RULESETS and log.get("final") is not None and not table_cache.table_ready(rules):
        print(f"fairdice analyze: building the optimal {rules} table (once on this machine, up to a minute or two)",
              file=sys.stderr)
    try:
        doc = analyze(log, table_cache.source())  # this machine's cache, built there once if missing
    except FairdiceError as exc:
        return refuse(exc.message)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False))
    else:
        print(render_analysis(doc, Words(args.lang), top=args.top))
    return 0 if doc["available"] else NOT_JUDGED
