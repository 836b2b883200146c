"""An attached `run` (jobs/attached.py): launched through srun on the lab's login node over
real SSH, on every Slurm lab. What a batch job does, it does too: pending with Slurm's
reason, the exit status after a Ctrl-C detached, cancel from elsewhere, Slurm's refusal."""

from __future__ import annotations

import time

import pytest

from .test_jobs_remote import _interrupt_when_running, _npa, _queue, _spawn, hold_every_node
from testkit.gpu_lab import GpuLab
from testkit.wait import wait_until

pytestmark = pytest.mark.slurm


def _job_of(note: str) -> str:
    return note.split("job ", 1)[1].split()[0].rstrip(":")


def _read_until(proc, marker: str, timeout: float = 60) -> str:  # type: ignore[no-untyped-def]
    seen = ""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    assert marker in seen, seen
    return seen


def test_attached_run_pends_for_resources_with_slurms_reason_then_runs(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    holder = hold_every_node(lab_queue, capsysbinary)
    wait_until(
        lambda: [j["state"] for j in _queue(lab_queue, capsysbinary)] == ["RUNNING"],
        timeout=60,
        what="the holder running",
    )
    proc = _spawn(lab_queue, "--", "echo late; exit 4")
    seen = _read_until(proc, "PENDING (Resources)")
    waiting = _job_of(seen)
    assert waiting != holder
    code, _, _ = _npa(lab_queue, capsysbinary, "cancel", "--job", holder, "--yes")
    assert code == 0
    out, rest = proc.communicate(timeout=90)
    assert proc.returncode == 4, seen + rest
    assert out == "late\n"
    assert f"job {waiting} FAILED, exit code 4" in rest


def test_ctrl_c_detaches_an_attached_run_and_its_exit_code_is_still_recorded(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # 6 s: on a busy machine the RUNNING line can reach the test seconds late, and a job
    # that ended by then leaves nothing to detach from
    proc = _spawn(lab_queue, "--", "sleep 6; echo after; exit 5")
    err = _interrupt_when_running(proc)
    assert proc.returncode == 130
    job = _job_of(err)
    assert f"detached from job {job}" in err
    # srun goes on without the channel; its launcher writes the exit status at the end
    code, out, _ = _npa(lab_queue, capsysbinary, "logs", "--job", job, "--follow")
    assert (code, out) == (5, b"after\n")


def test_an_attached_run_cancelled_elsewhere_exits_143_cancelled(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    proc = _spawn(lab_queue, "--", "echo started; sleep 60")
    seen = _read_until(proc, "RUNNING")
    job = _job_of(seen)
    code, _, _ = _npa(lab_queue, capsysbinary, "cancel", "--job", job, "--yes")
    assert code == 0
    out, rest = proc.communicate(timeout=90)
    assert proc.returncode == 143, seen + rest
    assert out == "started\n"
    assert f"job {job} CANCELLED" in rest


def test_slurm_refusing_an_attached_run_is_a_usage_error(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, err = _npa(lab_queue, capsysbinary, "run", "--gpus-per-node", "999", "--", "true")
    assert code == 2 and out == b""
    assert "Slurm refused the job" in err and "Traceback" not in err
    assert _queue(lab_queue, capsysbinary) == []


def test_the_default_gpus_come_from_the_deployed_single_pool_spec(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    from npa_sop_tui.home import inventory

    # the spec says 2 GPUs where Slurm would say 8: the job's GPUs show which was used
    inventory.save_spec(
        "lab",
        "apiVersion: npa.soperator/v0.0.1\nname: lab\nregion: eu-north1\nworkers:\n"
        "  - {name: h100, platform: gpu-h100-sxm, preset: 2gpu-40vcpu-400gb, size: 2}\n",
    )
    command = "echo gpus=$SLURM_GPUS_ON_NODE"
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--", command)
    assert (code, out) == (0, b"gpus=2\n")
    # a second pool makes the default partition ambiguous: Slurm's answer (8 per node)
    inventory.save_spec(
        "lab",
        "apiVersion: npa.soperator/v0.0.1\nname: lab\nregion: eu-north1\nworkers:\n"
        "  - {name: h100, platform: gpu-h100-sxm, preset: 2gpu-40vcpu-400gb, size: 2}\n"
        "  - {name: cpu, platform: cpu-d3, preset: 16vcpu-64gb, size: 2}\n",
    )
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--", command)
    assert (code, out) == (0, b"gpus=8\n")
