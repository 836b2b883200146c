"""The batch script npa submits and the sbatch options it passes.

The script runs the user's command (or their uploaded script) and then writes the command's
exit status to `<job dir>/<job id>.exit`, beside the output `<job dir>/<job id>.out`: the
exit code is then known without accounting (slurmdbd), which many clusters do not run.
A job killed before it can write the file (cancelled, timed out) has none; its state says why.

Options given on the command line go to sbatch as arguments, so they win over a script's
own `#SBATCH` lines (sbatch's rule); options left unset are not passed at all.
"""

from __future__ import annotations

import secrets
import shlex

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobRequest

JOB_DIR = ".npa-jobs"  # under the login user's home, which the compute nodes share
# The job dir as the batch script finds it: exported by the submit command, else $HOME's.
JOB_DIR_IN_JOB = '"${NPA_JOB_DIR:-$HOME/' + JOB_DIR + '}"'
MAX_SCRIPT_BYTES = 4 * 1024 * 1024  # Slurm's default max_script_size

RECORD_EXIT = (
    "rc=$?\n"
    f"d={JOB_DIR_IN_JOB}\n"
    'printf \'%s\\n\' "$rc" > "$d/$SLURM_JOB_ID.exit.tmp" && '
    'mv -f "$d/$SLURM_JOB_ID.exit.tmp" "$d/$SLURM_JOB_ID.exit"\n'
    'exit "$rc"\n'
)


def sbatch_directives(script: str) -> list[str]:
    """The `#SBATCH` lines sbatch reads from `script`: those before its first command."""
    found: list[str] = []
    for line in script.splitlines():
        stripped = line.strip()
        if stripped.startswith("#SBATCH"):
            found.append(stripped)
        elif stripped and not stripped.startswith("#"):
            break
    return found


def batch_script(request: JobRequest) -> str:
    """The script sbatch gets on its standard input."""
    lines = ["#!/bin/bash", "# submitted by npa: runs the job, then records its exit status"]
    if request.script is not None:
        lines += sbatch_directives(request.script)
    lines += [f"export {key}={shlex.quote(value)}" for key, value in request.env.items()]
    if request.script is not None:
        lines.append(_embedded(request.script))
    else:
        lines.append(f"(\n{step_command(request)}\n)")
    return "\n".join(lines) + "\n" + RECORD_EXIT


def step_command(request: JobRequest, nodes: int | None = None) -> str:
    """A command request as the batch step runs it: on one node as it is, on several once
    per node through `srun` (one task per node, like `sky exec` on a multi-node run).
    `nodes` is the job's node count when the backend decided it (else the request's)."""
    assert request.command is not None
    if (nodes or request.nodes or 1) > 1:
        return f"srun --ntasks-per-node=1 bash -c {shlex.quote(request.command)}"
    return request.command


def _embedded(script: str) -> str:
    """The user's script written into the job dir and run (its #! picks the interpreter;
    without one, bash runs it)."""
    data = script if script.endswith("\n") else script + "\n"
    if len(data.encode("utf-8", "surrogateescape")) > MAX_SCRIPT_BYTES:
        raise UsageError(
            f"the script is larger than Slurm's default limit ({MAX_SCRIPT_BYTES // 1024} KiB)"
        )
    marker = f"NPA_SCRIPT_{secrets.token_hex(8)}"
    return (
        f"s={JOB_DIR_IN_JOB}/$SLURM_JOB_ID.script\n"
        f"cat > \"$s\" <<'{marker}'\n{data}{marker}\n"
        'chmod 700 "$s"\n'
        '"$s"'
    )


def job_name(request: JobRequest) -> str | None:
    """The name npa gives the job; None leaves a script's own (or sbatch's default)."""
    if request.job_name:
        return request.job_name
    if request.template:
        return f"npa-{request.template}"
    return "npa-run" if request.script is None else None


def sbatch_options(request: JobRequest) -> list[str]:
    """sbatch arguments for the options the request sets (shell-quoted)."""
    options: list[str] = []
    name = job_name(request)
    if name:
        options.append(f"--job-name={shlex.quote(name)}")
    if request.nodes is not None:
        options.append(f"--nodes={request.nodes}")
        if request.command is not None:
            options.append("--ntasks-per-node=1")
    if request.gpus_per_node:
        options.append(f"--gpus-per-node={request.gpus_per_node}")
    if request.partition:
        options.append(f"--partition={shlex.quote(request.partition)}")
    if request.exclude:
        options.append(f"--exclude={shlex.quote(','.join(request.exclude))}")
    if request.time:
        options.append(f"--time={shlex.quote(request.time)}")
    if request.workdir:
        options.append(f"--chdir={shlex.quote(request.workdir)}")
    return options
