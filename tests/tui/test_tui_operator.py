"""Operator actions in the app: node detail, drain with a reason and resume (confirmed), the
jobs pane with cancel (confirmed) and history, the SSH modal's copy keys, capacity per pool.

The actions run on the sandbox's simulated Slurm (its real logic and state file); the
dashboard's snapshot is rebuilt from the same state on each refresh."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.sandbox.slurm_sim import SimulatedSlurm, simulated_slurm_state
from npa_sop_tui.screens.jobs import JobsScreen, JobsTable
from npa_sop_tui.screens.modals import ConfirmModal, ReasonModal, SshModal
from npa_sop_tui.screens.node_detail import NodeDetailScreen
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.status.model import SlurmState
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.status.panels import NodeGroupsTable, SlurmNodesTable

from .fakes import FixedBackend, _status
from testkit.tui import wait_for

pytestmark = pytest.mark.tui


def _base() -> SlurmState:
    slurm = _status().slurm
    assert slurm is not None
    nodes = [
        n.model_copy(update={"state": "idle", "display": "idle", "flags": [], "reason": None})
        for n in slurm.nodes
    ]
    return slurm.model_copy(update={"nodes": nodes})


class OpsBackend(FixedBackend):
    async def slurm_ops(self, name: str, **_: Any) -> Any:
        return SimulatedSlurm(name, _base, accounting=True)

    def pool_capacity(self, name: str) -> dict[str, str]:
        return {"cpu": "reserved"}

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        status = _status()
        status.slurm = simulated_slurm_state(name, _base())
        yield status
        await asyncio.Event().wait()


async def _dashboard(pilot: Any, app: NpaSopApp) -> StatusScreen:
    app.show_status("demo")
    await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
    screen = app.screen
    assert isinstance(screen, StatusScreen)
    await wait_for(pilot, lambda: screen.status is not None)
    return screen


async def test_drain_and_resume_from_node_detail(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _dashboard(pilot, app)
        groups = screen.query_one(NodeGroupsTable)
        await wait_for(pilot, lambda: str(groups.get_row("cpu")[2]) == "reserved")
        table = screen.query_one(SlurmNodesTable)
        table.focus()
        table.move_cursor(row=1)  # cpu-1
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen))
        detail = app.screen
        await wait_for(pilot, lambda: detail.detail is not None)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonModal))
        await pilot.press("enter")  # an empty reason is refused beside the field
        assert "Type why" in str(app.screen.query_one("#reason-error").render())
        await pilot.press(*"disk [/] check")
        await pilot.press("enter")
        await wait_for(pilot, lambda: detail.detail is not None and "DRAIN" in detail.detail.state)
        text = str(detail.query_one("#node-text").render())
        assert "reason      disk [/] check (by root" in text
        await pilot.press("escape")  # back: the dashboard refreshes and shows the reason
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(
            pilot,
            lambda: "disk [/] check" in str(screen.query_one(SlurmNodesTable).get_row("cpu-1")),
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen))
        detail = app.screen
        await wait_for(pilot, lambda: detail.detail is not None)
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: "DRAIN" not in detail.detail.state)


async def test_jobs_pane_cancels_after_confirmation_and_shows_history(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await _dashboard(pilot, app)
        await pilot.press("j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        jobs = app.screen
        table = jobs.query_one(JobsTable)
        await wait_for(pilot, lambda: table.row_count == 0)  # no canned jobs
        backend = SimulatedSlurm("demo", _base, accounting=True).local_jobs()
        for _ in range(2):  # two real (local) jobs to act on
            await backend.submit(JobRequest(command="sleep 30"))
        await pilot.press("r")  # refresh
        await wait_for(pilot, lambda: table.row_count == 2)
        assert table.show_cursor, "the focused table shows its cursor"
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")  # no: nothing happens
        await wait_for(pilot, lambda: app.screen is jobs)
        assert table.row_count == 2
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: table.row_count == 1)
        await pilot.press("h")
        await wait_for(pilot, lambda: jobs.history and table.row_count == 1)
        assert "CANCELLED" in str(table.get_row_at(0))
        await pilot.press("slash", *"[nomatch")
        assert jobs.query_one("#jobs-filter", Input).value == "[nomatch"
        await wait_for(pilot, lambda: table.row_count == 0)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
    for job in backend.all():  # leave no process behind
        if not job.done:
            await backend.cancel(job.id)


async def test_ssh_modal_copies_the_command_and_the_address(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(100, 30)) as pilot:
        await _dashboard(pilot, app)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, SshModal))
        await pilot.press("c", "i")
    assert copied == ["ssh root@203.0.113.7", "203.0.113.7"]


async def test_job_history_without_accounting_lists_npas_jobs_and_their_output(
    npa_home: Path,
) -> None:
    """Accounting off: `h` lists the jobs npa ran (its records) and `enter` shows a
    finished job's output again, where it said only "no job history"."""
    from npa_sop_tui.jobs import records
    from npa_sop_tui.jobs.model import JobRequest
    from npa_sop_tui.screens.job_screen import JobScreen
    from npa_sop_tui.screens.jobs import JobsScreen, JobsTable

    class NoAccounting(OpsBackend):
        async def slurm_ops(self, name: str, **_: Any) -> Any:
            return SimulatedSlurm(name, _base, accounting=False)

    local = SimulatedSlurm("demo", _base, accounting=False).local_jobs()
    job = await local.submit(JobRequest(command="echo from the first job"))
    done = await local.follow(job, on_output=lambda _: None)
    records.save("demo", done, command="echo from the first job")
    app = NpaSopApp(NoAccounting())
    async with app.run_test(size=(80, 24)) as pilot:
        await _dashboard(pilot, app)
        await pilot.press("j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        jobs = app.screen
        await pilot.press("h")
        table = jobs.query_one(JobsTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        title = str(jobs.query_one("#jobs-title").render())
        assert "the jobs npa ran" in title and "no job history" not in title
        assert str(table.get_row_at(0)[1]) == "COMPLETED"
        table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen))
        output = app.screen
        await wait_for(
            pilot, lambda: "from the first job" in "\n".join(output.query_one("Log").lines)
        )
