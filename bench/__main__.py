"""`python -m bench [name ...]`: run bench/bench_<name>.py (all if none), then the table."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

from bench import Ratio, table

HERE = Path(__file__).resolve().parent


def available() -> list[str]:
    return [p.stem.removeprefix("bench_") for p in sorted(HERE.glob("bench_*.py"))]


def main(argv: list[str]) -> int:
    names = argv or available()
    unknown = [n for n in names if n not in available()]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available())}")
        return 2
    rows: list[Ratio] = []
    for name in names:
        print(f"== bench {name} ==", flush=True)
        started = time.perf_counter()
        module = importlib.import_module(f"bench.bench_{name}")
        found = module.main() or []
        for row in found:
            print(f"  ratio  {row.line()}")
        rows.extend(found)
        print(f"== bench {name} done in {time.perf_counter() - started:.1f}s ==\n", flush=True)
    print(table(rows))
    return 1 if any(r.met() == "NO" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
