"""The layers the tree shows, held by test: a pure core, adapters over it, two front ends, a verifier apart.

    fairdice.edges (the `fairdice` command) ──▶ fairdice.adapters ──▶ fairdice (core)
    api (the server)                        ──▶ fairdice.adapters ──▶ fairdice (core)
    fairdice.edges ┄┄▶ api: by name only (`fairdice serve`, `keys`, `admin`)
    fairdice.edges, api ──▶ verifier (the client and the server read logs with it), which imports nothing of ours

- `fairdice/` except `fairdice/adapters/`, `fairdice/edges/` and `__main__` is the pure core.  It may import
  only what is listed here (an allow-list, so a new import is a decision someone writes down), and nothing
  of the layers above it.
- `fairdice/adapters/` (the optimal tables' file cache, argparse types) touches the world; both front ends
  use it, so it imports the core only.
- `fairdice/edges/` (command line, HTTP client, terminal game) may use the world and the adapters, but not
  `api`: the server's modules are named by the command as strings and imported only when chosen.
- `api/` may use the core and the adapters, never `fairdice.edges` (which names it): every arrow between
  two packages runs one way (`LAYERS`, checked for cycles, and every import and module named as a string).
- `verifier/` imports the standard library and `cryptography`, nothing of ours.
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO as ROOT


CORE_STDLIB = {
    "__future__", "bisect", "collections", "collections.abc", "dataclasses", "enum", "functools", "hashlib",
    "hmac", "itertools", "json", "math", "operator", "re", "statistics", "types", "typing",
    # loading the core's own modules and reading its own package data (measured.json, the tables'
    # manifest): part of loading the program, like import; nothing outside the installed package
    "importlib", "importlib.resources",
}
CORE_THIRD_PARTY_PREFIXES = ("cryptography.", "numpy")
HEAVY = ("flask", "werkzeug", "gunicorn", "requests", "numpy", "psycopg", "api")


def _modules(package: str):
    for path in sorted((ROOT / package).rglob("*.py")):
        yield path, ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _imports(path: Path, module: str):
    """(line, absolute module name) of every import in the file, at any depth (lazy imports count)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            yield node.lineno, name


# layer -> the layers its modules may import (its own included).  An arrow runs one way: LAYERS has no cycle.
LAYERS = {
    "core": {"core"},
    "adapters": {"core", "adapters"},
    "edges": {"core", "adapters", "edges", "verifier"},
    "api": {"core", "adapters", "api", "verifier"},
    "verifier": {"verifier"},
}
# layer -> layers whose modules it may name as strings and import when chosen (importlib), besides LAYERS:
# the `fairdice` command starts the server's commands, so that a client-only install loads no Flask
BY_NAME = {"edges": {"api"}}


def layer_of(module: str) -> str | None:
    """The layer of one of our modules, by its dotted name (None: not ours)."""
    top = module.split(".")[0]
    if top in ("api", "verifier"):
        return top
    if top != "fairdice":
        return None
    if module == "fairdice.__main__" or module.startswith("fairdice.edges"):  # `python -m fairdice` is the command
        return "edges"
    return "adapters" if module.startswith("fairdice.adapters") else "core"


def _named_modules(path: Path, ours: set[str]):
    """(line, name) of every string constant that is exactly the dotted name of one of our modules: a module
    imported by name (importlib.import_module) is an arrow too.  (A bare "fairdice" is also a directory's
    and a logger's name, so only dotted names count.)"""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value \
                and node.value in ours:
            yield node.lineno, node.value


def _all_modules():
    return [pm for package in ("fairdice", "api", "verifier") for pm in _modules(package)]


def _our_names(modules) -> set[str]:
    """Every module and package name of ours ("api", "fairdice.edges", "fairdice.edges.cli", ...)."""
    names = set()
    for _, module in modules:
        parts = module.split(".")
        names |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return {n.removesuffix(".__init__") for n in names if n != "__init__"}


def wrong_way_arrows(modules, ours: set[str]) -> list[str]:
    """Each import, or module named as a string, that crosses the layers against LAYERS and BY_NAME."""
    bad = []
    for path, module in modules:
        mine = layer_of(module)
        arrows = [(line, name, LAYERS[mine]) for line, name in _imports(path, module)]
        arrows += [(line, name, LAYERS[mine] | BY_NAME.get(mine, set())) for line, name in _named_modules(path, ours)]
        for line, name, allowed in arrows:
            theirs = layer_of(name)
            if theirs is not None and theirs not in allowed:
                bad.append(f"{path.name}:{line}: {mine} -> {theirs} ({name})")
    return bad


