"""Operator actions on a live cluster's Slurm: list nodes and jobs, look at one node, drain /
resume a node, cancel a job, read the job history. The same for every front door.

`RemoteSlurm` runs the Slurm commands through a runner: the SSH session to the login node
(`open_remote`), or `LocalRunner` when npa runs where Slurm is. The sandbox has its own
`SlurmOps` (sandbox/slurm_sim.py) with the same methods.

User text goes to the shell quoted; node names and job IDs must look like names and IDs
(a bad one is a usage error, exit 2, before anything runs). Actions check first that the node
or job exists, because scontrol/scancel are silent or vague about unknown ones.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from dataclasses import dataclass
from typing import Any, Protocol

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.status.jobs import JobHistory, NodeDetail, SlurmJob
from npa_sop_tui.status.model import SlurmState

NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
JOB_RE = re.compile(r"^\d{1,12}(_\d{1,9})?$")
MAX_REASON = 512
PRIVILEGE_MARKERS = ("invalid user id", "access/permission denied", "permission denied")


class SlurmOps(Protocol):
    async def nodes(self) -> SlurmState: ...
    async def node(self, name: str) -> NodeDetail: ...
    async def jobs(self) -> list[SlurmJob]: ...
    async def history(self) -> JobHistory: ...
    async def drain(self, node: str, reason: str) -> None: ...
    async def resume(self, node: str) -> None: ...
    async def cancel(self, job_id: str) -> None: ...
    async def aclose(self) -> None: ...


def check_node(name: str) -> str:
    if not NODE_RE.fullmatch(name or ""):
        raise UsageError(
            f"{name!r} is not a Slurm node name",
            hint="one node, as `nodes` lists it (letters, digits, . _ -)",
        )
    return name


def check_job(job_id: str) -> str:
    job_id = (job_id or "").strip()
    if not JOB_RE.fullmatch(job_id):
        raise UsageError(
            f"{job_id!r} is not a Slurm job ID", hint="a number such as 1234 (or 1234_5)"
        )
    return job_id


def check_reason(reason: str) -> str:
    """The reason as Slurm will keep it: one line, double quotes as single quotes (scontrol
    parses `"` in its arguments and drops some of them)."""
    text = " ".join((reason or "").split()).replace('"', "'")
    if not text:
        raise UsageError("a drain needs a reason", hint='for example --reason "disk check"')
    if len(text) > MAX_REASON:
        raise UsageError(f"the reason is longer than {MAX_REASON} characters")
    return text


@dataclass
class CommandResult:
    exit_status: int
    stdout: str
    stderr: str


class LocalRunner:
    """Runs commands on this machine (`bash -c`), like SshSession.run does on the login node."""

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise OperationError(f"`{command}` did not finish within {timeout:g}s") from None
        return CommandResult(proc.returncode or 0, out.decode(), err.decode())

    async def close(self) -> None:
        return None


class RemoteSlurm:
    """`SlurmOps` through a command runner."""

    def __init__(self, runner: Any, *, host: str, timeout: float = 30.0) -> None:
        self.runner = runner
        self.host = host
        self.timeout = timeout

    async def _run(self, command: str, *, what: str) -> Any:
        result = await self.runner.run(command, timeout=self.timeout)
        if result.exit_status != 0:
            raise _failure(what, command, result)
        return result

    async def nodes(self) -> SlurmState:
        from npa_sop_tui.status.slurm_poll import collect_slurm

        return await collect_slurm(self.runner, host=self.host, timeout=self.timeout)

    async def jobs(self) -> list[SlurmJob]:
        from npa_sop_tui.status.sinfo_summary import slurm_release
        from npa_sop_tui.status.squeue import (
            JOBS_DELIMITED_CMD,
            active_jobs,
            jobs_json_command,
            parse_squeue_delimited,
            parse_squeue_json,
        )

        release = await slurm_release(self.runner, timeout=self.timeout)
        result = await self.runner.run(jobs_json_command(release), timeout=self.timeout)
        if result.exit_status == 0:
            try:
                return active_jobs(parse_squeue_json(result.stdout))
            except ValueError:
                pass  # an squeue without usable --json: the table below
        result = await self._run(JOBS_DELIMITED_CMD, what="listing jobs")
        return parse_squeue_delimited(result.stdout)

    async def history(self) -> JobHistory:
        from npa_sop_tui.status.sacct import (
            HISTORY_DELIMITED_CMD,
            accounting_off,
            parse_sacct_delimited,
        )

        result = await self.runner.run(HISTORY_DELIMITED_CMD, timeout=self.timeout)
        said = f"{result.stdout}\n{result.stderr}"
        if accounting_off(said):
            line = next((ln for ln in said.splitlines() if accounting_off(ln)), said.strip())
            return JobHistory(available=False, note=f"no job history: {line.strip()}")
        if result.exit_status != 0:
            raise _failure("reading the job history", HISTORY_DELIMITED_CMD, result)
        return parse_sacct_delimited(result.stdout)

    async def node(self, name: str) -> NodeDetail:
        from npa_sop_tui.status.scontrol import parse_show_node, show_node_command
        from npa_sop_tui.status.squeue import jobs_on

        command = show_node_command(shlex.quote(check_node(name)))
        result = await self.runner.run(command, timeout=self.timeout)
        if result.exit_status != 0 or not result.stdout.startswith("NodeName="):
            said = (result.stderr or result.stdout).strip()
            if "not found" in said.lower() or "invalid node name" in said.lower():
                raise UsageError(
                    f"Slurm has no node {name!r}",
                    hint="`npa soperator nodes --name <cluster>` lists the nodes",
                )
            raise _failure(f"reading node {name}", command, result)
        detail = parse_show_node(result.stdout)
        detail.jobs = jobs_on(await self.jobs(), detail.name)
        return detail

    async def drain(self, node: str, reason: str) -> None:
        reason = check_reason(reason)
        await self.node(node)  # exists, or a usage error naming it
        await self._run(
            f"scontrol update nodename={shlex.quote(node)} state=drain "
            f"reason={shlex.quote(reason)}",
            what=f"draining {node}",
        )

    async def resume(self, node: str) -> None:
        await self.node(node)
        command = f"scontrol update nodename={shlex.quote(node)} state=resume"
        result = await self.runner.run(command, timeout=self.timeout)
        if result.exit_status == 0:
            return
        # Slurm 22.05 clears the drain of a node whose slurmd never registered (UNKNOWN)
        # and then refuses the resume itself ("Invalid node state"): the drain is gone,
        # which is what was asked; the node stays down until its slurmd answers.
        if "DRAIN" in (await self.node(node)).state:
            raise _failure(f"resuming {node}", command, result)

    async def cancel(self, job_id: str) -> None:
        job_id = check_job(job_id)
        if not any(j.id == job_id for j in await self.jobs()):
            raise UsageError(
                f"no queued or running job {job_id}",
                hint="`npa soperator jobs --name <cluster>` lists them",
            )
        await self._run(f"scancel {shlex.quote(job_id)}", what=f"cancelling job {job_id}")

    async def aclose(self) -> None:
        close = getattr(self.runner, "close", None)
        if close is not None:
            await close()


def _failure(what: str, command: str, result: Any) -> OperationError:
    said = (result.stderr or result.stdout or "").strip().splitlines()
    first = said[0] if said else f"exit {result.exit_status}"
    if any(marker in first.lower() for marker in PRIVILEGE_MARKERS):
        return OperationError(
            f"{what} was refused by Slurm: {first}",
            hint="node state changes need root or the SlurmUser on the login node; connect "
            "as root (--login-user root), as Soperator's login nodes expect",
        )
    return OperationError(f"{what} failed: `{command}` said: {first}")


async def open_remote(settings: Any, host_key_policy: Any = None) -> RemoteSlurm:
    """`RemoteSlurm` over SSH to the cluster's login node (status/login_address.py says where:
    `login.host`, else the login Service, else an error naming what to set)."""
    from npa_sop_tui.status.hostkeys import HostKeyPolicy, KnownHosts
    from npa_sop_tui.status.login_address import resolve_login_address
    from npa_sop_tui.status.ssh import SshSession, SshTarget

    host = (await asyncio.to_thread(resolve_login_address, settings)).host
    target = SshTarget(
        host=host,
        port=settings.login_port,
        user=settings.login_user,
        identity_file=settings.identity_file,
    )
    policy = host_key_policy or HostKeyPolicy()
    session = SshSession(target, policy=policy, known_hosts=KnownHosts(settings.known_hosts))
    return RemoteSlurm(session, host=host, timeout=settings.command_timeout)
