"""A failed operation ends its in-flight rows and opens a modal with Terraform's first error
block, offering retry (r) and the log (l); the log viewer searches the whole log."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from npa_sop_tui.errors import OperationError
from npa_sop_tui.events import Diagnostic, EventSink, LogLine, PlanSummary, ResourceStarted
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.modals import FailureModal
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import ResourceTable
from npa_sop_tui.tui.widgets.log_view import LogView

from .fakes import T0, FixedBackend
from testkit.tui import wait_for

pytestmark = pytest.mark.tui
OP = "op-fail"
ADDR = 'module.k8s.null_resource.worker_v2["cpu-0"]'


class FailingBackend(FixedBackend):
    """The first plan fails with a Terraform error; the apply fails with a resource in flight."""

    plans = 0

    async def plan(self, spec: Any, sink: EventSink, *, allow_unknown: bool = False) -> PlanSummary:
        self.plans += 1
        if self.plans == 1:
            sink(LogLine(ts=T0, operation_id=OP, stream="terraform", text="Initializing…"))
            sink(
                Diagnostic(
                    ts=T0,
                    operation_id=OP,
                    severity="error",
                    summary="Invalid value for variable",
                    detail='on variables.tf line 12:\n  12: variable "region" [/x]',
                )
            )
            sink(Diagnostic(ts=T0, operation_id=OP, severity="error", summary="second error"))
            raise OperationError("terraform plan failed (exit 1)")
        return PlanSummary(ts=T0, operation_id=OP, phase="plan", add=1, change=0, remove=0)

    async def deploy(
        self, spec: Any, sink: EventSink, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        sink(ResourceStarted(ts=T0, operation_id=OP, addr=ADDR, module="k8s", action="create"))
        sink(Diagnostic(ts=T0, operation_id=OP, severity="error", summary="Quota exceeded"))
        raise OperationError("terraform apply failed (exit 1)")


async def test_failures_show_the_first_error_and_offer_retry_and_log(tmp_path: Any) -> None:
    app = NpaSopApp(FailingBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        spec, _ = app.backend.check(
            {
                "name": "demo",
                "region": "eu-north1",
                "workers": [{"name": "cpu", "platform": "cpu-d3", "preset": "8vcpu-32gb"}],
            }
        )
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, FailureModal))
        modal = app.screen
        block = str(modal.query_one("#failure-error").render())
        assert "Invalid value for variable" in block and "[/x]" in block
        assert "second error" not in block  # the first error block only
        assert "plan failed" in str(modal.query_one("#failure-message").render())

        await pilot.press("l")  # the log, searchable
        await wait_for(pilot, lambda: isinstance(app.screen, LogViewerScreen))
        viewer = app.screen
        assert isinstance(viewer, LogViewerScreen)
        await pilot.press("slash", *"invalid")
        assert viewer.matches and "match 1 of 1" in str(viewer.query_one("#log-status").render())
        assert viewer.query_one("#log-search", Input).value == "invalid"
        await pilot.press("escape", "escape")
        deploy = app.screen
        assert isinstance(deploy, DeployScreen) and deploy.stage == OperationStage.DONE

        await pilot.press("r")  # plan again: this time it works
        await wait_for(pilot, lambda: deploy.stage == OperationStage.PLANNED)
        await pilot.press("a")  # the plan on screen is the confirmation
        await wait_for(pilot, lambda: isinstance(app.screen, FailureModal))
        assert "Quota exceeded" in str(app.screen.query_one("#failure-error").render())
        await pilot.press("escape")
        table = deploy.query_one(ResourceTable)
        assert table.resources[ADDR].state == "failed", "no row stays in flight"
        assert table.resources[ADDR].ended is not None
        assert table.counts()["in flight"] == 0
        assert "failed" in str(table.get_row(ADDR)[0])
        assert deploy.query_one("#event-log", LogView).lines
