"""Finding logs on disk and reading one; input that is not a log at all becomes Result.error.

Only a regular file of at most 16 MiB is read: a FIFO named *.json must not hang a directory scan,
and a symlink to /dev/zero must not fill the memory. The bytes must be strict JSON (strictjson.py)."""

from __future__ import annotations

import os

from . import strictjson
from .reading import MAX_LOG_BYTES, UnusableFileError, read_bytes  # noqa: F401  (part of this module's interface)
from .optimal import TableError
from .replay import Result, verify_document
from .sessions import is_session_log, verify_session

SESSION_OPTIONS = ("session_receipts", "app_key")  # (options of session logs only)

INTERNAL_ERROR = "internal error of the verifier"  # Result.error when verify_document itself failed


def find_logs(paths: list[str]) -> tuple[list[str], list[str]]:
    """(log files, paths that do not exist or cannot be read). A directory is searched recursively for *.json;
    a subdirectory that cannot be listed is reported, not silently skipped."""
    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path, onerror=lambda e: missing.append(e.filename)):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".json")]
        elif os.path.exists(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}


def read_log(path: str) -> dict:
    """The parsed log: a JSON object. UnusableFileError says why the file is not a log at all."""
    data = read_bytes(path)
    if not data.strip():
        raise UnusableFileError("empty file")
    try:
        doc = strictjson.loads(data)
    except strictjson.StrictJSONError as e:
        raise UnusableFileError(str(e)) from None
    if type(doc) is not dict:
        raise UnusableFileError(f"not a JSON object (the document is {_JSON_KINDS.get(type(doc), 'null')})")
    return doc


def verify_file(path: str, **options) -> Result:
    """The verdict on one file; never raises, so that one file cannot stop a batch."""
    try:
        doc = read_log(path)
    except UnusableFileError as e:
        return Result(path, error=str(e))
    session_options = {k: options.pop(k) for k in SESSION_OPTIONS if k in options}
    try:
        if is_session_log(doc):  # SPEC §10: a session's log, not a game's
            return verify_session(doc, path, **options, **session_options)
        return verify_document(doc, path, **options)
    except TableError:
        raise  # an optimal game whose table is missing: the user's to provide (a usage error), not this log's fault
    except Exception as e:  # a bug here, not in the log: still one result line, and exit 2, not a traceback
        return Result(path, error=f"{INTERNAL_ERROR} ({type(e).__name__}: {e}); please report it with this file")
