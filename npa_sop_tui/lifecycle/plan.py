"""`plan`: init + plan -out + summary; changes nothing in the cloud, nor any local file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from npa_sop_tui.lifecycle import adopted_steps, steps
from npa_sop_tui.lifecycle.contract_fields import plan_fields
from npa_sop_tui.lifecycle.operation import Sink, operation
from npa_sop_tui.lifecycle.results import LifecycleOptions, PlanResult
from npa_sop_tui.redact import Redactor

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec


async def plan(
    spec: SoperatorSpec,
    *,
    options: LifecycleOptions | None = None,
    on_event: Sink | None = None,
) -> PlanResult:
    options = options or LifecycleOptions()
    steps.check_spec(spec)
    from npa_sop_tui.lifecycle.adopt import adopt_if_npa

    await adopt_if_npa(spec.name, store=steps.store_of(options), options=options)
    steps.identity_preflight(spec, options)
    redactor = Redactor(options.capacity.values())
    with operation("plan", spec.name, on_event, redactor, steps.store_of(options)) as op:
        ctx, install, rendered = await adopted_steps.prepare_any(op, spec, options)
        await steps.init(ctx, install)
        plan_file, changes = await steps.plan(ctx, install, "plan", "Planning all changes", [])
        plan_file.unlink(missing_ok=True)
        op.message = (
            f"plan: {changes.add} to add, {changes.change} to change, {changes.remove} to destroy"
        )
        return PlanResult(
            operation_id=op.id,
            name=spec.name,
            duration=op.duration,
            log=op.log_path,
            changes=changes,
            install_dir=str(install.dir),
            recipe=ctx.recipe_info(),
            terraform_version=ctx.binary.version,
            preflight=op.preflight.model_dump(mode="json") if op.preflight else None,
            **_npa_fields(spec, options, rendered.env.get("TF_VAR_region")),
        )


def _npa_fields(spec: SoperatorSpec, options: LifecycleOptions, region: str | None) -> dict:
    """npa's plan document beside ours; the region is the resolved one."""
    fields = plan_fields(spec, options.capacity)
    fields.pop("name")
    fields["region"] = region or fields["region"]
    return fields
