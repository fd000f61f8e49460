"""A throwaway PostgreSQL server for the API benchmarks, started the way the tests start theirs
(tests/conftest.py `postgres_url`): Debian's server package (/usr/lib/postgresql/N/bin), a fresh cluster in a
temporary directory, password authentication, a free loopback port, its socket in that directory, run as the
`postgres` user when this runs as root (PostgreSQL refuses root).  Unlike the tests' server it keeps fsync on:
the figures are those of a database that survives a power cut.

    with temporary_postgres() as pg:
        pg.url          # postgresql://postgres:...@127.0.0.1:PORT/postgres
        pg.cpu_seconds()  # CPU time of the postmaster and every backend so far
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from procstat import process_times, seconds


@dataclass
class Postgres:
    url: str
    data: Path

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def cpu_seconds(self) -> float:
        """User + system CPU time of the postmaster and all its descendants alive now (backends come and go
        with connections; the servers' pools keep theirs open for the whole run)."""
        times = process_times()
        children: dict[int, list[int]] = {}
        for pid, proc in times.items():
            children.setdefault(proc.parent, []).append(pid)
        total, todo = 0, [self.postmaster_pid()]
        while todo:
            pid = todo.pop()
            total += times[pid].ticks if pid in times else 0
            todo += children.get(pid, [])
        return seconds(total)


@contextlib.contextmanager
def temporary_postgres(max_connections: int = 200) -> Iterator[Postgres]:
    initdbs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not initdbs:
        raise SystemExit("bench: no PostgreSQL server installed (apt-get install postgresql-15)")
    bindir = Path(initdbs[-1]).parent
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="fairdice-bench-pg-"))
    if as_postgres:
        shutil.chown(home, "postgres", "postgres")
    password = secrets.token_hex(16)
    pwfile = home / "pwfile"
    pwfile.write_text(password)
    pwfile.chmod(0o600)
    if as_postgres:
        shutil.chown(pwfile, "postgres", "postgres")
    data = home / "data"

    def run(*cmd):
        subprocess.run([*as_postgres, *cmd], check=True, capture_output=True, text=True, timeout=120, cwd=home)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={home} "
               f"-c max_connections={max_connections}")
    try:
        try:
            run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--pwfile", str(pwfile),
                "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C")
            run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(home / "server.log"), "-o", options, "-w",
                "-t", "60", "start")
        except subprocess.CalledProcessError as exc:
            log = home / "server.log"
            raise SystemExit(f"bench: PostgreSQL did not start: {exc.stderr}"
                             f"{log.read_text() if log.exists() else ''}") from None
        yield Postgres(f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres", data)
    finally:
        subprocess.run([*as_postgres, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                       capture_output=True, timeout=60, cwd=home)
        shutil.rmtree(home, ignore_errors=True)
