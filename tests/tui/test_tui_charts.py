"""SVG snapshots of the charts at 80x24 and 120x40: the deploy timeline of a recorded
sandbox deploy (its own screen, fixed clock) and node states over a session's snapshots;
and the pure drawing functions' shapes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult

from npa_sop_tui.history.node_states import NodeStateHistory
from npa_sop_tui.history.oplog import read_events
from npa_sop_tui.history.timeline import timeline_of
from npa_sop_tui.screens.timeline import TimelineScreen
from npa_sop_tui.status.model import ClusterStatus, SlurmNode
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.charts.node_states import NodeStatesChart, column, node_state_lines
from npa_sop_tui.tui.widgets.charts.timeline import TimelineChart, timeline_lines

from .fakes import FixedBackend, _status
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui

SIZES = [(80, 24), (120, 40)]
RECORDED = Path(__file__).parents[1] / "history" / "data" / "deploy-demo.ndjson"


def _session(samples: int = 30) -> list[ClusterStatus]:
    """A session's snapshots: cpu-1 drained from the 10th, gpu nodes busy, one down late."""
    base = _status()
    assert base.slurm is not None
    out = []
    for i in range(samples):
        nodes = []
        for name in ("cpu-0", "cpu-1", "gpu-0", "gpu-1", "gpu-2", "gpu-3"):
            state, flags = "idle", []
            if name == "cpu-1" and i >= 10:
                state, flags = "drained", ["DRAIN"]
            if name.startswith("gpu") and 5 <= i < 25 and name != "gpu-3":
                state = "allocated"
            if name == "gpu-3" and i >= 20:
                state, flags = "down", ["NOT_RESPONDING"]
            nodes.append(SlurmNode(name=name, state=state, flags=flags, display=state))
        slurm = base.slurm.model_copy(update={"nodes": nodes})
        out.append(base.model_copy(update={"slurm": slurm, "taken_at": base.taken_at + 60 * i}))
    return out


