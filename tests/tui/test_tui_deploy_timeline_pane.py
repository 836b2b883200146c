"""The deploy screen's timeline pane: live bars from the screen's own events, the chart under
the body from 100 columns, one line naming the critical path at 80x24, `t` to enlarge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Static

from npa_sop_tui.events import ResourceFinished, ResourceStarted
from npa_sop_tui.history.oplog import read_events
from npa_sop_tui.history.timeline import timeline_of
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import ResourceTable
from npa_sop_tui.tui.widgets.deploy.timeline_pane import DeployTimelinePane, summary_line

from .fakes import ADDRS, OP, T0, FixedBackend
from testkit.tui import planned, wait_for

pytestmark = pytest.mark.tui

RECORDED = Path(__file__).parents[1] / "history" / "data" / "deploy-demo.ndjson"


async def _applying(pilot: Any, tmp_path: Path) -> tuple[DeployScreen, DeployTimelinePane]:
    """Deploy the fixed backend's five resources; return once the pane drew all of them."""
    screen = await planned(pilot, tmp_path / "spec.yaml")
    screen.post_message(DeployScreen.DeployRequested(allow_destructive=False))
    pane = screen.query_one(DeployTimelinePane)
    await wait_for(pilot, lambda: pane.timeline is not None and len(pane.timeline.bars) == 5)
    await pilot.pause()
    return screen, pane


def _summary(pane: DeployTimelinePane) -> str:
    return str(pane.query_one("#tl-pane-summary", Static).render())


async def test_wide_deploy_shows_the_live_chart_under_the_body(tmp_path: Path) -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        screen, pane = await _applying(pilot, tmp_path)
        timeline = pane.timeline
        assert timeline is not None
        assert [b.addr for b in timeline.bars] == ADDRS  # in start order
        assert [b.duration() for b in timeline.bars] == [3.0] * 5
        # the chain the deploy waited on: the last bar to end, and the one that ended just
        # before it started
        assert [b.addr for b in timeline.critical_path] == [ADDRS[1], ADDRS[4]]
        body = pane.query_one("#tl-pane-body", VerticalScroll)
        await wait_for(pilot, lambda: body.region.height >= len(ADDRS))
        assert screen.query_one("#op-body").region.height > 5  # the body keeps its room
        text = _summary(pane)
        assert "5 resources, 7s" in text
        assert "critical path 2 (6s), ends in slurm.null_resource.release_operator" in text


async def test_narrow_deploy_names_the_critical_path_and_t_enlarges(tmp_path: Path) -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        screen, pane = await _applying(pilot, tmp_path)
        body = pane.query_one("#tl-pane-body", VerticalScroll)
        assert body.region.height == 0  # no rows to spare at 80x24: one line
        assert (
            _summary(pane)
            == "Timeline 5 res 7s █ path 2 (6s) ends slurm.null_resource.release_operator (t)"
        )
        table = screen.query_one(ResourceTable)
        assert screen.focused is table
        await pilot.press("t")
        await wait_for(pilot, lambda: body.region.height >= len(ADDRS) + 4)
        assert screen.query_one("#op-body").region.height == 0
        assert screen.focused is body and pane.expanded
        await pilot.press("t")
        await wait_for(pilot, lambda: body.region.height == 0)
        assert screen.focused is table
        assert screen.query_one("#op-body").region.height > 10
        # escape puts it back too, and does not leave the (running) deploy's screen
        await pilot.press("t")
        await wait_for(pilot, lambda: pane.expanded)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not pane.expanded)
        assert app.screen is screen


def test_pane_folds_a_recorded_deploy_like_its_log() -> None:
    events = list(read_events(RECORDED))
    expected = timeline_of(events)
    from npa_sop_tui.history.timeline import TimelineBuilder

    builder = TimelineBuilder()
    for event in events[: len(events) // 2]:  # half-way: the same bars so far, some open
        builder.add(event)
    half = builder.build()
    for event in events[len(events) // 2 :]:
        builder.add(event)
    assert len(half.bars) <= len(expected.bars)
    assert [(b.addr, b.start, b.end) for b in builder.build().bars] == [
        (b.addr, b.start, b.end) for b in expected.bars
    ]


def test_summary_of_a_running_resource_says_what_the_deploy_waits_on() -> None:
    events = [
        ResourceStarted(ts=T0, operation_id=OP, addr="module.k8s.a", module="k8s", action="create"),
        ResourceFinished(
            ts=T0 + 60,
            operation_id=OP,
            addr="module.k8s.a",
            module="k8s",
            action="create",
            elapsed=60,
        ),
        ResourceStarted(
            ts=T0 + 60, operation_id=OP, addr="module.slurm.b", module="slurm", action="create"
        ),
    ]
    text = summary_line(timeline_of(events), now=T0 + 185, expanded=False).plain
    assert text.startswith("Timeline: 2 resources, 3m05s, 1 running")
    assert "critical path 2 (3m05s), now on slurm.b" in text
    assert summary_line(None, now=0, expanded=True).plain == (
        "Timeline: no resource has started yet (t: back)"
    )
