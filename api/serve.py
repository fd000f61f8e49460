"""`fairdice serve`: the API under gunicorn, on embedded defaults.

On first run it creates the data directory (default `./var`, or
`$FAIRDICE_DATA_DIR`) with the SQLite database and a `keys/` directory
holding the Ed25519 signing key and the seed encryption key (files mode
0600).  The master process prepares both before any worker starts, so the
workers never race to create them, and checks everything an operator can get
wrong (settings, database, keys, port) first: a failure is one line on
standard error and exit status 2, never a traceback.

Requests are served by api.worker's `BufferedThreadWorker`: gunicorn's gthread
worker, except that the event loop reads each request whole (headers and
body, within `read_timeout` seconds) before a thread serves it, so a slow or
silent client holds a socket and a buffer, never a thread.  Every worker also runs the data
upkeep of api.lifecycle (timed-out games, expired records, the WAL).

Why gunicorn (issue 21, measured by bench/bench_api_granian.py on the same app): granian 2.8 spends less CPU
per request (0.4x gunicorn's on `/livez`, 0.7x on a game request), but it cannot keep what the operations tests
hold the server to: its own refusals are empty bodies, not problem documents; it refuses 100 header fields (the
README promises 1000) and takes a 70 KB head (the README's limit is 64 KiB); a dozen clients sending a body
slowly stop it (its threads wait for the bodies); a head that never ends is dropped silently after 30 s, not
answered 408.  `--refusals` there shows each case.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from gunicorn.app.base import BaseApplication

from fairdice.adapters.argtypes import positive_int

from .config import settings
from .errors import ServiceError
from .worker import PARSER_LIMITS, WORKER_CONNECTIONS, BufferedThreadWorker

def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is 0..65535 (0: any free port)")
    return value


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """--data-dir and --db, as `fairdice serve` and `fairdice admin` take them."""
    parser.add_argument("--data-dir", help="where the database and keys live by default "
                                           "(FAIRDICE_DATA_DIR; default ./var)")
    parser.add_argument("--db", help="a SQLite database file, or a postgresql://user:password@host/db URL that "
                                     "many servers can share (FAIRDICE_DB; default <data dir>/fairdice.sqlite3)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Serve the fairdice HTTP API (OpenAPI document at /openapi.json). "
                          "Every option can also be set by a FAIRDICE_* environment variable.")
    parser.add_argument("--host", help="address to listen on (FAIRDICE_HOST; default 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port (FAIRDICE_PORT; default 8000; 0 picks a free port)")
    add_store_options(parser)
    parser.add_argument("--key-dir", help="signing and encryption keys (FAIRDICE_KEY_DIR; default <data dir>/keys)")
    parser.add_argument("--workers", type=positive_int, help="worker processes (FAIRDICE_WORKERS; default 2)")
    parser.add_argument("--threads", type=positive_int, help="threads per worker (FAIRDICE_THREADS; default 8)")
    parser.add_argument("--access-log", action="store_true",
                        help="log every request to standard error (no token, Idempotency-Key, URL fragment or query "
                             "value other than a number; lines are dropped, not waited for, while nobody reads)")
    parser.add_argument("--tables", choices=["background", "build", "lazy"],
                        help="the optimal engine's tables (FAIRDICE_TABLES; default background): build missing "
                             "ones in the background while serving (what needs them answers 503 until then), "
                             "build them before serving, or only when first needed")
    parser.add_argument("--build-tables", dest="tables", action="store_const", const="build",
                        help="the same as --tables build")
    parser.add_argument("--fresh", action="store_true",
                        help="start even though the database is missing or holds no games while the keys are those "
                             "of a service that stored games (FAIRDICE_FRESH=1): its games are then lost for good")


# --- start-up: everything an operator can get wrong, checked before serving -----------------------

class StartupError(ServiceError):
    """Why `fairdice serve` cannot start, in one line for the operator."""


def one_line(text: object) -> str:
    """An error message on one line (database drivers write several)."""
    return " ".join(str(text).split())


def _writable_directory(path: Path, what: str) -> None:
    """Make `path` (0700) if missing, and make sure files can be created in it."""
    if path.exists() and not path.is_dir():
        raise StartupError(f"the {what} {path} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".fairdice-write-test-")
    except OSError as exc:
        raise StartupError(f"the {what} {path} is not writable ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def _check_database_path(conf) -> None:
    """A SQLite database must be a file in a directory the server can write (its -wal, -shm and lock files)."""
    from .store import is_postgres_url

    if is_postgres_url(conf.db):
        return
    db = Path(conf.db)
    if db.is_dir():
        raise StartupError(f"the database {db} is a directory: --db (FAIRDICE_DB) names the SQLite file, "
                           f"or a postgresql:// URL")
    if db.exists() and not db.is_file():
        raise StartupError(f"the database {db} is not a regular file")
    _writable_directory(db.parent, "data directory" if db.parent == Path(conf.data_dir) else "database directory")


UNAVAILABLE_AT_START = {"disk_full": "its disk is full", "read_only": "it is read-only",
                        "io_error": "its disk fails to read or write", "database_corrupt": "it is corrupt",
                        "database_missing": "it has vanished", "database_replaced": "it was replaced",
                        "unreachable": "it cannot be reached"}


def database_error(conf, exc: Exception) -> StartupError:
    """An error opening or probing the database as one line that names it (its password hidden)."""
    from .store import UnavailableError, describe_db, is_postgres_url, redacted

    named = describe_db(conf.db)
    own_name = f"{redacted(conf.db) if is_postgres_url(conf.db) else conf.db}: "  # how store errors begin
    if isinstance(exc, UnavailableError):
        detail = one_line(exc.detail).removeprefix(own_name)
        return StartupError(f"the database {named} cannot be used: {UNAVAILABLE_AT_START[exc.reason]} ({detail})")
    text = one_line(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc).removeprefix(own_name)
    if "file is not a database" in text:
        text += " (corrupt, or not a fairdice database: restore it from a backup, or move it away)"
    return StartupError(f"cannot open the database {named}: {text}")


def prepare_storage(conf, fresh: bool = False):
    """Open the database (creating its schema, so that no worker races to), probe it, and open the key ring
    as `open_keyring` allows; the keys.  A database that is missing or holds no games while the key directory's
    games marker says this service stored some was lost, not new: refused unless `fresh` (then the marker
    goes).  StartupError says what is wrong."""
    from .keys import KeyFileError, open_keyring
    from .store import StoreError, games_marker, is_postgres_url, open_store

    _check_database_path(conf)
    marker = games_marker(conf)
    if not fresh and marker.exists() and not is_postgres_url(conf.db) and not Path(conf.db).exists():
        raise lost_database(conf, marker, "is missing")  # (before opening it would make a new, empty one)
    try:
        store = open_store(conf)
    except (StoreError, sqlite3.Error, OSError, ValueError) as exc:
        raise database_error(conf, exc) from None
    try:
        store.health()
        stored = bool(store.key_ids())
        if not stored and not fresh and marker.exists():
            raise lost_database(conf, marker, "holds no games")
        keys = open_keyring(conf, store)
        if stored:
            marker.mark(str(store))  # (a service that stored games before the marker existed)
        else:
            marker.remove()
        return keys
    except KeyFileError as exc:
        raise StartupError(one_line(exc)) from None
    except (StoreError, sqlite3.Error) as exc:
        raise database_error(conf, exc) from None
    except OSError as exc:
        raise StartupError(f"cannot read or create the keys in {conf.key_dir}: {exc.strerror or exc}"
                           f"{f' ({exc.filename})' if exc.filename else ''}") from None
    finally:
        store.close()


def lost_database(conf, marker, state: str) -> StartupError:
    from .store import describe_db

    return StartupError(f"the database {describe_db(conf.db)} {state}, but the keys in {conf.key_dir} are those "
                        f"of a service that has stored games ({marker.path.name} there says so): restore the "
                        f"database from a backup, or start afresh with --fresh (FAIRDICE_FRESH=1), its games lost")


def fresh_start(args, environ=os.environ) -> bool:
    """--fresh, or FAIRDICE_FRESH=1."""
    value = environ.get("FAIRDICE_FRESH", "").strip().lower()
    if value not in ("", "0", "1", "true", "false", "yes", "no"):
        raise StartupError(f"FAIRDICE_FRESH must be 1 or 0, not {environ['FAIRDICE_FRESH']!r}")
    return bool(args.fresh) or value in ("1", "true", "yes")


def bind_listener(host: str, port: int) -> socket.socket:
    """The listening socket, bound here so that a port in use is one clear line (gunicorn would retry for
    five seconds and log each try); gunicorn takes it over by its descriptor."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                            flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        hint = {errno.EADDRINUSE: " (another server is listening there: stop it, or choose another --port)",
                errno.EACCES: " (ports below 1024 need privileges)",
                errno.EADDRNOTAVAIL: " (not an address of this machine)"}.get(exc.errno, "")
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}{hint}") from None
    return sock


