"""Until when a running deploy's apply waits (status/apply_deadlines.py): read from the
deploy's own operation log, written by the real operation bookkeeping, and shown by status
in JSON, text and the dashboard's lines; nothing when no deploy runs here."""

from __future__ import annotations

import time

from rich.console import Console

from npa_sop_tui.events import ResourceFinished, ResourceStarted
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle.operation import operation
from npa_sop_tui.redact import Redactor
from npa_sop_tui.status.apply_deadlines import ApplyWaitTracker, utc_clock
from npa_sop_tui.status.render import render_status
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher
from npa_sop_tui.tui.widgets.status.panels import apply_wait_lines

CHECKS_HR = "module.slurm.terraform_data.wait_for_soperator_activechecks_hr"
CLUSTER_HR = "module.slurm.terraform_data.wait_for_slurm_cluster_hr"


def _started(op_id: str, addr: str, ts: float) -> ResourceStarted:
    return ResourceStarted(operation_id=op_id, addr=addr, module="slurm", action="create", ts=ts)


def _finished(op_id: str, addr: str) -> ResourceFinished:
    return ResourceFinished(
        operation_id=op_id, addr=addr, module="slurm", action="create", elapsed=3.0
    )


async def test_status_shows_until_when_a_running_deploy_waits() -> None:
    tracker = ApplyWaitTracker("demo")
    assert tracker.update(now=0.0) == []  # no deploy at all
    settings = StatusSettings(name="demo", kube_enabled=False, slurm_enabled=False)
    with operation("deploy", "demo", None, Redactor()) as op:
        op.entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm")
        op.entry.state = "deploying"
        op.save_entry()  # as deploy does before the first apply
        assert tracker.update(now=20.0) == []  # running, no wait started yet
        started = time.time() - 120
        op.emit(_started(op.id, CLUSTER_HR, started - 600))
        op.emit(_finished(op.id, CLUSTER_HR))
        op.emit(_started(op.id, CHECKS_HR, started))
        (wait,) = tracker.update(now=21.0)
        assert (wait.address, wait.minutes, wait.operation_id) == (CHECKS_HR, 240, op.id)
        assert wait.gives_up_at == started + 240 * 60 and "activechecks" in wait.what

        async with StatusWatcher(settings) as watcher:
            snap = await watcher.refresh()
        assert [w.gives_up_at for w in snap.apply_waits] == [started + 240 * 60]
        assert snap.model_dump(mode="json")["apply_waits"][0]["address"] == CHECKS_HR
        console = Console(width=200, record=True)
        console.print(render_status(snap))
        deadline = utc_clock(started + 240 * 60)
        assert f"gives up at {deadline} (up to 240 min from {utc_clock(started)})" in (
            console.export_text()
        )
        (line,) = apply_wait_lines(snap)
        assert f"gives up at {deadline}" in line.plain

        op.emit(_finished(op.id, CHECKS_HR))
        assert tracker.update(now=22.0) == []
        op.emit(_started(op.id, CHECKS_HR, started))
        assert len(tracker.update(now=23.0)) == 1
    # the deploy ended: its log says so at once, and its record no longer runs
    assert tracker.update(now=24.0) == [] and tracker.update(now=60.0) == []
    async with StatusWatcher(settings) as watcher:
        assert (await watcher.refresh()).apply_waits == []


def test_a_deploy_that_is_not_running_here_shows_no_deadline() -> None:
    with operation("deploy", "demo", None, Redactor()) as op:
        op.entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm")
        op.record.pid = 2**22 + 12345  # beyond pid_max: no such process on this machine
        op.save_entry()
        op.emit(_started(op.id, CHECKS_HR, time.time()))
        assert ApplyWaitTracker("demo").update() == []
        op.record.pid = None  # a record without its process: no start time is trusted
        op.save_entry()
        assert ApplyWaitTracker("demo").update() == []
