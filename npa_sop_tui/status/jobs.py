"""What the operator actions read and show: Slurm jobs, one node in detail, job history.

Plain data (pydantic, `extra="forbid"`), JSON-serialisable for `--output json`, filled by
the parsers in squeue.py, scontrol.py and sacct.py (or by the sandbox's simulated Slurm).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SlurmJob(_Model):
    id: str  # "123", or "123_4" for an array task
    name: str
    user: str
    state: str  # RUNNING, PENDING, COMPLETED, CANCELLED, …
    partition: str | None = None
    nodes: int | None = None  # node count
    nodelist: str | None = None  # where it runs (running jobs)
    reason: str | None = None  # why it waits (pending jobs)
    elapsed: str | None = None  # as Slurm prints it: 1-02:03:04, 12:34
    time_limit: str | None = None
    gres: str | None = None
    exit_code: str | None = None  # history only: "0:0"
    start: str | None = None  # history only, as Slurm prints it
    end: str | None = None


class NodeDetail(_Model):
    """`scontrol show node NAME -o`, plus the jobs on the node and where it lives in k8s."""

    name: str
    state: str  # scontrol's State=, e.g. IDLE+DRAIN, DOWN+NOT_RESPONDING
    reason: str | None = None
    reason_by: str | None = None  # the user who set the reason
    reason_time: str | None = None
    cpus: int | None = None
    cpus_allocated: int | None = None
    memory_mb: int | None = None
    memory_allocated_mb: int | None = None
    gres: str | None = None
    gres_used: str | None = None
    partitions: list[str] = Field(default_factory=list)
    features: list[str] = Field(default_factory=list)
    jobs: list[SlurmJob] = Field(default_factory=list)
    k8s_pod: str | None = None
    k8s_node: str | None = None
    node_group: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)  # every key=value scontrol printed


class JobHistory(_Model):
    """Finished jobs from `sacct`, or why there is no history (accounting is off)."""

    available: bool
    note: str | None = None
    jobs: list[SlurmJob] = Field(default_factory=list)
