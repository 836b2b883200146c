"""A real SSH session to a Slurm lab's login node (the `gpu_lab` fixture of tests/conftest.py:
fake GPU nodes gpu-0 and gpu-1, on every Slurm version the substrate runs). Tests using it
are marked `slurm`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from npa_sop_tui.postdeploy.shell import SshSlurmShell
from npa_sop_tui.status.hostkeys import HostKeyPolicy, KnownHosts
from npa_sop_tui.status.ssh import SshSession, SshTarget

from testkit.gpu_lab import NODES, GpuLab

__all__ = ["NODES", "GpuLab"]


@pytest.fixture
async def login(gpu_lab: GpuLab, tmp_path: Path) -> AsyncIterator[SshSlurmShell]:
    """A real SSH session to the lab's login node, as the gate makes one."""
    target = SshTarget(gpu_lab.host, gpu_lab.port, gpu_lab.user, identity_file=gpu_lab.key)
    session = SshSession(
        target, policy=HostKeyPolicy.accept_new(), known_hosts=KnownHosts(tmp_path / "kh")
    )
    shell = SshSlurmShell(session)
    try:
        yield shell
    finally:
        await shell.close()
