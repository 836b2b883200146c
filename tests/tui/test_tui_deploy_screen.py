"""The deploy screen at 80×24: the resource table follows the work to the rows in flight,
keeps its rows through an interrupt, and the texts say what is true after the apply ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from npa_sop_tui.events import ResourceFinished, ResourceStarted
from npa_sop_tui.screens.deploy import DeployScreen, OperationStage
from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import DiagnosticsPanel, ResourceTable

from .fakes import FixedBackend
from testkit.tui import CPU_SPEC, wait_for

pytestmark = pytest.mark.tui

ADDRS = [f"module.k8s.null_resource.step[{i}]" for i in range(30)]


class ManyResources(FixedBackend):
    """25 resources done, then 5 that stay in flight until interrupted."""

    async def deploy(self, spec: Any, sink: Any, *, allow_destructive: bool) -> Any:
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
