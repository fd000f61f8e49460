"""The install is pinned: README's command installs exactly the versions of requirements.lock, and the lock
satisfies every range that pyproject.toml declares (base and dev)."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support import REPO as ROOT

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")
NOT_PINNED = {"fairdice", "pip", "setuptools", "wheel"}  # the project itself, and what a venv brings along


def lock() -> dict[str, str]:
    pins = {}
    for n, line in enumerate((ROOT / "requirements.lock").read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"requirements.lock:{n}: not an exact pin: {line!r}"
        pins[canonicalize_name(match[1])] = match[2]
    return pins


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]]


def test_the_lock_pins_every_declared_dependency_within_its_range():
    pins = lock()
    for req in declared():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is declared in pyproject.toml but not pinned in requirements.lock"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"requirements.lock pins {req.name}=={pins[name]}, outside pyproject.toml's {req.specifier}"


@pytest.mark.skipif(sys.prefix == sys.base_prefix,
                    reason="not in a virtual environment: README's install puts the pinned set in .venv")
def test_the_environment_has_exactly_the_locked_versions():
    pins = lock()
    installed = {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    unpinned = {n: v for n, v in installed.items() if n not in pins and n not in NOT_PINNED}
    assert not unpinned, f"installed but not in requirements.lock: {unpinned}"
    wrong = {n: (installed[n], pins[n]) for n in pins if n in installed and installed[n] != pins[n]}
    assert not wrong, f"installed version differs from the lock (installed, locked): {wrong}"
    missing = sorted(set(pins) - set(installed))
    assert not missing, f"pinned in requirements.lock but not installed: {missing}"
