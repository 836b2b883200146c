"""The lowest version each runtime dependency allows: `name==floor` lines (pip constraints)
from the `>=` of its line in pyproject.toml's [project].dependencies.

    python scripts/floors.py                 # print the constraints
    python scripts/floors.py --check PYTHON  # does PYTHON's environment hold exactly them?

A dependency without a floor (pydantic-core: pydantic pins it) is left to the resolver.
scripts/floors.sh installs these into a venv of their own and runs the cloud, state and SDK
tests there, so a floor that cannot install or no longer works fails CI.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_LINE = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*>=\s*([0-9][^,;\s]*)")


def floors(pyproject: Path = REPO / "pyproject.toml") -> dict[str, str]:
    """name (as written) → lowest version allowed."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    found: dict[str, str] = {}
    for line in deps:
        match = _LINE.match(line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", version.split("+")[0])]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


_LIST = (
    "import json, importlib.metadata as m; "
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)


def mismatches(python: str) -> list[str]:
    """Floors that `python`'s environment does not hold exactly."""
    listed = subprocess.run([python, "-c", _LIST], capture_output=True, text=True,
                            check=True).stdout  # fmt: skip
    installed = {_key(name): version for name, version in json.loads(listed).items()}
    wrong = []
    for name, floor in floors().items():
        have = installed.get(_key(name))
        if have is None or _release(have) != _release(floor):
            wrong.append(f"{name}: floor {floor}, installed {have or 'nothing'}")
    return wrong


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        wrong = mismatches(argv[1])
        for line in wrong:
            print(line, file=sys.stderr)
        return 1 if wrong else 0
    for name, floor in floors().items():
        print(f"{name}=={floor}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