def test_the_layers_run_one_way():
    """The allowed arrows between layers, by import or by name, form no cycle."""
    graph = {layer: (allowed | BY_NAME.get(layer, set())) - {layer} for layer, allowed in LAYERS.items()}
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises CycleError on a cycle
    assert order.index("core") < order.index("adapters") < order.index("api") < order.index("edges")
    assert order.index("verifier") < order.index("api")


def test_every_arrow_between_our_packages_runs_the_way_the_layers_allow():
    modules = _all_modules()
    bad = wrong_way_arrows(modules, _our_names(modules))
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


@pytest.mark.parametrize("module, text, arrow", [
    ("api.sample", "from fairdice.edges import cli\n", "api -> edges"),
    ("api.sample", "import importlib\nimportlib.import_module('fairdice.edges.cli')\n", "api -> edges"),
    ("fairdice.bots.sample", "def f():\n    from ..adapters import table_cache\n", "core -> adapters"),
    ("fairdice.sample", "from .edges import cli\n", "core -> edges"),
    ("fairdice.adapters.sample", "from ..edges.cli import main\n", "adapters -> edges"),
    ("fairdice.adapters.sample", "import api.engines\n", "adapters -> api"),
    ("fairdice.edges.sample", "from api import serve\n", "edges -> api"),
    ("verifier.sample", "from fairdice import derive\n", "verifier -> core"),
], ids=["api-imports-edges", "api-names-edges", "core-imports-adapters", "core-imports-edges",
        "adapters-import-edges", "adapters-import-api", "edges-import-api", "verifier-imports-core"])
def test_the_layer_check_sees_an_arrow_the_wrong_way(tmp_path, module, text, arrow):
    """The checker itself: each wrong-way arrow, lazy or relative or by name, is found (so the test above
    cannot pass by not looking); and a by-name arrow that BY_NAME allows is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(text)
    ours = _our_names(_all_modules())
    assert [line.split(" (")[0] for line in wrong_way_arrows([(sample, module)], ours)] == [f"sample.py:{text.count(chr(10))}: {arrow}"]
    allowed = tmp_path / "allowed.py"
    allowed.write_text("COMMANDS = {'serve': 'api.serve'}\n")
    assert wrong_way_arrows([(allowed, "fairdice.edges.sample")], ours) == []


def _core_modules():
    return [(p, m) for p, m in _modules("fairdice") if layer_of(m) == "core"]


def test_the_core_imports_only_what_its_allow_list_names():
    bad = []
    for path, module in _core_modules():
        for line, name in _imports(path, module):
            if layer_of(name) == "core":
                continue
            if name in CORE_STDLIB or name.startswith(CORE_THIRD_PARTY_PREFIXES):
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not bad, "the pure core imports outside its allow-list:\n" + "\n".join(bad)


def test_the_allow_list_test_sees_a_forbidden_import(tmp_path):
    """The checker itself: a lazy `import socket` inside a function and a relative import of an edge are both
    found (so the test above cannot pass by not looking)."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    import socket\n    from ..edges import table_cache\n")
    found = {name for _, name in _imports(sample, "fairdice.bots.sample")}
    assert found == {"socket", "fairdice.edges"}


def test_edges_do_not_import_the_server():
    bad = [f"{p.relative_to(ROOT)}:{line}: {name}" for p, m in _modules("fairdice/edges")
           for line, name in _imports(p, m) if name == "api" or name.startswith("api.")]
    assert not bad


def test_the_verifier_imports_nothing_of_ours():
    allowed = set(sys.stdlib_module_names) | {"cryptography"}
    bad = []
    for path, module in _modules("verifier"):
        for line, name in _imports(path, module):
            top = name.split(".")[0]
            if top != "verifier" and top not in allowed:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not bad


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("code", [
    "import fairdice.game",
    "import fairdice.derive, fairdice.rules, fairdice.log",
    "import sys; sys.argv = ['fairdice', 'simulate', '--help']\n"
    "from fairdice.edges.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass",
], ids=["game", "derive-rules-log", "simulate-help"])
def test_light_entry_points_load_neither_the_server_nor_numpy(code):
    loaded = _loaded_after(code)
    assert "fairdice" in loaded  # the probe did import what it names
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_the_probe_sees_a_heavy_import():
    assert "numpy" in _loaded_after("import fairdice.bots.policies")
