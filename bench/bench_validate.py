"""Cold `npa soperator validate` of the seed example vs the floor `python -c "import pydantic,
yaml"` (P1, target ≤ 1.5×).

All commands run as fresh processes, interleaved, in the same run on the same machine, so
the ratio says what the CLI costs on top of the two libraries it cannot avoid. The file is
the seed example (`npa soperator example`), the spec a newcomer validates first. A second,
informative floor builds and validates one pydantic model and parses one YAML file: the
least any pydantic + YAML validator pays (`import pydantic` alone loads none of pydantic's
model machinery).
Run: `.venv/bin/python -m bench validate` (NPA_BENCH_ROUNDS to change the count).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Ratio

MODEL_FLOOR = (
    "import pydantic, yaml\n"
    "class M(pydantic.BaseModel):\n"
    "    name: str\n"
    "M.model_validate(yaml.safe_load(open(__import__('sys').argv[1])))"
)


def _npa_command() -> list[str]:
    script = Path(sys.executable).parent / "npa"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from npa_sop_tui.cli import main; sys.exit(main())"]


def _time(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> list[Ratio]:
    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "15"))
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "NPA_HOME": home, "PYTHONDONTWRITEBYTECODE": "0"}
        seed = Path(home) / "cluster.yaml"
        seed.write_bytes(
            subprocess.run(
                [*_npa_command(), "soperator", "example"], env=env, capture_output=True, check=True
            ).stdout
        )
        commands = {
            "validate": [*_npa_command(), "soperator", "validate", "--spec", str(seed)],
            "floor": [sys.executable, "-c", "import pydantic, yaml"],
            "model floor": [sys.executable, "-c", MODEL_FLOOR, str(seed)],
        }
        for cmd in commands.values():  # warm the OS file cache and .pyc files; not measured
            _time(cmd, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, cmd in commands.items():
                times[name].append(_time(cmd, env))
    med = {name: statistics.median(values) * 1000 for name, values in times.items()}
    print(f"rounds: {rounds} (interleaved; medians)")
    for name, values in times.items():
        print(
            f"  {name:12s} median {med[name]:6.1f} ms "
            f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f})"
        )
    return [
        Ratio(
            "P1 validate",
            "cold `npa soperator validate` (seed example)",
            med["validate"],
            '`python -c "import pydantic, yaml"`',
            med["floor"],
            target="≤ 1.5",
        ),
        Ratio(
            "P1 validate",
            "the same",
            med["validate"],
            "one pydantic model validated from one YAML file",
            med["model floor"],
        ),
    ]


if __name__ == "__main__":
    for row in main():
        print(row.line())
