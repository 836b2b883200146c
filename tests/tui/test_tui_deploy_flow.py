"""Deploy, cancel and destroy through the app, on the stand-in recipe with real Terraform.

The sandbox backend is the real lifecycle (PyPI Terraform + null provider) plus the in-repo
fake Kubernetes API server; nothing here is mocked at the UI level.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from npa_sop_tui.home import inventory
from npa_sop_tui.home.locks import ClusterLock
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.destroy import DestroyScreen
from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.progress import PhaseBar, ResourceTable
from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable

from testkit.tui import click, wait_for

pytestmark = [pytest.mark.terraform, pytest.mark.tui]


def _spec(backend: Any, path: Path) -> Any:
    spec, issues = backend.check(backend.load_spec(path))
    assert spec is not None, issues
    return spec


async def _plan_and_apply(pilot: Any, app: NpaSopApp, spec: Any) -> DeployScreen:
    app.deploy(spec)
    await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
    screen = app.screen
    await wait_for(pilot, lambda: screen.stage == OperationStage.PLANNED, timeout=90)
    assert screen.plan is not None and screen.plan.add > 0
    summary = str(screen.query_one("#plan-summary", Static).render())
    assert f"{screen.plan.add} to add" in summary and "Press a to apply this plan" in summary
    await pilot.press("a")  # the one confirmation: no question after it for a safe plan
    await wait_for(pilot, lambda: screen.stage != OperationStage.PLANNED)
    assert app.screen is screen
    return screen


async def test_deploy_shows_progress_reaches_dashboard_and_destroy_needs_the_name(
    sandbox_backend: Any, spec_file: Path
) -> None:
    messages: list[object] = []
    app = NpaSopApp(sandbox_backend, status_interval=1.0)
    spec = _spec(sandbox_backend, spec_file)
    async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
        deploy = await _plan_and_apply(pilot, app, spec)
        planned = deploy.plan.add  # type: ignore[union-attr]
        # held now: switching to the dashboard unmounts the deploy screen's widgets
        table = deploy.query_one(ResourceTable)
        bar = deploy.query_one(PhaseBar)
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen), timeout=120)

        progressed = [m for m in messages if isinstance(m, DeployScreen.ResourceProgressed)]
        assert progressed, "no progress batches were posted"
        counts = table.counts()
        assert counts["failed"] == 0 and counts["done"] >= planned
        assert bar.total >= planned and bar.done == bar.total
        assert deploy.outcome is not None and deploy.outcome.result == "ok"

        # the dashboard fills from the fake API server and the simulated Slurm
        status = app.screen
        await wait_for(
            pilot,
            lambda: status.status is not None and status.status.verdict.state == "ready",
            timeout=30,
        )
        groups = status.query_one("#node-groups", DataTable)
        rows = {
            str(groups.get_row_at(i)[0]): str(groups.get_row_at(i)[1])
            for i in range(groups.row_count)
        }
        assert rows["cpu"] == "2/2" and rows["system"] == "3/3"
        nodes = status.query_one("#slurm-nodes", SlurmNodesTable)
        assert sorted(str(nodes.get_row_at(i)[0]) for i in range(nodes.row_count)) == [
            "cpu-0",
            "cpu-1",
        ]
        assert "SANDBOX" in app.title

        # no login node in the sandbox: it says so rather than offer an ssh command that
        # reaches nothing
        from npa_sop_tui.screens.modals import TextModal

        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        body = str(app.screen.query_one("#text-body", Static).render())
        assert body.startswith("The sandbox has no login node") and "ssh root@" not in body
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is status)

        # destroy with the wrong name does nothing
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, DestroyScreen))
        destroy = app.screen
        destroy.query_one("#confirm-name").value = "demo-typo"
        await click(pilot, "#destroy")
        error = destroy.query_one("#destroy-error", Static)
        await wait_for(pilot, lambda: "Nothing was destroyed" in str(error.render()))
        assert destroy.outcome is None and not destroy.running
        entry = inventory.get("demo")
        assert entry is not None and entry.state == "deployed"
        assert [op.kind for op in entry.operations].count("destroy") == 0

        # the right name destroys, and the fake cluster empties as Terraform deletes
        destroy.query_one("#confirm-name").value = "demo"
        await click(pilot, "#destroy")
        await wait_for(pilot, lambda: destroy.outcome is not None, timeout=90)
        assert destroy.outcome.result == "ok", destroy.outcome  # type: ignore[union-attr]
        assert inventory.get("demo").state == "destroyed"  # type: ignore[union-attr]
        assert sandbox_backend.environment.kube.get("slurmclusters", "soperator") is None
        assert sandbox_backend.environment.kube.get("nodes", "demo-cpu-0") is None


async def test_cancel_mid_apply_leaves_a_consistent_state(npa_home: Path, spec_file: Path) -> None:
    from npa_sop_tui.tui.backend import sandbox_backend

    backend = sandbox_backend(sleep_seconds=3)
    app = NpaSopApp(backend)
    spec = _spec(backend, spec_file)
    async with app.run_test(size=(120, 40)) as pilot:
        deploy = await _plan_and_apply(pilot, app, spec)
        table = deploy.query_one(ResourceTable)
        await wait_for(pilot, lambda: table.counts()["in flight"] > 0, timeout=60)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await click(pilot, "#yes")
        await wait_for(pilot, lambda: deploy.stage == OperationStage.DONE, timeout=60)
        assert deploy.outcome is not None and deploy.outcome.result == "interrupted"
        assert "Interrupted" in str(deploy.query_one("#op-result", Static).render())
        assert isinstance(app.screen, DeployScreen)  # no jump to the dashboard
        # (inside the app: the sandbox keeps its inventory under NPA_HOME/sandbox)
        entry = inventory.get("demo")
        assert entry is not None and entry.state == "interrupted"
        assert entry.last_operation is not None
        assert entry.last_operation.result == "interrupted"
        # the lock was released and the state is usable: a fresh lock can be taken
        with ClusterLock("demo", operation="test"):
            pass
