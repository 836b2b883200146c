"""Benchmark runner: `python bench/run.py [name ...]` runs bench/bench_<name>.py (all if none).

Benchmarks print their own figures; they are never part of the test suite's timing.
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def available() -> dict[str, Path]:
    return {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}


def main(argv: list[str]) -> int:
    benches = available()
    names = argv or list(benches)
    unknown = [n for n in names if n not in benches]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(benches)}")
        return 2
    for name in names:
        print(f"== bench {name} ==", flush=True)
        started = time.perf_counter()
        runpy.run_path(str(benches[name]), run_name="__main__")
        print(f"== bench {name} done in {time.perf_counter() - started:.1f}s ==\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
