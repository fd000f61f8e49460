"""The JavaScript linter (ESLint, eslint.config.js) passes over the page (api/static) and the Node tests
(tests/node): no unused variable, no function over complexity 15. The linter is a pinned dev dependency of
package.json, installed by `npm ci` into node_modules/; without it these tests are skipped, except where
FAIRDICE_REQUIRE_LINT=1 (as in CI), where they fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import REPO

ESLINT = REPO / "node_modules" / ".bin" / "eslint"
NODE = shutil.which("node")


@pytest.fixture(scope="module")
def eslint() -> list[str]:
    """The command that runs the project's ESLint (or a skip, or in CI a failure, when it is not installed)."""
    missing = ("Node is not installed" if NODE is None
               else None if ESLINT.exists() else "ESLint is not installed (run `npm ci` at the repository's root)")
    if missing:
        (pytest.fail if os.environ.get("FAIRDICE_REQUIRE_LINT") == "1" else pytest.skip)(missing)
    return [str(ESLINT), "--max-warnings", "0"]


def lint_text(eslint: list[str], text: str, as_file: str) -> list[str]:
    """The rule ids ESLint reports for `text` linted as if it were the file `as_file` of the repository."""
    done = subprocess.run([*eslint, "--format", "json", "--stdin", "--stdin-filename", as_file], input=text,
                          capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert done.returncode in (0, 1), done.stderr
    return [m.get("ruleId") for f in json.loads(done.stdout) for m in f["messages"]]


def test_eslint_passes_over_the_page_and_the_node_tests(eslint):
    done = subprocess.run([*eslint, "--format", "json"], capture_output=True, text=True, timeout=600, cwd=REPO,
                          check=False)
    assert done.returncode in (0, 1), done.stderr  # 2: the configuration or the linter itself failed
    files = json.loads(done.stdout)
    problems = [f"{Path(f['filePath']).relative_to(REPO)}:{m.get('line')}:{m.get('column')} {m.get('ruleId')}: "
                f"{m['message']}" for f in files for m in f["messages"]]
    assert not problems and done.returncode == 0, "ESLint (npm run lint):\n" + "\n".join(problems)
    linted = {Path(f["filePath"]).relative_to(REPO) for f in files}
    ours = {p.relative_to(REPO)
            for p in [*(REPO / "api" / "static").rglob("*.js"), *(REPO / "tests" / "node").glob("*.mjs")]}
    assert ours <= linted, f"not linted: {sorted(map(str, ours - linted))}"


def test_eslint_refuses_a_function_over_complexity_15(eslint):
    def branches(n: int) -> str:  # a function of complexity 1 + n
        ifs = "".join(f"  if (x === {k}) return {k};\n" for k in range(n))
        return "export function f(x) {\n" + ifs + "  return -1;\n}\n"

    assert lint_text(eslint, branches(14), "api/static/probe.js") == []
    assert lint_text(eslint, branches(15), "api/static/probe.js") == ["complexity"]
    assert lint_text(eslint, branches(15), "tests/node/probe.test.mjs") == ["complexity"]


def test_eslint_refuses_an_unused_variable_in_the_page_and_the_node_tests(eslint):
    text = 'export function f(doc) {\n  const unused = 1;\n  const { signature, ...rest } = doc;\n  return rest;\n}\n'
    for as_file in ("api/static/probe.js", "tests/node/probe.test.mjs"):
        assert lint_text(eslint, text, as_file) == ["no-unused-vars"], as_file  # (the rest sibling is no fault)
