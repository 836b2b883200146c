"""A job request and a job's state, as every backend (Slurm over SSH, the sandbox's local
processes) reports them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from npa_sop_tui.errors import UsageError

# Slurm's job states (squeue %T); anything not in ACTIVE is an end state.
ACTIVE = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
        "RESV_DEL_HOLD",
    }
)
# What `run` exits with when the job ended without an exit code of its own.
EXIT_FOR_STATE = {"CANCELLED": 143, "TIMEOUT": 124, "PREEMPTED": 143, "OUT_OF_MEMORY": 137}
EXIT_UNKNOWN_END = 1

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TIME = re.compile(
    r"^(UNLIMITED|INFINITE|\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}(:\d{1,2}){0,2})$"
)
_JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


@dataclass
class JobRequest:
    """What to run. `command` is shell text; `script` is a whole batch script instead.
    Options left None are not passed, so a script's own #SBATCH lines apply."""

    command: str | None = None
    script: str | None = None
    script_name: str | None = None
    job_name: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    partition: str | None = None
    exclude: list[str] = field(default_factory=list)
    time: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    template: str | None = None
    all_nodes: bool = False  # every node of the pool (or every GPU node): a template's
    all_gpus: bool = False  # every GPU of the node, also for a script (commands default to it)

    @property
    def auto_gpus(self) -> bool:
        """Whether the backend fills --gpus-per-node with all GPUs of the nodes."""
        return self.gpus_per_node is None and (self.command is not None or self.all_gpus)

    def checked(self) -> JobRequest:
        """This request, or a UsageError naming the option that is wrong."""
        if (self.command is None) == (self.script is None):
            raise UsageError(
                "give either a command (after --) or --script FILE",
                hint="for example: npa soperator run --name demo -- hostname",
            )
        if self.command is not None and not self.command.strip():
            raise UsageError("the command is empty", hint="for example: -- hostname")
        if self.nodes is not None and not 1 <= self.nodes <= 100000:
            raise UsageError(f"--nodes {self.nodes}: must be at least 1")
        if self.gpus_per_node is not None and not 0 <= self.gpus_per_node <= 1024:
            raise UsageError(f"--gpus-per-node {self.gpus_per_node}: must be 0 or more")
        if self.time is not None and not _TIME.fullmatch(self.time):
            raise UsageError(
                f"--time {self.time!r} is not a Slurm time limit",
                hint="minutes (30), MM:SS, HH:MM:SS or D-HH[:MM[:SS]]",
            )
        if self.job_name is not None and not _JOB_NAME.fullmatch(self.job_name):
            raise UsageError(
                f"--job-name {self.job_name!r}: use letters, digits, . _ + - (at most 128)"
            )
        for key, value in self.env.items():
            if not _ENV_NAME.fullmatch(key):
                raise UsageError(f"--env {key}=…: {key!r} is not a variable name")
            if "\0" in value:
                raise UsageError(f"--env {key}: the value contains a NUL byte")
        if self.workdir is not None and (not self.workdir.strip() or "\n" in self.workdir):
            raise UsageError(f"--workdir {self.workdir!r} is not a directory path")
        return self


def parse_env(items: list[str] | None) -> dict[str, str]:
    """`--env K=V` flags as a mapping; a flag without `=` is a usage error."""
    env: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--env {item!r}: expected KEY=VALUE", hint="for example --env A=1")
        env[key] = value
    return env


def command_text(argv: list[str]) -> str:
    """The words after `--` as one shell command: quoted word by word, except a single word
    with spaces, which is taken as shell text (`-- 'make && ./a.out'`)."""
    import shlex

    if len(argv) == 1 and any(c.isspace() for c in argv[0]):
        return argv[0]
    return shlex.join(argv)


@dataclass
class JobInfo:
    """One job as npa knows it. `exit_code` is the job's own (its command's) exit status."""

    id: str
    state: str = "PENDING"
    reason: str | None = None
    exit_code: int | None = None
    output_path: str | None = None
    nodes: str | None = None
    submitted: str | None = None
    started: str | None = None
    ended: str | None = None
    name: str | None = None
    sandbox: bool = False

    @property
    def done(self) -> bool:
        return self.state not in ACTIVE

    def run_exit_code(self) -> int:
        """What `npa soperator run` exits with for this ended job."""
        if self.exit_code is not None:
            return self.exit_code
        if self.state == "COMPLETED":
            return 0
        return EXIT_FOR_STATE.get(self.state, EXIT_UNKNOWN_END)

    def to_json(self) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "job_name": self.name,
            "state": self.state,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "output_path": self.output_path,
            "nodes": self.nodes,
            "submitted": self.submitted,
            "started": self.started,
            "ended": self.ended,
            "sandbox": self.sandbox,
        }


# What a backend's follow() calls: with output bytes as the job wrote them, and with the
# job when its state changes.
OnOutput = Callable[[bytes], None]
OnState = Callable[[JobInfo], None]
