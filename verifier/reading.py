"""Reading an input file safely: only a regular file of at most 16 MiB. A FIFO named *.json must not hang a
directory scan, and a symlink to /dev/zero must not fill the memory (logs, receipts and key files alike)."""

from __future__ import annotations

import os
import stat

from .errors import VerifierError

MAX_LOG_BYTES = 16 * 1024 * 1024


class UnusableFileError(VerifierError):
    """The file is not a log at all (the message says why)."""


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str, limit: int = MAX_LOG_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Opened without blocking (a FIFO would
    wait for a writer), checked on the open descriptor (no race with a rename), read to one byte
    past the limit (a device or a growing file is never read to its end)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise UnusableFileError(f"cannot read the file: {e.strerror or e}") from None
    with open(fd, "rb", closefd=True) as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise UnusableFileError(f"not a regular file ({kind})")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise UnusableFileError(f"cannot read the file: {e.strerror or e}") from None
    if len(data) > limit:
        raise UnusableFileError(f"larger than {limit // (1024 * 1024)} MiB, the most a log may be")
    return data
