"""Every refusal of `fairdice serve`, the HTTP server's own included, is a problem document (issue 21, item 5):
a request line or header gunicorn's parser cannot read, a malformed chunked body, a request line and headers
past the README's 64 KiB, more than 1000 header fields, each over a raw socket so that the bytes arrive as
sent.  And the limits are the README's, not gunicorn's defaults (a 4094-byte request line, 8190-byte fields,
100 fields): 100 header fields, a 9 KB header, a 60 KB request line and a head of exactly 64 KiB are served.
A refusal never repeats what the client sent, in its answer or in the server's log."""

from __future__ import annotations

import json
import time

import pytest

from api.worker import HEAD_LIMIT, HEADER_FIELDS_LIMIT
from support.api_helpers import ServeProcess
from support.serve import QUIET
from support.serve import exchange

pytestmark = pytest.mark.e2e

CLOSE = b"Host: fairdice\r\nConnection: close\r\n"
POST = b"POST /v1/games HTTP/1.1\r\n" + CLOSE + b"Content-Type: application/json\r\n"
CHUNKED = POST + b"Transfer-Encoding: chunked\r\n\r\n"
SECRET = b"hunter2-seat-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc = ServeProcess(tmp_path_factory.mktemp("refusals"), workers=1, threads=2, args=["--access-log"],
                        extra_env={**QUIET, "FAIRDICE_READ_TIMEOUT": "5"}).start()
    yield proc
    proc.stop()


def get(target: bytes = b"/livez", headers: bytes = b"", version: bytes = b"HTTP/1.1", method: bytes = b"GET"):
    return method + b" " + target + b" " + version + b"\r\n" + CLOSE + headers + b"\r\n"


def head_of(size: int) -> bytes:
    """A GET /livez whose request line and headers, the empty line included, are `size` bytes."""
    bare = get(headers=b"X-Pad: \r\n")
    return get(headers=b"X-Pad: " + b"a" * (size - len(bare)) + b"\r\n")


def fields(count: int) -> bytes:
    """A GET /livez with `count` header fields in all (Host and Connection included)."""
    return get(headers=b"".join(b"X-Field-%d: v\r\n" % i for i in range(count - 2)))


def split(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


REFUSED = [
    ("raw UTF-8 in the path", get(b"/v1/games/\xc3\xa9t\xc3\xa9"), 400, "invalid_request_line"),
    ("a byte that is not UTF-8 in the path", get(b"/v1/games/\xff\xfe"), 400, "invalid_request_line"),
    ("a byte that is not UTF-8 in the query", get(b"/v1/games/abc?since=\xff"), 400, "invalid_request_line"),
    ("a control in the target", get(b"/livez\x01"), 400, "invalid_request_line"),
    ("a bare LF", b"GET /livez HTTP/1.1\nHost: fairdice\n\n", 400, "invalid_request_line"),
    ("the HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "invalid_request_line"),
    ("a method that is not a token", get(method=b"G(T"), 400, "invalid_method"),
    ("HTTP/2.0 in the request line", get(version=b"HTTP/2.0"), 400, "invalid_http_version"),
    ("a header name that is not a token", get(headers=b"X(: 1\r\n"), 400, "invalid_header"),
    ("a control in a header value", get(headers=b"X-A: a\x01b\r\n"), 400, "invalid_header"),
    ("an obsolete folded header", get(headers=b"X-A: 1\r\n  2\r\n"), 400, "invalid_header"),
    ("two Content-Lengths", POST + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400, "invalid_header"),
    ("a Transfer-Encoding other than chunked", POST + b"Transfer-Encoding: identity\r\n\r\n", 400, "invalid_header"),
    ("an expectation other than 100-continue", get(headers=b"Expect: the-unexpected\r\n"), 417,
     "expectation_failed"),
    ("a chunk size that is not hex", CHUNKED + b"zz\r\n{}\r\n0\r\n\r\n", 400, "invalid_chunked_body"),
    ("a chunk without its CRLF", CHUNKED + b"2\r\n{}XY0\r\n\r\n", 400, "invalid_chunked_body"),
    ("a malformed chunk extension", CHUNKED + b"2;\x01\r\n{}\r\n0\r\n\r\n", 400, "invalid_chunked_body"),
    ("a malformed trailer", CHUNKED + b"2\r\n{}\r\n0\r\nX(: 1\r\n\r\n", 400, "invalid_header"),
    (f"{HEADER_FIELDS_LIMIT + 1} header fields", fields(HEADER_FIELDS_LIMIT + 1), 431,
     "request_header_fields_too_large"),
    ("a head of 64 KiB and a byte, sent at once", head_of(HEAD_LIMIT + 1), 431, "request_header_fields_too_large"),
    ("a 70 KB header never ended", get()[:-2] + b"X-Pad: " + b"a" * 70_000, 431, "request_header_fields_too_large"),
    ("a request line over 64 KiB", get(b"/livez?q=" + b"a" * HEAD_LIMIT), 414, "request_uri_too_long"),
]


@pytest.mark.parametrize("request_bytes, status, code", [case[1:] for case in REFUSED],
                         ids=[case[0] for case in REFUSED])
def test_a_request_the_http_server_refuses_gets_a_problem_document(server, request_bytes, status, code):
    found, headers, body = split(exchange(server, request_bytes))
    assert found == status, body[:300]
    assert headers["content-type"] == "application/problem+json"
    assert headers["connection"] == "close" and int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    assert problem["status"] == status and problem["code"] == code
    assert problem["type"] == "urn:fairdice:problem:" + code and problem["title"] and problem["detail"]


SERVED = [
    ("100 header fields", fields(100)),
    (f"{HEADER_FIELDS_LIMIT} header fields", fields(HEADER_FIELDS_LIMIT)),
    ("a 9 KB header", get(headers=b"X-Big: " + b"a" * 9000 + b"\r\n")),
    ("a 60 KB header", get(headers=b"X-Big: " + b"a" * 60_000 + b"\r\n")),
    ("a 9 KB request line", get(b"/livez?q=" + b"a" * 9000)),
    ("a 60 KB request line", get(b"/livez?q=" + b"a" * 60_000)),
    ("a head of exactly 64 KiB", head_of(HEAD_LIMIT)),
]


@pytest.mark.parametrize("request_bytes", [case[1] for case in SERVED], ids=[case[0] for case in SERVED])
def test_requests_within_the_readmes_limits_are_served(server, request_bytes):
    status, _, body = split(exchange(server, request_bytes))
    assert (status, body) == (200, b'{"status":"ok"}')


def test_a_refusal_repeats_nothing_the_client_sent(server):
    """A request line gunicorn refuses, with a secret in its query, a header it refuses holding another, and
    a request it serves with one in its query: neither the answers nor the server's log (with its access log)
    hold them."""
    answers = exchange(server, get(b"/v1/games/abc?token=" + SECRET + b"\xff"))
    answers += exchange(server, get(headers=b"Authorization: Bearer " + SECRET + b"\x01\r\n"))
    answers += exchange(server, get(b"/livez?token=" + SECRET))
    assert answers.count(b"HTTP/1.1 400 ") == 2 and b"HTTP/1.1 200 " in answers and SECRET not in answers
    deadline = time.monotonic() + 5
    while '"GET /livez?token=*** HTTP/1.1" 200' not in server.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)  # (the access log is written by a thread of its own)
    assert '"GET /livez?token=*** HTTP/1.1" 200' in server.log_text()
    assert SECRET.decode() not in server.log_text()
