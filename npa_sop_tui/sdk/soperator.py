"""Python SDK for Soperator clusters: `from npa.sdk import soperator`.

The same lifecycle the CLI, the TUI and the fleet run. Every call takes a `SoperatorSpec`,
a mapping or a path to cluster.yaml, and returns a typed, JSON-serialisable pydantic result.

    from npa.sdk import soperator
    result = soperator.deploy("cluster.yaml", sandbox=True, on_event=print)

    async for event in soperator.deploy_events(spec, sandbox=True):   # asyncio callers
        ...

Synchronous calls run the async lifecycle with `asyncio.run`; inside a running event loop
use the `a…` variants (`await soperator.adeploy(...)`) or the `…_events` iterators.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from npa_sop_tui.errors import Interrupted, NpaError, OperationError, UsageError
from npa_sop_tui.events import OperationFinished
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle.api import (
    DeployResult,
    DestroyIncomplete,
    DestroyResult,
    DestructivePlanError,
    LifecycleOptions,
    PlanResult,
    TerraformFailed,
)
from npa_sop_tui.lifecycle.cloud_steps import PreflightBlocked
from npa_sop_tui.lifecycle.post_deploy_step import DeploymentDegraded
from npa_sop_tui.sdk.compat import (
    ContractPlan,
    DeploymentValidationFailure,
    SoperatorDeploymentValidationError,
    SoperatorStateCaptureError,
    SoperatorStatus,
    apply_post_deploy_fixes,
    load_spec,
    spec_from_mapping,
)
from npa_sop_tui.sdk.support import (
    EventCallback,
    EventLoopRunning,
    OperationStream,
    StatusCallback,
    _options,
    _run,
    _sink,
    _work_root,
    describe_event,
    list_clusters,
    require_sandbox_cluster,
)
from npa_sop_tui.sdk.validate import (
    SoperatorSpecError,
    SpecLike,
    ValidationResult,
    WorkerSummary,
    load,
    validate,
)
from npa_sop_tui.spec.findings import Finding
from npa_sop_tui.spec.model import SoperatorSpec, SpecError, WorkerPoolSpec
from npa_sop_tui.status.model import ClusterStatus

# ---------------------------------------------------------------------------------------
# plan / deploy / destroy


async def aplan(
    spec: SpecLike,
    *,
    options: LifecycleOptions | None = None,
    on_event: EventCallback | None = None,
    on_status: StatusCallback | None = None,
    terraform_dir: str | os.PathLike[str] | None = None,
    sandbox: bool | None = None,
    identity: Any = None,
    env: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    capacity: Mapping[str, str] | None = None,
) -> PlanResult:
    """init + Terraform plan (`PlanResult`, npa's plan fields included); nothing changes."""
    from npa_sop_tui.lifecycle import api as lifecycle

    async with _options(
        options,
        terraform_dir=terraform_dir,
        sandbox=sandbox,
        identity=identity,
        env=env,
        parallelism=parallelism,
        capacity=capacity,
    ) as opts:
        return await lifecycle.plan(load(spec), options=opts, on_event=_sink(on_event, on_status))


async def adeploy(
    spec: SpecLike,
    *,
    options: LifecycleOptions | None = None,
    on_event: EventCallback | None = None,
    on_status: StatusCallback | None = None,
    allow_destructive: bool = False,
    terraform_dir: str | os.PathLike[str] | None = None,
    sandbox: bool | None = None,
    identity: Any = None,
    env: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    capacity: Mapping[str, str] | None = None,
    stream_terraform_output: bool = False,
    **npa_flags: Any,
) -> DeployResult:
    """`npa_flags`: the existing npa's deploy keywords (timeout_minutes,
    gpu_creation_check_timeout_seconds, apply_fixes, source_preflight_only, project, profile,
    solutions_library_ref, root_login_ssh_public_key_file) and preflight. A failed GPU check
    raises `SoperatorDeploymentValidationError` (`.result`, `.failure`)."""
    from npa_sop_tui.lifecycle import api as lifecycle
    from npa_sop_tui.lifecycle.flags import with_npa_flags
    from npa_sop_tui.sdk.compat import as_validation_error

    async with _options(
        options,
        terraform_dir=terraform_dir,
        sandbox=sandbox,
        identity=identity,
        env=env,
        parallelism=parallelism,
        capacity=capacity,
    ) as opts:
        try:
            return await lifecycle.deploy(
                load(spec),
                options=with_npa_flags(opts, npa_flags),
                on_event=_sink(on_event, on_status, stream_terraform_output),
                allow_destructive=allow_destructive,
            )
        except DeploymentDegraded as exc:
            raise as_validation_error(exc) from exc.__cause__


async def adestroy(
    name: str,
    *,
    options: LifecycleOptions | None = None,
    on_event: EventCallback | None = None,
    on_status: StatusCallback | None = None,
    terraform_dir: str | os.PathLike[str] | None = None,
    sandbox: bool | None = None,
    env: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    raise_incomplete: bool = False,
    stream_terraform_output: bool = False,
    **npa_flags: Any,
) -> DestroyResult:
    """`npa_flags`: timeout_minutes, source_preflight_only, profile (the existing npa's).
    An incomplete destroy is returned, as npa does (`status: "destroy-incomplete"`,
    `errors`, `remaining`); `raise_incomplete=True` raises `DestroyIncomplete` instead."""
    from npa_sop_tui.lifecycle import api as lifecycle
    from npa_sop_tui.lifecycle.flags import with_npa_flags
    from npa_sop_tui.sdk.compat import incomplete_result

    async with _options(
        options,
        terraform_dir=terraform_dir,
        sandbox=sandbox,
        identity=None,
        env=env,
        parallelism=parallelism,
        capacity=None,
    ) as opts:
        try:
            return await lifecycle.destroy(
                _name(name),
                options=with_npa_flags(opts, npa_flags, apply=False),
                on_event=_sink(on_event, on_status, stream_terraform_output),
            )
        except DestroyIncomplete as exc:
            if raise_incomplete:
                raise
            return incomplete_result(_name(name), exc, exc.remaining)


def _name(name: str | SoperatorSpec) -> str:
    # The anchor's destroy/status take a name; accept a spec too, it names its cluster.
    return name.name if isinstance(name, SoperatorSpec) else str(name)


# Keywords that ask for (or configure) a real Terraform plan rather than npa's static one.
_TERRAFORM_PLAN_KEYWORDS = frozenset(
    {"options", "terraform_dir", "sandbox", "identity", "env", "parallelism", "on_event"}
)


def plan(spec: SpecLike, *, terraform: bool | None = None, **kw: Any) -> PlanResult | ContractPlan:
    """npa's plan by default: provider-free, from the spec alone (`ContractPlan`: region
    `(resolve-at-deploy)` when the spec names none, `provider_mutation: false`). A Terraform
    plan (`PlanResult`, with the same fields) with `terraform=True` or any of this SDK's
    plan keywords (`sandbox`, `identity`, `terraform_dir`, `options`, `env`, …)."""
    if terraform is None:
        terraform = bool(_TERRAFORM_PLAN_KEYWORDS & {k for k, v in kw.items() if v is not None})
    if not terraform:
        from npa_sop_tui.sdk.compat import contract_plan

        extra = sorted(set(kw) - {"capacity", "on_status"})
        if extra:
            raise UsageError(f"unknown keyword(s) for plan: {', '.join(extra)}")
        capacity = kw.get("capacity")
        return contract_plan(load(spec), dict(capacity) if capacity else None)
    return _run(aplan(spec, **kw), "aplan")


def deploy(spec: SpecLike, *, work_root: str | os.PathLike[str] | None = None, **kw: Any) -> Any:
    """Deploy (or converge) the cluster. Keywords as `adeploy`; `work_root` as npa's."""
    with _work_root(work_root):
        return _run(adeploy(spec, **kw), "adeploy")


def destroy(name: str, *, work_root: str | os.PathLike[str] | None = None, **kw: Any) -> Any:
    """Destroy an inventoried cluster. Keywords as `adestroy`."""
    with _work_root(work_root):
        return _run(adestroy(name, **kw), "adestroy")


# ---------------------------------------------------------------------------------------
# Event iterators


def plan_events(spec: SpecLike, **kw: Any) -> OperationStream:
    return OperationStream(lambda sink: aplan(spec, on_event=sink, **kw))


def deploy_events(spec: SpecLike, **kw: Any) -> OperationStream:
    return OperationStream(lambda sink: adeploy(spec, on_event=sink, **kw))


def destroy_events(name: str, **kw: Any) -> OperationStream:
    return OperationStream(lambda sink: adestroy(name, on_event=sink, **kw))


# ---------------------------------------------------------------------------------------
# status and list


async def astatus(
    name: str,
    *,
    settings: Any = None,
    host_key_policy: Any = None,
    initial_timeout: float = 10.0,
    sandbox: bool = False,
    **fields: Any,
) -> SoperatorStatus:
    """One live `ClusterStatus` snapshot (Kubernetes + Slurm over SSH), sources collected
    concurrently and degrading independently. Connection settings come from the npa config
    like everywhere else; `fields` override them (`StatusSettings` fields: `kubeconfig`,
    `login_host`, `login_port`, `identity_file`, `slurm_enabled`, …)."""
    from npa_sop_tui.environment_choice import open_environment
    from npa_sop_tui.sdk.compat import with_contract_status

    if sandbox:
        require_sandbox_cluster(_name(name))
    environment = open_environment(sandbox=sandbox)
    try:
        if sandbox:  # built from its spec: one the existing npa deployed is adopted first
            from npa_sop_tui.lifecycle.adopt import arequire_cluster

            await arequire_cluster(_name(name), store=environment.state_store())
        if settings is None:
            settings = environment.status_settings(_name(name), **fields)
        snapshot = await environment.status_once(
            settings, host_key_policy=host_key_policy, initial_timeout=initial_timeout
        )
        return with_contract_status(snapshot)
    finally:
        await environment.aclose()


def status(name: str, **kw: Any) -> SoperatorStatus:
    """One status snapshot: a `ClusterStatus` with npa's `status` ("running") and
    `backend` fields. Keywords as `astatus`."""
    return _run(astatus(name, **kw), "astatus")


__all__ = [
    "ClusterStatus",
    "ContractPlan",
    "DeployResult",
    "DeploymentValidationFailure",
    "DestroyIncomplete",
    "DestroyResult",
    "DestructivePlanError",
    "EventLoopRunning",
    "Finding",
    "Interrupted",
    "InventoryEntry",
    "LifecycleOptions",
    "NpaError",
    "OperationError",
    "OperationFinished",
    "OperationStream",
    "PlanResult",
    "PreflightBlocked",
    "SoperatorDeploymentValidationError",
    "SoperatorSpec",
    "SoperatorSpecError",
    "SoperatorStateCaptureError",
    "SoperatorStatus",
    "SpecError",
    "TerraformFailed",
    "UsageError",
    "ValidationResult",
    "WorkerPoolSpec",
    "WorkerSummary",
    "adeploy",
    "adestroy",
    "aplan",
    "apply_post_deploy_fixes",
    "astatus",
    "deploy",
    "deploy_events",
    "describe_event",
    "destroy",
    "destroy_events",
    "list",
    "list_clusters",
    "load",
    "load_spec",
    "plan",
    "plan_events",
    "spec_from_mapping",
    "status",
    "validate",
]

from npa_sop_tui.sdk.jobs import Job, arun, job, run  # noqa: E402  (jobs: sdk_jobs.py)

__all__ += ["Job", "arun", "job", "run"]

# Last, so nothing above sees the builtin shadowed: the anchor SDK calls it `list`.
list = list_clusters
