"""Typed lifecycle events: the one stream every front door (CLI, TUI, SDK, fleet) consumes.

Nobody outside `terraform/runner.py` parses Terraform output; they read these models instead.
`event.model_dump(mode="json")` is exactly one NDJSON line of `--output json`, and
`describe(event)` is the one way an event is said in words (CLI text, TUI logs, SDK status
lines, fleet and workflow reports), so every front door words an event the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, assert_never

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

    def describe(self) -> str:
        """`worker pool gpu: resize (size 2 → 4)`: the line the CLI and the app show."""
        sizes = ""
        if self.size_before is not None or self.size_after is not None:
            before = "-" if self.size_before is None else self.size_before
            after = "-" if self.size_after is None else self.size_after
            sizes = f" (size {before} → {after})"
        return f"worker pool {self.pool}: {self.change}{sizes}"


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


class RepairReported(_Event):
    """One post-deploy repair and its result; a failure is a warning, never a crash."""

    kind: Literal["repair"] = "repair"
    repair: str
    result: Literal["applied", "not-needed", "failed"]
    message: str = ""


class GpuCheckReported(_Event):
    """The GPU creation gate: one pool's discovery, or one node's checks."""

    kind: Literal["gpu_check"] = "gpu_check"
    pool: str
    node: str | None = None
    status: Literal["running", "PASS", "FAIL", "TIMEOUT"]
    check: str | None = None
    message: str = ""
    gpus: int | None = None


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


# ---------------------------------------------------------------------------------------
# Events in words

Level = Literal["error", "warning", "info"]

_DOING: dict[ResourceAction, str] = {
    "create": "creating",
    "update": "updating",
    "replace": "replacing",
    "delete": "destroying",
    "read": "reading",
    "noop": "checking",
    "unknown": "changing",
}
_DONE: dict[ResourceAction, str] = {
    "create": "created",
    "update": "updated",
    "replace": "replaced",
    "delete": "destroyed",
    "read": "read",
    "noop": "unchanged",
    "unknown": "changed",
}
MAX_ADDRESSES_SAID = 10
"""Destructive addresses named in a plan's description; the rest are counted."""


def describe(event: Event, *, detail: bool = True) -> str:
    """Say `event` in words: a headline, then (with `detail`) indented lines of detail.

    Plan summaries add per-pool changes and the addresses deleted or replaced; diagnostics
    add Terraform's detail text; a resolved recipe adds its installation directory.
    """
    head, more = _words(event)
    if not detail or not more:
        return head
    return "\n".join([head, *(f"  {line}" for line in more)])


def _words(event: Event) -> tuple[str, list[str]]:
    match event:
        case OperationStarted():
            return f"{event.operation} {event.name}: started", []
        case PhaseChanged():
            return event.label or event.phase, []
        case RecipeResolved():
            return _recipe(event)
        case PlanSummary():
            return _plan(event)
        case ResourceStarted():
            return f"{event.addr}: {_DOING[event.action]}", []
        case ResourceProgress():
            return f"{event.addr}: still {_DOING[event.action]} ({_seconds(event.elapsed)})", []
        case ResourceFinished():
            return f"{event.addr}: {_DONE[event.action]} in {_seconds(event.elapsed)}", []
        case ResourceFailed():
            head = f"{event.addr}: {event.action} failed after {_seconds(event.elapsed)}"
            lines = event.message.splitlines()
            return (f"{head}: {lines[0]}" if lines else head), lines[1:]
        case Diagnostic():
            return _diagnostic(event)
        case LogLine():
            return event.text, []
        case Outputs():
            names = ", ".join(sorted(event.outputs))
            return (f"outputs: {names}" if names else "no outputs"), []
        case OperationFinished():
            took = _seconds(event.duration)
            head = {
                "ok": f"finished in {took}",
                "failed": f"failed after {took}",
                "interrupted": f"interrupted after {took}",
            }[event.result]
            return (f"{head}: {event.message}" if event.message else head), []
        case PreflightReported():
            return _preflight(event)
        case RepairReported():
            tail = f" ({event.message})" if event.message else ""
            return f"repair {event.repair}: {event.result}{tail}", []
        case GpuCheckReported():
            where = f"{event.pool}/{event.node}" if event.node else event.pool
            what = f" {event.check}" if event.check else ""
            tail = f": {event.message}" if event.message else ""
            return f"GPU check {where}{what} {event.status}{tail}", []
        case _:
            assert_never(event)


