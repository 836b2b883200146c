"""Jobs against the GPU lab's real Slurm over real SSH: `gpu_lab` is the suite's fixture
(tests/conftest.py), parametrized over every Slurm lab the substrate runs, so these tests
run on each version; `login` is the postdeploy folder's (imported, not copied)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postdeploy.conftest import login  # noqa: F401  (a fixture, used by name)

from testkit.gpu_lab import GpuLab


def connection_flags(lab: GpuLab) -> list[str]:
    return [
        "--login-host",
        lab.host,
        "--login-port",
        str(lab.port),
        "--login-user",
        lab.user,
        "--identity-file",
        str(lab.key),
        "--accept-new-host-key",
    ]


@pytest.fixture
def lab_queue(gpu_lab: GpuLab) -> Iterator[GpuLab]:
    """The lab with an empty queue of the login user's jobs (and no job outputs) before and
    after the test."""
    _scancel(gpu_lab)
    try:
        yield gpu_lab
    finally:
        _scancel(gpu_lab)


def _scancel(lab: GpuLab) -> None:
    import subprocess

    subprocess.run(
        [
            "ssh",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "LogLevel=ERROR",
            "-i",
            str(lab.key),
            "-p",
            str(lab.port),
            f"{lab.user}@{lab.host}",
            # the user's jobs, then the outputs npa left in the shared home (the lab is ours)
            f"scancel -u {lab.user}; sleep 0.5; rm -rf ~/.npa-jobs",
        ],
        check=False,
        timeout=60,
    )
