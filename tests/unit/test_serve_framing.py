"""api.worker.Framing: when a request at the start of a buffer has fully arrived (RFC 9112 section 6: a body
is framed by Content-Length or by chunked coding), fed the way clients send, down to one byte at a time."""

from __future__ import annotations

import pytest

from api.worker import HEAD_LIMIT, Framing, HeadTooLargeError

LIMIT = 1000
GET = b"GET /healthz HTTP/1.1\r\nHost: fairdice\r\n\r\n"


def post(body: bytes, *headers: bytes) -> bytes:
    return b"POST /v1/games HTTP/1.1\r\nHost: fairdice\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


def chunked(*chunks: bytes, trailer: bytes = b"") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n" + trailer + b"\r\n"


def first_complete_prefix(message: bytes) -> tuple[int, Framing]:
    """Feed `message` one byte at a time: the length at which the request was first complete."""
    framing, buf = Framing(LIMIT), bytearray()
    for byte in message:
        buf.append(byte)
        if framing.complete(buf):
            return len(buf), framing
    return -1, framing


@pytest.mark.parametrize("message", [
    GET,
    post(b'{"rules":"yacht"}', b"Content-Length: 17"),
    post(b"", b"Content-Length: 0"),
    post(chunked(b'{"rules":', b'"yacht"}'), b"Transfer-Encoding: chunked"),
    post(chunked(b"x" * 300, trailer=b"X-Checksum: 1\r\n"), b"Transfer-Encoding: chunked"),
    post(chunked(b"ab", b"c"), b"Transfer-Encoding: gzip, chunked"),
    post(chunked(b"abc").replace(b"3\r\n", b"3;ext=1\r\n"), b"Transfer-Encoding: chunked"),
], ids=["no body", "content-length", "empty body", "chunked", "chunked with trailer", "gzip then chunked",
        "chunk extension"])
def test_a_request_is_complete_exactly_when_its_last_byte_arrives(message):
    at, framing = first_complete_prefix(message)
    assert at == len(message)
    assert not framing.too_large


def test_bytes_after_the_request_are_the_next_one_and_do_not_matter():
    framing = Framing(LIMIT)
    assert framing.complete(bytearray(post(b"12345", b"Content-Length: 5") + GET[:10]))


@pytest.mark.parametrize("message", [
    post(b"", b"Content-Length: 5", b"Content-Length: 6"),
    post(b"", b"Content-Length: -5"),
    post(b"", b"Content-Length: 5", b"Transfer-Encoding: chunked"),
    post(b"", b"Transfer-Encoding: gzip"),
    post(b"zz\r\n", b"Transfer-Encoding: chunked"),
    b"GET /healthz HTTP/1.1\nHost: fairdice\n",
], ids=["two lengths", "negative length", "length and chunked", "not chunked last", "bad chunk size", "bare LF"])
def test_framing_the_parser_refuses_is_handed_over_at_once(message):
    """No need to wait for a body that gunicorn's parser will not read: it answers 400 straight away."""
    assert Framing(LIMIT).complete(bytearray(message))


def test_a_length_over_the_limit_is_handed_over_unread_and_marked():
    framing = Framing(LIMIT)
    assert framing.complete(bytearray(post(b"", b"Content-Length: %d" % (LIMIT + 1))))
    assert framing.too_large


def test_a_chunked_body_is_read_up_to_the_limit_then_marked():
    message = post(chunked(*[b"y" * 100] * 20), b"Transfer-Encoding: chunked")
    at, framing = first_complete_prefix(message)
    assert framing.too_large and at < len(message)
    head = message.index(b"\r\n\r\n") + 4
    assert message[head:at].count(b"y") == LIMIT + 1  # all the app reads before its 413


def test_chunk_framing_without_end_is_capped():
    """Chunks of one byte with long extensions: little body, much framing."""
    framing, buf = Framing(LIMIT), bytearray(post(b"", b"Transfer-Encoding: chunked"))
    while not framing.complete(buf):
        buf += b"1;" + b"e" * 500 + b"\r\nz\r\n"
    assert framing.too_large and len(buf) <= framing.buffer_limit + 600


def test_a_head_over_the_limit_is_refused():
    framing, buf = Framing(LIMIT), bytearray(b"GET / HTTP/1.1\r\nX-Long: ")
    with pytest.raises(HeadTooLargeError):
        while not framing.complete(buf):
            buf += b"a" * 4096
    assert len(buf) > HEAD_LIMIT


def test_expect_100_continue_is_noticed():
    framing = Framing(LIMIT)
    assert not framing.complete(bytearray(post(b"", b"Content-Length: 3", b"Expect: 100-Continue")))
    assert framing.expects_continue
