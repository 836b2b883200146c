"""The Slurm labs of scripts/substrate.sh with real slurmd nodes gpu-0 and gpu-1 (nodeset
`gpu`, eight fake `File=` GPUs each) behind a login sshd of their own:

- Slurm 22.05 (Debian 12): slurmctld on 16817, login on 127.0.0.1:2223 (sessions get
  SLURM_CONF), partition `main`;
- Slurm 26.05 (a Debian sid root): slurmctld on 16917, login on 127.0.0.1:2224, partitions
  `main` and `hidden`, slurmd started with `--instance-id`/`--extra` as Soperator's
  entrypoint does.

Both run with SlurmUser=slurmops, so `scontrol update` works over SSH as slurmops. Tests get
one through the `gpu_lab` fixture (tests/conftest.py), parametrized over every lab here, and
hold it exclusively for the test (`held_gpu_lab`): the GPU gate needs both nodes idle and its
own node behaviour."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testkit.substrate import LAB, held_exclusively

# scripts/substrate.sh: $NPA_GPU_LAB_DIR, else the substrate folder's name + "-gpu"
GPU = Path(os.environ.get("NPA_GPU_LAB_DIR") or f"{LAB}-gpu")
# scripts/substrate.sh: the Debian sid root ($NPA_SID_ROOT) and the lab folder inside it
SID = Path(os.environ.get("NPA_SID_ROOT") or "/var/cache/npa-substrate/sid-root") / "npa-lab"
NODES = ("gpu-0", "gpu-1")
HOST, USER = "127.0.0.1", "slurmops"
KEY = LAB / "client_ed25519"


@dataclass(frozen=True)
class LabSite:
    """Where scripts/substrate.sh runs one lab, and what proves it is there."""

    slurm_version: str  # major release, e.g. "26.05"
    folder: Path  # on this machine: behaviour/, bin/fake_gpu_tools.py
    port: int  # its login sshd on 127.0.0.1
    conf: Path  # its slurm.conf
    partitions: tuple[str, ...]  # as `sinfo -a` lists them, the default first
    root: Path = Path("/")  # the filesystem its login node and slurmd see, from here


LABS = (
    LabSite("22.05", GPU, 2223, GPU / "slurm.conf", ("main",)),
    LabSite(
        "26.05",
        SID,
        2224,
        SID.parent / "etc" / "slurm" / "slurm.conf",
        ("main", "hidden"),
        root=SID.parent,
    ),
)


@dataclass
class GpuLab:
    """One Slurm lab with a login sshd: where to reach it and which Slurm it runs. Tests
    read the address, nodes and version from here, never from module constants, so the
    same test runs against every lab the substrate starts."""

    behaviour: Path
    host: str = HOST
    port: int = 2223
    user: str = USER
    key: Path = KEY
    nodes: tuple[str, ...] = NODES
    slurm_version: str = "22.05"
    partitions: tuple[str, ...] = ("main",)
    root: Path = Path("/")  # the lab's filesystem root as seen from here (a chroot's folder)

    def inside(self, path: Path) -> Path:
        """Where a file the lab sees at `path` (absolute) lies on this machine."""
        return self.root / path.relative_to("/")

    def node(self, name: str, **settings: str) -> None:
        """What a fake GPU node does (see sandbox/fake_gpu_tools.py)."""
        text = "".join(f"{k}={v}\n" for k, v in settings.items())
        (self.behaviour / name).write_text(text)


def gpu_lab_missing(site: LabSite = LABS[0]) -> str | None:
    """Why the lab cannot be used, or None when it answers."""
    if not site.conf.is_file() or not KEY.is_file():
        return f"no Slurm {site.slurm_version} lab ({site.conf} missing)"
    try:
        socket.create_connection((HOST, site.port), timeout=1).close()
    except OSError:
        return f"nothing listens on {HOST}:{site.port}"
    from npa_sop_tui.sandbox import fake_gpu_tools

    installed = site.folder / "bin" / "fake_gpu_tools.py"
    if installed.read_bytes() != Path(fake_gpu_tools.__file__).read_bytes():
        return f"{installed} is older than the repo's copy"
    return None


@contextlib.contextmanager
def held_gpu_lab(site: LabSite = LABS[0], *, require: bool = False) -> Iterator[GpuLab]:
    """The lab, held exclusively (a lock file), node behaviour reset before and after.
    Skips when the lab is not running, or fails when `require` (NPA_REQUIRE_SUBSTRATE, read
    by tests/conftest.py before the per-test isolation strips NPA_* variables)."""
    missing = gpu_lab_missing(site)
    if missing:
        msg = (
            f"Slurm {site.slurm_version} lab not running ({missing}); "
            "run `bash scripts/substrate.sh start`"
        )
        if require:
            pytest.fail(msg)
        pytest.skip(msg)
    behaviour = site.folder / "behaviour"
    with held_exclusively(behaviour / ".lock"):
        try:
            for node in NODES:
                (behaviour / node).unlink(missing_ok=True)
            yield GpuLab(
                behaviour,
                port=site.port,
                slurm_version=site.slurm_version,
                partitions=site.partitions,
                root=site.root,
            )
        finally:
            for node in NODES:
                (behaviour / node).unlink(missing_ok=True)
