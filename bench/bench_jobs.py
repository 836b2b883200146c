"""`npa soperator run -- true` end to end (launch through the login node, follow the output
and state until the job ends, read its exit code) against `srun true` run over the same
reused SSH connection: what npa adds to the plainest way of running a job remotely.

Measured on every Slurm the substrate runs (`scripts/substrate.sh start`): the login sshd
on 127.0.0.1:2222, and the labs with real slurmd nodes, Slurm 22.05 on :2223 and 26.05 on
:2224 (each held through its lock file, as the tests hold it). A lab that is not running
is skipped. Rounds are interleaved, order alternating; the ratio is the median of
per-round ratios.

`run -- true` does what the CLI does for a cluster npa deployed: the default "all GPUs of
the node" comes from the deployed spec (jobs/spec_gpus.py). Each site gets the one-pool
spec that describes it (SPECS: the substrate's answering node has no GPUs, the labs' nodes
8 H100s), and the bench first checks that the spec agrees with what the login node's
Slurm says, so the figure is never taken with a default Slurm would not give. For
information: the same run without a spec (Slurm asked on the login node, one sinfo), and
the batch path (`run --detach`: sbatch, then following), which waits for Slurm's batch
scheduling.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import Ratio, paired_ratio
from bench.bench_status import LAB

# scripts/substrate.sh: where each lab keeps its node behaviour (and the lock tests take)
_GPU = Path(os.environ.get("NPA_GPU_LAB_DIR") or f"{LAB}-gpu")
_SID = Path(os.environ.get("NPA_SID_ROOT") or "/var/cache/npa-substrate/sid-root") / "npa-lab"
SITES = (
    ("substrate", 2222, None),
    ("Slurm 22.05 lab", 2223, _GPU / "behaviour" / ".lock"),
    ("Slurm 26.05 lab", 2224, _SID / "behaviour" / ".lock"),
)
_POOL = "apiVersion: npa.soperator/v0.0.1\nname: bench\nregion: eu-north1\nworkers:\n  - {}\n"
SPECS = {
    "substrate": _POOL.format("{name: cpu, platform: cpu-d3, preset: 16vcpu-64gb, size: 1}"),
    "lab": _POOL.format(
        "{name: h100, platform: gpu-h100-sxm, preset: 8gpu-128vcpu-1600gb, size: 2}"
    ),
}
# the most GPUs of an answering node of the default partition: what Slurm gives as default
_SLURM_GPUS = "sinfo -h -N --responding -t idle,mix,alloc,comp -o '%G'"


def _up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return (LAB / "client_ed25519").is_file()
    except OSError:
        return False


def _held(lock: Path | None) -> contextlib.AbstractContextManager[None]:
    """The lab held through its lock file with the tests' own helper, so a bench and a test
    never drive one lab at once; the substrate (no lock) and a lab without its folder need
    none."""
    if lock is None or not lock.parent.is_dir():
        return contextlib.nullcontext()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from testkit.substrate import held_exclusively

    return held_exclusively(lock)


async def _bench(site: str, port: int, rounds: int) -> list[Ratio]:
    from npa_sop_tui.jobs.model import JobRequest
    from npa_sop_tui.jobs.remote import RemoteJobs, gpu_count
    from npa_sop_tui.jobs.spec_gpus import fill_default_gpus
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.ssh import SshSession, SshTarget

    target = SshTarget("127.0.0.1", port, "slurmops", LAB / "client_ed25519")
    session = SshSession(target, policy=HostKeyPolicy.accept_new())
    jobs = RemoteJobs(session)
    codes: list[int] = []

    spec = SPECS["substrate" if port == 2222 else "lab"]

    async def npa_run(attached: bool, spec_yaml: str | None = spec) -> None:
        request = JobRequest(command="true")
        fill_default_gpus(request, spec_yaml, pool=None)  # as cmd_run does
        job = await jobs.submit(request, attached=attached)
        job = await jobs.follow(job, on_output=lambda _: None)
        codes.append(job.run_exit_code())

    async def srun() -> None:
        result = await session.run("srun true")
        codes.append(result.exit_status)

    async def attached() -> None:
        await npa_run(True)

    async def batch() -> None:
        await npa_run(False)

    async def no_spec() -> None:  # the default "all GPUs of the node" from sinfo
        await npa_run(True, spec_yaml=None)

    await srun()  # connect and record the host key before timing
    said = await session.run(_SLURM_GPUS)
    slurm_gpus = max((gpu_count(g) for g in said.stdout.split()), default=0)
    probe = JobRequest(command="true")
    fill_default_gpus(probe, spec, pool=None)
    if probe.gpus_per_node != slurm_gpus:
        raise SystemExit(f"{site}: the spec says {probe.gpus_per_node} GPUs, Slurm {slurm_gpus}")
    await attached()
    steps = {
        "run -- true": attached,
        "srun true": srun,
        "run, no spec": no_spec,
        "run --detach": batch,
    }
    times: dict[str, list[float]] = {label: [] for label in steps}
    for i in range(rounds):
        for label in list(steps)[:: 1 if i % 2 else -1]:
            if label == "run --detach" and i % 4:
                continue  # the batch path is slow and only informative: every 4th round
            t0 = time.perf_counter()
            await steps[label]()
            times[label].append(time.perf_counter() - t0)
    await jobs.aclose()
    if any(codes):
        raise SystemExit(f"a job failed on {site}: exit codes {codes}")
    for label, values in times.items():
        print(
            f"  {site:16s} {label:14s} median {statistics.median(values) * 1000:7.1f} ms   "
            f"min {min(values) * 1000:7.1f} ms   ({len(values)} runs)"
        )
    print(f"  {site:16s} connections made: {session.connects}")
    med = {label: statistics.median(values) * 1000 for label, values in times.items()}
    return [
        Ratio(
            "P5 jobs",
            f"`run -- true` end to end, reused SSH connection ({site})",
            med["run -- true"],
            "`srun true` over the same connection",
            med["srun true"],
            target="≤ 1.3",
            paired=paired_ratio(times["run -- true"], times["srun true"]),
        ),
        Ratio(
            "P5 jobs",
            f"`run -- true` without a spec (GPUs from sinfo on the login node) ({site})",
            med["run, no spec"],
            "`srun true` over the same connection",
            med["srun true"],
            paired=paired_ratio(times["run, no spec"], times["srun true"]),
        ),
        Ratio(
            "P5 jobs",
            f"`run --detach -- true` (sbatch) then followed to its end ({site})",
            med["run --detach"],
            "`srun true` over the same connection",
            med["srun true"],
        ),
    ]


def main() -> list[Ratio]:
    print("-- run -- true vs srun true over SSH, on every Slurm the substrate runs --")
    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "20"))
    rows: list[Ratio] = []
    with tempfile.TemporaryDirectory() as home:
        os.environ["NPA_HOME"] = home  # a private known_hosts for the run
        for site, port, lock in SITES:
            if not _up(port):
                print(f"  {site}: skipped (nothing on 127.0.0.1:{port}; scripts/substrate.sh)")
                continue
            with _held(lock):
                rows += asyncio.run(_bench(site, port, rounds))
    return rows
