"""`upgrade`: a cluster to another Soperator version, Kubernetes one minor at a time.

The plan (lifecycle/upgrade_plan.py) comes from the cluster's spec as deployed and the
recipe's graphs; each of its steps is one `deploy` of that spec with the step's versions
pinned, guarded as every deploy is (a plan that deletes or replaces what the recipe does not
replace on purpose is refused). After the last step, the active checks are read from the
cluster (what the recipe's wait Job waits on, and any that failed).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.errors import OperationError
from npa_sop_tui.events import EventSink
from npa_sop_tui.lifecycle.upgrade_plan import UpgradePlan, plan_upgrade, step_spec
from npa_sop_tui.spec.model import SoperatorSpec


class ChecksAfter(BaseModel):
    """The active checks after the upgrade (their latest runs), as status reads them."""

    model_config = ConfigDict(extra="forbid")

    read: bool = False  # False: Kubernetes did not answer in time
    waiting: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)
    total: int = 0
    note: str | None = None


class UpgradeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    status: str  # upgraded | planned | checks-failed
    plan: UpgradePlan
    steps_done: int = 0
    checks: ChecksAfter | None = None


def deployed_spec_of(name: str, options: object) -> SoperatorSpec:
    from npa_sop_tui.lifecycle.destroy import deployed_spec
    from npa_sop_tui.lifecycle.steps import environment_of

    return deployed_spec(environment_of(options).state_store(), name)  # type: ignore[arg-type]


async def plan(
    name: str, to: str, *, options: object, k8s_version: str | None = None
) -> UpgradePlan:
    """The upgrade's plan, nothing run."""
    return plan_upgrade(deployed_spec_of(name, options), to, k8s_version)


async def upgrade(
    name: str,
    to: str,
    *,
    options: object,
    on_event: EventSink | None = None,
    k8s_version: str | None = None,
    check_timeout: float = 60.0,
) -> UpgradeResult:
    """Run every step of the plan, then read the active checks."""
    from npa_sop_tui.lifecycle.api import deploy

    deployed = deployed_spec_of(name, options)
    planned = plan_upgrade(deployed, to, k8s_version)
    result = UpgradeResult(name=name, status="upgraded", plan=planned)
    for step in planned.steps:
        spec = step_spec(deployed, step)
        await deploy(spec, options=options, on_event=on_event)  # type: ignore[arg-type]
        deployed = spec
        result.steps_done += 1
    result.checks = await checks_after(name, options, timeout=check_timeout)
    if result.checks.failed:
        result.status = "checks-failed"
    return result


async def checks_after(name: str, options: object, *, timeout: float) -> ChecksAfter:
    """The cluster's active checks once Kubernetes answers (within `timeout` seconds)."""
    import asyncio

    from npa_sop_tui.lifecycle.steps import environment_of
    from npa_sop_tui.status.active_checks import failed
    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.watch import StatusSettings

    environment = environment_of(options)  # type: ignore[arg-type]
    settings = StatusSettings(name=name, slurm_enabled=False)
    feed = environment.status_feed(settings, host_key_policy=HostKeyPolicy())
    try:
        async with asyncio.timeout(timeout):
            async for snap in feed:
                kube = snap.kube
                if kube is None or not kube.active_checks_crd:
                    continue
                return ChecksAfter(
                    read=True,
                    waiting=list(kube.waiting_on),
                    failed=[c.name for c in kube.active_checks if failed(c)],
                    total=len(kube.active_checks),
                )
    except TimeoutError:
        pass
    except OperationError as exc:
        return ChecksAfter(note=f"the active checks could not be read: {exc.message}")
    finally:
        closing = getattr(feed, "aclose", None)
        if closing is not None:
            await closing()
    return ChecksAfter(note=f"Kubernetes did not show the active checks within {timeout:g}s")
