"""Status benchmarks: sinfo parse + diff at 10,000 nodes; SSH refresh costs on the substrate.

    .venv/bin/python bench/run.py status

Part 1 needs nothing. Part 2 needs `scripts/substrate.sh start` (sshd on 127.0.0.1:2222);
it is skipped with a note when the substrate is absent.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def bench_parse() -> None:
    from npa_sop_tui.status.model import ClusterStatus, SlurmState
    from npa_sop_tui.status.slurm import diff_nodes, parse_nodes_delimited, parse_sinfo_json

    text = _delimited(N_NODES)
    changed = set(range(0, N_NODES, 100))  # 1% of the nodes change state
    text2 = _delimited(N_NODES, changed)
    j38, j44 = _json38(N_NODES), _json44(N_NODES)
    print(
        f"input: {N_NODES} nodes × 2 partitions; delimited {len(text) / 1e6:.1f} MB, "
        f"json v0.0.38 {len(j38) / 1e6:.1f} MB, json v0.0.44 {len(j44) / 1e6:.1f} MB"
    )

    t, a = _timeit(lambda: parse_nodes_delimited(text))
    print(f"parse delimited         {t * 1000:8.1f} ms  ({len(a)} nodes)")
    t, b = _timeit(lambda: parse_nodes_delimited(text2))
    t, j = _timeit(lambda: parse_sinfo_json(j38))
    print(f"parse json v0.0.38      {t * 1000:8.1f} ms  ({len(j.nodes)} nodes)")
    t, j = _timeit(lambda: parse_sinfo_json(j44))
    print(f"parse json v0.0.44      {t * 1000:8.1f} ms  ({len(j.nodes)} nodes)")
    t, d = _timeit(lambda: diff_nodes(a, b))
    print(f"diff two node lists     {t * 1000:8.1f} ms  ({len(d.changed)} changed)")

    snap = ClusterStatus(
        name="bench",
        context="nebius-bench-slurm",
        taken_at=time.time(),
        slurm=SlurmState(host="h", source_format="delimited", nodes=a),
    )
    t, key = _timeit(snap.content_key, repeat=3)
    print(f"snapshot change key     {t * 1000:8.1f} ms  ({len(key) / 1e6:.1f} MB JSON)")


def _substrate_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 2222), timeout=1):
            return (LAB / "client_ed25519").is_file()
    except OSError:
        return False


async def _bench_ssh(rounds: int) -> None:
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.slurm import collect_slurm
    from npa_sop_tui.status.ssh import SshSession, SshTarget

    target = SshTarget("127.0.0.1", 2222, "slurmops", LAB / "client_ed25519")
    policy = HostKeyPolicy.accept_new()

    async def timed(fn: Callable[[], Any]) -> list[float]:
        out = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            await fn()
            out.append(time.perf_counter() - t0)
        return out

    reused = SshSession(target, policy=policy)
    await reused.run("true")  # connect (and record the host key) before timing

    async def refresh_reused() -> None:
        await collect_slurm(reused, host="127.0.0.1")

    async def refresh_fresh() -> None:
        s = SshSession(target, policy=policy)
        try:
            await collect_slurm(s, host="127.0.0.1")
        finally:
            await s.close()

    async def bare_sinfo() -> None:
        await reused.run("sinfo")

    results = {
        "status refresh, reused connection": await timed(refresh_reused),
        "status refresh, fresh connection": await timed(refresh_fresh),
        "bare `sinfo` on the open connection": await timed(bare_sinfo),
    }
    await reused.close()
    print(f"{rounds} rounds each (one refresh = 3 sinfo calls on ≤8 concurrent channels):")
    for label, times in results.items():
        print(
            f"  {label:38s} median {statistics.median(times) * 1000:7.1f} ms   "
            f"mean {statistics.mean(times) * 1000:7.1f} ms   "
            f"min {min(times) * 1000:7.1f} ms"
        )
    print(f"  reused connections made: {reused.connects}")


def main() -> None:
    print("-- sinfo parse + diff --")
    bench_parse()
    print("\n-- status refresh over SSH (local sshd + Slurm 22.05) --")
    if not _substrate_up():
        print("skipped: substrate not running (bash scripts/substrate.sh start)")
        return
    with tempfile.TemporaryDirectory() as home:
        os.environ["NPA_HOME"] = home  # a private known_hosts for the run
        asyncio.run(_bench_ssh(rounds=20))


if __name__ == "__main__":
    main()
