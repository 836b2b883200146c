"""`run`, `logs` and `jobs` against the GPU lab's real Slurm over real SSH (sbatch, squeue,
scancel on the login node; the compute nodes share its file system, as a Soperator jail
does)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

from .conftest import connection_flags
from testkit.gpu_lab import GpuLab
from testkit.wait import wait_until

pytestmark = pytest.mark.slurm


def _npa(
    lab: GpuLab, capsys: pytest.CaptureFixture[bytes], command: str, *args: str
) -> tuple[int, bytes, str]:
    """One in-process `npa soperator COMMAND` call: exit code, stdout bytes, stderr text."""
    head = [a for a in args if a != "--"]
    tail: list[str] = []
    if "--" in args:
        head, tail = list(args[: args.index("--")]), list(args[args.index("--") :])
    code = main(["soperator", command, "--name", "lab", *connection_flags(lab), *head, *tail])
    out, err = capsys.readouterr()
    return code, out, err.decode(errors="replace")


def _json(
    lab: GpuLab, capsys: pytest.CaptureFixture[bytes], command: str, *args: str
) -> tuple[int, dict]:
    code, out, _ = _npa(lab, capsys, command, "-o", "json", *args)
    return code, json.loads(out.decode().strip().splitlines()[-1])


def test_exit_codes_zero_and_non_zero(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, err = _npa(lab_queue, capsysbinary, "run", "--", "sh", "-c", "echo hi; exit 3")
    assert (code, out) == (3, b"hi\n")
    assert "FAILED, exit code 3" in err
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--", "echo $CUDA_VISIBLE_DEVICES")
    gpus = out.decode().split()[0].split(",")  # every GPU of the node by default
    assert code == 0 and len(gpus) > 1 and gpus == [str(i) for i in range(len(gpus))]
    code, doc = _json(lab_queue, capsysbinary, "run", "--gpus-per-node", "2", "--", "true")
    assert code == 0 and doc["state"] == "COMPLETED" and doc["exit_code"] == 0
    assert doc["output_path"].endswith(f"/.npa-jobs/{doc['job_id']}.out") and doc["nodes"]


def test_multi_node_runs_one_task_per_node(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, _ = _npa(
        lab_queue, capsysbinary, "run", "--nodes", "2", "--", "echo node=$SLURMD_NODENAME"
    )
    assert code == 0
    assert sorted(out.decode().split()) == [f"node={n}" for n in sorted(lab_queue.nodes)]
    pool = lab_queue.nodes[0].rsplit("-", 1)[0]  # Soperator names nodes <pool>-<i>
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--pool", pool, "--", "echo ok")
    assert (code, out) == (0, b"ok\n")
    code, _, err = _npa(lab_queue, capsysbinary, "run", "--pool", "no-such", "--", "true")
    assert code == 2 and f"pools with nodes: {pool}" in err


def test_script_with_sbatch_lines_command_line_wins(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    script = tmp_path / "train.sh"
    script.write_text(
        "#!/bin/bash\n"
        "#SBATCH --job-name=from-script\n"
        "#SBATCH --nodes=2\n"
        "#SBATCH --time=5\n"
        "echo name=$SLURM_JOB_NAME nodes=$SLURM_JOB_NUM_NODES\n"
        "scontrol show job $SLURM_JOB_ID | grep -o 'TimeLimit=[^ ]*'\n"
        "exit 4\n"
    )
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--script", str(script), "--time", "3")
    assert code == 4
    assert out.decode().split() == ["name=from-script", "nodes=2", "TimeLimit=00:03:00"]


def test_detach_then_logs_follow_and_jobs(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, err = _npa(
        lab_queue, capsysbinary, "run", "--detach", "--", "sleep 2; echo done; exit 7"
    )
    job = out.decode().strip()
    assert code == 0 and job.isdigit() and f"logs --name lab --job {job} --follow" in err
    code, doc = _json(lab_queue, capsysbinary, "jobs")
    assert [j["job_id"] for j in doc["npa_jobs"]] == [job]
    assert doc["npa_jobs"][0]["output_path"].endswith(f"{job}.out")
    code, out, _ = _npa(lab_queue, capsysbinary, "logs", "--job", job, "--follow")
    assert (code, out) == (7, b"done\n")
    code, out, _ = _npa(lab_queue, capsysbinary, "logs", "--job", job)  # after Slurm forgot it
    assert (code, out) == (0, b"done\n")
    code, doc = _json(lab_queue, capsysbinary, "jobs")
    assert doc["npa_jobs"][0]["exit_code"] == 7 and doc["npa_jobs"][0]["state"] == "FAILED"


def hold_every_node(lab: GpuLab, capsys: pytest.CaptureFixture[bytes]) -> str:
    """A detached job on every node of the lab (sleeping a minute): its ID."""
    nodes = str(len(lab.nodes))
    code, out, _ = _npa(lab, capsys, "run", "--detach", "--nodes", nodes, "--", "sleep 60")
    assert code == 0
    return out.decode().strip()


def test_pending_for_resources_shows_slurms_reason(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    holder = hold_every_node(lab_queue, capsysbinary)
    code, doc = _json(lab_queue, capsysbinary, "run", "--detach", "--", "true")
    assert code == 0
    waiting = doc["job_id"]

    def pending() -> bool:
        queued = {j["id"]: j for j in _queue(lab_queue, capsysbinary)}
        return (
            queued[holder]["state"] == "RUNNING"
            and queued[waiting]["state"] == "PENDING"
            and queued[waiting]["reason"] == "Resources"
        )

    wait_until(pending, timeout=60, what="the second job pending for resources")
    _, doc = _json(lab_queue, capsysbinary, "logs", "--job", waiting)
    assert (doc["state"], doc["reason"], doc["exit_code"]) == ("PENDING", "Resources", None)


def test_invalid_utf8_and_very_long_lines_arrive_byte_for_byte(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    command = "printf 'a\\377\\376b\\n'; head -c 3000000 /dev/zero | tr '\\0' x; echo; printf end"
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--", command)
    assert code == 0
    assert out == b"a\xff\xfeb\n" + b"x" * 3_000_000 + b"\nend"
    code, doc = _json(lab_queue, capsysbinary, "run", "--", "printf 'z\\377'")
    assert doc["output"] == "z\ufffd"  # the JSON document carries it decoded, replaced


def _spawn(lab: GpuLab, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Ctrl-C as at a terminal: a suite started in the background (a non-interactive shell's
    # `&`) ignores SIGINT and its children inherit that, and npa rightly keeps ignoring it.
    entry = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from npa_sop_tui.cli.entry import main; sys.exit(main(sys.argv[1:]))"
    )
    argv = [sys.executable, "-c", entry, "soperator", "run", "--name", "lab"]
    return subprocess.Popen(
        [*argv, *connection_flags(lab), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _interrupt_when_running(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 60
    while "RUNNING" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    assert "RUNNING" in seen, seen
    proc.send_signal(signal.SIGINT)
    rest = proc.communicate(timeout=60)[1]
    return seen + rest


def _queue(lab: GpuLab, capsys: pytest.CaptureFixture[bytes]) -> list[dict]:
    _, doc = _json(lab, capsys, "jobs")
    return doc["jobs"]


def test_ctrl_c_detaches_and_cancel_on_interrupt_cancels(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    proc = _spawn(lab_queue, "--", "sleep 60")
    err = _interrupt_when_running(proc)
    assert proc.returncode == 130
    job = err.split("job ", 1)[1].split()[0]
    assert f"detached from job {job}" in err and f"--job {job} --follow" in err
    assert [j["id"] for j in _queue(lab_queue, capsysbinary)] == [job]  # it goes on
    code, _, _ = _npa(lab_queue, capsysbinary, "cancel", "--job", job, "--yes")
    assert code == 0

    proc = _spawn(lab_queue, "--cancel-on-interrupt", "--", "sleep 60")
    err = _interrupt_when_running(proc)
    assert proc.returncode == 130 and "cancelled job" in err
    wait_until(
        lambda: not [j for j in _queue(lab_queue, capsysbinary) if j["state"] != "COMPLETING"],
        timeout=30,
        what="an empty queue",
    )


def test_templates_gpu_hello_and_nccl_bus_bandwidth(
    lab_queue: GpuLab, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, out, _ = _npa(lab_queue, capsysbinary, "run", "--template", "gpu-hello")
    lines = [ln for ln in out.decode().splitlines() if " node=" in ln]
    assert code == 0 and len(lines) == len(lab_queue.nodes)  # one task per GPU node
    assert all(ln.endswith(" ok") and " gpus=" in ln for ln in lines)
    # nccl-tests is not in the lab's image: a stand-in all_reduce_perf prints its output's
    # tail. It goes where the lab's nodes see it (a chroot's /tmp for the 26.05 lab).
    folder = Path(tempfile.mkdtemp(prefix="npa-nccl-", dir=lab_queue.inside(Path("/tmp"))))
    seen = Path("/tmp") / folder.name  # the same folder, as the lab's nodes see it
    try:
        folder.chmod(0o755)
        sample = folder / "tail.txt"  # readable by the lab's login user
        shutil.copy(Path(__file__).parent / "data" / "nccl_allreduce_tail.txt", sample)
        sample.chmod(0o644)
        fake = folder / "all_reduce_perf"
        fake.write_text(f'#!/bin/sh\n[ "$SLURM_PROCID" = 0 ] && cat {seen / sample.name}\nexit 0\n')
        fake.chmod(0o755)
        env = ["--env", f"NCCL_TESTS_DIR={seen}", "--env", "NPA_MPI=none"]
        code, doc = _json(lab_queue, capsysbinary, "run", "--template", "nccl-allreduce", *env)
        assert code == 0 and doc["bus_bandwidth_gbps"] == 433.571, doc["output"]
    finally:
        shutil.rmtree(folder)