def run(args) -> int:
    from .store import describe_db

    try:
        conf = settings({"host": args.host, "port": args.port, "data_dir": args.data_dir, "db": args.db,
                         "key_dir": args.key_dir, "workers": args.workers, "threads": args.threads})
        mode = args.tables or os.environ.get("FAIRDICE_TABLES") or "background"
        if mode not in ("background", "build", "lazy"):
            raise StartupError(f"FAIRDICE_TABLES must be background, build or lazy, not {mode!r}")
        keys = prepare_storage(conf, fresh=fresh_start(args))
        listener = bind_listener(conf.host, conf.port)
    except (StartupError, ValueError) as exc:
        print(f"fairdice serve: {exc}", file=sys.stderr)
        return 2
    prepare_bots(mode, lambda text: print(text, file=sys.stderr, flush=True))

    def ready(urls):
        for url in urls:
            print(f"fairdice: serving at {url}  (game page /, API /v1, OpenAPI /openapi.json)", flush=True)
        print(f"fairdice: database {describe_db(conf.db)}, keys {conf.key_dir} (key id {keys.key_id}), "
              f"{conf.workers} workers x {conf.threads} threads", flush=True)

    try:
        gunicorn_app(conf, args.access_log, ready, listener=listener.detach()).run()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    return 0


