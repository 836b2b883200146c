"""The fleet's node states in one view: `f` on home opens every live cluster's chart, side by
side from 100 columns and stacked at 80x24; a cluster whose status fails says why."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from textual.widgets import Static

from npa_sop_tui.errors import OperationError
from npa_sop_tui.screens.fleet_node_states import ClusterNodeStates, FleetNodeStatesScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import ClusterRow
from npa_sop_tui.tui.widgets.charts.node_states import NodeStatesChart

from .fakes import FixedBackend
from .test_tui_charts import _session
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui


class Fleet(FixedBackend):
    """demo and lab are deployed, train failed (not charted), lab's login is unreachable."""

    streamed: ClassVar[list[str]] = []

    def list_clusters(self) -> list[ClusterRow]:
        return [
            *super().list_clusters(),
            ClusterRow("lab", "eu-north1", "deployed", "deploy ok 2026-11-30 11:00"),
        ]

    async def status_snapshots(self, name: str, **_: Any) -> Any:
        type(self).streamed.append(name)
        await asyncio.sleep(0.3)  # the screen composed first, as over a real network
        if name == "lab":
            raise OperationError("cannot reach the login node of lab: set login.host")
        for status in _session(12):
            yield status.model_copy(update={"name": name})
            await asyncio.sleep(0.01)
        await asyncio.Event().wait()


async def _open(pilot: Any) -> FleetNodeStatesScreen:
    await home_loaded(pilot)
    await pilot.press("f")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, FleetNodeStatesScreen))
    screen = pilot.app.screen
    await wait_for(pilot, lambda: len(screen.query(ClusterNodeStates)) == 2)
    demo = next(p for p in screen.query(ClusterNodeStates) if p.cluster == "demo")
    chart = demo.query_one(NodeStatesChart)
    await wait_for(pilot, lambda: len(chart.history.samples) == 12)
    lab = next(p for p in screen.query(ClusterNodeStates) if p.cluster == "lab")
    await wait_for(pilot, lambda: "login.host" in str(lab.query_one(Static).render()))
    await pilot.pause()
    return screen


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_fleet_view_charts_every_live_cluster(size: tuple[int, int]) -> None:
    Fleet.streamed = []
    app = NpaSopApp(Fleet())
    async with app.run_test(size=size) as pilot:
        screen = await _open(pilot)
        assert sorted(Fleet.streamed) == ["demo", "lab"]  # train failed: nothing to chart
        demo, lab = sorted(screen.query(ClusterNodeStates), key=lambda p: p.cluster)
        title = str(demo.query_one(Static).render())
        assert title == "demo: DEGRADED"
        text = demo.query_one(NodeStatesChart).render().plain
        assert "cpu ░1 █0 ▒1 ×0" in text and "gpu ░1 █3 ▒0 ×0" in text
        assert "┤" in text and "┬" in text  # a y-scale and a time axis
        if size[0] >= 100:  # side by side
            assert demo.region.y == lab.region.y and demo.region.x != lab.region.x
        else:  # stacked, each the full width
            assert demo.region.x == lab.region.x and lab.region.y > demo.region.y
            assert demo.region.width >= 70
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, FleetNodeStatesScreen))


async def test_fleet_view_starts_from_the_history_the_dashboard_kept(npa_home: Any) -> None:
    """What a cluster's dashboard saw before (kept in the home) is in the fleet view's chart
    at once, before its own first snapshot: history does not reset when the view opens."""
    import time

    from npa_sop_tui.history.node_states import HistoryStore, NodeStateHistory

    earlier = NodeStateHistory(store=HistoryStore("demo"))
    an_hour_ago = time.time() - 3600
    for i, status in enumerate(_session(12)):
        earlier.add(status.model_copy(update={"taken_at": an_hour_ago + 60 * i}))
    Fleet.streamed = []
    app = NpaSopApp(Fleet())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetNodeStatesScreen))
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.query(ClusterNodeStates)) == 2)
        demo = next(p for p in screen.query(ClusterNodeStates) if p.cluster == "demo")
        chart = demo.query_one(NodeStatesChart)
        await wait_for(pilot, lambda: len(chart.history.samples) == 24)  # 12 kept + 12 live
        first = chart.history.samples[0].at
        assert abs(first - earlier.samples[0].at) < 0.01  # stored to the millisecond


async def test_fleet_view_without_live_clusters_says_so() -> None:
    class Nothing(FixedBackend):
        def list_clusters(self) -> list[ClusterRow]:
            return [ClusterRow("train", "us-central1", "failed", "deploy failed")]

    app = NpaSopApp(Nothing())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FleetNodeStatesScreen))
        title = str(app.screen.query_one("#fleet-title", Static).render())
        assert title.startswith("No live cluster")
        assert not app.screen.query(ClusterNodeStates)
