"""Every job template runs in the sandbox as it would on a cluster, on the sandbox's own
Slurm (`srun`, `sbatch`, `nvidia-smi`, the job's variables), on a machine whose PATH has no
Slurm client and no GPU tool at all."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.jobs.model import JobInfo, JobRequest
from npa_sop_tui.jobs.templates import apply_template, first_job_template
from npa_sop_tui.sandbox.job_tools import SimNode
from npa_sop_tui.sandbox.local_jobs import LocalJobs

from testkit.sandbox_cli import cli_json, deploy_in_sandbox

SLURM_CLIENT = {
    "srun", "sbatch", "squeue", "sinfo", "scontrol", "scancel", "sacct", "salloc", "sattach",
    "sbcast", "sprio", "sreport", "sshare", "sstat", "strigger", "sacctmgr", "sdiag",
    "nvidia-smi", "all_reduce_perf",
}  # fmt: skip

SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: tpl
region: eu-north1
workers:
  - name: gpu
    platform: gpu-h100-sxm
    preset: 8gpu-128vcpu-1600gb
    size: 2
    fabric: eu-north1-a
    preemptible: true
  - name: cpu
    platform: cpu-d3
    preset: 8vcpu-32gb
    size: 1
"""


@pytest.fixture
def no_slurm_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH = one folder of links to this machine's programs, without Slurm's or a GPU's."""
    folder = tmp_path / "no-slurm-bin"
    folder.mkdir()
    for part in os.environ["PATH"].split(os.pathsep):
        base = Path(part)
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            link = folder / entry.name
            if entry.name in SLURM_CLIENT or link.exists() or not os.access(entry, os.X_OK):
                continue
            link.symlink_to(entry)
    monkeypatch.setenv("PATH", str(folder))
    return folder


def _jobs(nodes: list[SimNode]) -> LocalJobs:
    return LocalJobs("demo", lambda: nodes)


async def _run(
    jobs: LocalJobs, request: JobRequest, pool: str | None = None
) -> tuple[JobInfo, str]:
    out = bytearray()
    done = await jobs.follow(await jobs.submit(request, pool=pool), on_output=out.extend)
    return done, out.decode()


GPU = [SimNode("gpu-0", 8, 128, "NVIDIA H100 80GB HBM3"), SimNode("gpu-1", 8, 128)]
CPU = [SimNode("cpu-0", 0, 8)]


async def test_gpu_hello_runs_one_task_per_gpu_node_on_sandbox_gpus(
    npa_home: Path, no_slurm_client: Path
) -> None:
    request = apply_template("gpu-hello", JobRequest())
    done, out = await _run(_jobs(CPU + GPU), request)
    assert (done.state, done.exit_code, done.nodes) == ("COMPLETED", 0, "gpu-0,gpu-1"), out
    assert "gpu-0 node=gpu-0 gpus=8 expected=8 ok" in out
    assert "gpu-1 node=gpu-1 gpus=8 expected=8 ok" in out
    assert out.count("GPU 7: NVIDIA H100 80GB HBM3") == 2 and "cpu-0" not in out


async def test_cpu_hello_and_a_step_inside_a_script(npa_home: Path, no_slurm_client: Path) -> None:
    done, out = await _run(_jobs(CPU), apply_template("cpu-hello", JobRequest()))
    assert done.state == "COMPLETED", out
    assert out.startswith(f"cpu-0 node=cpu-0 cpus=8 job={done.id}\n") and "MemTotal" in out
    # a script's own srun: one task per node and per --ntasks-per-node, ranks in order
    script = (
        "#!/bin/bash\n#SBATCH --nodes=2\n"
        "srun --ntasks-per-node=2 bash -c 'echo \"$(hostname) rank=$SLURM_PROCID/$SLURM_NTASKS\"'"
        " | sort\n"
        "srun -N 3 true || echo refused\n"
    )
    done, out = await _run(_jobs(GPU), JobRequest(script=script, nodes=2))
    assert done.state == "COMPLETED", out
    ranks = [line for line in out.splitlines() if "rank=" in line]
    assert ranks == [
        "gpu-0 rank=0/4", "gpu-0 rank=1/4", "gpu-1 rank=2/4", "gpu-1 rank=3/4",
    ]  # fmt: skip
    assert "srun: error: Only allocated 2 nodes asked for 3" in out and "refused" in out


async def test_a_cpu_node_has_no_gpu_driver_and_a_failing_task_fails_the_step(
    npa_home: Path, no_slurm_client: Path
) -> None:
    done, out = await _run(_jobs(CPU), JobRequest(command="nvidia-smi -L"))
    assert done.state == "FAILED" and done.exit_code == 9
    assert "couldn't communicate with the NVIDIA driver" in out
    request = JobRequest(command='[ "$SLURM_NODEID" = 1 ] && exit 4; echo fine', nodes=2)
    done, out = await _run(_jobs(GPU), request)
    assert done.exit_code == 4 and "fine" in out
    assert "srun: error: gpu-1: task 1: Exited with exit code 4" in out


async def test_sbatch_in_a_job_submits_a_sandbox_job(npa_home: Path, no_slurm_client: Path) -> None:
    jobs = _jobs(GPU)
    done, out = await _run(jobs, JobRequest(command="sbatch --parsable --wrap 'hostname'"))
    assert done.state == "COMPLETED", out
    inner = out.strip()
    second = await jobs.follow(jobs.info(inner), on_output=lambda _: None)
    assert second.state == "COMPLETED"
    assert Path(second.output_path or "").read_text() == "gpu-0\n"


def test_first_job_offer_fits_the_cluster() -> None:
    assert first_job_template(0) == "cpu-hello" and first_job_template(2) == "gpu-hello"


@pytest.mark.terraform
@pytest.mark.slow
def test_every_template_on_a_deployed_sandbox_cluster_without_a_slurm_client(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_slurm_client: Path,
) -> None:
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)
    code, doc = cli_json(capsys, "tpl", "run", "--template", "gpu-hello")
    assert code == 0 and doc["state"] == "COMPLETED", doc
    assert doc["nodes"] == "gpu-0,gpu-1" and doc["output"].count("expected=8 ok") == 2
    code, doc = cli_json(capsys, "tpl", "run", "--template", "cpu-hello", "--pool", "cpu")
    assert code == 0 and doc["output"].startswith("cpu-0 node=cpu-0 cpus=8 "), doc
    code, doc = cli_json(capsys, "tpl", "run", "--template", "nccl-allreduce")
    assert code == 0 and doc["state"] == "COMPLETED", doc
    assert doc["bus_bandwidth_gbps"] > 0 and doc["output"].count("# Avg bus bandwidth") == 1
    # the list needs no cluster
    assert main(["soperator", "run", "--list-templates", "-o", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {t["name"] for t in listed["templates"]} >= {"cpu-hello", "gpu-hello"}
