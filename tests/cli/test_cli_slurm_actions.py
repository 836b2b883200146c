"""`npa soperator drain | nodes | resume | jobs | cancel` against real Slurm over real SSH.

The GPU lab's slurmctld runs as SlurmUser=slurmops, the login user, so `scontrol update`
over SSH is accepted there (on the shared substrate it is refused: see
tests/status/test_status_slurm_actions.py). The lab is held exclusively, and every test puts
the nodes back to idle and leaves no job behind, whatever happened: the GPU gate tests need
both nodes idle."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.status.hostkeys import HostKeyPolicy
from npa_sop_tui.status.ssh import SshSession, SshTarget

from testkit.gpu_lab import GpuLab
from testkit.wait import wait_until

pytestmark = pytest.mark.slurm
LAB: GpuLab  # the lab of the running test (set by the `lab` fixture)


def _login() -> list[str]:
    return [
        "--name", "lab", "--login-host", LAB.host, "--login-port", str(LAB.port),
        "--login-user", LAB.user, "-i", str(LAB.key), "--accept-new-host-key",
    ]  # fmt: skip


def _ssh(command: str) -> Any:
    """Run `command` on the lab's login node (outside npa: setup and clean-up)."""

    async def run() -> Any:
        target = SshTarget(LAB.host, LAB.port, LAB.user, identity_file=LAB.key)
        session = SshSession(target, policy=HostKeyPolicy.accept_new())
        try:
            return await session.run(command, timeout=30)
        finally:
            await session.close()

    return asyncio.run(run())


@pytest.fixture
def lab(gpu_lab: GpuLab) -> Iterator[str]:
    """The lab (every Slurm version in turn); yields the node the tests act on."""
    global LAB
    LAB = gpu_lab
    try:
        yield gpu_lab.nodes[1]
    finally:
        _ssh("scancel -u slurmops --name 'npa-cli-*' 2>/dev/null; true")
        for node in gpu_lab.nodes:  # idle again, whatever the test left (idle: a no-op)
            _ssh(f"scontrol update nodename={node} state=resume 2>/dev/null; true")


def _npa(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    rc = main(["soperator", *args, *_login(), "--output", "json"])
    out = capsys.readouterr().out.strip()
    return rc, json.loads(out.splitlines()[-1]) if out else None


def _node(capsys: pytest.CaptureFixture[str], name: str) -> dict[str, Any]:
    rc, doc = _npa(capsys, "nodes")
    assert rc == 0, doc
    return {n["name"]: n for n in doc["nodes"]}[name]


def test_drain_shows_its_reason_in_nodes_until_resume(
    lab: str, capsys: pytest.CaptureFixture[str]
) -> None:
    node = lab
    assert _node(capsys, node)["reason"] is None
    reason = f"npa test {uuid.uuid4().hex[:6]}: disk [/] check"
    rc, doc = _npa(capsys, "drain", "--node", node, "--reason", reason, "--yes")
    assert rc == 0 and doc["ok"], doc

    drained = _node(capsys, node)
    assert "DRAIN" in drained["flags"] and drained["reason"] == reason
    rc, doc = _npa(capsys, "nodes", "--node", node)
    assert rc == 0 and doc["node"]["reason"] == reason and doc["node"]["reason_by"] == LAB.user
    assert _node(capsys, LAB.nodes[0])["reason"] is None  # only the node asked for

    rc, doc = _npa(capsys, "resume", "--node", node, "--yes")
    assert rc == 0 and doc["ok"], doc
    resumed = _node(capsys, node)
    assert "DRAIN" not in resumed["flags"] and resumed["reason"] is None
    assert resumed["state"] == "idle"


def test_cancel_takes_a_submitted_job_off_the_queue(
    lab: str, capsys: pytest.CaptureFixture[str]
) -> None:
    node = lab
    name = f"npa-cli-{uuid.uuid4().hex[:8]}"
    submitted = _ssh(f"sbatch -J {name} -w {node} --wrap 'sleep 300'")
    assert submitted.exit_status == 0, submitted.stderr
    job_id = submitted.stdout.split()[-1]

    rc, doc = _npa(capsys, "jobs")
    assert rc == 0
    assert {j["id"]: j["name"] for j in doc["jobs"]}.get(job_id) == name

    rc, doc = _npa(capsys, "cancel", "--job", job_id, "--yes")
    assert rc == 0 and doc["ok"], doc

    def gone() -> bool:
        rc, doc = _npa(capsys, "jobs")
        return rc == 0 and job_id not in {j["id"] for j in doc["jobs"]}

    wait_until(gone, timeout=20, interval=0.5, what=f"job {job_id} to leave the queue")
    rc, doc = _npa(capsys, "cancel", "--job", job_id, "--yes")
    assert rc == 2 and "no queued or running job" in json.dumps(doc)
