"""The sandbox's simulated Slurm honours drain / resume / cancel, and remembers them across
processes (a state file beside the cluster's inventory)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.sandbox.slurm_sim import SimulatedSlurm, simulated_slurm_state
from npa_sop_tui.status.model import SlurmNode, SlurmPartition, SlurmState

from testkit.wait import eventually


def _base() -> SlurmState:
    nodes = [
        SlurmNode(
            name=f"cpu-{i}",
            state="idle",
            display="idle",
            partitions=["main"],
            cpus=8,
            cpus_allocated=0,
            memory_mb=32768,
        )
        for i in range(2)
    ]
    part = SlurmPartition(name="main", default=True, available="up", nodes_total=2)
    return SlurmState(host="sim", source_format="delimited", nodes=nodes, partitions=[part])


def _ops(accounting: bool = True) -> SimulatedSlurm:
    return SimulatedSlurm("demo", _base, accounting=accounting)


async def test_drain_is_shown_until_resumed_across_instances(npa_home: Path) -> None:
    await _ops().drain("cpu-1", 'disk "check" [/] failed')
    state = await _ops().nodes()  # a new instance: as another process would see it
    node = {n.name: n for n in state.nodes}["cpu-1"]
    assert node.state == "drained" and "DRAIN" in node.flags
    # as sinfo's %E on Slurm 25.11: the reason alone, no [user@time]
    assert node.reason == "disk 'check' [/] failed"
    # the recipe's partitions: main (default) and hidden, both listed by `sinfo -a`
    parts = {p.name: p for p in state.partitions}
    assert list(parts) == ["main", "hidden"]
    assert parts["main"].default and not parts["hidden"].default
    assert parts["main"].nodes_idle == 1 and parts["main"].nodes_other == 1
    assert node.partitions == ["main", "hidden"]
    detail = await _ops().node("cpu-1")
    assert detail.state == "IDLE+DRAIN" and detail.reason == "disk 'check' [/] failed"
    # scontrol keeps who and when, and Soperator's slurmd fields follow the reason
    assert detail.reason_by == "root" and detail.reason_time
    assert detail.fields["InstanceId"] == "computeinstance-cpu-1"
    assert json.loads(detail.fields["Extra"]) == {"nodeset": "cpu"}
    # the dashboard's simulated sinfo shows it too
    shown = {n.name: n for n in simulated_slurm_state("demo", _base()).nodes}["cpu-1"]
    assert shown.display == "drained"
    await _ops().resume("cpu-1")
    node = {n.name: n for n in (await _ops().nodes()).nodes}["cpu-1"]
    assert node.state == "idle" and node.reason is None


async def test_jobs_are_local_processes_cancel_and_history(npa_home: Path) -> None:
    assert await _ops().jobs() == []  # no canned jobs: only what was submitted
    backend = _ops().local_jobs()
    job = await backend.submit(JobRequest(command="sleep 30"))
    await eventually(lambda: _running(job.id))
    jobs = await _ops().jobs()  # another instance sees it, as another process would
    assert [(j.id, j.state, j.nodelist) for j in jobs] == [(job.id, "RUNNING", "cpu-0")]
    nodes = {n.name: n for n in (await _ops().nodes()).nodes}
    assert nodes["cpu-0"].state == "mixed" and nodes["cpu-1"].state == "idle"
    await _ops().cancel(job.id)
    assert await _ops().jobs() == []
    history = await _ops().history()
    assert history.available and [(j.id, j.state) for j in history.jobs] == [(job.id, "CANCELLED")]
    off = await _ops(accounting=False).history()
    assert not off.available and "accounting" in (off.note or "")
    with pytest.raises(UsageError, match="no queued or running job"):
        await _ops().cancel(job.id)


async def _running(job_id: str) -> bool:
    return any(j.id == job_id and j.state == "RUNNING" for j in await _ops().jobs())


async def test_bad_input_is_refused(npa_home: Path) -> None:
    with pytest.raises(UsageError, match="no node"):
        await _ops().drain("cpu-9", "x")
    with pytest.raises(UsageError, match="needs a reason"):
        await _ops().drain("cpu-0", "   ")
    with pytest.raises(UsageError, match="not a Slurm job ID"):
        await _ops().cancel("1; rm -rf /")
    path = npa_home / "soperator" / "demo" / "slurm-sim.json"
    assert not path.exists()  # refused actions write nothing


async def test_jobs_run_on_nodes_that_are_not_drained(npa_home: Path) -> None:
    await _ops().drain("cpu-0", "bad disk")
    job = await _ops().local_jobs().submit(JobRequest(command="true"))
    assert job.nodes == "cpu-1"
    await _ops().resume("cpu-0")
