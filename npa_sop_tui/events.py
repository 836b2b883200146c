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
    | OperationFinished,
    Field(discriminator="kind"),
]

EventSink = Callable[[Event], None]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: dict[str, Any] | str) -> Event:
    """Read one NDJSON line (or its dict) back into its typed event."""
    if isinstance(data, str):
        return EVENT_ADAPTER.validate_json(data)
    return EVENT_ADAPTER.validate_python(data)
