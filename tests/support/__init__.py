"""What the tests share, none of it a test (tests/README.md): helpers, fixtures and the paths every test reads.

`pythonpath = ["tests"]` (pyproject.toml) makes this package `support` in every folder of tests/; fixtures that
tests of several folders use are registered once, as plugins, by tests/conftest.py (`pytest_plugins`), so no
test module imports a fixture by name.  The paths are computed here, once: moving a test file changes none."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
VECTORS = TESTS / "vectors"  # SPEC §8's generated vectors (tests/vectors/build*.py) and the forged corpora
FORGED = VECTORS / "forged"
NODE_TESTS = TESTS / "node"
ARTIFACTS = REPO / "artifacts"  # screenshots of the browser tests


def vectors(name: str):
    """A vector file of tests/vectors/ (committed: a missing one is an error, not a skip)."""
    return json.loads((VECTORS / name).read_text())
