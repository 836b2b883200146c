"""Every third-party package the code imports is declared in pyproject.toml.

The library (npa_sop_tui, screens, npa) may import only `[project] dependencies`; tests and
benchmarks may also import the `test` extra. A package that merely arrives as a dependency of
another (cryptography through asyncssh) must still be declared when we import it ourselves.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# postdeploy: tests/jobs reuses the GPU lab fixtures of tests/postdeploy/conftest.py;
# tests: tests/report reuses the TUI's status fakes (tests.tui.fakes)
FIRST_PARTY = {
    *("npa_sop_tui", "npa", "testkit", "bench", "fakes", "postdeploy", "tests", "__future__"),
}


def _declared(requirements: list[str]) -> set[str]:
    return {_normal(re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0]) for req in requirements}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imports(*folders: str) -> dict[str, set[str]]:
    """Top-level third-party module -> the files importing it."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in (ROOT / folder).rglob("*.py"):
            if path.resolve().is_relative_to(ROOT / ".venv"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in FIRST_PARTY:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def _undeclared(imports: dict[str, set[str]], declared: set[str]) -> list[str]:
    distributions = importlib.metadata.packages_distributions()
    problems = []
    for module, files in sorted(imports.items()):
        dists = {_normal(d) for d in distributions.get(module, [module])}
        if not dists & declared:
            problems.append(f"{module} ({', '.join(sorted(dists))}) in {', '.join(sorted(files))}")
    return problems


def _project() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_library_imports_only_declared_runtime_dependencies() -> None:
    runtime = _declared(_project()["dependencies"])
    problems = _undeclared(_imports("npa_sop_tui", "screens", "npa"), runtime)
    assert not problems, "add to [project] dependencies: " + "; ".join(problems)


def test_tests_and_benchmarks_import_only_declared_dependencies() -> None:
    project = _project()
    allowed = _declared(project["dependencies"] + project["optional-dependencies"]["test"])
    problems = _undeclared(_imports("tests", "bench"), allowed)
    assert not problems, "add to the test extra: " + "; ".join(problems)
