"""Typed lifecycle events: the one stream every front door (CLI, TUI, SDK, fleet) consumes.

Nobody outside `terraform.py` parses Terraform output; they read these models instead.
`event.model_dump(mode="json")` is exactly one NDJSON line of `--output json`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

OperationKind = Literal["plan", "deploy", "destroy"]
OperationResult = Literal["ok", "failed", "interrupted"]
Severity = Literal["error", "warning", "info"]
ResourceAction = Literal["create", "update", "replace", "delete", "read", "noop", "unknown"]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ts: float = Field(default_factory=time.time)
    operation_id: str


class OperationStarted(_Event):
    kind: Literal["operation_started"] = "operation_started"
    operation: OperationKind
    name: str


class PhaseChanged(_Event):
    """A step of the operation begins: init, plan, apply:k8s, apply:full, destroy, done."""

    kind: Literal["phase_changed"] = "phase_changed"
    phase: str
    label: str


class RecipeResolved(_Event):
    kind: Literal["recipe_resolved"] = "recipe_resolved"
    origin: Literal["terraform-dir", "config", "git", "sandbox"]
    path: str
    ref: str | None = None
    version: str | None = None
    install_dir: str | None = None
    terraform_bin: str | None = None
    terraform_version: str | None = None


class PoolChange(BaseModel):
    """What a plan does to one worker pool of an existing cluster."""

    model_config = ConfigDict(extra="forbid")

    pool: str
    change: Literal["create", "resize", "replace", "delete", "update"]
    size_before: int | None = None
    size_after: int | None = None
    resources: list[str] = Field(default_factory=list)


class PlanSummary(_Event):
    kind: Literal["plan_summary"] = "plan_summary"
    phase: str
    add: int
    change: int
    remove: int
    by_module: dict[str, dict[str, int]] = Field(default_factory=dict)
    pools: list[PoolChange] = Field(default_factory=list)
    destructive: list[str] = Field(
        default_factory=list, description="addresses the plan deletes or replaces"
    )

    @property
    def total(self) -> int:
        return self.add + self.change + self.remove


class ResourceStarted(_Event):
    kind: Literal["resource_started"] = "resource_started"
    addr: str
    module: str
    action: ResourceAction


class ResourceProgress(_Event):
    kind: Literal["resource_progress"] = "resource_progress"
    addr: str
    module: str
    action: ResourceAction
    elapsed: float
    message: str = ""


class ResourceFinished(_Event):
    kind: Literal["resource_finished"] = "resource_finished"
    addr: str
    module: str
    action: ResourceAction
    elapsed: float


class ResourceFailed(_Event):
    kind: Literal["resource_failed"] = "resource_failed"
    addr: str
    module: str
    action: ResourceAction
    elapsed: float
    message: str = ""


class Diagnostic(_Event):
    kind: Literal["diagnostic"] = "diagnostic"
    severity: Severity
    summary: str
    detail: str = ""
    address: str | None = None
    range: dict[str, Any] | None = None


class LogLine(_Event):
    kind: Literal["log_line"] = "log_line"
    stream: Literal["stdout", "stderr", "terraform", "npa"]
    text: str


class Outputs(_Event):
    kind: Literal["outputs"] = "outputs"
    outputs: dict[str, Any]


class OperationFinished(_Event):
    kind: Literal["operation_finished"] = "operation_finished"
    result: OperationResult
    message: str
    duration: float


# --- cloud preflight and the post-deploy gate (cloud/, lifecycle/post_deploy) ---------------


class PreflightReported(_Event):
    """The cloud preflight's report (`cloud.preflight.PreflightReport` as JSON)."""

    kind: Literal["preflight"] = "preflight"
    report: dict[str, Any]
    blocked: bool = False

    def describe(self) -> str:
        price = self.report.get("price") or {}
        total = f", ≈ {price['total']} {price.get('currency', '')}/hour" if price else ""
        rows = self.report.get("rows") or []
        short = [r["resource"] for r in rows if str(r.get("verdict", "")).startswith("short")]
        head = "preflight: " + ("BLOCKED" if self.blocked else "passed")
        detail = f"; short: {', '.join(short)}" if short else ""
        return f"{head} ({len(rows)} quotas checked{detail}{total})"


class RepairReported(_Event):
    """One post-deploy repair and its result; a failure is a warning, never a crash."""

    kind: Literal["repair"] = "repair"
    repair: str
    result: Literal["applied", "not-needed", "failed"]
    message: str = ""

    def describe(self) -> str:
        return f"repair {self.repair}: {self.result}" + (
            f" ({self.message})" if self.message else ""
        )


class GpuCheckReported(_Event):
    """The GPU creation gate: one pool's discovery, or one node's checks."""

    kind: Literal["gpu_check"] = "gpu_check"
    pool: str
    node: str | None = None
    status: Literal["running", "PASS", "FAIL", "TIMEOUT"]
    check: str | None = None
    message: str = ""
    gpus: int | None = None

    def describe(self) -> str:
        where = f"{self.pool}/{self.node}" if self.node else self.pool
        what = f" {self.check}" if self.check else ""
        tail = f": {self.message}" if self.message else ""
        return f"GPU check {where}{what} {self.status}{tail}"


Event = Annotated[
    OperationStarted
    | PhaseChanged
    | RecipeResolved
    | PlanSummary
    | ResourceStarted
    | ResourceProgress
    | ResourceFinished
    | ResourceFailed
    | Diagnostic
    | LogLine
    | Outputs
    | OperationFinished
    | PreflightReported
    | RepairReported
    | GpuCheckReported,
    Field(discriminator="kind"),
]

EventSink = Callable[[Event], None]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: dict[str, Any] | str) -> Event:
    """Read one NDJSON line (or its dict) back into its typed event."""
    if isinstance(data, str):
        return EVENT_ADAPTER.validate_json(data)
    return EVENT_ADAPTER.validate_python(data)
