"""`fairdice admin stats|prune|quota`: what the configured store holds, pruning what may be pruned, and the
quota of one client.

- `stats`: games (and how many are unfinished), events, Idempotency-Key answers kept, rate-limit rows, the
  clients' own quotas, the database's size, each table's, and its write-ahead log's (`Store.stats`).
- `prune`: what every server's maintenance does on its own (api.lifecycle): delete the Idempotency-Key
  answers older than FAIRDICE_IDEMPOTENCY_TTL and the rate-limit rows that no longer limit anyone, and cut
  the SQLite WAL back (`Store.prune`).  Safe while servers run on the same store.
- `quota`: the most unfinished games one client may have, instead of FAIRDICE_MAX_UNFINISHED (`--client ADDR
  --max N`, `--lift` for none, `--reset` for the server's again), kept in the store, so every worker and
  server on it applies it to the client's next game; alone, the list of such quotas.  With `--sessions`, the
  same for the dice sessions one client may open in any 24 hours (instead of FAIRDICE_MAX_SESSIONS); with
  `--session-rolls`, for the rolls its sessions may make in a UTC day (instead of FAIRDICE_MAX_SESSION_ROLLS);
  both kept in a table of their own, `client_session_quotas`.  A client is named as the rate limits name it: an
  IPv4 address, or an IPv6 address or /64 network (its /64).

All read the store the way `fairdice serve` does (--data-dir, --db, FAIRDICE_*), and never create one.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
import time
from pathlib import Path

from .config import settings
from .errors import ServiceError
from .lifecycle import stamp
from .serve import add_store_options, database_error


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Report on the server's store, or prune it (the settings are those of fairdice serve)."
    common = argparse.ArgumentParser(add_help=False)
    add_store_options(common)
    common.add_argument("--json", action="store_true", help="print one JSON object")
    actions = parser.add_subparsers(dest="action", required=True, metavar="{stats,prune,quota}")
    actions.add_parser("stats", parents=[common], help="games, events, records kept and sizes",
                       description="Games, events, Idempotency-Key answers and rate-limit rows kept, and the "
                                   "database's size (with its write-ahead log).")
    actions.add_parser("prune", parents=[common], help="delete expired records and cut the WAL back",
                       description="Delete Idempotency-Key answers older than FAIRDICE_IDEMPOTENCY_TTL seconds "
                                   "and spent rate-limit rows, and cut the SQLite write-ahead log back. "
                                   "Servers do this by themselves every FAIRDICE_MAINTENANCE_INTERVAL seconds.")
    quota = actions.add_parser(
        "quota", parents=[common], help="one client's quota of unfinished games, or the list of them",
        description="Set the most unfinished games one client may have, instead of FAIRDICE_MAX_UNFINISHED, for "
                    "every server on this store (from the client's next game on); without --client, list the "
                    "quotas set. A quota applies only while the servers have one (FAIRDICE_MAX_UNFINISHED > 0). "
                    "With --sessions, the same for the dice sessions one client may open in any 24 hours "
                    "(FAIRDICE_MAX_SESSIONS); with --session-rolls, for the rolls its sessions may make in a UTC "
                    "day (FAIRDICE_MAX_SESSION_ROLLS).")
    kind = quota.add_mutually_exclusive_group()
    kind.add_argument("--sessions", dest="kind", action="store_const", const="sessions", default="games",
                      help="the quota of dice sessions opened a day (FAIRDICE_MAX_SESSIONS), not of games")
    kind.add_argument("--session-rolls", dest="kind", action="store_const", const="rolls",
                      help="the quota of rolls a client's dice sessions make a UTC day (FAIRDICE_MAX_SESSION_ROLLS)")
    quota.add_argument("--client", type=client_key, metavar="ADDR",
                       help="an IPv4 address, or an IPv6 address or /64 network (a client is its /64)")
    change = quota.add_mutually_exclusive_group()
    change.add_argument("--max", type=non_negative, metavar="N",
                        help="at most N unfinished games (or sessions, or rolls, a day) (0: no quota)")
    change.add_argument("--lift", dest="max", action="store_const", const=0, help="no quota (the same as --max 0)")
    change.add_argument("--reset", action="store_true",
                        help="the servers' quota again (FAIRDICE_MAX_UNFINISHED, _SESSIONS or _SESSION_ROLLS)")


def client_key(text: str) -> str:
    """The client as the rate limits and the quota name it (api.limits.client_key)."""
    from .limits import client_key as key_of, parse_address

    if "/" in text:
        try:
            network = ipaddress.ip_network(text.strip(), strict=False)
        except ValueError:
            network = None
        if network is None or network.version != 6 or network.prefixlen != 64:
            raise argparse.ArgumentTypeError(f"not an IPv6 /64 network: {text!r} (or name an address)")
        return str(network)
    address = parse_address(text)
    if address is None:
        raise argparse.ArgumentTypeError(f"not an IP address: {text!r}")
    return key_of(address)


def non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number of games: {text!r}")
    return int(text)


class AdminError(ServiceError):
    """Why the command cannot run, in one line."""


def open_existing_store(conf):
    """The configured store; AdminError if it cannot be opened, or (SQLite) if there is no database file:
    an administrative command never makes one."""
    import sqlite3

    from .store import StoreError, is_postgres_url, open_store

    if not is_postgres_url(conf.db) and not Path(conf.db).is_file():
        raise AdminError(f"no database at {conf.db} (fairdice serve makes it; --data-dir or --db names another)")
    try:
        return open_store(conf)
    except (StoreError, sqlite3.Error, OSError, ValueError) as exc:
        raise AdminError(str(database_error(conf, exc))) from None


def run(args) -> int:
    from .store import StoreError, describe_db

    try:
        conf = settings({"data_dir": args.data_dir, "db": args.db})
        store = open_existing_store(conf)
    except (AdminError, ValueError) as exc:
        print(f"fairdice admin {args.action}: {exc}", file=sys.stderr)
        return 2
    try:
        if args.action == "quota" and args.client is None and (args.max is not None or args.reset):
            raise AdminError("--max, --lift and --reset need --client ADDR")
        report = {"database": describe_db(conf.db), **ACTIONS[args.action][0](store, conf, args)}
    except AdminError as exc:
        print(f"fairdice admin {args.action}: {exc}", file=sys.stderr)
        return 2
    except StoreError as exc:
        print(f"fairdice admin {args.action}: {database_error(conf, exc)}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(json.dumps(report) if args.json else ACTIONS[args.action][1](report))
    return 0


def stats(store, conf, args) -> dict:
    return store.stats()


def prune(store, conf, args) -> dict:
    before = stamp(time.time() - conf.idempotency_ttl)
    return {"idempotency_before": before, "idempotency_ttl": conf.idempotency_ttl, **store.prune(before)}


def quota(store, conf, args) -> dict:
    """Set (or reset) a client's quota of games (or of sessions, or rolls) when asked to; the quotas set, of
    every kind, and the servers' own."""
    most = None if args.reset else args.max
    if args.client is not None and (args.max is not None or args.reset):
        if args.kind == "games":
            store.set_client_quota(args.client, most)
        else:
            store.set_client_session_quota(args.client, most, args.kind)
    found = {"quotas": store.client_quotas(), "session_quotas": store.client_session_quotas("sessions"),
             "session_roll_quotas": store.client_session_quotas("rolls")}
    if args.client is not None:
        found = {name: {args.client: kept[args.client]} if args.client in kept else {} for name, kept in found.items()}
    return {"client": args.client, "kind": args.kind, **found, "max_unfinished": conf.max_unfinished,
            "max_sessions": conf.max_sessions, "max_session_rolls": conf.max_session_rolls}


