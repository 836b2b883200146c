"""The job backend of a cluster's `SlurmOps`: Slurm over the login node's SSH session, or
the sandbox's local processes. Both have `submit`, `follow`, `cancel`, `aclose` and say
whether they are a sandbox."""

from __future__ import annotations

from typing import Any, Protocol

from npa_sop_tui.errors import OperationError
from npa_sop_tui.jobs.model import JobInfo, JobRequest, OnOutput, OnState


class JobBackend(Protocol):
    sandbox: bool

    async def submit(
        self, request: JobRequest, *, pool: str | None = None, attached: bool = False
    ) -> JobInfo: ...

    async def follow(
        self,
        job: JobInfo,
        *,
        offset: int = 0,
        on_output: OnOutput,
        on_state: OnState | None = None,
        once: bool = False,
    ) -> JobInfo: ...

    async def cancel(self, job_id: str) -> None: ...

    async def aclose(self) -> None: ...


def job_backend(ops: Any) -> JobBackend:
    """The backend behind `ops` (status/slurm_ops.RemoteSlurm or the sandbox's SlurmOps).
    Closing the backend closes `ops`' connection too."""
    local = getattr(ops, "local_jobs", None)
    if local is not None:
        return local()  # type: ignore[no-any-return]
    runner = getattr(ops, "runner", None)
    if runner is None:
        raise OperationError("this cluster's Slurm cannot run jobs from npa")
    from npa_sop_tui.jobs.remote import RemoteJobs

    return RemoteJobs(runner, timeout=getattr(ops, "timeout", 30.0))
