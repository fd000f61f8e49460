"""`fairdice serve`: the API under gunicorn, on embedded defaults.

On first run it creates the data directory (default `./var`, or
`$FAIRDICE_DATA_DIR`) with the SQLite database and a `keys/` directory
holding the Ed25519 signing key and the seed encryption key (files mode
0600).  The master process prepares both before any worker starts, so the
workers never race to create them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from fairdice.edges.argtypes import positive_int

from .config import settings


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is 0..65535 (0: any free port)")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Serve the fairdice HTTP API (OpenAPI document at /openapi.json). "
                          "Every option can also be set by a FAIRDICE_* environment variable.")
    parser.add_argument("--host", help="address to listen on (FAIRDICE_HOST; default 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port (FAIRDICE_PORT; default 8000; 0 picks a free port)")
    parser.add_argument("--data-dir", help="where the database and keys live by default "
                                           "(FAIRDICE_DATA_DIR; default ./var)")
    parser.add_argument("--db", help="a SQLite database file, or a postgresql://user:password@host/db URL that "
                                     "many servers can share (FAIRDICE_DB; default <data dir>/fairdice.sqlite3)")
    parser.add_argument("--key-dir", help="signing and encryption keys (FAIRDICE_KEY_DIR; default <data dir>/keys)")
    parser.add_argument("--workers", type=positive_int, help="worker processes (FAIRDICE_WORKERS; default 2)")
    parser.add_argument("--threads", type=positive_int, help="threads per worker (FAIRDICE_THREADS; default 4)")
    parser.add_argument("--access-log", action="store_true", help="log every request to standard error")
    parser.add_argument("--tables", choices=["background", "build", "lazy"],
                        help="the optimal engine's tables (FAIRDICE_TABLES; default background): build missing "
                             "ones in the background while serving (what needs them answers 503 until then), "
                             "build them before serving, or only when first needed")
    parser.add_argument("--build-tables", dest="tables", action="store_const", const="build",
                        help="the same as --tables build")


def gunicorn_app(conf, access_log: bool = False, on_ready=None):
    """A gunicorn application (BaseApplication) serving `create_app` with these settings."""
    from gunicorn.app.base import BaseApplication

    host = f"[{conf.host}]" if ":" in conf.host and not conf.host.startswith("[") else conf.host

    def when_ready(server):
        urls = [str(listener) for listener in server.LISTENERS]
        if on_ready:
            on_ready(urls)

    options = {
        "bind": [f"{host}:{conf.port}"],
        "workers": conf.workers,
        "worker_class": "gthread",
        "threads": conf.threads,
        "accesslog": "-" if access_log else None,
        "errorlog": "-",
        "loglevel": "warning",
        "proc_name": "fairdice",
        "timeout": 60,
        "graceful_timeout": 10,
        "keepalive": 5,
        "when_ready": when_ready,
        # gunicorn's control socket (~/.gunicorn/gunicorn.ctl by default) is not used: the service writes
        # only into its data and key directories
        "control_socket_disable": True,
    }

    class FairdiceServer(BaseApplication):
        def load_config(self):
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self):
            from .app import create_app

            return create_app(conf.as_config())

    return FairdiceServer()


def prepare_bots(mode: str, say) -> None:
    """Load the optimal engine's cached tables in the master, so that every worker shares them (fork,
    copy-on-write) and no request pays for reading them; missing ones are built first ("build"), by a
    background process while serving ("background"), or by the first request that needs one ("lazy").
    Until a table exists, games and hints that need it are answered 503 with Retry-After (api.engines)."""
    try:
        from fairdice.edges import table_cache
    except ImportError:
        return
    from fairdice.rules import RULESETS

    missing = []
    for rules_id in RULESETS:
        try:
            if table_cache.table_ready(rules_id):
                continue
            if mode == "build":
                say(f"fairdice: building the optimal engine's {rules_id} table (once per machine)...")
                table_cache.build_table(rules_id)
                continue
        except Exception as exc:  # a broken table must not stop the server; the bot reports it when used
            say(f"fairdice: warning: optimal engine table for {rules_id}: {exc}")
        missing.append(rules_id)
    if missing and mode == "background":
        subprocess.Popen([sys.executable, "-m", "fairdice", "tables", "build", *(f"--rules={r}" for r in missing)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=False)
        say(f"fairdice: building the optimal engine's tables for {', '.join(missing)} in the background (once per "
            f"machine, about a minute); until then the optimal bot and hints for them answer 503")
    elif missing:
        say(f"fairdice: the optimal engine's tables for {', '.join(missing)} are not built; the first game or "
            f"hint that needs one starts building it (`fairdice tables build` builds them beforehand)")


def run(args) -> int:
    from .keys import KeyRing
    from .store import describe_db, open_store

    try:
        conf = settings({"host": args.host, "port": args.port, "data_dir": args.data_dir, "db": args.db,
                         "key_dir": args.key_dir, "workers": args.workers, "threads": args.threads})
    except ValueError as exc:
        print(f"fairdice serve: {exc}", file=sys.stderr)
        return 2
    try:
        keys = KeyRing(conf.key_dir)
        open_store(conf).close()  # creates the schema before any worker starts
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"fairdice serve: cannot prepare storage: {exc}", file=sys.stderr)
        return 2

    mode = args.tables or os.environ.get("FAIRDICE_TABLES") or "background"
    if mode not in ("background", "build", "lazy"):
        print(f"fairdice serve: FAIRDICE_TABLES must be background, build or lazy, not {mode!r}", file=sys.stderr)
        return 2
    prepare_bots(mode, lambda text: print(text, file=sys.stderr, flush=True))

    def ready(urls):
        for url in urls:
            print(f"fairdice: serving at {url}  (game page /, API /v1, OpenAPI /openapi.json)", flush=True)
        print(f"fairdice: database {describe_db(conf.db)}, keys {conf.key_dir} (key id {keys.key_id}), "
              f"{conf.workers} workers x {conf.threads} threads", flush=True)

    try:
        gunicorn_app(conf, args.access_log, ready).run()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    return 0
