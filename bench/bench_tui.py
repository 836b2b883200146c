"""TUI benchmarks: time to first frame, key-press-to-render latency under an event flood,
memory growth of the deploy log over one million lines.

Run: `.venv/bin/python -m bench tui`. Figures are printed; nothing is asserted. Each has a
floor measured the same way in the same run: a bare Textual app (one Static) for the first
frame, a bare Textual app with a DataTable and no event flood for key latency, the RSS after
the first 100k lines for memory growth.

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

from bench import Ratio

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
EVENTS_PER_SECOND = 2_000
LOG_LINES = 1_000_000
RSS_GROWTH_MIB = 50

FIRST_FRAME = r"""
import time, asyncio
t0 = time.perf_counter()
from npa_sop_tui.tui.app import NpaSopApp as App
from npa_sop_tui.screens.home import HomeScreen as Wanted
async def main():
    app = App()
    painted = []
    original = app._display
    def display(screen, renderable):
        if renderable is not None and isinstance(screen, Wanted) and not painted:
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


# The floor: the same harness on a bare Textual app that shows one Static.
BARE_FRAME = FIRST_FRAME.replace(
    "from npa_sop_tui.tui.app import NpaSopApp as App\n"
    "from npa_sop_tui.screens.home import HomeScreen as Wanted\n",
    "from textual.app import App\nfrom textual.screen import Screen as Wanted\n",
)


