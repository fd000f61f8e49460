"""Turns reach a watching player through real servers (`fairdice serve` on loopback), whichever process
stored them: on SQLite a move made through one worker wakes a watcher parked in the other (the workers are
told apart by the socket each holds, from /proc); on PostgreSQL a move made through server A wakes a watcher
parked on server B (LISTEN/NOTIFY).
"""

from __future__ import annotations

import http.client
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from support.api_helpers import ServeProcess

pytestmark = pytest.mark.e2e

DELIVERY_BOUND = 2.0  # seconds from a move's answer to the watcher's
GAME = {"rules": "yacht", "seats": [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]}


class Connection:
    """One keep-alive connection to a server: every request on it is served by the same worker."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.port = parts.port
        self.http = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)

    def call(self, method: str, path: str, body=None, token: str | None = None) -> tuple[int, dict | None, dict]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        resp = self.http.getresponse()
        payload = resp.read()
        return resp.status, json.loads(payload) if payload else None, dict(resp.getheaders())

    def close(self) -> None:
        self.http.close()

    def worker(self, server: ServeProcess) -> int:
        """The pid of the server's worker that holds this connection's other end."""
        inodes = self._server_side_inodes()
        for pid in _children(server.proc.pid):
            try:
                links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            except OSError:
                continue
            if any(f"socket:[{inode}]" in links for inode in inodes):
                return pid
        raise AssertionError("no worker holds this connection")

    def _server_side_inodes(self) -> set[str]:
        mine = self.http.sock.getsockname()[1]
        found = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table) as fh:
                for line in fh.readlines()[1:]:
                    fields = line.split()
                    local, remote = (int(address.rsplit(":", 1)[1], 16) for address in fields[1:3])
                    if local == self.port and remote == mine:
                        found.add(fields[9])
        return found


def _children(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except OSError:
                continue
    return found


def one_connection_per_worker(server: ServeProcess, workers: int) -> dict[int, Connection]:
    """New connections until every worker holds one (the workers race to accept each)."""
    held: dict[int, Connection] = {}
    for _ in range(200):
        conn = Connection(server.url)
        assert conn.call("GET", "/livez")[0] == 200
        pid = conn.worker(server)
        if pid in held:
            conn.close()
        else:
            held[pid] = conn
        if len(held) == workers:
            return held
    for conn in held.values():
        conn.close()
    raise AssertionError(f"only {len(held)} of {workers} workers took a connection")


def start_game(conn: Connection) -> tuple[str, str, int]:
    status, created, _ = conn.call("POST", "/v1/games", GAME)
    assert status == 201, created
    gid, token = created["game_id"], created["tokens"][0]["token"]
    status, state, _ = conn.call("POST", f"/v1/games/{gid}/client-seed", {"client_seed": "watched"}, token)
    assert status == 200, state
    return gid, token, state["event_count"]


def watch_a_move(watcher: Connection, mover: Connection, gid: str, token: str, seen: int) -> tuple[dict, float]:
    """Park a watcher, move, and return the watcher's state with the time from the move's answer to it."""
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(watcher.call, "GET", f"/v1/games/{gid}/events?after={seen}")
        time.sleep(0.5)
        assert not watching.done(), watching.result()  # parked: nothing new yet
        status, moved, _ = mover.call("POST", f"/v1/games/{gid}/roll", {}, token)
        answered = time.monotonic()
        assert status == 200, moved
        status, state, headers = watching.result(timeout=DELIVERY_BOUND + 5)
        delay = time.monotonic() - answered
    assert status == 200, state
    assert state["event_count"] == moved["event_count"] and headers["ETag"] == f'"{moved["event_count"]}"'
    return state, delay


def test_a_move_through_one_worker_reaches_a_watcher_parked_in_the_other(tmp_path):
    server = ServeProcess(tmp_path / "serve", workers=2, threads=4).start()
    connections = {}
    try:
        connections = one_connection_per_worker(server, 2)
        (first, watcher), (second, mover) = connections.items()
        gid, token, seen = start_game(mover)
        state, delay = watch_a_move(watcher, mover, gid, token, seen)
        assert delay < DELIVERY_BOUND
        assert watcher.worker(server) == first != second == mover.worker(server)  # two processes, as meant
        status, public, _ = mover.call("GET", f"/v1/games/{gid}?since={seen}")
        assert status == 200 and public == state
    finally:
        for conn in connections.values():
            conn.close()
        server.stop()


def test_a_move_through_server_a_reaches_a_watcher_on_server_b(database_url, tmp_path):
    keys = tmp_path / "keys"  # one key directory: they sign with one key
    servers = [ServeProcess(tmp_path / name, workers=2, threads=4, args=["--db", database_url, "--key-dir", str(keys)])
               for name in ("a", "b")]
    connections = []
    try:
        for server in servers:
            server.start()
        connections = [Connection(server.url) for server in servers]
        mover, watcher = connections
        gid, token, seen = start_game(mover)
        for _ in range(3):  # every move, not just the first
            state, delay = watch_a_move(watcher, mover, gid, token, seen)
            assert delay < DELIVERY_BOUND
            status, public, _ = watcher.call("GET", f"/v1/games/{gid}?since={seen}")
            assert status == 200 and public == state
            seen = state["event_count"]
    finally:
        for conn in connections:
            conn.close()
        for server in servers:
            server.stop()
