"""Operator actions against the real local Slurm: drain / resume (as root, locally: Slurm
takes node changes only from root or the SlurmUser), sbatch / squeue / scancel over real SSH
as the unprivileged login user, and a refused drain worded for the operator; on Slurm 26.05
(the lab's login user is its SlurmUser, as on Soperator) a drain over SSH and 26.05's own
refusal of an unprivileged user.

Only nodes this module owns are drained: gpu-002 (a fake GPU node nothing else drains)."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.status.hostkeys import HostKeyPolicy
from npa_sop_tui.status.slurm_ops import CommandResult, LocalRunner, RemoteSlurm
from npa_sop_tui.status.ssh import SshSession, SshTarget

from testkit.gpu_lab import LABS, GpuLab
from testkit.substrate import Substrate
from testkit.wait import eventually

pytestmark = pytest.mark.slurm
NODE = "gpu-002"


@pytest.fixture
def owned_node(substrate: Substrate) -> Iterator[str]:
    """gpu-002, resumed and undrained afterwards whatever the test did."""
    try:
        yield NODE
    finally:
        for state in ("undrain", "resume"):
            subprocess.run(
                ["scontrol", "update", f"nodename={NODE}", f"state={state}"], capture_output=True
            )


def _ssh(substrate: Substrate) -> RemoteSlurm:
    target = SshTarget(substrate.host, substrate.port, substrate.user, substrate.key)
    return RemoteSlurm(SshSession(target, policy=HostKeyPolicy.accept_new()), host=substrate.host)


async def test_drain_shows_the_reason_until_resumed(owned_node: str) -> None:
    ops = RemoteSlurm(LocalRunner(), host="localhost")
    reason = "disk check failed: 'sda' [/x] $(rm -rf /) \"quoted\""
    await ops.drain(owned_node, reason)
    detail = await ops.node(owned_node)
    kept = reason.replace('"', "'")  # scontrol mangles double quotes; npa sends single ones
    assert "DRAIN" in detail.state and detail.reason == kept and detail.reason_by == "root"
    listed = {n.name: n for n in (await ops.nodes()).nodes}[owned_node]
    assert "DRAIN" in listed.flags and listed.reason == kept
    await ops.resume(owned_node)
    after = {n.name: n for n in (await ops.nodes()).nodes}[owned_node]
    assert "DRAIN" not in after.flags and after.reason != kept
    with pytest.raises(UsageError, match="no node"):
        await ops.drain("gpu-999", "nope")
    with pytest.raises(UsageError, match="not a Slurm node name"):
        await ops.drain("gpu-002;id", "nope")


async def test_jobs_and_cancel_over_ssh(substrate: Substrate) -> None:
    ops = _ssh(substrate)
    name = f"npa-console-{uuid.uuid4().hex[:8]}"
    try:
        submitted = await ops.runner.run(f"sbatch -J {name} -p debug --wrap 'sleep 300'")
        assert submitted.exit_status == 0, submitted.stderr
        job_id = submitted.stdout.split()[-1]
        jobs = {j.id: j for j in await ops.jobs()}
        assert jobs[job_id].name == name and jobs[job_id].user == substrate.user
        await ops.cancel(job_id)

        async def gone() -> bool:
            return job_id not in {j.id for j in await ops.jobs()}

        await eventually(gone, timeout=15, what=f"job {job_id} to leave the queue")
        with pytest.raises(UsageError, match="no queued or running job"):
            await ops.cancel(job_id)
        history = await ops.history()
        assert not history.available and "accounting" in (history.note or "")
    finally:
        await ops.runner.run(f"scancel --name {name}")
        await ops.aclose()


async def test_drain_by_an_unprivileged_user_is_explained(
    substrate: Substrate, owned_node: str
) -> None:
    ops = _ssh(substrate)
    try:
        with pytest.raises(OperationError) as info:
            await ops.drain(owned_node, "maintenance")
        assert "refused by Slurm" in info.value.message
        assert "root" in (info.value.hint or "")
    finally:
        await ops.aclose()
    await asyncio.sleep(0)


# --- the same on Slurm 26.05: a quoted reason as 26.05 keeps it, and 26.05's refusal -------

ON_SLURM26 = pytest.mark.parametrize("gpu_lab", [LABS[1]], indirect=True, ids=["slurm26.05"])


class ChrootRunner(LocalRunner):
    """Runs a command inside the 26.05 lab's root as an unprivileged user (nobody)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:
        inner = f"SLURM_CONF=/etc/slurm/slurm.conf {command}"
        wrapped = (
            f"chroot {shlex.quote(str(self.root))} setpriv --reuid=65534 --regid=65534 "
            f"--clear-groups bash -c {shlex.quote(inner)}"
        )
        return await super().run(wrapped, timeout=timeout)


@ON_SLURM26
async def test_slurm26_drain_keeps_a_quoted_reason_until_resumed(gpu_lab: GpuLab) -> None:
    target = SshTarget(gpu_lab.host, gpu_lab.port, gpu_lab.user, gpu_lab.key)
    ops = RemoteSlurm(SshSession(target, policy=HostKeyPolicy.accept_new()), host="lab")
    node = gpu_lab.nodes[1]
    reason = "disk check failed: 'sda' [/x] $(rm -rf /) \"quoted\""
    kept = reason.replace('"', "'")
    try:
        await ops.drain(node, reason)
        detail = await ops.node(node)
        assert "DRAIN" in detail.state and detail.reason == kept
        assert detail.reason_by == gpu_lab.user  # the SlurmUser: allowed to drain
        listed = {n.name: n for n in (await ops.nodes()).nodes}[node]
        assert "DRAIN" in listed.flags and listed.reason == kept
        with pytest.raises(OperationError) as info:
            await RemoteSlurm(ChrootRunner(gpu_lab.root), host="lab").drain(node, "x")
        assert "refused by Slurm" in info.value.message and "root" in (info.value.hint or "")
        await ops.resume(node)
        after = {n.name: n for n in (await ops.nodes()).nodes}[node]
        assert "DRAIN" not in after.flags and after.reason is None
    finally:
        await ops.runner.run(f"scontrol update nodename={node} state=resume 2>/dev/null")
        await ops.aclose()
