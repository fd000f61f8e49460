"""Real servers and commands as processes: the settings that turn their limits off (QUIET), a server's address,
a raw exchange over one connection, and `fairdice admin` run as a user runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from support import REPO
from support.api_helpers import ServeProcess


QUIET = {"FAIRDICE_RATE_CREATE": "off", "FAIRDICE_RATE_MOVES_CLIENT": "off", "FAIRDICE_RATE_MOVES_TOKEN": "off",
         "FAIRDICE_MAX_UNFINISHED": "0"}


def address(server: ServeProcess) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def exchange(server, *pieces: bytes, pause: float = 0.3) -> bytes:
    """Send the pieces with a pause between them, then read until the server closes the connection."""
    with socket.create_connection(address(server), timeout=10) as sock:
        for i, piece in enumerate(pieces):
            if i:
                time.sleep(pause)
            sock.sendall(piece)
        return read_to_end(sock)


def read_to_end(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def admin(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fairdice", "admin", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **QUIET, **(env or {})})
