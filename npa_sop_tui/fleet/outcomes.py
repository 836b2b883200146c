"""What a fleet run reports: one outcome per target (a partial failure never hides the
targets that succeeded) and the run's report, npa's aggregate included."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.errors import NpaError
from npa_sop_tui.fleet import network as net
from npa_sop_tui.fleet.model import FleetTarget

Operation = Literal["plan", "deploy", "destroy"]
Outcome = Literal[
    "planned",
    "deployed",
    "destroyed",
    "absent",
    "failed",
    "interrupted",
    "destroy-incomplete",
    "not-run",
]
SUCCESS: frozenset[str] = frozenset({"planned", "deployed", "destroyed", "absent"})


class TargetOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    project_key: str
    name: str
    backend: str
    status: Outcome
    ok: bool
    message: str = ""
    started: float | None = None
    finished: float | None = None
    kube_context: str | None = None
    subnet_id: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class FleetReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fleet: str
    operation: Operation
    source: str
    concurrency: int
    ok: bool
    succeeded: int
    failed: int
    not_run: int
    targets: list[TargetOutcome]
    networks: list[net.NetworkRecord] = Field(default_factory=list)
    # npa's aggregate (fleet/aggregate.py); `failed` above is shared with it.
    name: str = ""
    tenant_id: str = ""
    region: str = ""
    project_prefix: str = ""
    profile: str = ""
    clusters: list[dict[str, Any]] = Field(default_factory=list)
    deployed: int = 0
    backend_counts: dict[str, int] = Field(default_factory=dict)
    # npa's plan document (fleet plan only): aggregate.plan_projects
    project_count: int | None = None
    cluster_count: int | None = None
    projects: list[dict[str, Any]] | None = None


def target_outcome(
    target: FleetTarget,
    status: Outcome,
    message: str,
    *,
    started: float | None = None,
    error: dict[str, Any] | None = None,
    result: dict[str, Any] | None = None,
    kube_context: str | None = None,
    subnet_id: str | None = None,
) -> TargetOutcome:
    return TargetOutcome(
        key=target.key,
        project_key=target.project_key,
        name=target.name,
        backend=target.backend,
        status=status,
        ok=status in SUCCESS,
        message=message,
        started=started,
        finished=time.time() if started is not None else None,
        kube_context=kube_context,
        subnet_id=subnet_id,
        result=result,
        error=error,
    )


def unexpected_error(exc: BaseException) -> dict[str, Any]:
    """The `error` entry for an exception we did not foresee (no traceback, no secrets
    beyond what its message says)."""
    return {"error": "unexpected", "type": type(exc).__name__, "message": str(exc)}


def error_extra(exc: NpaError) -> dict[str, Any]:
    extra = getattr(exc, "json_extra", None)
    return extra() if callable(extra) else {}
