"""Directories the server makes are the owner's alone."""

from __future__ import annotations

import os
from pathlib import Path


def make_private_dirs(path: Path) -> None:
    """Create `path` and every missing parent, each 0700 whatever the umask (Path.mkdir(parents=True) would
    give the parents the umask's default)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another process made it meanwhile: its mode is its maker's
        os.chmod(folder, 0o700)
