"""Slow and silent clients against `fairdice serve` (issue 14, part 1): connections that send a request's
headers and one byte of its body, half a request line, nothing at all, or never close their end must not
stop `/healthz` from answering, however many threads they would have held.  The server is started with a
long read timeout (60 s), so what keeps it answering is that waiting clients hold no thread, not that they
are cut off early; the cut-off itself (408, then close) is tested with a 1 s timeout."""

from __future__ import annotations

import socket
import time

import pytest

from support.api_helpers import ServeProcess
from support.serve import QUIET, address

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SLOW = 50
PROBES = 5
PROBE_TIMEOUT = 2.0
BODY_HEADERS = (b"POST /v1/games HTTP/1.1\r\nHost: fairdice\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{")
HALF_LINE = b"GET /heal"
CLOSE_ME = b"GET /healthz HTTP/1.1\r\nHost: fairdice\r\nConnection: close\r\n\r\n"


def healthz_seconds(addr, timeout: float = PROBE_TIMEOUT) -> float:
    """One /healthz on a new connection, read to the end: its latency; fails past `timeout`."""
    started = time.perf_counter()
    with socket.create_connection(addr, timeout=timeout) as sock:
        sock.sendall(CLOSE_ME)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert answer.endswith(b'{"status":"ok"}'), answer[-200:]
    return time.perf_counter() - started


def still_open(sock: socket.socket) -> bool:
    """Whether the server has neither closed this connection nor written to it."""
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)  # data, or b"" once closed
    except BlockingIOError:
        return True
    finally:
        sock.settimeout(timeout)
    return False


def open_slow(addr, sent: bytes, count: int = SLOW) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(addr, timeout=5)
        if sent:
            sock.sendall(sent)
        socks.append(sock)
    return socks


@pytest.fixture(scope="module")
def patient_server(tmp_path_factory):
    """2 workers x 4 threads (8 threads: far fewer than the slow clients) that wait 60 s for a request."""
    proc = ServeProcess(tmp_path_factory.mktemp("slow"), workers=2, threads=4,
                        extra_env={**QUIET, "FAIRDICE_READ_TIMEOUT": "60"}).start()
    yield proc
    proc.stop()


@pytest.mark.parametrize("sent", [BODY_HEADERS, HALF_LINE, b""],
                         ids=["headers and one byte of body", "half a request line", "nothing"])
def test_healthz_answers_while_50_slow_clients_wait(patient_server, sent):
    addr = address(patient_server)
    socks = open_slow(addr, sent)
    try:
        time.sleep(0.5)  # the server has accepted them and is waiting for the rest
        for _ in range(PROBES):
            assert healthz_seconds(addr) < PROBE_TIMEOUT
            time.sleep(0.3)
        assert all(still_open(sock) for sock in socks), "the slow clients were cut off: the test proved nothing"
    finally:
        for sock in socks:
            sock.close()


def test_healthz_answers_while_clients_never_close_their_end(patient_server):
    """Answered with Connection: close, these clients keep their socket open: the server must not wait for
    their end of the connection to close before it serves anyone else."""
    addr = address(patient_server)
    socks = open_slow(addr, CLOSE_ME, count=30)
    try:
        time.sleep(0.5)
        for _ in range(PROBES):
            assert healthz_seconds(addr) < PROBE_TIMEOUT
    finally:
        for sock in socks:
            sock.close()


def test_slow_clients_do_not_hold_up_a_stop(tmp_path):
    """SIGTERM: a worker answers what it is serving, gives arriving requests 2 s, and exits."""
    server = ServeProcess(tmp_path, workers=1, threads=2, extra_env={**QUIET, "FAIRDICE_READ_TIMEOUT": "60"}).start()
    socks = open_slow(address(server), BODY_HEADERS)
    try:
        time.sleep(0.5)
        started = time.monotonic()
        server.stop()
        assert server.proc.returncode == 0
        assert time.monotonic() - started < 6
    finally:
        for sock in socks:
            sock.close()


# ------------------------------------------------------------------------------------------- the read timeout

@pytest.fixture(scope="module")
def strict_server(tmp_path_factory):
    """A server that gives a client 1 s to send its whole request."""
    proc = ServeProcess(tmp_path_factory.mktemp("strict"), workers=1, threads=2,
                        extra_env={**QUIET, "FAIRDICE_READ_TIMEOUT": "1"}).start()
    yield proc
    proc.stop()


def read_all(sock: socket.socket, timeout: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when it closed it."""
    sock.settimeout(timeout)
    started, data = time.monotonic(), b""
    while chunk := sock.recv(65536):
        data += chunk
    return data, time.monotonic() - started


@pytest.mark.parametrize("sent", [BODY_HEADERS, HALF_LINE], ids=["headers and one byte of body", "half a request line"])
def test_a_request_not_sent_in_time_gets_408_and_is_closed(strict_server, sent):
    with socket.create_connection(address(strict_server)) as sock:
        sock.sendall(sent)
        answer, waited = read_all(sock, timeout=10)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"application/problem+json" in answer and b'"code":"request_timeout"' in answer
    assert 0.5 < waited < 4


def test_a_client_that_sends_nothing_is_closed_without_an_answer(strict_server):
    with socket.create_connection(address(strict_server)) as sock:
        answer, waited = read_all(sock, timeout=10)
    assert answer == b"" and waited < 4


def test_the_timeout_bounds_the_whole_request_not_each_read(strict_server):
    """A client that sends one byte every 0.2 s never pauses for a whole second, yet is cut off once its
    request has taken longer than the timeout."""
    request = b"GET /healthz HTTP/1.1\r\nHost: fairdice\r\nX-Slow: " + b"a" * 100 + b"\r\n\r\n"
    with socket.create_connection(address(strict_server), timeout=10) as sock:
        started = time.monotonic()
        for byte in request:
            sock.sendall(bytes([byte]))
            time.sleep(0.2)
            if not still_open(sock):
                break
        answer, _ = read_all(sock, timeout=10)
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert waited < 4, f"cut off after {waited:.1f} s, not after about 1 s"
