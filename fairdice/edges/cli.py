"""The `fairdice` command: simulate, tables, analyze, and (with the server installed) serve and play.

This is an edge: it reads files, the clock and `secrets`, and hands plain
values to the pure core.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from ..errors import FairdiceError
from ..rules import RULESETS
from ..adapters.argtypes import positive_int


def _bot_list(text: str) -> tuple[str, ...]:
    from ..bots import BOTS

    bots = tuple(b.strip() for b in text.split(",") if b.strip())
    if not bots:
        raise argparse.ArgumentTypeError("name at least one bot")
    unknown = [b for b in bots if b not in BOTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown bot {unknown[0]!r}; valid: {', '.join(BOTS)}")
    if len(bots) > 6:
        raise argparse.ArgumentTypeError("at most 6 seats")
    return bots


def _load_signer(path: str | None, seed: str | None):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from ..log import Signer
    from ..simulate import signer_for_seed

    if path:
        try:
            key = load_pem_private_key(Path(path).read_bytes(), password=None)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"fairdice simulate: --key {path}: cannot read an Ed25519 PEM private key ({exc})") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SystemExit(f"fairdice simulate: --key {path}: not an Ed25519 key")
        return Signer(key)
    if seed is not None:
        return signer_for_seed(seed)
    return Signer(Ed25519PrivateKey.generate())


def _simulate_worker(job, signer_bytes: bytes):
    from ..adapters import table_cache
    from ..log import Signer
    from ..simulate import GameSpec, play_one

    rules, bots, index, seed = job
    spec = GameSpec(rules, bots, index, seed, entropy=secrets.token_bytes)
    # the optimal bot's tables: this process's cache (a forked worker's holds what its parent loaded)
    return play_one(spec, Signer.from_private_bytes(signer_bytes), table_cache.bots())


def cmd_simulate(args) -> int:
    from ..adapters import table_cache
    from ..simulate import summarize

    if "optimal" in args.bots:  # its tables: from the cache, built there if missing
        table_cache.load_table(args.rules)  # before the workers fork, so that they share it

    signer = _load_signer(args.key, args.seed)
    raw = signer.private_bytes()
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"fairdice simulate: --out {out}: {exc.strerror}", file=sys.stderr)
        return 2
    jobs = [(args.rules, args.bots, i, args.seed) for i in range(args.games)]
    worker = partial(_simulate_worker, signer_bytes=raw)
    finals = []
    started = last_report = time.monotonic()
    if args.jobs > 1 and args.games > 1:
        pool = ProcessPoolExecutor(args.jobs)
        results = pool.map(worker, jobs, chunksize=max(1, min(64, args.games // (8 * args.jobs))))
    else:
        pool, results = None, map(worker, jobs)
    try:
        for done, log in enumerate(results, 1):
            (out / f"{log['header']['game_id']}.json").write_text(json.dumps(log, indent=1) + "\n")
            finals.append(log["final"])
            now = time.monotonic()
            if now - last_report >= 1.0 or (done == args.games and now - started >= 1.0):
                print(f"simulate: {done}/{args.games} games, {done / (now - started):.0f} games/s",
                      file=sys.stderr)
                last_report = now
    finally:
        if pool:
            pool.shutdown()
    summary = summarize(args.rules, args.bots, finals)
    summary["seconds"] = round(time.monotonic() - started, 3)
    summary["out"] = str(out)
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['games']} games of {args.rules} in {summary['seconds']} s, logs in {out}/"
              f" ({summary['draws']} draws)")
        print(f"{'seat':>4}  {'bot':<8} {'mean':>8} {'stdev':>7} {'min':>5} {'max':>5} {'wins':>6}")
        for s in summary["seats"]:
            print(f"{s['seat']:>4}  {s['bot']:<8} {s['mean']:>8.2f} {s['stdev']:>7.2f} {s['min']:>5}"
                  f" {s['max']:>5} {s['wins']:>6}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fairdice", description="Provably fair dice games.")
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="play complete bot games and write their signed logs",
                         description="Play N complete games among bots (one seat per bot), write one finished, "
                                     "revealed, signed log per game into DIR, and print a summary.")
    sim.add_argument("--rules", required=True, choices=list(RULESETS))
    sim.add_argument("--bots", required=True, type=_bot_list, help="comma-separated, one seat each: greedy,ev")
    sim.add_argument("--games", required=True, type=positive_int)
    sim.add_argument("--seed", help="public seed: reproducible run, logs marked seed_secret=false")
    sim.add_argument("--out", required=True, help="directory for the logs")
    sim.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    sim.add_argument("--key", help="Ed25519 private key (PEM) to sign with; default: derived from --seed, "
                                   "else a fresh key")
    sim.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1, help="worker processes")
    sim.set_defaults(func=cmd_simulate)

    for name, (_module, help_text) in EXTERNAL_COMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text, add_help=False)
    return parser


# Commands whose module owns its arguments: `configure(parser)` adds them, `run(args) -> int` runs.  A
# module is imported only when its command is chosen, so `fairdice simulate` never loads the server.
EXTERNAL_COMMANDS = {
    "serve": ("api.serve", "run the HTTP API and the game page"),
    "play": ("fairdice.edges.play", "play a game against a bot in the terminal, through the API"),
    "tables": ("fairdice.edges.tables_cli", "build or check the optimal bot's tables"),
    "analyze": ("fairdice.edges.analyze_cli", "value every decision of a finished game's log against optimal play"),
    "keys": ("api.keys_cli", "list the server's signing keys, or rotate to a new one"),
    "admin": ("api.admin", "report the size of the server's store, or prune what has expired"),
}


def _external_parser(name: str) -> argparse.ArgumentParser | None:
    """The parser of one external command with its module's arguments; None (and one line saying why) if a
    package that command needs is missing."""
    import importlib

    module_name, help_text = EXTERNAL_COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith(("fairdice", "api")):
            print(f"fairdice {name}: needs the Python package {exc.name!r}, which is not installed here "
                  f"(pip install -c requirements.lock -e . installs everything)", file=sys.stderr)
            return None
        raise
    parser = argparse.ArgumentParser(prog=f"fairdice {name}", description=help_text)
    module.configure(parser)
    parser.set_defaults(func=module.run, command=name)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in EXTERNAL_COMMANDS:
        parser = _external_parser(argv[0])
        if parser is None:
            return 2
        args = parser.parse_args(argv[1:])
    else:
        args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except FairdiceError as exc:
        print(f"fairdice {args.command}: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