class ChartApp(App[None]):
    def compose(self) -> ComposeResult:
        yield NodeStatesChart(id="chart")

    def on_mount(self) -> None:
        chart = self.query_one(NodeStatesChart)
        for status in _session():
            chart.add(status)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_timeline(snap_compare: Any, size: tuple[int, int]) -> None:
    timeline = timeline_of(read_events(RECORDED))
    assert timeline.finished is not None

    async def before(pilot: Any) -> None:
        await home_loaded(pilot)  # the header names the highlighted cluster: settle it first
        pilot.app.push_screen(TimelineScreen("demo", log=RECORDED, clock=timeline.finished))
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TimelineScreen))

        def drawn() -> bool:  # composed, and the log read
            charts = list(pilot.app.screen.query(TimelineChart))
            return bool(charts) and charts[0].timeline is not None

        await wait_for(pilot, drawn)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        await pilot.pause()  # the chart's new height is laid out one refresh later

    assert snap_compare(NpaSopApp(FixedBackend()), terminal_size=size, run_before=before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_snapshot_node_states(snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(ChartApp(), terminal_size=size)


def test_timeline_lines_fit_the_width_and_mark_the_path() -> None:
    timeline = timeline_of(read_events(RECORDED))
    for width in (60, 80, 120):
        lines = timeline_lines(timeline, width, now=timeline.finished or 0)
        assert all(len(line.plain) <= width for line in lines), width
        bars = [line.plain for line in lines if "█" in line.plain or "▒" in line.plain]
        assert len(bars) == len(timeline.bars) + 1  # and the legend
        assert sum("█" in b for b in bars[1:]) == len(timeline.critical_path)


def test_stacked_column_and_legend() -> None:
    assert [g for g, _ in column({"idle": 2, "allocated": 1, "drained": 0, "down": 1}, 4)] == [
        "×",
        "█",
        "░",
        "░",
    ]
    assert [
        g for g, _ in column(dict.fromkeys(("idle", "allocated", "drained", "down"), 0), 2)
    ] == [" ", " "]
    history = NodeStateHistory()
    for status in _session():
        history.add(status)
    assert history.pools() == ["cpu", "gpu"]
    lines = [line.plain for line in node_state_lines(history, 80)]
    assert lines[0] == "░ idle  █ allocated  ▒ drained  × down"
    assert "cpu ░1 █0 ▒1 ×0" in lines and "gpu ░3 █0 ▒0 ×1" in lines
    assert lines[-1] == "30 snapshots, 29 min, newest right"
    assert not history.add(_session()[0])  # older than the newest: not a new sample
    narrow = [line.plain for line in node_state_lines(history, 40)]
    assert all(len(line) <= 40 for line in narrow)
    # at 40 columns every pool's count is still whole: a cut "×" would hide the one that matters
    assert "cpu ░1 █0 ▒1 ×0" in narrow and "gpu ░3 █0 ▒0 ×1" in narrow


async def test_home_shows_cost_so_far_of_running_clusters() -> None:
    from decimal import Decimal

    from npa_sop_tui.history.cost import CostSoFar
    from npa_sop_tui.screens.home import HomeScreen
    from npa_sop_tui.tui.widgets.charts.cost import CostChart

    class Priced(FixedBackend):
        def cluster_costs(self, names: list[str]) -> dict[str, Any]:
            return {"demo": CostSoFar(Decimal("1.15"), "usd", since=0)}

    app = NpaSopApp(Priced())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        chart = app.screen.query_one(CostChart)
        await wait_for(pilot, lambda: bool(chart.costs) and chart.display)
        text = str(chart.render())
        assert "demo" in text and "usd/h" in text and "train" not in text


def test_narrow_chart_buckets_the_whole_session_and_keeps_an_outage() -> None:
    """20 columns for 30 snapshots: 2 a column, aligned to the newest; a down node seen in
    one snapshot only still shows, because a column is the worst snapshot of its run."""
    session = _session()
    blip = session[3]
    assert blip.slurm is not None
    nodes = [
        n.model_copy(update={"state": "down", "flags": ["NOT_RESPONDING"]})
        if n.name == "cpu-0"
        else n
        for n in blip.slurm.nodes
    ]
    session[3] = blip.model_copy(update={"slurm": blip.slurm.model_copy(update={"nodes": nodes})})
    history = NodeStateHistory()
    for status in session:
        history.add(status)
    lines = node_state_lines(history, 20, rows=2)
    assert all(len(line.plain) <= 20 for line in lines)
    cpu = lines.index(next(line for line in lines if line.plain.startswith("cpu ")))
    top = lines[cpu + 1].plain
    assert len(top) == 15  # 30 snapshots, 2 a column
    assert top[1] == "×"  # snapshots 2-3 (0-based): the down one wins its column
    assert top.count("×") == 1
    assert [line.plain for line in lines[-3:]] == [
        "30 snapshots, 29 min",
        "newest right",
        "2 per column (worst)",
    ]


async def test_dashboard_shows_node_states_at_80x24() -> None:
    from textual.containers import VerticalScroll

    from npa_sop_tui.screens.status import StatusScreen

    class Session(FixedBackend):
        async def status_snapshots(self, name: str, **_: Any) -> Any:
            await asyncio.sleep(0.5)  # the screen composed first, as over a real network
            for status in _session(60):
                yield status
                await asyncio.sleep(0.01)
            await asyncio.Event().wait()

    app = NpaSopApp(Session())
    async with app.run_test(size=(80, 24)) as pilot:
        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        await wait_for(pilot, lambda: app.screen.query(NodeStatesChart))
        chart = app.screen.query_one(NodeStatesChart)
        await wait_for(pilot, lambda: len(chart.history.samples) == 60)
        left = app.screen.query_one("#status-left", VerticalScroll)
        left.scroll_to_widget(chart, animate=False)
        await pilot.pause()
        assert chart.display and chart.region.height > 0
        assert 20 <= chart.region.width < 40  # the left column of an 80-column dashboard
        text = [line.plain for line in chart.render().split()]
        assert all(len(line) <= chart.region.width for line in text)
        assert "cpu ░1 █0 ▒1 ×0" in text and "gpu ░3 █0 ▒0 ×1" in text
        # 60 snapshots in the ~25 columns: every one of them counts, the newest at the right
        assert any(line.startswith("60 snapshots, 59 min") for line in text)
        per = -(-60 // chart.size.width)  # the snapshots one column stands for
        assert per > 1 and text[-1] == f"{per} per column (worst)"
