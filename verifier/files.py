"""Finding logs on disk and reading one; input that is not a log at all becomes Result.error."""

from __future__ import annotations

import json
import os

from .replay import Result, verify_document


def find_logs(paths: list[str]) -> tuple[list[str], list[str]]:
    """(log files, paths that do not exist). A directory is searched recursively for *.json."""
    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".json")]
        elif os.path.exists(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def read_log(path: str):
    """The parsed JSON object, or a string saying why the file is not a log at all."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"cannot read the file: {e.strerror or e}"
    if not data.strip():
        return "empty file"
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constants)
    except UnicodeDecodeError as e:
        return f"not UTF-8 text ({e.reason} at byte {e.start})"
    except (ValueError, RecursionError) as e:
        return f"not JSON ({e})"
    if type(doc) is not dict:
        kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
        return f"not a JSON object (the document is {kind.get(type(doc), 'null')})"
    return doc


def verify_file(path: str, **options) -> Result:
    doc = read_log(path)
    if isinstance(doc, str):
        return Result(path, error=doc)
    return verify_document(doc, path, **options)
