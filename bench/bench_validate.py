"""Cold `npa soperator validate` of the seed example vs the floor `python -c "import pydantic,
yaml"` (P1, target ≤ 1.5×).

All commands run as fresh processes, interleaved, in the same run on the same machine, so
the ratio says what the CLI costs on top of the two libraries it cannot avoid. The file is
the seed example (`npa soperator example`), the spec a newcomer validates first. A second,
informative floor builds and validates one pydantic model and parses one YAML file: the
least any pydantic + YAML validator pays (`import pydantic` alone loads none of pydantic's
model machinery; `validate` does not load it either once its schema cache exists, see
`npa_sop_tui/spec/lean.py`; the warm-up run below writes that cache). The CPU time each
process used is shown too: on a loaded machine it varies far less than wall-clock time.
Run: `.venv/bin/python -m bench validate` (NPA_BENCH_ROUNDS to change the count).
"""

from __future__ import annotations

import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Ratio, paired_ratio

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
    return [
        sys.executable,
        "-c",
        "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())",
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system) of one run of `cmd`."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed, _children_cpu() - cpu


def main() -> list[Ratio]:
    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "24"))
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
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        # interleaved; each round in the next of all the orders, so that every command runs
        # after every other equally often
        orders = list(itertools.permutations(commands))
        for i in range(rounds):
            for name in orders[i % len(orders)]:
                wall, used = _time(commands[name], env)
                times[name].append(wall)
                cpu[name].append(used)
    med = {name: statistics.median(values) * 1000 for name, values in times.items()}
    med_cpu = {name: statistics.median(values) * 1000 for name, values in cpu.items()}
    print(f"rounds: {rounds} (interleaved, all orders in turn; medians)")
    for name, values in times.items():
        print(
            f"  {name:12s} median {med[name]:6.1f} ms "
            f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f}); "
            f"CPU {med_cpu[name]:.1f} ms"
        )
    return [
        Ratio(
            "P1 validate",
            "cold `npa soperator validate` (seed example)",
            med["validate"],
            '`python -c "import pydantic, yaml"`',
            med["floor"],
            target="≤ 1.5",
            paired=paired_ratio(times["validate"], times["floor"]),
        ),
        Ratio(
            "P1 validate",
            "the same, CPU time (user + system)",
            med_cpu["validate"],
            "the same floor, CPU time",
            med_cpu["floor"],
            paired=paired_ratio(cpu["validate"], cpu["floor"]),
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
