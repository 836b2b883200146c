"""The post-deploy result, with the existing npa's field names and meanings.

`status` is `ready` when every GPU pool passed its creation check (CPU-only clusters too),
`degraded-validation` when a check failed or timed out; `deployment_status` is `applied`
either way (Terraform finished). `validation` says what was checked and, on failure, the pool,
node, check and message, and whether the Slurm queue was confirmed empty after cancelling.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeFailure(_Model):
    node: str
    check: str  # discovery, srun, nvidia-smi, <test>.<check>, timeout
    message: str


class GpuCreationCheck(_Model):
    pool: str
    nodes: list[str] = Field(default_factory=list)
    gpus_per_node: int
    tests: list[str] = Field(default_factory=list)
    status: Literal["PASS", "FAIL", "TIMEOUT", "NOT_RUN"]
    failures: list[NodeFailure] = Field(default_factory=list)


class Validation(_Model):
    status: Literal["passed", "failed"]
    check: Literal["gpu-creation"] = "gpu-creation"
    code: str | None = None  # gpu_creation_check_failed | gpu_creation_check_timeout | …
    message: str | None = None
    pool: str | None = None
    node: str | None = None
    phase: str | None = None  # discovery | check | cleanup | login
    cleanup_confirmed: bool | None = None


class PostDeployResult(_Model):
    status: Literal["ready", "degraded-validation"]
    deployment_status: Literal["applied"] = "applied"
    validation: Validation
    gpu_creation_checks: list[GpuCreationCheck] = Field(default_factory=list)
    post_deploy_fixes: Literal["applied", "skipped"] = "skipped"
    post_deploy_fix_warnings: list[str] = Field(default_factory=list)