# --- gunicorn ---------------------------------------------------------------------------------

def gunicorn_app(conf, access_log: bool = False, on_ready=None, listener: int | None = None):
    """A gunicorn application (BaseApplication) serving `create_app` with these settings, on `listener` (a
    bound socket's descriptor, which gunicorn then owns) or else on conf.host:conf.port."""
    from .lifecycle import Maintenance
    from .logs import ServerLog

    host = f"[{conf.host}]" if ":" in conf.host and not conf.host.startswith("[") else conf.host

    def when_ready(server):
        urls = [str(sock) for sock in server.LISTENERS]
        if on_ready:
            on_ready(urls)

    def post_worker_init(worker):
        """Each worker keeps the store tidy (api.lifecycle); the jitter spreads the workers' rounds."""
        games = worker.wsgi.extensions["fairdice"]
        worker.fairdice_maintenance = Maintenance(games, games.store, conf)
        worker.fairdice_maintenance.start()

    def worker_exit(server, worker):
        maintenance = getattr(worker, "fairdice_maintenance", None)
        if maintenance is not None:
            maintenance.stop()

    options = {
        "bind": [f"fd://{listener}" if listener is not None else f"{host}:{conf.port}"],
        "workers": conf.workers,
        "worker_class": BufferedThreadWorker,
        "threads": conf.threads,
        "worker_connections": WORKER_CONNECTIONS,
        "accesslog": "-" if access_log else None,
        "errorlog": "-",
        "logger_class": ServerLog,  # both logs on standard error, never blocking, access lines redacted
        **PARSER_LIMITS,
        "loglevel": "warning",
        "proc_name": "fairdice",
        "timeout": 60,
        "graceful_timeout": 10,
        "keepalive": 5,
        "when_ready": when_ready,
        "post_worker_init": post_worker_init,
        "worker_exit": worker_exit,
        # gunicorn's control socket (~/.gunicorn/gunicorn.ctl by default) is not used: the service writes
        # only into its data and key directories
        "control_socket_disable": True,
    }

    class FairdiceServer(BaseApplication):
        fairdice_settings = conf  # what BufferedThreadWorker reads its read timeout from

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
        from fairdice.adapters import table_cache
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


# --- the worker: the event loop reads requests whole, threads serve them ---------------------------
