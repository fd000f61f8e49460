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


def pytest_unconfigure(config):
    if _RUN_DIR is not None:
        shutil.rmtree(_RUN_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def optimal_table():
    """`optimal_table(rules_id)`: that rule set's optimal table, built once per run into the run's cache (yacht
    in seconds, yatzy in about half a minute), as a server that has warmed up has it."""
    from fairdice.bots import optimal

    def build(rules_id: str):
        optimal.build_table(rules_id)
        return optimal.load_table(rules_id)

    return build


@pytest.fixture
def app(tmp_path):
    """The Flask app on its embedded defaults, with its database and keys in the test's temporary directory."""
    from api import create_app
    return create_app({"FAIRDICE_DATA_DIR": str(tmp_path)})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """A real HTTP server on a loopback port (the app in a thread of this process): its base URL."""
    from api import create_app
    from test_api_helpers import app_server
    app = create_app({"FAIRDICE_DATA_DIR": str(tmp_path_factory.mktemp("app-server"))})
    with app_server(app) as base:
        yield base


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`fairdice serve` as a real process group on a free loopback port (3 workers of 4 threads)."""
    from test_api_helpers import ServeProcess
    proc = ServeProcess(tmp_path_factory.mktemp("serve"), workers=3, threads=4).start()
    yield proc
    proc.stop()
