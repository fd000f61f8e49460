"""`fairdice tables`: build, or check, the optimal bot's cached tables (an edge: it touches the disk)."""

from __future__ import annotations

import json

from ..rules import RULESETS
from . import optimal


def configure(parser) -> None:
    parser.add_argument("action", choices=["build", "status"], nargs="?", default="status",
                        help="build: compute any missing or invalid table; status: say what is cached")
    parser.add_argument("--rules", choices=list(RULESETS), action="append",
                        help="only this rule set (repeatable); default all three")
    parser.add_argument("--force", action="store_true", help="with build: recompute even a valid table")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")


def run(args) -> int:
    rules_ids = args.rules or list(RULESETS)
    expected = optimal.manifest()["tables"]
    report = []
    for rid in rules_ids:
        if args.action == "build":
            info = optimal.build_table(rid, force=args.force)
        else:
            cached, reason = optimal._read_cached(rid, expected.get(rid, {}).get("sha256"))
            info = {"rules": rid, "path": str(optimal.table_path(rid)), "valid": cached is not None,
                    "reason": reason, **({k: cached[1].get(k) for k in ("start_value", "start_sd")} if cached else {})}
        report.append(info)
    if args.json:
        print(json.dumps({"cache_dir": str(optimal.cache_dir()), "tables": report}))
        return 0
    print(f"cache: {optimal.cache_dir()}")
    for info in report:
        if args.action == "build":
            what = f"built in {info.get('build_seconds')} s" if info["built"] else "valid, kept"
        else:
            what = "valid" if info["valid"] else f"missing or invalid ({info['reason']})"
        start = f"  start value {info['start_value']:.4f}" if info.get("start_value") is not None else ""
        print(f"{info['rules']:<10} {what}{start}")
    return 0 if args.action == "build" or all(i["valid"] for i in report) else 1
