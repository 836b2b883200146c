"""Cold `npa soperator validate` wall time vs `python -c "import pydantic, yaml"`.

Both run as fresh processes, interleaved, in the same run on the same machine, so the ratio
says how much the CLI costs on top of the two libraries it cannot avoid.
Run: `.venv/bin/python bench/run.py validate` (NPA_BENCH_ROUNDS to change the count).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "assets" / "cluster.yaml"


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


def main() -> None:
    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "15"))
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "NPA_HOME": home, "PYTHONDONTWRITEBYTECODE": "0"}
        validate = [*_npa_command(), "soperator", "validate", "--spec", str(SPEC)]
        baseline = [sys.executable, "-c", "import pydantic, yaml"]
        _time(validate, env)  # warm the OS file cache and .pyc files once; not measured
        _time(baseline, env)
        v_times: list[float] = []
        b_times: list[float] = []
        for _ in range(rounds):
            v_times.append(_time(validate, env))
            b_times.append(_time(baseline, env))
    v_med, b_med = statistics.median(v_times), statistics.median(b_times)
    print(f"rounds: {rounds}")
    print(
        f"npa soperator validate: median {v_med * 1000:.0f} ms "
        f"(min {min(v_times) * 1000:.0f}, max {max(v_times) * 1000:.0f})"
    )
    print(
        f"python -c 'import pydantic, yaml': median {b_med * 1000:.0f} ms "
        f"(min {min(b_times) * 1000:.0f}, max {max(b_times) * 1000:.0f})"
    )
    print(f"ratio validate / baseline: {v_med / b_med:.2f}x")


if __name__ == "__main__":
    main()
