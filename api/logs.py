"""What `fairdice serve` writes to standard error: its log and, with --access-log, a line per request.

- `StderrLines` takes the place of sys.stderr in the server's processes: a line written goes into a bounded
  queue that a thread of its own writes out.  A reader that stalls (a pipe nobody reads) costs lines, which
  are dropped and counted, never a request thread; a reader that is gone (EPIPE) ends the writing, and the
  server goes on serving.  A line is never split by a dropped half.
- `ServerLog` is gunicorn's logger for the server: its error log and access log both go to standard error,
  and an access line is written by `access_line`, from a few fields only: never a header's value (a seat
  token, an Idempotency-Key), a URL fragment, or a query value other than a whole number (the API's own
  query parameters are all whole numbers; anything else a client puts there may be a secret).
"""

from __future__ import annotations

import atexit
import os
import queue
import re
import sys
import threading
import time

from gunicorn.glogging import Logger

QUEUE_ITEMS = 1000  # lines (or a traceback's lines written at once) waiting for the reader; more are dropped
ITEM_CHARS = 16 * 1024  # a longer write is cut here (a traceback of that size says what it has to say)
EXIT_DRAIN_SECONDS = 1.0  # a process ending waits this long at most for its queued lines to be written
RETRY_SECONDS = 0.05  # a non-blocking standard error that is full is tried again after this long


class StderrLines:
    """A text stream for sys.stderr whose writes never block (see the module's docstring).

    Lock-free on the writing side (a SimpleQueue, whose put is reentrant), so that a signal handler or a
    thread interrupted mid-write can write too; a partial line waits, per thread, for its end.  After a fork
    the child starts its own writer thread on first use."""

    errors = "backslashreplace"
    closed = False

    def __init__(self, fd: int, encoding: str = "utf-8"):
        self.fd = fd
        self.encoding = encoding
        self.broken = False  # the reader is gone: nothing more is written
        self._fresh()
        os.register_at_fork(after_in_child=self._fresh)

    def _fresh(self) -> None:
        self.dropped = 0
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._writing = False  # the writer has taken an item off the queue and not yet written it
        self._local = threading.local()
        self._writer: threading.Thread | None = None

    # --- the stream, as print, logging and tracebacks use it ---------------------------------------------

    def write(self, text: str) -> int:
        if self.broken or not text:
            return len(text)
        pending = getattr(self._local, "pending", "") + text
        cut = pending.rfind("\n") + 1
        if cut == 0 and len(pending) < ITEM_CHARS:
            self._local.pending = pending
            return len(text)
        self._local.pending = pending[cut:] if cut else ""
        self._put(pending[:cut] if cut else pending)
        return len(text)

    def flush(self) -> None:
        pending = getattr(self._local, "pending", "")
        if pending:
            self._local.pending = ""
            self._put(pending)

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return False

    # --- the queue and its writer ------------------------------------------------------------------------

    def _put(self, text: str) -> None:
        if self.broken:
            return
        if self._writer is None:
            self._start_writer()
        if self._queue.qsize() >= QUEUE_ITEMS:
            self.dropped += 1  # (+= may lose a count when threads race: the notice says "at least")
            return
        self._queue.put(text if len(text) <= ITEM_CHARS else text[:ITEM_CHARS] + " [...]\n")

    def _start_writer(self) -> None:
        writer = threading.Thread(target=self._write_out, name="fairdice-stderr", daemon=True)
        self._writer = writer
        writer.start()

    def _write_out(self) -> None:
        while True:
            text = self._queue.get()
            self._writing = True
            dropped, self.dropped = self.dropped, 0
            if dropped:
                text = f"fairdice: at least {dropped} log lines dropped: standard error was not read\n" + text
            try:
                self._write_all(text.encode(self.encoding, "backslashreplace"))
            except OSError:  # EPIPE (the reader is gone) or the descriptor is closed: stop writing
                self.broken = True
                return
            finally:
                self._writing = False

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self.fd, view):]
            except BlockingIOError:  # a descriptor someone made non-blocking: wait here, in this thread
                time.sleep(RETRY_SECONDS)
            except InterruptedError:
                pass

    def drain(self, timeout: float) -> None:
        """Wait at most `timeout` seconds for what this process queued to be written (at exit)."""
        self.flush()
        deadline = time.monotonic() + timeout
        idle = 0  # looks in a row that found nothing queued or being written (one could fall between get and flag)
        while not self.broken and self._writer is not None and idle < 2 and time.monotonic() < deadline:
            idle = idle + 1 if not self._writing and self._queue.empty() else 0
            time.sleep(0.01)


