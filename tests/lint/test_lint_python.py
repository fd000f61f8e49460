"""The Python linter (ruff, its rules chosen in pyproject.toml's [tool.ruff]) passes over the whole repository:
pyflakes, pycodestyle's errors, bugbear, pyupgrade, no `noqa` that hides nothing, and no function over
complexity 15 outside the allow-list (each entry a `noqa: C901` with its reason, listed in pyproject.toml).
ruff is a pinned dev dependency, so README's install brings it."""

from __future__ import annotations

import re
import subprocess
import sys
from support import REPO

RUFF = [sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(REPO / "pyproject.toml")]


def ruff_codes(text: str, as_file: str) -> list[str]:
    """The rule codes ruff reports for `text` linted as if it were the file `as_file` of the repository."""
    done = subprocess.run([*RUFF, "--output-format", "concise", "--stdin-filename", as_file, "-"], input=text,
                          capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert done.returncode in (0, 1), done.stderr  # 2: the configuration or ruff itself failed
    return re.findall(r":\d+:\d+: ([A-Z]+\d+) ", done.stdout)


def test_ruff_passes_over_the_repository():
    done = subprocess.run([*RUFF, "--output-format", "concise", "."], capture_output=True, text=True, timeout=300,
                          cwd=REPO, check=False)
    assert done.returncode == 0, f"ruff check (pyproject.toml's rules):\n{done.stdout}{done.stderr}"


def test_ruff_refuses_a_function_over_complexity_15():
    def branches(n: int) -> str:  # a function of complexity 1 + n
        ifs = "".join(f"    if x == {k}:\n        return {k}\n" for k in range(n))
        return "def f(x):\n" + ifs + "    return -1\n"

    for as_file in ("fairdice/probe.py", "api/probe.py", "verifier/probe.py", "tests/probe.py"):
        assert ruff_codes(branches(14), as_file) == [], as_file
        assert ruff_codes(branches(15), as_file) == ["C901"], as_file


def test_the_complexity_allow_list_is_the_one_pyproject_names():
    """Every `noqa: C901` in the code is an entry of pyproject.toml's allow-list, and says why."""
    listed = set(re.findall(r'^#\s+(\S+\.py):(\w+)', (REPO / "pyproject.toml").read_text(), re.M))
    found = set()
    for path in [*REPO.glob("fairdice/**/*.py"), *REPO.glob("api/**/*.py"), *REPO.glob("verifier/**/*.py"),
                 *REPO.glob("tests/**/*.py"), *REPO.glob("bench/*.py"), *REPO.glob("tools/*")]:
        if path.suffix != ".py" or path.name == "test_lint_python.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if "noqa: C901" in line:
                name = re.search(r"def (\w+)", line)
                assert name and re.search(r"noqa: C901 \(.+\)", line), f"{path}: {line.strip()}"
                found.add((str(path.relative_to(REPO)), name.group(1)))
    assert found == listed, f"noqa: C901 in the code {sorted(found)} but pyproject.toml lists {sorted(listed)}"


def test_ruff_refuses_an_unused_import_and_a_noqa_that_hides_nothing():
    assert ruff_codes("import os\n", "fairdice/probe.py") == ["F401"]
    assert ruff_codes("x = 1  # noqa: F401\n", "api/probe.py") == ["RUF100"]