def _preflight(event: PreflightReported) -> tuple[str, list[str]]:
    report = event.report
    rows = report.get("rows") or []
    short = [r["resource"] for r in rows if str(r.get("verdict", "")).startswith("short")]
    unknown = sum(1 for r in rows if r.get("verdict") == "unknown")
    head = f"preflight: {'refused' if event.blocked else 'passed'} ({len(rows)} quotas checked"
    head += f", short: {', '.join(short)}" if short else ""
    head += f", {unknown} unknown)" if unknown else ")"
    price = report.get("price") or {}
    if price:
        head += f"; ≈ {float(price['total']):.2f} {price.get('currency', '')}/hour"
    lines = [str(p.get("message", "")) for p in report.get("problems") or []]
    return head, lines


def _recipe(event: RecipeResolved) -> tuple[str, list[str]]:
    about = [event.origin]
    if event.ref:
        about.append(f"ref {event.ref}")
    if event.version:
        about.append(f"soperator {event.version}")
    head = f"recipe: {event.path} ({', '.join(about)})"
    if event.terraform_version:
        head += f"; terraform {event.terraform_version}"
    return head, [f"installation: {event.install_dir}"] if event.install_dir else []


def _plan(event: PlanSummary) -> tuple[str, list[str]]:
    head = f"plan: {event.add} to add, {event.change} to change, {event.remove} to destroy"
    lines: list[str] = []
    for pool in event.pools:
        sizes = ""
        if pool.change == "resize":
            sizes = f" {pool.size_before}→{pool.size_after} nodes"
        lines.append(f"pool {pool.pool}: {pool.change}{sizes}")
    if event.destructive:
        named = ", ".join(event.destructive[:MAX_ADDRESSES_SAID])
        rest = len(event.destructive) - MAX_ADDRESSES_SAID
        lines.append(f"deletes or replaces: {named}" + (f" and {rest} more" if rest > 0 else ""))
    return head, lines


def _diagnostic(event: Diagnostic) -> tuple[str, list[str]]:
    head = f"{event.severity}: {event.summary}"
    if event.address:
        head += f" ({event.address})"
    start = (event.range or {}).get("start") or {}
    if event.range:
        head += f" at {event.range.get('filename', '?')}:{start.get('line', '?')}"
    return head, event.detail.splitlines()


def _seconds(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def level_of(event: Event) -> Level:
    """How loud an event is: failures and error diagnostics are errors; warnings, stderr and
    interruptions are warnings; everything else is information."""
    match event:
        case ResourceFailed():
            return "error"
        case Diagnostic():
            return event.severity
        case LogLine():
            return "warning" if event.stream == "stderr" else "info"
        case OperationFinished():
            return {"ok": "info", "failed": "error", "interrupted": "warning"}[event.result]
        case PreflightReported():
            return "error" if event.blocked else "info"
        case RepairReported():
            return "warning" if event.result == "failed" else "info"
        case GpuCheckReported():
            return "error" if event.status in ("FAIL", "TIMEOUT") else "info"
        case _:
            return "info"


def is_milestone(event: Event) -> bool:
    """Whether a one-line-per-event reporter (SDK `on_status`, fleet and workflow runs) shows
    `event`: starts, phases, plans, finished or failed resources, warnings and errors, the
    end. Resource starts, progress ticks, log lines, recipe details and outputs are left out."""
    match event:
        case Diagnostic():
            return event.severity != "info"
        case (
            OperationStarted()
            | PhaseChanged()
            | PlanSummary()
            | ResourceFinished()
            | ResourceFailed()
            | OperationFinished()
            | PreflightReported()
            | RepairReported()
        ):
            return True
        case GpuCheckReported():
            return event.status != "running"
        case _:
            return False
