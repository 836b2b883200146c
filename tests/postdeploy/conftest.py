"""The GPU lab of scripts/substrate.sh: a Slurm cluster with fake GPU nodes gpu-0 and gpu-1
(eight `File=` GPUs each) behind its own login sshd on 127.0.0.1:2223. Tests using it are
marked `slurm`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from npa_sop_tui.postdeploy.shell import SshSlurmShell
from npa_sop_tui.status.hostkeys import HostKeyPolicy, KnownHosts
from npa_sop_tui.status.ssh import SshSession, SshTarget

from testkit.gpu_lab import NODES, GpuLab, held_gpu_lab
from testkit.substrate import LAB

__all__ = ["LAB", "NODES", "GpuLab"]


@pytest.fixture
def gpu_lab() -> Iterator[GpuLab]:
    """The lab, held exclusively for one test (a lock file), node behaviour reset after."""
    with held_gpu_lab() as lab:
        yield lab


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
