"""Operator console at scale (10,000 Slurm nodes), each figure beside a floor measured in the
same run, so the ratio says what npa adds on top of the unavoidable work:

- first paint of the dashboard with 10,000 nodes   vs the same dashboard with 100 nodes;
- a refresh (new snapshot, 1% of nodes changed): time the event loop is blocked
                                                    vs a refresh where nothing changed;
- sinfo parse of 10,000 nodes (delimited), cold and warm (the per-line memo)
                                                    vs splitting the same text into fields;
- change detection (which nodes changed)           vs comparing the two texts line by line.

Targets: first paint ≤ 1 s, refresh ≤ 50 ms, parse ≤ 30 ms, change detection ≤ 15 ms.
Run: `.venv/bin/python -m bench console`. Key→render latency under 2,000 events/s and
RSS over a million events are in bench_tui.py.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bench import Ratio

ROOT = Path(__file__).resolve().parent.parent
N = 10_000


def _median(fn: Callable[[], Any], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _status(n: int, changed: frozenset[int] = frozenset()) -> Any:
    sys.path.insert(0, str(ROOT / "tests" / "tui"))
    from fakes import _status as fixed_status  # the snapshot tests' fixed cluster

    from npa_sop_tui.status.model import SlurmNode

    status = fixed_status()
    status.slurm.nodes = [
        SlurmNode.model_construct(
            name=f"worker-{i}",
            state="down" if i in changed else "idle",
            flags=["NOT_RESPONDING"] if i in changed else [],
            display="down*" if i in changed else "idle",
            partitions=["main"],
            cpus=128,
            cpus_allocated=0,
            memory_mb=1_638_400,
            gres="gpu:h100:8",
            features=[],
            reason="Not responding" if i in changed else None,
        )
        for i in range(n)
    ]
    return status


async def _dashboard(n: int) -> tuple[float, float, float]:
    """(first paint, refresh with 1% changed, refresh with nothing changed) in seconds."""
    sys.path.insert(0, str(ROOT / "tests" / "tui"))
    from fakes import FixedBackend

    from npa_sop_tui.screens.status import StatusScreen
    from npa_sop_tui.tui.app import NpaSopApp
    from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable

    first = _status(n)

    class Backend(FixedBackend):
        async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
            yield first
            await asyncio.Event().wait()

    app = NpaSopApp(Backend())
    painted: list[float] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        if renderable is not None and isinstance(screen, StatusScreen):
            table = screen.query(SlurmNodesTable)
            if table and table.first().row_count == n:
                renderable.render_segments(app.console)
                painted.append(time.perf_counter())
        original(screen, renderable)

    app._display = display  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        t0 = time.perf_counter()
        app.show_status("bench")
        while not painted:
            await asyncio.sleep(0.001)
        paint = painted[0] - t0
        screen = app.screen
        # as the watcher's memoised parse gives them: unchanged nodes are the same objects
        fresh = _status(n, frozenset(range(0, n, 100))).slurm.nodes
        nodes = [
            new if i % 100 == 0 else old
            for i, (old, new) in enumerate(zip(first.slurm.nodes, fresh, strict=True))
        ]
        changed = first.model_copy(update={"taken_at": first.taken_at + 10})
        changed.slurm = first.slurm.model_copy(update={"nodes": nodes})
        t0 = time.perf_counter()
        screen.status = changed  # the handler runs on the event loop: this is the block
        refresh = time.perf_counter() - t0
        same = changed.model_copy(update={"taken_at": changed.taken_at + 10})
        t0 = time.perf_counter()
        screen.status = same
        unchanged = time.perf_counter() - t0
    return paint, refresh, unchanged


def _delimited(n: int, changed: frozenset[int] = frozenset()) -> str:
    lines = []
    for i in range(n):
        state, reason = ("down*", "Not responding") if i in changed else ("idle", "none")
        for part in ("main*", "hidden"):
            lines.append(
                f"worker-{i}|{part}|{state}|0/128/0/128|1638400|gpu:nvidia_h100:8|"
                f"gpu_h100_sxm,network_ssd|{reason}"
            )
    return "\n".join(lines) + "\n"


def bench_parse() -> list[Ratio]:
    from npa_sop_tui.status.sinfo_memo import SinfoMemo
    from npa_sop_tui.status.slurm import diff_nodes, parse_nodes_delimited

    text = _delimited(N)
    text2 = _delimited(N, frozenset(range(0, N, 100)))  # 1% of the nodes change
    floor = _median(lambda: [line.split("|") for line in text.splitlines()])
    cold = _median(lambda: parse_nodes_delimited(text))
    memo = SinfoMemo()
    memo.parse_nodes(text)
    warm = _median(lambda: memo.parse_nodes(text2))
    print(f"  fields floor (split {2 * N} lines)     {floor * 1000:7.1f} ms")
    print(f"  parse cold                             {cold * 1000:7.1f} ms  ({cold / floor:.1f}x)")
    print(f"  parse warm (1% changed, line memo)     {warm * 1000:7.1f} ms  ({warm / floor:.1f}x)")

    a = memo.parse_nodes(text)
    b = memo.parse_nodes(text2)
    lines, lines2 = text.splitlines(), text2.splitlines()
    floor_diff = _median(lambda: sum(x != y for x, y in zip(lines, lines2, strict=True)))
    diff = _median(lambda: diff_nodes(a, b))
    print(f"  change floor (compare lines)           {floor_diff * 1000:7.1f} ms")
    print(f"  change detection (1% changed)          {diff * 1000:7.1f} ms")
    split = "split lines into fields"
    return [
        Ratio(
            "console",
            "sinfo parse 10k, memoised poll",
            warm * 1000,
            split,
            floor * 1000,
            _target(30, floor),
        ),
        Ratio("console", "sinfo parse 10k, first poll", cold * 1000, split, floor * 1000),
        Ratio(
            "console",
            "change detection 10k",
            diff * 1000,
            "compare lines",
            floor_diff * 1000,
            _target(15, floor_diff),
        ),
    ]


def _target(limit_ms: float, floor_s: float) -> str:
    """An absolute target (ms) as a ratio bound against the floor of this run."""
    return f"≤ {limit_ms / (floor_s * 1000):.1f}"


def main() -> list[Ratio]:
    import os

    os.environ["NPA_HOME"] = tempfile.mkdtemp(prefix="bench-console-")
    print(f"-- dashboard with {N} Slurm nodes (120x40, headless) --")
    asyncio.run(_dashboard(100))  # warm-up: the first app of a process pays for imports, CSS
    small = asyncio.run(_dashboard(100))
    big = asyncio.run(_dashboard(N))
    print(f"  first paint, 100 nodes (floor)         {small[0] * 1000:7.0f} ms")
    print(f"  first paint, {N} nodes                 {big[0] * 1000:7.0f} ms  target ≤ 1000 ms")
    print(f"  refresh, nothing changed (floor)       {big[2] * 1000:7.1f} ms")
    print(f"  refresh, 1% of nodes changed           {big[1] * 1000:7.1f} ms  target ≤ 50 ms")
    rows = [
        Ratio(
            "console",
            "first paint 10k nodes",
            big[0] * 1000,
            "100 nodes",
            small[0] * 1000,
            _target(1000, small[0]),
        ),
        Ratio(
            "console",
            "refresh 10k, 1% changed",
            big[1] * 1000,
            "nothing changed",
            big[2] * 1000,
            _target(50, big[2]),
        ),
    ]
    print(f"-- sinfo parse and change detection, {N} nodes x 2 partitions --")
    return rows + bench_parse()


if __name__ == "__main__":
    for row in main():
        print(f"  ratio  {row.line()}")
