"""`npa soperator run -- true` end to end (submit through the login node, follow the output
and state until the job ends, read its exit code) against `srun true` run over the same
reused SSH connection: what npa adds to the plainest way of running a job remotely.

Needs `scripts/substrate.sh start` (the login sshd on 127.0.0.1:2222 and its Slurm).
Rounds are interleaved, order alternating, and the ratio is the median of per-round ratios.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time

from bench import Ratio, paired_ratio
from bench.bench_status import LAB, _substrate_up


async def _bench(rounds: int) -> list[Ratio]:
    from npa_sop_tui.jobs.model import JobRequest
    from npa_sop_tui.jobs.remote import RemoteJobs
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.ssh import SshSession, SshTarget

    target = SshTarget("127.0.0.1", 2222, "slurmops", LAB / "client_ed25519")
    session = SshSession(target, policy=HostKeyPolicy.accept_new())
    jobs = RemoteJobs(session)
    codes: list[int] = []

    async def npa_run() -> None:
        job = await jobs.submit(JobRequest(command="true"))
        job = await jobs.follow(job, on_output=lambda _: None)
        codes.append(job.run_exit_code())

    async def srun() -> None:
        result = await session.run("srun true")
        codes.append(result.exit_status)

    await srun()  # connect and record the host key before timing
    await npa_run()
    steps = {"run -- true": npa_run, "srun true": srun}
    times: dict[str, list[float]] = {label: [] for label in steps}
    for i in range(rounds):
        for label in list(steps)[:: 1 if i % 2 else -1]:
            t0 = time.perf_counter()
            await steps[label]()
            times[label].append(time.perf_counter() - t0)
    await session.close()
    if any(codes):
        raise SystemExit(f"a job failed: exit codes {codes}")
    for label, values in times.items():
        print(
            f"  {label:14s} median {statistics.median(values) * 1000:7.1f} ms   "
            f"min {min(values) * 1000:7.1f} ms"
        )
    print(f"  connections made: {session.connects}")
    med = {label: statistics.median(values) * 1000 for label, values in times.items()}
    return [
        Ratio(
            "P5 jobs",
            "`run -- true` end to end, reused SSH connection",
            med["run -- true"],
            "`srun true` over the same connection",
            med["srun true"],
            target="≤ 1.3",
            paired=paired_ratio(times["run -- true"], times["srun true"]),
        )
    ]


def main() -> list[Ratio]:
    print("-- run -- true vs srun true over SSH (local sshd + Slurm) --")
    if not _substrate_up():
        print("skipped: substrate not running (bash scripts/substrate.sh start)")
        return []
    with tempfile.TemporaryDirectory() as home:
        os.environ["NPA_HOME"] = home  # a private known_hosts for the run
        return asyncio.run(_bench(rounds=int(os.environ.get("NPA_BENCH_ROUNDS", "20"))))
