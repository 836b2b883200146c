"""Jobs from Python: `soperator.run(name, command, …)` returns a `Job` handle.

    from npa.sdk import soperator
    job = soperator.run("demo", "nvidia-smi -L", sandbox=True)
    job.wait()            # the job's exit code, once it ended
    print(job.logs())     # its output so far (text; invalid UTF-8 replaced)
    job.state             # asks Slurm now: PENDING, RUNNING, COMPLETED, FAILED, …
    job.cancel()

Each call opens the cluster's connection (SSH to the login node, or the sandbox's local
processes) and closes it again, so a handle can be kept, pickled by ID, or rebuilt with
`soperator.job(name, job_id)`. Connection fields (`login_host`, `login_port`, `login_user`,
`identity_file`, …) override the npa config, as for `status`. Inside a running event loop use
the `a…` coroutines (`await soperator.arun(...)`, `await job.await_()`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobInfo, JobRequest

T = TypeVar("T")


def _sync(coro: Awaitable[T], name: str) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    close = getattr(coro, "close", None)
    if close is not None:
        close()
    raise UsageError(f"called inside a running event loop: use `await {name}(...)`")


async def _with_backend(
    name: str, sandbox: bool, fields: dict[str, Any], work: Callable[[Any], Awaitable[T]]
) -> T:
    from npa_sop_tui.environment_choice import open_environment
    from npa_sop_tui.jobs.backend import job_backend
    from npa_sop_tui.status.hostkeys import HostKeyPolicy

    options = dict(fields)
    policy = HostKeyPolicy.accept_new() if options.pop("accept_new_host_key", False) else None
    environment = open_environment(sandbox=sandbox)
    try:
        settings = environment.status_settings(name, **options)
        if environment.is_sandbox:
            from npa_sop_tui.lifecycle.adopt import arequire_cluster

            await arequire_cluster(settings.name)
        ops = await environment.slurm_ops(settings, host_key_policy=policy)
        try:
            return await work(job_backend(ops))
        finally:
            await ops.aclose()
    finally:
        await environment.aclose()


class Job:
    """A job npa submitted; `info` is what was last seen of it."""

    def __init__(self, cluster: str, info: JobInfo, *, sandbox: bool, fields: dict[str, Any]):
        self.cluster = cluster
        self.info = info
        self.sandbox = sandbox
        self._fields = fields

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def output_path(self) -> str | None:
        return self.info.output_path

    @property
    def exit_code(self) -> int | None:
        return self.info.exit_code

    def __repr__(self) -> str:
        label = " SANDBOX" if self.sandbox else ""
        return f"<Job {self.id} on {self.cluster}{label}: {self.info.state}>"

    async def _pass(self, *, follow: bool, timeout: float | None = None) -> bytes:
        out = bytearray()

        async def work(backend: Any) -> None:
            from npa_sop_tui.jobs import records

            follow_call = backend.follow(self.info, on_output=out.extend, once=not follow)
            with contextlib.suppress(TimeoutError):  # still running: its state as it was
                await asyncio.wait_for(follow_call, timeout)
            if records.find(self.cluster, self.id) is not None:
                records.save(self.cluster, self.info)

        await _with_backend(self.cluster, self.sandbox, self._fields, work)
        return bytes(out)

    async def arefresh(self) -> JobInfo:
        await self._pass(follow=False)
        return self.info

    @property
    def state(self) -> str:
        """The job's state, asked now."""
        return _sync(self.arefresh(), "job.arefresh").state

    async def alogs(self) -> str:
        return (await self._pass(follow=False)).decode("utf-8", errors="replace")

    def logs(self) -> str:
        """The job's output so far."""
        return _sync(self.alogs(), "job.alogs")

    async def await_(self, timeout: float | None = None) -> int | None:
        """Wait until the job ends (or `timeout` s) and return its exit code (None when it
        ended without one, or is still running at the timeout: see `info.state`)."""
        await self._pass(follow=True, timeout=timeout)
        return self.info.exit_code if self.info.done else None

    def wait(self, timeout: float | None = None) -> int | None:
        return _sync(self.await_(timeout), "job.await_")

    async def acancel(self) -> None:
        async def work(backend: Any) -> None:
            await backend.cancel(self.id)

        await _with_backend(self.cluster, self.sandbox, self._fields, work)
        await self.arefresh()

    def cancel(self) -> None:
        _sync(self.acancel(), "job.acancel")


async def arun(
    name: str,
    command: str | list[str] | None = None,
    *,
    script: str | Path | None = None,
    template: str | None = None,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
    pool: str | None = None,
    time_limit: str | None = None,
    job_name: str | None = None,
    env: dict[str, str] | None = None,
    workdir: str | None = None,
    sandbox: bool = False,
    **fields: Any,
) -> Job:
    """Submit a job (a command, a batch script's text or path, or a template) and return
    its handle at once; `wait()` follows it to the end."""
    from npa_sop_tui.jobs import records
    from npa_sop_tui.jobs.model import command_text

    request = JobRequest(
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        time=time_limit,
        job_name=job_name,
        env=dict(env or {}),
        workdir=workdir,
    )
    if template is not None:
        from npa_sop_tui.jobs.templates import apply_template

        request = apply_template(template, request)
    elif script is not None:
        path = Path(script) if isinstance(script, Path) or "\n" not in script else None
        if path is not None and path.is_file():
            request.script, request.script_name = path.read_text(encoding="utf-8"), path.name
        else:
            request.script, request.script_name = str(script), "script"
    elif command is not None:
        request.command = command if isinstance(command, str) else command_text(list(command))
    request.checked()

    async def work(backend: Any) -> JobInfo:
        info: JobInfo = await backend.submit(request, pool=pool)
        records.save(name, info, command=request.command or f"--script {request.script_name}")
        return info

    info = await _with_backend(name, sandbox, fields, work)
    return Job(name, info, sandbox=sandbox, fields=fields)


def run(name: str, command: str | list[str] | None = None, **kw: Any) -> Job:
    return _sync(arun(name, command, **kw), "soperator.arun")


def job(name: str, job_id: str, *, sandbox: bool = False, **fields: Any) -> Job:
    """The handle of a job submitted earlier (by any front door)."""
    from npa_sop_tui.home.files import SandboxHomeEntered
    from npa_sop_tui.jobs import records
    from npa_sop_tui.status.slurm_ops import check_job

    with SandboxHomeEntered() if sandbox else contextlib.nullcontext():
        found = records.find(name, check_job(job_id))
    info = found or JobInfo(id=job_id, sandbox=sandbox)
    return Job(name, info, sandbox=sandbox, fields=fields)
