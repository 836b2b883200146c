"""The GPU lab of scripts/substrate.sh: a Slurm cluster with fake GPU nodes gpu-0 and gpu-1
(eight `File=` GPUs each) behind its own login sshd on 127.0.0.1:2223. Tests using it are
marked `slurm`."""

from __future__ import annotations

import fcntl
import os
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from npa_sop_tui.postdeploy.shell import SshSlurmShell
from npa_sop_tui.status.hostkeys import HostKeyPolicy, KnownHosts
from npa_sop_tui.status.ssh import SshSession, SshTarget

from testkit.substrate import LAB

# scripts/substrate.sh: $NPA_GPU_LAB_DIR, else the substrate folder's name + "-gpu"
GPU = Path(os.environ.get("NPA_GPU_LAB_DIR") or f"{LAB}-gpu")
NODES = ("gpu-0", "gpu-1")


@dataclass
class GpuLab:
    behaviour: Path

    def node(self, name: str, **settings: str) -> None:
        """What a fake GPU node does (see sandbox/fake_gpu_tools.py)."""
        text = "".join(f"{k}={v}\n" for k, v in settings.items())
        (self.behaviour / name).write_text(text)


def _missing() -> str | None:
    if not (GPU / "slurm.conf").is_file() or not (LAB / "client_ed25519").is_file():
        return f"no GPU lab in {GPU}"
    try:
        socket.create_connection(("127.0.0.1", 2223), timeout=1).close()
    except OSError:
        return "nothing listens on 127.0.0.1:2223"
    from npa_sop_tui.sandbox import fake_gpu_tools

    installed = GPU / "bin" / "fake_gpu_tools.py"
    if installed.read_bytes() != Path(fake_gpu_tools.__file__).read_bytes():
        return f"{installed} is older than the repo's copy"
    return None


@pytest.fixture
def gpu_lab() -> Iterator[GpuLab]:
    """The lab, held exclusively for one test (a lock file), node behaviour reset after."""
    missing = _missing()
    if missing:
        msg = f"GPU lab not running ({missing}); run `bash scripts/substrate.sh start`"
        if os.environ.get("NPA_REQUIRE_SUBSTRATE"):
            pytest.fail(msg)
        pytest.skip(msg)
    behaviour = GPU / "behaviour"
    with (behaviour / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            for node in NODES:
                (behaviour / node).unlink(missing_ok=True)
            yield GpuLab(behaviour)
        finally:
            for node in NODES:
                (behaviour / node).unlink(missing_ok=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
async def login(gpu_lab: GpuLab, tmp_path: Path) -> AsyncIterator[SshSlurmShell]:
    """A real SSH session to the lab's login node, as the gate makes one."""
    target = SshTarget("127.0.0.1", 2223, "slurmops", identity_file=LAB / "client_ed25519")
    session = SshSession(
        target, policy=HostKeyPolicy.accept_new(), known_hosts=KnownHosts(tmp_path / "kh")
    )
    shell = SshSlurmShell(session)
    try:
        yield shell
    finally:
        await shell.close()
