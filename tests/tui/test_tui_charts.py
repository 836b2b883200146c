"""SVG snapshots of the charts at 80x24 and 120x40: the deploy timeline of a recorded
sandbox deploy (its own screen, fixed clock) and node states over a session's snapshots
(plotext: a y-scale of nodes, a time axis, a legend; a sparkline row per pool where the
rows are few); the pure drawing functions' shapes; the history kept in the home."""

from __future__ import annotations

import asyncio
import re
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
from npa_sop_tui.tui.widgets.charts.node_states import NodeStatesChart, node_state_lines
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
        session = _session()
        chart.clock = session[-1].taken_at
        for status in session:
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


def _plain(lines: list[Any]) -> list[str]:
    return [line.plain for line in lines]


def test_plot_has_a_y_scale_a_time_axis_a_legend_and_the_counts() -> None:
    history = NodeStateHistory()
    for status in _session():
        history.add(status)
    assert history.pools() == ["cpu", "gpu"]
    lines = _plain(node_state_lines(history, 100, 16))
    assert lines[0] == "░ idle  █ allocated  ▒ drained  × down"
    assert lines[1] == "cpu ░1 █0 ▒1 ×0   gpu ░3 █0 ▒0 ×1"
    assert len(lines) <= 16 and all(len(line) <= 100 for line in lines)
    scale = [line.split("┤")[0].strip() for line in lines if "┤" in line]
    assert scale[0] == "6" and scale[-1] == "0"  # 6 nodes: the y-scale counts nodes
    times = lines[-1].split()
    assert len(times) >= 4 and all(re.fullmatch(r"\d\d:\d\d", t) for t in times)
    plot = "\n".join(lines)
    assert all(glyph in plot for glyph in "░█▒×")
    assert not history.add(_session()[0])  # older than the newest: not a new sample


def test_few_rows_give_a_sparkline_row_per_pool() -> None:
    history = NodeStateHistory()
    for status in _session():
        history.add(status)
    rows = _plain(node_state_lines(history, 78, 2))
    assert len(rows) == 2 and all(len(r) <= 78 for r in rows)
    cpu, gpu = rows
    assert cpu.startswith("cpu ░1 █0 ▒1 ×0 ") and cpu.endswith(" 29m")
    assert gpu.startswith("gpu ░3 █0 ▒0 ×1 ")
    spark = gpu.removeprefix("gpu ░3 █0 ▒0 ×1 ").removesuffix(" 29m")
    assert spark[0] == "▁" and "▆" in spark and spark.endswith("×")  # idle, busy, a node down
    assert " " not in spark.strip()  # a sample holds until the next one
    one = _plain(node_state_lines(history, 78, 1))
    assert len(one) == 1 and one[0].startswith("all ░4 █0 ▒1 ×1")


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
        assert "demo" in text and "$1.15/h" in text and "train" not in text


def test_narrow_chart_keeps_a_one_snapshot_outage() -> None:
    """A down node seen in one snapshot only still shows: a column is the worst sample of
    its stretch of time."""
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
    (cpu, _) = _plain(node_state_lines(history, 40, 2))
    spark = cpu.removeprefix("cpu ░1 █0 ▒1 ×0 ").removesuffix(" 29m")
    assert len(spark) < 30 and spark.count("×") == 1 and spark.index("×") < 5


def test_history_survives_in_the_home_bounded_and_read_only_writes_nothing(
    npa_home: Path,
) -> None:
    from npa_sop_tui.history.node_states import MAX_STORED, HistoryStore, Sample

    session = _session()
    history = NodeStateHistory(store=HistoryStore("demo"))
    for status in session:
        history.add(status)
    store = HistoryStore("demo")
    now = session[-1].taken_at
    kept = store.load(now=now)
    # changes at once, unchanged counts once a minute: the session's 30 one-minute samples
    assert [s.at for s in kept] == [s.taken_at for s in session]
    assert kept[-1].counts == history.samples[-1].counts
    assert oct(store.path.stat().st_mode & 0o777) == "0o600"
    # a later view (another app, the fleet view) starts from it
    later = NodeStateHistory()
    later.merge(kept)
    assert len(later.samples) == 30
    # bounded: a week old goes, a torn line goes; the file is rewritten without them
    old = Sample(
        now - 8 * 86400, {"cpu": dict.fromkeys(("idle", "allocated", "drained", "down"), 1)}
    )
    with store.path.open("a") as f:
        f.write(old.to_json() + "\n" + '{"at": 1, "coun\n')
    assert len(HistoryStore("demo").load(now=now)) == 30
    assert len(store.path.read_text().splitlines()) == 30
    assert MAX_STORED >= 7 * 24 * 60  # a week at one sample a minute fits
    # a read-only session reads it and writes nothing
    watcher = NodeStateHistory(store=HistoryStore("demo", writable=False))
    later_status = session[-1].model_copy(update={"taken_at": now + 600})
    before = store.path.read_bytes()
    assert watcher.add(later_status)
    assert store.path.read_bytes() == before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_dashboard_shows_node_states_without_scrolling(
    size: tuple[int, int], npa_home: Path
) -> None:
    """At 80x24 one sparkline row per pool, at 120x40 the plot with its axes (at least 40
    columns): both in view without scrolling, under the tables."""
    from npa_sop_tui.screens.status import StatusScreen

    class Session(FixedBackend):
        async def status_snapshots(self, name: str, **_: Any) -> Any:
            await asyncio.sleep(0.5)  # the screen composed first, as over a real network
            for status in _session(60):
                yield status
                await asyncio.sleep(0.01)
            await asyncio.Event().wait()

    app = NpaSopApp(Session())
    async with app.run_test(size=size) as pilot:
        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        await wait_for(pilot, lambda: app.screen.query(NodeStatesChart))
        chart = app.screen.query_one(NodeStatesChart)
        await wait_for(pilot, lambda: len(chart.history.samples) == 60)
        await pilot.pause()
        screen = app.screen.region
        assert chart.display and screen.contains_region(chart.region)
        text = [line.plain for line in chart.render().split()]
        assert all(len(line) <= chart.region.width for line in text)
        if size == (80, 24):
            assert chart.region.height == 2 and chart.region.width >= 70
            assert text[0].startswith("cpu ░1 █0 ▒1 ×0") and text[1].startswith("gpu ░3 █0 ▒0 ×1")
        else:
            assert chart.region.width >= 100 and chart.region.height >= 12
            assert "cpu ░1 █0 ▒1 ×0   gpu ░3 █0 ▒0 ×1" in text
            axis = [line for line in text if "┬" in line]
            assert axis and len(axis[0].strip()) >= 40