def first_frame(runs: int = 5, script: str = FIRST_FRAME) -> list[float]:
    times = []
    env = {**os.environ, "NPA_HOME": tempfile.mkdtemp(prefix="bench-tui-")}
    for _ in range(runs):
        out = subprocess.run(
            [PY, "-c", script], capture_output=True, text=True, env=env, check=True
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
            # paced by the clock, not by sleeps: a late tick catches up, so the screen
            # really receives EVENTS_PER_SECOND however loaded the machine is
            tick = 0.01
            began = time.perf_counter()
            n = 0
            while True:
                due = int((time.perf_counter() - began) * EVENTS_PER_SECOND)
                while n < due:
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
                await asyncio.sleep(tick)

    return FloodBackend()


class _Spec:
    name = "bench"


KEY_TARGET_MS = 50.0
"""Key→render p95 target under the flood (issue: ≤ 50 ms)."""
PAINT_DEADLINE = 2.0  # a press with no paint within this is counted as missed, not awaited


async def _press_latencies(pilot: Any, paints: list[float], key: str, presses: int) -> list[float]:
    out: list[float] = []
    for _ in range(presses):
        before = len(paints)
        t0 = time.perf_counter()
        await pilot.press(key)
        while len(paints) == before and time.perf_counter() - t0 < PAINT_DEADLINE:
            await asyncio.sleep(0.0005)
        if len(paints) > before:
            out.append(paints[before] - t0)
        await asyncio.sleep(0.05)
    missed = presses - len(out)
    if missed:
        print(
            f"  ({key!r}: {missed} of {presses} presses painted nothing within {PAINT_DEADLINE}s)"
        )
    return out


def _record_paints(app: Any) -> list[float]:
    paints: list[float] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            renderable.render_segments(app.console)
            paints.append(time.perf_counter())
        original(screen, renderable)

    app._display = display
    return paints


async def latency(presses: int = 60) -> dict[str, list[float]]:
    from npa_sop_tui.screens.deploy import DeployScreen, OperationStage
    from npa_sop_tui.tui.app import NpaSopApp

    app = NpaSopApp(_synthetic_backend())
    paints = _record_paints(app)
    results: dict[str, list[float]] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        app.deploy(_Spec())
        deadline = time.perf_counter() + 30
        while not isinstance(app.screen, DeployScreen) or app.screen.stage != "planned":
            if time.perf_counter() > deadline:
                raise SystemExit("the deploy screen never reached 'planned'")
            await asyncio.sleep(0.01)
        screen = app.screen
        delivered = 0
        sink = screen.sink

        def counting_sink(event: Any) -> None:
            nonlocal delivered
            delivered += 1
            sink(event)

        screen.sink = counting_sink  # type: ignore[method-assign]
        screen.post_message(DeployScreen.DeployRequested(allow_destructive=False))
        deadline = time.perf_counter() + 30
        while screen.stage != OperationStage.APPLYING or delivered == 0:
            if time.perf_counter() > deadline:
                raise SystemExit(f"no event flood after 30s (stage {screen.stage})")
            await asyncio.sleep(0.01)
        await asyncio.sleep(1.0)  # let the flood reach a steady state
        started, first = time.perf_counter(), delivered

        rss = [_rss_mib()]
        sampler = app.set_interval(0.25, lambda: rss.append(_rss_mib()))
        screen.query_one("#resources").focus()
        results["table cursor (down)"] = await _press_latencies(pilot, paints, "down", presses)
        screen.query_one("#log-filter").focus()
        results["log filter (type)"] = await _press_latencies(pilot, paints, "a", presses)
        sampler.stop()
        rate = (delivered - first) / (time.perf_counter() - started)
        received = len(screen.query_one("#log").lines)
        for worker in list(screen.workers):
            worker.cancel()
        await asyncio.sleep(0.1)
    print(
        f"  (events delivered {rate:.0f}/s, {delivered} in all; log window holds {received} "
        f"lines; RSS under the flood: first {rss[0]:.0f} MiB, peak {max(rss):.0f} MiB, "
        f"last {rss[-1]:.0f} MiB)"
    )
    return results


async def bare_latency(presses: int = 60) -> list[float]:
    """The floor: a bare Textual app with a 500-row DataTable, nothing else going on."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("address", "state")
            for i in range(500):
                table.add_row(f"module.k8s.null_resource.worker_node[{i}]", "create")
            table.focus()

    app = Bare()
    paints = _record_paints(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        return await _press_latencies(pilot, paints, "down", presses)


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


def main() -> list[Ratio]:
    os.environ["NPA_HOME"] = tempfile.mkdtemp(prefix="bench-tui-")
    ff, bare = first_frame(), first_frame(script=BARE_FRAME)
    print(
        f"time to first frame (cold process, 120x40): median {statistics.median(ff) * 1000:.0f} ms"
        f" (min {min(ff) * 1000:.0f}, max {max(ff) * 1000:.0f}, {len(ff)} runs); bare Textual "
        f"app {statistics.median(bare) * 1000:.0f} ms"
    )
    rows = [
        Ratio(
            "tui",
            "first frame, cold process",
            statistics.median(ff) * 1000,
            "bare Textual app, same harness",
            statistics.median(bare) * 1000,
        )
    ]
    lat = asyncio.run(latency())
    floor = asyncio.run(bare_latency())
    floor_p50 = _pct(floor, 0.5) * 1000 if floor else float("nan")
    print(f"key-press-to-render, bare Textual DataTable, no flood: p50 {floor_p50:.1f} ms")
    for label, values in lat.items():
        if not values:
            print(f"{label}: no press painted anything")
            continue
        print(
            f"key-press-to-render under {EVENTS_PER_SECOND} events/s, {label}: "
            f"p50 {_pct(values, 0.5) * 1000:.1f} ms, p95 {_pct(values, 0.95) * 1000:.1f} ms "
            f"({len(values)} presses)"
        )
        p95 = _pct(values, 0.95) * 1000
        rows.append(
            Ratio(
                "tui",
                f"key to paint p95 under {EVENTS_PER_SECOND} events/s, {label}",
                p95,
                "bare DataTable p50, no flood",
                floor_p50,
                f"≤ {KEY_TARGET_MS / floor_p50:.1f}",  # the absolute target, as a ratio
            )
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
    rows.append(
        Ratio(
            "tui",
            "RSS after 1M log lines",
            mem[-1][1],
            "RSS before the first line",
            base,
            f"≤ {(base + RSS_GROWTH_MIB) / base:.2f}",  # growth < RSS_GROWTH_MIB, as a ratio
            unit="MiB",
        )
    )
    return rows


if __name__ == "__main__":
    for row in main():
        print(row.line())
