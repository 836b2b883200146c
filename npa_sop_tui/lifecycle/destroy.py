"""`destroy`: terraform destroy of an inventoried cluster; incomplete unless state is empty.

`destroy()` is the sequence; each decision on the way (where the installation is, whether
`--project` may go on, the verdict after Terraform and after the Nebius check, what the
record and the user are told) is a small function of its own below it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.errors import UsageError
from npa_sop_tui.events import PlanSummary
from npa_sop_tui.home import recorded_paths as recorded
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.lifecycle import steps
from npa_sop_tui.lifecycle.operation import Operation, Sink, operation
from npa_sop_tui.lifecycle.results import DestroyIncomplete, DestroyResult, LifecycleOptions
from npa_sop_tui.recipe import installation
from npa_sop_tui.recipe.installation import Installation
from npa_sop_tui.redact import Redactor
from npa_sop_tui.state.backend import explain_failure

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings
    from npa_sop_tui.spec.model import SoperatorSpec
    from npa_sop_tui.state.store import StateStore
    from npa_sop_tui.terraform.run_result import RunResult


async def destroy(
    name: str,
    *,
    options: LifecycleOptions | None = None,
    on_event: Sink | None = None,
) -> DestroyResult:
    from npa_sop_tui.lifecycle.adopt import arequire_cluster

    options = options or LifecycleOptions()
    store = steps.store_of(options)
    entry = await arequire_cluster(name, store=store, options=options)
    settings = steps.environment_of(options).settings
    # a record's paths are data: used inside this home, or where the settings point
    recorded_dir = recorded.install_dir(entry, settings, shared=store.shared)
    if options.project:
        check_project(entry, recorded_dir, options)
    here = installation_here(entry, recorded_dir, settings, shared=store.shared)
    if options.source_preflight_only:
        from npa_sop_tui.lifecycle.source_check import source_preflight_destroy

        return await source_preflight_destroy(entry, here, options)
    redactor = Redactor(options.capacity.values())
    with operation("destroy", name, on_event, redactor, store) as op:
        if here is None:
            # Deployed from another machine: its state is in the team's bucket; build this
            # machine's installation from the spec as deployed, kept beside it.
            ctx, install, _ = await steps.prepare(op, deployed_spec(store, name), options)
        elif entry.adoption is not None:
            from npa_sop_tui.lifecycle import adopted_steps

            ctx, install = await adopted_steps.existing(op, entry, here, options)
        else:
            ctx, install = await _existing(op, name, here, entry, options)
        assert op.entry is not None
        mark_destroying(op.entry, install.dir)
        op.save_entry()
        await steps.init(ctx, install)
        await steps.dependency_graph(ctx, install)
        before = await steps.state_list(ctx, install)
        summary, label = destroy_plan(op.id, len(before))
        op.emit(summary)
        op.phase("destroy", label)
        from npa_sop_tui.lifecycle import cloud_steps

        owned = cloud_steps.owned_resources(op.store, name, install.dir)
        run = await steps.destroy(ctx, install)
        bucket_down = None if run.ok else explain_failure(install.dir, op.store, "destroy")
        if bucket_down:
            raise bucket_down
        incomplete = terraform_verdict(name, run, await steps.state_list(ctx, install))
        if incomplete:
            raise incomplete
        leftovers = await cloud_steps.verify_destroyed(
            op, name, cloud_steps.identity_from_env(ctx.env, options), owned, options,
            ctx.environment, ctx.recipe,
        )  # fmt: skip
        incomplete = nebius_verdict(name, leftovers)
        if incomplete:
            raise incomplete
        forget_deployment(op.entry, install.files_dir)
        op.message = destroyed_message(name, len(before))
        return DestroyResult(
            operation_id=op.id,
            name=name,
            duration=op.duration,
            log=op.log_path,
            install_dir=str(install.dir),
            destroyed=len(before),
        )


async def _existing(
    op: Operation, name: str, install_dir: Path, entry: InventoryEntry, options: LifecycleOptions
) -> tuple[steps.Context, Installation]:
    environment = steps.environment_of(options)
    # The recipe the cluster was deployed with, unless told otherwise.
    terraform_dir = recorded.recipe_dir(entry, environment.settings)
    ctx = await steps.context_for(op, environment, options, terraform_dir=terraform_dir)
    install = installation.existing_installation(ctx.recipe, install_dir, name)
    ctx.env = {**install.read_env(), **ctx.env}
    ctx.mask_environment()
    steps.use_state_backend(ctx, install)
    op.observe(await environment.observer(name, None))
    ctx.announce(install_dir)
    return ctx, install


# --- the decisions -------------------------------------------------------------------------


def installation_here(
    entry: InventoryEntry, recorded_dir: Path | None, settings: Settings, *, shared: bool
) -> Path | None:
    """Where destroy runs Terraform: the recorded folder when it is on this machine (its
    recipe checked now, before the lock and the log), None when the team's bucket holds the
    state (the installation is rebuilt from the spec as deployed), else refused."""
    if recorded_dir is not None and recorded_dir.is_dir():
        recorded.recipe_dir(entry, settings)  # refused here, before the lock and the log
        return recorded_dir
    if shared:
        return None
    raise UsageError(
        f"cluster {entry.name!r} has no installation folder "
        f"({entry.install_dir or 'none recorded'})",
        hint="it may never have been deployed; remove its inventory folder if it is gone",
    )


def check_project(
    entry: InventoryEntry, install_dir: Path | None, options: LifecycleOptions
) -> None:
    """npa's `destroy --project`: the cluster's recorded project decides; a different one
    named here is refused, never followed."""
    environment = steps.environment_of(options)
    if entry.adoption is not None:
        from npa_sop_tui.lifecycle.adopted_steps import checked_identity

        checked_identity(entry, None, environment.settings, options.project)
        return
    recorded = None
    if install_dir is not None:
        recorded = installation.recorded_env(install_dir).get("TF_VAR_iam_project_id")
    wanted = environment.settings["project_id"]
    if recorded and wanted and wanted != recorded:
        raise UsageError(
            f"project {options.project!r} does not match the persisted project_id for "
            f"existing installation {entry.name!r}; refusing to destroy",
            hint=f"its project is {recorded!r}; drop --project",
        )


def mark_destroying(entry: InventoryEntry, install_dir: Path) -> None:
    """Before Terraform starts, the record names the folder it runs in and that a destroy is
    under way (what recovery reads after a crash)."""
    entry.install_dir = str(install_dir)
    entry.state = "destroying"


def destroy_plan(operation_id: str, resources: int) -> tuple[PlanSummary, str]:
    """What the user sees before Terraform destroys: every resource in state removed,
    nothing added or changed, and the phase's label."""
    summary = PlanSummary(
        operation_id=operation_id, phase="destroy", add=0, change=0, remove=resources
    )
    return summary, f"Destroying {resources} resources"


