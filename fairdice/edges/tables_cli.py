"""`fairdice tables`: build, or check, the optimal bot's cached tables (the command line of the table cache,
`fairdice.adapters.table_cache`)."""

from __future__ import annotations

import json

from ..adapters import table_cache
from ..rules import RULESETS


def configure(parser) -> None:
    parser.add_argument("action", choices=["build", "status"], nargs="?", default="status",
                        help="build: compute any missing or invalid table; status: say what is cached")
    parser.add_argument("--rules", choices=list(RULESETS), action="append",
                        help="only this rule set (repeatable); default all three")
    parser.add_argument("--force", action="store_true", help="with build: recompute even a valid table")
    parser.add_argument("--moments", action="store_true",
                        help="with build: compute the second moments too (the standard deviation; twice the work)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")


def status(rules_id: str) -> dict:
    cached, reason = table_cache.read_cached(rules_id)
    info = {"rules": rules_id, "path": str(table_cache.table_path(rules_id)), "valid": cached is not None,
            "reason": reason}
    if cached:
        info.update({k: cached[1].get(k) for k in ("start_value", "start_sd")})
    return info


def run(args) -> int:
    rules_ids = args.rules or list(RULESETS)
    if args.action == "build":
        report = [table_cache.build_table(rid, force=args.force, moments=args.moments) for rid in rules_ids]
    else:
        report = [status(rid) for rid in rules_ids]
    if args.json:
        print(json.dumps({"cache_dir": str(table_cache.cache_dir()), "tables": report}))
        return 0
    print(f"cache: {table_cache.cache_dir()}")
    for info in report:
        if args.action == "build":
            what = f"built in {info.get('build_seconds')} s" if info["built"] else "valid, kept"
        else:
            what = "valid" if info["valid"] else f"missing or invalid ({info['reason']})"
        start = f"  start value {info['start_value']:.4f}" if info.get("start_value") is not None else ""
        print(f"{info['rules']:<10} {what}{start}")
    return 0 if args.action == "build" or all(i["valid"] for i in report) else 1
