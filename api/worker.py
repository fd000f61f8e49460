"""`fairdice serve`'s gunicorn worker: gthread, except that the event loop reads each request whole.

A slow or silent client then holds a socket and a bounded buffer, never a thread: a thread gets a request
only once it has fully arrived (`Framing` says when, from Content-Length or chunked framing; gunicorn's own
parser then parses it from memory).  A request must arrive within the settings' `read_timeout` seconds, or
it is answered 408 and closed; a request line and headers over HEAD_LIMIT get 414 or 431; a connection's
unread input is drained at most LINGER_SECONDS when it closes.  Every refusal, gunicorn's own included (a
request it cannot parse), is a problem document (RFC 9457), never an HTML page.

What each request spends on the way (issue 21, bench/bench_api.py): the request threads take connections off one
queue and the thread that answered puts a kept-alive connection back in the poller itself (gthread's executor
makes a Future per request and wakes the event loop through a pipe to do it); an answer in one piece leaves in
one write, head and body, with a Date header formatted once a second.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import errno
import io
import queue
import re
import selectors
import socket
import threading
import time
from functools import partial
from http import HTTPStatus

from gunicorn import util as gunicorn_util
from gunicorn.http import errors as parse_errors
from gunicorn.http import get_parser
from gunicorn.http import wsgi as gunicorn_wsgi
from gunicorn.http.body import Body, ChunkedReader
from gunicorn.http.wsgi import Response, default_environ
from gunicorn.workers.gthread import STOP_KEEPALIVE_LINGER, TConn, ThreadWorker

from .clock import SecondStamp
from .config import settings
from .errors import ServiceError

HEAD_LIMIT = 64 * 1024  # bytes of request line and headers a client may send (more: 431)
RECV_BYTES = 64 * 1024  # bytes taken from a socket per read
LINGER_SECONDS = 2.0  # a closed connection's unread input is drained this long at most (RFC 9112 section 9.6)
STOP_GRACE = 2.0  # seconds a stopping worker still waits for requests that are arriving
WORKER_CONNECTIONS = 1000  # open connections per worker, waiting or served; then the worker stops accepting
HEADER_FIELDS_LIMIT = 1000  # header fields in one request (more: 431); HEAD_LIMIT bounds their bytes
HOUSEKEEPING_EVERY = 0.5  # seconds between heartbeats (the arbiter waits 60 s) and checks that the arbiter runs

# gunicorn's parser settings, so that HEAD_LIMIT (checked by the event loop) is the limit of the request line
# and of every header field: gunicorn's default 4094-byte line, 8190-byte field and 100 fields would refuse
# far smaller requests.  (0: no limit of a request line's own.)  More fields than HEADER_FIELDS_LIMIT are
# refused because gunicorn's parser costs time per field: 1000 take it about 3 ms, 16000 (what 64 KiB can
# hold) about 100 ms of a thread.
PARSER_LIMITS = {"limit_request_line": 0, "limit_request_field_size": HEAD_LIMIT,
                 "limit_request_fields": HEADER_FIELDS_LIMIT}


class HeadTooLargeError(ServiceError):
    """The request line and headers go on past HEAD_LIMIT bytes (`in_request_line`: the request line alone)."""

    def __init__(self, in_request_line: bool):
        super().__init__("request line too long" if in_request_line else "request head too large")
        self.in_request_line = in_request_line


_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_FRAMING_FIELD = re.compile(rb"\r\n(content-length|transfer-encoding|expect):([^\r\n]*)", re.IGNORECASE)


class Framing:
    """Where the request at the start of a buffer ends, judged from its framing alone (Content-Length,
    Transfer-Encoding): gunicorn's parser reads the request afterwards, from memory, and refuses whatever
    is malformed.  So `complete` only has to say when that parser has every byte it will read, or can
    refuse the request without reading more.  A body larger than `body_limit` is read up to the limit (what
    the app reads before it answers 413), and the connection is closed after the answer."""

    def __init__(self, body_limit: int):
        self.body_limit = body_limit
        self.buffer_limit = HEAD_LIMIT + 4 * body_limit  # chunk framing included: more is no honest request
        self.scanned = 0  # head bytes looked at so far
        self.head_end: int | None = None
        self.body_end: int | None = None  # Content-Length: where the body ends
        self.chunk_at: int | None = None  # chunked: where the next chunk-size line starts
        self.decoded = 0  # chunked: body bytes in the chunks before chunk_at
        self.ready = False
        self.too_large = False  # the body goes on past body_limit: close once answered
        self.refuse_unread = False  # too large and not framed by a Content-Length: refused here (413), unread
        self.expects_continue = False
        self.continue_sent = False

    def complete(self, buf: bytearray) -> bool:
        if not self.ready:
            self.ready = self._head(buf) and self._body(buf)
        if not self.ready and len(buf) > self.buffer_limit:
            self.ready = self.too_large = self.refuse_unread = True
        return self.ready

    def _head(self, buf: bytearray) -> bool:
        if self.head_end is not None:
            return True
        end = buf.find(b"\r\n\r\n", max(self.scanned - 3, 0))
        if 0 <= end <= HEAD_LIMIT - 4:  # the head, its empty line included, is at most HEAD_LIMIT bytes
            self.head_end = end + 4
            self._framing(buf, end)
            return True
        if end < 0 and _bare_lf(buf, self.scanned):
            return True  # the parser refuses it at once
        if end >= 0 or len(buf) > HEAD_LIMIT:  # (however fast it came)
            raise HeadTooLargeError(in_request_line=buf.find(b"\r\n", 0, HEAD_LIMIT) < 0)
        self.scanned = len(buf)
        return False

    def _framing(self, buf: bytearray, end: int) -> None:
        fields: dict[bytes, list[bytes]] = {}
        for match in _FRAMING_FIELD.finditer(buf, 0, end + 2):
            fields.setdefault(match[1].lower(), []).append(match[2].strip(b" \t"))
        lengths, codings = fields.get(b"content-length", []), fields.get(b"transfer-encoding", [])
        self.expects_continue = any(v.lower() == b"100-continue" for v in fields.get(b"expect", []))
        if codings:
            if len(codings) == 1 and not lengths and codings[0].lower().endswith(b"chunked"):
                self.chunk_at = self.head_end
            else:
                self.ready = True  # framing the parser refuses (400)
        elif lengths:
            if len(lengths) != 1 or not lengths[0].isdigit():
                self.ready = True  # the parser refuses it (400)
            elif int(lengths[0]) > self.body_limit:
                self.ready = self.too_large = True  # the app refuses it (413) without reading it
            else:
                self.body_end = self.head_end + int(lengths[0])

    def _body(self, buf: bytearray) -> bool:
        if self.ready:
            return True
        if self.body_end is not None:
            return len(buf) >= self.body_end
        if self.chunk_at is not None:
            return self._chunks(buf)
        return True  # no body

    def _chunks(self, buf: bytearray) -> bool:
        while True:
            line_end = buf.find(b"\r\n", self.chunk_at)
            if line_end < 0:
                return False
            size_text = bytes(buf[self.chunk_at:line_end]).split(b";", 1)[0].strip(b" \t")
            if not _HEX.fullmatch(size_text):
                return True  # the parser refuses it
            size, data_at = int(size_text, 16), line_end + 2
            if size == 0:  # the last chunk, then trailer fields up to an empty line
                return buf[data_at:data_at + 2] == b"\r\n" or buf.find(b"\r\n\r\n", data_at) >= 0
            if self.decoded + min(size, len(buf) - data_at) > self.body_limit:
                self.too_large = self.refuse_unread = True
                return True
            if len(buf) < data_at + size + 2:
                return False
            self.decoded += size
            self.chunk_at = data_at + size + 2


def _bare_lf(buf: bytearray, start: int) -> bool:
    """Whether a line of buf[start:] ends with LF alone (gunicorn's parser takes only CRLF)."""
    at = buf.find(b"\n", start)
    while at >= 0:
        if at == 0 or buf[at - 1] != 0x0D:
            return True
        at = buf.find(b"\n", at + 1)
    return False


class RequestSource:
    """What gunicorn's request parser reads instead of the socket: the bytes the event loop has received
    for this connection, then end of input.  (gunicorn's unreader keeps what the parser does not use: the
    start of a pipelined next request.)"""

    def __init__(self):
        self.pending = bytearray()

    def recv(self, _size: int) -> bytes:
        data = bytes(self.pending)
        self.pending.clear()
        return data


def problem_bytes(status: int, code: str, detail: str) -> bytes:
    """A whole HTTP/1.1 answer with a problem document (api/problems.py writes it), then close."""
    from .problems import PROBLEM_JSON, problem_json

    body = problem_json(status, code, detail).encode()
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: {PROBLEM_JSON}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode("latin-1") + body


# What gunicorn's parser refuses, as (exception classes, status, code, detail), the first match winning: the
# details never repeat what the client sent (a request line may hold a secret in its query).
PARSE_REFUSALS = (
    ((parse_errors.InvalidResponseHeader, parse_errors.InvalidResponseHeaderName, parse_errors.ConfigurationProblem),
     500, "internal_error", "the server failed to handle this request"),
    ((parse_errors.LimitRequestLine,), 414, "request_uri_too_long",
     f"the request line is longer than {HEAD_LIMIT} bytes"),
    ((parse_errors.LimitRequestHeaders,), 431, "request_header_fields_too_large",
     f"more than {HEADER_FIELDS_LIMIT} header fields, or a request line and headers longer than {HEAD_LIMIT} bytes"),
    ((parse_errors.InvalidRequestLine, parse_errors.InvalidH2CPreface), 400, "invalid_request_line",
     "the request line is not METHOD SP target SP HTTP-version ending in CRLF, with a target of printable "
     "ASCII (percent-encode anything else, UTF-8 included)"),
    ((parse_errors.InvalidRequestMethod,), 400, "invalid_method", "the method is not an HTTP method token"),
    ((parse_errors.InvalidHTTPVersion,), 400, "invalid_http_version", "the server speaks HTTP/1.0 and HTTP/1.1"),
    ((parse_errors.InvalidHeader, parse_errors.InvalidHeaderName, parse_errors.ObsoleteFolding), 400,
     "invalid_header", "a header field is malformed (its name, a control character or bare LF in it, a "
                       "folded line), or Content-Length and Transfer-Encoding frame the body twice"),
    ((parse_errors.InvalidChunkSize, parse_errors.ChunkMissingTerminator, parse_errors.InvalidChunkExtension),
     400, "invalid_chunked_body", "the chunked body is malformed (RFC 9112 section 7.1)"),
    ((parse_errors.UnsupportedTransferCoding,), 501, "unsupported_transfer_coding",
     "the only transfer coding this server takes is chunked"),
    ((parse_errors.ExpectationFailed,), 417, "expectation_failed", "the only expectation this server meets is "
                                                                   "100-continue"),
    ((parse_errors.ParseException,), 400, "bad_request", "the request is not HTTP/1.1 this server can read"),
)


def parse_refusal(exc: BaseException) -> tuple[int, str, str]:
    """(status, code, detail) of the answer to an error raised while gunicorn reads a request: a client's
    malformed request is 4xx (or 501), anything else the server's fault, 500."""
    for classes, status, code, detail in PARSE_REFUSALS:
        if isinstance(exc, classes):
            return status, code, detail
    return 500, "internal_error", "the server failed to handle this request"


class SettledConfig:
    """gunicorn's settings as a running worker reads them: each looked up once, then a plain attribute.  (gunicorn's
    Config resolves a setting through `__getattr__` on every read: about twenty times a request.)  A worker's
    settings do not change while it runs: a reload starts new workers."""

    def __init__(self, cfg):
        self._cfg = cfg

    def __getattr__(self, name):
        value = getattr(self._cfg, name)
        self.__dict__[name] = value  # (found in the instance from now on: __getattr__ is not called again)
        return value


# The Date header's value (RFC 9110 section 5.6.7), formatted once a second (gunicorn formats it for every answer
# through email.utils).
http_date = SecondStamp("%a, %d %b %Y %H:%M:%S GMT")


class OneWriteResponse(Response):
    """gunicorn's response writer, except that an answer in one piece framed by its Content-Length (every JSON
    answer of the API) leaves in one write, head and body together: gunicorn writes the head, then the body, two
    system calls and two packets.  Anything else (a chunked answer, a file, one written in several pieces) is
    written as gunicorn writes it."""

    def default_headers(self):
        if self.upgrade:
            connection = "upgrade"
        elif self.should_close():
            connection = "close"
        else:
            connection = "keep-alive"
        headers = [f"HTTP/{self.req.version[0]}.{self.req.version[1]} {self.status}\r\n",
                   f"Server: {self.version}\r\n", f"Date: {http_date()}\r\n", f"Connection: {connection}\r\n"]
        if self.chunked:
            headers.append("Transfer-Encoding: chunked\r\n")
        return headers

    def head(self) -> bytes:
        """The status line and header fields, as gunicorn's send_headers writes them."""
        fields = self.default_headers()
        fields.extend([f"{name}: {value}\r\n" for name, value in self.headers])
        fields.append("\r\n")
        return "".join(fields).encode("latin-1")

    def send_headers(self):
        if not self.headers_sent:
            gunicorn_util.write(self.sock, self.head())
            self.headers_sent = True

    def write(self, arg):
        if (not self.headers_sent and type(arg) is bytes and len(arg) == self.response_length
                and not self.chunked and not self._omits_body):
            head = self.head()
            self.headers_sent = True
            self.sent = len(arg)
            gunicorn_util.write(self.sock, head + arg)
            return
        super().write(arg)


class BufferedConn(TConn):
    """A connection whose requests the event loop reads into `source` before a thread parses them."""

    def __init__(self, worker: BufferedThreadWorker, sock, client, server):
        super().__init__(worker.cfg, sock, client, server)
        self.worker = worker
        self.source = RequestSource()
        self.parser = get_parser(worker.cfg, self.source, client)  # (so TConn.init keeps it)
        self.framing = Framing(worker.body_limit)
        self.deadline = 0.0

    def close(self, graceful=False):
        if graceful:
            self.worker.linger(self.sock)  # not gunicorn's: it would wait for the client in the event loop
        else:
            gunicorn_util.close(self.sock)


class Handoff:
    """A worker's request threads, taking the connections whose request has arrived whole off one queue.
    gthread hands each request to a ThreadPoolExecutor (a Future with its condition, a done-callback) and wakes
    the event loop through a pipe once it is answered, to put the connection back in the poller; here
    `serve(conn)` does all of that in the thread that answered.  The threads are not daemons: like an executor's,
    they finish the requests they hold before the process exits; `shutdown` ends them once the queue is done."""

    def __init__(self, threads: int, serve):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._run, args=(serve,), name=f"fairdice-request-{i}")
                        for i in range(threads)]
        for thread in self.threads:
            thread.start()

    def submit(self, conn) -> None:
        self.queue.put(conn)

    def _run(self, serve) -> None:
        while (conn := self.queue.get()) is not None:
            serve(conn)

    def shutdown(self, wait: bool = True) -> None:
        for _ in self.threads:
            self.queue.put(None)
        if wait:
            for thread in self.threads:
                thread.join()


