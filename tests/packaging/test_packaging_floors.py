"""The dependency floors CI installs (scripts/floors.sh, after the suite in scripts/test.sh):
every runtime dependency's lowest version, read from pyproject.toml by scripts/floors.py."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UNFLOORED = {"pydantic-core"}  # pydantic pins the one it needs


def _floors() -> dict[str, str]:
    done = subprocess.run([sys.executable, "scripts/floors.py"], cwd=REPO, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return dict(line.split("==", 1) for line in done.stdout.split())


def test_every_runtime_dependency_but_pydantic_core_has_a_floor_the_script_pins() -> None:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!\[ ;]", d, maxsplit=1)[0] for d in deps}
    floors = _floors()
    assert set(floors) == names - UNFLOORED
    assert floors["pyjwt"] == "2.10.1"  # what mcp 2.3 requires
    assert all(re.fullmatch(r"[0-9][0-9.]*", v) for v in floors.values()), floors


def test_the_floors_check_names_what_is_not_at_its_floor() -> None:
    """`floors.py --check` against this venv (newer versions than the floors): one line per
    dependency not at its floor, exit 1."""
    from importlib.metadata import version

    done = subprocess.run([sys.executable, "scripts/floors.py", "--check", sys.executable],
                          cwd=REPO, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1
    assert f"pydantic: floor 2.12, installed {version('pydantic')}" in done.stderr.splitlines()
    lines = done.stderr.splitlines()
    assert all(re.fullmatch(r"\S+: floor [0-9.]+, installed \S+", line) for line in lines)


def test_ci_runs_the_floors_after_the_suite() -> None:
    script = (REPO / "scripts" / "test.sh").read_text()
    assert "bash scripts/floors.sh" in script
    floors = (REPO / "scripts" / "floors.sh").read_text()
    assert "scripts/floors.py --check" in floors and "tests/cloud tests/state tests/sdk" in floors