def size(count: int | None) -> str:
    if count is None:
        return "none"
    if count < 1024:
        return f"{count} bytes"
    value = count / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def describe_stats(report: dict) -> str:
    wal = "" if report.get("wal_bytes") is None else f" (+ {size(report['wal_bytes'])} of write-ahead log)"
    tables = report.get("table_bytes")
    by_table = ("not measured by this SQLite (no dbstat)" if tables is None else
                ", ".join(f"{name} {size(count)}" for name, count in sorted(tables.items(), key=lambda t: -t[1])))
    return "\n".join([
        f"database:            {report['database']} ({report['backend']})",
        f"games:               {report['games']} ({report['unfinished']} unfinished)",
        f"events:              {report['events']}",
        f"idempotency answers: {report['idempotency_records']}",
        f"rate-limit rows:     {report.get('rate_limits', 'n/a')}",
        f"client quotas:       {report.get('client_quotas', 'n/a')}",
        f"size:                {size(report['bytes'])}{wal}",
        f"size by table:       {by_table}",
    ])


def describe_prune(report: dict) -> str:
    wal = "" if report.get("wal_bytes") is None else f"; write-ahead log now {size(report['wal_bytes'])}"
    return (f"{report['database']}: deleted {report['idempotency_records']} idempotency answers (and "
            f"{report.get('session_idempotency_records', 0)} of dice sessions) from before "
            f"{report['idempotency_before']} (FAIRDICE_IDEMPOTENCY_TTL={report['idempotency_ttl']} s) and "
            f"{report['rate_limits']} spent rate-limit rows{wal}")


def describe_quota(report: dict) -> str:
    """One client's quota of games (or of sessions, or rolls); without a client, every quota of every kind."""
    return "\n".join(line for kind, (found, servers, what, setting) in QUOTA_KINDS.items()
                     if report["client"] is None or report["kind"] == kind
                     for line in _describe_quotas(report["client"], report[found], report[servers], what, setting))


QUOTA_KINDS = {  # kind: (the report's quotas set, the servers' quota, what it counts, its setting)
    "games": ("quotas", "max_unfinished", "unfinished games", "FAIRDICE_MAX_UNFINISHED"),
    "sessions": ("session_quotas", "max_sessions", "dice sessions a day", "FAIRDICE_MAX_SESSIONS"),
    "rolls": ("session_roll_quotas", "max_session_rolls", "session rolls a UTC day", "FAIRDICE_MAX_SESSION_ROLLS"),
}


def _describe_quotas(client, quotas: dict, servers_most: int, what: str, setting: str) -> list[str]:
    """The lines of one kind of quota: the clients' own, then the servers'."""
    servers = (f"{servers_most} {what} ({setting})" if servers_most
               else f"none ({setting}=0: no client's own quota applies either)")
    if client is not None and not quotas:
        return [f"{client}: the servers' quota, {servers}"]
    lines = [f"{name}: {f'at most {most} {what}' if most else f'no quota of {what}'}" for name, most in quotas.items()]
    if client is None:
        lines.append(f"{'any other client' if lines else 'every client'}: the servers' quota, {servers}")
    return lines


ACTIONS = {"stats": (stats, describe_stats), "prune": (prune, describe_prune), "quota": (quota, describe_quota)}