class _Outcome:
    """What gthread's finish_request reads of a request's Future: its result (whether to keep the connection)."""

    def __init__(self, keep):
        self.keep = keep

    def cancelled(self) -> bool:
        return False

    def result(self):
        return self.keep


class BufferedThreadWorker(ThreadWorker):
    """gthread, but a thread is given a connection only once its next request has arrived whole.

    gunicorn's gthread lets a thread read the request from the socket: a client that sends its headers and
    one byte of body, or half a request line, holds that thread until it goes away, and a handful of them
    stop the server.  Here the event loop (one thread, non-blocking sockets) receives each request into
    memory until `Framing` says it is complete, within `read_timeout` seconds of the connection being
    accepted or of its next request starting (else 408, and the connection is closed); then a thread
    parses it from memory (gunicorn's own parser) and runs the app.  A waiting client costs a socket and a
    bounded buffer; WORKER_CONNECTIONS bounds how many there are.  The thread writes the answer with
    `read_timeout` as the socket's timeout (a client that stops reading its answer is dropped), and a
    connection is closed without the event loop waiting for the client to close its end (gunicorn's
    graceful close lingers up to 2 s in the event loop)."""

    _next_beat = 0.0  # (monotonic clock) when the heartbeat is next due
    _next_parent_check = 0.0

    @classmethod
    def check_config(cls, cfg, log):
        super().check_config(cfg, log)
        if cfg.is_ssl:
            raise RuntimeError("BufferedThreadWorker serves plain HTTP/1.1: TLS belongs to a proxy in front")

    def init_process(self):
        from .app import MAX_BODY

        conf = getattr(self.app, "fairdice_settings", None) or settings()
        self.read_timeout = float(conf.read_timeout)
        self.body_limit = MAX_BODY + 1  # what the app reads of a body before refusing it (413)
        self.reading: dict[BufferedConn, None] = {}  # requests arriving, oldest (first deadline) first
        self.lingering: dict[socket.socket, float] = {}  # closed sockets still draining -> when to give up
        self.stop_reading_at: float | None = None  # once stopping: when arriving requests are given up
        self.cfg = SettledConfig(self.cfg)
        self.parked: collections.deque[BufferedConn] = collections.deque()  # kept alive by a thread, not yet listed
        super().init_process()  # (runs the worker to its end)

    def get_thread_pool(self) -> Handoff:
        return Handoff(self.cfg.threads, self._serve_connection)

    def _serve_connection(self, conn: BufferedConn) -> None:
        """(In a thread.) Answer the connection's request; then, if it stays open, put it back in the poller to
        wait for its next request (listed in `parked` first, which the event loop moves into gthread's list of
        kept-alive connections before it looks at that list); anything else (a close, the start of a pipelined
        request already read, a worker stopping) is the event loop's to finish, as gthread does."""
        try:
            keep = self.handle(conn)
        except BaseException:  # handle answers what it can: a connection it could not is closed
            keep = False
        if keep is True and self.alive and not conn.parser.unreader.buf.getvalue():
            try:
                conn.sock.setblocking(False)
                conn.set_timeout()
                self.parked.append(conn)
                self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_client_socket_readable, conn))
                return
            except (OSError, ValueError, KeyError):
                keep = False  # (the socket is gone: the event loop closes it)
                with contextlib.suppress(ValueError):
                    self.parked.remove(conn)
        self.method_queue.defer(self.finish_request, conn, _Outcome(keep))

    def _list_parked(self) -> None:
        """(Event loop.) The connections threads put back in the poller, into gthread's kept-alive list (in the
        order they were parked, so that the list stays sorted by time-out)."""
        parked = self.parked
        while parked:
            conn = parked.popleft()
            if not self.alive:  # (a stopping worker keeps its kept-alive connections briefly, as gthread does)
                conn.timeout = min(conn.timeout, time.monotonic() + STOP_KEEPALIVE_LINGER)
            self.keepalived_conns.append(conn)

    def on_client_socket_readable(self, conn, client):
        self._list_parked()
        super().on_client_socket_readable(conn, client)

    def murder_keepalived(self, force=False):
        self._list_parked()
        super().murder_keepalived(force)

    def notify(self):
        """The heartbeat the arbiter watches (a file's time stamp), at most every HOUSEKEEPING_EVERY seconds:
        gthread beats on every turn of its event loop, two turns and two file writes a request when busy."""
        now = time.monotonic()
        if now >= self._next_beat:
            self._next_beat = now + HOUSEKEEPING_EVERY
            super().notify()

    def is_parent_alive(self):
        """Whether the arbiter still runs, asked of the kernel at most every HOUSEKEEPING_EVERY seconds (gthread
        asks on every turn of its event loop)."""
        now = time.monotonic()
        if now < self._next_parent_check:
            return True
        self._next_parent_check = now + HOUSEKEEPING_EVERY
        return super().is_parent_alive()

    def handle_exit(self, sig, frame):
        super().handle_exit(sig, frame)
        watch = getattr(self.wsgi, "extensions", {}).get("fairdice_watch")
        if watch is not None:
            watch.close()  # parked watchers are answered 304 now, not cut off after the graceful timeout

    def accept(self, listener):
        try:
            sock, client = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        self.enqueue_req(BufferedConn(self, sock, client, listener.getsockname()))

    def enqueue_req(self, conn: BufferedConn):
        """Read the connection's next request (what was received already first) and serve it once whole.
        gunicorn calls this for a new connection, for a kept-alive one that became readable, and for one
        with the start of a pipelined request left over."""
        conn.sock.setblocking(False)
        conn.source.pending[:0] = conn.parser.unreader.take_buffered()
        conn.framing = Framing(self.body_limit)
        conn.deadline = time.monotonic() + self.read_timeout
        if self._receive(conn):
            self.reading[conn] = None
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._receive, conn))

    def _receive(self, conn: BufferedConn, _sock=None) -> bool:
        """Take what the client sent, then serve, refuse or drop; True while the request is still arriving."""
        try:
            data = conn.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            data = None
        except OSError:
            data = b""
        if data:
            conn.source.pending += data
        try:
            complete = conn.framing.complete(conn.source.pending)
        except HeadTooLargeError as exc:
            if exc.in_request_line:
                self._refuse(conn, 414, "request_uri_too_long", f"the request line is longer than {HEAD_LIMIT} bytes")
            else:
                self._refuse(conn, 431, "request_header_fields_too_large",
                             f"the request line and headers are longer than {HEAD_LIMIT} bytes")
            return False
        if complete and conn.framing.refuse_unread:
            # a chunked body past the limit: the app would answer 413 after reading MAX_BODY + 1 bytes, but
            # the chunk in which the limit falls may not have arrived whole, and a parser reaching the end
            # of what arrived mid-chunk answers 400; the answer is the app's 413, written here
            self._refuse(conn, 413, "request_entity_too_large",
                         f"the request body is larger than {self.body_limit - 1} bytes")
            return False
        if complete:
            self._stop_reading(conn)
            conn.data_ready = True  # (so gthread does not wait for data in the thread)
            self.tpool.submit(conn)
            return False
        if data == b"":  # the client went away before its request was whole
            self._drop(conn)
            return False
        framing = conn.framing
        if framing.expects_continue and not framing.continue_sent and framing.head_end is not None:
            framing.continue_sent = True
            self._send_now(conn.sock, b"HTTP/1.1 100 Continue\r\n\r\n")
        return True

    def _stop_reading(self, conn: BufferedConn):
        if conn in self.reading:
            del self.reading[conn]
            self.poller.unregister(conn.sock)

    def _drop(self, conn: BufferedConn):
        self._stop_reading(conn)
        self.nr_conns -= 1
        conn.close()

    def _refuse(self, conn: BufferedConn, status: int, code: str, detail: str):
        self._stop_reading(conn)
        self.nr_conns -= 1
        self._send_now(conn.sock, problem_bytes(status, code, detail))
        self.linger(conn.sock)

    @staticmethod
    def _send_now(sock, data: bytes) -> None:
        """Write without waiting (so small an answer fits in the socket's buffer; else it is lost)."""
        try:
            sock.send(data)
        except OSError:
            pass

    def murder_pending(self):
        """(Every turn of the event loop.) Also end the requests that took too long, and lingering closes."""
        super().murder_pending()
        now = time.monotonic()
        if not self.alive and self.stop_reading_at is None:
            self.stop_reading_at = now + STOP_GRACE  # slow clients must not hold up a restart
        stopped = self.stop_reading_at is not None and now >= self.stop_reading_at
        while self.reading:
            conn = next(iter(self.reading))
            if conn.deadline > now and not stopped:
                break
            if conn.source.pending:
                self._refuse(conn, 408, "request_timeout",
                             f"the request did not arrive whole within {self.read_timeout:g} s")
            else:
                self._drop(conn)  # not a word from the client: nothing to answer
        while self.lingering:
            sock, until = next(iter(self.lingering.items()))
            if until > now:
                break
            self._end_linger(sock)

    def linger(self, sock: socket.socket):
        """Close a connection once its answer has left: send FIN now, then discard what the client still
        sends until it closes too, for LINGER_SECONDS at most (closing with unread input would reset the
        connection, which can destroy the answer in flight), all without waiting in the event loop."""
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
            self.poller.register(sock, selectors.EVENT_READ, self._drain)
        except (OSError, ValueError, KeyError):
            gunicorn_util.close(sock)
            return
        self.lingering[sock] = time.monotonic() + LINGER_SECONDS

    def _drain(self, sock: socket.socket):
        try:
            if sock.recv(RECV_BYTES):
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        self._end_linger(sock)

    def _end_linger(self, sock: socket.socket):
        del self.lingering[sock]
        try:
            self.poller.unregister(sock)
        except (KeyError, ValueError, OSError):
            pass
        gunicorn_util.close(sock)

    def handle_request(self, req, conn: BufferedConn):
        """(In a thread.) Serve one request that the event loop has read."""
        if conn.framing.too_large:
            req.force_close()  # the rest of its body was never read
        elif isinstance(req.body.reader, ChunkedReader):
            # decoded now, from memory, by gunicorn's own parser: malformed chunks are refused here (400, by
            # handle_error), not met by the app in the middle of reading its body (a 500)
            req.body = Body(io.BytesIO(req.body.read()))
        if conn.framing.continue_sent:
            req._expected_100_continue = False  # the event loop has sent "100 Continue" already
        conn.sock.settimeout(self.read_timeout)
        try:
            return self._serve(req, conn)
        except TimeoutError:
            self.log.warning("dropped a connection from %s: it did not read its answer for %g s",
                             conn.client[0] if conn.client else "?", self.read_timeout)
            return False

    def _serve(self, req, conn: BufferedConn) -> bool:
        """gthread's handle_request, with OneWriteResponse as the writer: run the app, write its answer, log the
        request; whether the connection stays open."""
        environ = {}
        resp = None
        try:
            self.cfg.pre_request(self, req)
            request_start = time.monotonic()
            resp, environ = gunicorn_wsgi.create(req, conn.sock, conn.client, conn.server, self.cfg,
                                                 response_class=OneWriteResponse)
            environ["wsgi.multithread"] = True
            self.nr += 1
            if self.nr >= self.max_requests:
                if self.alive:
                    self.log.info("Autorestarting worker after current request.")
                    self.alive = False
                resp.force_close()
            if not self.alive or not self.cfg.keepalive or len(self.keepalived_conns) >= self.max_keepalived:
                resp.force_close()
            respiter = self.wsgi(environ, resp.start_response)
            try:
                if isinstance(respiter, environ["wsgi.file_wrapper"]):
                    resp.write_file(respiter)
                else:
                    for item in respiter:
                        resp.write(item)
                resp.close()
            finally:
                self.log.access(resp, req, environ, datetime.timedelta(seconds=time.monotonic() - request_start))
                if hasattr(respiter, "close"):
                    respiter.close()
            return not resp.should_close()
        except OSError:
            raise
        except (Exception, SystemExit):
            if resp and resp.headers_sent:  # (an answer begun cannot be followed by an error's answer)
                self.log.exception("Error handling request")
                gunicorn_util.close_graceful(conn.sock)
                raise StopIteration() from None
            raise
        finally:
            try:
                self.cfg.post_request(self, req, environ, resp)
            except Exception:
                self.log.exception("Exception in post_request hook")

    def handle_error(self, req, client, addr, exc):
        """(In a thread.) A request gunicorn's parser refused, or an error outside the app: answered with a
        problem document (gunicorn's own answer is an HTML page), then the connection is closed."""
        status, code, detail = parse_refusal(exc)
        if status >= 500:
            self.log.error("internal error serving %s: %s", addr[0] if addr else "?", type(exc).__name__,
                           exc_info=exc)
        answer = problem_bytes(status, code, detail)
        req = req if req is not None else getattr(exc, "req", None)  # (gunicorn's header errors carry theirs)
        if req is not None and getattr(req, "method", None) and getattr(req, "uri", None):
            self._log_refusal(req, client, addr, status, len(answer))
        try:
            gunicorn_util.write_nonblock(client, answer)
        except OSError:
            pass

    def _log_refusal(self, req, client, addr, status: int, sent: int) -> None:
        """The access log's line for a refused request, as gunicorn writes it."""
        try:
            environ = default_environ(req, client, self.cfg)
        except Exception:  # a request too malformed to describe: no line
            return
        environ["REMOTE_ADDR"] = addr[0] if addr else "-"
        resp = Response(req, client, self.cfg)
        resp.status = f"{status} {HTTPStatus(status).phrase}"
        resp.sent = sent
        self.log.access(resp, req, environ, datetime.timedelta(0))
