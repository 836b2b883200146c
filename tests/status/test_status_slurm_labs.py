"""Status and operator actions over real SSH on every Slurm lab of the substrate (22.05 and
26.05, the `gpu_lab` fixture): the one-call table and the JSON agree, the JSON is asked in
the format the release ships (v0.0.44 on 26.05), partitions as the lab has them (the hidden
one with `sinfo -a`), a drain's reason with its who/when and the fields Soperator's slurmd
sets after it, resume, jobs and cancel."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.status.hostkeys import HostKeyPolicy
from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.status.sinfo_json import collect_json
from npa_sop_tui.status.slurm_ops import RemoteSlurm
from npa_sop_tui.status.ssh import SshSession, SshTarget

from testkit.gpu_lab import GpuLab
from testkit.wait import eventually

pytestmark = pytest.mark.slurm


@pytest.fixture
async def ops(gpu_lab: GpuLab) -> AsyncIterator[RemoteSlurm]:
    target = SshTarget(gpu_lab.host, gpu_lab.port, gpu_lab.user, identity_file=gpu_lab.key)
    remote = RemoteSlurm(SshSession(target, policy=HostKeyPolicy.accept_new()), host="lab")
    try:
        yield remote
    finally:
        await remote.runner.run("scancel -u slurmops --name 'npa-lab-*' 2>/dev/null; true")
        for node in gpu_lab.nodes:  # idle again whatever the test did (idle: a no-op)
            await remote.runner.run(f"scontrol update nodename={node} state=resume 2>/dev/null")
        await remote.aclose()


async def test_table_and_json_agree_in_the_release_format(
    gpu_lab: GpuLab, ops: RemoteSlurm
) -> None:
    state = await ops.nodes()
    assert state.version and state.version.startswith(gpu_lab.slurm_version)
    assert [p.name for p in state.partitions] == list(gpu_lab.partitions)
    assert state.partitions[0].default
    assert [n.name for n in state.nodes] == list(gpu_lab.nodes)
    assert all(sorted(n.partitions) == sorted(gpu_lab.partitions) for n in state.nodes)
    by_json = await collect_json(ops.runner, host="lab")
    expected = "json-v0.0.38" if gpu_lab.slurm_version == "22.05" else "json-v0.0.44"
    assert by_json.source_format == expected
    assert by_json.version == state.version

    # The two reads are two sinfo calls: on a busy machine slurmctld may mark a node
    # NOT_RESPONDING (or clear it) between them. Both formats must agree on one moment, so
    # read the pair again until the cluster held still for it.
    async def agree() -> bool:
        table = await ops.nodes()
        as_json = await collect_json(ops.runner, host="lab")
        again = await ops.nodes()
        if [_unordered(n) for n in table.nodes] != [_unordered(n) for n in again.nodes]:
            return False  # the state changed while we read: not a comparison of one moment
        # a node's partitions come in no fixed order from one sinfo call to the next (26.05)
        return [_unordered(n) for n in as_json.nodes] == [_unordered(n) for n in table.nodes]

    await eventually(agree, timeout=60, what="sinfo's table and JSON to agree on the nodes")


async def test_drain_keeps_the_reason_and_its_author_until_resume(
    gpu_lab: GpuLab, ops: RemoteSlurm
) -> None:
    node = gpu_lab.nodes[1]
    reason = f"npa lab {uuid.uuid4().hex[:6]}: XID 79 | nvlink [x] State=bad"
    await ops.drain(node, reason)
    detail = await ops.node(node)
    assert "DRAIN" in detail.state
    assert (detail.reason, detail.reason_by) == (reason, gpu_lab.user)
    assert detail.reason_time and detail.reason_time[:2] == "20"
    assert detail.partitions == list(gpu_lab.partitions)
    if gpu_lab.slurm_version >= "23.02":  # slurmd started as Soperator's entrypoint does
        assert detail.fields["InstanceId"] == f"i-lab-{node}"
        assert json.loads(detail.fields["Extra"]) == {"nodeset": "gpu", "pod": node}
    listed = {n.name: n for n in (await ops.nodes()).nodes}
    assert listed[node].reason == reason  # the table's %E: no [who@when]
    assert listed[node].state == "drained" and listed[gpu_lab.nodes[0]].reason is None
    by_json = {n.name: n for n in (await collect_json(ops.runner, host="lab")).nodes}
    # a busy machine may also mark the node NOT_RESPONDING for a ping or two
    assert by_json[node].reason == reason and "DRAIN" in by_json[node].flags
    await ops.resume(node)

    async def resumed() -> bool:
        return {n.name: n for n in (await ops.nodes()).nodes}[node].state == "idle"

    await eventually(resumed, timeout=20, interval=0.3, what=f"{node} idle after resume")
    with pytest.raises(UsageError, match="no node"):
        await ops.drain("gpu-99", "nope")


async def test_jobs_and_cancel(gpu_lab: GpuLab, ops: RemoteSlurm) -> None:
    name = f"npa-lab-{uuid.uuid4().hex[:8]}"
    node = gpu_lab.nodes[0]
    submitted = await ops.runner.run(f"sbatch -J {name} -w {node} --wrap 'sleep 300'")
    assert submitted.exit_status == 0, submitted.stderr
    job_id = submitted.stdout.split()[-1]

    async def running() -> bool:
        jobs = {j.id: j for j in await ops.jobs()}
        return job_id in jobs and jobs[job_id].state == "RUNNING"

    await eventually(running, timeout=20, interval=0.3, what=f"job {job_id} running")
    job = {j.id: j for j in await ops.jobs()}[job_id]
    assert (job.name, job.user, job.nodelist, job.partition) == (name, gpu_lab.user, node, "main")
    detail = await ops.node(node)
    assert [j.id for j in detail.jobs] == [job_id]
    await ops.cancel(job_id)

    async def gone() -> bool:
        return job_id not in {j.id for j in await ops.jobs()}

    await eventually(gone, timeout=20, interval=0.3, what=f"job {job_id} off the queue")


def _unordered(node: SlurmNode) -> dict[str, object]:
    return {**node.model_dump(), "partitions": sorted(node.partitions)}