def terraform_verdict(name: str, run: RunResult, remaining: list[str]) -> DestroyIncomplete | None:
    """After `terraform destroy`: incomplete while anything is left in state (Terraform can
    exit 0 so) or Terraform failed (then its own error is the reason); else None."""
    if remaining or not run.ok:
        reason = run.error_text() if not run.ok else "resources are still in state"
        return DestroyIncomplete(name, remaining, reason)
    return None


def nebius_verdict(name: str, leftovers: list[str]) -> DestroyIncomplete | None:
    """After the Nebius check: incomplete while the cloud still has what the state owned."""
    if leftovers:
        return DestroyIncomplete(name, leftovers, "still present in Nebius after destroy")
    return None


def forget_deployment(entry: InventoryEntry, files_dir: Path) -> None:
    """A destroyed cluster keeps its record, but no outputs and no saved plan."""
    entry.state = "destroyed"
    entry.outputs = {}
    shutil.rmtree(files_dir / ".npa-plan", ignore_errors=True)


def destroyed_message(name: str, resources: int) -> str:
    return f"destroyed {name!r}: {resources} resources removed"


def deployed_spec(store: StateStore, name: str) -> SoperatorSpec:
    from npa_sop_tui.spec.model import load_spec

    path = store.spec_file(name)
    if path is None:
        raise UsageError(
            f"cluster {name!r} has no spec as deployed in {store.describe()}, so its "
            "installation cannot be rebuilt on this machine",
            hint="destroy it from the machine that deployed it",
        )
    return load_spec(path, validate=False).spec
