"""Status benchmarks: sinfo parse + diff at 10,000 nodes; SSH refresh costs on the substrate.

    .venv/bin/python -m bench status

Part 1 needs nothing; each parse is measured against the floor of splitting (or
`json.loads`) the same text. Part 2 needs `scripts/substrate.sh start` (sshd on
127.0.0.1:2222) and is skipped with a note when the substrate is absent: P2, one status
refresh over the reused connection against one bare `sinfo` on it (target ≤ 1.3×), and a
fresh connection per refresh against the reused one (target ≥ 5×). Also shown: the
refresh against its own sinfo command run bare, which is the refresh's own overhead
(parsing, change detection, building the snapshot).

The four steps run interleaved (load changes hit all alike), each round in the next of
their 24 orders, 60 rounds by default (NPA_BENCH_ROUNDS), medians. After a fresh connection closes,
sshd is still reaping it for a few milliseconds; the bench waits that out rather than
charge it to the next step (a status watch reuses one connection, so its refreshes never
follow a teardown).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import Ratio, paired_ratio

N_NODES = 10_000
# scripts/substrate.sh: $NPA_SUBSTRATE_DIR, else $LAB (its older name), else the default
LAB = Path(os.environ.get("NPA_SUBSTRATE_DIR") or os.environ.get("LAB") or "/tmp/npa-substrate")


def _timeit(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _delimited(n: int, changed: set[int] = frozenset()) -> str:  # type: ignore[assignment]
    lines = []
    for i in range(n):
        state, reason = ("idle", "none") if i % 50 else ("drained*", "[node_problem] hc: xid 79")
        if i in changed:
            state, reason = "down*", "Not responding"
        for part in ("main*", "hidden"):
            lines.append(
                f"worker-{i}|{part}|{state}|0/128/0/128|1638400|gpu:nvidia_h100:8|"
                f"gpu_h100_sxm,network_ssd|{reason}"
            )
    return "\n".join(lines) + "\n"


def _json38(n: int) -> str:
    nodes = [
        {
            "name": f"worker-{i}",
            "state": "idle",
            "state_flags": [] if i % 50 else ["DRAIN"],
            "reason": "" if i % 50 else "[node_problem] hc: xid 79",
            "partitions": ["main", "hidden"],
            "cpus": 128,
            "alloc_cpus": 0,
            "real_memory": 1638400,
            "gres": "gpu:nvidia_h100:8",
            "features": "gpu_h100_sxm,network_ssd",
        }
        for i in range(n)
    ]
    return json.dumps({"meta": {"Slurm": {"release": "22.05.8"}}, "errors": [], "nodes": nodes})


def _json44(n: int) -> str:
    # Real 25.11 output groups nodes with identical state; draining ones come one per group.
    idle = [f"worker-{i}" for i in range(n) if i % 50]
    groups: list[dict[str, Any]] = []
    for part in ("main", "hidden"):
        groups.append(
            {
                "node": {"state": ["IDLE"]},
                "nodes": {"nodes": idle},
                "cpus": {"maximum": 128},
                "memory": {"maximum": 1638400},
                "gres": {"total": "gpu:nvidia_h100:8"},
                "features": {"active": "gpu_h100_sxm,network_ssd"},
                "reason": {"description": ""},
                "partition": {"name": part},
            }
        )
        for i in range(0, n, 50):
            groups.append(
                {
                    "node": {"state": ["IDLE", "DRAIN"]},
                    "nodes": {"nodes": [f"worker-{i}"]},
                    "cpus": {"maximum": 128, "allocated": 0},
                    "memory": {"maximum": 1638400},
                    "gres": {"total": "gpu:nvidia_h100:8"},
                    "features": {"active": "gpu_h100_sxm,network_ssd"},
                    "reason": {"description": "[node_problem] hc: xid 79"},
                    "partition": {"name": part},
                }
            )
    return json.dumps({"meta": {"slurm": {"release": "25.11.3"}}, "sinfo": groups})


def bench_parse() -> list[Ratio]:
    from npa_sop_tui.status.model import ClusterStatus, SlurmState
    from npa_sop_tui.status.sinfo_json import parse_sinfo_json
    from npa_sop_tui.status.slurm import diff_nodes, parse_nodes_delimited

    text = _delimited(N_NODES)
    changed = set(range(0, N_NODES, 100))  # 1% of the nodes change state
    text2 = _delimited(N_NODES, changed)
    j38, j44 = _json38(N_NODES), _json44(N_NODES)
    print(
        f"input: {N_NODES} nodes × 2 partitions; delimited {len(text) / 1e6:.1f} MB, "
        f"json v0.0.38 {len(j38) / 1e6:.1f} MB, json v0.0.44 {len(j44) / 1e6:.1f} MB"
    )

    split_floor, _ = _timeit(lambda: [line.split("|", 7) for line in text.splitlines()])
    t_delim, a = _timeit(lambda: parse_nodes_delimited(text))
    print(f"parse delimited         {t_delim * 1000:8.1f} ms  ({len(a)} nodes)")
    t, b = _timeit(lambda: parse_nodes_delimited(text2))
    j38_floor, _ = _timeit(lambda: json.loads(j38))
    t_j38, j = _timeit(lambda: parse_sinfo_json(j38))
    print(f"parse json v0.0.38      {t_j38 * 1000:8.1f} ms  ({len(j.nodes)} nodes)")
    j44_floor, _ = _timeit(lambda: json.loads(j44))
    t_j44, j = _timeit(lambda: parse_sinfo_json(j44))
    print(f"parse json v0.0.44      {t_j44 * 1000:8.1f} ms  ({len(j.nodes)} nodes)")
    index_floor, _ = _timeit(lambda: ({n.name: n for n in a}, {n.name: n for n in b}))
    t_diff, d = _timeit(lambda: diff_nodes(a, b))
    print(f"diff two node lists     {t_diff * 1000:8.1f} ms  ({len(d.changed)} changed)")
    rows = [
        Ratio(
            "status parse",
            f"delimited, {N_NODES} nodes",
            t_delim * 1000,
            "split the lines into fields",
            split_floor * 1000,
        ),
        Ratio("status parse", "json v0.0.38", t_j38 * 1000, "json.loads", j38_floor * 1000),
        Ratio("status parse", "json v0.0.44", t_j44 * 1000, "json.loads", j44_floor * 1000),
        Ratio(
            "status parse",
            "diff 1% changed",
            t_diff * 1000,
            "index both lists by name",
            index_floor * 1000,
        ),
    ]

    snap = ClusterStatus(
        name="bench",
        context="nebius-bench-slurm",
        taken_at=time.time(),
        slurm=SlurmState(host="h", source_format="delimited", nodes=a),
    )
    t, key = _timeit(snap.content_key, repeat=3)
    print(f"snapshot change key     {t * 1000:8.1f} ms  ({len(key) / 1e6:.1f} MB JSON)")
    return rows


def _substrate_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 2222), timeout=1):
            return (LAB / "client_ed25519").is_file()
    except OSError:
        return False


async def _bench_ssh(rounds: int) -> list[Ratio]:
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.sinfo_summary import SUMMARY_CMD
    from npa_sop_tui.status.slurm_poll import collect_slurm
    from npa_sop_tui.status.ssh import SshSession, SshTarget

    target = SshTarget("127.0.0.1", 2222, "slurmops", LAB / "client_ed25519")
    policy = HostKeyPolicy.accept_new()

    reused = SshSession(target, policy=policy)
    # connect, record the host key and learn the Slurm version before timing: what every
    # refresh after a connection's first costs is what is measured
    await collect_slurm(reused, host="127.0.0.1")
    commands: list[str] = []

    class Counting:
        async def run(self, command: str, *, timeout: float = 30.0) -> Any:
            commands.append(command)
            return await reused.run(command, timeout=timeout)

    counting = Counting()
    await collect_slurm(counting, host="127.0.0.1")
    commands.clear()

    async def refresh_reused() -> None:
        await collect_slurm(counting, host="127.0.0.1")

    async def refresh_fresh() -> None:
        s = SshSession(target, policy=policy)
        try:
            await collect_slurm(s, host="127.0.0.1")
        finally:
            await s.close()

    async def bare_sinfo() -> None:
        await reused.run("sinfo")

    async def bare_summary() -> None:
        await reused.run(SUMMARY_CMD)

    steps = {
        "status refresh, reused connection": refresh_reused,
        "bare `sinfo` on the open connection": bare_sinfo,
        "bare summary sinfo, same connection": bare_summary,
        "status refresh, fresh connection": refresh_fresh,
    }
    times: dict[str, list[float]] = {label: [] for label in steps}
    # Interleaved, so load changes hit every figure alike; each round takes the next of all
    # the orders, so every step follows every other (and the fresh connection's teardown)
    # equally often. (Rotating one order would not: a step's successor never changes.)
    orders = list(itertools.permutations(steps))
    for i in range(rounds):
        for label in orders[i % len(orders)]:
            t0 = time.perf_counter()
            await steps[label]()
            times[label].append(time.perf_counter() - t0)
            if steps[label] is refresh_fresh:
                # sshd is still tearing that connection down; let it finish rather than
                # charge it to whichever step comes next
                await asyncio.sleep(0.1)
    await reused.close()
    per_refresh = len(commands) / rounds
    print(
        f"{rounds} rounds each, interleaved, all orders in turn; medians; "
        f"Slurm commands per refresh: {per_refresh:g}"
    )
    for label, values in times.items():
        print(
            f"  {label:38s} median {statistics.median(values) * 1000:7.1f} ms   "
            f"min {min(values) * 1000:7.1f} ms"
        )
    print(f"  reused connections made: {reused.connects}")
    med = {label: statistics.median(values) * 1000 for label, values in times.items()}
    return [
        Ratio(
            "P2 status",
            "one refresh, reused SSH connection",
            med["status refresh, reused connection"],
            "one bare `sinfo` on the open channel",
            med["bare `sinfo` on the open connection"],
            target="≤ 1.3",
            paired=paired_ratio(
                times["status refresh, reused connection"],
                times["bare `sinfo` on the open connection"],
            ),
        ),
        Ratio(
            "P2 status",
            "one refresh, reused SSH connection",
            med["status refresh, reused connection"],
            "its own sinfo command, bare, on the same channel",
            med["bare summary sinfo, same connection"],
            paired=paired_ratio(
                times["status refresh, reused connection"],
                times["bare summary sinfo, same connection"],
            ),
        ),
        Ratio(
            "P2 status",
            "one refresh, fresh connection each time",
            med["status refresh, fresh connection"],
            "one refresh, reused connection",
            med["status refresh, reused connection"],
            target="≥ 5",
            paired=paired_ratio(
                times["status refresh, fresh connection"],
                times["status refresh, reused connection"],
            ),
        ),
    ]


def main() -> list[Ratio]:
    print("-- sinfo parse + diff --")
    rows = bench_parse()
    print("\n-- status refresh over SSH (local sshd + Slurm) --")
    if not _substrate_up():
        print("skipped: substrate not running (bash scripts/substrate.sh start)")
        return rows
    with tempfile.TemporaryDirectory() as home:
        os.environ["NPA_HOME"] = home  # a private known_hosts for the run
        rows += asyncio.run(_bench_ssh(rounds=int(os.environ.get("NPA_BENCH_ROUNDS", "60"))))
    return rows


if __name__ == "__main__":
    for row in main():
        print(row.line())
