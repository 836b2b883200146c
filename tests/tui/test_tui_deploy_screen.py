"""The deploy screen at 80×24: the resource table follows the work to the rows in flight,
keeps its rows through an interrupt, and the texts say what is true after the apply ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from npa_sop_tui.events import ResourceFinished, ResourceStarted
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import DiagnosticsPanel, ResourceTable

from .fakes import FixedBackend
from testkit.tui import CPU_SPEC, wait_for

pytestmark = pytest.mark.tui

ADDRS = [f"module.k8s.null_resource.step[{i}]" for i in range(30)]


class ManyResources(FixedBackend):
    """25 resources done, then 5 that stay in flight until interrupted."""

    async def deploy(
        self, spec: Any, sink: Any, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        for i, addr in enumerate(ADDRS):
            sink(ResourceStarted(ts=i, operation_id="op", addr=addr, module="k8s", action="create"))
            if i < 25:
                sink(
                    ResourceFinished(
                        ts=i + 1,
                        operation_id="op",
                        addr=addr,
                        module="k8s",
                        action="create",
                        elapsed=1.0,
                    )
                )
        await asyncio.Event().wait()


async def test_deploy_screen_at_80x24(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CPU_SPEC)
    app = NpaSopApp(ManyResources())
    async with app.run_test(size=(80, 24)) as pilot:
        spec, _ = app.backend.check(app.backend.load_spec(path))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)
        await wait_for(pilot, lambda: screen.focused is screen.query_one("#apply"))
        await pilot.press("a")
        await wait_for(pilot, lambda: screen.stage == OperationStage.APPLYING)
        table = screen.query_one(ResourceTable)
        await wait_for(pilot, lambda: table.row_count == 30)

        # the first in-flight row (index 25) is on screen, not the first five done ones
        def in_flight_shown() -> bool:
            top, height = round(table.scroll_y), table.scrollable_content_region.height
            return table.cursor_row == 25 and height >= 3 and top <= 25 < top + height - 1

        await wait_for(pilot, in_flight_shown)
        summary = screen.query_one("#plan-summary", Static)
        assert "Press c to interrupt" in str(summary.render())
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.stage == OperationStage.DONE)
        await pilot.pause()
        assert table.row_count == 30 and table.scrollable_content_region.height >= 3
        assert "Press c" not in str(summary.render())
        assert "interrupted" in str(summary.render())
        # the log pane once showed one line at 80x24: its filter box is one row, not three
        log = screen.query_one("#event-log")
        assert screen.query_one("#log-filter").region.height == 1
        assert log.scrollable_content_region.height >= 5, log.region


async def test_retry_clears_the_old_failure_panel() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        panel = DiagnosticsPanel(id="d")
        await app.screen.mount(panel)
        from npa_sop_tui.events import Diagnostic

        panel.add([Diagnostic(ts=0, operation_id="op", severity="error", summary="boom")])
        assert panel.has_class("-has") and panel.first_error
        panel.reset()
        await pilot.pause()
        assert not panel.has_class("-has") and not panel.items and panel.first_error is None


class PlannedAs(FixedBackend):
    """Plans what it is given; a deploy must not start from an empty plan."""

    def __init__(self, summary: Any) -> None:
        super().__init__()
        self.summary = summary
        self.deploys = 0

    async def plan(self, spec: Any, sink: Any, *, allow_unknown: bool = False) -> Any:
        return self.summary

    async def deploy(
        self, spec: Any, sink: Any, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        self.deploys += 1
        await asyncio.Event().wait()


async def _planned(tmp_path: Path, summary: Any) -> tuple[str, bool, int]:
    """The plan box's text, whether Apply is enabled, and deploys started after `a`."""
    path = tmp_path / "cluster.yaml"
    path.write_text(CPU_SPEC)
    backend = PlannedAs(summary)
    app = NpaSopApp(backend)
    async with app.run_test(size=(80, 24)) as pilot:
        spec, _ = app.backend.check(app.backend.load_spec(path))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED)
        await pilot.pause()
        text = str(screen.query_one("#plan-summary", Static).render())
        enabled = not screen.query_one("#apply").disabled
        if not enabled:
            await pilot.press("a")
            await pilot.pause()
    return text, enabled, backend.deploys


async def test_plan_shows_pool_changes_and_an_empty_plan_says_so(tmp_path: Path) -> None:
    from npa_sop_tui.events import PlanSummary, PoolChange

    resize = PoolChange(pool="gpu", change="resize", size_before=2, size_after=4)
    text, enabled, _ = await _planned(
        tmp_path,
        PlanSummary(operation_id="op", phase="plan", add=2, change=1, remove=0, pools=[resize]),
    )
    assert "worker pool gpu: resize (size 2 → 4)" in text  # the CLI's line
    assert "Press a to apply" in text and enabled
    empty = PlanSummary(operation_id="op", phase="plan", add=0, change=0, remove=0)
    text, enabled, deploys = await _planned(tmp_path, empty)
    assert "Nothing to apply: the cluster already matches the spec" in text
    assert "Press a to apply" not in text
    assert not enabled and deploys == 0  # neither the button nor the key starts anything
