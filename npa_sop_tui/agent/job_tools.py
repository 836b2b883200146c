"""Agent tools for jobs: `infra.soperator.run` and `infra.soperator.logs`.

Defined here as keyword sets for `tools.Tool` (tools.py registers them in one line), so this
module does not import the registry. Both go through the SDK's job calls (sdk_jobs.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

OUTPUT_TAIL = 16384  # characters of output a result carries


class _Input(BaseModel):
    # strict like every tool input: `sandbox: "yes"` is refused, not read as true
    model_config = ConfigDict(extra="forbid", strict=True)


class RunInput(_Input):
    """Exactly one of `command`, `script` (a batch script's text) or `template`."""

    name: str = Field(description="the cluster's name")
    command: str | None = Field(default=None, description="shell command to run as the job")
    script: str | None = Field(
        default=None, description="a batch script's text (#SBATCH lines respected)"
    )
    template: str | None = Field(
        default=None, description="a job template: gpu-hello, nccl-allreduce, cpu-hello"
    )
    nodes: int | None = Field(default=None, ge=1, description="nodes (default 1)")
    gpus_per_node: int | None = Field(
        default=None, ge=0, description="GPUs per node (default: all of the pool's nodes)"
    )
    pool: str | None = Field(default=None, description="run on the nodes of this worker pool")
    time_limit: str | None = Field(default=None, description="Slurm time limit, e.g. 30 or 1:00:00")
    job_name: str | None = Field(default=None, description="Slurm job name")
    env: dict[str, str] = Field(default_factory=dict, description="environment variables")
    workdir: str | None = Field(default=None, description="working directory on the cluster")
    wait: bool = Field(default=True, description="wait for the job to end (else return at once)")
    timeout_seconds: float = Field(
        default=600, gt=0, description="longest wait; the job goes on after it"
    )
    sandbox: bool = Field(default=False, description="a sandbox cluster (local processes)")

    @model_validator(mode="after")
    def _exactly_one(self) -> RunInput:
        given = [k for k in ("command", "script", "template") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of command, script or template")
        return self


class LogsInput(_Input):
    name: str = Field(description="the cluster's name")
    job_id: str = Field(pattern=r"^\d{1,12}(_\d{1,9})?$", description="the job's ID")
    follow: bool = Field(default=False, description="wait until the job ends")
    timeout_seconds: float = Field(default=600, gt=0, description="longest wait with follow")
    sandbox: bool = Field(default=False, description="a sandbox cluster")


class JobResult(BaseModel):
    # strict like every tool output: the declared schema says `additionalProperties: false`
    model_config = ConfigDict(extra="forbid")

    job_id: str
    job_name: str | None = None
    state: str = Field(description="Slurm's job state: PENDING, RUNNING, COMPLETED, FAILED, …")
    finished: bool
    reason: str | None = None
    exit_code: int | None = Field(default=None, description="the job's own exit status")
    output_path: str | None = Field(default=None, description="the output file on the cluster")
    nodes: str | None = None
    started: str | None = None
    ended: str | None = None
    sandbox: bool = False
    output: str = Field(default="", description="the output's last 16 KiB")
    bus_bandwidth_gbps: float | None = Field(
        default=None, description="nccl-tests' average bus bandwidth, when the output has it"
    )


def _result(job: Any, output: str) -> JobResult:
    from npa_sop_tui.jobs.templates import bus_bandwidth

    info = job.info.to_json()
    info.pop("submitted", None)
    return JobResult(
        **info,
        finished=job.info.done,
        output=output[-OUTPUT_TAIL:],
        bus_bandwidth_gbps=bus_bandwidth(output),
    )


async def _run(args: RunInput, on_event: Any) -> BaseModel:
    from npa_sop_tui.sdk import jobs as sdk_jobs

    job = await sdk_jobs.arun(
        args.name,
        args.command,
        script=args.script,
        template=args.template,
        nodes=args.nodes,
        gpus_per_node=args.gpus_per_node,
        pool=args.pool,
        time_limit=args.time_limit,
        job_name=args.job_name,
        env=args.env,
        workdir=args.workdir,
        sandbox=args.sandbox,
    )
    if args.wait:
        await job.await_(args.timeout_seconds)
    return _result(job, await job.alogs() if args.wait else "")


async def _logs(args: LogsInput, on_event: Any) -> BaseModel:
    from npa_sop_tui.sdk import jobs as sdk_jobs

    job = sdk_jobs.job(args.name, args.job_id, sandbox=args.sandbox)
    if args.follow:
        await job.await_(args.timeout_seconds)
    return _result(job, await job.alogs())


def _output() -> type[BaseModel]:
    return JobResult


def job_tools() -> list[dict[str, Any]]:
    """Keyword arguments of `tools.Tool` for each job tool."""
    return [
        {
            "name": "infra.soperator.run",
            "description": "Run a command, batch script or template as a Slurm job on a "
            "cluster (through its login node) and wait for it: state, exit code, output.",
            "input_model": RunInput,
            "output_model_factory": _output,
            "func": _run,
            "examples": [
                {"input": {"name": "demo", "command": "nvidia-smi -L"}},
                {"input": {"name": "demo", "template": "gpu-hello", "sandbox": True}},
            ],
            "checks_spec": False,
        },
        {
            "name": "infra.soperator.logs",
            "description": "A job's output and state; with follow, wait until it ends.",
            "input_model": LogsInput,
            "output_model_factory": _output,
            "func": _logs,
            "examples": [{"input": {"name": "demo", "job_id": "42", "follow": True}}],
            "checks_spec": False,
        },
    ]
