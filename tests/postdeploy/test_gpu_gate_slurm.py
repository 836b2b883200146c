"""The GPU creation gate on real Slurm: real sinfo/srun/scancel/squeue over real SSH, fake GPU
nodes with `File=` devices, check programs printing the real tools' output formats."""

from __future__ import annotations

import time
from typing import Any

import pytest

from npa_sop_tui.postdeploy.gpu_gate import run_gate
from npa_sop_tui.postdeploy.repairs import recover_workers
from npa_sop_tui.postdeploy.shell import SshSlurmShell
from npa_sop_tui.spec.model import spec_from_mapping

from .conftest import GpuLab
from testkit.wait import eventually

pytestmark = pytest.mark.slurm


def gpu_spec(size: int = 2) -> Any:
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "gate",
         "workers": [{"name": "gpu", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb",
                      "fabric": "fabric-3", "size": size}]}
    )  # fmt: skip


class Events:
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __call__(self, **fields: Any) -> None:
        self.seen.append(fields)

    def nodes(self, status: str) -> list[str]:
        return [e["node"] for e in self.seen if e.get("node") and e["status"] == status]


async def queue_of(shell: SshSlurmShell, job: str) -> str:
    result = await shell.run(f"squeue -h --name={job} -o %i", timeout=30)
    assert result.exit_status == 0, result.stderr
    return result.stdout.strip()


async def test_every_node_passes(login: SshSlurmShell) -> None:
    events = Events()
    validation, (check,) = await run_gate(gpu_spec(), login, timeout=120, emit=events)
    assert validation.status == "passed"
    assert (check.status, check.nodes, check.gpus_per_node) == ("PASS", ["gpu-0", "gpu-1"], 8)
    assert check.tests == sorted(
        ["deviceQuery", "vectorAdd", "simpleMultiGPU", "p2pBandwidthLatencyTest"]
    )
    assert sorted(events.nodes("PASS")) == ["gpu-0", "gpu-1"]


async def test_one_failing_node_degrades_and_cleans_up(
    gpu_lab: GpuLab, login: SshSlurmShell
) -> None:
    gpu_lab.node("gpu-1", fail="vectorAdd")
    events = Events()
    validation, (check,) = await run_gate(gpu_spec(), login, timeout=120, emit=events)
    assert validation.status == "failed" and validation.code == "gpu_creation_check_failed"
    assert (validation.pool, validation.node, validation.phase) == ("gpu", "gpu-1", "check")
    assert "vectorAdd.result failed" in (validation.message or "")
    assert "Result verification failed" in (validation.message or "")
    assert validation.cleanup_confirmed is True
    assert check.status == "FAIL"
    assert [(f.node, f.check) for f in check.failures] == [("gpu-1", "vectorAdd.result")]
    assert events.nodes("PASS") == ["gpu-0"] and events.nodes("FAIL") == ["gpu-1"]


async def test_wrong_gpu_count_fails_the_node(gpu_lab: GpuLab, login: SshSlurmShell) -> None:
    gpu_lab.node("gpu-0", gpus="7")
    validation, (check,) = await run_gate(gpu_spec(), login, timeout=120, emit=Events())
    assert validation.node == "gpu-0"
    assert check.failures[0].check == "nvidia-smi"
    assert check.failures[0].message == "nvidia-smi lists 7 GPU(s); the preset has 8"


async def test_a_hung_check_times_out_and_is_cancelled(
    gpu_lab: GpuLab, login: SshSlurmShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.postdeploy import gpu_gate

    jobs: list[str] = []
    make = gpu_gate.job_name
    monkeypatch.setattr(gpu_gate, "job_name", lambda: jobs.append(make()) or jobs[-1])
    gpu_lab.node("gpu-0", hang="1")
    started = time.monotonic()
    validation, (check,) = await run_gate(gpu_spec(), login, timeout=8, emit=Events())
    elapsed = time.monotonic() - started
    assert validation.code == "gpu_creation_check_timeout"
    assert (validation.node, check.status) == ("gpu-0", "TIMEOUT")
    assert validation.cleanup_confirmed is True
    assert 8 <= elapsed < 60
    assert await queue_of(login, jobs[0]) == ""  # nothing of the gate is left in Slurm


async def test_node_count_mismatch_fails_discovery(login: SshSlurmShell) -> None:
    validation, (check,) = await run_gate(gpu_spec(size=3), login, timeout=60, emit=Events())
    assert (validation.status, validation.phase) == ("failed", "discovery")
    assert "sinfo lists 2 node(s) for pool gpu, the spec's size is 3" in (validation.message or "")
    assert check.status == "FAIL" and check.nodes == ["gpu-0", "gpu-1"]


async def test_worker_recovery_resumes_a_down_node(login: SshSlurmShell) -> None:
    down = await login.run("scontrol update NodeName=gpu-1 State=DOWN Reason=npa-test", timeout=30)
    assert down.exit_status == 0, down.stderr

    async def is_down() -> bool:  # a node still completing an earlier job goes down after it
        state = await login.run("sinfo -h -n gpu-1 -o %t", timeout=30)
        return state.stdout.split()[:1] == ["down"]

    try:
        await eventually(is_down, timeout=30, interval=0.3, what="gpu-1 down")
        outcome = await recover_workers(login, node_addr="127.0.0.1")
        assert outcome.result == "applied" and "gpu-1" in outcome.message

        async def idle() -> bool:
            state = await login.run("sinfo -h -n gpu-1 -o %t", timeout=30)
            return state.stdout.strip() == "idle"

        await eventually(idle, timeout=30, interval=0.3, what="gpu-1 idle after the resume")
        assert (await recover_workers(login)).result == "not-needed"
    finally:
        await login.run("scontrol update NodeName=gpu-1 State=RESUME", timeout=30)
