"""Shared test settings and fixtures: the run's own table cache, the app, its test client, real servers.

Nothing a test does may write outside its temporary directories: the optimal engine's table cache and the
user data directory (`fairdice play` keeps receipts there) are fresh directories per run, set before any test
module imports fairdice, so the user's `~/.cache/fairdice` and `~/.local/share` are never read or written.  `FAIRDICE_TEST_CACHE=DIR` reuses one directory across runs (quicker for everyday work)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Fixtures that tests of several folders ask for, registered once (tests/support/, importable as `support`
# through pyproject.toml's `pythonpath`): the stores' `backend`, `store` and `database_url`, the disks' `loop_disk`.
pytest_plugins = ["support.stores", "support.disks"]

_RUN_DIR: Path | None = None


def pytest_configure(config):
    global _RUN_DIR
    _RUN_DIR = Path(tempfile.mkdtemp(prefix="fairdice-test-run-"))
    os.environ["FAIRDICE_CACHE_DIR"] = os.environ.get("FAIRDICE_TEST_CACHE") or str(_RUN_DIR / "cache")
    os.environ["XDG_DATA_HOME"] = str(_RUN_DIR / "data")  # where `fairdice play` keeps receipts by default
    # Servers the tests start build no optimal table in the background (that would load both cores while other
    # tests measure things): a test that needs a table asks for it (`optimal_table`), or the server builds it
    # when a request first needs it.
    os.environ["FAIRDICE_TABLES"] = "lazy"
    # No rate limit and no quota for any app or server a test makes, unless the test asks for them
    # (tests/unit/test_api_limits.py): the suite creates many games from one address, quickly.
    from support.api_helpers import LIMITS_OFF
    os.environ.update(LIMITS_OFF)


def pytest_unconfigure(config):
    if _RUN_DIR is not None:
        shutil.rmtree(_RUN_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def optimal_table():
    """`optimal_table(rules_id)`: that rule set's optimal table (a SolvedTable), built once per run into the
    run's cache (yacht in a second or two, yatzy in several), as a server that has warmed up has it.  The
    core is handed that cache where it plays or values with the optimal engine (`table_cache.bots()`,
    `table_cache.source()`)."""
    from fairdice.adapters import table_cache

    def build(rules_id: str):
        table_cache.build_table(rules_id)
        return table_cache.load_table(rules_id)

    return build


@pytest.fixture
def app(tmp_path):
    """The Flask app on its embedded defaults, with its database and keys in the test's temporary directory."""
    from api import create_app
    return create_app({"FAIRDICE_DATA_DIR": str(tmp_path)})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def make_app(tmp_path):
    """`make_app(config, store=None)`: an app on this test's data directory with these `FAIRDICE_*` settings
    on top (rate limits and quota turned on, say); apps made twice share the database and keys."""
    from api import create_app

    def make(config: dict | None = None, store=None):
        return create_app({"FAIRDICE_DATA_DIR": str(tmp_path), **(config or {})}, store)

    return make


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """A real HTTP server on a loopback port (the app in a thread of this process): its base URL."""
    from api import create_app
    from support.api_helpers import app_server
    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path_factory.mktemp("app-server"))})
    with app_server(app) as base:
        yield base


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`fairdice serve` as a real process group on a free loopback port (3 workers of 4 threads)."""
    from support.api_helpers import ServeProcess
    proc = ServeProcess(tmp_path_factory.mktemp("serve"), workers=3, threads=4).start()
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def postgres_url():
    """A PostgreSQL server of this run's own: Debian's server package (/usr/lib/postgresql/N/bin), a fresh
    cluster in a temporary directory, password authentication, listening on a free loopback port only (its
    unix socket in that directory), stopped and removed at the end.  PostgreSQL refuses to run as root, so
    as root it runs as the `postgres` user.  fsync is off: it is a test server.  Yields the URL of its
    `postgres` database (tests make their own schema or database in it).  No server installed: the test
    is skipped, except in CI (`CI=true` or `FAIRDICE_REQUIRE_POSTGRES`), where it fails."""
    import glob
    import secrets
    import socket
    import subprocess

    initdbs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not initdbs:
        required = os.environ.get("CI") == "true" or os.environ.get("FAIRDICE_REQUIRE_POSTGRES")
        (pytest.fail if required else pytest.skip)("no PostgreSQL server (apt-get install postgresql-15)")
    bindir = Path(initdbs[-1]).parent
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="fairdice-pg-"))  # not under pytest's 0700 base: postgres must enter
    if as_postgres:
        shutil.chown(home, "postgres", "postgres")
    password = secrets.token_hex(16)
    (home / "pwfile").write_text(password)
    (home / "pwfile").chmod(0o600)
    if as_postgres:
        shutil.chown(home / "pwfile", "postgres", "postgres")
    data = str(home / "data")

    def run(*cmd):
        subprocess.run([*as_postgres, *cmd], check=True, capture_output=True, text=True, timeout=120, cwd=home)

    with socket.socket() as probe:  # a free port (PostgreSQL cannot pick one itself)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={home} -c fsync=off"
    try:
        try:
            run(str(bindir / "initdb"), "-D", data, "-U", "postgres", "--pwfile", str(home / "pwfile"),
                "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C", "--no-sync")
            run(str(bindir / "pg_ctl"), "-D", data, "-l", str(home / "server.log"), "-o", options, "-w", "-t", "60",
                "start")
        except subprocess.CalledProcessError as exc:
            log = home / "server.log"
            pytest.fail(f"PostgreSQL did not start: {exc.stderr}{log.read_text() if log.exists() else ''}")
        yield f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_postgres, str(bindir / "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"],
                       capture_output=True, timeout=60, cwd=home)
        shutil.rmtree(home, ignore_errors=True)
