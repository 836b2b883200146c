"""A first poll of a 10,000-node cluster in the format its login node answers in:
`sinfo -a --json=v0.0.44` (Slurm 25.11, Soperator 4.1.x), parsed with no memo, against
`json.loads` of the same document timed side by side.

    .venv/bin/python -m bench sinfo_json

The document is built from a real v0.0.44 `sinfo[]` entry (Slurm 26.05.5, captured by
tests/status/slurm_samples/capture.sh) with every key Slurm prints, laid out as sinfo groups
a big cluster: per partition (`main`, `hidden`) one group of the idle nodes and one group
per drained node (every 50th). Target: at most 30 ms on this machine, which at json.loads'
usual ~2.5 ms here is a ratio of 12 (the ratio is what the table checks; the absolute time
is printed beside it).
"""

from __future__ import annotations

import copy
import gc
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench import Ratio, paired_ratio

N_NODES = 10_000
ROUNDS = int(os.environ.get("NPA_BENCH_ROUNDS", "30"))
SAMPLE = Path(__file__).resolve().parent.parent / "tests/status/slurm_samples/sinfo_v0.0.44.json"
TARGET_MS = 30.0


def document(n: int = N_NODES) -> str:
    real = json.loads(SAMPLE.read_text())
    drained = next(g for g in real["sinfo"] if "DRAIN" in g["node"]["state"])
    idle = next(g for g in real["sinfo"] if g["node"]["state"] == ["IDLE"])
    groups: list[dict[str, Any]] = []
    for part in ("main", "hidden"):
        names = [f"worker-{i}" for i in range(n) if i % 50]
        group = copy.deepcopy(idle)
        group["nodes"].update(nodes=names, total=len(names), idle=len(names))
        group["partition"]["name"] = part
        groups.append(group)
        for i in range(0, n, 50):
            one = copy.deepcopy(drained)
            one["nodes"]["nodes"] = [f"worker-{i}"]
            one["partition"]["name"] = part
            groups.append(one)
    return json.dumps({**real, "sinfo": groups})


def main() -> list[Ratio]:
    from npa_sop_tui.status.sinfo_json import parse_sinfo_json

    text = document()
    parsed = parse_sinfo_json(text)
    assert len(parsed.nodes) == N_NODES and parsed.data_parser == "v0.0.44"
    print(f"input: {N_NODES} nodes, {len(text) / 1e6:.2f} MB, data_parser v0.0.44")
    loads: list[float] = []
    parse: list[float] = []
    for i in range(ROUNDS):
        gc.collect()  # each side starts from the same heap
        pair = [(loads, lambda: json.loads(text)), (parse, lambda: parse_sinfo_json(text))]
        for times, fn in pair if i % 2 else reversed(pair):
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
    t_parse, t_loads = statistics.median(parse) * 1000, statistics.median(loads) * 1000
    verdict = "met" if t_parse <= TARGET_MS else "NOT met"
    print(f"first poll parse {t_parse:8.1f} ms  (target ≤ {TARGET_MS:g} ms: {verdict})")
    print(f"json.loads       {t_loads:8.1f} ms")
    return [
        Ratio(
            "sinfo --json",
            f"v0.0.44 first poll, {N_NODES} nodes",
            t_parse,
            "json.loads",
            t_loads,
            target="≤ 12",
            paired=paired_ratio(parse, loads),
        )
    ]


if __name__ == "__main__":
    for row in main():
        print(row.line())
