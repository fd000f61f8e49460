"""The layers the tree shows, held by test: a pure core, its edges, the API above them, a verifier apart.

- `fairdice/` except `fairdice/edges/` is the pure core.  It may import only what is listed here (an
  allow-list, so a new import is a decision someone writes down), and nothing of its own edges.
- `fairdice/edges/` (command line, HTTP client, terminal game, table cache) may use the world, but not
  `api`: the server's module is named by `fairdice serve` as a string and imported only when chosen.
- `verifier/` imports the standard library and `cryptography`, nothing of ours.
"""

from __future__ import annotations

import ast
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


def _core_modules():
    return [(p, m) for p, m in _modules("fairdice") if not m.startswith("fairdice.edges") and m != "fairdice.__main__"]


def test_the_core_imports_only_what_its_allow_list_names():
    bad = []
    for path, module in _core_modules():
        for line, name in _imports(path, module):
            ours = name == "fairdice" or name.startswith("fairdice.")
            if ours and not name.startswith("fairdice.edges"):
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
