"""Logs that cannot hurt (issue 21, item 4): `fairdice serve --access-log` writes to standard error, as --help
says; no line holds a seat token, an Idempotency-Key, a URL fragment or a query value that could be a secret;
and a reader that stalls or vanishes never stops the server.  The stream itself (api.logs.StderrLines) on a
pipe of its own; then real servers: one whose standard error nobody reads answers far more than the 787
requests that used to fill the pipe and stop it (/livez included), and says how many lines it dropped once
read again; one whose standard error is closed goes on serving and prints no token anywhere."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
import requests

from api.logs import QUEUE_ITEMS, StderrLines, access_line, redacted_target
from support.api_helpers import LIMITS_OFF, REPO

HUMAN_AND_BOT = [{"type": "human", "name": "ann"}, {"type": "bot", "bot": "greedy"}]


# --- what a line may say ---------------------------------------------------------------------------------

@pytest.mark.parametrize("target, logged", [
    ("/v1/games/abc/roll", "/v1/games/abc/roll"),
    ("/v1/games/abc?since=3&limit=1000", "/v1/games/abc?since=3&limit=1000"),
    ("/join#token=s3cret", "/join"),
    ("/x?token=s3cret&wait=20#frag", "/x?token=***&wait=20"),
    ("/x?s3cret-token-of-43-characters-aaaaaaaaaaaaaa", "/x?***"),
    ("/x?key=&flag&n=12345678901", "/x?key=&flag&n=***"),
    ("http://host/x?a=1%202", "http://host/x?a=***"),
])
def test_a_target_keeps_its_path_names_and_numbers_only(target, logged):
    assert redacted_target(target) == logged


def test_an_access_line_names_no_header_but_the_agent_and_escapes_what_a_client_wrote():
    environ = {"REQUEST_METHOD": "POST", "RAW_URI": "/v1/games/g/roll?token=t0k3n#x", "SERVER_PROTOCOL": "HTTP/1.1",
               "REMOTE_ADDR": "203.0.113.5", "HTTP_AUTHORIZATION": "Bearer t0k3n", "HTTP_IDEMPOTENCY_KEY": "k3y",
               "HTTP_REFERER": "http://page/?t=t0k3n#token=t0k3n", "HTTP_USER_AGENT": 'evil"\n203.0.113.9 - - forged'}
    line = access_line(environ, "200 OK", 2710, timedelta(milliseconds=2).total_seconds())
    assert re.fullmatch(r'203\.0\.113\.5 - - \[[^\]]+\] "POST /v1/games/g/roll\?token=\*\*\* HTTP/1\.1" 200 2710 '
                        r'"http://page/\?t=\*\*\*" "evil\\x22\\x0a203\.0\.113\.9 - - forged" 0\.002000', line), line
    assert "t0k3n" not in line and "k3y" not in line and "\n" not in line


# --- the stream -------------------------------------------------------------------------------------------

@contextlib.contextmanager
def pipe_stream():
    """A StderrLines writing into a pipe: (stream, read end)."""
    read_end, write_end = os.pipe()
    try:
        yield StderrLines(write_end), read_end
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)


def read_available(fd: int, wait: float = 2.0) -> bytes:
    """What the pipe holds, once its writer has been quiet for a moment."""
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    data, deadline, quiet_since = b"", time.monotonic() + wait, time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < 0.3:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            time.sleep(0.02)
            continue
        data += chunk
        quiet_since = time.monotonic()
    return data


def test_writes_never_wait_for_a_reader_and_the_dropped_lines_are_counted():
    written = QUEUE_ITEMS + 3000
    with pipe_stream() as (stream, read_end):
        line = "x" * 99 + "\n"  # 100 bytes: the pipe (64 KiB) holds about 650 of them
        started = time.monotonic()
        for _ in range(written):
            stream.write(line)
        assert time.monotonic() - started < 2  # it would block for good at about 650 lines
        time.sleep(0.2)
        stream.write("the last line\n")
        out = read_available(read_end).decode()
    lines = out.splitlines()
    notices = [int(n) for n in re.findall(r"^fairdice: at least (\d+) log lines dropped: standard error was not "
                                          r"read$", out, re.MULTILINE)]
    assert notices and lines[-1] == "the last line"
    assert lines.count("x" * 99) + sum(notices) == written  # one writing thread: every line written or counted
    assert len(lines) == lines.count("x" * 99) + len(notices) + 1  # and none torn


def test_a_line_written_in_pieces_is_kept_whole():
    with pipe_stream() as (stream, read_end):
        stream.write("part one, ")
        stream.write("part two")
        stream.write("\nnext ")
        stream.flush()  # print(..., flush=True): what is pending goes out
        assert read_available(read_end) == b"part one, part two\nnext "


def test_a_reader_that_is_gone_ends_the_writing_without_an_error():
    with pipe_stream() as (stream, read_end):
        os.close(read_end)
        for _ in range(10):
            stream.write("nobody reads this\n")  # EPIPE in the writer thread: no exception here
        deadline = time.monotonic() + 2
        while not stream.broken and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stream.broken
        stream.write("still no exception\n")


# --- real servers ---------------------------------------------------------------------------------------------

class LoggingServer:
    """`fairdice serve --access-log` whose standard output is read (for its address) and whose standard error
    is a pipe that this test reads, or never reads, or closes."""

    def __init__(self, data_dir, workers: int = 1, threads: int = 4):
        cmd = [sys.executable, "-m", "fairdice", "serve", "--port", "0", "--data-dir", str(data_dir),
               "--workers", str(workers), "--threads", str(threads), "--access-log"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                                     env={**os.environ, **LIMITS_OFF, "PYTHONUNBUFFERED": "1"},
                                     start_new_session=True)
        self.stdout: list[bytes] = []
        ready = threading.Event()
        self.url = None

        def read():
            for line in self.proc.stdout:
                self.stdout.append(line)
                found = re.search(rb"serving at (http://[\d.]+:\d+)", line)
                if found and not ready.is_set():
                    self.url = found[1].decode()
                    ready.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        assert ready.wait(30), b"".join(self.stdout)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(requests.ConnectionError):
                if requests.get(self.url + "/livez", timeout=2).status_code == 200:
                    return
            time.sleep(0.05)
        raise AssertionError("fairdice serve does not answer")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self._reader.join(10)
            self.proc.stdout.close()
            self.proc.stderr.close()


def play_moves(session, url: str, games: int) -> list[str]:
    """Games with a keyed client seed and roll each: the tokens and Idempotency-Keys the requests carried."""
    secrets = []
    for i in range(games):
        created = session.post(url + "/v1/games", json={"rules": "yacht", "seats": HUMAN_AND_BOT}, timeout=5)
        assert created.status_code == 201, created.text
        gid, token = created.json()["game_id"], created.json()["tokens"][0]["token"]
        for action, body in (("client-seed", {"client_seed": "s"}), ("roll", {"hold": []})):
            key = f"idempotency-key-{i}-{action}-{os.urandom(6).hex()}"
            answer = session.post(f"{url}/v1/games/{gid}/{action}?token={token}#{token}", json=body, timeout=5,
                                  headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key})
            assert answer.status_code == 200, answer.text
            secrets.append(key)
        secrets.append(token)
    return secrets


@pytest.mark.e2e
def test_the_access_log_is_on_standard_error_and_holds_no_secret(tmp_path):
    server = LoggingServer(tmp_path)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.extend(server.proc.stderr), daemon=True)
    reader.start()
    try:
        with requests.Session() as session:
            secrets = play_moves(session, server.url, 3)
    finally:
        server.stop()
        reader.join(10)
    logged, printed = b"".join(err).decode(), b"".join(server.stdout).decode()
    moves = [line for line in logged.splitlines() if '"POST /v1/games/' in line and "/roll?" in line]
    assert len(moves) == 3 and all('/roll?token=*** HTTP/1.1" 200 ' in line for line in moves), logged
    assert "POST /v1/games" not in printed  # standard output: the address and the database only
    assert not [s for s in secrets if s in logged or s in printed]


@pytest.mark.e2e
@pytest.mark.slow
def test_a_server_whose_standard_error_nobody_reads_answers_every_request(tmp_path):
    """One worker: 1,000 lines wait in its queue and about 600 in the pipe; 3,000 requests go far past both."""
    server = LoggingServer(tmp_path, workers=1, threads=4)
    try:
        with requests.Session() as session:
            for i in range(3000):
                path = "/livez" if i % 3 else "/v1/games/nosuchgame?since=1"
                answer = session.get(server.url + path, timeout=5)
                assert answer.status_code in (200, 404), (i, answer.text)
            assert session.get(server.url + "/livez", timeout=5).json() == {"status": "ok"}
        assert server.proc.poll() is None
        logged = read_available(server.proc.stderr.fileno(), wait=10)
        # read again, the writer goes on: what it dropped meanwhile is said in a line
        with requests.Session() as session:
            assert session.get(server.url + "/livez", timeout=5).status_code == 200
        logged += read_available(server.proc.stderr.fileno(), wait=10)
    finally:
        server.stop()
    text = logged.decode()
    dropped = re.search(r"fairdice: at least (\d+) log lines dropped: standard error was not read", text)
    assert dropped and int(dropped[1]) > 0, text[-2000:]
    assert text.count('"GET /livez HTTP/1.1" 200') > 1000


@pytest.mark.e2e
def test_a_server_whose_standard_error_is_closed_goes_on_serving(tmp_path):
    server = LoggingServer(tmp_path, workers=2, threads=4)
    server.proc.stderr.close()  # the reader is gone: every write to it fails with EPIPE
    try:
        with requests.Session() as session:
            secrets = play_moves(session, server.url, 20)
            for _ in range(200):
                assert session.get(server.url + "/livez", timeout=5).status_code == 200
        assert server.proc.poll() is None
    finally:
        server.stop()
    assert server.proc.returncode == 0
    printed = b"".join(server.stdout).decode()
    assert not [s for s in secrets if s in printed] and "Traceback" not in printed
