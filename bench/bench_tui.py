"""TUI benchmarks: time to first frame, key-press-to-render latency under an event flood,
memory growth of the deploy log over one million lines.

Run: `.venv/bin/python bench/run.py tui`. Figures are printed; nothing is asserted.

- First frame: a fresh interpreter imports the app and runs it headless until the home
  screen has been composed and painted once (median of several runs).
- Latency: the deploy screen receives synthetic lifecycle events at 2,000/s (the UI's cost,
  not Terraform's, is what is measured); meanwhile keys are pressed and the time from the key
  being posted to the end of the next paint (compositor update rendered to terminal
  sequences) is recorded. Two interactions: moving the resource-table cursor, typing in the
  log filter (which re-filters the 5,000-line window).
- Memory: one million log lines pushed through the deploy screen's sink/flush path; RSS is
  sampled every 100,000 lines.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
EVENTS_PER_SECOND = 2_000
LOG_LINES = 1_000_000

FIRST_FRAME = r"""
import time, asyncio
t0 = time.perf_counter()
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.screens.home import HomeScreen
async def main():
    app = NpaSopApp()
    painted = []
    original = app._display
    def display(screen, renderable):
        if renderable is not None and isinstance(screen, HomeScreen) and not painted:
            renderable.render_segments(app.console)
            painted.append(time.perf_counter())
        return original(screen, renderable)
    app._display = display
    async with app.run_test(size=(120, 40)) as pilot:
        while not painted:
            await asyncio.sleep(0.001)
    print(painted[0] - t0)
asyncio.run(main())
"""


def first_frame(runs: int = 5) -> list[float]:
    times = []
    env = {**os.environ, "NPA_HOME": tempfile.mkdtemp(prefix="bench-tui-")}
    for _ in range(runs):
        out = subprocess.run(
            [PY, "-c", FIRST_FRAME], capture_output=True, text=True, env=env, check=True
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _synthetic_backend() -> Any:
    from npa_sop_tui.events import (
        EventSink,
        LogLine,
        PlanSummary,
        ResourceFinished,
        ResourceStarted,
    )
    from npa_sop_tui.tui.backend import Backend

    class FloodBackend(Backend):
        """Plan: 500 resources. Deploy: events at EVENTS_PER_SECOND until cancelled."""

        sandbox = False

        def kube_context(self, name: str) -> str:
            return f"nebius-{name}-slurm"

        async def plan(self, spec: Any, sink: EventSink) -> PlanSummary:
            return PlanSummary(operation_id="bench", phase="plan", add=500, change=0, remove=0)

        async def deploy(self, spec: Any, sink: EventSink, *, allow_destructive: bool) -> Any:
            tick = 0.01
            per_tick = int(EVENTS_PER_SECOND * tick)
            n = 0
            while True:
                started = time.perf_counter()
                for _ in range(per_tick):
                    addr = f'module.k8s.null_resource.worker_node["pool-{n % 500}"]'
                    kind = ("started", "log", "finished", "log")[n % 4]
                    if kind == "log":
                        text = f"{addr}: Still creating... [{n}s]"
                        sink(LogLine(operation_id="bench", stream="terraform", text=text))
                    elif kind == "started":
                        sink(
                            ResourceStarted(
                                operation_id="bench", addr=addr, module="k8s", action="create"
                            )
                        )
                    else:
                        sink(
                            ResourceFinished(
                                operation_id="bench",
                                addr=addr,
                                module="k8s",
                                action="create",
                                elapsed=1.0,
                            )
                        )
                    n += 1
                await asyncio.sleep(max(0.0, tick - (time.perf_counter() - started)))

    return FloodBackend()


class _Spec:
    name = "bench"


async def latency(presses: int = 60) -> dict[str, list[float]]:
    from npa_sop_tui.screens.deploy import DeployScreen, OperationStage
    from npa_sop_tui.tui.app import NpaSopApp

    app = NpaSopApp(_synthetic_backend())
    paints: list[float] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            renderable.render_segments(app.console)
            paints.append(time.perf_counter())
        original(screen, renderable)

    app._display = display  # type: ignore[method-assign]
    results: dict[str, list[float]] = {"table cursor (down)": [], "log filter (type)": []}
    async with app.run_test(size=(120, 40)) as pilot:
        app.deploy(_Spec())
        while not isinstance(app.screen, DeployScreen) or app.screen.stage != "planned":
            await asyncio.sleep(0.01)
        screen = app.screen
        screen.post_message(DeployScreen.DeployRequested(allow_destructive=False))
        while screen.stage != OperationStage.APPLYING:
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)  # let the flood reach a steady state

        async def measure(label: str, key: str) -> None:
            for _ in range(presses):
                before = len(paints)
                t0 = time.perf_counter()
                await pilot.press(key)
                while len(paints) == before:
                    await asyncio.sleep(0.0005)
                results[label].append(paints[before] - t0)
                await asyncio.sleep(0.05)

        screen.query_one("#resources").focus()
        await measure("table cursor (down)", "down")
        screen.query_one("#log-filter").focus()
        await measure("log filter (type)", "a")
        received = len(screen.query_one("#log").lines)
        screen._op_task.cancel()
        await asyncio.sleep(0.1)
    print(f"  (log window holds {received} lines at the end; bounded)")
    return results


async def memory() -> list[tuple[int, float]]:
    from npa_sop_tui.events import LogLine
    from npa_sop_tui.screens.deploy import DeployScreen
    from npa_sop_tui.tui.app import NpaSopApp

    app = NpaSopApp(_synthetic_backend())
    samples: list[tuple[int, float]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.deploy(_Spec())
        while not isinstance(app.screen, DeployScreen):
            await asyncio.sleep(0.01)
        screen = app.screen
        await pilot.pause()
        batch = 20_000
        samples.append((0, _rss_mib()))
        for sent in range(batch, LOG_LINES + 1, batch):
            for i in range(batch):
                text = f"line {sent - batch + i}: still creating"
                screen.sink(LogLine(operation_id="bench", stream="terraform", text=text))
            screen._flush()
            await pilot.pause()
            if sent % 100_000 == 0:
                samples.append((sent, _rss_mib()))
    return samples


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    os.environ["NPA_HOME"] = tempfile.mkdtemp(prefix="bench-tui-")
    ff = first_frame()
    print(
        f"time to first frame (cold process, 120x40): median {statistics.median(ff) * 1000:.0f} ms"
        f" (min {min(ff) * 1000:.0f}, max {max(ff) * 1000:.0f}, {len(ff)} runs)"
    )
    lat = asyncio.run(latency())
    for label, values in lat.items():
        print(
            f"key-press-to-render under {EVENTS_PER_SECOND} events/s, {label}: "
            f"p50 {_pct(values, 0.5) * 1000:.1f} ms, p95 {_pct(values, 0.95) * 1000:.1f} ms "
            f"({len(values)} presses)"
        )
    mem = asyncio.run(memory())
    base = mem[0][1]
    print(
        "RSS over one million log lines (MiB): "
        + ", ".join(f"{n // 1000}k={rss:.0f}" for n, rss in mem)
    )
    print(
        f"growth: first 100k lines +{mem[1][1] - base:.1f} MiB, "
        f"100k→1M +{mem[-1][1] - mem[1][1]:.1f} MiB"
    )


if __name__ == "__main__":
    main()
