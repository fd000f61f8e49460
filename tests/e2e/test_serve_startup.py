"""`fairdice serve` that cannot start (issue 14, part 4): every failure before serving is one clear line on
standard error and exit status 2, never a traceback, whatever the operator got wrong: settings, the
database (garbage, a directory, unreachable, read-only), the data directory, the keys, the port.  And a database
that is missing or holds no games while the keys are those of a service that stored games (issue 21: the key
directory's `games-stored`, written with the first game): refused unless told to start afresh (--fresh,
FAIRDICE_FRESH=1)."""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from support.api_helpers import REPO, ServeProcess
from support.serve import QUIET

pytestmark = pytest.mark.e2e

PR_CAPBSET_DROP = 24
CAPS_THAT_IGNORE_PERMISSIONS = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def serve(data_dir: Path, *args: str, env: dict | None = None, as_owner_only: bool = False,
          wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    """`fairdice serve` on a free port, expected to give up at once.  `as_owner_only`: without the
    capabilities that let root write where file permissions forbid it (so that mode 0500 means read-only
    for root as for anyone)."""
    command = [*(wrap or []), sys.executable, "-m", "fairdice", "serve", "--host", "127.0.0.1", "--port", "0",
               "--data-dir", str(data_dir), *args]
    return subprocess.run(command, cwd=REPO, env={**os.environ, **QUIET, **(env or {})}, capture_output=True,
                          text=True, timeout=60, preexec_fn=drop_permission_overrides if as_owner_only else None)


def drop_permission_overrides() -> None:
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in CAPS_THAT_IGNORE_PERMISSIONS:
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def refused(result: subprocess.CompletedProcess) -> str:
    """The one line a refused start printed (and checks that it is one line, exit 2, no traceback)."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "serving at" not in result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fairdice serve: ")
    return lines[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def a_game_in(data_dir: Path, config: dict | None = None) -> None:
    """A store with one unfinished game, made by the app itself (`config`: more settings)."""
    from api import create_app

    app = create_app({"FAIRDICE_DATA_DIR": str(data_dir), **QUIET, **(config or {})})
    answer = app.test_client().post("/v1/games", json={"rules": "yacht", "seats": [{"type": "human", "name": "a"}]})
    assert answer.status_code == 201
    app.extensions["fairdice"].store.close()


@pytest.mark.parametrize("variable, value, named", [
    ("FAIRDICE_READ_TIMEOUT", "0", "FAIRDICE_READ_TIMEOUT"),
    ("FAIRDICE_WORKERS", "many", "FAIRDICE_WORKERS"),
    ("FAIRDICE_RATE_CREATE", "lots", "FAIRDICE_RATE_CREATE"),
    ("FAIRDICE_TABLES", "sometimes", "FAIRDICE_TABLES"),
])
def test_bad_settings(tmp_path, variable, value, named):
    line = refused(serve(tmp_path, env={variable: value}))
    assert named in line and value in line.rsplit(" ", 1)[-1]


def test_a_database_file_of_garbage(tmp_path):
    (tmp_path / "fairdice.sqlite3").write_bytes(bytes(range(256)) * 40)
    line = refused(serve(tmp_path))
    assert str(tmp_path / "fairdice.sqlite3") in line and "not a database" in line


def test_a_database_path_that_is_a_directory(tmp_path):
    (tmp_path / "db").mkdir()
    line = refused(serve(tmp_path, "--db", str(tmp_path / "db")))
    assert str(tmp_path / "db") in line and "is a directory" in line


def test_a_data_directory_that_is_a_file(tmp_path):
    (tmp_path / "var").write_text("")
    line = refused(serve(tmp_path / "var"))
    assert str(tmp_path / "var") in line and "not a directory" in line


def test_a_data_directory_without_write_permission(tmp_path):
    data = tmp_path / "var"
    data.mkdir(mode=0o500)
    try:
        line = refused(serve(data, as_owner_only=True))
    finally:
        data.chmod(0o700)
    assert str(data) in line and "not writable (Permission denied)" in line


def test_a_database_file_without_write_permission(tmp_path):
    from api.store import SQLiteStore

    SQLiteStore(tmp_path / "fairdice.sqlite3").close()
    (tmp_path / "fairdice.sqlite3").chmod(0o400)
    line = refused(serve(tmp_path, as_owner_only=True))
    assert str(tmp_path / "fairdice.sqlite3") in line and "read-only" in line


def test_a_data_directory_on_a_read_only_file_system(tmp_path):
    """A tmpfs mounted read-only in a mount namespace of the server's own (needs root, or user namespaces)."""
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare or "unshare", "--mount", "--map-root-user", "true"], capture_output=True)
    if unshare is None or probe.returncode != 0:
        pytest.skip("cannot make a mount namespace here (unshare --mount --map-root-user)")
    data = tmp_path / "ro"
    data.mkdir()
    script = f'mount -t tmpfs -o ro tmpfs "{data}" && exec "$0" "$@"'
    line = refused(serve(data, wrap=[unshare, "--mount", "--map-root-user", "sh", "-c", script]))
    assert str(data) in line and "Read-only file system" in line


@pytest.mark.parametrize("lost, named", [("signing-ed25519.pem", "signing-ed25519.pem"),
                                         ("seed-encryption.key", "seed-encryption.key")])