def install_stderr() -> None:
    """Make sys.stderr a StderrLines over the process's standard error (once; not when sys.stderr has no
    descriptor, as under a test runner that captures it)."""
    if isinstance(sys.stderr, StderrLines):
        return
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return
    lines = StderrLines(fd, getattr(sys.stderr, "encoding", None) or "utf-8")
    sys.stderr = lines
    atexit.register(lines.drain, EXIT_DRAIN_SECONDS)


# --- the access log ---------------------------------------------------------------------------------------

_QUERY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,31}")  # a parameter's name as APIs name them
_QUERY_VALUE = re.compile(r"[0-9]{1,9}")  # what the API's own parameters take (since, limit, after, wait)
_UNPRINTABLE = re.compile(r'[^\x21-\x7e ]|["\\]')
REDACTED = "***"


def redacted_target(target: str) -> str:
    """A request target (or a Referer) fit for a log: without its fragment, and with every query name that
    does not look like a parameter's and every value that is not a whole number replaced by ***."""
    path, has_query, query = target.partition("#")[0].partition("?")
    if not has_query:
        return path
    kept = []
    for item in query.split("&"):
        name, has_value, value = item.partition("=")
        name = name if not name or _QUERY_NAME.fullmatch(name) else REDACTED
        value = value if not value or _QUERY_VALUE.fullmatch(value) else REDACTED
        kept.append(f"{name}={value}" if has_value else name)
    return f"{path}?{'&'.join(kept)}"


def _printable(text: str) -> str:
    """A field of a log line: quotes, backslashes and anything but printable ASCII escaped (no line of the
    log can be forged by what a client sends)."""
    return _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", text)


def access_line(environ: dict, status: str, sent: int | None, seconds: float) -> str:
    """One request in the combined log format, redacted, with its duration in seconds at the end:
    `203.0.113.5 - - [01/Dec/2026:12:00:00 +0000] "POST /v1/games/abc/roll HTTP/1.1" 200 2710 "-" "curl/8.5" 0.002`."""
    request = " ".join((environ.get("REQUEST_METHOD") or "-", redacted_target(environ.get("RAW_URI") or ""),
                        environ.get("SERVER_PROTOCOL") or "-"))
    referer = environ.get("HTTP_REFERER")
    return (f"{_printable(environ.get('REMOTE_ADDR') or '-')} - - [{time.strftime('%d/%b/%Y:%H:%M:%S %z')}] "
            f"\"{_printable(request)}\" {str(status).split(None, 1)[0]} {sent if sent is not None else '-'} "
            f"\"{_printable(redacted_target(referer)) if referer else '-'}\" "
            f"\"{_printable(environ.get('HTTP_USER_AGENT') or '-')}\" {seconds:.6f}")


class ServerLog(Logger):
    """gunicorn's logger for `fairdice serve` (its `logger_class`): standard error is a StderrLines, the error
    log and the access log ("-") both go there, and access lines are `access_line`'s.  gunicorn's own access
    line hands every request header to the logging call (a failed write then printed them, seat tokens
    included, with its traceback): here the line is made first, from the fields above, and logged as is."""

    def __init__(self, cfg):
        install_stderr()
        super().__init__(cfg)

    def _set_handler(self, log, output, fmt, stream=None):
        super()._set_handler(log, output, fmt, sys.stderr if output == "-" else stream)

    def access(self, resp, req, environ, request_time):
        if not self.access_log_enabled:
            return
        sent = getattr(resp, "sent", None)
        seconds = request_time.total_seconds()
        self.access_log.info(access_line(environ, resp.status, sent, seconds))

