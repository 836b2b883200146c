"""The GPU lab of scripts/substrate.sh: a Slurm cluster of its own (SlurmUser=slurmops, so
`scontrol update` works over SSH as slurmops) with fake GPU nodes gpu-0 and gpu-1 (eight
`File=` GPUs each) behind a login sshd on 127.0.0.1:2223. Tests using it are marked `slurm`
and hold it exclusively (`held_gpu_lab`): the GPU gate needs both nodes idle and its own
node behaviour."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testkit.substrate import LAB

# scripts/substrate.sh: $NPA_GPU_LAB_DIR, else the substrate folder's name + "-gpu"
GPU = Path(os.environ.get("NPA_GPU_LAB_DIR") or f"{LAB}-gpu")
NODES = ("gpu-0", "gpu-1")
HOST, PORT, USER = "127.0.0.1", 2223, "slurmops"
KEY = LAB / "client_ed25519"


@dataclass
class GpuLab:
    """One Slurm lab with a login sshd: where to reach it and which Slurm it runs. Tests
    read the address, nodes and version from here, never from module constants, so the
    same test runs against every lab the substrate starts."""

    behaviour: Path
    host: str = HOST
    port: int = PORT
    user: str = USER
    key: Path = KEY
    nodes: tuple[str, ...] = NODES
    slurm_version: str = "22.05"

    def node(self, name: str, **settings: str) -> None:
        """What a fake GPU node does (see sandbox/fake_gpu_tools.py)."""
        text = "".join(f"{k}={v}\n" for k, v in settings.items())
        (self.behaviour / name).write_text(text)


def gpu_lab_missing() -> str | None:
    """Why the lab cannot be used, or None when it answers."""
    if not (GPU / "slurm.conf").is_file() or not KEY.is_file():
        return f"no GPU lab in {GPU}"
    try:
        socket.create_connection((HOST, PORT), timeout=1).close()
    except OSError:
        return f"nothing listens on {HOST}:{PORT}"
    from npa_sop_tui.sandbox import fake_gpu_tools

    installed = GPU / "bin" / "fake_gpu_tools.py"
    if installed.read_bytes() != Path(fake_gpu_tools.__file__).read_bytes():
        return f"{installed} is older than the repo's copy"
    return None


@contextlib.contextmanager
def held_gpu_lab() -> Iterator[GpuLab]:
    """The lab, held exclusively (a lock file), node behaviour reset before and after.
    Skips (fails under NPA_REQUIRE_SUBSTRATE) when the lab is not running."""
    missing = gpu_lab_missing()
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
