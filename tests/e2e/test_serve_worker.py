"""`fairdice serve`'s worker (api.worker.BufferedThreadWorker) reads each request whole before a thread serves
it: requests that arrive in pieces, pipelined, chunked, with `Expect: 100-continue`, too large or malformed
must be answered exactly as HTTP/1.1 says, over raw sockets so that the pieces arrive as sent."""

from __future__ import annotations

import json
import socket
import time

import pytest
import requests

from support.api_helpers import ServeProcess
from support.serve import QUIET, address
from support.serve import exchange, read_to_end

pytestmark = pytest.mark.e2e

GAME = json.dumps({"rules": "yacht", "seats": [{"type": "human", "name": "ann"}]}).encode()
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: fairdice\r\n\r\n"
LAST_HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: fairdice\r\nConnection: close\r\n\r\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc = ServeProcess(tmp_path_factory.mktemp("worker"), workers=1, threads=2,
                        extra_env={**QUIET, "FAIRDICE_READ_TIMEOUT": "5"}).start()
    yield proc
    proc.stop()


def post_head(length: int | None = None, extra: bytes = b"") -> bytes:
    framing = b"Transfer-Encoding: chunked\r\n" if length is None else b"Content-Length: %d\r\n" % length
    return (b"POST /v1/games HTTP/1.1\r\nHost: fairdice\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + framing + extra + b"\r\n")


def statuses(answer: bytes) -> list[int]:
    """The status codes of the answers on one connection, in order (bodies here never contain 'HTTP/1.1 ')."""
    return [int(part[:3]) for part in answer.split(b"HTTP/1.1 ")[1:]]


def body_of(answer: bytes) -> dict:
    return json.loads(answer.split(b"\r\n\r\n", 1)[1])


def test_a_request_that_arrives_in_pieces_is_served(server):
    head = post_head(len(GAME))
    answer = exchange(server, head[:20], head[20:], GAME[:10], GAME[10:])
    assert statuses(answer) == [201]
    assert body_of(answer)["status"] == "awaiting_client_seed"


def test_pipelined_requests_are_all_answered_in_order(server):
    """Two requests in one packet, then a third whose second half comes later."""
    third = b"GET /nowhere HTTP/1.1\r\nHost: fairdice\r\nConnection: close\r\n\r\n"
    answer = exchange(server, HEALTHZ + HEALTHZ + third[:15], third[15:])
    assert statuses(answer) == [200, 200, 404]


def test_a_chunked_body_that_arrives_in_pieces_is_served(server):
    chunks = b"%x\r\n%s\r\n" % (10, GAME[:10]) + b"%x\r\n%s\r\n" % (len(GAME) - 10, GAME[10:]) + b"0\r\n\r\n"
    answer = exchange(server, post_head(), chunks[:7], chunks[7:30], chunks[30:])
    assert statuses(answer) == [201]


def test_expect_100_continue_gets_one_interim_answer_before_the_body_is_sent(server):
    with socket.create_connection(address(server), timeout=10) as sock:
        sock.sendall(post_head(len(GAME), b"Expect: 100-continue\r\n"))
        sock.settimeout(0.9)  # (curl sends the body anyway after 1 s)
        interim = sock.recv(65536)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.settimeout(10)
        sock.sendall(GAME)
        answer = read_to_end(sock)
    assert statuses(answer) == [201]


def test_a_body_over_the_limit_is_refused_unread_and_the_connection_closed(server):
    from api.app import MAX_BODY

    answer = exchange(server, post_head(MAX_BODY + 2) + b"x" * 1000)
    assert statuses(answer) == [413]
    assert body_of(answer)["code"] == "request_entity_too_large"


@pytest.mark.parametrize("size, status", [(64 * 1024, 201), (64 * 1024 + 1, 413)], ids=["64 KiB", "64 KiB + 1"])
def test_bodies_up_to_the_limit_are_read_whole(server, size, status):
    body = GAME[:-1] + b" " * (size - len(GAME)) + GAME[-1:]
    assert len(body) == size
    answer = exchange(server, post_head(size), body[:30000], body[30000:])
    assert statuses(answer) == [status]


def test_headers_over_64_kib_get_431(server):
    answer = exchange(server, b"GET /healthz HTTP/1.1\r\nHost: fairdice\r\n" + b"X-Padding: " + b"a" * 70_000)
    assert statuses(answer) == [431]
    assert body_of(answer)["code"] == "request_header_fields_too_large"


def test_a_bare_lf_is_refused_at_once_not_waited_on(server):
    started = time.monotonic()
    answer = exchange(server, b"GET /healthz HTTP/1.1\nHost: fairdice\n")
    assert statuses(answer) == [400]
    assert time.monotonic() - started < 2  # the read timeout is 5 s


def test_http_1_0_is_answered_and_closed(server):
    answer = exchange(server, b"GET /healthz HTTP/1.0\r\n\r\n")  # (read_to_end: the server closes it)
    assert answer.startswith(b"HTTP/1.0 200 ") and answer.endswith(b'{"status":"ok"}')


def test_kept_alive_connections_serve_many_requests(server):
    with requests.Session() as session:
        for _ in range(30):
            assert session.get(server.url + "/healthz", timeout=5).json() == {"status": "ok"}
            assert session.post(server.url + "/v1/games", data=GAME, timeout=5,
                                headers={"Content-Type": "application/json"}).status_code == 201
