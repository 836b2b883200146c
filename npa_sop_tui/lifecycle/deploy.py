"""`deploy`: init, then plan+apply `-target=module.k8s`, then plan+apply everything.

Two phases because the recipe's Helm and Kubernetes providers need the cluster's endpoint,
which exists only once the Kubernetes cluster does. Every saved plan is checked before it is
applied: one that deletes or replaces anything is refused unless allowed. A re-run converges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import NpaError
from npa_sop_tui.events import Outputs
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle import adopted_steps, steps
from npa_sop_tui.lifecycle.contract_fields import deploy_fields
from npa_sop_tui.lifecycle.operation import Operation, Sink, operation
from npa_sop_tui.lifecycle.results import DeployResult, LifecycleOptions, StateCaptureFailed
from npa_sop_tui.recipe.installation import Installation
from npa_sop_tui.redact import Redactor

if TYPE_CHECKING:
    from npa_sop_tui.spec.model import SoperatorSpec


async def deploy(
    spec: SoperatorSpec,
    *,
    options: LifecycleOptions | None = None,
    on_event: Sink | None = None,
    allow_destructive: bool = False,
) -> DeployResult:
    from npa_sop_tui.spec.model import kube_context
    from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

    options = options or LifecycleOptions()
    steps.check_spec(spec)
    if options.source_preflight_only:
        from npa_sop_tui.lifecycle.source_check import source_preflight

        return await source_preflight(spec, options)
    from npa_sop_tui.lifecycle.adopt import adopt_if_npa

    await adopt_if_npa(spec.name, store=steps.store_of(options), options=options)
    steps.identity_preflight(spec, options)
    redactor = Redactor(options.capacity.values())
    with operation("deploy", spec.name, on_event, redactor, steps.store_of(options)) as op:
        ctx, install, rendered = await adopted_steps.prepare_any(op, spec, options)
        entry = op.entry or InventoryEntry(name=spec.name, kube_context=kube_context(spec.name))
        entry.region = rendered.env.get("TF_VAR_region", spec.region)
        entry.kube_context = rendered.kube_context
        if entry.adoption is None:  # an adopted cluster keeps where it came from
            entry.recipe = ctx.recipe_info()
        entry.install_dir = str(install.dir)
        entry.state = "deploying"
        op.entry = entry
        op.save_entry()
        op.store.save_spec(spec.name, dump_spec_yaml(spec))

        await steps.init(ctx, install)
        guard: list[int] = []  # destructive actions per plan checked
        await _phase(ctx, install, op, allow_destructive, guard, kubernetes=True)
        outputs = await _phase(ctx, install, op, allow_destructive, guard, kubernetes=False)
        if outputs is None:
            outputs = await steps.outputs(ctx, install)
        outputs = op.redactor.value(outputs)
        op.emit(Outputs(operation_id=op.id, outputs=outputs))
        resources = op.store.resource_addresses(spec.name, install.dir)
        if resources is None:
            try:
                resources = await steps.state_list(ctx, install)
            except NpaError as exc:  # applied: say so, keep the state, never lose track
                raise StateCaptureFailed(spec.name, exc.message) from exc
        entry.outputs = outputs
        entry.state = "deployed"
        from npa_sop_tui.lifecycle.post_deploy_step import DeploymentDegraded, post_deploy

        post = await post_deploy(
            op, spec, options, outputs, entry.kube_context, ctx.environment, ctx.recipe
        )
        entry.validation = post.model_dump(mode="json", exclude={"post_deploy_fix_warnings"})
        op.message = (
            f"deployed {spec.name!r}: {len(resources)} resources, context {entry.kube_context}, "
            f"{post.status}"
        )
        result = DeployResult(
            operation_id=op.id,
            name=spec.name,
            duration=op.duration,
            log=op.log_path,
            kube_context=entry.kube_context,
            outputs=outputs,
            install_dir=str(install.dir),
            recipe=ctx.recipe_info(),
            resources=len(resources),
            phases=list(op.phases),
            preflight=op.preflight.model_dump(mode="json") if op.preflight else None,
            **post.model_dump(),
            **deploy_fields(
                spec,
                region=entry.region,
                project_id=rendered.env.get("TF_VAR_iam_project_id"),
                plans_checked=len(guard),
                replacements=sum(guard),
                capacity=options.capacity,
            ),
        )
        if post.status != "ready":
            entry.state = "degraded-validation"
            raise DeploymentDegraded(result)
        return result


async def _phase(
    ctx: steps.Context,
    install: Installation,
    op: Operation,
    allow_destructive: bool,
    guard: list[int],
    *,
    kubernetes: bool,
) -> dict[str, Any] | None:
    """Plan and (when there is anything to do) apply one phase; the apply's outputs, if any."""
    if kubernetes:
        names = ("plan:k8s", "Planning the Kubernetes cluster", ["module.k8s"])
        apply_names = ("apply:k8s", "Creating the Kubernetes cluster")
        scope, up_to_date = "Kubernetes", "Kubernetes cluster is up to date"
    else:
        names = ("plan:full", "Planning the full cluster", [])
        apply_names = ("apply:full", "Deploying Slurm and the rest")
        scope, up_to_date = "full", "cluster is up to date"
    plan_file, changes = await steps.plan(ctx, install, *names)
    steps.guard(changes, allow_destructive, scope, op)
    guard.append(len(changes.destructive))
    if not changes.add + changes.change + changes.remove:
        plan_file.unlink(missing_ok=True)
        op.note(up_to_date)
        return None
    run = await steps.apply(ctx, install, plan_file, *apply_names)
    return run.outputs if not kubernetes else None
