"""Sandbox jobs are real local processes: states PENDING → RUNNING → COMPLETED / FAILED /
CANCELLED / TIMEOUT, output as bytes, exit codes, one command per node, detached from the
submitter."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobInfo, JobRequest
from npa_sop_tui.sandbox.local_jobs import LocalJobs, _seconds

from testkit.wait import eventually


def _jobs() -> LocalJobs:
    return LocalJobs("demo", lambda: [("gpu-0", 8), ("gpu-1", 8)])


async def _follow(jobs: LocalJobs, job: JobInfo) -> tuple[JobInfo, bytes, list[str]]:
    out = bytearray()
    states: list[str] = []
    done = await jobs.follow(job, on_output=out.extend, on_state=lambda j: states.append(j.state))
    return done, bytes(out), states


async def test_output_states_and_exit_code(npa_home: Path) -> None:
    jobs = _jobs()
    job = await jobs.submit(JobRequest(command="sh -c 'echo hi; exit 3'"))
    assert job.sandbox and job.state == "PENDING"
    done, out, states = await _follow(jobs, job)
    assert out == b"hi\n"
    assert states[0] == "PENDING" and states[-1] == "FAILED"
    assert done.exit_code == 3 and done.run_exit_code() == 3 and done.started and done.ended
    ok = await jobs.submit(JobRequest(command="true"))
    done, _, _ = await _follow(jobs, ok)
    assert (done.state, done.exit_code, done.run_exit_code()) == ("COMPLETED", 0, 0)
    assert [j.id for j in _jobs().all()] == [job.id, ok.id]  # IDs grow, never reused


async def test_bytes_env_gpus_and_nodes(npa_home: Path) -> None:
    jobs = _jobs()
    request = JobRequest(
        command="printf 'x\\377y\\n'; "
        'echo "$SLURMD_NODENAME $SLURM_NODEID $A $CUDA_VISIBLE_DEVICES"',
        nodes=2,
        gpus_per_node=2,
        env={"A": "it's"},
    )
    done, out, _ = await _follow(jobs, await jobs.submit(request))
    assert done.state == "COMPLETED" and done.nodes == "gpu-0,gpu-1"
    assert out.count(b"x\xffy\n") == 2
    assert b"gpu-0 0 it's 0,1\n" in out and b"gpu-1 1 it's 0,1\n" in out
    with pytest.raises(UsageError, match="Requested node configuration is not available"):
        await jobs.submit(JobRequest(command="true", nodes=3))
    with pytest.raises(UsageError, match="no Slurm nodes of pool 'cpu'"):
        await jobs.submit(JobRequest(command="true"), pool="cpu")


async def test_cancel_kills_the_job_and_says_cancelled(npa_home: Path, tmp_path: Path) -> None:
    jobs = _jobs()
    marker = tmp_path / "still-running"
    job = await jobs.submit(JobRequest(command=f"sleep 2; touch {marker}"))
    await eventually(lambda: jobs.info(job.id).state == "RUNNING")
    await jobs.cancel(job.id)
    done, _, _ = await _follow(jobs, job)
    assert done.state == "CANCELLED" and done.run_exit_code() == 143
    pid = int(__import__("json").loads((jobs.root / job.id / "job.json").read_text())["pid"])
    await eventually(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid))
    assert not marker.exists()
    with pytest.raises(UsageError, match="no queued or running job"):
        await jobs.cancel(job.id)


async def test_time_limit_ends_as_timeout(npa_home: Path) -> None:
    jobs = _jobs()
    job = await jobs.submit(JobRequest(command="sleep 30", time="0:01"))
    done, _, _ = await _follow(jobs, job)
    assert done.state == "TIMEOUT" and done.run_exit_code() == 124


def test_time_limits_in_seconds() -> None:
    assert [_seconds(t) for t in ("5", "1:30", "1:00:01", "1-2", "1-0:0:5")] == [
        300,
        90,
        3601,
        93600,
        86405,
    ]


def test_unknown_job_is_a_usage_error(npa_home: Path) -> None:
    with pytest.raises(UsageError, match="no job 42"):
        _jobs().info("42")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