def test_a_missing_key_with_games_that_need_it(tmp_path, lost, named):
    a_game_in(tmp_path)
    (tmp_path / "keys" / lost).unlink()
    line = refused(serve(tmp_path))
    assert str(tmp_path / "keys" / named) in line and "missing" in line
    assert not (tmp_path / "keys" / lost).exists(), "a key the games need was silently replaced"


# --- a database lost beside the keys of a service that stored games ------------------------------------------

def test_a_missing_database_beside_keys_that_stored_games_is_refused(tmp_path):
    a_game_in(tmp_path)
    assert (tmp_path / "keys" / "games-stored").exists()  # written with the first game
    for path in tmp_path.glob("fairdice.sqlite3*"):
        path.unlink()
    line = refused(serve(tmp_path))
    assert str(tmp_path / "fairdice.sqlite3") in line and "is missing" in line and str(tmp_path / "keys") in line
    assert "--fresh" in line and "FAIRDICE_FRESH=1" in line
    assert not (tmp_path / "fairdice.sqlite3").exists(), "an empty database was made in its place"


def test_a_database_without_games_beside_keys_that_stored_games_is_refused(tmp_path):
    from api.store import SQLiteStore

    a_game_in(tmp_path)
    for path in tmp_path.glob("fairdice.sqlite3*"):
        path.unlink()
    SQLiteStore(tmp_path / "fairdice.sqlite3").close()  # a new, empty one (as a server before this check made)
    line = refused(serve(tmp_path))
    assert str(tmp_path / "fairdice.sqlite3") in line and "holds no games" in line and "--fresh" in line


@pytest.mark.parametrize("fresh", [["--fresh"], {"FAIRDICE_FRESH": "1"}], ids=["option", "environment"])
def test_told_to_start_afresh_it_starts_and_forgets_the_games(tmp_path, fresh):
    a_game_in(tmp_path)
    for path in tmp_path.glob("fairdice.sqlite3*"):
        path.unlink()
    args, env = (fresh, {}) if isinstance(fresh, list) else ([], fresh)
    server = ServeProcess(tmp_path, workers=1, threads=1, args=args, extra_env={**QUIET, **env}).start()
    server.stop()
    assert not (tmp_path / "keys" / "games-stored").exists()
    restarted = ServeProcess(tmp_path, workers=1, threads=1, extra_env=QUIET).start()  # a new service now
    restarted.stop()


def test_fresh_from_the_environment_is_yes_or_no(tmp_path):
    line = refused(serve(tmp_path, env={"FAIRDICE_FRESH": "perhaps"}))
    assert "FAIRDICE_FRESH" in line and "perhaps" in line


def test_keys_of_a_service_that_stored_no_game_start_a_new_database(tmp_path):
    from api.config import settings
    from api.serve import prepare_storage

    conf = settings({"data_dir": str(tmp_path)}, environ=QUIET)
    prepare_storage(conf)  # the keys are made, no game stored
    (tmp_path / "fairdice.sqlite3").unlink()
    assert prepare_storage(conf).key_id
    assert not (tmp_path / "keys" / "games-stored").exists()


def test_a_service_that_stored_games_before_the_marker_gets_it_at_start(tmp_path):
    from api.config import settings
    from api.serve import prepare_storage

    a_game_in(tmp_path)
    (tmp_path / "keys" / "games-stored").unlink()
    prepare_storage(settings({"data_dir": str(tmp_path)}, environ=QUIET))
    assert (tmp_path / "keys" / "games-stored").exists()
    assert oct((tmp_path / "keys" / "games-stored").stat().st_mode & 0o777) == "0o600"


def test_a_postgres_database_without_games_beside_keys_that_stored_games_is_refused(tmp_path, postgres_url):
    from support.stores import PostgresBackend

    stored, empty = PostgresBackend(postgres_url), PostgresBackend(postgres_url)
    try:
        a_game_in(tmp_path, {"FAIRDICE_DB": stored.url})
        line = refused(serve(tmp_path, "--db", empty.url))  # another (empty) database, the same keys
        assert "holds no games" in line and "--fresh" in line and postgres_url.split("@")[0] not in line
    finally:
        stored.close()
        empty.close()


def test_a_port_in_use(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "fairdice", "serve", "--host", "127.0.0.1", "--port",
                                 str(port), "--data-dir", str(tmp_path)], cwd=REPO, capture_output=True,
                                text=True, timeout=60, env={**os.environ, **QUIET})
    line = refused(result)
    assert f"127.0.0.1:{port}" in line and "in use" in line


def test_an_unreachable_postgresql_server(tmp_path):
    url = f"postgresql://fairdice:hunter2@127.0.0.1:{free_port()}/fairdice"
    line = refused(serve(tmp_path, "--db", url))
    assert "PostgreSQL" in line and "cannot be reached" in line
    assert "hunter2" not in line  # the password never reaches a log


def test_a_good_start_still_serves(tmp_path):
    """(The checks above must not refuse a fresh data directory.)"""
    server = ServeProcess(tmp_path / "fresh", workers=1, threads=1, extra_env=QUIET).start()  # (/healthz 200)
    server.stop()
    assert oct((tmp_path / "fresh").stat().st_mode & 0o777) == "0o700"
